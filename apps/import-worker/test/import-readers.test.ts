/**
 * The CSV reader of imports: delimiters, quoting, encodings, limits and stream handling, on files
 * built here. csv-parse (with its strict defaults) is the reference the tokenizer is checked against.
 */
import { Readable } from 'node:stream';
import { parse as csvParse } from 'csv-parse/sync';
import fc from 'fast-check';
import {
  DEFAULT_READER_LIMITS,
  ImportFileError,
  type ImportRow,
  type ReaderLimits,
  readCsv,
} from '../src/readers';

/** `bytes` as a stream of chunks of `size` bytes (the last may be shorter). */
function chunked(bytes: Buffer, size: number): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return Readable.from(chunks);
}

async function readAll(input: string | Buffer, options: { chunk?: number; limits?: ReaderLimits } = {}) {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const rows: ImportRow[] = [];
  for await (const row of readCsv(chunked(bytes, options.chunk ?? 64 * 1024), options.limits)) rows.push(row);
  return rows;
}

async function cellsOf(input: string | Buffer, options: { chunk?: number; limits?: ReaderLimits } = {}) {
  return (await readAll(input, options)).map((row) => row.cells);
}

/** The ImportFileError reading `input` fails with. */
async function failureOf(input: string | Buffer, options: { chunk?: number; limits?: ReaderLimits } = {}) {
  try {
    await readAll(input, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ImportFileError);
    return error as ImportFileError;
  }
  throw new Error('the file was read without an error');
}

describe('readCsv: delimiters', () => {
  test('comma, semicolon and tab are told from the first lines', async () => {
    expect(await cellsOf('a,b,c\n1,2,3\n')).toEqual([
      ['a', 'b', 'c'],
      ['1', '2', '3'],
    ]);
    expect(await cellsOf('a;b;c\n1;2;3\n')).toEqual([
      ['a', 'b', 'c'],
      ['1', '2', '3'],
    ]);
    expect(await cellsOf('a\tb\tc\n1\t2\t3\n')).toEqual([
      ['a', 'b', 'c'],
      ['1', '2', '3'],
    ]);
  });

  test('a semicolon file with decimal commas is told by its header', async () => {
    expect(await cellsOf('name;price;tax\nTea;1,50;0,20\nCake;2,75;0,35\n')).toEqual([
      ['name', 'price', 'tax'],
      ['Tea', '1,50', '0,20'],
      ['Cake', '2,75', '0,35'],
    ]);
  });

  test('delimiters inside quotes do not vote', async () => {
    expect(await cellsOf('"a,b,c";"d,e"\n"f,g";h\n')).toEqual([
      ['a,b,c', 'd,e'],
      ['f,g', 'h'],
    ]);
  });

  test('a tab file whose header holds a comma stays a tab file', async () => {
    expect(await cellsOf('Name, first\tAge\nBob\t42\nAnn\t37\n')).toEqual([
      ['Name, first', 'Age'],
      ['Bob', '42'],
      ['Ann', '37'],
    ]);
  });

  test('comma by default when the header has no candidate', async () => {
    expect(await cellsOf('name\nSmith, John\n')).toEqual([['name'], ['Smith', ' John']]);
    expect(await cellsOf('')).toEqual([]);
  });

  test('a delimiter first seen past the first chunk is still detected from the text held back', async () => {
    const text = `${'x'.repeat(100)};${'y'.repeat(100)}\n1;2\n`;
    expect(await cellsOf(text, { chunk: 7 })).toEqual([
      ['x'.repeat(100), 'y'.repeat(100)],
      ['1', '2'],
    ]);
  });
});

