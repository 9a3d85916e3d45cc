-- migrate:up
-- The bytes of a database's files, summed on every attachment upload under a storage quota
-- (STORAGE_QUOTA_BYTES_PER_DATABASE): an index-only scan of the database's rows, not of the table.
CREATE INDEX uploaded_files_database_id_size_idx ON uploaded_files (database_id, size);

-- migrate:down
DROP INDEX uploaded_files_database_id_size_idx;
