import type { TableRecord } from '@recordbase/contracts/records';
import type { Harness } from './harness';

/**
 * The schema and record calls tests of one base make again and again, each checking its status:
 * a table with its fields, a record created, updated or listed.
 */

export interface FieldBody {
  id: string;
  name: string;
  type: string;
  template: Record<string, unknown>;
  resultType?: string;
}

/** `harness`, `baseId` and `rootAuth` are read at each call: tests set them up in beforeAll. */
export function baseClient(harness: () => Harness, baseId: () => string, rootAuth: () => string) {
  const url = (path = '') => `/api/v1/bases/${baseId()}${path}`;
  return {
    url,
    async newTable(name: string, fields: object[]) {
      const res = await harness()
        .api.post(url('/tables'))
        .set('Authorization', rootAuth())
        .send({ name, fields });
      // The refusal's words, when there is one, say more than its status.
      if (res.status !== 201) expect(res.body.error?.message).toBe(`table ${name} created`);
      return res.body as { id: string; fields: FieldBody[] };
    },
    /** POST .../fields: the answer as it is, for the test to check (refusals too). */
    addField(tableId: string, field: object) {
      return harness()
        .api.post(url(`/tables/${tableId}/fields`))
        .set('Authorization', rootAuth())
        .send(field);
    },
    async create(tableId: string, record: object, auth = rootAuth()) {
      const res = await harness()
        .api.post(url(`/tables/${tableId}/records`))
        .set('Authorization', auth)
        .send({ record });
      expect([res.status, res.body.error?.message]).toEqual([201, undefined]);
      return res.body as TableRecord;
    },
    async update(tableId: string, id: string, record: object, auth = rootAuth()) {
      const res = await harness()
        .api.patch(url(`/tables/${tableId}/records/${id}`))
        .set('Authorization', auth)
        .send({ record });
      expect([res.status, res.body.error?.message]).toEqual([200, undefined]);
      return res.body as TableRecord;
    },
    async list(tableId: string, body: object = {}) {
      const res = await harness()
        .api.post(url(`/tables/${tableId}/records/list`))
        .set('Authorization', rootAuth())
        .send({ limit: 100, ...body });
      expect([res.status, res.body.error?.message]).toEqual([200, undefined]);
      return res.body.records as TableRecord[];
    },
  };
}
