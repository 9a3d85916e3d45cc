import type { RecordChange } from '@recordbase/contracts/events';

/**
 * What an update changed, for its record.updated event: per record, the ids of the fields whose
 * value differs from before and their previous values (as the API rendered them), and across the
 * records the fields any of them changed, which webhooks' field filters are matched against.
 */

export interface RecordChanges {
  /** In the order of the records of the event. */
  changes: RecordChange[];
  /** Every field some record changed, in the order first met. */
  changedFieldIds: string[];
}

interface RenderedRecord {
  id: string;
  data: Record<string, unknown>;
}

/** Values as the API renders them are JSON: equal renderings are equal values. */
const sameValue = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/** `before` and `after` are JSON arrays of the records as the API renders them (any order). */
export function recordChanges(before: string, after: string): RecordChanges {
  const previousById = new Map((JSON.parse(before) as RenderedRecord[]).map((record) => [record.id, record]));
  const all = new Set<string>();
  const changes = (JSON.parse(after) as RenderedRecord[]).map((record) => {
    const previous = previousById.get(record.id)?.data ?? {};
    const change: RecordChange = { recordId: record.id, changedFieldIds: [], previous: {} };
    for (const [fieldId, value] of Object.entries(record.data)) {
      const old = previous[fieldId] ?? null;
      if (sameValue(old, value)) continue;
      change.changedFieldIds.push(fieldId);
      change.previous[fieldId] = old;
      all.add(fieldId);
    }
    return change;
  });
  return { changes, changedFieldIds: [...all] };
}
