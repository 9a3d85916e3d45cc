/**
 * The XLSX reader of imports: cell values, sheets, and hostile workbooks (not zips, zip bombs,
 * huge rows and values), on workbooks written here with exceljs or zipped by hand.
 */
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import {
  DEFAULT_READER_LIMITS,
  ImportFileError,
  type ImportRow,
  type ReaderLimits,
  readXlsx,
  type XlsxOptions,
} from '../src/readers';
import { isoText } from '../src/readers/xlsx/cell-text';
import { SharedStrings, TooLongString } from '../src/readers/xlsx/shared-strings';
import { type ZipEntry, zip } from './zip-fixture';

const MiB = 1024 * 1024;

async function workbookBytes(build: (workbook: ExcelJS.Workbook) => void): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  build(workbook);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

function sourceOf(bytes: Buffer, chunk = 64 * 1024): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += chunk) chunks.push(bytes.subarray(at, at + chunk));
  return Readable.from(chunks);
}

async function readAll(
  bytes: Buffer,
  options: XlsxOptions = {},
  limits?: ReaderLimits,
): Promise<ImportRow[]> {
  const rows: ImportRow[] = [];
  for await (const row of readXlsx(sourceOf(bytes), options, limits)) rows.push(row);
  return rows;
}

async function failureOf(
  bytes: Buffer,
  options: XlsxOptions = {},
  limits?: ReaderLimits,
): Promise<ImportFileError> {
  try {
    await readAll(bytes, options, limits);
  } catch (error) {
    expect(error).toBeInstanceOf(ImportFileError);
    return error as ImportFileError;
  }
  throw new Error('the workbook was read without an error');
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELATIONSHIPS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

function sheetXml(rows: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>${rows}</sheetData></worksheet>`;
}

/** The parts of a one-sheet workbook written by hand, for what exceljs would not write. */
function workbookEntries(
  sheet: string | Buffer,
  options: { sharedStrings?: string; sheetSize?: number } = {},
) {
  const relationship = (id: string, type: string, target: string) =>
    `<Relationship Id="${id}" Type="${RELATIONSHIPS}/${type}" Target="${target}"/>`;
  const entries: ZipEntry[] = [
    {
      name: '_rels/.rels',
      data: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${relationship('rId1', 'officeDocument', 'xl/workbook.xml')}</Relationships>`,
    },
    {
      name: 'xl/workbook.xml',
      data: `<workbook xmlns="${MAIN}" xmlns:r="${RELATIONSHIPS}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${relationship('rId1', 'worksheet', 'worksheets/sheet1.xml')}${options.sharedStrings === undefined ? '' : relationship('rId2', 'sharedStrings', 'sharedStrings.xml')}</Relationships>`,
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: sheet,
      ...(options.sheetSize ? { declaredSize: options.sheetSize } : {}),
    },
  ];
  if (options.sharedStrings !== undefined)
    entries.push({ name: 'xl/sharedStrings.xml', data: options.sharedStrings });
  return entries;
}

function importTempDirectories(): string[] {
  return readdirSync(tmpdir()).filter((name) => name.startsWith('recordbase-import-'));
}

