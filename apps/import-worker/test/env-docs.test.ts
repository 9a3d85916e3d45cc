import { resolve } from 'node:path';
import { envTableProblems, readEnvTable } from '@recordbase/server-kit/env-docs';
import { importWorkerEnvSchema } from '../src/config';

describe("README.md's environment table", () => {
  it('lists exactly the variables the import worker reads', () => {
    const rows = readEnvTable(resolve(__dirname, '../../../README.md'));
    expect(envTableProblems('import-worker', importWorkerEnvSchema, rows)).toEqual([]);
  });
});
