-- migrate:up
-- The database trash: a deleted table or field's metadata, kept until it is restored or purged
-- (TRASH_RETENTION). Its data stays where it was: a table and its link tables in the database's
-- schema, a field's link table, a written field's column (no longer named by any metadata, so no
-- listing, view or write reads it); formulas, lookups, rollups and counts are computed again on
-- restore. Written and read by src/schema-trash.ts and the schema service.
CREATE TABLE schema_trash (
  -- The table's or the field's id (tbl… / fld…).
  id          text           PRIMARY KEY,
  database_id uuid           NOT NULL REFERENCES databases (id) ON DELETE CASCADE,
  kind        text           NOT NULL CHECK (kind IN ('table', 'field')),
  -- The table itself, or the field's table.
  table_id    text           NOT NULL,
  deleted_at  timestamptz(3) NOT NULL DEFAULT now(),
  -- The deleting key's {id, name}; null for the root key.
  deleted_by  jsonb,
  -- A field: {field}; a table: {table, fields, inboundLinks}, each as the metadata rows were.
  entry       jsonb          NOT NULL
);
-- A database's trash, most recently deleted first.
CREATE INDEX schema_trash_database_idx ON schema_trash (database_id, deleted_at);
-- The fields of a table (purged with it), and the purge's oldest first.
CREATE INDEX schema_trash_table_idx ON schema_trash (table_id);
CREATE INDEX schema_trash_deleted_at_idx ON schema_trash (deleted_at);

-- migrate:down
DROP TABLE schema_trash;
