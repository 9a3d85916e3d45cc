import type { Sort } from '@recordbase/contracts/records';
import { SqlParams } from '@recordbase/db/physical';
import { type KeyValue, keysetAfterSql, orderBySql, sortKeys } from '@recordbase/domain/records/sort-order';
import { buildTableMeta } from '@recordbase/domain/records/table-meta';

/** The keyset condition of a cursor, generated from the same keys as the ORDER BY. */

const table = buildTableMeta({
  databaseId: 'db',
  schemaName: 'base_x',
  id: 'tbl',
  name: 'T',
  primaryFieldId: 'fldName',
  fields: [
    { id: 'fldName', name: 'Name', type: 'single_line_text', template: {} },
    { id: 'fldCount', name: 'Count', type: 'number', template: {} },
  ],
});

function keyset(sort: Sort[] | undefined, values: KeyValue[]) {
  const params = new SqlParams();
  const keys = sortKeys(sort, table);
  return { sql: keysetAfterSql(keys, values, params), params: params.values, order: orderBySql(keys) };
}

describe('keysetAfterSql', () => {
  it('is one row comparison in the default order, which the (created_at, seq) index serves', () => {
    const { sql, params, order } = keyset(undefined, ['2024-01-01T00:00:00.000000Z', '42']);
    expect(order).toBe('r.created_at ASC, r.seq ASC');
    expect(sql).toBe('(r.created_at, r.seq) > ($1::timestamptz, $2::bigint)');
    expect(params).toEqual(['2024-01-01T00:00:00.000000Z', '42']);
  });

  it('is a row comparison ascending past a value, empty values coming first', () => {
    expect(keyset([{ field: 'Count', direction: 'asc' }], ['1.5', '7']).sql).toBe(
      '(r."fldCount", r.seq) > ($1::double precision, $2::bigint)',
    );
  });

  it('after an empty value ascending, takes the later empty values and every other value', () => {
    expect(keyset([{ field: 'Count', direction: 'asc' }], [null, '7']).sql).toBe(
      '(r."fldCount" IS NOT NULL OR (r."fldCount" IS NULL AND r.seq > $1::bigint))',
    );
  });

  it('descending, takes smaller values and the empty ones, which come last', () => {
    expect(keyset([{ field: 'Count', direction: 'desc' }], ['1.5', '7']).sql).toBe(
      '((r."fldCount" < $1::double precision OR r."fldCount" IS NULL) OR (r."fldCount" = $1::double precision AND r.seq > $2::bigint))',
    );
    expect(keyset([{ field: 'Count', direction: 'desc' }], [null, '7']).sql).toBe(
      '(r."fldCount" IS NULL AND r.seq > $1::bigint)',
    );
  });

  it('with mixed directions, bounds the leading run and spells out the rest', () => {
    const { sql } = keyset(
      [
        { field: 'Name', direction: 'asc' },
        { field: 'Count', direction: 'desc' },
      ],
      ['a', '2', '7'],
    );
    expect(sql).toBe(
      '(r."fldName" COLLATE "C" >= $1::text AND (r."fldName" COLLATE "C" > $1::text OR (r."fldName" COLLATE "C" = $1::text AND ((r."fldCount" < $2::double precision OR r."fldCount" IS NULL) OR (r."fldCount" = $2::double precision AND r.seq > $3::bigint)))))',
    );
  });

  it('wants one value per key', () => {
    expect(() => keyset(undefined, ['2024-01-01T00:00:00.000000Z'])).toThrow();
  });
});
