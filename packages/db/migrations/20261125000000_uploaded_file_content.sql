-- migrate:up
-- What an upload stored, as judged from its bytes: the SHA-256 of the content (the download's
-- ETag) and the name it was uploaded under, kept as data while the storage key is generated. The
-- orphan sweeper walks files by age.
ALTER TABLE uploaded_files ADD COLUMN sha256 text NOT NULL;
CREATE INDEX uploaded_files_created_at_idx ON uploaded_files (created_at);

-- migrate:down
DROP INDEX uploaded_files_created_at_idx;
ALTER TABLE uploaded_files DROP COLUMN sha256;
