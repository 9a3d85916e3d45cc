import { ascii, hasBytesAt } from './bytes';

/**
 * Signatures of the image, document and media types read from a file's first bytes. Each takes
 * the head (and the file's size where a check needs to know whether the file ends early).
 */

const PNG_SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const PNG_FIRST_CHUNK = ascii('IHDR');

/** The PNG signature, then the IHDR chunk the format requires first. */
export function isPng(head: Uint8Array): boolean {
  return hasBytesAt(head, 0, PNG_SIGNATURE) && hasBytesAt(head, 12, PNG_FIRST_CHUNK);
}

const JPEG_START = Uint8Array.of(0xff, 0xd8, 0xff);

/** Start of image, then the marker prefix of the first segment. */
export function isJpeg(head: Uint8Array): boolean {
  return hasBytesAt(head, 0, JPEG_START);
}

const GIF87 = ascii('GIF87a');
const GIF89 = ascii('GIF89a');

export function isGif(head: Uint8Array): boolean {
  return hasBytesAt(head, 0, GIF87) || hasBytesAt(head, 0, GIF89);
}

const RIFF = ascii('RIFF');
const WEBP = ascii('WEBP');

/** A RIFF container whose form type is WEBP. */
export function isWebp(head: Uint8Array): boolean {
  return hasBytesAt(head, 0, RIFF) && hasBytesAt(head, 8, WEBP);
}

const PDF_START = ascii('%PDF-');

/** The header at the very start; a PDF with junk before it is not recognised. */
export function isPdf(head: Uint8Array): boolean {
  return hasBytesAt(head, 0, PDF_START);
}

const ID3 = ascii('ID3');

/** An ID3v2 tag header: version 2 to 4, and a size whose four bytes each keep bit 7 clear. */
function isId3Tag(head: Uint8Array): boolean {
  if (!hasBytesAt(head, 0, ID3) || head.length < 10) return false;
  const major = head[3]!;
  if (major < 2 || major > 4 || head[4] === 0xff) return false;
  return head.subarray(6, 10).every((byte) => byte < 0x80);
}

// Layer III bitrates in kbit/s by index; index 0 (free format) and 15 are refused.
const MPEG1_LAYER3_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_LAYER3_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MPEG1_SAMPLE_RATES = [44100, 48000, 32000];
/** Version bits 11 (MPEG-1), 10 (MPEG-2) and 00 (MPEG-2.5) divide the MPEG-1 rates by 1, 2, 4. */
const SAMPLE_RATE_DIVISORS: Readonly<Record<number, number>> = { 3: 1, 2: 2, 0: 4 };

/**
 * The length of the MPEG audio Layer III frame whose header is at `at`, or undefined when no
 * valid one is there. Layer I and II are left out: a UTF-16 BOM (FF FE) reads as a Layer I sync.
 */
export function mp3FrameLength(bytes: Uint8Array, at: number): number | undefined {
  if (at + 4 > bytes.length || bytes[at] !== 0xff) return undefined;
  const b1 = bytes[at + 1]!;
  const b2 = bytes[at + 2]!;
  const version = (b1 >> 3) & 0b11;
  const divisor = SAMPLE_RATE_DIVISORS[version];
  const isLayer3 = ((b1 >> 1) & 0b11) === 0b01;
  if ((b1 & 0xe0) !== 0xe0 || divisor === undefined || !isLayer3) return undefined;
  const mpeg1 = version === 3;
  const kbps = (mpeg1 ? MPEG1_LAYER3_KBPS : MPEG2_LAYER3_KBPS)[b2 >> 4];
  const baseRate = MPEG1_SAMPLE_RATES[(b2 >> 2) & 0b11];
  if (!kbps || baseRate === undefined) return undefined;
  const padding = (b2 >> 1) & 1;
  return Math.floor(((mpeg1 ? 144 : 72) * kbps * 1000) / (baseRate / divisor)) + padding;
}

/**
 * A Layer III frame at the start, confirmed by a second one of the same version right after it,
 * or making up the whole file. One header alone is four bytes that binary data can hold by chance.
 */
function isMpegAudioStream(head: Uint8Array, size: number): boolean {
  const length = mp3FrameLength(head, 0);
  if (length === undefined) return false;
  if (length === size) return true;
  const sameVersion = ((head[length + 1] ?? 0) & 0x18) === (head[1]! & 0x18);
  return sameVersion && mp3FrameLength(head, length) !== undefined;
}

/** audio/mpeg: an ID3v2 tag, or MPEG audio Layer III frames from the first byte. */
export function isMp3(head: Uint8Array, size: number): boolean {
  return isId3Tag(head) || isMpegAudioStream(head, size);
}

const FTYP = ascii('ftyp');

/** Brands that declare the ISO base media / MP4 family a browser plays as video/mp4. */
const MP4_BRANDS = new Set([
  'isom',
  'iso2',
  'iso3',
  'iso4',
  'iso5',
  'iso6',
  'iso7',
  'iso8',
  'iso9',
  'mp41',
  'mp42',
  'mp71',
  'avc1',
  'dash',
  'mmp4',
  'M4V ',
  'M4VH',
  'M4VP',
  'MSNV',
  'XAVC',
  'f4v ',
]);

/**
 * Major brands of files that share the box structure but are another type: QuickTime movies,
 * MPEG-4 audio and audiobooks, HEIF/AVIF images, 3GPP video, Canon raw. Such a file is not
 * video/mp4 even when it lists an MP4 brand as compatible.
 */
const OTHER_MAJOR_BRANDS = new Set([
  'qt  ',
  'M4A ',
  'M4B ',
  'M4P ',
  'heic',
  'heix',
  'hevc',
  'hevx',
  'heim',
  'heis',
  'mif1',
  'msf1',
  'avif',
  'avis',
  'crx ',
]);

function brandAt(head: Uint8Array, at: number): string {
  return String.fromCharCode(...head.subarray(at, at + 4));
}

function isOtherMajorBrand(brand: string): boolean {
  return OTHER_MAJOR_BRANDS.has(brand) || brand.startsWith('3gp') || brand.startsWith('3g2');
}

/**
 * video/mp4: an `ftyp` box first, whose major brand is of the MP4 family, or whose major brand is
 * not another type's and whose compatible brands include one of the MP4 family.
 */
export function isMp4(head: Uint8Array): boolean {
  if (head.length < 16 || !hasBytesAt(head, 4, FTYP)) return false;
  const boxSize = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(0);
  const major = brandAt(head, 8);
  if (boxSize < 16 || isOtherMajorBrand(major)) return false;
  if (MP4_BRANDS.has(major)) return true;
  const end = Math.min(boxSize, head.length);
  for (let at = 16; at + 4 <= end; at += 4) {
    if (MP4_BRANDS.has(brandAt(head, at))) return true;
  }
  return false;
}
