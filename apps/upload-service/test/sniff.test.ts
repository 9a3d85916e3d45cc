import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { supportedAttachmentMimeTypes, XLSX_MIME_TYPE } from '@recordbase/contracts/uploads';
import ExcelJS from 'exceljs';
import {
  ContentCollector,
  type ContentSample,
  type DetectedBinaryType,
  type DetectedContent,
  DOCX_MIME_TYPE,
  detectContent,
  HEAD_BYTES,
  judgeAttachment,
  judgeCsv,
  judgeXlsx,
  PPTX_MIME_TYPE,
  sampleOf,
  sniffingStream,
  TAIL_BYTES,
} from '../src/sniff';
import {
  buildZip,
  elfExecutable,
  excelWorkbook,
  fillerEntries,
  fixture,
  isoMediaStart,
  machOExecutable,
  minimalDocxEntries,
  onePagePdf,
  onePixelPng,
  peExecutable,
  sampleInChunks,
  seededRandom,
} from './sniff-files';

const KB = 1024;
const MB = 1024 * KB;
const BOM = '\ufeff';

function detect(bytes: Uint8Array | string): DetectedContent {
  return detectContent(sampleOf(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes));
}

function randomBytes(random: () => number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
}

let xlsx: Buffer;
beforeAll(async () => {
  xlsx = await excelWorkbook();
});

