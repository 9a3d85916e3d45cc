/**
 * Channel on which every schema change (a database, table or field created, changed or deleted)
 * NOTIFYs from its own transaction, so on commit only; the payload is empty. Every process that
 * keeps schema metadata in memory (records-api's tables, upload-service's attachment targets)
 * drops it all on a notification.
 */
export const SCHEMA_CHANNEL = 'recordbase_schema';
