-- migrate:up
-- An event's data is JSON of up to a request's records (a hundred records of every field, some
-- 100 KB and more), compressed when stored. lz4 does it in about a third of pglz's time at the same
-- size here, on the statement of every write that appends an event. Only where the server was
-- built with lz4; rows already stored keep theirs.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_settings
              WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
    ALTER TABLE outbox_events ALTER COLUMN data SET COMPRESSION lz4;
  END IF;
END
$$;

-- migrate:down
ALTER TABLE outbox_events ALTER COLUMN data SET COMPRESSION default;
