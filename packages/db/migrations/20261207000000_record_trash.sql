-- migrate:up
-- A deleted record's row, as stored, and the link rows that led from and to it, kept until it is
-- restored or its deletion event is pruned (TRASH_RETENTION, within HISTORY_RETENTION): restore
-- puts back exactly what was stored, whatever the field types. How the record read when deleted
-- (the trash listing) is its record.deleted event's, at `position`; who deleted it and when too.
CREATE TABLE record_trash (
  table_id   text    NOT NULL,
  record_id  uuid    NOT NULL,
  event_seq  bigint  NOT NULL REFERENCES outbox_events (seq) ON DELETE CASCADE,
  position   integer NOT NULL,
  -- to_jsonb of the physical row: system columns and one per field.
  stored     jsonb   NOT NULL,
  -- [{table, record_id, linked_id, position}]: every link table row naming the record, either side.
  links      jsonb   NOT NULL,
  PRIMARY KEY (table_id, record_id)
);
-- A table's trash, most recently deleted first.
CREATE INDEX record_trash_listing_idx ON record_trash (table_id, event_seq, position);
-- The cascade from the retention sweep's delete of events.
CREATE INDEX record_trash_event_seq_idx ON record_trash (event_seq);

-- migrate:down
DROP TABLE record_trash;
