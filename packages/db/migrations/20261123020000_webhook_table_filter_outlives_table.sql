-- migrate:up
-- A webhook filtered on a table must still hear that table's deletion. With a cascading key it
-- vanished in the same transaction as the table, before its table.deleted event could reach it;
-- now it outlives the table (and matches nothing more afterwards).
ALTER TABLE webhooks DROP CONSTRAINT webhooks_table_id_fkey;

-- migrate:down
ALTER TABLE webhooks ADD CONSTRAINT webhooks_table_id_fkey
  FOREIGN KEY (table_id) REFERENCES tables (id) ON DELETE CASCADE ON UPDATE CASCADE;
