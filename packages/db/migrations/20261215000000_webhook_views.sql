-- migrate:up
-- A webhook may hear a table's record events through a saved view (`view_id`): only the records in
-- the view before or after each write, each with whether it was and is in it. A record event of a
-- table whose views webhooks watch carries, per watched view, the ids of its records inside the
-- view before and after the write (`view_members`, {"<viewId>": {"before": [...], "after": [...]}}),
-- worked out in the write's transaction by the view's own filter; null when no view is watched.
ALTER TABLE webhooks ADD COLUMN view_id text;
ALTER TABLE outbox_events ADD COLUMN view_members jsonb;
DROP TRIGGER webhooks_subscriptions_updated ON webhooks;
CREATE TRIGGER webhooks_subscriptions_updated
  AFTER UPDATE ON webhooks
  FOR EACH ROW
  WHEN (OLD.database_id IS DISTINCT FROM NEW.database_id
     OR OLD.table_id IS DISTINCT FROM NEW.table_id
     OR OLD.url IS DISTINCT FROM NEW.url
     OR OLD.events IS DISTINCT FROM NEW.events
     OR OLD.field_ids IS DISTINCT FROM NEW.field_ids
     OR OLD.view_id IS DISTINCT FROM NEW.view_id
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
     OR OLD.field_ids IS DISTINCT FROM NEW.field_ids
     OR OLD.secret_ciphertext IS DISTINCT FROM NEW.secret_ciphertext
     OR OLD.active IS DISTINCT FROM NEW.active
     OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION rb_bump_webhook_subscriptions();
ALTER TABLE outbox_events DROP COLUMN view_members;
ALTER TABLE webhooks DROP COLUMN view_id;
