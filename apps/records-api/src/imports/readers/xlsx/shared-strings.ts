import type { ReaderLimits } from '../types';
import { decodeEscapes, rawTextLimit } from './cell-text';
import type { InflateBudget } from './inflate-budget';
import { readXmlPart } from './xml-part';
import type { ZipArchive } from './zip-archive';

/** A shared string too long for a cell: only its length is kept, for the message of a cell using it. */
export class TooLongString {
  constructor(readonly length: number) {}
}

export type SharedString = string | TooLongString;

/**
 * The workbook's shared strings, which cells of type "s" refer to by index. They must all be
 * held, as any cell may use any of them; the inflate budget bounds the total, and a string past
 * maxCellLength is not kept at all.
 */
export async function readSharedStrings(
  zip: ZipArchive,
  part: string,
  budget: InflateBudget,
  limits: ReaderLimits,
  maxTextLength: number,
): Promise<SharedString[]> {
  const strings: SharedString[] = [];
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
          strings.push(
            text !== null && text.length <= limits.maxCellLength
              ? text
              : new TooLongString(text?.length ?? length),
          );
          value = '';
        }
      },
    },
    maxTextLength,
  );
  return strings;
}
