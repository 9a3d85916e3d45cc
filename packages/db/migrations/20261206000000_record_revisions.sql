-- migrate:up
-- History is read from the outbox, not written a second time: a record event already holds its
-- records (after the write, or their last state for a delete) and an update's previous values.
-- What the outbox lacks is who wrote (actor, the key's {id, name}) and a way to find one record's
-- events without reading every event of its table: record_revisions, a row per record per event,
-- pointing at the event by seq and at the record by its position in the event's recordIds.
ALTER TABLE outbox_events ADD COLUMN actor json;
-- A write that asked integrations not to hear of it (suppressWebhooks) still has its history: its
-- events are appended suppressed, and dispatched as they are written (nothing to send).
ALTER TABLE outbox_events ADD COLUMN suppressed boolean NOT NULL DEFAULT false;

CREATE TABLE record_revisions (
  table_id   text    NOT NULL,
  event_seq  bigint  NOT NULL REFERENCES outbox_events (seq) ON DELETE CASCADE,
  position   integer NOT NULL,
  record_id  uuid    NOT NULL,
  PRIMARY KEY (table_id, event_seq, position)
);
-- A record's history, newest first, in a page whatever its depth.
CREATE INDEX record_revisions_record_idx ON record_revisions (table_id, record_id, event_seq, position);
-- The cascade of the retention sweep's delete finds an event's rows through it.
CREATE INDEX record_revisions_event_seq_idx ON record_revisions (event_seq);

-- The one writer of revisions: every record event appended, by whichever path, except those a
-- dependency refresh appends (computed values are not changes of their own). json's -> parses
-- the event's text once here, in the writing statement.
CREATE FUNCTION rb_record_revisions_append() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO record_revisions (table_id, event_seq, position, record_id)
  SELECT NEW.table_id, NEW.seq, r.position, r.id::uuid
    FROM json_array_elements_text(NEW.data -> 'recordIds') WITH ORDINALITY AS r(id, position);
  RETURN NULL;
END
$$;

CREATE TRIGGER outbox_events_record_revisions
  AFTER INSERT ON outbox_events
  FOR EACH ROW
  WHEN (NEW.type IN ('record.created', 'record.updated', 'record.deleted') AND NEW.source <> 'dependency'
        AND NEW.table_id IS NOT NULL)
  EXECUTE FUNCTION rb_record_revisions_append();

-- Record events stay for HISTORY_RETENTION, the others for OUTBOX_EVENT_RETENTION: each kind has
-- its own index for the retention sweep, so that neither walks past the rows the other keeps. The
-- predicate is db/outbox/dispatch.ts's HISTORY_EVENT_SQL, and the trigger's condition above.
DROP INDEX outbox_events_dispatched_at_idx;
CREATE INDEX outbox_events_dispatched_at_idx ON outbox_events (dispatched_at)
  WHERE dispatched_at IS NOT NULL
    AND NOT (type IN ('record.created', 'record.updated', 'record.deleted') AND source <> 'dependency');
CREATE INDEX outbox_events_history_created_at_idx ON outbox_events (created_at)
  WHERE type IN ('record.created', 'record.updated', 'record.deleted') AND source <> 'dependency';

-- migrate:down
DROP INDEX outbox_events_history_created_at_idx;
DROP INDEX outbox_events_dispatched_at_idx;
CREATE INDEX outbox_events_dispatched_at_idx ON outbox_events (dispatched_at) WHERE dispatched_at IS NOT NULL;
DROP TRIGGER outbox_events_record_revisions ON outbox_events;
DROP FUNCTION rb_record_revisions_append();
DROP TABLE record_revisions;
ALTER TABLE outbox_events DROP COLUMN suppressed;
ALTER TABLE outbox_events DROP COLUMN actor;
