/**
 * Sample values of the reference's examples. They are checked against the contracts by
 * test/openapi.document.test.ts, so an example cannot drift from what the service accepts.
 */

export const DATABASE_ID = '0b5e3a52-7c1d-4f0e-9a3b-2f6d8c4e1a90';
export const TABLE_ID = 'tblq2W8rT5yU7iO9pA';
export const RECORD_ID = '5f0c7d2e-3b1a-4c8e-9f6d-1a2b3c4d5e6f';
export const FIELD_IDS = {
  name: 'fldN4mE8kLx2Qw7Ze',
  status: 'fldSt4tU5s9Xc3Vb1',
  amount: 'fldAm0uNt6Hj8Kl2P',
};
export const API_KEY_ID = '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a';
export const IMPORT_ID = 'c3d2e1f0-a9b8-4c7d-8e6f-5a4b3c2d1e0f';
const AT = '2026-05-01T12:00:00.000Z';

export const fields = [
  { id: FIELD_IDS.name, name: 'Name', type: 'single_line_text', template: {} },
  {
    id: FIELD_IDS.status,
    name: 'Status',
    type: 'single_select',
    template: {
      options: [
        { name: 'Open', color: 'blue' },
        { name: 'Won', color: 'green' },
      ],
    },
  },
  {
    id: FIELD_IDS.amount,
    name: 'Amount',
    type: 'currency',
    template: { decimalPlaces: 2, currencySymbol: '€' },
  },
];

export const table = {
  id: TABLE_ID,
  name: 'Deals',
  primaryFieldId: FIELD_IDS.name,
  fields,
  createdAt: AT,
  updatedAt: AT,
};

export const database = { id: DATABASE_ID, name: 'Sales', tables: [table], createdAt: AT, updatedAt: AT };

export const record = {
  id: RECORD_ID,
  data: { [FIELD_IDS.name]: 'Acme renewal', [FIELD_IDS.status]: 'Open', [FIELD_IDS.amount]: 1250.5 },
  fields: { Name: 'Acme renewal', Status: 'Open', Amount: 1250.5 },
  createdAt: AT,
  updatedAt: AT,
};

export const recordValues = { Name: 'Acme renewal', Status: 'Open', Amount: 1250.5 };

/**
 * The example record's history, newest first: a key moving its Status to Won, then its creation
 * (the fields it was created with, each from null). A revision id is `<event>-<place in the event>`.
 */
const author = { id: API_KEY_ID, name: 'CRM sync' };
export const revisions = [
  {
    id: '1042-1',
    recordId: RECORD_ID,
    at: '2026-05-02T09:30:00.000Z',
    action: 'updated',
    by: author,
    source: 'public_api',
    changes: { [FIELD_IDS.status]: { before: 'Open', after: 'Won' } },
  },
  {
    id: '1017-1',
    recordId: RECORD_ID,
    at: AT,
    action: 'created',
    by: author,
    source: 'public_api',
    changes: {
      [FIELD_IDS.name]: { before: null, after: 'Acme renewal' },
      [FIELD_IDS.status]: { before: null, after: 'Open' },
      [FIELD_IDS.amount]: { before: null, after: 1250.5 },
    },
  },
];

/**
 * The example record after that history (Status Won), as the table's trash lists it once the same
 * key deleted it, and as a restore brings it back: the same id, createdAt and values.
 */
const wonRecord = {
  ...record,
  data: { ...record.data, [FIELD_IDS.status]: 'Won' },
  fields: { ...record.fields, Status: 'Won' },
  updatedAt: '2026-05-02T09:30:00.000Z',
};
export const trashedRecord = { record: wonRecord, deletedAt: '2026-05-03T16:45:00.000Z', deletedBy: author };
export const restoredRecord = wonRecord;

/**
 * The example database's trash: a Contacts table deleted with its fields, and the Stage field that
 * Add a field's example adds to Deals, deleted on its own, both by the same key; restored, they come
 * back as they were (the table's updatedAt is the restore's).
 */
export const CONTACTS_TABLE_ID = 'tblC0nT4cTs8Lm3Nb';
export const STAGE_FIELD_ID = 'fldSt4g3Qw8Er5Ty1';
const contactsTable = {
  id: CONTACTS_TABLE_ID,
  name: 'Contacts',
  primaryFieldId: 'fldC0nT4cTn4Me5Xy',
  fields: [
    { id: 'fldC0nT4cTn4Me5Xy', name: 'Name', type: 'single_line_text', template: {} },
    { id: 'fldEm4iL7Rt2Yu9Io', name: 'Email', type: 'email', template: {} },
  ],
  createdAt: AT,
  updatedAt: AT,
};
const stageField = {
  id: STAGE_FIELD_ID,
  name: 'Stage',
  type: 'single_select',
  template: {
    options: [
      { name: 'Lead', color: 'gray' },
      { name: 'Proposal', color: 'yellow' },
    ],
  },
};
export const schemaTrash = {
  tables: [{ ...contactsTable, deletedAt: '2026-05-03T16:45:00.000Z', deletedBy: author }],
  fields: [{ ...stageField, tableId: TABLE_ID, deletedAt: '2026-05-03T16:40:00.000Z', deletedBy: author }],
};
export const restoredSchema = {
  tables: [{ ...contactsTable, updatedAt: '2026-05-04T08:15:00.000Z' }],
  fields: [stageField],
};

export const apiKey = {
  id: API_KEY_ID,
  name: 'CRM sync',
  prefix: 'rb_live_4f9a',
  scopes: ['records:read', 'records:write'],
  databaseIds: [DATABASE_ID],
  createdAt: AT,
  lastUsedAt: null,
};

export const webhook = {
  id: 42,
  url: 'https://hooks.example.com/recordbase',
  events: ['record.created', 'record.updated'],
  tableId: TABLE_ID,
  fieldIds: null,
  viewId: null,
  active: true,
  createdAt: AT,
  updatedAt: AT,
};

export const deliveryAttempt = {
  deliveryId: '1093',
  eventId: 'evt_7e1f0b3c-2d4a-4b5c-9d6e-8f7a6b5c4d3e',
  eventType: 'record.created',
  attempt: 1,
  statusCode: 200,
  succeeded: true,
  durationMs: 84,
  error: null,
  attemptedAt: AT,
};

export const importStatus = {
  id: IMPORT_ID,
  status: 'succeeded',
  tableId: TABLE_ID,
  rowsImported: 1200,
  rowsTotal: 1201,
  skippedColumns: ['Notes (old)'],
  errors: [{ row: 87, column: 'Amount', message: 'must be a number' }],
  createdAt: AT,
  updatedAt: AT,
};

export const eventMetadata = { webhookId: 42, baseId: DATABASE_ID, attempt: 1, source: 'public_api' };
export const EVENT_ID = 'evt_7e1f0b3c-2d4a-4b5c-9d6e-8f7a6b5c4d3e';
export const AT_EXAMPLE = AT;

/** A saved view of Deals: the open deals over 1,000, largest first, three fields. */
export const view = {
  id: 'viwOp3nD34ls7Qx2',
  name: 'Open deals',
  filter: {
    and: [
      { field: FIELD_IDS.status, equals: 'Open' },
      { field: FIELD_IDS.amount, greater_than: 1000 },
    ],
  },
  sort: [{ field: FIELD_IDS.amount, direction: 'desc' }],
  fields: [FIELD_IDS.name, FIELD_IDS.status, FIELD_IDS.amount],
  search: null,
  createdAt: AT,
  updatedAt: AT,
};
