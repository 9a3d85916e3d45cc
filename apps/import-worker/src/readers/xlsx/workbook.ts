import { ImportFileError } from '../import-file-error';
import { damaged, notAWorkbook, shown } from './errors';
import type { InflateBudget } from './inflate-budget';
import { isType, readRelationships } from './relationships';
import { readXmlPart } from './xml-part';
import type { ZipArchive } from './zip-archive';

export interface SheetEntry {
  name: string;
  /** The part holding the sheet, when its relationship is found. */
  part: string | null;
  /** 'worksheet', 'chartsheet', 'dialogsheet'…: the last segment of its relationship type. */
  kind: string;
  hidden: boolean;
}

/** What a workbook's main part and its relationships say: the sheets and the parts they need. */
export interface WorkbookParts {
  sheets: SheetEntry[];
  /** Dates count from 1904-01-01 (old Mac Excel) rather than 1900-01-00. */
  date1904: boolean;
  sharedStrings: string | null;
  styles: string | null;
}

const DEFAULT_WORKBOOK_PART = 'xl/workbook.xml';
const NAMES_LISTED = 50;

export async function readWorkbookParts(
  zip: ZipArchive,
  budget: InflateBudget,
  maxTextLength: number,
): Promise<WorkbookParts> {
  const packageRelationships = await readRelationships(zip, '', budget, maxTextLength);
  const workbookPart =
    packageRelationships.find((relationship) => isType(relationship, 'officeDocument'))?.target ??
    DEFAULT_WORKBOOK_PART;
  if (!zip.has(workbookPart)) throw notAWorkbook(`it has no ${shown(workbookPart)}`);
  const relationships = await readRelationships(zip, workbookPart, budget, maxTextLength);
  const byId = new Map(relationships.map((relationship) => [relationship.id, relationship]));
  const present = (name: string) => {
    const target = relationships.find((relationship) => isType(relationship, name))?.target;
    return target !== undefined && zip.has(target) ? target : null;
  };

  const sheets: SheetEntry[] = [];
  let date1904 = false;
  let root: string | null = null;
  await readXmlPart(
    workbookPart,
    zip.read(workbookPart, budget),
    {
      open(name, attributes) {
        if (root === null) {
          root = name;
          // A .docx or .pptx has an officeDocument too.
          if (name !== 'workbook')
            throw notAWorkbook(`its main part is a ${shown(name, 40)}, not a workbook`);
        }
        if (name === 'workbookPr') date1904 = isTrue(attributes.date1904);
        else if (name === 'sheet') {
          const relationship = byId.get(relationshipId(attributes) ?? '');
          sheets.push({
            name: attributes.name ?? '',
            part: relationship?.target ?? null,
            kind: relationship?.type.slice(relationship.type.lastIndexOf('/') + 1) ?? 'worksheet',
            hidden: attributes.state === 'hidden' || attributes.state === 'veryHidden',
          });
        }
      },
      text() {},
      close() {},
    },
    maxTextLength,
  );
  return { sheets, date1904, sharedStrings: present('sharedStrings'), styles: present('styles') };
}

/**
 * The sheet to import: the one named (exactly, else ignoring case as Excel does), or the first
 * visible worksheet. A missing name fails with the names there are.
 */
export function chooseSheet(
  zip: ZipArchive,
  sheets: readonly SheetEntry[],
  wanted?: string,
): SheetEntry & { part: string } {
  let sheet: SheetEntry | undefined;
  if (wanted === undefined) {
    const worksheets = sheets.filter((entry) => entry.kind === 'worksheet');
    sheet = worksheets.find((entry) => !entry.hidden) ?? worksheets[0];
    if (sheet === undefined) throw new ImportFileError('the workbook has no worksheets', null);
  } else {
    const folded = wanted.toLowerCase();
    sheet =
      sheets.find((entry) => entry.name === wanted) ??
      sheets.find((entry) => entry.name.toLowerCase() === folded);
    if (sheet === undefined) {
      throw new ImportFileError(
        `sheet ${JSON.stringify(wanted)} not found; the workbook has ${sheetNames(sheets)}`,
        null,
      );
    }
    if (sheet.kind !== 'worksheet') {
      throw new ImportFileError(
        `sheet ${JSON.stringify(shown(sheet.name))} is a ${shown(sheet.kind, 40)}, not a worksheet`,
        null,
      );
    }
  }
  const part = sheet.part;
  if (part === null || !zip.has(part))
    throw damaged(`the part of sheet ${JSON.stringify(shown(sheet.name))} is missing`);
  return { ...sheet, part };
}

function sheetNames(sheets: readonly SheetEntry[]): string {
  if (sheets.length === 0) return 'no sheets';
  const listed = sheets.slice(0, NAMES_LISTED).map((entry) => JSON.stringify(shown(entry.name)));
  const more = sheets.length - listed.length;
  return more > 0 ? `${listed.join(', ')} and ${more} more` : listed.join(', ');
}

/** The r:id of a <sheet>; the relationships namespace prefix is not always 'r'. */
function relationshipId(attributes: Readonly<Record<string, string>>): string | undefined {
  for (const [name, value] of Object.entries(attributes)) if (name.endsWith(':id')) return value;
  return undefined;
}

function isTrue(value: string | undefined): boolean {
  return value === '1' || value === 'true';
}
