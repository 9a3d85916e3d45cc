-- migrate:up
-- History's cost on a write, lowered (bench/README.md, "Results of history and the trash"): of
-- the revisions trigger's ~1 ms per 100-record event, a third was the foreign key's check of
-- every row against outbox_events, and the rest three indexes of which two carried the table's id.
-- - No foreign keys from revisions and the trash to their event: the retention sweep deletes their
--   rows in the statement that deletes the events (db/outbox/dispatch.ts).
-- - Revisions keyed by their event (which prunes by it); a record's history found by the record's
--   id alone (ids are unique across tables; the table is checked on the row); a table's history
--   read from its record events through an index of one row per event, not per record.
ALTER TABLE record_revisions DROP CONSTRAINT record_revisions_event_seq_fkey;
ALTER TABLE record_revisions DROP CONSTRAINT record_revisions_pkey;
DROP INDEX record_revisions_event_seq_idx;
DROP INDEX record_revisions_record_idx;
ALTER TABLE record_revisions ADD PRIMARY KEY (event_seq, position);
CREATE INDEX record_revisions_record_idx ON record_revisions (record_id, event_seq, position);
-- The predicate is db/outbox/dispatch.ts's HISTORY_EVENT_SQL with the table.
CREATE INDEX outbox_events_table_history_idx ON outbox_events (table_id, seq)
  WHERE type IN ('record.created', 'record.updated', 'record.deleted') AND source <> 'dependency'
    AND table_id IS NOT NULL;

ALTER TABLE record_trash DROP CONSTRAINT record_trash_event_seq_fkey;

-- migrate:down
DELETE FROM record_trash t WHERE NOT EXISTS (SELECT 1 FROM outbox_events e WHERE e.seq = t.event_seq);
ALTER TABLE record_trash ADD CONSTRAINT record_trash_event_seq_fkey
  FOREIGN KEY (event_seq) REFERENCES outbox_events (seq) ON DELETE CASCADE;
DROP INDEX outbox_events_table_history_idx;
DROP INDEX record_revisions_record_idx;
ALTER TABLE record_revisions DROP CONSTRAINT record_revisions_pkey;
DELETE FROM record_revisions v WHERE NOT EXISTS (SELECT 1 FROM outbox_events e WHERE e.seq = v.event_seq);
ALTER TABLE record_revisions ADD PRIMARY KEY (table_id, event_seq, position);
CREATE INDEX record_revisions_record_idx ON record_revisions (table_id, record_id, event_seq, position);
CREATE INDEX record_revisions_event_seq_idx ON record_revisions (event_seq);
ALTER TABLE record_revisions ADD CONSTRAINT record_revisions_event_seq_fkey
  FOREIGN KEY (event_seq) REFERENCES outbox_events (seq) ON DELETE CASCADE;
