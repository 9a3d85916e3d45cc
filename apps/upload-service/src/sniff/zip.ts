import { XLSX_MIME_TYPE } from '@recordbase/contracts/uploads';
import { hasBytesAt } from './bytes';
import type { ContentSample } from './collector';

/**
 * ZIP archives and the Office Open XML packages built on them, read from a sample's two ends.
 *
 * The central directory, found through the End Of Central Directory record at the file's end, is
 * the archive's own list of entries. When it starts before the tail window, the part inside the
 * window is read from its first entry header on, and the local file headers in the head add the
 * first entries. Every walk moves forward on each step and reads only inside its buffer, so the
 * work is linear in the sample and malformed input ends a walk instead of throwing.
 */

export const DOCX_MIME_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const PPTX_MIME_TYPE = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';

export type ZipContentType =
  | 'application/zip'
  | typeof DOCX_MIME_TYPE
  | typeof XLSX_MIME_TYPE
  | typeof PPTX_MIME_TYPE;

const LOCAL_HEADER = Uint8Array.of(0x50, 0x4b, 0x03, 0x04);
const CENTRAL_HEADER = Uint8Array.of(0x50, 0x4b, 0x01, 0x02);
const END_OF_DIRECTORY = Uint8Array.of(0x50, 0x4b, 0x05, 0x06);
const ZIP64_END_OF_DIRECTORY = Uint8Array.of(0x50, 0x4b, 0x06, 0x06);
const ZIP64_LOCATOR = Uint8Array.of(0x50, 0x4b, 0x06, 0x07);

const LOCAL_HEADER_LENGTH = 30;
const CENTRAL_HEADER_LENGTH = 46;
const END_OF_DIRECTORY_LENGTH = 22;
const ZIP64_END_LENGTH = 56;
const ZIP64_LOCATOR_LENGTH = 20;
const MAX_COMMENT_LENGTH = 0xffff;
/** General purpose flag bit 3: sizes follow the data in a descriptor, the header holds zeros. */
const DATA_DESCRIPTOR_FLAG = 0x08;

/** The part each Office package has and the others lack, lower-cased (part names ignore case). */
const OFFICE_MAIN_PARTS = new Map<string, ZipContentType>([
  ['word/document.xml', DOCX_MIME_TYPE],
  ['xl/workbook.xml', XLSX_MIME_TYPE],
  ['ppt/presentation.xml', PPTX_MIME_TYPE],
]);

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The central directory's span in tail coordinates; `start` is negative when it begins before the tail. */
interface DirectorySpan {
  start: number;
  end: number;
}

/**
 * The End Of Central Directory record: scanning backwards from the last place it fits, over at
 * most the record and the longest comment, the first signature whose comment fits in the file.
 */
export function findEndOfDirectory(tail: Uint8Array): number | undefined {
  const data = view(tail);
  const lowest = Math.max(0, tail.length - END_OF_DIRECTORY_LENGTH - MAX_COMMENT_LENGTH);
  for (let at = tail.length - END_OF_DIRECTORY_LENGTH; at >= lowest; at--) {
    if (!hasBytesAt(tail, at, END_OF_DIRECTORY)) continue;
    const commentLength = data.getUint16(at + 20, true);
    if (at + END_OF_DIRECTORY_LENGTH + commentLength <= tail.length) return at;
  }
  return undefined;
}

/** A 64-bit field as a number, or undefined past what a number holds exactly. */
function uint64(data: DataView, at: number): number | undefined {
  const value = data.getBigUint64(at, true);
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
}

/**
 * The ZIP64 end record that the locator before `endAt` points to: at the offset it names, or
 * (when bytes were prepended to the archive) right before the locator, where writers put it.
 */
function zip64Span(tail: Uint8Array, endAt: number, tailStart: number): DirectorySpan | undefined {
  const locator = endAt - ZIP64_LOCATOR_LENGTH;
  if (!hasBytesAt(tail, locator, ZIP64_LOCATOR)) return undefined;
  const data = view(tail);
  const named = uint64(data, locator + 8);
  const candidates = [named === undefined ? -1 : named - tailStart, locator - ZIP64_END_LENGTH];
  const record = candidates.find(
    (at) => at + ZIP64_END_LENGTH <= locator && hasBytesAt(tail, at, ZIP64_END_OF_DIRECTORY),
  );
  if (record === undefined) return undefined;
  const size = uint64(data, record + 40);
  return size === undefined ? undefined : { start: record - size, end: record };
}

/**
 * Where the central directory lies: it ends where the end record (or the ZIP64 end record)
 * begins and is as long as that record says. Measuring back from the end rather than trusting
 * the stated offset also reads archives with bytes prepended.
 */