describe('readXlsx: values', () => {
  test('each kind of cell comes as text, gaps filled, empty rows skipped with their numbers kept', async () => {
    const bytes = await workbookBytes((workbook) => {
      const sheet = workbook.addWorksheet('Data');
      sheet.addRow(['text', 'number', 'boolean', 'date', 'datetime', 'formula', 'rich', 'gap', 'after']);
      sheet.addRow([
        'Ada',
        0.1 + 0.2,
        true,
        new Date(Date.UTC(2024, 0, 2)),
        new Date(Date.UTC(2024, 0, 2, 10, 20, 30, 123)),
        { formula: 'B2*2', result: 0.6000000000000001 },
        { richText: [{ text: 'bo', font: { bold: true } }, { text: 'ld' }] },
        null,
        'x',
      ]);
      sheet.getRow(3).values = [-12.5, 123456789, false, null, null, { formula: 'A1&"!"', result: 'text!' }];
      sheet.getCell('A6').value = { text: 'the link text', hyperlink: 'https://example.com/' };
      sheet.getCell('B6').value = { error: '#DIV/0!' };
      sheet.getCell('C6').value = { formula: '1/0', result: { error: '#DIV/0!' } };
      sheet.getCell('D6').value = 1e21;
    });
    expect(await readAll(bytes)).toEqual([
      { row: 1, cells: ['text', 'number', 'boolean', 'date', 'datetime', 'formula', 'rich', 'gap', 'after'] },
      {
        row: 2,
        cells: ['Ada', '0.3', 'true', '2024-01-02', '2024-01-02T10:20:30.123Z', '0.6', 'bold', '', 'x'],
      },
      { row: 3, cells: ['-12.5', '123456789', 'false', '', '', 'text!'] },
      { row: 6, cells: ['the link text', '', '', '1e+21'] },
    ]);
  });

  test('a date-time format keeps the time at midnight; a date format shows the day', async () => {
    const bytes = await workbookBytes((workbook) => {
      const sheet = workbook.addWorksheet('S');
      sheet.addRow([
        new Date(Date.UTC(2024, 0, 2)),
        new Date(Date.UTC(2024, 0, 2)),
        new Date(Date.UTC(2024, 0, 2, 5)),
      ]);
      sheet.getCell('A1').numFmt = 'yyyy-mm-dd';
      sheet.getCell('B1').numFmt = 'yyyy-mm-dd hh:mm:ss.000';
      sheet.getCell('C1').numFmt = 'yyyy-mm-dd';
    });
    // A column of date-times with one at midnight was read as a date and text mixed.
    expect(await readAll(bytes)).toEqual([
      { row: 1, cells: ['2024-01-02', '2024-01-02T00:00:00.000Z', '2024-01-02T05:00:00.000Z'] },
    ]);
  });

  test('a row of empty values is a row; a row of styled empty cells is not', async () => {
    const sheet = sheetXml(
      '<row r="1"><c t="inlineStr"><is><t>A</t></is></c></row>' +
        '<row r="2"><c r="A2" t="inlineStr"><is><t></t></is></c></row>' +
        '<row r="3"><c r="A3" s="1"/></row>' +
        '<row r="4"><c r="A4"><v>1</v></c></row>',
    );
    expect(await readAll(zip(workbookEntries(sheet)))).toEqual([
      { row: 1, cells: ['A'] },
      { row: 2, cells: [''] },
      { row: 4, cells: ['1'] },
    ]);
  });

  test('dates of a 1904-based workbook', async () => {
    const bytes = await workbookBytes((workbook) => {
      workbook.properties.date1904 = true;
      workbook
        .addWorksheet('S')
        .addRow([new Date(Date.UTC(2024, 0, 2)), new Date(Date.UTC(1999, 11, 31, 23, 59))]);
    });
    expect(await readAll(bytes)).toEqual([{ row: 1, cells: ['2024-01-02', '1999-12-31T23:59:00.000Z'] }]);
  });

  test('what other writers do: prefixed elements, cells and rows without r, escapes, inline and ISO cells', async () => {
    const sheet = `<x:worksheet xmlns:x="${MAIN}"><x:sheetData>
      <x:row><x:c t="inlineStr"><x:is><x:r><x:t>ric</x:t></x:r><x:r><x:t xml:space="preserve">h </x:t></x:r><x:rPh><x:t>ruby</x:t></x:rPh></x:is></x:c><x:c><x:v>7</x:v></x:c></x:row>
      <x:row r="4"><x:c r="C4" t="s"><x:v>0</x:v></x:c><x:c r="D4" t="d"><x:v>2024-03-05T06:07:08Z</x:v></x:c><x:c r="E4" t="e"><x:v>#N/A</x:v></x:c><x:c r="F4" t="b"><x:v>0</x:v></x:c></x:row>
      <x:row><x:c r="b5" t="str"><x:f>A1</x:f><x:v>a_x000D_b_x005F_x0041_</x:v></x:c></x:row>
    </x:sheetData></x:worksheet>`;
    const sharedStrings = `<sst xmlns="${MAIN}"><si><t>line_x000D_</t></si></sst>`;
    expect(await readAll(zip(workbookEntries(sheet, { sharedStrings })))).toEqual([
      { row: 1, cells: ['rich ', '7'] },
      { row: 4, cells: ['', '', 'line\r', '2024-03-05T06:07:08.000Z', '', 'false'] },
      { row: 5, cells: ['', 'a\rb_x0041_'] },
    ]);
  });

  test('a cell referring to a shared string the workbook lacks fails with its row', async () => {
    const sheet = sheetXml('<row r="2"><c r="A2" t="s"><v>3</v></c></row>');
    const error = await failureOf(zip(workbookEntries(sheet, { sharedStrings: `<sst xmlns="${MAIN}"/>` })));
    expect(error.message).toBe(
      'the Excel workbook is damaged: row 2, column 1 refers to a shared string it lacks',
    );
    expect(error.row).toBe(2);
  });
});

