-- migrate:up
-- A deletion's revision and its trash row were two rows with five index entries per record, the
-- half of history's cost on a delete (bench/README.md, "Results of history and the trash"). Now
-- record_trash holds every deletion's revision (the revisions trigger skips record.deleted
-- events; the delete statement writes these rows, db/record-trash.ts), with the stored row and its
-- links while the record is in the trash: `stored` is set back to NULL when it is restored or
-- purged, and the row stays for history until its event is pruned.
ALTER TABLE record_trash ALTER COLUMN stored DROP NOT NULL, ALTER COLUMN links DROP NOT NULL;
ALTER TABLE record_trash DROP CONSTRAINT record_trash_pkey;
DROP INDEX record_trash_listing_idx;
DROP INDEX record_trash_event_seq_idx;
-- Deletions' revisions of records restored or purged before this migration, kept without a row.
INSERT INTO record_trash (table_id, record_id, event_seq, position, stored, links)
SELECT v.table_id, v.record_id, v.event_seq, v.position, NULL, NULL
  FROM record_revisions v JOIN outbox_events e ON e.seq = v.event_seq
 WHERE e.type = 'record.deleted'
   AND NOT EXISTS (SELECT 1 FROM record_trash t WHERE t.event_seq = v.event_seq AND t.position = v.position);
DELETE FROM record_revisions v USING outbox_events e WHERE e.seq = v.event_seq AND e.type = 'record.deleted';
-- As record_revisions: a revision by its event (which prunes by it), a record's by its id.
ALTER TABLE record_trash ADD PRIMARY KEY (event_seq, position);
CREATE INDEX record_trash_record_idx ON record_trash (record_id, event_seq, position);
-- What is in the trash: a table's, most recently deleted first; everyone's, oldest first (purge).
CREATE INDEX record_trash_listing_idx ON record_trash (table_id, event_seq, position) WHERE stored IS NOT NULL;
CREATE INDEX record_trash_purge_idx ON record_trash (event_seq) WHERE stored IS NOT NULL;

DROP TRIGGER outbox_events_record_revisions ON outbox_events;
CREATE TRIGGER outbox_events_record_revisions
  AFTER INSERT ON outbox_events
  FOR EACH ROW
  WHEN (NEW.type IN ('record.created', 'record.updated') AND NEW.source <> 'dependency'
        AND NEW.table_id IS NOT NULL
        AND current_setting('recordbase.history', true) IS DISTINCT FROM 'off')
  EXECUTE FUNCTION rb_record_revisions_append();

-- migrate:down
DROP TRIGGER outbox_events_record_revisions ON outbox_events;
CREATE TRIGGER outbox_events_record_revisions
  AFTER INSERT ON outbox_events
  FOR EACH ROW
  WHEN (NEW.type IN ('record.created', 'record.updated', 'record.deleted') AND NEW.source <> 'dependency'
        AND NEW.table_id IS NOT NULL
        AND current_setting('recordbase.history', true) IS DISTINCT FROM 'off')
  EXECUTE FUNCTION rb_record_revisions_append();
INSERT INTO record_revisions (table_id, event_seq, position, record_id)
SELECT table_id, event_seq, position, record_id FROM record_trash;
DELETE FROM record_trash WHERE stored IS NULL;
DROP INDEX record_trash_purge_idx;
DROP INDEX record_trash_listing_idx;
DROP INDEX record_trash_record_idx;
ALTER TABLE record_trash DROP CONSTRAINT record_trash_pkey;
ALTER TABLE record_trash ADD PRIMARY KEY (table_id, record_id);
CREATE INDEX record_trash_listing_idx ON record_trash (table_id, event_seq, position);
CREATE INDEX record_trash_event_seq_idx ON record_trash (event_seq);
ALTER TABLE record_trash ALTER COLUMN stored SET NOT NULL, ALTER COLUMN links SET NOT NULL;