function directorySpan(tail: Uint8Array, endAt: number, tailStart: number): DirectorySpan | undefined {
  const data = view(tail);
  const entries = data.getUint16(endAt + 10, true);
  const size = data.getUint32(endAt + 12, true);
  const offset = data.getUint32(endAt + 16, true);
  const wide = entries === 0xffff || size === 0xffffffff || offset === 0xffffffff;
  const span = (wide && zip64Span(tail, endAt, tailStart)) || { start: endAt - size, end: endAt };
  return span.start + tailStart >= 0 ? span : undefined;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** Index of the next `signature` in bytes[from, to), or -1. */
function nextSignature(bytes: Uint8Array, signature: Uint8Array, from: number, to: number): number {
  if (from >= to) return -1;
  return Buffer.from(bytes.buffer, bytes.byteOffset, to).indexOf(signature, from);
}

/**
 * Entry names of the central directory headers in tail[from, to). Each header leads to the next;
 * where one does not (the span began mid-entry, or a length is wrong), the walk resumes at the
 * next header signature.
 */
function centralDirectoryNames(tail: Uint8Array, from: number, to: number): string[] {
  const data = view(tail);
  const names: string[] = [];
  let at = nextSignature(tail, CENTRAL_HEADER, from, to);
  while (at !== -1 && at + CENTRAL_HEADER_LENGTH <= to) {
    const nameEnd = at + CENTRAL_HEADER_LENGTH + data.getUint16(at + 28, true);
    const next = nameEnd + data.getUint16(at + 30, true) + data.getUint16(at + 32, true);
    if (nameEnd <= to) names.push(latin1(tail.subarray(at + CENTRAL_HEADER_LENGTH, nameEnd)));
    const leads = nameEnd <= to && hasBytesAt(tail, next, CENTRAL_HEADER);
    at = leads ? next : nextSignature(tail, CENTRAL_HEADER, at + 4, to);
  }
  return names;
}

/**
 * Entry names of the local file headers from the head's start. A header with known sizes leads
 * past its data to the next; one whose sizes follow in a data descriptor is followed by a search
 * for the next signature. The walk stops at the central directory or the end of the head.
 */
export function localHeaderNames(head: Uint8Array): string[] {
  const data = view(head);
  const names: string[] = [];
  let at = 0;
  while (at !== -1 && at + LOCAL_HEADER_LENGTH <= head.length && hasBytesAt(head, at, LOCAL_HEADER)) {
    const flags = data.getUint16(at + 6, true);
    const compressedSize = data.getUint32(at + 18, true);
    const nameEnd = at + LOCAL_HEADER_LENGTH + data.getUint16(at + 26, true);
    if (nameEnd > head.length) break;
    names.push(latin1(head.subarray(at + LOCAL_HEADER_LENGTH, nameEnd)));
    const dataStart = nameEnd + data.getUint16(at + 28, true);
    const sizeKnown = (flags & DATA_DESCRIPTOR_FLAG) === 0 && compressedSize !== 0xffffffff;
    at = sizeKnown ? dataStart + compressedSize : nextSignature(head, LOCAL_HEADER, dataStart, head.length);
  }
  return names;
}

/** The names the sample shows: the whole central directory, or what of it and of the local headers is kept. */
export function zipEntryNames(sample: ContentSample): string[] | undefined {
  const endAt = findEndOfDirectory(sample.tail);
  if (endAt === undefined) return undefined;
  const tailStart = sample.size - sample.tail.length;
  const span = directorySpan(sample.tail, endAt, tailStart);
  if (span === undefined) return localHeaderNames(sample.head);
  const fromTail = centralDirectoryNames(sample.tail, Math.max(0, span.start), span.end);
  return span.start >= 0 ? fromTail : [...localHeaderNames(sample.head), ...fromTail];
}

/** The Office type whose main part is among `names`; none, or more than one, is a plain ZIP. */
function officeType(names: readonly string[]): ZipContentType {
  const found = new Set<ZipContentType>();
  for (const name of names) {
    const type = OFFICE_MAIN_PARTS.get(name.toLowerCase());
    if (type !== undefined) found.add(type);
  }
  const [only] = found;
  return found.size === 1 && only !== undefined ? only : 'application/zip';
}

/**
 * The sample's ZIP type, or undefined when it is not a ZIP: it must start with a local file
 * header (or, for an empty archive, with the end record) and end with a findable end record. A
 * truncated archive has none and is not a ZIP.
 */
export function detectZip(sample: ContentSample): ZipContentType | undefined {
  const starts = hasBytesAt(sample.head, 0, LOCAL_HEADER) || hasBytesAt(sample.head, 0, END_OF_DIRECTORY);
  if (!starts) return undefined;
  const names = zipEntryNames(sample);
  return names === undefined ? undefined : officeType(names);
}
