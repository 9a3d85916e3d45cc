/** Files for the sniffing tests, built from their specifications rather than kept as fixtures. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { ContentCollector, type ContentSample } from '../src/sniff';

export function fixture(name: string): Buffer {
  return readFileSync(join(__dirname, 'fixtures', 'sniff', name));
}

/** Feeds `bytes` to a collector in chunks of `chunkSize` and returns the sample. */
export function sampleInChunks(bytes: Uint8Array, chunkSize: number): ContentSample {
  const collector = new ContentCollector();
  for (let at = 0; at < bytes.length; at += chunkSize) collector.push(bytes.subarray(at, at + chunkSize));
  return collector.finish();
}

/** A deterministic pseudo-random generator (mulberry32), so failures replay. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, checksum]);
}

/** A valid 1×1 RGB PNG of one colour. */
export function onePixelPng(red: number, green: number, blue: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(1, 0);
  header.writeUInt32BE(1, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit depth, truecolour, deflate, adaptive filter, no interlace
  const scanline = Buffer.from([0, red, green, blue]); // filter type 0, then one pixel
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(scanline)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A valid one-page PDF 1.4 with a cross-reference table whose offsets are right; by default with
 * the binary comment line writers add, which makes it not UTF-8.
 */
export function onePagePdf(binaryMarker = true): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
  ];
  let body = binaryMarker ? '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n' : '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xrefAt = Buffer.byteLength(body, 'latin1');
  const entries = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${entries}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/** The first bytes of a 64-bit x86-64 ELF executable, then code-like bytes. */
export function elfExecutable(): Buffer {
  const header = Buffer.alloc(64);
  header.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]); // magic, 64-bit, little-endian, version 1, System V
  header.writeUInt16LE(2, 16); // ET_EXEC
  header.writeUInt16LE(0x3e, 18); // x86-64
  header.writeUInt32LE(1, 20);
  return Buffer.concat([header, Buffer.from([0x48, 0x31, 0xc0, 0xc3, 0x90, 0x90])]);
}

/** An MZ header with its DOS stub and a PE signature at e_lfanew. */
export function peExecutable(): Buffer {
  const file = Buffer.alloc(0x98);
  file.write('MZ', 0, 'latin1');
  file.writeUInt32LE(0x80, 0x3c);
  file.write('This program cannot be run in DOS mode.\r\r\n$', 0x4e, 'latin1');
  file.write('PE\0\0', 0x80, 'latin1');
  file.writeUInt16LE(0x8664, 0x84); // machine: x86-64
  return file;
}

/** A 64-bit Mach-O header (MH_MAGIC_64, little-endian), then zeros. */
export function machOExecutable(): Buffer {
  const file = Buffer.alloc(64);
  file.set([0xcf, 0xfa, 0xed, 0xfe]);
  file.writeUInt32LE(0x01000007, 4); // x86-64
  file.writeUInt32LE(2, 12); // MH_EXECUTE
  return file;
}

/** An `ftyp` box with the given brands, then an empty `mdat`: the start of an ISO media file. */
export function isoMediaStart(major: string, compatible: string[]): Buffer {
  const ftyp = Buffer.alloc(16 + 4 * compatible.length);
  ftyp.writeUInt32BE(ftyp.length, 0);
  ftyp.write('ftyp', 4, 'latin1');
  ftyp.write(major, 8, 'latin1');
  for (const [index, brand] of compatible.entries()) ftyp.write(brand, 16 + 4 * index, 'latin1');
  return Buffer.concat([ftyp, Buffer.from([0, 0, 0, 8, 0x6d, 0x64, 0x61, 0x74])]);
}

export interface ZipEntry {
  name: string;
  data?: string | Uint8Array;
  /** Deflate rather than store. */
  deflate?: boolean;
}

export interface ZipOptions {
  /** Sizes and CRC in a data descriptor after each entry's data, zeros in its local header. */
  dataDescriptors?: boolean;
  /** The archive comment after the end record. */
  comment?: string;
  /** Write ZIP64 end records and mark the classic one's fields as "see ZIP64". */
  zip64?: boolean;
}

function uint16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16LE(value);
  return bytes;
}

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
}

function uint64(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64LE(BigInt(value));
  return bytes;
}

const UTF8_NAMES = 0x0800;
const DOS_DATE_1980 = 0x0021;

