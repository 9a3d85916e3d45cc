import { z } from 'zod';
import {
  declaredDefault,
  ENV_TABLE_END,
  ENV_TABLE_START,
  envTableProblems,
  parseEnvTable,
} from '../src/env-docs';

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
/** A default cell that holds every default of `schema`. */
const D = '`postgresql://x`, 3000, `0.0.0.0`';

describe('envTableProblems', () => {
  it('finds nothing when the rows naming the service list exactly its variables and defaults', () => {
    const rows = parseEnvTable(
      readme(
        `| \`DATABASE_URL\` | all | ${D} | y |`,
        `| \`PORT\`, \`HOST\` | records-api | ${D} | z |`,
        '| `OTHER` | upload-service | - | - |',
      ),
    );
    expect(envTableProblems('records-api', schema, rows)).toEqual([]);
  });

  it('names a variable the README lacks and the line to add, with its default', () => {
    const rows = parseEnvTable(readme(`| \`DATABASE_URL\`, \`PORT\` | records-api | ${D} | y |`));
    expect(envTableProblems('records-api', schema, rows)).toEqual([
      'records-api reads HOST, which README.md does not list: add to its environment table the line | `HOST` | records-api | `0.0.0.0` | <what it does> |',
    ]);
  });

  it('says to add the service to a row that lists the variable for other services only', () => {
    const rows = parseEnvTable(
      readme(`| \`DATABASE_URL\`, \`PORT\` | all | ${D} | y |`, `| \`HOST\` | upload-service | ${D} | y |`),
    );
    expect(envTableProblems('records-api', schema, rows)).toEqual([
      'records-api reads HOST: add records-api to the "read by" cell of README.md line 7',
    ]);
  });

  it('names a row that claims a variable the schema does not have', () => {
    const rows = parseEnvTable(
      readme(`| \`DATABASE_URL\`, \`PORT\`, \`HOST\` | all | ${D} | y |`, '| `GONE` | records-api | x | y |'),
    );
    expect(envTableProblems('records-api', schema, rows)).toEqual([
      'README.md line 7 says records-api reads GONE, but its env schema has no such variable: take records-api (or the row) out',
    ]);
  });

  it('names a default cell that no longer says what the schema defaults to', () => {
    const rows = parseEnvTable(
      readme(`| \`DATABASE_URL\`, \`PORT\` | all | ${D} | y |`, '| `HOST` | all | `127.0.0.2` | y |'),
    );
    expect(envTableProblems('records-api', schema, rows)).toEqual([
      'README.md line 7 gives HOST\'s default as "`127.0.0.2`", but records-api defaults it to 0.0.0.0: correct that cell',
    ]);
  });

  it('refuses a row naming no known service, and a README without the table', () => {
    expect(() => parseEnvTable(readme('| `PORT` | records-apy | x | y |'))).toThrow(
      'README.md line 6: "records-apy" is no service',
    );
    expect(() => parseEnvTable('# no table')).toThrow(/has no <!-- env-table:start -->/);
  });
});

describe('declaredDefault', () => {
  it('reads the default an operator would write, through coercion and transforms', () => {
    expect(declaredDefault(z.coerce.number().int().min(1).default(15_000))).toBe('15000');
    expect(declaredDefault(z.enum(['local', 's3']).default('local'))).toBe('local');
    expect(
      declaredDefault(
        z
          .string()
          .default('./.data')
          .transform((dir) => `/abs/${dir}`),
      ),
    ).toBe('./.data');
    expect(
      declaredDefault(
        z.preprocess((value) => (value === '' ? undefined : value), z.coerce.number().default(16)),
      ),
    ).toBe('16');
  });

  it('has none for optional variables, empty defaults and defaults given as parsed values', () => {
    expect(declaredDefault(z.string().optional())).toBeUndefined();
    expect(
      declaredDefault(
        z
          .string()
          .default('')
          .transform((text) => text.split(',')),
      ),
    ).toBeUndefined();
    const duration = z.string().transform((text) => Number.parseInt(text, 10) * 1000);
    expect(declaredDefault(duration.default(5000))).toBeUndefined();
  });
});
