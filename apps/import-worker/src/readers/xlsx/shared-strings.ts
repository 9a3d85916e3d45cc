import { SharedStringsBudget } from '../file-budget';
import type { ReaderLimits } from '../types';
import { decodeEscapes, rawTextLimit } from './cell-text';
import type { InflateBudget } from './inflate-budget';
import { readXmlPart } from './xml-part';
import type { ZipArchive } from './zip-archive';

/** A shared string too long for a cell: only its length is kept, for the message of a cell using it. */
export class TooLongString {
  constructor(readonly length: number) {}
}

/** Bytes per block of text; a longer string gets a block of its own size. */
const BLOCK_BYTES = 1 << 20;

/**
 * The shared strings, packed: their UTF-8 in blocks of a megabyte, where each is and how long in
 * typed arrays, a string made only when a cell uses it. A sheet of a million distinct strings
 * holds them in about half the memory of a million JavaScript strings, and the garbage collector
 * has nothing to walk.
 */
export class SharedStrings {
  private readonly blocks: Buffer[] = [];
  private used = 0;
  private blockOf = new Uint32Array(1024);
  private offsetOf = new Uint32Array(1024);
  private lengthOf = new Uint32Array(1024);
  private count = 0;
  private readonly tooLong = new Map<number, number>();

  /** `maxCount`: the most strings that will be added, so the index arrays never grow past it. */
  constructor(private readonly maxCount = Number.MAX_SAFE_INTEGER) {}

  get size(): number {
    return this.count;
  }

  add(text: string | TooLongString): void {
    if (this.count === this.lengthOf.length) this.grow();
    if (text instanceof TooLongString) {
      this.tooLong.set(this.count, text.length);
      this.count += 1;
      return;
    }
    const bytes = Buffer.byteLength(text);
    let block = this.blocks[this.blocks.length - 1];
    if (block === undefined || this.used + bytes > block.length) {
      block = Buffer.allocUnsafe(Math.max(BLOCK_BYTES, bytes));
      this.blocks.push(block);
      this.used = 0;
    }
    block.write(text, this.used, 'utf8');
    this.blockOf[this.count] = this.blocks.length - 1;
    this.offsetOf[this.count] = this.used;
    this.lengthOf[this.count] = bytes;
    this.used += bytes;
    this.count += 1;
  }

  /** The string at `index`; undefined when there is none. */
  get(index: number): string | TooLongString | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.count) return undefined;
    const long = this.tooLong.get(index);
    if (long !== undefined) return new TooLongString(long);
    const block = this.blocks[this.blockOf[index] as number] as Buffer;
    const offset = this.offsetOf[index] as number;
    return block.toString('utf8', offset, offset + (this.lengthOf[index] as number));
  }

  private grow(): void {
    const length = Math.max(this.count + 1, Math.min(this.lengthOf.length * 2, this.maxCount));
    const doubled = (array: Uint32Array) => {
      const bigger = new Uint32Array(length);
      bigger.set(array);
      return bigger;
    };
    this.blockOf = doubled(this.blockOf);
    this.offsetOf = doubled(this.offsetOf);
    this.lengthOf = doubled(this.lengthOf);
  }
}

/**
 * The workbook's shared strings, which cells of type "s" refer to by index. They must all be
 * held, as any cell may use any of them: their count and characters are budgeted against the
 * file's size (`fileBytes`), as 200 million empty strings are a 1 MB zip that the inflate budget
 * lets through, and a string past maxCellLength is not kept at all.
 */
export async function readSharedStrings(
  zip: ZipArchive,
  part: string,
  budget: InflateBudget,
  limits: ReaderLimits,
  maxTextLength: number,
  fileBytes: number,
): Promise<SharedStrings> {
  const held = new SharedStringsBudget(limits, fileBytes);
  const strings = new SharedStrings(held.maxCount);
  const rawLimit = rawTextLimit(limits);
  let value = '';
  let length = 0;
  let inPhonetic = false;
  let capturing = false;
  await readXmlPart(
    part,
    zip.read(part, budget),
    {
      open(name) {
        if (name === 'si') {
          value = '';
          length = 0;
        } else if (name === 't') capturing = !inPhonetic;
        else if (name === 'rPh') inPhonetic = true;
      },
      text(text) {
        if (!capturing) return;
        length += text.length;
        if (length <= rawLimit) value += text;
      },
      close(name) {
        if (name === 't') capturing = false;
        else if (name === 'rPh') inPhonetic = false;
        else if (name === 'si') {
          const text = length <= rawLimit ? decodeEscapes(value) : null;
          const kept = text !== null && text.length <= limits.maxCellLength;
          held.add(kept ? text.length : 0);
          strings.add(kept ? text : new TooLongString(text?.length ?? length));
          value = '';
        }
      },
    },
    maxTextLength,
  );
  return strings;
}