describe('ContentCollector', () => {
  it('keeps exactly the first 64 KB and the last 256 KB, whatever the chunk sizes', () => {
    const random = seededRandom(7);
    const file = randomBytes(random, 700 * KB);
    const chunkSizes = [1, 3, 4096, 65_536, 300 * KB];
    for (const first of chunkSizes) {
      const collector = new ContentCollector();
      let at = 0;
      let size = first;
      while (at < file.length) {
        collector.push(file.subarray(at, at + size));
        at += size;
        size = 1 + Math.floor(random() * 20_000);
      }
      const sample = collector.finish();
      expect(sample.size).toBe(file.length);
      expect(sample.head.equals(file.subarray(0, HEAD_BYTES))).toBe(true);
      expect(sample.tail.equals(file.subarray(file.length - TAIL_BYTES))).toBe(true);
    }
  });

  it('keeps a small file whole in both head and tail', () => {
    const sample = sampleInChunks(Buffer.from('a,b\n1,2\n'), 3);
    expect(sample.head.toString()).toBe('a,b\n1,2\n');
    expect(sample.tail.toString()).toBe('a,b\n1,2\n');
    expect(sample).toMatchObject({ size: 8, isText: true });
  });

  it('holds an empty file as empty text', () => {
    const sample = new ContentCollector().finish();
    expect(sample).toMatchObject({ size: 0, isText: true });
    expect(sample.head.length + sample.tail.length).toBe(0);
  });

  it('bounds its buffers to head + tail over a 30 MB file fed in 64 KB chunks', () => {
    // A 6-byte line: 65,536 leaves 4 over, so chunks start inside 日 or é in turn; 30 MB ends a line.
    const pattern = Buffer.from('日é\n', 'utf8');
    const chunk = (index: number) => {
      const bytes = Buffer.alloc(64 * KB);
      for (let at = 0; at < bytes.length; at++) bytes[at] = pattern[(index * 64 * KB + at) % pattern.length]!;
      return bytes;
    };
    const chunks = (30 * MB) / (64 * KB);
    const collector = new ContentCollector();
    let largestRetained = 0;
    for (let index = 0; index < chunks; index++) {
      collector.push(chunk(index));
      largestRetained = Math.max(largestRetained, collector.retainedBytes);
    }
    const sample = collector.finish();
    expect(largestRetained).toBeLessThanOrEqual(HEAD_BYTES + TAIL_BYTES);
    expect(HEAD_BYTES + TAIL_BYTES).toBe(320 * KB);
    expect(sample.size).toBe(30 * MB);
    expect(sample.head.length).toBe(HEAD_BYTES);
    expect(sample.tail.length).toBe(TAIL_BYTES);
    expect(sample.head.equals(chunk(0))).toBe(true);
    const lastFour = Buffer.concat([chunks - 4, chunks - 3, chunks - 2, chunks - 1].map(chunk));
    expect(sample.tail.equals(lastFour)).toBe(true);
    expect(sample.isText).toBe(true);
    expect(detectContent(sample)).toBe('text');
  });

  it('reads a 30 MB text file that ends on a NUL byte as not text, with the same bounded buffers', () => {
    const line = Buffer.from('naïve café, 30 MB of it\n', 'utf8');
    const collector = new ContentCollector();
    const chunk = Buffer.alloc(64 * KB, line);
    const chunks = (30 * MB) / (64 * KB);
    for (let index = 0; index < chunks - 1; index++) collector.push(chunk);
    const last = Buffer.from(chunk);
    last[last.length - 1] = 0;
    collector.push(last);
    expect(collector.retainedBytes).toBe(HEAD_BYTES + TAIL_BYTES);
    const sample = collector.finish();
    expect(sample.isText).toBe(false);
    expect(sample.tail.at(-1)).toBe(0);
    expect(detectContent(sample)).toBe('unknown');
  });

  describe('UTF-8 across chunk boundaries', () => {
    const text = Buffer.from(`${BOM}héllo wörld · €uro · 日本語 · 𝄞 music · 😀 ok\n`, 'utf8');

    it.each([1, 2, 3, 5, 7])('is text in chunks of %i bytes (every character split somewhere)', (size) => {
      expect(sampleInChunks(text, size).isText).toBe(true);
    });

    it('is text split in two at every byte position', () => {
      for (let split = 0; split <= text.length; split++) {
        const collector = new ContentCollector();
        collector.push(text.subarray(0, split));
        collector.push(text.subarray(split));
        expect([split, collector.finish().isText]).toEqual([split, true]);
      }
    });

    it.each([
      ['a NUL in its last byte', Buffer.concat([text, Buffer.from([0])])],
      ['a NUL in its first byte', Buffer.concat([Buffer.from([0]), text])],
      [
        'a four-byte character cut short at the very end',
        Buffer.concat([text, Buffer.from([0xf0, 0x9f, 0x98])]),
      ],
      ['a lone continuation byte at the very end', Buffer.concat([text, Buffer.from([0x80])])],
      ['a byte that never occurs in UTF-8 at the very end', Buffer.concat([text, Buffer.from([0xff])])],
      ['an encoded surrogate', Buffer.concat([text, Buffer.from([0xed, 0xa0, 0x80]), text])],
      ['an overlong encoding of "/"', Buffer.concat([text, Buffer.from([0xc0, 0xaf])])],
      ['Latin-1 text', Buffer.from('café crème', 'latin1')],
      ['UTF-16 text', Buffer.from('\ufeffplain words', 'utf16le')],
    ])('is not text with %s, in any chunking', (_name, bytes) => {
      for (const size of [1, 2, 3, 4, bytes.length]) expect(sampleInChunks(bytes, size).isText).toBe(false);
    });
  });

  it('refuses a push after finish, and finish answers the same sample again', () => {
    const collector = new ContentCollector();
    collector.push(Buffer.from('x'));
    const sample = collector.finish();
    expect(collector.finish()).toBe(sample);
    expect(() => collector.push(Buffer.from('y'))).toThrow(/after finish/);
  });

  it('sniffingStream passes every byte through unchanged while the collector watches', async () => {
    const file = randomBytes(seededRandom(3), 200 * KB);
    const collector = new ContentCollector();
    const received: Buffer[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => received.push(chunk));
    const chunks = [file.subarray(0, 1000), file.subarray(1000, 150 * KB), file.subarray(150 * KB)];
    await pipeline(Readable.from(chunks), sniffingStream(collector), sink);
    expect(Buffer.concat(received).equals(file)).toBe(true);
    expect(collector.finish().size).toBe(file.length);
  });
});

