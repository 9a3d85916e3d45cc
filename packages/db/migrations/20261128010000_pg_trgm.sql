-- migrate:up
-- Trigram indexes serve `contains`, `starts_with` and `ends_with` filters (ILIKE) on text fields;
-- records-api builds them on the fields that are filtered that way.
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

-- migrate:down
DROP EXTENSION IF EXISTS pg_trgm;
