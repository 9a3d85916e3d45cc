-- migrate:up
-- Moves with every schema change of the database (records-api's databaseForChange), in the
-- change's transaction. A process that keeps table metadata reads it in the same statement as a
-- page: a differing version means the metadata is older than the rows, even while the change's
-- NOTIFY has not reached this process yet.
ALTER TABLE databases ADD COLUMN schema_version bigint NOT NULL DEFAULT 0;

-- migrate:down
ALTER TABLE databases DROP COLUMN schema_version;
