/** XFD is Excel's last column; seven letters already go far past any limit a reader sets. */
const MAX_LETTERS = 7;

/** The 1-based column of a cell reference ('B7' → 2, 'XFD1' → 16384), or null if it has no column letters. */
export function columnOfReference(reference: string): number | null {
  let column = 0;
  let letters = 0;
  for (; letters < reference.length; letters += 1) {
    const code = reference.charCodeAt(letters) & ~0x20; // ASCII lower case to upper case
    if (code < 0x41 || code > 0x5a) break;
    if (letters === MAX_LETTERS) return null;
    column = column * 26 + (code - 0x40);
  }
  return letters === 0 ? null : column;
}
