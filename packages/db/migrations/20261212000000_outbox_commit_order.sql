-- migrate:up
-- The change feed (outbox/changes.ts) hands out events in an order no later commit can cut into.
-- `seq` is allocated when an event is inserted, and transactions commit out of that order: a
-- reader advancing past the highest seq it saw would skip a smaller one committed later. Each
-- event now records its transaction's id; a reader hands out only events of transactions older
-- than every one still running (the snapshot's xmin), ordered by (xid, seq), so whatever commits
-- later sorts after everything already handed out.
-- Nullable, default set apart: no rewrite of the table; events from before read as xid 0.
ALTER TABLE outbox_events ADD COLUMN xid xid8;
ALTER TABLE outbox_events ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX outbox_events_changes_idx ON outbox_events (database_id, (COALESCE(xid, '0'::xid8)), seq)
  WHERE NOT suppressed;

-- migrate:down
DROP INDEX outbox_events_changes_idx;
ALTER TABLE outbox_events DROP COLUMN xid;
