-- migrate:up
-- The API key that started the import (null: the root key). A key that may write records but not
-- read them sees only the imports it started: a status quotes the cells that did not fit, which
-- are record data. Imports started before this column existed get their upload's key, which
-- started them unless the root key did.
ALTER TABLE imports ADD COLUMN api_key_id uuid;
UPDATE imports i SET api_key_id = u.api_key_id FROM uploaded_files u WHERE u.key = i.s3_key;

-- migrate:down
ALTER TABLE imports DROP COLUMN api_key_id;
