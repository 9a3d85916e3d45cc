import type { FilterOperator } from '@recordbase/contracts/filters';

/** Small helpers of the oracles (FieldTypeModule.oracle), which state each rule plainly in memory. */

export const lower = (text: string) => text.toLowerCase();

export function asStringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function asNumberOrNull(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}

export function asArray<T = unknown>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

/** The oracle expects filters the compiler accepted; anything else is a plain error. */
export function notSupported(operator: FilterOperator, what: string): Error {
  return new Error(`operator ${operator} is not supported for ${what}`);
}
