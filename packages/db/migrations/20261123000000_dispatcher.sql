-- migrate:up
-- The webhook dispatcher marks an outbox event once its deliveries exist (its fan-out), in the
-- transaction that inserts them. An event relayed to BullMQ whose job Redis then lost is found by
-- this mark and fanned out again by the dispatcher's sweep; fan-out is idempotent.
ALTER TABLE outbox_events ADD COLUMN fanned_out_at timestamptz(3);
UPDATE outbox_events SET fanned_out_at = relayed_at WHERE relayed_at IS NOT NULL;
-- Relayed events not fanned out yet: what the sweep scans.
CREATE INDEX outbox_events_unfanned_idx ON outbox_events (relayed_at) WHERE fanned_out_at IS NULL;
-- Deliveries waiting for an attempt, by due time: what the sweep scans.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status IN ('pending', 'retrying');

-- migrate:down
DROP INDEX webhook_deliveries_due_idx;
DROP INDEX outbox_events_unfanned_idx;
ALTER TABLE outbox_events DROP COLUMN fanned_out_at;
