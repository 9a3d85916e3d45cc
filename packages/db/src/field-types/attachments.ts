import { asArray, notSupported } from './oracle';
import type { FieldTypeModule } from './types';

/**
 * Files, as a jsonb array never null ('[]' when empty). Written values go to the records
 * service's attachments, to be completed from the uploads table before they are stored.
 */
export const attachments: FieldTypeModule<'attachments'> = {
  type: 'attachments',
  formula: 'array',
  column: { sqlType: 'jsonb', notNullDefault: "'[]'::jsonb" },
  primary: false,
  prepared: 'attachments',
  coerce: (value) => value ?? [],
  json: ({ column }) => `${column}::text`,
  filters: {
    is_empty: ({ column }) => `jsonb_array_length(${column}) = 0`,
    is_not_empty: ({ column }) => `jsonb_array_length(${column}) > 0`,
  },
  // By how many there are.
  sort: ({ column }) => ({ expression: `jsonb_array_length(${column})`, kind: 'integer' }),
  readings: () => ({}),
  convertFrom: () => null,
  oracle: {
    matches: (value, operator) => {
      const files = asArray(value);
      if (operator === 'is_empty') return files.length === 0;
      if (operator === 'is_not_empty') return files.length > 0;
      throw notSupported(operator, 'attachments');
    },
    sortKey: (value) => asArray(value).length,
  },
};
