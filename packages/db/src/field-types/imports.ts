import { type FieldType, fieldTypeContracts } from '@recordbase/contracts/fields';
import { fieldTypeModule } from './index';

/**
 * Imported text as field values: the same checks as a written value (the type's `fromText`, its
 * write schema, its `coerce`), so an import stores nothing the API would refuse; and the type a
 * new table's column gets, inferred from every value it holds.
 */

export type CellOutcome = { ok: true; value: unknown } | { ok: false; message: string };

class CellRefused extends Error {}

const MAX_QUOTED = 60;
const quoted = (text: string) =>
  JSON.stringify(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text);

/** A cell's text (empty: no value) as the value a field of `type` with `template` stores. */
export function importCell(type: FieldType, template: unknown, text: string): CellOutcome {
  const module = fieldTypeModule(type);
  const writeValue = fieldTypeContracts[type].writeValue;
  const candidate = text === '' ? null : module.fromText?.(text);
  // The write schema words why text that is not a value of the type is refused.
  const parsed = writeValue.safeParse(candidate === undefined ? text : candidate);
  if (!parsed.success || candidate === undefined) {
    const reason = parsed.success ? 'is not a value of this field' : parsed.error.issues[0]?.message;
    return { ok: false, message: `${quoted(text)} ${reason ?? 'is refused'}` };
  }
  try {
    const fail = (message: string): never => {
      throw new CellRefused(message);
    };
    return { ok: true, value: module.coerce(parsed.data, { template, raw: text, fail }) };
  } catch (error) {
    if (error instanceof CellRefused) return { ok: false, message: `${quoted(text)}: ${error.message}` };
    throw error;
  }
}

/** What a new table's columns may become, most specific first: the first that takes every value wins. */
export const INFERRED_TYPES = [
  'number',
  'checkbox',
  'date',
  'datetime',
  'email',
  'url',
  'single_line_text',
  'long_text',
] as const satisfies readonly FieldType[];
export type InferredType = (typeof INFERRED_TYPES)[number];

const MAX_DECIMAL_PLACES = 10;

/** The decimal places a number's text shows (none in exponent form). */
function decimalPlaces(text: string): number {
  const trimmed = text.trim();
  const point = trimmed.indexOf('.');
  if (point < 0 || /[eE]/.test(trimmed)) return 0;
  return Math.min(trimmed.length - point - 1, MAX_DECIMAL_PLACES);
}

/** A column's type, narrowed by every non-empty value it holds (a streaming pass over the file). */
export class ColumnInference {
  private possible: InferredType[] = [...INFERRED_TYPES];
  private readonly templates = new Map<InferredType, unknown>(
    INFERRED_TYPES.map((type) => [type, fieldTypeContracts[type].template.parse({})]),
  );
  private decimals = 0;
  private seen = false;

  observe(text: string): void {
    if (text === '') return;
    this.seen = true;
    // The text types take any text the readers give, the single line one without line breaks;
    // whether it is storable text is checked with the cells themselves (importCell). The others
    // are asked cheaply first (fromText), in full only when they may take the value.
    const possible = this.possible;
    let kept = 0;
    for (const type of possible) {
      const takes =
        type === 'long_text' ||
        (type === 'single_line_text'
          ? !text.includes('\n') && !text.includes('\r')
          : fieldTypeModule(type).fromText?.(text) !== undefined &&
            importCell(type, this.templates.get(type), text).ok);
      if (takes) possible[kept++] = type;
    }
    possible.length = kept;
    if (possible[0] === 'number') this.decimals = Math.max(this.decimals, decimalPlaces(text));
  }

  result(): { type: InferredType; template: Record<string, unknown> } {
    // A column with no value at all is text, the least surprising for what is typed into it later.
    const type = this.seen ? (this.possible[0] ?? 'long_text') : 'single_line_text';
    return { type, template: type === 'number' ? { decimalPlaces: this.decimals } : {} };
  }
}
