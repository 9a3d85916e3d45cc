-- migrate:up
-- Metadata of recordbase. User data lives in one PostgreSQL schema per database (see src/physical).

CREATE TABLE databases (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  schema_name text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX databases_schema_name_key ON databases (schema_name);

CREATE TABLE tables (
  id text PRIMARY KEY,
  database_id uuid NOT NULL REFERENCES databases (id) ON DELETE CASCADE ON UPDATE CASCADE,
  name text NOT NULL,
  name_key text NOT NULL,
  primary_field_id text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tables_database_id_name_key_key ON tables (database_id, name_key);

CREATE TABLE fields (
  id text PRIMARY KEY,
  table_id text NOT NULL REFERENCES tables (id) ON DELETE CASCADE ON UPDATE CASCADE,
  name text NOT NULL,
  name_key text NOT NULL,
  type text NOT NULL,
  template jsonb NOT NULL DEFAULT '{}',
  position integer NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX fields_table_id_name_key_key ON fields (table_id, name_key);
CREATE INDEX fields_table_id_position_idx ON fields (table_id, position);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  prefix text NOT NULL,
  hash text NOT NULL,
  scopes text[] NOT NULL DEFAULT '{}',
  database_ids uuid[] NOT NULL DEFAULT '{}',
  all_databases boolean NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  last_used_at timestamptz(3)
);
CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (hash);

CREATE TABLE webhooks (
  id serial PRIMARY KEY,
  database_id uuid NOT NULL REFERENCES databases (id) ON DELETE CASCADE ON UPDATE CASCADE,
  table_id text REFERENCES tables (id) ON DELETE CASCADE ON UPDATE CASCADE,
  url text NOT NULL,
  events text[] NOT NULL DEFAULT '{}',
  secret_ciphertext text NOT NULL,
  active boolean NOT NULL DEFAULT true,
  failing_since timestamptz(3),
  last_success_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_database_id_idx ON webhooks (database_id);

CREATE TABLE outbox_events (
  id uuid PRIMARY KEY,
  seq bigserial NOT NULL,
  database_id uuid NOT NULL,
  table_id text,
  type text NOT NULL,
  source text NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  relayed_at timestamptz(3)
);
CREATE UNIQUE INDEX outbox_events_seq_key ON outbox_events (seq);

CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  event_id uuid NOT NULL,
  webhook_id integer NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE ON UPDATE CASCADE,
  event_type text NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  last_status_code integer,
  next_attempt_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX webhook_deliveries_event_id_webhook_id_key ON webhook_deliveries (event_id, webhook_id);
CREATE INDEX webhook_deliveries_webhook_id_created_at_idx ON webhook_deliveries (webhook_id, created_at);

CREATE TABLE webhook_delivery_attempts (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE ON UPDATE CASCADE,
  attempt integer NOT NULL,
  status_code integer,
  duration_ms integer NOT NULL,
  error_kind text,
  error text,
  response_excerpt text,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX webhook_delivery_attempts_delivery_id_idx ON webhook_delivery_attempts (delivery_id);

CREATE TABLE uploaded_files (
  id uuid PRIMARY KEY,
  key text NOT NULL,
  kind text NOT NULL,
  database_id uuid,
  table_id text,
  field_id text,
  file_name text NOT NULL,
  size bigint NOT NULL,
  mime_type text NOT NULL,
  api_key_id uuid,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX uploaded_files_key_key ON uploaded_files (key);

CREATE TABLE imports (
  id uuid PRIMARY KEY,
  database_id uuid NOT NULL REFERENCES databases (id) ON DELETE CASCADE ON UPDATE CASCADE,
  s3_key text NOT NULL,
  table_id text,
  table_name text,
  sheet text,
  first_row_is_header boolean NOT NULL DEFAULT true,
  status text NOT NULL,
  rows_imported integer NOT NULL DEFAULT 0,
  rows_total integer,
  errors jsonb NOT NULL DEFAULT '[]',
  skipped_columns jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX imports_database_id_idx ON imports (database_id);

-- Events not yet handed to BullMQ, oldest first: what the relay scans.
CREATE INDEX outbox_events_unrelayed_idx ON outbox_events (seq) WHERE relayed_at IS NULL;

-- Raised from field type conversions (src/physical/conversions.ts) for a value that has no
-- faithful counterpart in the new type, so the conversion aborts instead of losing data.
CREATE FUNCTION rb_conversion_failed(value text, target text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = '22023',
    MESSAGE = format('cannot convert %s to %s', quote_literal(left(value, 100)), target);
END
$$;

-- migrate:down
DROP FUNCTION rb_conversion_failed(text, text);
DROP TABLE imports, uploaded_files, webhook_delivery_attempts, webhook_deliveries, outbox_events,
  webhooks, api_keys, fields, tables, databases;
