-- migrate:up
-- Exact row counts of user tables without scanning them: statement triggers on each physical
-- table append +n/-n rows here (no contention between writers); readers sum, and compact now
-- and then. MVCC makes the sum exactly as visible as the rows it counts.
CREATE TABLE table_row_counts (
  id bigserial PRIMARY KEY,
  table_id text NOT NULL,
  delta bigint NOT NULL
);
CREATE INDEX table_row_counts_table_id_idx ON table_row_counts (table_id);

CREATE FUNCTION rb_count_inserted_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.table_row_counts (table_id, delta)
  SELECT TG_ARGV[0], count(*) FROM inserted_rows HAVING count(*) > 0;
  RETURN NULL;
END
$$;

CREATE FUNCTION rb_count_deleted_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.table_row_counts (table_id, delta)
  SELECT TG_ARGV[0], -count(*) FROM deleted_rows HAVING count(*) > 0;
  RETURN NULL;
END
$$;

-- migrate:down
DROP FUNCTION rb_count_deleted_rows();
DROP FUNCTION rb_count_inserted_rows();
DROP TABLE table_row_counts;
