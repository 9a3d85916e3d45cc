import { once } from 'node:events';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
// mulberry32, seeded: the same settings give the same bytes.
import { random } from '../lib/random';

/**
 * The files imported: rows of mixed types generated from a seed (the same seed and count give the
 * same bytes), written as a CSV and as an XLSX (ExcelJS's streaming writer, shared strings as
 * Excel saves them), cached under .data/bench-imports/ and made again when missing or when the
 * generator changed (GENERATOR_VERSION).
 */

/** Bump when the rows or the files' layout change: cached files of another version are made again. */
export const GENERATOR_VERSION = 2;

/** The file's columns, in order, with the type an import should infer and the baseline's SQL type. */
export const COLUMNS = [
  { name: 'Name', field: 'single_line_text', sql: 'text' },
  { name: 'Quantity', field: 'number', sql: 'double precision' },
  { name: 'Price', field: 'number', sql: 'double precision' },
  { name: 'Active', field: 'checkbox', sql: 'boolean' },
  { name: 'Joined', field: 'date', sql: 'date' },
  { name: 'Last seen', field: 'datetime', sql: 'timestamptz' },
  { name: 'Email', field: 'email', sql: 'text' },
  { name: 'Website', field: 'url', sql: 'text' },
  { name: 'Notes', field: 'long_text', sql: 'text' },
] as const;

export interface Row {
  name: string;
  quantity: number | null;
  /** Two decimal places. */
  price: number | null;
  active: boolean;
  /** YYYY-MM-DD. */
  joined: string | null;
  /** ISO 8601 UTC, whole seconds, never midnight (an XLSX cell at midnight reads as a date). */
  lastSeen: string;
  email: string | null;
  website: string | null;
  /** Free text, some with commas, quotes or line breaks. */
  notes: string | null;
}

const FIRST = [
  'Ada',
  'Ben',
  'Chloe',
  'Dev',
  'Elif',
  'Femi',
  'Grace',
  'Hugo',
  'Ines',
  'Jon',
  'Kai',
  'Lena',
  'Mira',
  'Noor',
  'Omar',
  'Pia',
  'Quinn',
  'Rosa',
  'Sami',
  'Tara',
  'Uma',
  'Vik',
  'Wen',
  'Yara',
  'Zoe',
  'Aiko',
  'Bram',
  'Cleo',
  'Dara',
  'Emil',
  'Farah',
  'Gus',
];
const LAST = [
  'Abara',
  'Berg',
  'Costa',
  'Diaz',
  'Eze',
  'Fox',
  'Gray',
  'Haas',
  'Ito',
  'Jain',
  'Kim',
  'Lund',
  'Mora',
  'Ng',
  'Okafor',
  'Park',
  'Quist',
  'Roy',
  'Sato',
  'Toth',
  'Ueda',
  'Vos',
  'Wolf',
  'Xu',
  'Yilmaz',
  'Zhou',
  'Adler',
  'Baker',
  'Chen',
  'Dube',
  'Engel',
  'Frey',
  'Gill',
  'Holm',
  'Ivanov',
  'Joshi',
  'Kaur',
  'Lopez',
  'Meyer',
  'Nagy',
];
const DOMAINS = ['mail.com', 'corp.io', 'web.de', 'inbox.org'];
const NOTES = [
  'call back',
  'vip',
  'paid late',
  'new lead',
  'moved',
  'trial',
  'renewed',
  'churn risk',
  'asked for invoice',
  'met at expo',
  'prefers email',
  'referral',
];
/** Notes that need quoting in a CSV: commas, quotes, line breaks. */
const QUOTED_NOTES = [
  'late, again',
  'said "maybe"',
  'line one\nline two',
  'a, b and "c"',
  'follow up\nnext week',
];

const DAY_MS = 86_400_000;
const JOINED_FROM = Date.UTC(1970, 0, 1) / DAY_MS;
const JOINED_DAYS = Date.UTC(2026, 0, 1) / DAY_MS - JOINED_FROM;
const SEEN_FROM = Date.UTC(2020, 0, 1) / 1000;
const SEEN_SECONDS = Date.UTC(2026, 0, 1) / 1000 - SEEN_FROM;

