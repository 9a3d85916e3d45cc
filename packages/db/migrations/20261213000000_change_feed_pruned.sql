-- migrate:up
-- Where retention has cut each database's change feed (outbox/changes.ts): the latest feed
-- position of an event it deleted. The prune statement writes it with the deletion, so a reader
-- whose cursor is at or past it misses nothing, and one before it is told its cursor expired
-- (410 CURSOR_EXPIRED) rather than skipping what was pruned. Pruning is not in feed order (an
-- event with an open delivery stays longer), hence the maximum, never a count.
CREATE TABLE change_feed_pruned (
  database_id uuid PRIMARY KEY,
  xid xid8 NOT NULL,
  seq bigint NOT NULL,
  pruned_at timestamptz(3) NOT NULL DEFAULT now()
);

-- migrate:down
DROP TABLE change_feed_pruned;
