-- migrate:up
-- The first upsert on a set of matchOn fields used to build a btree index on their raw values,
-- named <tableId>_match_<12 hex>. A btree row holds about 2.7 kB, so once such an index existed,
-- writing a longer text to its fields failed with a 500 although the API accepts 100,000
-- characters. The service now builds <tableId>_mx_<12 hex> indexes on hashes of text instead;
-- every old one goes, on every table of every database.
DO $$
DECLARE
  unsafe record;
BEGIN
  FOR unsafe IN
    SELECT n.nspname AS schema_name, c.relname AS index_name
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
      JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname LIKE 'base\_%'
       AND c.relname = t.relname || '_match_' || substring(c.relname FROM '[0-9a-f]{12}$')
  LOOP
    EXECUTE format('DROP INDEX %I.%I', unsafe.schema_name, unsafe.index_name);
  END LOOP;
END
$$;

-- migrate:down
-- Nothing to restore: the dropped indexes only sped lookups up, and they broke valid writes.
