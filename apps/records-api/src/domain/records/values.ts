import type { FieldTemplate } from '@recordbase/contracts/fields';
import {
  type AttachmentWriteValue,
  type RecordValuesInput,
  recordValueWriteSchemaByType,
} from '@recordbase/contracts/records';
import { badRequest } from '@recordbase/server-kit/errors';
import { describeIssues } from '@recordbase/server-kit/validate';
import { type FieldMeta, findField, type TableMeta } from './table-meta';

/**
 * Turns a record body (keys are field names or ids) into values ready for the typed columns,
 * refusing anything the field cannot hold with a 400 that names the record and the key.
 * Checks that need the database (linked ids, uploaded files) come after, in references.ts.
 */

export interface PreparedRecord {
  /** Column values by field id, only for the fields the body gave. */
  columns: Map<string, unknown>;
  /** Linked record ids by link field id, only for the link fields the body gave. */
  links: Map<string, string[]>;
  /** Attachment values by field id, to be completed from the uploads table. */
  attachments: Map<string, AttachmentWriteValue[]>;
}

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date between years 1 and 9999 (PostgreSQL would refuse 2024-02-30 with a 500). */
function isRealDate(text: string): boolean {
  const match = DATE_PATTERN.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1) return false;
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** ISO 8601 with an offset, normalised to UTC with millisecond precision. */
function normaliseDateTime(text: string): string | null {
  const time = Date.parse(text);
  if (Number.isNaN(time)) return null;
  const iso = new Date(time).toISOString();
  return /^\d{4}-/.test(iso) && !iso.startsWith('0000') ? iso : null;
}

function fieldValue(field: FieldMeta, raw: unknown, where: string): unknown {
  const parsed = recordValueWriteSchemaByType[field.type].safeParse(raw);
  if (!parsed.success) {
    throw badRequest(describeIssues('body', parsed.error.issues).replace(/^body/, where));
  }
  const value = parsed.data;
  switch (field.type) {
    case 'single_line_text':
    case 'long_text':
    case 'email':
    case 'url':
    case 'phone_number': {
      const text = value as string | null;
      return text === null || text === '' ? null : text;
    }
    case 'rating': {
      const max = (field.template as FieldTemplate<'rating'>).max;
      if (value !== null && (value as number) > max)
        throw badRequest(`${where}: must be between 0 and ${max}`);
      return value;
    }
    case 'date':
      if (value !== null && !isRealDate(value as string))
        throw badRequest(`${where}: ${JSON.stringify(raw)} is not a real date`);
      return value;
    case 'datetime': {
      if (value === null) return null;
      const iso = normaliseDateTime(value as string);
      if (!iso)
        throw badRequest(`${where}: ${JSON.stringify(raw)} is not a date-time between years 1 and 9999`);
      return iso;
    }
    case 'single_select': {
      if (value === null) return null;
      const options = (field.template as FieldTemplate<'single_select'>).options;
      if (!options.some((option) => option.name === value)) {
        throw badRequest(`${where}: unknown option ${JSON.stringify(value)}`);
      }
      return value;
    }
    case 'multiple_select': {
      if (value === null) return [];
      const options = new Set(
        (field.template as FieldTemplate<'multiple_select'>).options.map((o) => o.name),
      );
      const unknown = (value as string[]).find((name) => !options.has(name));
      if (unknown !== undefined) throw badRequest(`${where}: unknown option ${JSON.stringify(unknown)}`);
      return [...new Set(value as string[])];
    }
    case 'checkbox':
      return value ?? false;
    case 'attachments':
      return value ?? [];
    case 'linked_record':
      return [...new Set(((value as string[] | null) ?? []).map((id) => id.toLowerCase()))];
    default:
      return value;
  }
}

export function prepareRecord(table: TableMeta, input: RecordValuesInput, where: string): PreparedRecord {
  const prepared: PreparedRecord = { columns: new Map(), links: new Map(), attachments: new Map() };
  const keyByField = new Map<string, string>();
  for (const [key, raw] of Object.entries(input)) {
    const field = findField(table, key);
    if (!field) throw badRequest(`${where}: unknown field ${JSON.stringify(key)}`);
    const earlier = keyByField.get(field.id);
    if (earlier !== undefined) {
      throw badRequest(
        `${where}: field ${JSON.stringify(field.name)} is given twice (as ${JSON.stringify(earlier)} and ${JSON.stringify(key)})`,
      );
    }
    keyByField.set(field.id, key);
    const value = fieldValue(field, raw, `${where}.${key}`);
    if (field.type === 'linked_record') prepared.links.set(field.id, value as string[]);
    else if (field.type === 'attachments')
      prepared.attachments.set(field.id, value as AttachmentWriteValue[]);
    else prepared.columns.set(field.id, value);
  }
  return prepared;
}
