-- migrate:up
-- One switch for history and the record trash, for installations that do not want them and for
-- benchmarks that compare: `ALTER DATABASE … SET recordbase.history = 'off'` (new connections see
-- it). Off, record events write no revisions and deletes keep no rows in the trash; webhooks, the
-- events themselves and their retention are unchanged.
DROP TRIGGER outbox_events_record_revisions ON outbox_events;
CREATE TRIGGER outbox_events_record_revisions
  AFTER INSERT ON outbox_events
  FOR EACH ROW
  WHEN (NEW.type IN ('record.created', 'record.updated', 'record.deleted') AND NEW.source <> 'dependency'
        AND NEW.table_id IS NOT NULL
        AND current_setting('recordbase.history', true) IS DISTINCT FROM 'off')
  EXECUTE FUNCTION rb_record_revisions_append();

-- migrate:down
DROP TRIGGER outbox_events_record_revisions ON outbox_events;
CREATE TRIGGER outbox_events_record_revisions
  AFTER INSERT ON outbox_events
  FOR EACH ROW
  WHEN (NEW.type IN ('record.created', 'record.updated', 'record.deleted') AND NEW.source <> 'dependency'
        AND NEW.table_id IS NOT NULL)
  EXECUTE FUNCTION rb_record_revisions_append();
