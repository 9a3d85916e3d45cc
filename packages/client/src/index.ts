/** The typed client of recordbase; Node-only helpers are in `@recordbase/client/node`. */
export type { ApiKey, CreatedApiKey } from '@recordbase/contracts/api-keys';
export type { ChangesPage } from '@recordbase/contracts/changes';
export type { ErrorCode } from '@recordbase/contracts/errors';
export type { ChangeEvent, EventEnvelope } from '@recordbase/contracts/events';
export type { Field } from '@recordbase/contracts/fields';
export type { HistoryPage, RestoredSchema, Revision, SchemaTrash } from '@recordbase/contracts/history';
export type { ImportStatus } from '@recordbase/contracts/imports';
export type {
  AggregateRecordsResponse,
  BulkRecordsResponse,
  Filter,
  ListRecordsResponse,
  TableRecord,
} from '@recordbase/contracts/records';
export type { Database, Table } from '@recordbase/contracts/schema';
export type { SqlQueryResponse } from '@recordbase/contracts/sql';
export type { AttachmentUploadResult, ImportFileUploadResult } from '@recordbase/contracts/uploads';
export type { View } from '@recordbase/contracts/views';
export type {
  CreatedWebhook,
  Webhook,
  WebhookDeliveryAttempt,
  WebhookEventType,
} from '@recordbase/contracts/webhooks';
export type {
  ChangesFilterOptions,
  ListChangesOptions,
  StreamChangesOptions,
  StreamedChange,
} from './changes-api';
export { RecordbaseClient, type RecordbaseClientOptions } from './client';
export {
  type ClientErrorCode,
  isRecordbaseError,
  RecordbaseApiError,
  RecordbaseError,
  type RecordbaseErrorCode,
  RecordbaseNetworkError,
  RecordbaseResponseError,
} from './errors';
export type {
  HistoryOptions,
  IterateRecordsInput,
  ReadOptions,
  RestoredRecords,
  TrashedRecord,
  TrashOptions,
  TrashPage,
  WriteOptions,
} from './records-api';
export type * from './requests';
export { DEFAULT_RETRY_POLICY, parseRetryAfter, type RetryPolicy } from './retry';
export type { CallOptions } from './transport';
export type { AttachmentTarget, UploadOptions } from './uploads-api';
export {
  DEFAULT_TOLERANCE_SECONDS,
  type VerifyOptions,
  verifyWebhook,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
  WebhookVerifier,
} from './webhook-verifier';
