import { dateFormatOf } from './date-formats';
import type { InflateBudget } from './inflate-budget';
import { readXmlPart } from './xml-part';
import type { ZipArchive } from './zip-archive';

/**
 * For each cell style (a cell's `s` attribute indexes <cellXfs>), whether its number format shows
 * a date, and a time with it: that is all that tells a date from a number in a sheet, which
 * stores both as numbers.
 */
export async function readDateStyles(
  zip: ZipArchive,
  part: string,
  budget: InflateBudget,
  maxTextLength: number,
): Promise<('date' | 'datetime' | null)[]> {
  const formatCodes = new Map<number, string>();
  const styleFormats: number[] = [];
  let inCellFormats = false;
  await readXmlPart(
    part,
    zip.read(part, budget),
    {
      open(name, attributes) {
        if (name === 'numFmt') formatCodes.set(Number(attributes.numFmtId), attributes.formatCode ?? '');
        else if (name === 'cellXfs') inCellFormats = true;
        else if (name === 'xf' && inCellFormats) styleFormats.push(Number(attributes.numFmtId ?? 0));
      },
      text() {},
      close(name) {
        if (name === 'cellXfs') inCellFormats = false;
      },
    },
    maxTextLength,
  );
  return styleFormats.map((id) => dateFormatOf(id, formatCodes.get(id)));
}
