-- migrate:up
-- A table's write version: the sum of `writes` over its table_row_counts rows. Every statement
-- that changes what a filter can match (insert, update, delete of records; insert and delete of
-- its link rows; a conversion of a column) appends a row, so the sum grows with every committed
-- change and readers compare it to decide whether a count they keep is still exact. Appending
-- keeps writers free of contention; compaction folds rows and keeps the sum. Since what one
-- snapshot sees of the committed rows includes what any earlier snapshot saw, an equal sum
-- means an equal set of changes.
ALTER TABLE table_row_counts ADD COLUMN writes bigint NOT NULL DEFAULT 1;

-- One function for every trigger that changes no row count, only the version: updates of records
-- and inserts and deletes of link rows (which belong to the table of their field, TG_ARGV[0]).
-- Each trigger names its transition table changed_rows; a statement that changed nothing counts
-- no write.
CREATE FUNCTION rb_count_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.table_row_counts (table_id, delta)
  SELECT TG_ARGV[0], 0 WHERE EXISTS (SELECT FROM changed_rows);
  RETURN NULL;
END
$$;

-- The same triggers the DDL now creates (packages/db/src/physical/ddl.ts), on existing tables.
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT d.schema_name, tb.id FROM tables tb JOIN databases d ON d.id = tb.database_id
     WHERE to_regclass(format('%I.%I', d.schema_name, tb.id)) IS NOT NULL
  LOOP
    EXECUTE format(
      'CREATE TRIGGER count_updates AFTER UPDATE ON %I.%I REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION public.rb_count_write(%L)',
      t.schema_name, t.id, t.id);
  END LOOP;
  FOR t IN
    SELECT d.schema_name, f.id AS field_id, f.table_id FROM fields f
      JOIN tables tb ON tb.id = f.table_id JOIN databases d ON d.id = tb.database_id
     WHERE f.type = 'linked_record'
       AND to_regclass(format('%I.%I', d.schema_name, f.id || '_links')) IS NOT NULL
  LOOP
    EXECUTE format(
      'CREATE TRIGGER count_link_inserts AFTER INSERT ON %I.%I REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION public.rb_count_write(%L)',
      t.schema_name, t.field_id || '_links', t.table_id);
    EXECUTE format(
      'CREATE TRIGGER count_link_deletes AFTER DELETE ON %I.%I REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION public.rb_count_write(%L)',
      t.schema_name, t.field_id || '_links', t.table_id);
  END LOOP;
END
$$;

-- migrate:down
DO $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT tgrelid::regclass AS rel, tgname FROM pg_trigger
     WHERE tgname IN ('count_updates', 'count_link_inserts', 'count_link_deletes')
  LOOP
    EXECUTE format('DROP TRIGGER %I ON %s', t.tgname, t.rel);
  END LOOP;
END
$$;
DROP FUNCTION rb_count_write();
ALTER TABLE table_row_counts DROP COLUMN writes;
