import type { ContentSample } from './collector';
import { isGif, isJpeg, isMp3, isMp4, isPdf, isPng, isWebp } from './media';
import { detectText, type TextKind } from './text';
import { detectZip, type ZipContentType } from './zip';

/** A binary type recognised by its signature; each is a supported attachment MIME type. */
export type DetectedBinaryType =
  | 'image/png'
  | 'image/jpeg'
  | 'image/gif'
  | 'image/webp'
  | 'application/pdf'
  | 'audio/mpeg'
  | 'video/mp4'
  | ZipContentType;

/**
 * What a file's bytes are: a binary type; `text` (valid UTF-8 throughout, no NUL); `html` or
 * `script` (text that a browser would render, or that starts with `#!`); or `unknown`, which
 * covers executables and every other format.
 */
export type DetectedContent = DetectedBinaryType | TextKind | 'unknown';

type HeadSignature = readonly [DetectedBinaryType, (head: Buffer, size: number) => boolean];

/** Checked in order; no two can match the same first bytes. */
const HEAD_SIGNATURES: readonly HeadSignature[] = [
  ['image/png', isPng],
  ['image/jpeg', isJpeg],
  ['image/gif', isGif],
  ['image/webp', isWebp],
  ['application/pdf', isPdf],
  ['video/mp4', isMp4],
  ['audio/mpeg', isMp3],
];

function detectBinary(sample: ContentSample): DetectedBinaryType | undefined {
  const match = HEAD_SIGNATURES.find(([, matches]) => matches(sample.head, sample.size));
  return match?.[0] ?? detectZip(sample);
}

/**
 * Judges a file from its sample. Signatures come first, so a PDF written in ASCII is a PDF; a
 * file without one is judged as text, and anything else is `unknown`. Linear in the sample's
 * size, and it returns a verdict for any bytes rather than throwing.
 */
export function detectContent(sample: ContentSample): DetectedContent {
  return detectBinary(sample) ?? detectText(sample) ?? 'unknown';
}
