-- migrate:up
-- A statement-level UPDATE trigger fires even when the statement changes nothing, and the
-- dispatcher updates webhooks' health (`active` among the columns it may set) with every batch
-- it records: each batch bumped the subscriptions version and made every dispatcher reload its
-- webhooks. Updates now bump it only for a row whose matching columns really changed.
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

-- migrate:down
DROP TRIGGER webhooks_subscriptions_updated ON webhooks;
CREATE TRIGGER webhooks_subscriptions_updated
  AFTER UPDATE OF database_id, table_id, url, events, secret_ciphertext, active, created_at ON webhooks
  FOR EACH STATEMENT EXECUTE FUNCTION rb_bump_webhook_subscriptions();
