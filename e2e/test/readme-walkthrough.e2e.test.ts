import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '@recordbase/launcher';
import { type NpmStart, startNpmStart } from './npm-start';

/**
 * README's walkthrough, from "Your first hour" to "Configuration", is run as a newcomer would paste it: its shell blocks in order, in
 * one bash session, against `npm start`, from a directory holding `.data/root-api-key` as a fresh
 * checkout's does. The one change: `API` and `UPLOAD` name this stack's ports (set right after the
 * README sets them). Every curl is recorded; a curl whose answer the README shows (`# 201 {…}`)
 * must answer that status with every key the shown answer names, and every other curl must
 * succeed. A README edit that breaks a request, or shows an answer the service does not give,
 * fails here. README_WALKTHROUGH_SHOW=1 prints every answer, for writing the README's.
 */

jest.setTimeout(240_000);

const run = promisify(execFile);

const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

/** The text of the README between two of its `## ` headings. */
function section(from: string, to: string): string {
  const start = readme.indexOf(`\n## ${from}\n`);
  const end = readme.indexOf(`\n## ${to}\n`, start);
  if (start < 0 || end < 0) throw new Error(`README has no section "${from}" followed by "${to}"`);
  return readme.slice(start, end);
}

const shellBlocks = (text: string): string[] =>
  [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);

interface ShownAnswer {
  /** The curl it answers: its place among the walkthrough's curls. */
  curl: number;
  status: number;
  body: string;
  line: string;
}

/**
 * The answers the README shows, each tied to the curl before it: a curl starts a line (or a
 * `$(…)`); an answer is a `# NNN …` line with its indented `#   …` continuations.
 */
function shownAnswers(blocks: string[]): { curls: number; answers: ShownAnswer[] } {
  let curls = 0;
  const answers: ShownAnswer[] = [];
  let open: ShownAnswer | undefined;
  for (const line of blocks.join('\n').split('\n')) {
    if (open && /^#\s{2,}/.test(line)) {
      open.body += line.replace(/^#/, '');
      continue;
    }
    open = undefined;
    if (/^(\w+=\$\()?curl\s/.test(line)) curls += 1;
    const answer = /^# (\d{3}) (.*)$/.exec(line);
    if (answer) {
      if (curls === 0) throw new Error(`README shows an answer before any request: ${line}`);
      open = { curl: curls, status: Number(answer[1]), body: answer[2] as string, line };
      answers.push(open);
    }
  }
  return { curls, answers };
}

/** A field id is a key of `data`, and differs from run to run: any field id stands for another. */
const keyShape = (key: string) => (/^fld[0-9A-Za-z]{14}$/.test(key) ? 'a field id' : key);

/** Every key a JSON value names, at any depth, by keyShape. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      into.add(keyShape(key));
      keysOf(inner, into);
    }
  }
  return into;
}

let stack: NpmStart;
let workDir: string;

beforeAll(async () => {
  stack = await startNpmStart({ WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32' });
  workDir = mkdtempSync(join(tmpdir(), 'readme-walkthrough-'));
  mkdirSync(join(workDir, '.data'));
  writeFileSync(join(workDir, '.data', 'root-api-key'), `${stack.rootKey}\n`);
});

afterAll(async () => {
  await stack?.stop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

it('"Your first hour" and the sections after it run as written, each request answering what the README shows', async () => {
  const blocks = shellBlocks(section('Your first hour', 'Configuration'));
  const [setup, ...rest] = blocks;
  expect(setup).toMatch(/^API=/m);
  const calls = join(workDir, 'calls');
  mkdirSync(calls);
  const script = [
    'set -euo pipefail',
    // Each curl's status and body are kept, numbered, and its body printed as curl -s would.
    `curl() { local n=$(( $(ls ${calls} | wc -l) / 2 + 1 )); command curl -sS -o ${calls}/$n.body -w '%{http_code}' "$@" > ${calls}/$n.status; cat ${calls}/$n.body; }`,
    // The walkthrough's one "npm start" with a setting: this stack already runs with it.
    'npm() { :; }',
    setup,
    `API=http://127.0.0.1:${stack.ports.RECORDS_API_PORT}/api/v1`,
    `UPLOAD=http://127.0.0.1:${stack.ports.UPLOAD_SERVICE_PORT}`,
    ...rest,
  ].join('\n');
  const { curls, answers } = shownAnswers(blocks);
  let failure: unknown;
  try {
    await run('bash', ['-c', script], { cwd: workDir, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    failure = error;
  }
  const made = readdirSync(calls).filter((file) => file.endsWith('.status')).length;
  const recorded = (n: number) => ({
    status: Number(readFileSync(join(calls, `${n}.status`), 'utf8')),
    body: readFileSync(join(calls, `${n}.body`), 'utf8'),
  });
  const problems: string[] = [];
  if (process.env.README_WALKTHROUGH_SHOW) for (let n = 1; n <= made; n += 1) console.log(n, recorded(n));
  if (failure)
    problems.push(`the walkthrough stopped: ${(failure as { stderr?: string }).stderr ?? failure}`);
  if (made !== curls) problems.push(`${curls} requests in the README, ${made} made`);
  for (let n = 1; n <= made; n += 1) {
    const { status, body } = recorded(n);
    const shown = answers.filter((answer) => answer.curl === n);
    if (shown.length === 0) {
      if (status >= 400) problems.push(`request ${n} answered ${status} ${body}`);
      continue;
    }
    for (const answer of shown) {
      if (status !== answer.status) {
        problems.push(`request ${n}: README shows ${answer.status}, it answered ${status} ${body}`);
        continue;
      }
      const keys = keysOf(JSON.parse(body));
      const missing = [...answer.body.matchAll(/"([^"]+)":/g)]
        .map((match) => keyShape(match[1] as string))
        .filter((key) => !keys.has(key));
      if (missing.length > 0)
        problems.push(`request ${n}: the answer has no ${missing.join(', ')} shown in: ${answer.line}`);
    }
  }
  expect(problems).toEqual([]);
  expect(answers.length).toBeGreaterThan(5);
});
