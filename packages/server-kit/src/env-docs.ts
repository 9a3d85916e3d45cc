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
    rows.push({ line: index + 1, names, services });
  }
  return rows;
}

export function readEnvTable(readmePath: string): EnvTableRow[] {
  return parseEnvTable(readFileSync(readmePath, 'utf8'));
}

/** What the default of a schema's variable is, as a README cell would say it. */
function defaultOf(schema: z.ZodType | undefined): string {
  const parsed = schema?.safeParse(undefined);
  if (!parsed?.success || parsed.data === undefined) return 'none';
  return typeof parsed.data === 'string' || typeof parsed.data === 'number'
    ? `\`${parsed.data}\``
    : '<default>';
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
  for (const [name, line] of documented)
    if (!read.includes(name))
      problems.push(
        `README.md line ${line} says ${service} reads ${name}, but its env schema has no such variable: ` +
          `take ${service} (or the row) out`,
      );
  return problems;
}
