import type { Principal } from '@recordbase/contracts/api-keys';
import { invalid, notFound, tooMany } from '@recordbase/contracts/domain-errors';
import type {
  ImportListResponse,
  ImportRowError,
  ImportStatus,
  StartImportRequest,
  StartImportResponse,
} from '@recordbase/contracts/imports';
import { cancelImportRun, newRecordId, type PrismaClient, queueImport } from '@recordbase/db';
import { findAccessibleDatabase, findTableByRef } from './access';
import { isRoot, requireScope } from './access-policy';

/**
 * Imports as the API sees them: started (queued for the import worker, apps/import-worker),
 * read, listed, cancelled. An import reads a file its own key uploaded through /csvupload or
 * /xlsxupload (the root key: any); any other upload is as unknown as one that never was. A key
 * that may not read records sees only the imports it started, as unknown as the others: a status
 * quotes the cells that did not fit, which are record data (its own import's are its own file's).
 */

/** Where a started import waits for the worker (@recordbase/queues' import queue). */
export interface ImportQueue {
  /** Never fails the start: an import Redis did not take is queued by the worker's sweep. */
  enqueue(importId: string): Promise<void>;
  /** Takes a waiting import off the queue (a cancel); a running one stops on its own. */
  remove(importId: string): Promise<void>;
}

export interface ImportsDeps {
  prisma: PrismaClient;
  queue: ImportQueue;
  /** The import worker's time each key may take (the root key's aside); unbounded when absent. */
  importTime?: { check(keyId: string): Promise<unknown> };
}

const XLSX_MIME_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Which reader an import upload needs: upload-service judged its type from its bytes. */
export function importFormat(upload: { mimeType: string }): 'csv' | 'xlsx' {
  return upload.mimeType === XLSX_MIME_TYPE ? 'xlsx' : 'csv';
}
const LISTED_IMPORTS = 50;

/**
 * Imports one key may have queued or running at once. The worker runs them one at a time for
 * everyone: without a bound, one key's files (or one tenant's bombs, each read until a budget
 * stops it) would stand in front of every other key's.
 */
export const MAX_OPEN_IMPORTS_PER_KEY = 3;
export const CANCELLED_MESSAGE = 'Cancelled';

export async function startImport(
  deps: ImportsDeps,
  principal: Principal,
  databaseId: string,
  body: StartImportRequest,
): Promise<StartImportResponse> {
  const database = await findAccessibleDatabase(deps.prisma, principal, databaseId);
  if (body.tableId === undefined)
    requireScope(principal, 'schema:write', 'an import without tableId creates a table');
  const upload = await deps.prisma.uploadedFile.findUnique({ where: { key: body.s3Key } });
  const ownUpload = upload?.kind === 'import' && (isRoot(principal) || upload.apiKeyId === principal.keyId);
  if (!upload || !ownUpload) {
    throw notFound(`no CSV or Excel upload ${JSON.stringify(body.s3Key)} of this key`, ['s3Key']);
  }
  if (importFormat(upload) !== 'xlsx' && body.sheet !== undefined) {
    throw invalid(['sheet'], 'only an Excel file has sheets');
  }
  const table =
    body.tableId === undefined ? null : await findTableByRef(deps.prisma, database.id, body.tableId);
  const id = newRecordId();
  const keyId = principal.keyId;
  if (keyId !== null) await deps.importTime?.check(keyId);
  const queued = await queueImport(
    deps.prisma,
    {
      id,
      databaseId: database.id,
      s3Key: upload.key,
      tableId: table?.id ?? null,
      tableName: table ? null : (body.tableName ?? tableNameOf(upload.fileName)),
      sheet: body.sheet ?? null,
      firstRowIsHeader: body.firstRowIsHeader,
      apiKeyId: keyId,
    },
    MAX_OPEN_IMPORTS_PER_KEY,
  );
  if (!queued.queued) {
    throw tooMany(
      `This API key has ${queued.open} imports queued or running, the most it may have at once; start this one when one of them has finished`,
      5,
    );
  }
  await deps.queue.enqueue(id);
  return { id, status: 'queued' };
}

/** The file's name without its extension, as a table name. */
function tableNameOf(fileName: string): string {
  const base = fileName.replace(/\.(csv|xlsx)$/i, '').trim();
  return (base.length > 0 ? base : 'Imported').slice(0, 255);
}

type ImportRow = Awaited<ReturnType<PrismaClient['import']['findUniqueOrThrow']>>;

function toStatus(row: ImportRow): ImportStatus {
  return {
    id: row.id,
    status: row.status as ImportStatus['status'],
    tableId: row.tableId,
    rowsImported: row.rowsImported,
    rowsTotal: row.rowsTotal,
    skippedColumns: row.skippedColumns as string[],
    errors: row.errors as ImportRowError[],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The imports of a database `principal` may see: without records:read, those it started. */
function visibleImports(principal: Principal, databaseId: string) {
  return principal.scopes.has('records:read') ? { databaseId } : { databaseId, apiKeyId: principal.keyId };
}

async function findImport(prisma: PrismaClient, principal: Principal, databaseId: string, importId: string) {
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const row = await prisma.import.findFirst({
    where: { id: importId, ...visibleImports(principal, database.id) },
  });
  if (!row) throw notFound(`Import ${importId} not found`);
  return row;
}

export async function getImport(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
  importId: string,
): Promise<ImportStatus> {
  return toStatus(await findImport(prisma, principal, databaseId, importId));
}

export async function listImports(
  prisma: PrismaClient,
  principal: Principal,
  databaseId: string,
): Promise<ImportListResponse> {
  const database = await findAccessibleDatabase(prisma, principal, databaseId);
  const rows = await prisma.import.findMany({
    where: visibleImports(principal, database.id),
    orderBy: { createdAt: 'desc' },
    take: LISTED_IMPORTS,
  });
  return { imports: rows.map(toStatus) };
}

/**
 * Marks a queued or running import failed. The worker checks as it goes and at its commit, which
 * only happens while the import is still running, so a cancelled import writes nothing.
 */
export async function cancelImport(
  deps: ImportsDeps,
  principal: Principal,
  databaseId: string,
  importId: string,
): Promise<ImportStatus> {
  const row = await findImport(deps.prisma, principal, databaseId, importId);
  const updated = await cancelImportRun(deps.prisma, row.id, CANCELLED_MESSAGE);
  if (!updated)
    throw invalid(
      null,
      `Import ${importId} has already ${row.status}; only a queued or running import can be cancelled`,
    );
  await deps.queue.remove(importId);
  return toStatus(updated);
}
