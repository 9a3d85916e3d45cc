import { posix } from 'node:path';
import type { InflateBudget } from './inflate-budget';
import { readXmlPart } from './xml-part';
import type { ZipArchive } from './zip-archive';

/** A link from one part of the package to another (OPC), its target resolved to a part name. */
export interface Relationship {
  id: string;
  /** The relationship type URI; its last segment says what the target is (worksheet, styles…). */
  type: string;
  target: string;
}

/** Whether a relationship's type ends with `/name` (transitional and strict OOXML differ before it). */
export function isType(relationship: Relationship, name: string): boolean {
  return relationship.type.endsWith(`/${name}`);
}

/** The relationships of `part` ('' for the package itself), or none when it has no .rels part. */
export async function readRelationships(
  zip: ZipArchive,
  part: string,
  budget: InflateBudget,
  maxTextLength: number,
): Promise<Relationship[]> {
  const relationshipsPart = relationshipsPartOf(part);
  if (!zip.has(relationshipsPart)) return [];
  const found: Relationship[] = [];
  await readXmlPart(
    relationshipsPart,
    zip.read(relationshipsPart, budget),
    {
      open(name, attributes) {
        if (name !== 'Relationship' || attributes.TargetMode === 'External') return;
        const target = resolveTarget(part, attributes.Target ?? '');
        if (attributes.Id !== undefined && target !== null) {
          found.push({ id: attributes.Id, type: attributes.Type ?? '', target });
        }
      },
      text() {},
      close() {},
    },
    maxTextLength,
  );
  return found;
}

/** xl/workbook.xml → xl/_rels/workbook.xml.rels; the package ('') → _rels/.rels. */
export function relationshipsPartOf(part: string): string {
  const directory = posix.dirname(part);
  const name = `_rels/${posix.basename(part)}.rels`;
  return directory === '.' ? name : `${directory}/${name}`;
}

/** A target relative to the part it is from (or absolute from the package root) as a part name. */
export function resolveTarget(sourcePart: string, target: string): string | null {
  let path: string;
  try {
    path = decodeURIComponent(target);
  } catch {
    return null;
  }
  const joined = path.startsWith('/') ? path.slice(1) : posix.join(posix.dirname(sourcePart), path);
  const part = posix.normalize(joined);
  return part === '..' || part.startsWith('../') || part === '.' ? null : part;
}
