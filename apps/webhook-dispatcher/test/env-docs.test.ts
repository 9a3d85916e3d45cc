import { resolve } from 'node:path';
import { envTableProblems, readEnvTable } from '@recordbase/server-kit/env-docs';
import { webhookDispatcherEnvSchema } from '../src/config';

describe("README.md's environment table", () => {
  it('lists exactly the variables webhook-dispatcher reads', () => {
    const rows = readEnvTable(resolve(__dirname, '../../../README.md'));
    expect(envTableProblems('webhook-dispatcher', webhookDispatcherEnvSchema, rows)).toEqual([]);
  });
});
