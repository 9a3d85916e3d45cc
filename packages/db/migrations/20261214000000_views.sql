-- migrate:up
-- Saved views (api-contract "Views"): a table's filter, sort, projection and search kept under a
-- name. Field references are stored by id (in `filter`, `sort` and `field_ids`), so a rename
-- changes nothing stored; a field a view uses cannot be deleted (domain views.ts).
CREATE TABLE views (
  id text PRIMARY KEY,
  table_id text NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
  name text NOT NULL,
  name_key text NOT NULL,
  filter jsonb,
  sort jsonb NOT NULL DEFAULT '[]',
  -- The projection, in order; empty: every field (a projection names at least one).
  field_ids text[] NOT NULL DEFAULT '{}',
  search text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT views_table_id_name_key_key UNIQUE (table_id, name_key)
);

-- migrate:down
DROP TABLE views;