describe('detectContent: real files', () => {
  const cases: Array<[string, () => Buffer, DetectedContent]> = [
    ['a 1×1 PNG', () => onePixelPng(0x33, 0x66, 0xcc), 'image/png'],
    ['a JPEG', () => fixture('tiny.jpg'), 'image/jpeg'],
    ['a GIF', () => fixture('tiny.gif'), 'image/gif'],
    ['a lossless WebP', () => fixture('tiny.webp'), 'image/webp'],
    ['a PDF', () => onePagePdf(), 'application/pdf'],
    ['a PDF written in ASCII only (signature before text)', () => onePagePdf(false), 'application/pdf'],
    ['an MP3 of bare Layer III frames', () => fixture('frames.mp3'), 'audio/mpeg'],
    ['an MP3 with an ID3v2 tag', () => fixture('tagged.mp3'), 'audio/mpeg'],
    ['an MP4 (brand isom)', () => fixture('tiny.mp4'), 'video/mp4'],
    ['an xlsx written by exceljs', () => xlsx, XLSX_MIME_TYPE],
    ['a docx written by the docx package', () => fixture('tiny.docx'), DOCX_MIME_TYPE],
    ['a minimal docx of three parts', () => buildZip(minimalDocxEntries()), DOCX_MIME_TYPE],
    ['a pptx written by pptxgenjs', () => fixture('tiny.pptx'), PPTX_MIME_TYPE],
    ['a plain zip', () => buildZip([{ name: 'notes.txt', data: 'hello', deflate: true }]), 'application/zip'],
    ['an empty zip (end record only)', () => buildZip([]), 'application/zip'],
    ['an ELF executable', elfExecutable, 'unknown'],
    ['a PE executable', peExecutable, 'unknown'],
    ['a Mach-O executable', machOExecutable, 'unknown'],
    ['a QuickTime movie (brand qt)', () => fixture('tiny.mov'), 'unknown'],
    ['an M4A audio file', () => fixture('tiny.m4a'), 'unknown'],
  ];

  it.each(cases)('%s', (_name, file, expected) => {
    expect(detect(file())).toBe(expected);
  });

  it.each(cases)('%s, streamed in 5-byte chunks', (_name, file, expected) => {
    expect(detectContent(sampleInChunks(file(), 5))).toBe(expected);
  });

  it('the exceljs workbook opens in an Excel reader', async () => {
    const workbook = new ExcelJS.Workbook();
    // exceljs types its input as an ArrayBuffer.
    await workbook.xlsx.load(
      xlsx.buffer.slice(xlsx.byteOffset, xlsx.byteOffset + xlsx.byteLength) as ArrayBuffer,
    );
    expect(workbook.getWorksheet('Contacts')?.getCell('B2').value).toBe('ada@example.com');
  });
});

describe('detectContent: media decisions', () => {
  it.each([
    ['isom', [], 'video/mp4'],
    ['mp42', ['isom'], 'video/mp4'],
    ['XAVC', [], 'video/mp4'],
    ['abcd', ['isom', 'mp41'], 'video/mp4'],
    ['abcd', ['abcd'], 'unknown'],
    ['qt  ', ['qt  '], 'unknown'],
    ['qt  ', ['isom'], 'unknown'],
    ['3gp4', ['isom', '3gp4'], 'unknown'],
    ['heic', ['mif1', 'heic'], 'unknown'],
    ['M4A ', ['M4A ', 'mp42', 'isom'], 'unknown'],
  ] as const)('ftyp major %j, compatible %j: %s', (major, compatible, expected) => {
    expect(detect(isoMediaStart(major, [...compatible]))).toBe(expected);
  });

  it('reads an ftyp box too short for its brands as unknown', () => {
    const box = isoMediaStart('isom', []);
    box.writeUInt32BE(12, 0);
    expect(detect(box)).toBe('unknown');
  });

  it.each([
    [
      'a UTF-16LE text, whose BOM reads as a Layer I sync',
      Buffer.from('\ufeff<html>hello</html>', 'utf16le'),
    ],
    ['an AAC ADTS stream (layer bits 00)', Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x02, 0x1f, 0xfc, 0, 0, 0])],
    [
      'one Layer III header followed by noise',
      Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(600, 1)]),
    ],
    [
      'a free-format Layer III header',
      Buffer.concat([Buffer.from([0xff, 0xfb, 0x00, 0x64]), Buffer.alloc(600)]),
    ],
    ['an ID3 tag of version 9', Buffer.from([0x49, 0x44, 0x33, 9, 0, 0, 0, 0, 0, 0, 0])],
  ])('%s is not MP3', (_name, bytes) => {
    expect(detect(bytes)).toBe('unknown');
  });

  it('a text that starts with "ID3" is text', () => {
    expect(detect('ID3 tags are metadata.\n')).toBe('text');
  });

  it('a single complete Layer III frame is MP3', () => {
    const frames = fixture('frames.mp3');
    expect(detect(frames.subarray(0, 104))).toBe('audio/mpeg');
  });
});