describe('readCsv: text and quoting', () => {
  test('a UTF-8 BOM is dropped, and does not hide the delimiter', async () => {
    expect(await cellsOf('\uFEFFname;age\nÉva;31\n')).toEqual([
      ['name', 'age'],
      ['Éva', '31'],
    ]);
  });

  test('quoted fields hold delimiters, line breaks and doubled quotes', async () => {
    const text = 'id,note\n1,"a, b"\n2,"line one\nline two"\n3,"say ""hi"""\n4,""\n5,"""quoted"""\n';
    expect(await readAll(text)).toEqual([
      { row: 1, cells: ['id', 'note'] },
      { row: 2, cells: ['1', 'a, b'] },
      { row: 3, cells: ['2', 'line one\nline two'] },
      { row: 4, cells: ['3', 'say "hi"'] },
      { row: 5, cells: ['4', ''] },
      { row: 6, cells: ['5', '"quoted"'] },
    ]);
  });

  test('CRLF, LF and CR all end records; a quoted CRLF is kept', async () => {
    expect(await cellsOf('a,b\r\n1,2\r\n"x\r\ny",3\r\n')).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['x\r\ny', '3'],
    ]);
    expect(await cellsOf('a,b\r1,2\r')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(await cellsOf('a,b\n1,2')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  test('ragged rows come as read, empty lines as one empty cell', async () => {
    expect(await readAll('a,b,c\n1\n\n4,5,6,7\n8,\n')).toEqual([
      { row: 1, cells: ['a', 'b', 'c'] },
      { row: 2, cells: ['1'] },
      { row: 3, cells: [''] },
      { row: 4, cells: ['4', '5', '6', '7'] },
      { row: 5, cells: ['8', ''] },
    ]);
  });

  test('row numbers count records, not the lines of quoted values', async () => {
    const rows = await readAll('h\n"a\nb\nc"\nd\n');
    expect(rows.map((row) => row.row)).toEqual([1, 2, 3]);
    expect(rows[2]?.cells).toEqual(['d']);
  });

  test('every way of cutting the bytes into chunks reads the same', async () => {
    const text = '\uFEFFnom;remarque\r\n"Zoë";"un ""mot"";\r\nsur deux lignes"\r\n€;日本語 😀\r\n;\r\n"";x';
    const expected = await cellsOf(text);
    expect(expected).toEqual([
      ['nom', 'remarque'],
      ['Zoë', 'un "mot";\r\nsur deux lignes'],
      ['€', '日本語 😀'],
      ['', ''],
      ['', 'x'],
    ]);
    for (let size = 1; size <= 12; size += 1) expect(await cellsOf(text, { chunk: size })).toEqual(expected);
  });

  test('matches csv-parse on generated files, however they are chunked', async () => {
    const alphabet = fc.constantFrom('a', 'b', ' ', '1', 'é', '€', '😀', 'x');
    const unquoted = fc.string({ unit: alphabet, maxLength: 6 });
    const quotedContent = fc.string({
      unit: fc.constantFrom('a', ',', ';', '\t', '"', '\n', '\r\n', ' ', 'é', '😀'),
      maxLength: 8,
    });
    const field = fc.oneof(
      unquoted.map((text) => ({ text, raw: text })),
      quotedContent.map((text) => ({ text, raw: `"${text.replaceAll('"', '""')}"` })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(',', ';', '\t'),
        fc.constantFrom('\n', '\r\n'),
        fc.array(fc.array(field, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 40 }),
        async (delimiter, newline, records, trailingNewline, chunk) => {
          // A header with plain names makes the delimiter unambiguous, as it is in real files.
          const header = ['h1', 'h2', 'h3'].join(delimiter);
          const body = records.map((fields) => fields.map((f) => f.raw).join(delimiter)).join(newline);
          const text = `${header}${newline}${body}${trailingNewline ? newline : ''}`;
          const expected = csvParse(text, { delimiter, relax_column_count: true, bom: true }) as string[][];
          expect(await cellsOf(text, { chunk })).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('readCsv: files that are not text or not well-formed', () => {
  test('bytes that are not UTF-8 fail with their line', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('name,city\nAnn,Paris\nZo'),
      Buffer.from([0xeb]),
      Buffer.from(',Lyon\n'),
    ]);
    const error = await failureOf(latin1);
    expect(error.message).toBe(
      'not a UTF-8 text file: line 3 has bytes that are not UTF-8 text (save the file as "CSV UTF-8")',
    );
    expect(error.row).toBeNull();
    // The same, with the bad byte arriving alone.
    expect((await failureOf(latin1, { chunk: 1 })).message).toMatch(/^not a UTF-8 text file: line 3 /);
  });

  test('a character cut off at the end of the file is not UTF-8', async () => {
    const cut = Buffer.concat([Buffer.from('a,b\n'), Buffer.from('€').subarray(0, 2)]);
    expect((await failureOf(cut)).message).toMatch(/^not a UTF-8 text file: line 2 /);
  });

  test('a NUL byte fails, even in otherwise valid text', async () => {
    const error = await failureOf(Buffer.from('a,b\n1,2\n3\u00004,5\n'));
    expect(error.message).toBe('not a UTF-8 text file: line 3 has a NUL byte');
  });

  test('binary junk named .csv fails cleanly without rows', async () => {
    const png = Buffer.from([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
    ]);
    const junk = Buffer.alloc(256 * 1024);
    for (let i = 0; i < junk.length; i += 1) junk[i] = (i * 7919 + 13) % 251;
    const rows: ImportRow[] = [];
    for (const file of [png, junk, Buffer.concat([png, junk])]) {
      await expect(
        (async () => {
          for await (const row of readCsv(chunked(file, 4096))) rows.push(row);
        })(),
      ).rejects.toThrow(/^not a UTF-8 text file/);
    }
    expect(rows).toEqual([]);
  });

  test('a quote left open fails naming the line it opened on', async () => {
    const error = await failureOf('a,b\n1,2\n3,"open\nand on\n4,5\n');
    expect(error.message).toBe('Line 3: unclosed quote');
    expect(error.row).toBe(3);
  });

  test('a quote inside an unquoted value fails with its line', async () => {
    const error = await failureOf('a,b\n"x\ny",2\n5" screen,3\n');
    expect(error.message).toBe(
      'Line 4: a quote inside an unquoted value; quote the whole value and double its quotes',
    );
    expect(error.row).toBe(3);
  });

  test('text after a closing quote fails with its line', async () => {
    expect((await failureOf('a,b\n"x"y,2\n')).message).toBe('Line 2: text after a closing quote');
    expect((await failureOf('a,b\n"x" ,2\n', { chunk: 1 })).message).toBe(
      'Line 2: text after a closing quote',
    );
  });
});

describe('readCsv: limits', () => {
  const small: ReaderLimits = { ...DEFAULT_READER_LIMITS, maxColumns: 3, maxCellLength: 5 };

  test('values and rows at the limits are read', async () => {
    expect(await cellsOf('abcde,"ab""de",x\n', { limits: small })).toEqual([['abcde', 'ab"de', 'x']]);
  });

  test('one column or one character past the limits fails with the row', async () => {
    const wide = await failureOf('a,b\n1,2,3,4\n', { limits: small });
    expect(wide.message).toBe('row 2 has 4 columns; a table holds at most 3');
    expect(wide.row).toBe(2);
    expect((await failureOf('a,b\n1,"abcdef"\n', { limits: small })).message).toBe(
      'row 2, column 2: a value of 6 characters; at most 5',
    );
    // Split across chunks, the length is still counted in full.
    expect((await failureOf('a,b\n1,abcdefgh\n', { limits: small, chunk: 2 })).message).toBe(
      'row 2, column 2: a value of 8 characters; at most 5',
    );
  });

  test('a 10 MB cell fails with its size', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024);
    expect((await failureOf(`id,blob\n1,${big}\n`)).message).toBe(
      'row 2, column 2: a value of 10,485,760 characters; at most 100,000',
    );
    expect((await failureOf(`id,blob\n1,"${big}"\n`)).message).toBe(
      'row 2, column 2: a value of 10,485,760 characters; at most 100,000',
    );
  });

  test('a row of 1,000,000 columns fails with its width', async () => {
    const wide = `a,b\n${','.repeat(999_999)}\n3,4\n`;
    const error = await failureOf(wide);
    expect(error.message).toBe('row 2 has 1,000,000 columns; a table holds at most 500');
    expect(error.row).toBe(2);
  });
});

describe('readCsv: the source stream', () => {
  /** A source of `chunks` chunks of 50 rows (about 1 KB) made on demand, counting how many were made. */
  function countingSource(chunks: number) {
    const made = { count: 0 };
    const source = Readable.from(
      (function* () {
        for (let i = 0; i < chunks; i += 1) {
          made.count += 1;
          let text = '';
          for (let j = 0; j < 50; j += 1) text += `${i * 50 + j},value ${i * 50 + j}\n`;
          yield Buffer.from(text);
        }
      })(),
    );
    return { source, made };
  }

  test('leaving the loop early destroys the source and stops reading', async () => {
    const { source, made } = countingSource(100_000);
    for await (const row of readCsv(source)) {
      expect(row.cells).toEqual(['0', 'value 0']);
      break;
    }
    expect(source.destroyed).toBe(true);
    const madeAtBreak = made.count;
    // The 64 KiB held back to tell the delimiter, and the streams' own buffers: not the file.
    expect(madeAtBreak).toBeLessThan(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(made.count).toBe(madeAtBreak);
  });

  test('a consumer that throws also destroys the source', async () => {
    const { source } = countingSource(10_000);
    await expect(
      (async () => {
        for await (const row of readCsv(source)) if (row.row === 3) throw new Error('consumer failed');
      })(),
    ).rejects.toThrow('consumer failed');
    expect(source.destroyed).toBe(true);
  });

  test('rows are read only as fast as they are taken', async () => {
    const { source, made } = countingSource(100_000);
    const rows = readCsv(source);
    for (let i = 0; i < 5000; i += 1) await rows.next();
    const madeThen = made.count;
    for (let i = 0; i < 5000; i += 1) await rows.next();
    // 100 more chunks of rows were taken; a few more than that were read ahead, not the file.
    expect(made.count - madeThen).toBeGreaterThanOrEqual(100);
    expect(made.count - madeThen).toBeLessThan(150);
    await rows.return?.();
    expect(source.destroyed).toBe(true);
  });

  test('a chunk holding the whole file is tokenized a piece at a time, not all at once', async () => {
    // The row past maxColumns is 1 MB into the one chunk: its rows are not all made before the first is handed out.
    const file = `${'a,b\n'.repeat(250_000)}${'x,'.repeat(600)}\n`;
    const rows = readCsv(Readable.from([Buffer.from(file)]));
    expect(await rows.next()).toEqual({ done: false, value: { row: 1, cells: ['a', 'b'] } });
    await expect(
      (async () => {
        for await (const _ of rows) {
          // Until the wide row.
        }
      })(),
    ).rejects.toThrow('row 250001 has 601 columns; a table holds at most 500');
  });

  test('an error of the source rejects the iteration with that error', async () => {
    const source = new Readable({ read() {} });
    source.push('a,b\n1,2\n');
    const failure = new Error('storage connection reset');
    setTimeout(() => source.destroy(failure), 5);
    const rows: ImportRow[] = [];
    await expect(
      (async () => {
        for await (const row of readCsv(source)) rows.push(row);
      })(),
    ).rejects.toBe(failure);
  });

  test('the source destroyed while a row is awaited rejects the pending read', async () => {
    const source = new Readable({ read() {} });
    const rows = readCsv(source);
    const pending = rows.next();
    source.destroy();
    await expect(pending).rejects.toThrow(/premature close/i);
  });
});

describe('readCsv: what a file may expand to', () => {
  // A CSV hands out at most one character and one cell per byte of it (plus one): the default
  // budgets (16 per byte, at least 64 Mi) never stop one. Small budgets show they are applied.
  test('past the characters or cells budget the file fails with the row', async () => {
    const csv = `${'abcdefgh,'.repeat(9)}z\n`.repeat(100);
    const characters: ReaderLimits = {
      ...DEFAULT_READER_LIMITS,
      emittedCharacters: { perFileByte: 0.5, atLeast: 100 },
    };
    const error = await failureOf(csv, { limits: characters, chunk: 1024 });
    expect(error.message).toMatch(
      /^row \d+: the file's cells hold more than [\d,]+ characters, the most a file of [\d,]+ bytes may hold \(one per 2 bytes of the file, and never fewer than 100\); split it into smaller files$/,
    );
    const cells: ReaderLimits = {
      ...DEFAULT_READER_LIMITS,
      emittedCells: { perFileByte: 0.05, atLeast: 10 },
    };
    expect((await failureOf(csv, { limits: cells, chunk: 1024 })).message).toMatch(
      /^row \d+: the file holds more than [\d,]+ cells/,
    );
    expect(await cellsOf(csv)).toHaveLength(100);
  });
});
