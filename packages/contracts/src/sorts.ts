import { z } from 'zod';
import { fieldReferenceSchema } from './common';

/** A record read's sort: fields in order, each ascending or descending (docs/filters.md). */

export const sortDirections = ['asc', 'desc'] as const;
export const sortDirectionSchema = z.enum(sortDirections, { error: 'must be "asc" or "desc"' });
export type SortDirection = z.infer<typeof sortDirectionSchema>;

export const MAX_SORT_ENTRIES = 50;

/** Accepts `field` or its deprecated alias `fieldId` (exactly one) and always yields `field`. */
export const sortSchema = z
  .strictObject({
    field: fieldReferenceSchema.optional(),
    fieldId: fieldReferenceSchema.optional(),
    direction: sortDirectionSchema.default('asc'),
  })
  .superRefine((sort, ctx) => {
    if (sort.field === undefined && sort.fieldId === undefined) {
      ctx.addIssue({ code: 'custom', message: 'a sort needs "field" (or its deprecated alias "fieldId")' });
    } else if (sort.field !== undefined && sort.fieldId !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'a sort takes "field" or its deprecated alias "fieldId", not both',
        path: ['fieldId'],
      });
    }
  })
  .transform(({ field, fieldId, direction }) => ({ field: (field ?? fieldId) as string, direction }));
export type SortInput = z.input<typeof sortSchema>;
export type Sort = z.output<typeof sortSchema>;