describe('detectContent: text, HTML and scripts', () => {
  it.each([
    '<!DOCTYPE html><title>x</title>',
    '<!doctype HTML PUBLIC "-//W3C//DTD HTML 4.01//EN">',
    `${BOM}<html lang="en">`,
    '   \n\t\r\n<HTML>',
    `${BOM}\n\n  <head><title>t</title></head>`,
    '<Body onload="go()">',
    '<script>alert(1)</script>',
    '<SCRIPT src="x.js"></SCRIPT>',
    '<iframe src="https://example.com">',
    '<svg xmlns="http://www.w3.org/2000/svg"></svg>',
    '<svg/onload=alert(1)>',
    '<?xml version="1.0" encoding="UTF-8"?>\n<!-- made by hand -->\n<svg width="1" height="1"/>',
    '<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x"><SVG></SVG>',
    '<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"></html>',
    `<?xml version="1.0"?>\n<!--${' long comment '.repeat(2000)}-->\n<svg/>`,
    '<!-- a comment first -->\n<div>',
    '<p>A paragraph',
    '<b>bold</b>',
    '<a href="javascript:alert(1)">x</a>',
    '<html',
  ])('HTML: %j', (text) => {
    expect(detect(text)).toBe('html');
  });

  it.each([
    'hello <html> world',
    '<html5 is a buzzword',
    '<bold> is not a tag',
    'a < b and b > c',
    '<?xml version="1.0"?>\n<note><to>Ada</to></note>',
    '{"html": "<html>"}',
    ' #!/bin/sh (a space first)',
  ])('text: %j', (text) => {
    expect(detect(text)).toBe('text');
  });

  it.each(['#!/bin/sh\nrm -rf /\n', `${BOM}#!/usr/bin/env python3\nprint(1)\n`, '#!'])(
    'script: %j',
    (text) => {
      expect(detect(text)).toBe('script');
    },
  );

  it('reads the whole file, not just the head: a NUL past 64 KB makes it not text', () => {
    const bytes = Buffer.concat([Buffer.alloc(100 * KB, 'a'), Buffer.from([0]), Buffer.from('b')]);
    expect(detect(bytes)).toBe('unknown');
  });

  it('an empty file is text', () => {
    expect(detect('')).toBe('text');
  });
});

