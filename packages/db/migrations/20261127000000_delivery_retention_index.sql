-- migrate:up
-- Retention deletes closed deliveries some time after their last change (once their attempts
-- are gone). Without this index each of its batches reads the whole table; with it, only the
-- deliveries past the span. Partial: open deliveries are never its concern.
CREATE INDEX webhook_deliveries_closed_updated_at_idx ON webhook_deliveries (updated_at)
  WHERE status IN ('succeeded', 'failed');

-- migrate:down
DROP INDEX webhook_deliveries_closed_updated_at_idx;
