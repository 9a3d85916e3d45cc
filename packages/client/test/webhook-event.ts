import { randomBytes, randomUUID } from 'node:crypto';

/** A fresh Standard Webhooks signing secret, as the service hands one out. */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** A `table.created` event as the dispatcher delivers it, for the verifier's tests. */
export function tableCreatedEvent(tableName: string) {
  return {
    id: `evt_${randomUUID()}`,
    type: 'table.created',
    timestamp: new Date().toISOString(),
    data: {
      table: {
        id: 'tblAbCdEfGhIjKlMn',
        name: tableName,
        primaryFieldId: 'fldAbCdEfGhIjKlMn',
        fields: [{ id: 'fldAbCdEfGhIjKlMn', name: 'Name', type: 'single_line_text', template: {} }],
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
      },
    },
    metadata: { webhookId: 7, baseId: randomUUID(), attempt: 1, source: 'public_api' },
  };
}
