import type { ApiKeyScope } from '@recordbase/contracts/api-keys';
import {
  CHANGE_CURSOR_PATTERN,
  changesQuerySchema,
  changesStreamQuerySchema,
  LATEST_CURSOR,
  STREAM_TOKEN_TTL_SECONDS,
  type StreamToken,
} from '@recordbase/contracts/changes';
import { pathSegmentSchema } from '@recordbase/contracts/common';
import type { PrismaClient } from '@recordbase/db';
import { findAccessibleDatabase } from '@recordbase/domain/access';
import {
  type ChangeSink,
  type ChangeTailer,
  type ChangeToSend,
  changeToSend,
} from '@recordbase/domain/change-tailer';
import { changesFilter, listChanges, readChangesAfter, startOfChanges } from '@recordbase/domain/changes';
import { principalByKeyId } from '@recordbase/server-kit/auth';
import { badRequest, unauthorized } from '@recordbase/server-kit/errors';
import { RawJson } from '@recordbase/server-kit/http';
import {
  type InFlightBound,
  type InFlightLimiter,
  inFlightRefusal,
  releaseRequestPlace,
} from '@recordbase/server-kit/in-flight';
import { signStreamToken, verifyStreamToken } from '@recordbase/server-kit/stream-tokens';
import type { RequestHandler, Response } from 'express';
import { Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import { endpoint } from './endpoint';

const baseParams = z.object({ databaseId: pathSegmentSchema });

/** Record events need `records:read`, table and field events `schema:read`: either opens the feed. */
const readEvents = { anyScope: ['records:read', 'schema:read'] as readonly ApiKeyScope[] };

/** The contract's default bound on one key's open streams, every replica together. */
export const DEFAULT_STREAMS_PER_KEY = 100;
/** Unread by a client before its stream is dropped (it resumes from the last id it received). */
export const DEFAULT_STREAM_BUFFER_BYTES = 1024 * 1024;
/** Pages read per catch-up step, and the first answer's check of the cursor. */
const CATCH_UP_PAGE = 500;
/** How long a dropped client has to read what was queued for it before its connection is cut. */
const DROPPED_CLIENT_GRACE_MS = 10_000;
/** Tells EventSource how long to wait before reconnecting after a drop. */
const RETRY_MS = 1000;

export const streamsOfKey = (keyId: string | null, limit: number): InFlightBound => ({
  key: `inflight:streams:${keyId ?? 'root'}`,
  limit,
  what: 'change streams of this API key',
});

export interface ChangesRoutesDeps {
  pool: pg.Pool;
  prisma: PrismaClient;
  tailer: ChangeTailer;
  inFlight: InFlightLimiter;
  streamsPerKey: number;
  streamBufferBytes: number;
  /** FILE_TOKEN_SECRET, which signs stream tokens under an audience of their own. */
  tokenSecret: string;
}

/** The SSE framing of a change: `id:` the cursor after it, `event:` its type, `data:` its JSON. */
export function eventFrame(change: ChangeToSend): string {
  return `id: ${change.cursor}\nevent: ${change.type}\ndata: ${change.json}\n\n`;
}

/** A stream's writes to the response, bounded by what its client has not read yet. */
function responseSink(res: Response, signal: AbortSignal, bufferBytes: number): ChangeSink {
  return {
    send(rendered) {
      if (res.writableEnded || res.destroyed) return false;
      res.write(rendered);
      return res.writableLength <= bufferBytes;
    },
    drained() {
      // 'drain' comes only after a write found the buffer full; anything less is on its way.
      if (!res.writableNeedDrain || res.destroyed || res.writableEnded) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    },
    heartbeat() {
      if (!res.writableEnded && !res.destroyed) res.write(': keep-alive\n\n');
    },
    end() {
      if (!res.writableEnded) res.end();
      // A client that reads nothing would keep what is queued for it, and its socket, for good.
      setTimeout(() => res.destroy(), DROPPED_CLIENT_GRACE_MS).unref();
    },
    signal,
  };
}

/**
 * The change feed of a database: pages from a cursor, and the same events as a Server-Sent Events
 * stream fed by the process's tailer.
 */
export function changesRoutes(deps: ChangesRoutesDeps): Router {
  const router = Router();
  const base = '/bases/:databaseId/changes';

  router.get(
    base,
    endpoint(
      { access: readEvents, params: baseParams, query: changesQuerySchema },
      async ({ params, query, principal }) => {
        const answer = await listChanges(deps, principal, params.databaseId, query);
        return new RawJson(
          `{"changes":[${answer.changesJson.join(',')}],"cursor":${JSON.stringify(answer.cursor)},"hasMore":${answer.hasMore}}`,
        );
      },
    ),
  );

  router.post(
    `${base}/stream-tokens`,
    endpoint({ access: readEvents, params: baseParams, status: 201 }, async ({ params, principal }) => {
      // The database must exist and be one the key reaches: a token for another would open nothing.
      const database = await findAccessibleDatabase(deps.prisma, principal, params.databaseId);
      const token: StreamToken = {
        token: signStreamToken(
          deps.tokenSecret,
          { keyId: principal.keyId, databaseId: database.id },
          STREAM_TOKEN_TTL_SECONDS,
        ),
        expiresAt: new Date(Date.now() + STREAM_TOKEN_TTL_SECONDS * 1000).toISOString(),
      };
      return token;
    }),
  );

  router.get(
    `${base}/stream`,
    endpoint(
      { access: readEvents, params: baseParams, query: changesStreamQuerySchema },
      async ({ params, query, principal, req, res, signal }) => {
        const filter = await changesFilter(deps.prisma, principal, params.databaseId, query);
        const cursor = resumeCursor(req.get('last-event-id'), query.cursor);
        // A key past its streams reads nothing; the place is given back whenever the answer ends.
        const admission = await deps.inFlight.admit([streamsOfKey(principal.keyId, deps.streamsPerKey)]);
        if (!admission.admitted) throw inFlightRefusal(admission.bound);
        res.once('close', () => admission.lease.release());
        // Undefined: from the oldest event kept.
        const after = await startOfChanges(deps.pool, cursor);
        // The first page is read before answering, so that a cursor retention has passed is a 410
        // and not a stream that ends at once.
        const first = await readChangesAfter(deps.pool, filter, after, query.limit ?? CATCH_UP_PAGE);
        // A stream is not a request in flight: it holds a place among the key's streams instead.
        releaseRequestPlace(res);
        res.status(200);
        res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
        res.setHeader('Cache-Control', 'no-cache, no-transform');
        // nginx (the gateway) passes each event on at once rather than filling its buffer first.
        res.setHeader('X-Accel-Buffering', 'no');
        res.flushHeaders();
        res.socket?.setNoDelay(true);
        res.write(`retry: ${RETRY_MS}\n\n`);
        for (const change of first.changes) {
          res.write(eventFrame(changeToSend(change)));
        }
        await deps.tailer.follow(filter, first.position, responseSink(res, signal, deps.streamBufferBytes));
        if (!res.writableEnded) res.end();
        return undefined;
      },
    ),
  );
  return router;
}

/**
 * Where a stream resumes: the Last-Event-ID an EventSource sends when it reconnects wins over the
 * `cursor` of the address it reconnects to (the one it first opened).
 */
function resumeCursor(lastEventId: string | undefined, cursor: string | undefined): string | undefined {
  if (lastEventId === undefined || lastEventId === '') return cursor;
  if (lastEventId === LATEST_CURSOR || CHANGE_CURSOR_PATTERN.test(lastEventId)) return lastEventId;
  throw badRequest(
    'The Last-Event-ID header is not a change cursor; send the id of the last event received unchanged',
  );
}

const STREAM_PATH = /^\/bases\/([^/]+)\/changes\/stream\/?$/;

/**
 * Authenticates a change stream opened with `?token=` rather than an Authorization header (an
 * EventSource cannot send one), before the API's key check, which then lets it through. The key
 * the token names is read as it stands now, and reaches the token's database only. Any other
 * route, or a request that has an Authorization header, is left to the key check.
 */
export function streamTokenAuthentication(deps: {
  prisma: PrismaClient;
  rootApiKey: string | undefined;
  tokenSecret: string;
}): RequestHandler {
  return async (req, res, next) => {
    const token = req.query.token;
    const path = STREAM_PATH.exec(req.path);
    if (
      req.method !== 'GET' ||
      !path ||
      typeof token !== 'string' ||
      req.headers.authorization !== undefined
    ) {
      next();
      return;
    }
    const verdict = verifyStreamToken(deps.tokenSecret, token);
    if (!verdict.ok) {
      throw unauthorized(
        verdict.reason === 'expired'
          ? 'The stream token has expired; get a new one from POST …/changes/stream-tokens'
          : 'The stream token is not valid; get one from POST …/changes/stream-tokens',
      );
    }
    if (verdict.databaseId !== path[1]!.toLowerCase()) {
      throw unauthorized("The stream token is for another database's changes");
    }
    const principal = await principalByKeyId(deps, verdict.keyId);
    if (!principal) throw unauthorized('The API key the stream token was issued to no longer exists');
    const reach = principal.databaseIds;
    res.locals.principal = {
      ...principal,
      databaseIds: new Set(reach === null || reach.has(verdict.databaseId) ? [verdict.databaseId] : []),
    };
    next();
  };
}
