-- migrate:up
-- When the orphan sweeper last found the file referenced by a record, so that it moves on to
-- other files instead of checking the same referenced ones on every run.
ALTER TABLE uploaded_files ADD COLUMN checked_at timestamptz(3);

-- migrate:down
ALTER TABLE uploaded_files DROP COLUMN checked_at;
