import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { get_dmmf } from '@prisma/prisma-schema-wasm';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/**
 * The SQL migrations are what the database runs; schema.prisma is what the client is generated
 * from. `prisma migrate diff` needs the schema engine we cannot download, so this test compares
 * the two directly: tables, columns, types, nullability, defaults, indexes and foreign keys.
 */

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: 'scalar' | 'object' | 'enum';
  type: string;
  isRequired: boolean;
  isList: boolean;
  hasDefaultValue: boolean;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
}
interface DmmfModel {
  name: string;
  dbName?: string | null;
  fields: DmmfField[];
}
interface DmmfIndex {
  model: string;
  type: 'id' | 'unique' | 'normal' | 'fulltext';
  fields: { name: string }[];
  dbName?: string | null;
}

/** Indexes Prisma's schema language cannot express (partial ones); each is named here on purpose. */
const SQL_ONLY_INDEXES = new Set([
  'outbox_events_undispatched_idx',
  'outbox_events_dispatched_at_idx',
  'outbox_events_history_created_at_idx',
  'outbox_events_table_history_idx',
  'record_trash_listing_idx',
  'record_trash_purge_idx',
  'outbox_events_changes_idx',
  'webhook_deliveries_due_idx',
  'webhook_deliveries_closed_updated_at_idx',
]);
const IGNORED_TABLES = new Set(['schema_migrations']);
/**
 * Columns of types Prisma cannot read (xid8), declared `Unsupported(…)` in schema.prisma, which
 * its DMMF leaves out: each is named here on purpose, and checked to be declared so.
 */
const UNSUPPORTED_COLUMNS = new Map([
  ['outbox_events.xid', 'xid8'],
  ['change_feed_pruned.xid', 'xid8'],
]);

const schemaText = readFileSync(join(__dirname, '..', 'prisma', 'schema.prisma'), 'utf8');
const dmmf = JSON.parse(get_dmmf(JSON.stringify({ prismaSchema: [['schema.prisma', schemaText]] }))) as {
  datamodel: { models: DmmfModel[]; indexes: DmmfIndex[] };
};
const models = dmmf.datamodel.models;
const tableOf = (model: DmmfModel) => model.dbName ?? model.name;
const columnOf = (field: DmmfField) => field.dbName ?? field.name;

function expectedSqlType(field: DmmfField): string {
  const native = field.nativeType?.[0];
  const base: Record<string, string> = {
    String: native === 'Uuid' ? 'uuid' : 'text',
    Int: 'int4',
    BigInt: 'int8',
    Boolean: 'bool',
    DateTime: native === 'Timestamptz' ? 'timestamptz' : 'timestamp',
    Json: native === 'Json' ? 'json' : 'jsonb',
    Float: 'float8',
  };
  const udt = base[field.type];
  if (!udt) throw new Error(`no SQL type known for Prisma type ${field.type}`);
  return field.isList ? `_${udt}` : udt;
}

let testDb: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  testDb = await createTestDatabase();
  client = new pg.Client({ connectionString: testDb.url });
  await client.connect();
});
afterAll(async () => {
  await client.end();
  await testDb.drop();
});

async function columns() {
  const result = await client.query<{
    table_name: string;
    column_name: string;
    udt_name: string;
    is_nullable: 'YES' | 'NO';
    column_default: string | null;
  }>(`SELECT table_name, column_name, udt_name, is_nullable, column_default
      FROM information_schema.columns WHERE table_schema = 'public'`);
  return result.rows.filter((row) => !IGNORED_TABLES.has(row.table_name));
}

async function indexes() {
  const result = await client.query<{
    table: string;
    name: string;
    unique: boolean;
    partial: boolean;
    columns: string[];
  }>(
    `SELECT t.relname AS table, i.relname AS name, ix.indisunique AS unique, ix.indpred IS NOT NULL AS partial,
            array(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, n)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
       FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = 'public'`,
  );
  return result.rows.filter((row) => !IGNORED_TABLES.has(row.table));
}

