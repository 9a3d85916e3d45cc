import {
  eventDataSchemaByType,
  eventEnvelopeSchema,
  fieldEventTypes,
  recordEventTypes,
  tableEventTypes,
  toDeliveredEventId,
  webhookHeaders,
} from '../src/events';
import { webhookEventTypes } from '../src/webhooks';

const eventUuid = '0190f2a4-5b6c-7d8e-9f00-112233445566';
const metadata = {
  webhookId: 4,
  baseId: '5f0c6a0e-2b8e-4f7e-9a34-0f7d2a1b3c4d',
  attempt: 1,
  source: 'public_api',
};
const record = {
  id: '0190f2a4-5b6c-7d8e-9f00-aabbccddeeff',
  data: { fldAAAAAAAAAAAA1: 'Ada' },
  fields: { Name: 'Ada' },
  createdAt: '2024-05-01T12:00:00.000Z',
  updatedAt: '2024-05-01T12:00:00.000Z',
};
const field = { id: 'fldAAAAAAAAAAAA1', name: 'Name', type: 'single_line_text', template: {} };
const table = {
  id: 'tblAAAAAAAAAAAA1',
  name: 'People',
  primaryFieldId: field.id,
  fields: [field],
  createdAt: '2024-05-01T12:00:00.000Z',
  updatedAt: '2024-05-01T12:00:00.000Z',
};

function envelope(type: string, data: unknown) {
  return { id: toDeliveredEventId(eventUuid), type, timestamp: '2024-05-01T12:00:00.000Z', data, metadata };
}

describe('event envelope', () => {
  it('uses the Standard Webhooks header names', () => {
    expect(webhookHeaders).toEqual({
      id: 'webhook-id',
      timestamp: 'webhook-timestamp',
      signature: 'webhook-signature',
    });
  });

  it('gives every subscribable event type exactly one kind of data', () => {
    const kinds = [...recordEventTypes, ...tableEventTypes, ...fieldEventTypes];
    expect([...kinds].sort()).toEqual([...webhookEventTypes].sort());
    expect(Object.keys(eventDataSchemaByType).sort()).toEqual([...webhookEventTypes].sort());
  });

  it('accepts record, table and field events', () => {
    const recordData = { tableId: table.id, recordIds: [record.id], records: [record] };
    expect(eventEnvelopeSchema.parse(envelope('record.deleted', recordData))).toMatchObject({
      type: 'record.deleted',
    });
    expect(eventEnvelopeSchema.safeParse(envelope('table.created', { table })).success).toBe(true);
    expect(
      eventEnvelopeSchema.safeParse(envelope('field.updated', { tableId: table.id, field })).success,
    ).toBe(true);
  });

  it('rejects data of the wrong kind for the type', () => {
    expect(eventEnvelopeSchema.safeParse(envelope('record.created', { table })).success).toBe(false);
    expect(eventEnvelopeSchema.safeParse(envelope('field.created', { table })).success).toBe(false);
    expect(eventEnvelopeSchema.safeParse(envelope('record.exploded', { table })).success).toBe(false);
  });

  it('requires an evt_<uuid> id and a known source', () => {
    const good = envelope('table.created', { table });
    expect(eventEnvelopeSchema.safeParse({ ...good, id: eventUuid }).success).toBe(false);
    expect(
      eventEnvelopeSchema.safeParse({ ...good, metadata: { ...metadata, source: 'import' } }).success,
    ).toBe(true);
    expect(eventEnvelopeSchema.safeParse({ ...good, metadata: { ...metadata, source: 'sql' } }).success).toBe(
      false,
    );
  });
});