describe('detectContent: ZIP archives', () => {
  // ~85 bytes of central directory per entry: 7,000 entries make ~600 KB, more than the tail keeps.
  const many = 7000;
  const workbookParts = [
    { name: '[Content_Types].xml', data: '<Types/>' },
    { name: 'xl/workbook.xml', data: '<workbook/>' },
  ];

  it('the large archives really have a central directory bigger than the tail window', () => {
    const zip = buildZip(fillerEntries(many));
    const directorySize = zip.readUInt32LE(zip.length - 22 + 12);
    expect(directorySize).toBeGreaterThan(TAIL_BYTES);
  });

  it.each([
    [
      'workbook listed first: found by the local headers in the head',
      [...workbookParts, ...fillerEntries(many)],
      {},
    ],
    [
      'the same with data descriptors: the head walk searches for each next header',
      [...workbookParts.map((part) => ({ ...part, deflate: true })), ...fillerEntries(many)],
      { dataDescriptors: true },
    ],
    [
      'workbook listed last: found in the part of the directory inside the tail',
      [...fillerEntries(many), ...workbookParts],
      {},
    ],
  ] as const)('a large xlsx-shaped archive, %s', (_name, entries, options) => {
    expect(detectContent(sampleInChunks(buildZip([...entries], options), 64 * KB))).toBe(XLSX_MIME_TYPE);
  });

  it('a large archive whose workbook entry lies in neither window is a plain zip (documented limit)', () => {
    const entries = [...fillerEntries(many / 2, 'a'), workbookParts[1]!, ...fillerEntries(many / 2, 'b')];
    expect(detect(buildZip(entries))).toBe('application/zip');
  });

  it('a large plain archive is a zip', () => {
    expect(detect(buildZip(fillerEntries(many)))).toBe('application/zip');
  });

  it('reads the directory through ZIP64 end records', () => {
    expect(detect(buildZip(minimalDocxEntries(), { zip64: true }))).toBe(DOCX_MIME_TYPE);
  });

  it('finds the end record behind the longest comment', () => {
    expect(detect(buildZip(minimalDocxEntries(), { comment: 'c'.repeat(0xffff) }))).toBe(DOCX_MIME_TYPE);
  });

  it('reads Office part names regardless of case', () => {
    expect(detect(buildZip([{ name: 'XL/Workbook.XML', data: '<workbook/>' }]))).toBe(XLSX_MIME_TYPE);
  });

  it('an archive with the main parts of two Office types is a plain zip', () => {
    const entries = [
      { name: 'word/document.xml', data: '<w:document/>' },
      { name: 'xl/workbook.xml', data: '<workbook/>' },
    ];
    expect(detect(buildZip(entries))).toBe('application/zip');
  });

  it('a docx cut short at any length is not a zip, and nothing throws', () => {
    const docx = fixture('tiny.docx');
    for (let length = 30; length < docx.length; length++) {
      expect([length, detect(docx.subarray(0, length))]).toEqual([length, 'unknown']);
    }
  });

  it('bytes appended after the end record beyond the comment search leave it unfound', () => {
    const zip = Buffer.concat([buildZip(minimalDocxEntries()), Buffer.alloc(70 * KB, 0x20)]);
    expect(detect(zip)).toBe('unknown');
  });

  describe('malformed end records and directories', () => {
    const docx = buildZip(minimalDocxEntries());
    const endAt = docx.length - 22;
    const corrupt = (edit: (zip: Buffer) => void) => {
      const copy = Buffer.from(docx);
      edit(copy);
      return copy;
    };

    it.each([
      [
        'a directory size larger than the file: the local headers name the parts',
        (zip: Buffer) => zip.writeUInt32LE(0xfffffff0, endAt + 12),
        DOCX_MIME_TYPE,
      ],
      [
        'a directory size of zero: an empty directory',
        (zip: Buffer) => zip.writeUInt32LE(0, endAt + 12),
        'application/zip',
      ],
      [
        'a comment length past the end: no end record',
        (zip: Buffer) => zip.writeUInt16LE(500, endAt + 20),
        'unknown',
      ],
      [
        'ZIP64 markers without a locator: the classic fields',
        (zip: Buffer) => zip.writeUInt32LE(0xffffffff, endAt + 16),
        DOCX_MIME_TYPE,
      ],
      [
        'a first directory name running past the directory: the walk resumes at the next header',
        (zip: Buffer) => zip.writeUInt16LE(0xffff, zip.indexOf('PK\x01\x02') + 28),
        DOCX_MIME_TYPE,
      ],
      [
        'every directory header signature broken: no entries',
        (zip: Buffer) => {
          for (let at = zip.indexOf('PK\x01\x02'); at !== -1; at = zip.indexOf('PK\x01\x02', at + 1))
            zip[at + 2] = 9;
        },
        'application/zip',
      ],
      [
        'a local name length past the head: the directory still reads',
        (zip: Buffer) => zip.writeUInt16LE(0xffff, 26),
        DOCX_MIME_TYPE,
      ],
    ] as const)('%s', (_name, edit, expected) => {
      expect(detect(corrupt(edit))).toBe(expected);
    });

    it('survives thousands of random corruptions of the directory and end record', () => {
      const random = seededRandom(11);
      const directoryStart = docx.indexOf('PK\x01\x02');
      for (let round = 0; round < 3000; round++) {
        const zip = Buffer.from(docx);
        for (let flips = 1 + Math.floor(random() * 4); flips > 0; flips--) {
          const at = directoryStart + Math.floor(random() * (docx.length - directoryStart));
          zip[at] = Math.floor(random() * 256);
        }
        expect(() => detect(zip)).not.toThrow();
      }
    });

    it('survives random bytes behind a ZIP signature, of every small length', () => {
      const random = seededRandom(5);
      for (let length = 0; length < 400; length++) {
        const zip = Buffer.concat([Buffer.from('PK\x03\x04'), randomBytes(random, length)]);
        expect(() => detect(zip)).not.toThrow();
        const empty = Buffer.concat([Buffer.from('PK\x05\x06'), randomBytes(random, length)]);
        expect(() => detect(empty)).not.toThrow();
      }
    });
  });
});