async function foreignKeys() {
  const result = await client.query<{
    table: string;
    columns: string[];
    target: string;
    targetColumns: string[];
    onDelete: string;
  }>(
    `SELECT t.relname AS table, f.relname AS target, c.confdeltype AS "onDelete",
            array(SELECT attname FROM unnest(c.conkey) WITH ORDINALITY k(n, o) JOIN pg_attribute ON attrelid = c.conrelid AND attnum = k.n ORDER BY k.o)::text[] AS columns,
            array(SELECT attname FROM unnest(c.confkey) WITH ORDINALITY k(n, o) JOIN pg_attribute ON attrelid = c.confrelid AND attnum = k.n ORDER BY k.o)::text[] AS "targetColumns"
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class f ON f.oid = c.confrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE c.contype = 'f' AND n.nspname = 'public'`,
  );
  return result.rows;
}

describe('schema.prisma and the SQL migrations', () => {
  it('have the same tables and columns, with the same types, nullability and defaults', async () => {
    const fromPrisma = models.flatMap((model) =>
      model.fields
        .filter((field) => field.kind === 'scalar' || field.kind === 'enum')
        .map((field) => ({
          column: `${tableOf(model)}.${columnOf(field)}`,
          type: expectedSqlType(field),
          nullable: !field.isRequired,
          hasDefault: field.hasDefaultValue,
        })),
    );
    for (const [column, type] of UNSUPPORTED_COLUMNS) {
      expect(schemaText).toContain(`${column.split('.')[1]} `);
      expect(schemaText).toContain(`Unsupported("${type}")`);
    }
    const fromSql = (await columns())
      .filter((row) => {
        const type = UNSUPPORTED_COLUMNS.get(`${row.table_name}.${row.column_name}`);
        if (type === undefined) return true;
        expect(row.udt_name).toBe(type);
        return false;
      })
      .map((row) => ({
        column: `${row.table_name}.${row.column_name}`,
        type: row.udt_name,
        nullable: row.is_nullable === 'YES',
        // Scalar lists are NOT NULL DEFAULT '{}' in SQL; Prisma models that as a required list.
        hasDefault:
          row.column_default !== null &&
          !(row.udt_name.startsWith('_') && row.column_default.startsWith("'{}'")),
      }));
    const byColumn = (a: { column: string }, b: { column: string }) => a.column.localeCompare(b.column);
    expect(fromSql.sort(byColumn)).toEqual(fromPrisma.sort(byColumn));
  });

  it('have the same indexes', async () => {
    const modelByName = new Map(models.map((model) => [model.name, model]));
    const fromPrisma = dmmf.datamodel.indexes.map((index) => {
      const model = modelByName.get(index.model)!;
      const columnNames = index.fields.map((f) =>
        columnOf(model.fields.find((field) => field.name === f.name)!),
      );
      return `${tableOf(model)}(${columnNames.join(',')})${index.type === 'normal' ? '' : ' unique'}`;
    });
    const fromSql = (await indexes())
      .filter((index) => !SQL_ONLY_INDEXES.has(index.name))
      .map((index) => `${index.table}(${index.columns.join(',')})${index.unique ? ' unique' : ''}`);
    expect(fromSql.sort()).toEqual(fromPrisma.sort());
    const partial = (await indexes()).filter((index) => index.partial).map((index) => index.name);
    expect(partial.sort()).toEqual([...SQL_ONLY_INDEXES].sort());
  });

  it('have the same foreign keys with the same delete actions', async () => {
    const onDeleteCode: Record<string, string> = { Cascade: 'c', SetNull: 'n', Restrict: 'r', NoAction: 'a' };
    const modelByName = new Map(models.map((model) => [model.name, model]));
    const fromPrisma = models.flatMap((model) =>
      model.fields
        .filter((field) => field.kind === 'object' && (field.relationFromFields?.length ?? 0) > 0)
        .map((field) => {
          const target = modelByName.get(field.type)!;
          const from = field.relationFromFields!.map((name) =>
            columnOf(model.fields.find((f) => f.name === name)!),
          );
          const to = field.relationToFields!.map((name) =>
            columnOf(target.fields.find((f) => f.name === name)!),
          );
          const onDelete =
            onDeleteCode[field.relationOnDelete ?? (field.isRequired ? 'Restrict' : 'SetNull')];
          return `${tableOf(model)}(${from}) -> ${tableOf(target)}(${to}) on delete ${onDelete}`;
        }),
    );
    const fromSql = (await foreignKeys()).map(
      (fk) => `${fk.table}(${fk.columns}) -> ${fk.target}(${fk.targetColumns}) on delete ${fk.onDelete}`,
    );
    expect(fromSql.sort()).toEqual(fromPrisma.sort());
  });
});
