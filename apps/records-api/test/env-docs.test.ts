import { resolve } from 'node:path';
import { envTableProblems, readEnvTable } from '@recordbase/server-kit/env-docs';
import { recordsApiEnvSchema } from '../src/config';

const rows = readEnvTable(resolve(__dirname, '../../../README.md'));

describe("README.md's environment table", () => {
  it('lists exactly the variables records-api reads', () => {
    expect(envTableProblems('records-api', recordsApiEnvSchema, rows)).toEqual([]);
  });
});
