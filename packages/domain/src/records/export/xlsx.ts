import type { CellKind } from './cells';
import { zipArchive } from './zip';

/**
 * The XLSX of an export: a workbook of one sheet named after the table, a header row of the field
 * names, then one row per record with typed cells: numbers as numbers, checkboxes as booleans,
 * dates and times as date cells (serial days, with a date format), everything else as inline
 * strings (no shared-strings table, which would have to be held whole). The sheet's XML is written
 * batch by batch into the zip (zip.ts).
 */

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELATIONSHIPS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const OFFICE_RELATIONSHIPS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

const CONTENT_TYPES = `${XML_DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`;

const PACKAGE_RELS = `${XML_DECLARATION}<Relationships xmlns="${RELATIONSHIPS}"><Relationship Id="rId1" Type="${OFFICE_RELATIONSHIPS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`;

const WORKBOOK_RELS = `${XML_DECLARATION}<Relationships xmlns="${RELATIONSHIPS}"><Relationship Id="rId1" Type="${OFFICE_RELATIONSHIPS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${OFFICE_RELATIONSHIPS}/styles" Target="styles.xml"/></Relationships>`;

/** Cell styles by index: 0 plain, 1 a date, 2 a date and time, 3 the header's bold. */
const DATE_STYLE = 1;
const DATETIME_STYLE = 2;
const HEADER_STYLE = 3;
const STYLES = `${XML_DECLARATION}<styleSheet xmlns="${MAIN}"><numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/><numFmt numFmtId="165" formatCode="yyyy-mm-dd hh:mm:ss.000"/></numFmts><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`;

/** Characters XML must escape, and those it cannot hold at all (C0 controls but tab and line breaks). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the controls XML cannot hold are the point.
const XML_SPECIAL = /[&<>"\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the controls XML cannot hold are the point.
const XML_SPECIAL_ALL = /[&<>"\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

/** Text as XML character data or an attribute value; characters XML cannot hold become U+FFFD. */
export function xmlText(text: string): string {
  if (!XML_SPECIAL.test(text)) return text;
  return text.replace(XML_SPECIAL_ALL, (char) => ESCAPES[char] ?? '\uFFFD');
}

const SHEET_NAME_MAX = 31;

/** `text` without apostrophes at either end; by index, since a pattern anchored at the end backtracks. */
function trimApostrophes(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text[start] === "'") start += 1;
  while (end > start && text[end - 1] === "'") end -= 1;
  return text.slice(start, end);
}

/**
 * A sheet name from the table's: at most 31 characters, none of []:*?/\, not starting or ending
 * with an apostrophe, not empty, and not "History" (which Excel keeps for itself).
 */
export function sheetNameOf(tableName: string): string {
  let name = trimApostrophes(tableName.replace(/[[\]:*?/\\]/g, '_'));
  // Cut by code point, so no surrogate pair is split.
  name = trimApostrophes(
    Array.from(name).reduce(
      (kept, char) => (kept.length + char.length <= SHEET_NAME_MAX ? kept + char : kept),
      '',
    ),
  );
  if (name.trim() === '') return 'Sheet1';
  return name.toLowerCase() === 'history' ? `${name}_` : name;
}