describe('policy', () => {
  const png = onePixelPng(1, 2, 3);
  const head = (text: string) => Buffer.from(text, 'utf8');
  const supportedList =
    'attachments may be PNG, JPEG, GIF or WebP images, PDF, plain text, CSV, JSON, ZIP, Word, Excel or ' +
    'PowerPoint files, MP3 audio or MP4 video.';

  it('every binary type the detector names is a supported attachment type', () => {
    const binary: DetectedBinaryType[] = [
      'image/png',
      'image/jpeg',
      'image/gif',
      'image/webp',
      'application/pdf',
      'audio/mpeg',
      'video/mp4',
      'application/zip',
      DOCX_MIME_TYPE,
      XLSX_MIME_TYPE,
      PPTX_MIME_TYPE,
    ];
    expect(
      binary.filter((type) => !(supportedAttachmentMimeTypes as readonly string[]).includes(type)),
    ).toEqual([]);
  });

  describe('judgeAttachment', () => {
    it.each([
      [
        'a PNG declared text/plain is stored as PNG',
        'text/plain',
        'image/png',
        png,
        { ok: true, mimeType: 'image/png' },
      ],
      [
        'a docx declared generically is stored as docx',
        'application/octet-stream',
        DOCX_MIME_TYPE,
        head(''),
        { ok: true, mimeType: DOCX_MIME_TYPE },
      ],
      ['an MP4 with no declared type', undefined, 'video/mp4', head(''), { ok: true, mimeType: 'video/mp4' }],
      ['text declared text/plain', 'text/plain', 'text', head('hi'), { ok: true, mimeType: 'text/plain' }],
      [
        'text declared text/csv with a charset',
        'Text/CSV; charset=utf-8',
        'text',
        head('a,b'),
        { ok: true, mimeType: 'text/csv' },
      ],
      [
        'text declared JSON opening with [',
        'application/json',
        'text',
        head(`${BOM} \n[1,2]`),
        { ok: true, mimeType: 'application/json' },
      ],
      [
        'text declared JSON opening with {',
        'application/json',
        'text',
        head('{"a":1}'),
        { ok: true, mimeType: 'application/json' },
      ],
      ['text declared with no type', undefined, 'text', head('hi'), { ok: true, mimeType: 'text/plain' }],
      [
        'text declared generically',
        'application/octet-stream',
        'text',
        head('hi'),
        { ok: true, mimeType: 'text/plain' },
      ],
      [
        'text declared as another text type',
        'text/markdown',
        'text',
        head('# hi'),
        { ok: true, mimeType: 'text/plain' },
      ],
      [
        'text declared JSON that is a bare string',
        'application/json',
        'text',
        head('"just a string"'),
        {
          ok: false,
          reason: 'The file was declared application/json, but its content does not start with { or [.',
        },
      ],
      [
        'text declared image/png',
        'image/png',
        'text',
        head('not a picture'),
        { ok: false, reason: `The file's content is plain text, but it was declared "image/png".` },
      ],
      [
        'HTML declared text/plain',
        'text/plain',
        'html',
        head('<html>'),
        {
          ok: false,
          reason: `The file's content is HTML, which is not accepted as an attachment; ${supportedList}`,
        },
      ],
      [
        'a script declared generically',
        'application/octet-stream',
        'script',
        head('#!/bin/sh'),
        {
          ok: false,
          reason: `The file's content is a script (it starts with #!), which is not accepted as an attachment; ${supportedList}`,
        },
      ],
      [
        'an executable declared image/png',
        'image/png',
        'unknown',
        elfExecutable(),
        {
          ok: false,
          reason:
            `The file's content is neither UTF-8 text nor a recognised format, which is not accepted as an ` +
            `attachment; ${supportedList}`,
        },
      ],
    ] as const)('%s', (_name, declaredType, detected, bytes, expected) => {
      expect(judgeAttachment({ declaredType, fileName: 'file', detected, head: bytes })).toEqual(expected);
    });

    it('echoes at most 100 characters of a declared type', () => {
      const verdict = judgeAttachment({
        declaredType: `x/${'y'.repeat(500)}`,
        detected: 'text',
        head: head('a'),
      });
      expect(verdict.ok).toBe(false);
      expect(!verdict.ok && verdict.reason.length).toBeLessThan(200);
    });
  });

  describe('judgeCsv', () => {
    const wrongRoute =
      'A CSV upload must be declared text/csv or have a file name ending in .csv; this one was ';
    it.each([
      ['declared text/csv, any name', 'text/csv', 'export.txt', 'text', { ok: true, mimeType: 'text/csv' }],
      [
        'named .CSV, declared generically',
        'application/octet-stream',
        'EXPORT.CSV',
        'text',
        { ok: true, mimeType: 'text/csv' },
      ],
      ['named .csv, no declared type', undefined, 'export.csv', 'text', { ok: true, mimeType: 'text/csv' }],
      [
        'neither declared text/csv nor named .csv',
        'text/plain',
        'export.txt',
        'text',
        { ok: false, reason: `${wrongRoute}declared "text/plain" and named "export.txt".` },
      ],
      [
        'no declared type and no name',
        undefined,
        undefined,
        'text',
        { ok: false, reason: `${wrongRoute}declared with no type and named "".` },
      ],
      [
        'a PNG renamed .csv',
        'text/csv',
        'photo.csv',
        'image/png',
        { ok: false, reason: `A CSV upload must be UTF-8 text, but the file's content is a PNG image.` },
      ],
      [
        'an xlsx named .csv',
        'text/csv',
        'book.csv',
        XLSX_MIME_TYPE,
        {
          ok: false,
          reason: `A CSV upload must be UTF-8 text, but the file's content is an Excel workbook (xlsx).`,
        },
      ],
      [
        'HTML named .csv',
        'text/csv',
        'page.csv',
        'html',
        { ok: false, reason: `A CSV upload must be UTF-8 text, but the file's content is HTML.` },
      ],
      [
        'a Latin-1 or binary file named .csv',
        'text/csv',
        'legacy.csv',
        'unknown',
        {
          ok: false,
          reason: 'A CSV upload must be UTF-8 text without NUL bytes; save the file as "CSV UTF-8".',
        },
      ],
    ] as const)('%s', (_name, declaredType, fileName, detected, expected) => {
      expect(judgeCsv({ declaredType, fileName, detected })).toEqual(expected);
    });
  });

  describe('judgeXlsx', () => {
    it.each([
      [
        'declared, named and detected as xlsx',
        XLSX_MIME_TYPE,
        'book.xlsx',
        XLSX_MIME_TYPE,
        { ok: true, mimeType: XLSX_MIME_TYPE },
      ],
      [
        'declared in capitals with a parameter, named .XLSX',
        `${XLSX_MIME_TYPE.toUpperCase()}; q=1`,
        'BOOK.XLSX',
        XLSX_MIME_TYPE,
        { ok: true, mimeType: XLSX_MIME_TYPE },
      ],
      [
        'declared generically',
        'application/octet-stream',
        'book.xlsx',
        XLSX_MIME_TYPE,
        {
          ok: false,
          reason: `An Excel upload must be declared ${XLSX_MIME_TYPE}; this one was declared "application/octet-stream".`,
        },
      ],
      [
        'not declared',
        undefined,
        'book.xlsx',
        XLSX_MIME_TYPE,
        {
          ok: false,
          reason: `An Excel upload must be declared ${XLSX_MIME_TYPE}; this one was declared with no type.`,
        },
      ],
      [
        'named .xls',
        XLSX_MIME_TYPE,
        'book.xls',
        XLSX_MIME_TYPE,
        { ok: false, reason: `An Excel upload's file name must end in .xlsx; this one is "book.xls".` },
      ],
      [
        'a zip that is not a workbook',
        XLSX_MIME_TYPE,
        'book.xlsx',
        'application/zip',
        {
          ok: false,
          reason: 'The file is a ZIP archive but not an Excel workbook: it has no xl/workbook.xml.',
        },
      ],
      [
        'a Word document renamed',
        XLSX_MIME_TYPE,
        'book.xlsx',
        DOCX_MIME_TYPE,
        {
          ok: false,
          reason: `The file's content is a Word document (docx), not an Excel workbook (a ZIP archive with xl/workbook.xml).`,
        },
      ],
      [
        'a text file renamed',
        XLSX_MIME_TYPE,
        'book.xlsx',
        'text',
        {
          ok: false,
          reason: `The file's content is plain text, not an Excel workbook (a ZIP archive with xl/workbook.xml).`,
        },
      ],
      [
        'an executable or truncated archive',
        XLSX_MIME_TYPE,
        'book.xlsx',
        'unknown',
        {
          ok: false,
          reason:
            `The file's content is neither UTF-8 text nor a recognised format, not an Excel workbook ` +
            `(a ZIP archive with xl/workbook.xml).`,
        },
      ],
    ] as const)('%s', (_name, declaredType, fileName, detected, expected) => {
      expect(judgeXlsx({ declaredType, fileName, detected })).toEqual(expected);
    });
  });

  describe('bytes and policy together', () => {
    const sampleOfFile = (bytes: Buffer): ContentSample => sampleInChunks(bytes, 16 * KB);

    it('stores a real PNG declared as text under its real type', () => {
      const sample = sampleOfFile(png);
      const verdict = judgeAttachment({
        declaredType: 'text/plain',
        fileName: 'a.txt',
        detected: detectContent(sample),
        head: sample.head,
      });
      expect(verdict).toEqual({ ok: true, mimeType: 'image/png' });
    });

    it.each([
      ['an ELF renamed photo.png', elfExecutable(), 'image/png', 'photo.png'],
      ['a PE renamed report.pdf', peExecutable(), 'application/pdf', 'report.pdf'],
      [
        'an HTML page renamed notes.txt',
        Buffer.from(`${BOM}\n<!DOCTYPE html><p>hi`),
        'text/plain',
        'notes.txt',
      ],
    ])('refuses %s as an attachment', (_name, bytes, declaredType, fileName) => {
      const sample = sampleOfFile(bytes);
      expect(
        judgeAttachment({ declaredType, fileName, detected: detectContent(sample), head: sample.head }).ok,
      ).toBe(false);
    });

    it('accepts the exceljs workbook on the xlsx route and refuses it on the CSV route', () => {
      const detected = detectContent(sampleOfFile(xlsx));
      expect(judgeXlsx({ declaredType: XLSX_MIME_TYPE, fileName: 'contacts.xlsx', detected }).ok).toBe(true);
      expect(judgeCsv({ declaredType: 'text/csv', fileName: 'contacts.csv', detected }).ok).toBe(false);
    });

    it.each([
      ['a plain zip', buildZip([{ name: 'a.txt', data: 'a' }])],
      ['a docx', fixture('tiny.docx')],
      ['a CSV', Buffer.from('name,email\nAda,ada@example.com\n')],
      ['an ELF', elfExecutable()],
    ])('refuses %s renamed .xlsx on the xlsx route', (_name, bytes) => {
      const detected = detectContent(sampleOfFile(bytes));
      expect(judgeXlsx({ declaredType: XLSX_MIME_TYPE, fileName: 'book.xlsx', detected }).ok).toBe(false);
    });

    it('accepts a UTF-8 CSV named .csv and refuses a binary renamed .csv', () => {
      const csv = detectContent(sampleOfFile(Buffer.from('name,city\nZoë,Zürich\n')));
      expect(
        judgeCsv({ declaredType: 'application/octet-stream', fileName: 'people.csv', detected: csv }),
      ).toEqual({
        ok: true,
        mimeType: 'text/csv',
      });
      const binary = detectContent(sampleOfFile(fixture('tiny.gif')));
      expect(judgeCsv({ declaredType: 'text/csv', fileName: 'people.csv', detected: binary }).ok).toBe(false);
    });
  });
});
