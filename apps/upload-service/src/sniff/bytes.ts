/** Small byte helpers shared by the detectors; each reads only inside the buffer it is given. */

/** `bytes` holds `signature` at `at`. */
export function hasBytesAt(bytes: Uint8Array, at: number, signature: Uint8Array): boolean {
  if (at < 0 || at + signature.length > bytes.length) return false;
  for (let i = 0; i < signature.length; i++) {
    if (bytes[at + i] !== signature[i]) return false;
  }
  return true;
}

function lowerAscii(byte: number): number {
  return byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
}

/** `bytes` holds the lower-case ASCII `text` at `at`, ignoring the case of ASCII letters. */
export function hasAsciiCaselessAt(bytes: Uint8Array, at: number, text: string): boolean {
  if (at < 0 || at + text.length > bytes.length) return false;
  for (let i = 0; i < text.length; i++) {
    if (lowerAscii(bytes[at + i]!) !== text.charCodeAt(i)) return false;
  }
  return true;
}

/** Index of the first caseless `text` in bytes[from, to), or -1; `text` is short, so this is linear. */
export function indexOfAsciiCaseless(bytes: Uint8Array, text: string, from: number, to: number): number {
  const end = Math.min(to, bytes.length) - text.length;
  for (let at = Math.max(0, from); at <= end; at++) {
    if (hasAsciiCaselessAt(bytes, at, text)) return at;
  }
  return -1;
}

export const UTF8_BOM = Uint8Array.of(0xef, 0xbb, 0xbf);

/** Where the content starts once a UTF-8 byte-order mark is skipped. */
export function afterBom(bytes: Uint8Array): number {
  return hasBytesAt(bytes, 0, UTF8_BOM) ? UTF8_BOM.length : 0;
}

/** Space, tab, line feed, form feed and carriage return: what HTML and JSON skip before content. */
export function isAsciiWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0c || byte === 0x0d;
}

/** Index of the first byte at or after `from` that is not ASCII whitespace (bytes.length if none). */
export function skipWhitespace(bytes: Uint8Array, from: number): number {
  let at = from;
  while (at < bytes.length && isAsciiWhitespace(bytes[at])) at++;
  return at;
}

export function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (character) => character.charCodeAt(0));
}
