import { z } from 'zod';
import { ENV_TABLE_END, ENV_TABLE_START, envTableProblems, parseEnvTable } from '../src/env-docs';

const readme = (...rows: string[]) =>
  [
    '# x',
    '',
    ENV_TABLE_START,
    '| variable | read by | default | meaning |',
    '| --- | --- | --- | --- |',
    ...rows,
    ENV_TABLE_END,
    '',
  ].join('\n');

const schema = z.object({
  DATABASE_URL: z.string().default('postgresql://x'),
  PORT: z.coerce.number().default(3000),
  HOST: z.string().default('0.0.0.0'),
});

describe('envTableProblems', () => {
  it('finds nothing when the rows naming the service list exactly its variables', () => {
    const rows = parseEnvTable(
      readme(
        '| `DATABASE_URL` | all | x | y |',
        '| `PORT`, `HOST` | records-api | 3000 | z |',
        '| `OTHER` | upload-service | - | - |',
      ),
    );
    expect(envTableProblems('records-api', schema, rows)).toEqual([]);
  });

  it('names a variable the README lacks and the line to add, with its default', () => {
    const rows = parseEnvTable(readme('| `DATABASE_URL`, `PORT` | records-api | x | y |'));
    expect(envTableProblems('records-api', schema, rows)).toEqual([
      'records-api reads HOST, which README.md does not list: add to its environment table the line | `HOST` | records-api | `0.0.0.0` | <what it does> |',
    ]);
  });

  it('says to add the service to a row that lists the variable for other services only', () => {
    const rows = parseEnvTable(
      readme('| `DATABASE_URL`, `PORT` | all | x | y |', '| `HOST` | upload-service | x | y |'),
    );
    expect(envTableProblems('records-api', schema, rows)).toEqual([
      'records-api reads HOST: add records-api to the "read by" cell of README.md line 7',
    ]);
  });

  it('names a row that claims a variable the schema does not have', () => {
    const rows = parseEnvTable(
      readme('| `DATABASE_URL`, `PORT`, `HOST` | all | x | y |', '| `GONE` | records-api | x | y |'),
    );
    expect(envTableProblems('records-api', schema, rows)).toEqual([
      'README.md line 7 says records-api reads GONE, but its env schema has no such variable: take records-api (or the row) out',
    ]);
  });

  it('refuses a row naming no known service, and a README without the table', () => {
    expect(() => parseEnvTable(readme('| `PORT` | records-apy | x | y |'))).toThrow(
      'README.md line 6: "records-apy" is no service',
    );
    expect(() => parseEnvTable('# no table')).toThrow(/has no <!-- env-table:start -->/);
  });
});
