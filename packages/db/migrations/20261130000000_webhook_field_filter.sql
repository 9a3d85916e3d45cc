-- migrate:up
-- A webhook may hear record.updated only when one of its fields changed (`field_ids`, empty: any
-- change); each record.updated event lists the fields its records changed, so the dispatcher
-- matches the two without reading the event's data.
ALTER TABLE webhooks ADD COLUMN field_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE outbox_events ADD COLUMN changed_field_ids text[] NOT NULL DEFAULT '{}';
DROP TRIGGER webhooks_subscriptions_updated ON webhooks;
CREATE TRIGGER webhooks_subscriptions_updated
  AFTER UPDATE ON webhooks
  FOR EACH ROW
  WHEN (OLD.database_id IS DISTINCT FROM NEW.database_id
     OR OLD.table_id IS DISTINCT FROM NEW.table_id
     OR OLD.url IS DISTINCT FROM NEW.url
     OR OLD.events IS DISTINCT FROM NEW.events
     OR OLD.field_ids IS DISTINCT FROM NEW.field_ids
     OR OLD.secret_ciphertext IS DISTINCT FROM NEW.secret_ciphertext
     OR OLD.active IS DISTINCT FROM NEW.active
     OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION rb_bump_webhook_subscriptions();

-- migrate:down
DROP TRIGGER webhooks_subscriptions_updated ON webhooks;
CREATE TRIGGER webhooks_subscriptions_updated
  AFTER UPDATE ON webhooks
  FOR EACH ROW
  WHEN (OLD.database_id IS DISTINCT FROM NEW.database_id
     OR OLD.table_id IS DISTINCT FROM NEW.table_id
     OR OLD.url IS DISTINCT FROM NEW.url
     OR OLD.events IS DISTINCT FROM NEW.events
     OR OLD.secret_ciphertext IS DISTINCT FROM NEW.secret_ciphertext
     OR OLD.active IS DISTINCT FROM NEW.active
     OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION rb_bump_webhook_subscriptions();
ALTER TABLE outbox_events DROP COLUMN changed_field_ids;
ALTER TABLE webhooks DROP COLUMN field_ids;