/** The column letters of 0-based index `i`: A, B, … Z, AA, … */
function columnName(i: number): string {
  let name = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

const MS_PER_DAY = 86_400_000;
/** Serial day 25569 of Excel's 1900 date system is 1970-01-01. */
const UNIX_EPOCH_SERIAL = 25569;

/**
 * Excel's serial day of a UTC instant, with its fraction of a day. Excel counts a 29 February 1900
 * that never was: serials before 1 March 1900 are one less than the count of days; before 1900
 * there are none (null: the value is written as text).
 */
function serialOf(ms: number): number | null {
  if (!Number.isFinite(ms)) return null;
  const serial = ms / MS_PER_DAY + UNIX_EPOCH_SERIAL;
  if (serial < 2) return null;
  return serial < 61 ? serial - 1 : serial;
}

/**
 * What OOXML escapes as _xHHHH_ in cell text: the characters XML cannot hold (C0 controls but tab
 * and line feed, and U+FFFE, U+FFFF), a carriage return (XML parsers read CR LF and a lone CR as
 * LF), and the underscore of text that reads as an escape already (written _x005F_), so a reader
 * that decodes the escapes, as Excel and the import do, gets the text back as it was.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the controls XML cannot hold are the point.
const OOXML_ESCAPED = /_(?=x[0-9A-Fa-f]{4}_)|[\u0000-\u0008\u000B-\u001F\uFFFE\uFFFF]/g;

/** Text as the character data of a cell (an inline string): OOXML's escapes, then XML's. */
export function cellText(text: string): string {
  const escaped = text.replace(
    OOXML_ESCAPED,
    (char) => `_x${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`,
  );
  return xmlText(escaped);
}

const inlineString = (ref: string, text: string, style = '') =>
  `<c r="${ref}"${style} t="inlineStr"><is><t xml:space="preserve">${cellText(text)}</t></is></c>`;

/** One cell of a row from its text (as cells.ts renders it); empty cells are left out. */
function cellXml(ref: string, kind: CellKind, text: unknown): string {
  if (text === null || text === undefined || text === '') return '';
  const value = String(text);
  switch (kind) {
    case 'number':
      return Number.isFinite(Number(value)) ? `<c r="${ref}"><v>${value}</v></c>` : inlineString(ref, value);
    case 'boolean':
      return `<c r="${ref}" t="b"><v>${value === 'true' ? 1 : 0}</v></c>`;
    case 'date':
    case 'datetime': {
      // A date is midnight UTC of its day; a date-time is ISO 8601 in UTC.
      const serial = serialOf(Date.parse(kind === 'date' ? `${value}T00:00:00Z` : value));
      if (serial === null) return inlineString(ref, value);
      return `<c r="${ref}" s="${kind === 'date' ? DATE_STYLE : DATETIME_STYLE}"><v>${serial}</v></c>`;
    }
    case 'text':
      return inlineString(ref, value);
  }
}

async function* sheetXml(
  fields: readonly { name: string }[],
  kinds: readonly CellKind[],
  batches: AsyncIterable<unknown[][]>,
): AsyncGenerator<string, void, undefined> {
  const columns = fields.map((_, i) => columnName(i));
  const header = fields.map((field, i) => inlineString(`${columns[i]}1`, field.name, ` s="${HEADER_STYLE}"`));
  // The header row stays in view as the sheet scrolls.
  yield `${XML_DECLARATION}<worksheet xmlns="${MAIN}"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetData><row r="1">${header.join('')}</row>`;
  let row = 1;
  for await (const batch of batches) {
    const lines: string[] = [];
    for (const cells of batch) {
      row += 1;
      let line = `<row r="${row}">`;
      const start = line.length;
      for (let i = 0; i < columns.length; i += 1) line += cellXml(`${columns[i]}${row}`, kinds[i]!, cells[i]);
      // A record with every cell empty is still a row: an empty text cell keeps it from readers
      // (the import's among them) that skip rows without values.
      if (line.length === start && columns.length > 0) line += inlineString(`A${row}`, '');
      lines.push(`${line}</row>`);
    }
    yield lines.join('');
  }
  yield '</sheetData></worksheet>';
}

/** The workbook, as the bytes of its zip, the sheet's rows taken batch by batch from `batches`. */
export function xlsxFile(
  tableName: string,
  fields: readonly { name: string }[],
  kinds: readonly CellKind[],
  batches: AsyncIterable<unknown[][]>,
): AsyncGenerator<Uint8Array, void, undefined> {
  const workbook = `${XML_DECLARATION}<workbook xmlns="${MAIN}" xmlns:r="${OFFICE_RELATIONSHIPS}"><sheets><sheet name="${xmlText(sheetNameOf(tableName))}" sheetId="1" r:id="rId1"/></sheets></workbook>`;
  return zipArchive([
    { name: '[Content_Types].xml', data: CONTENT_TYPES },
    { name: '_rels/.rels', data: PACKAGE_RELS },
    { name: 'xl/workbook.xml', data: workbook },
    { name: 'xl/_rels/workbook.xml.rels', data: WORKBOOK_RELS },
    { name: 'xl/styles.xml', data: STYLES },
    { name: 'xl/worksheets/sheet1.xml', data: sheetXml(fields, kinds, batches) },
  ]);
}
