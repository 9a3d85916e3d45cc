import { type Harness, startHarness } from './harness';
import { deeplyNested, expectRefused, type HostileRequest, transportCases } from './hostile';

/** API-key routes against NUL bytes, bad encodings, huge and nested values, wrong types. */

let h: Harness;
let root: string;

beforeAll(async () => {
  h = await startHarness();
  root = h.bearer(h.rootKey);
});
afterAll(() => h.close());

const valid = { name: 'k', scopes: ['records:read'] };
const create = { method: 'post' as const, path: '/api-keys' };

const cases: HostileRequest[] = [
  {
    name: 'an id that is not a UUID',
    method: 'delete',
    path: '/api-keys/not-a-uuid',
    status: 400,
    mentions: /UUID/,
  },
  { name: 'NUL in the id of the path', method: 'delete', path: '/api-keys/%00', status: 400 },
  {
    name: 'a malformed percent-encoding in the id',
    method: 'delete',
    path: '/api-keys/%E0%A4%A',
    status: 400,
  },
  { name: 'NUL in a name', ...create, body: { ...valid, name: 'a\u0000' } },
  { name: 'a control character in a name', ...create, body: { ...valid, name: 'a\u001b[31m' } },
  { name: 'an unknown scope', ...create, body: { ...valid, scopes: ['records:admin'] } },
  { name: 'NUL in a scope', ...create, body: { ...valid, scopes: ['records:read\u0000'] } },
  { name: 'a repeated scope', ...create, body: { ...valid, scopes: ['records:read', 'records:read'] } },
  {
    name: 'NUL in a database id',
    ...create,
    body: { ...valid, databaseIds: ['00000000-0000-4000-8000-000000000000\u0000'] },
  },
  {
    name: '10,000 database ids',
    ...create,
    body: { ...valid, databaseIds: Array(10_000).fill('00000000-0000-4000-8000-000000000000') },
  },
  {
    name: 'a database that does not exist',
    ...create,
    body: { ...valid, databaseIds: ['00000000-0000-4000-8000-000000000000'] },
  },
  {
    name: 'scopes nested 100,000 deep',
    ...create,
    body: `{"name":"k","scopes":${deeplyNested(100_000, '"records:read"')}}`,
  },
  ...transportCases(create, valid),
];

describe('API-key routes refuse hostile input, writing nothing', () => {
  it.each(cases.map((c, index) => [c.name, index]))('%s', async (_name, index) => {
    await expectRefused(h, cases[index as number]!, root);
  });
});