describe('shared strings, packed', () => {
  it('give back every string as added, across blocks, in any script, and nothing past the end', () => {
    const strings = new SharedStrings();
    const added: (string | TooLongString)[] = [];
    for (let index = 0; index < 60_000; index += 1) {
      const text =
        index % 1000 === 7
          ? new TooLongString(200_000 + index)
          : index % 3 === 0
            ? `naïve ${index} 日本語 😀 `.repeat(index % 11)
            : `plain ${index}`;
      strings.add(text);
      added.push(text);
    }
    // A string of 250 KB of UTF-8 after others: it goes into a block of its own room.
    const big = 'é'.repeat(125_000);
    strings.add(big);
    added.push(big);
    expect(strings.size).toBe(added.length);
    added.forEach((text, index) => {
      expect(strings.get(index)).toEqual(text);
    });
    expect(strings.get(added.length)).toBeUndefined();
    expect(strings.get(-1)).toBeUndefined();
    expect(strings.get(1.5)).toBeUndefined();
  });
});

describe('date cells as ISO text', () => {
  const expected = (ms: number) => {
    const iso = new Date(ms).toISOString();
    return ms % 86_400_000 === 0 ? iso.slice(0, 10) : iso;
  };

  it('are what Date writes, day alone at midnight, over years 0 to 9999', () => {
    const first = Date.parse('0000-01-01T00:00:00.000Z');
    const last = Date.parse('9999-12-31T23:59:59.999Z');
    const edges = [
      first,
      last,
      0,
      -1,
      86_400_000,
      Date.parse('2024-02-29T00:00:00Z'),
      Date.parse('1900-03-01T12:00:00Z'),
    ];
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const samples = [
      ...edges,
      ...Array.from({ length: 20_000 }, () => first + Math.floor(random() * (last - first))),
      // Whole days, as most date cells are.
      ...Array.from({ length: 5_000 }, () => Math.floor(random() * 3_000_000 - 700_000) * 86_400_000),
    ].filter((ms) => ms >= first && ms <= last);
    for (const ms of samples) expect([ms, isoText(ms)]).toEqual([ms, expected(ms)]);
  });
});

