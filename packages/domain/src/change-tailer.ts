import {
  type ChangePosition,
  comparePositions,
  latestChangePosition,
  type StoredChange,
  tailChanges,
} from '@recordbase/db';
import type pg from 'pg';
import { type ChangesFilter, changeMatches, cursorOf, readChangesAfter } from './changes';

/**
 * The live end of the change feed for every stream of one process: one query per poll, whatever
 * the number of streams, fanned out to each. A stream first catches up on its own (its cursor may
 * be far behind), reading pages as a client of GET /changes would, then joins the tail once it
 * stands where the tail stands, so between the two nothing is skipped or sent twice:
 * - positions are global (outbox/changes.ts), so a stream's and the tail's compare;
 * - a poll only reads the databases that had streams when it began: a stream joins only after a
 *   poll begun after it registered has ended, and at or past that poll's position;
 * - the tail sends a stream only changes past the stream's own position.
 * A client too slow to take what the tail sends is dropped (its stream ends) rather than
 * buffered without bound: it resumes from the last id it received.
 */

type Queryable = Pick<pg.Pool, 'query'>;

export interface ChangeToSend {
  /** The cursor after this change: the stream's `id:`. */
  cursor: string;
  type: string;
  json: string;
}

/** A change read from the feed as a stream sends it. */
export function changeToSend(change: StoredChange): ChangeToSend {
  return { cursor: cursorOf(change.position), type: change.type, json: change.bodyJson };
}

/** Where a stream's changes go: the HTTP response, seen from here only through these. */
export interface ChangeSink {
  /** Queues one change as rendered; false once the client has more unread than the stream may hold. */
  send(rendered: string): boolean;
  /** Resolves once what is queued has drained to the client (or the client is gone). */
  drained(): Promise<void>;
  /** A keep-alive for the client and the proxies between (an SSE comment). */
  heartbeat(): void;
  /** Ends the stream (the client is dropped; it may resume from the last id it received). */
  end(): void;
  /** Aborts when the client goes away. */
  signal: AbortSignal;
}

export interface TailerOptions {
  /** A change as its streams send it (an SSE frame): rendered once, whatever the streams. */
  render: (change: ChangeToSend) => string;
  /** Between polls while streams are open; a write on this process wakes the tail at once. */
  pollMs?: number;
  /** Changes per poll and per catch-up page. */
  batch?: number;
  heartbeatMs?: number;
  onError?: (error: unknown) => void;
}

export interface ChangeTailer {
  /**
   * Streams the filter's changes after `after` to `sink` until the client goes away or is dropped:
   * catching up page by page, then from the tail.
   */
  follow(filter: ChangesFilter, after: ChangePosition, sink: ChangeSink): Promise<void>;
  /** Something was committed on this process: poll now rather than at the next tick. */
  wake(): void;
  /** Streams open on this process. */
  streams(): number;
  /** Ends every stream and stops polling. */
  close(): void;
}

interface Stream {
  filter: ChangesFilter;
  sink: ChangeSink;
  position: ChangePosition;
  live: boolean;
  /** The stream may join the tail after the poll of this number has ended. */
  joinsAfterPoll: number;
  ended: () => void;
}

const DEFAULT_POLL_MS = 50;
const DEFAULT_BATCH = 500;
/** The contract: a comment line at least every 15 s keeps a stream open. */
export /** After a failed poll (the database away): once a second rather than at every tick. */
const RETRY_AFTER_ERROR_MS = 1000;
const DEFAULT_HEARTBEAT_MS = 15_000;

