import { createHash, randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 text: bytes at or above 248 (4 * 62) are discarded to avoid modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export const newDatabaseId = (): string => randomUUID();
export const newTableId = (): string => `tbl${randomBase62(14)}`;
export const newFieldId = (): string => `fld${randomBase62(14)}`;

/** Random bytes drawn in batches: a bulk write makes hundreds of ids, one system call each otherwise. */
const RANDOM_BATCH_BYTES = 16 * 256;
let randomBatch = Buffer.alloc(0);
let randomOffset = 0;

function random16(): Buffer {
  if (randomOffset + 16 > randomBatch.length) {
    randomBatch = randomBytes(RANDOM_BATCH_BYTES);
    randomOffset = 0;
  }
  // A copy: the caller overwrites some of its bytes, and no two ids may share any.
  const bytes = Buffer.from(randomBatch.subarray(randomOffset, randomOffset + 16));
  randomOffset += 16;
  return bytes;
}

/** UUID v7: time-ordered, so new rows land at the right edge of the primary-key index. */
export function newRecordId(now: number = Date.now()): string {
  const bytes = random16();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x70;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const API_KEY_PREFIX = 'rb_';

/** An API key: 40 base62 characters (about 238 bits), so a fast hash is the right way to store it. */
export function newApiKeySecret(): string {
  return `${API_KEY_PREFIX}${randomBase62(40)}`;
}

const API_KEY_PATTERN = /^rb_[0-9A-Za-z]{40}$/;

/** Whether a token could be an API key at all; one that cannot is refused without a lookup. */
export function isWellFormedApiKey(token: string): boolean {
  return API_KEY_PATTERN.test(token);
}

/** Channel every revocation NOTIFYs from its transaction: each process drops the keys it keeps. */
export const API_KEYS_CHANNEL = 'recordbase_api_keys';

/** What is shown in listings so a person can tell keys apart without seeing them. */
export function apiKeyDisplayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
