import type { FieldType } from '@recordbase/contracts/fields';
import { fieldTypeModule } from '../field-types';
import type { ConversionContext } from '../field-types/types';

export type { ConversionContext } from '../field-types/types';

/**
 * SQL expressions that convert a column's values when its field changes type, used as
 * `ALTER COLUMN ... TYPE ... USING <expression>`. The source type says how its values read
 * (as text, as a number, ...), the target how it is built from those readings; a pair with no
 * way between them has no conversion and is refused. A value that cannot be converted raises
 * (cast errors, or rb_conversion_failed from the migrations), which aborts the whole change: a
 * type change never silently drops data.
 */
export function conversionExpression(
  from: FieldType,
  to: FieldType,
  column: string,
  context: ConversionContext = {},
): string | null {
  if (from === to) return column;
  return fieldTypeModule(to).convertFrom(fieldTypeModule(from).readings(column), context);
}

export function canConvert(from: FieldType, to: FieldType): boolean {
  return conversionExpression(from, to, '"c"') !== null;
}