export function createChangeTailer(pool: Queryable, options: TailerOptions): ChangeTailer {
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const batch = options.batch ?? DEFAULT_BATCH;
  const render = (change: StoredChange) => options.render(changeToSend(change));
  const byDatabase = new Map<string, Set<Stream>>();
  let position: ChangePosition | undefined;
  let pollsStarted = 0;
  let pollsEnded = 0;
  let polling = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const pollEnded: (() => void)[] = [];

  const heartbeats = setInterval(() => {
    for (const streams of byDatabase.values()) for (const stream of streams) stream.sink.heartbeat();
  }, options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
  heartbeats.unref();

  const remove = (stream: Stream) => {
    const streams = byDatabase.get(stream.filter.databaseId);
    streams?.delete(stream);
    if (streams?.size === 0) byDatabase.delete(stream.filter.databaseId);
    stream.ended();
  };

  const drop = (stream: Stream) => {
    remove(stream);
    stream.sink.end();
  };

  const schedule = (delayMs: number) => {
    if (closed || timer !== undefined || byDatabase.size === 0) return;
    timer = setTimeout(() => {
      timer = undefined;
      void poll();
    }, delayMs);
    timer.unref();
  };

  const fanOut = (changes: readonly (StoredChange & { databaseId: string })[], to: ChangePosition) => {
    // Each stream gets what a poll brought it in one write: at 500 events/s to 100 streams, a
    // write per event and stream was 50,000 socket writes a second.
    const batches = new Map<Stream, string[]>();
    for (const change of changes) {
      let rendered: string | undefined;
      for (const stream of byDatabase.get(change.databaseId) ?? []) {
        if (!stream.live || comparePositions(change.position, stream.position) <= 0) continue;
        if (!changeMatches(stream.filter, change)) continue;
        rendered ??= render(change);
        const batch = batches.get(stream);
        if (batch) batch.push(rendered);
        else batches.set(stream, [rendered]);
        stream.position = change.position;
      }
    }
    for (const [stream, batch] of batches) {
      if (!stream.sink.send(batch.length === 1 ? batch[0]! : batch.join(''))) drop(stream);
    }
    for (const streams of byDatabase.values()) {
      for (const stream of streams) {
        if (stream.live && comparePositions(stream.position, to) < 0) stream.position = to;
      }
    }
  };

  async function poll(): Promise<void> {
    if (polling) {
      again = true;
      return;
    }
    polling = true;
    pollsStarted += 1;
    let hasMore = false;
    let failed = false;
    try {
      const databaseIds = [...byDatabase.keys()];
      // With no stream the tail stands nowhere: the next one starts it from where the feed ends then.
      if (databaseIds.length === 0) position = undefined;
      else {
        position ??= await latestChangePosition(pool);
        const page = await tailChanges(pool, { databaseIds, after: position, limit: batch });
        fanOut(page.changes, page.position);
        position = page.position;
        hasMore = page.hasMore;
      }
    } catch (error) {
      failed = true;
      options.onError?.(error);
    } finally {
      polling = false;
      pollsEnded = pollsStarted;
      for (const resolve of pollEnded.splice(0)) resolve();
    }
    if (failed) {
      again = false;
      schedule(RETRY_AFTER_ERROR_MS);
    } else if (hasMore || again) {
      again = false;
      void poll();
    } else {
      schedule(pollMs);
    }
  }

  const nextPollEnd = () =>
    new Promise<void>((resolve) => {
      pollEnded.push(resolve);
      schedule(0);
    });

  return {
    async follow(filter, after, sink) {
      // A client gone before it was followed would never be told apart by its abort event.
      if (closed || sink.signal.aborted) {
        sink.end();
        return;
      }
      const ended = new Promise<void>((resolve) => {
        const stream: Stream = {
          filter,
          sink,
          position: after,
          live: false,
          joinsAfterPoll: pollsStarted,
          ended: resolve,
        };
        const streams = byDatabase.get(filter.databaseId) ?? new Set<Stream>();
        byDatabase.set(filter.databaseId, streams);
        streams.add(stream);
        sink.signal.addEventListener('abort', () => remove(stream), { once: true });
        void catchUp(stream).catch((error: unknown) => {
          options.onError?.(error);
          drop(stream);
        });
      });
      schedule(0);
      return ended;
    },
    wake() {
      if (byDatabase.size === 0 || closed) return;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      void poll();
    },
    streams() {
      let count = 0;
      for (const streams of byDatabase.values()) count += streams.size;
      return count;
    },
    close() {
      closed = true;
      clearInterval(heartbeats);
      if (timer !== undefined) clearTimeout(timer);
      for (const streams of [...byDatabase.values()]) for (const stream of [...streams]) drop(stream);
    },
  };

  /** Pages the stream's changes until it stands where the tail does, then hands it to the tail. */
  async function catchUp(stream: Stream): Promise<void> {
    const isOpen = () => !stream.sink.signal.aborted && byDatabase.get(stream.filter.databaseId)?.has(stream);
    while (isOpen()) {
      const page = await readChangesAfter(pool, stream.filter, stream.position, batch);
      for (const change of page.changes) stream.sink.send(render(change));
      stream.position = page.position;
      // Behind: the client takes what was sent before the next page is read.
      await stream.sink.drained();
      if (page.hasMore) continue;
      if (
        pollsEnded > stream.joinsAfterPoll &&
        position !== undefined &&
        comparePositions(stream.position, position) >= 0
      ) {
        stream.live = true;
        return;
      }
      await nextPollEnd();
    }
    // Left the loop without joining: the client went away (or was dropped) while catching up.
    remove(stream);
  }
}
