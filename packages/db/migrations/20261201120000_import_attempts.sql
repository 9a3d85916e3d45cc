-- migrate:up
-- How many runs have taken the import: each claim counts one, a run handed back by a worker shut
-- down gracefully does not. A file that kills the worker (out of memory) would otherwise be taken
-- up again forever, by BullMQ's stalled jobs and by the worker's sweep of lost runs; after 3 runs
-- the import fails instead (apps/records-api/src/imports/job.ts).
ALTER TABLE imports ADD COLUMN attempts integer NOT NULL DEFAULT 0;

-- migrate:down
ALTER TABLE imports DROP COLUMN attempts;
