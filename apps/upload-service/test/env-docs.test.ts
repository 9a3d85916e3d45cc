import { resolve } from 'node:path';
import { envTableProblems, readEnvTable } from '@recordbase/server-kit/env-docs';
import { uploadServiceEnvSchema } from '../src/config';

describe("README.md's environment table", () => {
  it('lists exactly the variables upload-service reads', () => {
    const rows = readEnvTable(resolve(__dirname, '../../../README.md'));
    expect(envTableProblems('upload-service', uploadServiceEnvSchema, rows)).toEqual([]);
  });
});