/** The rows, one after another, from `seed`. */
export function* rows(count: number, seed: number): Generator<Row> {
  const next = random(seed);
  const int = (below: number) => Math.floor(next() * below);
  const pick = <T>(items: readonly T[]) => items[int(items.length)] as T;
  for (let index = 0; index < count; index += 1) {
    const first = pick(FIRST);
    const last = pick(LAST);
    let seen = SEEN_FROM + int(SEEN_SECONDS);
    if (seen % 86_400 === 0) seen += 1;
    const notesRoll = next();
    yield {
      name: `${first} ${last}`,
      quantity: next() < 0.02 ? null : int(10_000),
      price: next() < 0.03 ? null : int(100_000) / 100,
      active: next() < 0.4,
      joined:
        next() < 0.03 ? null : new Date((JOINED_FROM + int(JOINED_DAYS)) * DAY_MS).toISOString().slice(0, 10),
      lastSeen: `${new Date(seen * 1000).toISOString().slice(0, 19)}Z`,
      email: next() < 0.08 ? null : `${first[0]}${last}${int(100)}@${pick(DOMAINS)}`.toLowerCase(),
      website: next() < 0.1 ? null : `https://${last.toLowerCase()}.io/${int(1_000)}`,
      notes: notesRoll < 0.5 ? null : notesRoll < 0.9 ? pick(NOTES) : pick(QUOTED_NOTES),
    };
  }
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A row as one CSV line (RFC 4180, LF line ends); an empty cell is no value. */
export function csvLine(row: Row): string {
  return `${[
    csvCell(row.name),
    row.quantity === null ? '' : String(row.quantity),
    row.price === null ? '' : row.price.toFixed(2),
    row.active ? 'true' : 'false',
    row.joined ?? '',
    row.lastSeen,
    row.email ?? '',
    row.website ?? '',
    row.notes === null ? '' : csvCell(row.notes),
  ].join(',')}\n`;
}

export const csvHeader = () => `${COLUMNS.map((column) => csvCell(column.name)).join(',')}\n`;

async function writeCsv(path: string, count: number, seed: number): Promise<void> {
  const out = createWriteStream(path);
  let chunk = csvHeader();
  for (const row of rows(count, seed)) {
    chunk += csvLine(row);
    if (chunk.length >= 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

async function writeXlsx(path: string, count: number, seed: number): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: path,
    useSharedStrings: true,
    useStyles: true,
  });
  const sheet = workbook.addWorksheet('Data');
  sheet.columns = COLUMNS.map((column) => ({
    header: column.name,
    key: column.name,
    ...(column.field === 'date' ? { style: { numFmt: 'yyyy-mm-dd' } } : {}),
    ...(column.field === 'datetime' ? { style: { numFmt: 'yyyy-mm-dd hh:mm:ss' } } : {}),
  }));
  for (const row of rows(count, seed)) {
    sheet
      .addRow([
        row.name,
        row.quantity,
        row.price,
        row.active,
        row.joined === null ? null : new Date(`${row.joined}T00:00:00Z`),
        new Date(row.lastSeen),
        row.email,
        row.website,
        row.notes,
      ])
      .commit();
  }
  sheet.commit();
  await workbook.commit();
}

export interface DataFile {
  kind: 'csv' | 'xlsx';
  path: string;
  bytes: number;
  rows: number;
  seed: number;
  /** Seconds it took to make, or 0 when it came from the cache. */
  generatedSeconds: number;
}

export const DATA_DIR = join(__dirname, '..', '..', '.data', 'bench-imports');

/**
 * The file of `count` rows from `seed`, made unless the cache has it (a manifest beside it says
 * which version, count and seed it holds, and its size).
 */
export async function dataFile(kind: 'csv' | 'xlsx', count: number, seed: number): Promise<DataFile> {
  mkdirSync(DATA_DIR, { recursive: true });
  const base = `rows-${count}-seed-${seed}-v${GENERATOR_VERSION}`;
  const path = join(DATA_DIR, `${base}.${kind}`);
  const manifestPath = `${path}.json`;
  if (existsSync(path) && existsSync(manifestPath)) {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bytes: number };
    if (manifest.bytes === statSync(path).size)
      return { kind, path, bytes: manifest.bytes, rows: count, seed, generatedSeconds: 0 };
  }
  const started = performance.now();
  const partial = `${path}.partial`;
  if (kind === 'csv') await writeCsv(partial, count, seed);
  else await writeXlsx(partial, count, seed);
  renameSync(partial, path);
  const bytes = statSync(path).size;
  writeFileSync(
    manifestPath,
    `${JSON.stringify({ kind, rows: count, seed, version: GENERATOR_VERSION, bytes })}\n`,
  );
  return { kind, path, bytes, rows: count, seed, generatedSeconds: (performance.now() - started) / 1000 };
}
