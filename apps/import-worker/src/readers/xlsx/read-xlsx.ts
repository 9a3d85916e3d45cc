import type { Readable } from 'node:stream';
import { EmittedBudget } from '../file-budget';
import { ImportFileError } from '../import-file-error';
import { rowsOfBatches } from '../row-iterator';
import { DEFAULT_READER_LIMITS, type ImportRow, type ReaderLimits } from '../types';
import { InflateBudget } from './inflate-budget';
import { readSharedStrings, SharedStrings } from './shared-strings';
import { type SpooledFile, spoolToTempFile } from './spool';
import { readDateStyles } from './styles';
import { chooseSheet, readWorkbookParts } from './workbook';
import { WorksheetRows } from './worksheet';
import { parseXmlPart } from './xml-part';
import { ZipArchive } from './zip-archive';

export interface XlsxOptions {
  /** The worksheet to read, by name; the first visible worksheet by default. */
  sheet?: string;
}

/** What saxes may gather for one token; above any value a cell may hold. */
const MIN_XML_TEXT = 32 * 1024 * 1024;
const ZIP_LOCAL_FILE = 0x04034b50;
const ZIP_EMPTY = 0x06054b50;
/** Compound File Binary: an Excel 97–2003 .xls, or an .xlsx encrypted with a password. */
const COMPOUND_FILE = 0xd0cf11e0;

/**
 * The rows of one worksheet of an .xlsx workbook. The upload is first copied to a temporary file
 * (see spool.ts), then the parts are read from it through the zip's directory: workbook and
 * relationships, styles (to tell dates), shared strings, then the sheet, row by row as the
 * consumer asks for them. Everything inflated counts against limits.maxInflatedBytes; the shared
 * strings held and the cells handed out count against budgets that grow with the file's size.
 *
 * Leaving the loop early, an error, or the end closes the zip and deletes the temporary file;
 * destroying `source` while it is being copied rejects the pending read.
 */
export function readXlsx(
  source: Readable,
  options: XlsxOptions = {},
  limits: ReaderLimits = DEFAULT_READER_LIMITS,
): AsyncIterableIterator<ImportRow> {
  return rowsOfBatches(xlsxBatches(source, options, limits));
}

async function* xlsxBatches(
  source: Readable,
  options: XlsxOptions,
  limits: ReaderLimits,
): AsyncGenerator<ImportRow[], void, undefined> {
  let file: SpooledFile | null = null;
  let zip: ZipArchive | null = null;
  try {
    file = await spoolToTempFile(source, { maxBytes: limits.maxInflatedBytes, headLength: 4, inspectHead });
    zip = await ZipArchive.open(file.path);
    const budget = new InflateBudget(limits.maxInflatedBytes);
    const maxText = Math.max(MIN_XML_TEXT, limits.maxCellLength * 8);
    const workbook = await readWorkbookParts(zip, budget, maxText);
    const sheet = chooseSheet(zip, workbook.sheets, options.sheet);
    const dateStyles =
      workbook.styles === null ? [] : await readDateStyles(zip, workbook.styles, budget, maxText);
    const sharedStrings =
      workbook.sharedStrings === null
        ? new SharedStrings()
        : await readSharedStrings(zip, workbook.sharedStrings, budget, limits, maxText, file.bytes);
    const emitted = new EmittedBudget(limits);
    emitted.read(file.bytes);
    const worksheet = new WorksheetRows({
      sharedStrings,
      dateStyles,
      date1904: workbook.date1904,
      limits,
      emitted,
    });
    for await (const _ of parseXmlPart(sheet.part, zip.read(sheet.part, budget), worksheet, maxText)) {
      const rows = worksheet.take();
      if (rows.length > 0) yield rows;
    }
    const rows = worksheet.take();
    if (rows.length > 0) yield rows;
  } finally {
    source.destroy();
    zip?.close();
    await file?.dispose();
  }
}

/** Fails fast on what is not a zip, before the whole file is copied. */
function inspectHead(head: Buffer): void {
  const signature = head.length >= 4 ? head.readUInt32LE(0) : 0;
  if (signature === ZIP_LOCAL_FILE || signature === ZIP_EMPTY) return;
  if (head.length >= 4 && head.readUInt32BE(0) === COMPOUND_FILE) {
    throw new ImportFileError(
      'not an Excel workbook in .xlsx format (an .xls file, or one protected by a password: save it as .xlsx without one)',
      null,
    );
  }
  throw new ImportFileError('not an Excel workbook', null);
}
