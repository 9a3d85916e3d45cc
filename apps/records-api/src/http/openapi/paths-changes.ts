import {
  changesPageSchema,
  changesQuerySchema,
  changesStreamQuerySchema,
  DEFAULT_CHANGES_LIMIT,
  MAX_CHANGES_LIMIT,
  STREAM_TOKEN_TTL_SECONDS,
  streamTokenSchema,
} from '@recordbase/contracts/changes';
import * as ex from './examples';
import type { Operation } from './operation';
import { baseParams } from './params';

const BASE = '/api/v1/bases/{databaseId}';
/** Record events need `records:read`, table and field events `schema:read`. */
const readEvents = { anyScope: ['records:read', 'schema:read'] } as const;

const scopes =
  'A key reads the events its scopes carry: record events with `records:read`, table and field events ' +
  'with `schema:read` (asking `types` for others is 403).';

const exampleChange = {
  id: ex.EVENT_ID,
  type: 'record.updated',
  timestamp: ex.AT_EXAMPLE,
  data: {
    tableId: ex.TABLE_ID,
    recordIds: [ex.RECORD_ID],
    records: [ex.record],
    changes: [
      {
        recordId: ex.RECORD_ID,
        changedFieldIds: [ex.FIELD_IDS.status],
        previous: { [ex.FIELD_IDS.status]: 'Lead' },
      },
    ],
  },
  metadata: { baseId: ex.DATABASE_ID, source: 'public_api' },
};

/** The change feed and its stream (changes.routes.ts). */
export const changesOperations: Operation[] = [
  {
    method: 'get',
    path: `${BASE}/changes`,
    operationId: 'listChanges',
    tag: 'Changes',
    summary: 'Read the change feed from a cursor',
    description:
      "The database's events in commit order, each the body a webhook would receive without " +
      "`metadata.webhookId` and `attempt`. Pass the answer's `cursor` back to read on: a client that does " +
      'sees every committed event exactly once, also while writes commit concurrently (an event is handed ' +
      'out once every transaction older than its own has ended, so a long transaction holds the feed back ' +
      `for its length). Without \`cursor\` the feed starts at the oldest event kept; \`cursor=latest\` answers ` +
      `no changes and where the feed ends now. \`limit\` 1 to ${MAX_CHANGES_LIMIT} (default ` +
      `${DEFAULT_CHANGES_LIMIT}); \`hasMore\` says more can be read now. Events are kept 7 days (the ` +
      '`CHANGES_RETENTION` setting); a cursor before what retention deleted is 410 `CURSOR_EXPIRED`. ' +
      scopes,
    access: readEvents,
    params: baseParams,
    query: changesQuerySchema,
    response: changesPageSchema,
    responseExample: { changes: [exampleChange], cursor: '1873-20415', hasMore: false },
    errors: [400, 401, 403, 404, 410, 429],
  },
  {
    method: 'get',
    path: `${BASE}/changes/stream`,
    operationId: 'streamChanges',
    tag: 'Changes',
    summary: 'Follow the change feed live (Server-Sent Events)',
    description:
      'The same events as a `text/event-stream`: for each, `id:` the cursor after it, `event:` its type and ' +
      '`data:` its JSON on one line. It starts where `cursor` (or the `Last-Event-ID` header an EventSource ' +
      'sends when it reconnects) says, as the feed does, catches up, then sends each event as it commits. A ' +
      'comment line at least every 15 s keeps it open. A client that reads too slowly to keep up is dropped ' +
      'and resumes from the last id it received. A key holds at most 100 streams at once (the ' +
      "`CHANGE_STREAMS_PER_KEY` setting), every replica together; 429 past that. A browser's EventSource, " +
      'which cannot send an Authorization header, passes `?token=` from POST …/changes/stream-tokens ' +
      'instead. ' +
      scopes,
    access: readEvents,
    params: baseParams,
    query: changesStreamQuerySchema,
    rawResponse: {
      mediaType: 'text/event-stream',
      description: 'A stream of events, each `id:`, `event:` and `data:` lines followed by a blank line.',
    },
    errors: [400, 401, 403, 404, 410, 429],
  },
  {
    method: 'post',
    path: `${BASE}/changes/stream-tokens`,
    operationId: 'createChangeStreamToken',
    tag: 'Changes',
    summary: 'Get a token that opens the change stream to an EventSource',
    description:
      "A browser's EventSource cannot send an Authorization header: it opens " +
      '`…/changes/stream?token=<token>` instead. The token names the key that asked for it and this ' +
      `database, and opens only this database's stream, for ${STREAM_TOKEN_TTL_SECONDS / 60} minutes; ` +
      "each connection reads the key as it stands then (its scopes; a revoked key's tokens are 401). " +
      'Reconnections within that time need no new token; after it, ask for one and open the stream again ' +
      'from the last id received. Keep the key itself on a server: hand the page only the token. ' +
      scopes,
    access: readEvents,
    params: baseParams,
    status: 201,
    response: streamTokenSchema,
    responseExample: {
      token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJkYiI6IjBiNWUzYTUyIn0.c2lnbmF0dXJl',
      expiresAt: '2026-05-03T17:45:00.000Z',
    },
    errors: [401, 403, 404, 429],
  },
];
