import { readFileSync } from 'node:fs';
import type { z } from 'zod';

/**
 * Keeps README.md's environment table true to the services' env schemas: each service's test
 * compares the variables its schema reads with the rows naming it, both ways. The table sits
 * between the markers below; its rows are `| \`NAME\`[, \`NAME\`…] | services | default | meaning |`,
 * services being names of services (comma-separated) or `all`.
 */
export const ENV_TABLE_START = '<!-- env-table:start -->';
export const ENV_TABLE_END = '<!-- env-table:end -->';
export const ENV_SERVICES = ['records-api', 'import-worker', 'upload-service', 'webhook-dispatcher'] as const;
export type EnvService = (typeof ENV_SERVICES)[number];

export interface EnvTableRow {
  line: number;
  names: string[];
  services: EnvService[];
  /** The default cell's text. */
  defaults: string;
}

/** The rows of the table in `markdown`; a row naming an unknown service is an error. */
export function parseEnvTable(markdown: string): EnvTableRow[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === ENV_TABLE_START);
  const end = lines.findIndex((line) => line.trim() === ENV_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`README.md has no ${ENV_TABLE_START} … ${ENV_TABLE_END} table`);
  const rows: EnvTableRow[] = [];
  for (let index = start + 1; index < end; index++) {
    const cells = (lines[index] ?? '').split('|').map((cell) => cell.trim());
    // A row is `| a | b | c | d |`: empty cells at both ends; header and rule rows name no variable.
    const names = [...(cells[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1] as string);
    if (names.length === 0) continue;
    const readBy = (cells[2] ?? '').split(',').map((service) => service.trim());
    const services = readBy.flatMap((service): EnvService[] => {
      if (service === 'all') return [...ENV_SERVICES];
      if ((ENV_SERVICES as readonly string[]).includes(service)) return [service as EnvService];
      throw new Error(
        `README.md line ${index + 1}: "${service}" is no service; use ${ENV_SERVICES.join(', ')} or all`,
      );
    });
    rows.push({ line: index + 1, names, services, defaults: cells[3] ?? '' });
  }
  return rows;
}

export function readEnvTable(readmePath: string): EnvTableRow[] {
  return parseEnvTable(readFileSync(readmePath, 'utf8'));
}

/** The zod 4 definition fields this module walks. */
interface SchemaDef {
  type: string;
  defaultValue?: unknown;
  innerType?: { _zod: { def: SchemaDef } };
  in?: { _zod: { def: SchemaDef } };
  out?: { _zod: { def: SchemaDef } };
}

const SCALAR_TYPES = new Set(['string', 'number', 'enum', 'boolean']);

/**
 * The default a schema declares as an operator would write it (`15000`, `info`), or undefined when
 * it has none or declares a parsed value instead (a duration's milliseconds, a list): those are
 * spelled differently in the README and left to the reader.
 */
export function declaredDefault(schema: { _zod: { def: SchemaDef } } | undefined): string | undefined {
  const def = schema?._zod.def;
  if (!def) return undefined;
  if (def.type === 'default') {
    const value = def.defaultValue;
    const scalar = def.innerType && SCALAR_TYPES.has(def.innerType._zod.def.type);
    return scalar && (typeof value === 'string' || typeof value === 'number') && value !== ''
      ? String(value)
      : undefined;
  }
  if (def.type === 'pipe') return declaredDefault(def.in) ?? declaredDefault(def.out);
  return undefined;
}

/** What the default of a schema's variable is, as a README cell would say it. */
function defaultOf(schema: z.ZodType | undefined): string {
  const value = declaredDefault(schema as { _zod: { def: SchemaDef } } | undefined);
  return value === undefined ? '<default, or none>' : `\`${value}\``;
}

/**
 * Every disagreement between the variables `service`'s schema reads and the table's rows naming
 * it, each saying which line to add or change. Empty when they agree.
 */
export function envTableProblems(
  service: EnvService,
  schema: { shape: Record<string, z.ZodType> },
  rows: readonly EnvTableRow[],
): string[] {
  const documented = new Map<string, number>();
  for (const row of rows)
    if (row.services.includes(service)) for (const name of row.names) documented.set(name, row.line);
  const read = Object.keys(schema.shape);
  const problems: string[] = [];
  for (const name of read.filter((key) => !documented.has(key))) {
    const listed = rows.find((row) => row.names.includes(name));
    problems.push(
      listed
        ? `${service} reads ${name}: add ${service} to the "read by" cell of README.md line ${listed.line}`
        : `${service} reads ${name}, which README.md does not list: add to its environment table the line ` +
            `| \`${name}\` | ${service} | ${defaultOf(schema.shape[name])} | <what it does> |`,
    );
  }
  for (const row of rows.filter((candidate) => candidate.services.includes(service)))
    for (const name of row.names) {
      const value = declaredDefault(schema.shape[name] as { _zod: { def: SchemaDef } } | undefined);
      if (value !== undefined && !row.defaults.includes(value))
        problems.push(
          `README.md line ${row.line} gives ${name}'s default as "${row.defaults}", but ${service} ` +
            `defaults it to ${value}: correct that cell`,
        );
    }
  for (const [name, line] of documented)
    if (!read.includes(name))
      problems.push(
        `README.md line ${line} says ${service} reads ${name}, but its env schema has no such variable: ` +
          `take ${service} (or the row) out`,
      );
  return problems;
}
