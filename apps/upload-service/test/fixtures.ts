import { randomUUID } from 'node:crypto';
import type { ApiKeyScope } from '@recordbase/contracts/api-keys';
import {
  apiKeyDisplayPrefix,
  type Db,
  hashApiKey,
  newApiKeySecret,
  newFieldId,
  newTableId,
} from '@recordbase/db';
import {
  createDatabaseSchema,
  createTable,
  qualifiedTable,
  quoteIdent,
  schemaNameForDatabase,
} from '@recordbase/db/physical';

/**
 * Metadata rows written straight into the test database: the upload service reads databases,
 * tables and fields but never creates them (records-api does), and needs no physical tables.
 */

export interface TestBase {
  databaseId: string;
  tableId: string;
  /** An attachments field. */
  filesFieldId: string;
  /** A text field, which is no place for an attachment. */
  textFieldId: string;
}

export async function insertBase(db: Db): Promise<TestBase> {
  const databaseId = randomUUID();
  const tableId = newTableId();
  const filesFieldId = newFieldId();
  const textFieldId = newFieldId();
  await db.prisma.database.create({
    data: { id: databaseId, name: 'Uploads', schemaName: schemaNameForDatabase(databaseId) },
  });
  await db.prisma.table.create({
    data: { id: tableId, databaseId, name: 'Docs', nameKey: 'docs', primaryFieldId: textFieldId },
  });
  await db.prisma.field.createMany({
    data: [
      { id: textFieldId, tableId, name: 'Title', nameKey: 'title', type: 'single_line_text', position: 0 },
      { id: filesFieldId, tableId, name: 'Files', nameKey: 'files', type: 'attachments', position: 1 },
    ],
  });
  return { databaseId, tableId, filesFieldId, textFieldId };
}

/** A key with these scopes (on every database, or on `databaseIds`), as its Authorization value. */
export async function insertKey(db: Db, scopes: ApiKeyScope[], databaseIds?: string[]) {
  const key = newApiKeySecret();
  const id = randomUUID();
  await db.prisma.apiKey.create({
    data: {
      id,
      name: scopes.join('+'),
      prefix: apiKeyDisplayPrefix(key),
      hash: hashApiKey(key),
      scopes,
      databaseIds: databaseIds ?? [],
      allDatabases: databaseIds === undefined,
    },
  });
  return { id, authorization: `Bearer ${key}` };
}

/** The base's physical schema and table too, for what reads records (the orphan sweeper). */
export async function insertBaseWithStorage(db: Db): Promise<TestBase> {
  const base = await insertBase(db);
  const schemaName = schemaNameForDatabase(base.databaseId);
  for (const statement of [
    ...createDatabaseSchema(base.databaseId),
    ...createTable({ schemaName, id: base.tableId, name: 'Docs' }, [
      { id: base.textFieldId, name: 'Title', type: 'single_line_text' },
      { id: base.filesFieldId, name: 'Files', type: 'attachments' },
    ]),
  ]) {
    await db.pool.query(statement);
  }
  return base;
}

/** A record holding these attachment urls, written as records-api stores them. */
export async function insertRecordWithAttachments(db: Db, base: TestBase, urls: string[]): Promise<void> {
  const value = urls.map((url) => ({ url, fileName: 'f', size: 1, mimeType: 'image/png' }));
  await db.pool.query(
    `INSERT INTO ${qualifiedTable(schemaNameForDatabase(base.databaseId), base.tableId)} (${quoteIdent(base.filesFieldId)}) VALUES ($1::jsonb)`,
    [JSON.stringify(value)],
  );
}
