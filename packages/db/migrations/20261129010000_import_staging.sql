-- migrate:up
-- An import copies its rows into an unlogged table of its own here (import_<id>), typed as its
-- target's columns, before one transaction moves them into the target table: the streaming part
-- runs outside that transaction, and a failed, cancelled or killed import leaves nothing visible.
CREATE SCHEMA import_staging;
-- Each run of an import (a worker that died leaves its run to the next) claims it with a token of
-- its own: only the run holding the token reports progress or commits.
ALTER TABLE imports ADD COLUMN attempt uuid;
-- Newest first, for GET …/imports.
CREATE INDEX imports_database_id_created_at_idx ON imports (database_id, created_at DESC);
DROP INDEX imports_database_id_idx;

-- migrate:down
ALTER TABLE imports DROP COLUMN attempt;
CREATE INDEX imports_database_id_idx ON imports (database_id);
DROP INDEX imports_database_id_created_at_idx;
DROP SCHEMA import_staging CASCADE;