/** A ZIP archive written by the book (APPNOTE 6.3): local headers, central directory, end record. */
export function buildZip(entries: ZipEntry[], options: ZipOptions = {}): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  const flags = UTF8_NAMES | (options.dataDescriptors ? 0x08 : 0);
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const raw = Buffer.from(entry.data ?? '');
    const stored = entry.deflate ? deflateRawSync(raw) : raw;
    const checksum = crc32(raw);
    const method = entry.deflate ? 8 : 0;
    const described = options.dataDescriptors === true;
    const local = Buffer.concat([
      uint32(0x04034b50),
      uint16(20),
      uint16(flags),
      uint16(method),
      uint16(0),
      uint16(DOS_DATE_1980),
      uint32(described ? 0 : checksum),
      uint32(described ? 0 : stored.length),
      uint32(described ? 0 : raw.length),
      uint16(name.length),
      uint16(0),
      name,
      stored,
      described
        ? Buffer.concat([uint32(0x08074b50), uint32(checksum), uint32(stored.length), uint32(raw.length)])
        : Buffer.alloc(0),
    ]);
    central.push(
      Buffer.concat([
        uint32(0x02014b50),
        uint16(20),
        uint16(20),
        uint16(flags),
        uint16(method),
        uint16(0),
        uint16(DOS_DATE_1980),
        uint32(checksum),
        uint32(stored.length),
        uint32(raw.length),
        uint16(name.length),
        uint16(0),
        uint16(0),
        uint16(0),
        uint16(0),
        uint32(0),
        uint32(offset),
        name,
      ]),
    );
    parts.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(central);
  const comment = Buffer.from(options.comment ?? '', 'latin1');
  const zip64 = options.zip64 ? zip64EndRecords(entries.length, directory.length, offset) : Buffer.alloc(0);
  const wide = options.zip64 === true;
  const end = Buffer.concat([
    uint32(0x06054b50),
    uint16(0),
    uint16(0),
    uint16(wide ? 0xffff : entries.length),
    uint16(wide ? 0xffff : entries.length),
    uint32(wide ? 0xffffffff : directory.length),
    uint32(wide ? 0xffffffff : offset),
    uint16(comment.length),
    comment,
  ]);
  return Buffer.concat([...parts, directory, zip64, end]);
}

function zip64EndRecords(entries: number, directorySize: number, directoryOffset: number): Buffer {
  const record = Buffer.concat([
    uint32(0x06064b50),
    uint64(44), // size of the rest of the record
    uint16(45),
    uint16(45),
    uint32(0),
    uint32(0),
    uint64(entries),
    uint64(entries),
    uint64(directorySize),
    uint64(directoryOffset),
  ]);
  const recordOffset = directoryOffset + directorySize;
  const locator = Buffer.concat([uint32(0x07064b50), uint32(0), uint64(recordOffset), uint32(1)]);
  return Buffer.concat([record, locator]);
}

const CONTENT_TYPES = (override: string) =>
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  override +
  '</Types>';

const PACKAGE_RELATIONSHIPS = (target: string) =>
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" ' +
  `Target="${target}"/></Relationships>`;

/** The three parts of a minimal Word document (the smallest package Word opens). */
export function minimalDocxEntries(): ZipEntry[] {
  return [
    {
      name: '[Content_Types].xml',
      data: CONTENT_TYPES(
        '<Override PartName="/word/document.xml" ' +
          'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>',
      ),
      deflate: true,
    },
    { name: '_rels/.rels', data: PACKAGE_RELATIONSHIPS('word/document.xml'), deflate: true },
    {
      name: 'word/document.xml',
      data:
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">' +
        '<w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>',
      deflate: true,
    },
  ];
}

/** `count` small stored entries with distinct, longish names: a directory of ~90 bytes an entry. */
export function fillerEntries(count: number, prefix = 'data'): ZipEntry[] {
  return Array.from({ length: count }, (_, index) => ({
    name: `${prefix}/part-${String(index).padStart(6, '0')}-of-a-large-archive.bin`,
    data: `entry ${index}`,
  }));
}

/** A genuine workbook, written by exceljs. */
export async function excelWorkbook(): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Contacts');
  sheet.addRow(['Name', 'Email', 'Joined']);
  sheet.addRow(['Ada', 'ada@example.com', new Date(Date.UTC(2024, 0, 2))]);
  sheet.addRow(['Grace', 'grace@example.com', new Date(Date.UTC(2024, 5, 7))]);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
