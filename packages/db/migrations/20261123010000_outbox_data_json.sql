-- migrate:up
-- Events are written once and read back as text: json keeps the text exactly as the API rendered
-- it and spares every write jsonb's conversion.
ALTER TABLE outbox_events ALTER COLUMN data TYPE json USING data::json;

-- migrate:down
ALTER TABLE outbox_events ALTER COLUMN data TYPE jsonb USING data::jsonb;
