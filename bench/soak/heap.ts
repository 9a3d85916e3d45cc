/**
 * Each service's V8 heap as its own `/metrics` reports it (prom-client's default metrics): the
 * young generation's size, which V8 grows with the allocation rate, and the old space in use,
 * where retained objects end up. Together they tell a heap sizing itself to the load from one
 * keeping what it should let go.
 */

export interface HeapFigures {
  /** Young generation (new space) size, MiB. */
  youngMiB: number;
  /** Old space in use, MiB. */
  oldUsedMiB: number;
}

const MiB = 1024 * 1024;

/** The value of `metric` labelled `space="<space>"` in a Prometheus text exposition. */
export function heapSpaceValue(exposition: string, metric: string, space: string): number {
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${metric}{`)) continue;
    const close = line.indexOf('}');
    if (!line.slice(0, close).includes(`space="${space}"`)) continue;
    return Number(line.slice(close + 1).trim());
  }
  return Number.NaN;
}

export async function heapFigures(metricsUrl: string): Promise<HeapFigures> {
  const exposition = await (await fetch(metricsUrl)).text();
  return {
    youngMiB: heapSpaceValue(exposition, 'nodejs_heap_space_size_total_bytes', 'new') / MiB,
    oldUsedMiB: heapSpaceValue(exposition, 'nodejs_heap_space_size_used_bytes', 'old') / MiB,
  };
}

/** Every service's figures at once, by name. */
export async function heapOfAll(metricsUrls: Record<string, string>): Promise<Record<string, HeapFigures>> {
  const entries = await Promise.all(
    Object.entries(metricsUrls).map(async ([name, url]) => [name, await heapFigures(url)] as const),
  );
  return Object.fromEntries(entries);
}
