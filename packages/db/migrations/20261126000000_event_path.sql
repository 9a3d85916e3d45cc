-- migrate:up
-- records-api now hands each committed event to the queue itself, and the dispatcher records an
-- event's deliveries (and marks it dispatched) after sending them, in one statement. The relay's
-- mark and the separate fan-out mark give way to one: `dispatched_at`. An event left without it
-- for long (its publish was lost: Redis away, records-api killed after the commit) is what the
-- dispatcher's sweep sends.
DROP INDEX IF EXISTS outbox_events_unrelayed_idx;
DROP INDEX IF EXISTS outbox_events_unfanned_idx;
ALTER TABLE outbox_events RENAME COLUMN fanned_out_at TO dispatched_at;
ALTER TABLE outbox_events DROP COLUMN relayed_at;
CREATE INDEX outbox_events_undispatched_idx ON outbox_events (created_at) WHERE dispatched_at IS NULL;

-- The dispatcher matches events against webhooks held in memory. Every change that could alter a
-- match bumps this version in the changing transaction, and the dispatcher reads it with each
-- batch of events: a cache older than an event's snapshot is reloaded before that event is
-- matched. A row, not a sequence, so the bump only shows once the change commits.
CREATE TABLE webhook_subscriptions_version (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version bigint NOT NULL
);
INSERT INTO webhook_subscriptions_version (version) VALUES (1);

CREATE FUNCTION rb_bump_webhook_subscriptions() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE webhook_subscriptions_version SET version = version + 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER webhooks_subscriptions_changed
  AFTER INSERT OR DELETE OR TRUNCATE ON webhooks
  FOR EACH STATEMENT EXECUTE FUNCTION rb_bump_webhook_subscriptions();
-- Health bookkeeping (last success, failure streak) does not change what matches.
CREATE TRIGGER webhooks_subscriptions_updated
  AFTER UPDATE OF database_id, table_id, url, events, secret_ciphertext, active, created_at ON webhooks
  FOR EACH STATEMENT EXECUTE FUNCTION rb_bump_webhook_subscriptions();

-- Retention finds closed deliveries by age.
CREATE INDEX webhook_delivery_attempts_created_at_idx ON webhook_delivery_attempts (created_at);
CREATE INDEX outbox_events_dispatched_at_idx ON outbox_events (dispatched_at) WHERE dispatched_at IS NOT NULL;

-- migrate:down
DROP INDEX outbox_events_dispatched_at_idx;
DROP INDEX webhook_delivery_attempts_created_at_idx;
DROP TRIGGER webhooks_subscriptions_updated ON webhooks;
DROP TRIGGER webhooks_subscriptions_changed ON webhooks;
DROP FUNCTION rb_bump_webhook_subscriptions();
DROP TABLE webhook_subscriptions_version;
DROP INDEX outbox_events_undispatched_idx;
ALTER TABLE outbox_events ADD COLUMN relayed_at timestamptz(3);
ALTER TABLE outbox_events RENAME COLUMN dispatched_at TO fanned_out_at;
CREATE INDEX outbox_events_unfanned_idx ON outbox_events (relayed_at) WHERE fanned_out_at IS NULL;
CREATE INDEX outbox_events_unrelayed_idx ON outbox_events (seq) WHERE relayed_at IS NULL;