describe('readXlsx: sheets', () => {
  const bytes = workbookBytes((workbook) => {
    workbook.addWorksheet('Notes', { state: 'hidden' }).addRow(['hidden']);
    workbook.addWorksheet('Main').addRow(['main']);
    workbook.addWorksheet('Other').addRow(['other']);
  });

  test('the first visible worksheet by default', async () => {
    expect(await readAll(await bytes)).toEqual([{ row: 1, cells: ['main'] }]);
  });

  test('a sheet by name, exactly or ignoring case', async () => {
    expect(await readAll(await bytes, { sheet: 'Other' })).toEqual([{ row: 1, cells: ['other'] }]);
    expect(await readAll(await bytes, { sheet: 'notes' })).toEqual([{ row: 1, cells: ['hidden'] }]);
  });

  test('a missing sheet fails listing the sheets there are', async () => {
    const error = await failureOf(await bytes, { sheet: 'Summary' });
    expect(error.message).toBe('sheet "Summary" not found; the workbook has "Notes", "Main", "Other"');
    expect(error.row).toBeNull();
  });
});

describe('readXlsx: files that are not workbooks', () => {
  test('binary junk, an empty file and text', async () => {
    const junk = Buffer.alloc(4096);
    for (let i = 0; i < junk.length; i += 1) junk[i] = (i * 7919 + 13) % 251;
    for (const file of [junk, Buffer.alloc(0), Buffer.from('name,age\nAnn,31\n')]) {
      expect((await failureOf(file)).message).toBe('not an Excel workbook');
    }
  });

  test('an .xls or password-protected file (compound file) is told apart', async () => {
    const compound = Buffer.concat([
      Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
      Buffer.alloc(1024),
    ]);
    expect((await failureOf(compound)).message).toMatch(
      /^not an Excel workbook in \.xlsx format \(an \.xls file/,
    );
  });

  test('a zip that is not a workbook', async () => {
    expect((await failureOf(zip([{ name: 'notes.txt', data: 'hello' }]))).message).toBe(
      'not an Excel workbook (it has no xl/workbook.xml)',
    );
    const document = zip([
      {
        name: '_rels/.rels',
        data: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELATIONSHIPS}/officeDocument" Target="word/document.xml"/></Relationships>`,
      },
      { name: 'word/document.xml', data: '<w:document xmlns:w="urn:w"><w:body/></w:document>' },
    ]);
    expect((await failureOf(document)).message).toBe(
      'not an Excel workbook (its main part is a document, not a workbook)',
    );
  });

  test('a truncated workbook', async () => {
    const bytes = await workbookBytes((workbook) => workbook.addWorksheet('S').addRow(['a']));
    expect((await failureOf(bytes.subarray(0, bytes.length >> 1))).message).toMatch(
      /^not an Excel workbook \(/,
    );
  });

  test('a sheet that is not well-formed XML', async () => {
    const error = await failureOf(zip(workbookEntries(sheetXml('<row r="1"><c><v>1</v></row>'))));
    expect(error.message).toMatch(
      /^the Excel workbook is damaged: xl\/worksheets\/sheet1\.xml is not well-formed XML \(/,
    );
  });
});

describe('readXlsx: hostile workbooks', () => {
  const oneMiB: ReaderLimits = { ...DEFAULT_READER_LIMITS, maxInflatedBytes: MiB };
  /** A valid sheet padded with 64 MiB of whitespace between rows: ~64 KiB deflated. */
  const bomb = Buffer.concat([
    Buffer.from(`<worksheet xmlns="${MAIN}"><sheetData><row r="1"><c><v>1</v></c></row>`),
    Buffer.alloc(64 * MiB, 0x20),
    Buffer.from('</sheetData></worksheet>'),
  ]);

  test('a zip bomb fails at maxInflatedBytes', async () => {
    const file = zip(workbookEntries(bomb));
    expect(file.length).toBeLessThan(MiB);
    const error = await failureOf(file, {}, oneMiB);
    expect(error.message).toBe('the workbook unpacks to more than 1,048,576 bytes');
  });

  test('a zip bomb that declares a small size fails as soon as it inflates past it', async () => {
    const error = await failureOf(zip(workbookEntries(bomb, { sheetSize: 10_000 })), {}, oneMiB);
    expect(error.message).toMatch(
      /^the Excel workbook is damaged: xl\/worksheets\/sheet1\.xml: too many bytes/,
    );
  });

  test('the budget counts every part read, and no part that is not', async () => {
    const sharedStrings = `<sst xmlns="${MAIN}"><si><t>${'s'.repeat(600 * 1024)}</t></si></sst>`;
    const sheet = `${sheetXml('<row r="1"><c t="s"><v>0</v></c></row>')}${' '.repeat(600 * 1024)}`;
    const limits = { ...oneMiB, maxCellLength: MiB };
    expect((await failureOf(zip(workbookEntries(sheet, { sharedStrings })), {}, limits)).message).toBe(
      'the workbook unpacks to more than 1,048,576 bytes',
    );
    // A bomb among the parts the reader has no use for is never inflated.
    const withUnreadBomb = zip([
      ...workbookEntries(sheetXml('<row r="1"><c><v>1</v></c></row>')),
      { name: 'xl/media/image1.png', data: bomb },
    ]);
    expect(await readAll(withUnreadBomb, {}, oneMiB)).toEqual([{ row: 1, cells: ['1'] }]);
  });

  test('a row wider than maxColumns fails with its row', async () => {
    const bytes = await workbookBytes((workbook) => {
      const sheet = workbook.addWorksheet('S');
      sheet.addRow(['a', 'b']);
      sheet.addRow(Array.from({ length: 501 }, (_, index) => index));
    });
    const error = await failureOf(bytes);
    expect(error.message).toBe('row 2 has 501 columns; a table holds at most 500');
    expect(error.row).toBe(2);
  });

  test('styled empty cells far to the right do not widen a row', async () => {
    const bytes = await workbookBytes((workbook) => {
      const sheet = workbook.addWorksheet('S');
      sheet.addRow(['a', 'b']);
      sheet.getCell('XFD1').fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFFF0000' } };
    });
    expect(await readAll(bytes, {}, { ...DEFAULT_READER_LIMITS, maxColumns: 2 })).toEqual([
      { row: 1, cells: ['a', 'b'] },
    ]);
  });

  test('a row of 1,000,000 cells fails with its width, as does one cell at XFD', async () => {
    const cells = '<c><v>1</v></c>'.repeat(1_000_000);
    const error = await failureOf(zip(workbookEntries(sheetXml(`<row r="3">${cells}</row>`))));
    expect(error.message).toBe('row 3 has 1,000,000 columns; a table holds at most 500');
    expect(error.row).toBe(3);
    expect(
      (await failureOf(zip(workbookEntries(sheetXml('<row r="1"><c r="XFD1"><v>1</v></c></row>'))))).message,
    ).toBe('row 1 has 16,384 columns; a table holds at most 500');
  });

  test('a 10 MB shared string fails in the cell that uses it', async () => {
    const big = 'x'.repeat(10 * MiB);
    const bytes = await workbookBytes((workbook) => {
      const sheet = workbook.addWorksheet('S');
      sheet.addRow(['id', 'blob']);
      sheet.addRow([1, big]);
      workbook.addWorksheet('Small').addRow(['fine']);
    });
    const error = await failureOf(bytes);
    expect(error.message).toBe('row 2, column 2: a value of 10,485,760 characters; at most 100,000');
    expect(error.row).toBe(2);
    // The same shared strings, but a sheet that does not use the long one.
    expect(await readAll(bytes, { sheet: 'Small' })).toEqual([{ row: 1, cells: ['fine'] }]);
  });

  test('an inline string past maxCellLength fails with its size', async () => {
    const sheet = sheetXml(`<row r="1"><c t="inlineStr"><is><t>${'y'.repeat(200_001)}</t></is></c></row>`);
    expect((await failureOf(zip(workbookEntries(sheet)))).message).toBe(
      'row 1, column 1: a value of 200,001 characters; at most 100,000',
    );
  });

  test('a huge XML token (a comment no handler sees) fails before it is held', async () => {
    const sheet = sheetXml(`<!--${'z'.repeat(40 * MiB)}--><row r="1"><c><v>1</v></c></row>`);
    expect((await failureOf(zip(workbookEntries(sheet)))).message).toBe(
      'the workbook holds a text of more than 33,554,432 characters in xl/worksheets/sheet1.xml',
    );
  });
});

describe('readXlsx: the source stream and temporary files', () => {
  const many = workbookBytes((workbook) => {
    const sheet = workbook.addWorksheet('S');
    for (let i = 1; i <= 20_000; i += 1) sheet.addRow([i, `row ${i}`]);
  });

  test('leaving the loop early destroys the source and deletes the temporary copy', async () => {
    const before = importTempDirectories();
    const source = sourceOf(await many);
    let seen = 0;
    for await (const row of readXlsx(source)) {
      seen = row.row;
      expect(importTempDirectories().length).toBe(before.length + 1);
      if (row.row === 2) break;
    }
    expect(seen).toBe(2);
    expect(source.destroyed).toBe(true);
    expect(importTempDirectories()).toEqual(before);
  });

  test('a failure deletes the temporary copy too', async () => {
    const before = importTempDirectories();
    await expect(readAll(await many, { sheet: 'Nope' })).rejects.toThrow('sheet "Nope" not found');
    expect(importTempDirectories()).toEqual(before);
  });

  test('an error of the source rejects the iteration with that error', async () => {
    const before = importTempDirectories();
    const bytes = await many;
    const source = new Readable({ read() {} });
    source.push(bytes.subarray(0, 4096));
    const failure = new Error('storage connection reset');
    setTimeout(() => source.destroy(failure), 5);
    await expect(
      (async () => {
        for await (const _ of readXlsx(source)) {
          // No row arrives before the whole file is there.
        }
      })(),
    ).rejects.toBe(failure);
    expect(importTempDirectories()).toEqual(before);
  });

  test('a source failing before the copy listens to it rejects the iteration, not the process', async () => {
    const before = importTempDirectories();
    const source = new Readable({ read() {} });
    const failure = new Error('storage connection reset');
    const rows = readXlsx(source);
    const first = rows.next();
    // While the temporary directory is being made.
    source.destroy(failure);
    await expect(first).rejects.toBe(failure);
    expect(importTempDirectories()).toEqual(before);
  });

  test('every row of a long sheet, in order', async () => {
    const rows = await readAll(await many);
    expect(rows.length).toBe(20_000);
    expect(rows[19_999]).toEqual({ row: 20_000, cells: ['20000', 'row 20000'] });
    expect(rows.every((row, index) => row.row === index + 1)).toBe(true);
  });
});

describe('readXlsx: what a small workbook may expand to', () => {
  /** Reads until the reader fails, counting the rows and cells it handed out before. */
  async function readUntilFailure(bytes: Buffer, limits?: ReaderLimits) {
    let rows = 0;
    let cells = 0;
    try {
      for await (const row of readXlsx(sourceOf(bytes), {}, limits)) {
        rows += 1;
        cells += row.cells.length;
      }
    } catch (error) {
      expect(error).toBeInstanceOf(ImportFileError);
      return { error: error as ImportFileError, rows, cells };
    }
    throw new Error(`the workbook was read without an error (${rows} rows, ${cells} cells)`);
  }

  test('3,000,000 empty shared strings fail at the shared-strings budget, before any row', async () => {
    const sharedStrings = `<sst xmlns="${MAIN}">${'<si/>'.repeat(3_000_000)}</sst>`;
    const file = zip(workbookEntries(sheetXml('<row r="1"><c><v>1</v></c></row>'), { sharedStrings }));
    // 15 MB of XML in a zip of a few kilobytes: the 1 GiB inflate budget alone lets it through.
    expect(file.length).toBeLessThan(100 * 1024);
    const before = process.memoryUsage().arrayBuffers;
    const { error, rows } = await readUntilFailure(file);
    expect(error.message).toBe(
      `the workbook has more than 1,048,576 shared strings, the most a file of ${file.length.toLocaleString('en-US')} bytes may have (one per 4 bytes of the file, and never fewer than 1,048,576); save it again in Excel, which keeps each distinct text once, or split it into smaller files`,
    );
    expect(error.row).toBeNull();
    expect(rows).toBe(0);
    // The packed table stopped at its budget: 12 bytes a string, some 12 MiB, not the 36 MiB of all.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(24 * MiB);
  });

  test('shared strings holding more characters than their budget fail before any row', async () => {
    const long = `<si><t>${'x'.repeat(100_000)}</t></si>`;
    const sharedStrings = `<sst xmlns="${MAIN}">${long.repeat(200)}</sst>`;
    const file = zip(workbookEntries(sheetXml('<row r="1"><c t="s"><v>0</v></c></row>'), { sharedStrings }));
    expect(file.length).toBeLessThan(100 * 1024);
    const { error, rows } = await readUntilFailure(file);
    expect(error.message).toBe(
      `the workbook's shared strings hold more than 16,777,216 characters, the most a file of ${file.length.toLocaleString('en-US')} bytes may hold (8 per byte of the file, and never fewer than 16,777,216); split it into smaller files`,
    );
    expect(rows).toBe(0);
  });

  test('one 100,000-character shared string in thousands of cells stops at the characters budget', async () => {
    const sharedStrings = `<sst xmlns="${MAIN}"><si><t>${'y'.repeat(100_000)}</t></si></sst>`;
    const row = (n: number) => `<row r="${n}">${'<c t="s"><v>0</v></c>'.repeat(4)}</row>`;
    const rowsXml = Array.from({ length: 1_000 }, (_, index) => row(index + 1)).join('');
    const file = zip(workbookEntries(sheetXml(rowsXml), { sharedStrings }));
    expect(file.length).toBeLessThan(100 * 1024);
    const { error, rows, cells } = await readUntilFailure(file);
    // 64 Mi characters are 671 of its cells: the reader stops there, not at 400 million characters.
    expect(error.message).toBe(
      `row 168: the file's cells hold more than 67,108,864 characters, the most a file of ${file.length.toLocaleString('en-US')} bytes may hold (16 per byte of the file, and never fewer than 67,108,864); split it into smaller files`,
    );
    expect(error.row).toBe(168);
    expect(cells).toBeLessThanOrEqual(671);
    expect(rows).toBeLessThan(168);
  });

  test('rows widened by one far cell each stop at the cells budget, which grows with the file', async () => {
    // Each row is one cell in column 500: 500 cells handed out for some 30 bytes of XML.
    const rowsXml = Array.from(
      { length: 5_000 },
      (_, index) => `<row r="${index + 1}"><c r="SF${index + 1}"><v>1</v></c></row>`,
    ).join('');
    const file = zip(workbookEntries(sheetXml(rowsXml)));
    const limits: ReaderLimits = {
      ...DEFAULT_READER_LIMITS,
      emittedCells: { perFileByte: 16, atLeast: 100_000 },
    };
    const budget = Math.max(100_000, 16 * file.length);
    const { error, cells } = await readUntilFailure(file, limits);
    const row = Math.floor(budget / 500) + 1;
    expect(error.message).toBe(
      `row ${row}: the file holds more than ${budget.toLocaleString('en-US')} cells, the most a file of ${file.length.toLocaleString('en-US')} bytes may hold (16 per byte of the file, and never fewer than 100,000); split it into smaller files, or delete the empty columns that widen its rows`,
    );
    expect(cells).toBeLessThanOrEqual(budget);
    // Within the budget, the same rows are read whole.
    const generous: ReaderLimits = {
      ...DEFAULT_READER_LIMITS,
      emittedCells: { perFileByte: 16, atLeast: 2_500_000 },
    };
    expect((await readAll(file, {}, generous)).length).toBe(5_000);
  });
});
