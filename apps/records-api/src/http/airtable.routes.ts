import {
  airtableCreateBodySchema,
  airtableDeleteIdsSchema,
  airtableListParamsSchema,
  airtableUpdateBodySchema,
  airtableUpdateOneBodySchema,
} from '@recordbase/contracts/airtable';
import { pathSegmentSchema } from '@recordbase/contracts/common';
import { DomainError } from '@recordbase/contracts/domain-errors';
import { MAX_SORT_ENTRIES } from '@recordbase/contracts/sorts';
import type { PrismaClient } from '@recordbase/db';
import { airtableBases, airtableTables } from '@recordbase/domain/airtable/meta';
import {
  type AirtablePage,
  createAirtableRecords,
  deleteAirtableRecords,
  getAirtableRecord,
  listAirtableRecords,
  updateAirtableRecords,
  upsertAirtableRecords,
} from '@recordbase/domain/airtable/records';
import { RawJson } from '@recordbase/server-kit/http';
import type { Logger } from '@recordbase/server-kit/logger';
import { Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import { airtableErrorOfDomain } from './airtable-errors';
import { endpoint } from './endpoint';
import { type RecordRoutesOptions, requestRecordsDb } from './records.routes';

/**
 * The Airtable-compatible API's record routes (api-contract "The Airtable-compatible API"),
 * mounted at /v0 behind the same key check, rate limit and bounds as /api/v1 (app.ts). Airtable
 * names a base in the path where /api/v1 says `bases/{id}`; the domain's refusals become
 * Airtable's errors here (airtable-errors.ts), in the words of the parameter they name.
 */

const baseParams = z.object({ databaseId: pathSegmentSchema });
const tableParams = baseParams.extend({ tableId: pathSegmentSchema });
const recordParams = tableParams.extend({ recordId: z.string().min(1).max(255) });

const read = { scope: 'records:read' } as const;
const write = { scope: 'records:write' } as const;
const schemaRead = { scope: 'schema:read' } as const;

/** DELETE …?records[]=a&records[]=b, as Airtable.js writes the ids of a destroy. */
const deleteQuerySchema = z
  .strictObject(
    {
      'records[]': z.union([z.string(), z.array(z.string())]).optional(),
      records: z.union([z.string(), z.array(z.string())]).optional(),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown parameter ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}; give the ids as records[]`
          : undefined,
    },
  )
  .transform((query) => [query['records[]'] ?? [], query.records ?? []].flat())
  .pipe(airtableDeleteIdsSchema);

/** The keys a listing's query may hold: two per sort entry and a dozen others, with room. */
const MAX_QUERY_PARAMETERS = 2 * MAX_SORT_ENTRIES + 20;

const SORT_PARAMETER = /^sort\[(\d{1,3})\]\[(field|direction)\]$/;

/**
 * A listing's query as Airtable.js writes it (`fields[]=A&fields[]=B`, `sort[0][field]=A`,
 * numbers and booleans as text), taken to the parameters' own shapes; what it cannot place is
 * left for the parameters' schema to refuse by name.
 */
function listParamsOfQuery(query: Record<string, unknown>, ctx: z.RefinementCtx): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  const sort: Record<string, unknown>[] = [];
  const entries = Object.entries(query);
  if (entries.length > MAX_QUERY_PARAMETERS) {
    ctx.addIssue({ code: 'custom', message: `takes at most ${MAX_QUERY_PARAMETERS} parameters` });
    return params;
  }
  for (const [key, value] of entries) {
    if (key === 'fields[]' || key === 'fields') {
      params.fields = Array.isArray(value) ? value : [value];
      continue;
    }
    if (Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', path: [key], message: 'must be given once' });
      continue;
    }
    const sortPart = SORT_PARAMETER.exec(key);
    if (sortPart) {
      const index = Number(sortPart[1]);
      if (index >= MAX_SORT_ENTRIES) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `sort holds at most ${MAX_SORT_ENTRIES} entries`,
        });
        continue;
      }
      sort[index] = { ...sort[index], [sortPart[2]!]: value };
      continue;
    }
    if (
      (key === 'pageSize' || key === 'maxRecords') &&
      typeof value === 'string' &&
      /^\d{1,16}$/.test(value)
    ) {
      params[key] = Number(value);
    } else if (key === 'returnFieldsByFieldId' && (value === 'true' || value === '1')) {
      params[key] = true;
    } else if (key === 'returnFieldsByFieldId' && (value === 'false' || value === '0')) {
      params[key] = false;
    } else {
      params[key] = value;
    }
  }
  if (sort.length > 0) {
    // A hole (sort[1] without sort[0]) is an entry without a field: refused as such.
    params.sort = Array.from(sort, (entry) => entry ?? {});
  }
  return params;
}

const listQuerySchema = z
  .record(z.string(), z.unknown())
  .transform(listParamsOfQuery)
  .pipe(airtableListParamsSchema);

/** POST …/listRecords: Airtable.js puts timeZone and userLocale in the query, the rest in the body. */
const listRecordsQuerySchema = airtableListParamsSchema.pick({ timeZone: true, userLocale: true });

const getQuerySchema = z
  .record(z.string(), z.unknown())
  .transform(listParamsOfQuery)
  .pipe(
    airtableListParamsSchema.pick({
      returnFieldsByFieldId: true,
      cellFormat: true,
      timeZone: true,
      userLocale: true,
    }),
  );

/** A listing's answer, `{records, offset?}`, around the records' JSON text as it came. */
function pageJson(page: AirtablePage): RawJson {
  const offset = page.offset === undefined ? '' : `,"offset":${JSON.stringify(page.offset)}`;
  return new RawJson(`{"records":${page.recordsJson}${offset}}`);
}

export interface AirtableRoutesOptions extends RecordRoutesOptions {
  /** The metadata the meta routes read. */
  prisma: PrismaClient;
}

export function airtableRoutes(pool: pg.Pool, logger: Logger, options: AirtableRoutesOptions): Router {
  const router = Router();
  const recordsDb = requestRecordsDb(pool, logger, options);
  const address = (params: { databaseId: string; tableId: string }) => ({
    databaseId: params.databaseId,
    tableRef: params.tableId,
  });
  /** The domain's refusals as Airtable's errors, their places named from the request's `part`. */
  const airtable = async <T>(part: 'query' | 'body', work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw error instanceof DomainError ? airtableErrorOfDomain(error, part) : error;
    }
  };

  // Before the record routes, whose `/:databaseId/:tableId` would take `meta/bases` for a table.
  router.get(
    '/meta/bases',
    endpoint({ access: schemaRead }, ({ principal }) => airtableBases(options.prisma, principal)),
  );
  router.get(
    '/meta/bases/:databaseId/tables',
    endpoint({ access: schemaRead, params: baseParams }, ({ params, principal }) =>
      airtable('query', () => airtableTables(options.prisma, principal, params.databaseId)),
    ),
  );
  router.get(
    '/:databaseId/:tableId',
    endpoint(
      { access: read, params: tableParams, query: listQuerySchema },
      ({ params, query, principal, signal, req }) =>
        airtable('query', async () =>
          pageJson(
            await listAirtableRecords(recordsDb(signal, req, principal), principal, address(params), query),
          ),
        ),
    ),
  );
  router.post(
    '/:databaseId/:tableId/listRecords',
    endpoint(
      { access: read, params: tableParams, query: listRecordsQuerySchema, body: airtableListParamsSchema },
      ({ params, body, principal, signal, req }) =>
        airtable('body', async () =>
          pageJson(
            await listAirtableRecords(recordsDb(signal, req, principal), principal, address(params), body),
          ),
        ),
    ),
  );
  router.get(
    '/:databaseId/:tableId/:recordId',
    endpoint(
      { access: read, params: recordParams, query: getQuerySchema },
      ({ params, query, principal, signal, req }) =>
        airtable('query', () =>
          getAirtableRecord(
            recordsDb(signal, req, principal),
            principal,
            address(params),
            params.recordId,
            query,
          ),
        ),
    ),
  );
  router.post(
    '/:databaseId/:tableId',
    endpoint(
      {
        access: write,
        params: tableParams,
        body: airtableCreateBodySchema,
        bodyLimit: options.writeBodyLimit,
      },
      ({ params, body, principal, signal, req }) =>
        airtable('body', async () => {
          const { records, fields, ...writeOptions } = body;
          const created = await createAirtableRecords(
            recordsDb(signal, req, principal),
            principal,
            address(params),
            {
              ...writeOptions,
              records: records ? records.map((record) => record.fields) : [fields!],
              one: records === undefined,
            },
          );
          // One record given as {fields} is answered as one record.
          return records ? { records: created } : created[0];
        }),
    ),
  );
  for (const method of ['patch', 'put'] as const) {
    const replace = method === 'put';
    router[method](
      '/:databaseId/:tableId',
      endpoint(
        {
          access: write,
          params: tableParams,
          body: airtableUpdateBodySchema,
          bodyLimit: options.writeBodyLimit,
        },
        ({ params, body, principal, signal, req }) =>
          airtable('body', async () => {
            const { records, performUpsert, ...writeOptions } = body;
            const db = recordsDb(signal, req, principal);
            if (performUpsert) {
              return upsertAirtableRecords(db, principal, address(params), {
                ...writeOptions,
                replace,
                records: records.map((record) => record.fields),
                fieldsToMergeOn: performUpsert.fieldsToMergeOn,
              });
            }
            const updated = await updateAirtableRecords(db, principal, address(params), {
              ...writeOptions,
              replace,
              records: records.map((record) => ({ id: record.id!, fields: record.fields })),
            });
            return { records: updated };
          }),
      ),
    );
    router[method](
      '/:databaseId/:tableId/:recordId',
      endpoint(
        {
          access: write,
          params: recordParams,
          body: airtableUpdateOneBodySchema,
          bodyLimit: options.writeBodyLimit,
        },
        ({ params, body, principal, signal, req }) =>
          airtable('body', async () => {
            const { fields, ...writeOptions } = body;
            const [updated] = await updateAirtableRecords(
              recordsDb(signal, req, principal),
              principal,
              address(params),
              {
                ...writeOptions,
                replace,
                one: true,
                records: [{ id: params.recordId, fields }],
              },
            );
            return updated;
          }),
      ),
    );
  }
  router.delete(
    '/:databaseId/:tableId',
    endpoint(
      { access: write, params: tableParams, query: deleteQuerySchema },
      ({ params, query, principal, signal, req }) =>
        airtable('query', async () => ({
          records: await deleteAirtableRecords(
            recordsDb(signal, req, principal),
            principal,
            address(params),
            query,
          ),
        })),
    ),
  );
  router.delete(
    '/:databaseId/:tableId/:recordId',
    endpoint({ access: write, params: recordParams }, ({ params, principal, signal, req }) =>
      airtable('query', async () => {
        const [deleted] = await deleteAirtableRecords(
          recordsDb(signal, req, principal),
          principal,
          address(params),
          [params.recordId],
        );
        return deleted;
      }),
    ),
  );
  return router;
}
