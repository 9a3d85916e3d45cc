import type { Readable } from 'node:stream';
import { EmittedBudget } from '../file-budget';
import { ImportFileError } from '../import-file-error';
import { rowsOfBatches } from '../row-iterator';
import { DEFAULT_READER_LIMITS, type ImportRow, type ReaderLimits } from '../types';
import { detectDelimiter } from './delimiter';
import { type DecodedText, StrictUtf8Decoder } from './strict-utf8';
import { CsvTokenizer } from './tokenizer';

/** Text held back to tell the delimiter: enough for the first lines of any sane file. */
const SAMPLE_LENGTH = 64 * 1024;
const BOM = 0xfeff;
/** Text tokenized at a time, whatever the size of the source's chunks. */
const PIECE_LENGTH = 64 * 1024;

/**
 * The rows of a CSV file as it streams in: UTF-8 with or without BOM, delimiter `,` `;` or tab
 * told from the first lines. A chunk is read from `source` only when the rows of the last one have
 * been taken, so backpressure reaches storage. Leaving the loop early (break, throw) or an error
 * destroys `source`; destroying `source` rejects the pending read.
 */
export function readCsv(
  source: Readable,
  limits: ReaderLimits = DEFAULT_READER_LIMITS,
): AsyncIterableIterator<ImportRow> {
  return rowsOfBatches(csvBatches(source, limits));
}

/** The rows of each chunk of `source`. */
async function* csvBatches(
  source: Readable,
  limits: ReaderLimits,
): AsyncGenerator<ImportRow[], void, undefined> {
  const decoder = new StrictUtf8Decoder();
  const budget = new EmittedBudget(limits);
  const text = new DelimitedText(limits, budget);
  try {
    for await (const chunk of source) {
      const bytes = asBuffer(chunk);
      budget.read(bytes.length);
      const decoded = decoder.decode(bytes);
      // A big chunk goes in pieces: fewer rows alive at once stay young for the garbage collector.
      for (let at = 0; at < decoded.text.length || at === 0; at += PIECE_LENGTH) {
        const rows: ImportRow[] = [];
        text.push(decoded.text.slice(at, at + PIECE_LENGTH), false, rows);
        yield rows;
      }
      if (decoded.problem !== null) {
        text.push('', true, []);
        throw notText(decoded.problem, text.line);
      }
    }
    const rows: ImportRow[] = [];
    const last = decoder.end();
    text.push('', true, rows);
    if (last.problem !== null) throw notText(last.problem, text.line);
    text.end(rows);
    yield rows;
  } finally {
    source.destroy();
  }
}

/** Holds back the start of the file until the delimiter can be told, then tokenizes as text comes. */
class DelimitedText {
  private sample = '';
  private tokenizer: CsvTokenizer | null = null;

  constructor(
    private readonly limits: ReaderLimits,
    private readonly budget: EmittedBudget,
  ) {}

  get line(): number {
    return this.tokenizer?.line ?? 1;
  }

  /** `final`: no more text follows (the end, or bytes that are not text). */
  push(text: string, final: boolean, out: ImportRow[]): void {
    if (this.tokenizer !== null) {
      this.tokenizer.push(text, out);
      return;
    }
    this.sample += text;
    if (!final && this.sample.length < SAMPLE_LENGTH) return;
    const sample = this.sample.charCodeAt(0) === BOM ? this.sample.slice(1) : this.sample;
    this.sample = '';
    this.tokenizer = new CsvTokenizer(detectDelimiter(sample, final), this.limits, this.budget);
    this.tokenizer.push(sample, out);
  }

  end(out: ImportRow[]): void {
    this.tokenizer?.end(out);
  }
}

function notText(problem: NonNullable<DecodedText['problem']>, line: number): ImportFileError {
  return new ImportFileError(
    problem === 'nul'
      ? `not a UTF-8 text file: line ${line} has a NUL byte`
      : `not a UTF-8 text file: line ${line} has bytes that are not UTF-8 text (save the file as "CSV UTF-8")`,
    null,
  );
}

function asBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError('readCsv: the source must yield bytes');
}
