import { isUtf8 } from 'node:buffer';

/** Text of one chunk. When `problem` is set, `text` stops just before the offending bytes. */
export interface DecodedText {
  text: string;
  problem: 'not-utf8' | 'nul' | null;
}

/**
 * Decodes a byte stream as UTF-8 and refuses what a text file does not hold: byte sequences that
 * are not UTF-8 and NUL bytes (binary files have both). Nothing is replaced: U+FFFD in place of a
 * Latin-1 'é' would import garbage silently. A character split across chunks waits for the next.
 */
export class StrictUtf8Decoder {
  private carry: Buffer | null = null;

  decode(chunk: Buffer): DecodedText {
    const bytes = this.carry === null ? chunk : Buffer.concat([this.carry, chunk]);
    const end = wholeCharactersLength(bytes);
    this.carry = end === bytes.length ? null : Buffer.from(bytes.subarray(end));
    const complete = bytes.subarray(0, end);
    const nul = complete.indexOf(0);
    // isUtf8 and indexOf are native scans, many GB/s: the common path stays cheap.
    if (nul === -1 && isUtf8(complete)) return { text: complete.toString('utf8'), problem: null };
    let bad = nul === -1 ? end : nul;
    let problem: DecodedText['problem'] = 'nul';
    if (!isUtf8(complete.subarray(0, bad))) {
      bad = validStartLength(complete.subarray(0, bad));
      problem = 'not-utf8';
    }
    return { text: complete.toString('utf8', 0, bad), problem };
  }

  /** The end of the stream: a character still missing its last bytes is not UTF-8. */
  end(): DecodedText {
    return { text: '', problem: this.carry === null ? null : 'not-utf8' };
  }
}

/** How many bytes form whole characters: a multi-byte sequence cut off at the end is left out. */
function wholeCharactersLength(bytes: Buffer): number {
  const length = bytes.length;
  let start = length - 1;
  // A sequence is at most 4 bytes: walk back over up to 3 continuation bytes (10xxxxxx).
  while (start >= 0 && start > length - 4 && ((bytes[start] as number) & 0xc0) === 0x80) start -= 1;
  if (start < 0) return length;
  const lead = bytes[start] as number;
  const needed = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return length - start < needed ? start : length;
}

/**
 * The length of the longest start of `bytes` (known to be invalid) that is still valid UTF-8, so
 * a message can name the line. Error path only: a binary search with the streaming decoder, which
 * accepts a start that merely ends inside a character.
 */
function validStartLength(bytes: Uint8Array): number {
  let valid = 0;
  let invalid = bytes.length;
  while (invalid - valid > 1) {
    const middle = (valid + invalid) >>> 1;
    if (startsAsUtf8(bytes.subarray(0, middle))) valid = middle;
    else invalid = middle;
  }
  return valid;
}

function startsAsUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}
