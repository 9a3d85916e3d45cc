/**
 * How computed fields depend on each other: a formula reads fields (inferFormula's `fieldIds`),
 * some of them computed in turn. A change must not make a field read itself through any chain,
 * nor take away or retype a field that a computed field still reads; these answer both, from the
 * table's direct reads alone, in time linear in the fields and reads.
 */

/** The fields each computed field reads directly, by field id; a plain field reads none. */
export type FieldReads = ReadonlyMap<string, readonly string[]>;

/**
 * The chain by which `fieldId`, reading `reads`, would read itself (`[fieldId, …, fieldId]`), or
 * null when it would not. `others` are the table's other fields' reads, `fieldId`'s own left out.
 */
export function selfReadingChain(
  fieldId: string,
  reads: readonly string[],
  others: FieldReads,
): string[] | null {
  // A depth-first walk from what the field reads, remembering how each field was reached.
  const cameFrom = new Map<string, string>();
  const stack: string[] = [];
  for (const id of reads) {
    if (!cameFrom.has(id)) {
      cameFrom.set(id, fieldId);
      stack.push(id);
    }
  }
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current === fieldId) {
      const chain = [fieldId];
      for (let at = cameFrom.get(fieldId)!; at !== fieldId; at = cameFrom.get(at)!) chain.push(at);
      chain.push(fieldId);
      return chain.reverse();
    }
    for (const next of others.get(current) ?? []) {
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, current);
      stack.push(next);
    }
  }
  return null;
}

/**
 * The computed fields that read `fieldId`, directly or through other computed fields, each once,
 * nearest first: what deleting it, or changing its type, would break.
 */
export function dependentsOf(fieldId: string, reads: FieldReads): string[] {
  const readBy = new Map<string, string[]>();
  for (const [reader, readIds] of reads) {
    for (const id of new Set(readIds)) {
      const readers = readBy.get(id);
      if (readers) readers.push(reader);
      else readBy.set(id, [reader]);
    }
  }
  const found: string[] = [];
  const seen = new Set([fieldId]);
  for (let queue = [fieldId], index = 0; index < queue.length; index += 1) {
    for (const reader of readBy.get(queue[index]!) ?? []) {
      if (seen.has(reader)) continue;
      seen.add(reader);
      found.push(reader);
      queue.push(reader);
    }
  }
  return found;
}
