import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { type Stack, startStack } from './stack';

/**
 * records-api as `npm start` runs it on a machine of several cores: several processes on one
 * port (RECORDS_API_PROCESSES). Connections reach every process; what one process changes
 * (a field, a revoked key) holds in the others at once or within the NOTIFY's delay; /metrics
 * counts every process's requests; a process that dies is replaced, and SIGTERM stops them all.
 */

jest.setTimeout(120_000);

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ env: { RECORDS_API_PROCESSES: '2' } });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const port = () => stack.ports['records-api'];

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the tests assert on the answers themselves.
  body: any;
}

/** One request on a connection of its own (`agent`: one of a pool kept open instead). */
function send(method: string, path: string, options: { key?: string; body?: unknown; agent?: Agent } = {}) {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise<Answer>((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port: port(),
        method,
        path,
        agent: options.agent ?? false,
        headers: {
          authorization: `Bearer ${options.key ?? stack.rootKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => {
          const json = response.headers['content-type']?.includes('json');
          resolve({ status: response.statusCode ?? 0, body: json && text ? JSON.parse(text) : text });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The worker processes under records-api's primary. */
function workers(): number[] {
  const primary = stack.pid('records-api');
  const lines = execFileSync('ps', ['-o', 'pid=', '--ppid', String(primary)], { encoding: 'utf8' });
  return lines
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => pid > 0);
}

/** Inodes of the established TCP connections whose local port is `localPort`. */
function establishedInodes(localPort: number): Set<string> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let table = '';
    try {
      table = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      const local = columns[1];
      // st 01 is ESTABLISHED; the inode is the tenth column.
      if (!local || columns[3] !== '01') continue;
      if (Number.parseInt(local.split(':')[1] ?? '', 16) === localPort) inodes.add(columns[9] ?? '');
    }
  }
  return inodes;
}

/** How many of those connections the process holds. */
function connectionsHeldBy(pid: number, inodes: Set<string>): number {
  let held = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) held += 1;
    } catch {
      // closed since the directory was read
    }
  }
  return held;
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('runs two processes on one port, and hands connections to both', async () => {
  const pids = workers();
  expect(pids).toHaveLength(2);
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  try {
    // Eight requests at once open eight connections, kept open afterwards.
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => send('GET', '/api/v1/bases', { agent })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const inodes = establishedInodes(port());
    const held = pids.map((pid) => connectionsHeldBy(pid, inodes));
    // Eight, and the launcher's own readiness probe if its connection is still open.
    expect(held.reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(8);
    for (const count of held) expect(count).toBeGreaterThan(0);
  } finally {
    agent.destroy();
  }
});

it('sees at once in one process the fields another just added', async () => {
  const base = await send('POST', '/api/v1/bases', {
    body: {
      name: 'Processes',
      tables: [{ name: 'Items', fields: [{ name: 'Name', type: 'single_line_text' }] }],
    },
  });
  expect(base.status).toBe(201);
  const path = `/api/v1/bases/${base.body.id}/tables/Items`;
  // Each request on a new connection: consecutive ones go to different processes.
  for (let index = 0; index < 6; index++) {
    const field = await send('POST', `${path}/fields`, { body: { name: `N${index}`, type: 'number' } });
    expect(field.status).toBe(201);
    const created = await send('POST', `${path}/records`, {
      body: { record: { Name: 'x', [`N${index}`]: index } },
    });
    expect({ status: created.status, value: created.body.fields?.[`N${index}`] }).toEqual({
      status: 201,
      value: index,
    });
  }
});

it('refuses a revoked key in every process', async () => {
  const created = await send('POST', '/api/v1/api-keys', {
    body: { name: 'processes', scopes: ['schema:read'] },
  });
  expect(created.status).toBe(201);
  const { key, id } = created.body as { key: string; id: string };
  // Every process reads the key, so each has it in its cache.
  const before = await Promise.all(Array.from({ length: 6 }, () => send('GET', '/api/v1/bases', { key })));
  expect(before.map((answer) => answer.status)).toEqual(Array(6).fill(200));

  expect((await send('DELETE', `/api/v1/api-keys/${id}`)).status).toBe(200);
  await until('every process refusing the key', async () => {
    const after = await Promise.all(Array.from({ length: 6 }, () => send('GET', '/api/v1/bases', { key })));
    return after.every((answer) => answer.status === 401) ? true : undefined;
  });
});

it("answers /metrics with every process's requests", async () => {
  const requestsOfBases = async () => {
    const metrics = await send('GET', '/metrics');
    expect(metrics.status).toBe(200);
    const line = String(metrics.body)
      .split('\n')
      .find(
        (entry) =>
          entry.startsWith('http_request_duration_seconds_count{') &&
          entry.includes('route="/api/v1/bases"') &&
          entry.includes('method="GET"') &&
          entry.includes('status="200"'),
      );
    return Number(line?.split(' ').pop() ?? 0);
  };
  const before = await requestsOfBases();
  const answers = await Promise.all(Array.from({ length: 10 }, () => send('GET', '/api/v1/bases')));
  expect(answers.every((answer) => answer.status === 200)).toBe(true);
  expect((await requestsOfBases()) - before).toBe(10);
});

it('starts a killed process again, and SIGTERM stops them all', async () => {
  const [killed, survivor] = workers();
  process.kill(killed as number, 'SIGKILL');
  const replaced = await until('a new process in place of the killed one', () => {
    const now = workers();
    return now.length === 2 && !now.includes(killed as number) ? now : undefined;
  });
  expect(replaced).toContain(survivor);
  const answers = await Promise.all(Array.from({ length: 6 }, () => send('GET', '/api/v1/bases')));
  expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));

  await stack.kill('records-api');
  for (const pid of replaced) {
    expect(() => process.kill(pid, 0)).toThrow();
  }
});
