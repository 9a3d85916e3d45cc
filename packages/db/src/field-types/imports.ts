import { type FieldType, fieldTypeContracts } from '@recordbase/contracts/fields';
import { fieldTypeModule } from './registry';

/**
 * Imported text as field values: the same checks as a written value (the type's `fromText`, its
 * write schema, its `coerce`), so an import stores nothing the API would refuse; and the type a
 * new table's column gets, inferred from every value it holds.
 */

export type CellOutcome = { ok: true; value: unknown } | { ok: false; message: string };

class CellRefused extends Error {}

/** Made once: a closure made per cell costs more than the check itself under tsx (keepNames). */
const refuseCell = (message: string): never => {
  throw new CellRefused(message);
};

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
    return { ok: true, value: module.coerce(parsed.data, { template, raw: text, fail: refuseCell }) };
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

/** The inferred types that take any text on sight; whether it is storable is left to importCell. */
const TAKEN_ON_SIGHT: ReadonlySet<FieldType> = new Set(['single_line_text', 'long_text']);
/** The inferred types whose value is the cell's text itself, as it is. */
const VALUED_AS_TEXT: ReadonlySet<FieldType> = new Set(['email', 'url', 'single_line_text', 'long_text']);

/**
 * Whether a cell's value as `converted` is its value as `final` too: the same type, or two whose
 * value is the text itself (a column read as email that turns out to be text keeps its values).
 */
export function sameImportedValue(converted: FieldType, final: FieldType): boolean {
  return converted === final || (VALUED_AS_TEXT.has(converted) && VALUED_AS_TEXT.has(final));
}

/**
 * A cell's value for the type its column's inference holds: the inference took the text with
 * importCell already, so only the conversion is left, except for the text types, which take any
 * text on sight and still check that it is storable.
 */
export function inferredCell(type: FieldType, template: unknown, text: string): CellOutcome {
  if (text === '' || TAKEN_ON_SIGHT.has(type)) return importCell(type, template, text);
  const module = fieldTypeModule(type);
  try {
    return {
      ok: true,
      value: module.coerce(module.fromText?.(text), { template, raw: text, fail: refuseCell }),
    };
  } catch (error) {
    if (error instanceof CellRefused) return { ok: false, message: `${quoted(text)}: ${error.message}` };
    throw error;
  }
}

const MAX_DECIMAL_PLACES = 10;
const MAX_REMEMBERED_VALUES = 4096;

/** The decimal places a number's text shows (none in exponent form). */
function decimalPlaces(text: string): number {
  const trimmed = text.trim();
  const point = trimmed.indexOf('.');
  if (point < 0 || /[eE]/.test(trimmed)) return 0;
  return Math.min(trimmed.length - point - 1, MAX_DECIMAL_PLACES);
}

/** An answer of a type that does not take the text. */
const REFUSED: unique symbol = Symbol('refused');

/** What importCell accepts of non-empty text, without its messages: the value, or REFUSED. */
function valueOrRefused(type: FieldType, template: unknown, text: string): unknown {
  const module = fieldTypeModule(type);
  const candidate = module.fromText?.(text);
  if (candidate === undefined) return REFUSED;
  const parsed = fieldTypeContracts[type].writeValue.safeParse(candidate);
  if (!parsed.success) return REFUSED;
  try {
    return module.coerce(parsed.data, { template, raw: text, fail: refuseCell });
  } catch (error) {
    if (error instanceof CellRefused) return REFUSED;
    throw error;
  }
}

/** A column's type, narrowed by every non-empty value it holds (a streaming pass over the file). */
export class ColumnInference {
  private possible: InferredType[] = [...INFERRED_TYPES];
  private readonly templates = new Map<InferredType, unknown>(
    INFERRED_TYPES.map((type) => [type, fieldTypeContracts[type].template.parse({})]),
  );
  private decimals = 0;
  private seen = false;
  /**
   * What each type made of a value met before (its value, or REFUSED): columns of few distinct
   * values (statuses, flags, dates) are checked once per value. Dropped when most values are new.
   */
  private readonly answers = new Map<string, Map<InferredType, unknown>>();
  private remember = true;
  private hits = 0;

  private answer(type: InferredType, text: string): unknown {
    if (type === 'long_text') return text;
    if (type === 'single_line_text') return text.includes('\n') || text.includes('\r') ? REFUSED : text;
    return valueOrRefused(type, this.templates.get(type), text);
  }

  private rememberAnswers(text: string, answers: Map<InferredType, unknown>): void {
    if (this.answers.size < MAX_REMEMBERED_VALUES) {
      this.answers.set(text, answers);
      return;
    }
    if (this.hits < MAX_REMEMBERED_VALUES) {
      this.remember = false;
      this.answers.clear();
    }
  }

  observe(text: string): void {
    if (text !== '') this.narrow(text);
  }

  /**
   * Observes a non-empty cell and gives its value as the column's type now: what
   * `inferredCell(current(), …)` gives, from the check the inference made anyway.
   */
  read(text: string): CellOutcome {
    const value = this.narrow(text);
    const type = this.possible[0] ?? 'long_text';
    if (TAKEN_ON_SIGHT.has(type)) return importCell(type, this.templates.get(type), text);
    return { ok: true, value };
  }

  /** Narrows the possible types by the text; returns its value as the first of them. */
  private narrow(text: string): unknown {
    this.seen = true;
    // The text types take any text the readers give, the single line one without line breaks;
    // whether it is storable text is checked with the cells themselves (importCell).
    const possible = this.possible;
    // Only the text types left: they take the value on sight.
    if (possible[0] === 'single_line_text' || possible[0] === 'long_text') {
      if (possible[0] === 'single_line_text' && (text.includes('\n') || text.includes('\r')))
        possible.shift();
      return text;
    }
    const remembered = this.remember ? this.answers.get(text) : undefined;
    if (remembered) this.hits += 1;
    const answers = this.remember ? (remembered ?? new Map<InferredType, unknown>()) : null;
    let kept = 0;
    let first: unknown;
    for (const type of possible) {
      let answer = answers?.get(type);
      if (answer === undefined) {
        answer = this.answer(type, text);
        answers?.set(type, answer);
      }
      if (answer !== REFUSED) {
        if (kept === 0) first = answer;
        possible[kept++] = type;
      }
    }
    possible.length = kept;
    if (answers && !remembered) this.rememberAnswers(text, answers);
    if (possible[0] === 'number') this.decimals = Math.max(this.decimals, decimalPlaces(text));
    return first;
  }

  /** The type the column would get now; null before its first value. */
  current(): InferredType | null {
    return this.seen ? (this.possible[0] ?? 'long_text') : null;
  }

  result(): { type: InferredType; template: Record<string, unknown> } {
    // A column with no value at all is text, the least surprising for what is typed into it later.
    const type = this.seen ? (this.possible[0] ?? 'long_text') : 'single_line_text';
    return { type, template: type === 'number' ? { decimalPlaces: this.decimals } : {} };
  }
}
