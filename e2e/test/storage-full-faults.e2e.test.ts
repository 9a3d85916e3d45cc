import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withPool } from './private-postgres';
import { type Stack, startStack } from './stack';

/**
 * The storage directory full: STORAGE_DIR on a 1 MiB tmpfs of the test's own, an upload larger
 * than that. The answer is 503 with Retry-After naming full storage (the contract has no 507),
 * no file is left in the directory (not even the temporary one) and no file row refers to one;
 * a small upload afterwards is stored. Mounting needs root (CAP_SYS_ADMIN): elsewhere the test
 * says so loudly and is skipped. Quick; runs in `npm test`.
 */

const mountPoint = mkdtempSync(join(tmpdir(), 'rb-full-'));
const mounted = (() => {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
})();

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

async function uploadCsv(stack: Stack, bytes: number) {
  const row = 'name,amount\n';
  const body = 'name,amount\n' + 'ada,1\n'.repeat(Math.ceil((bytes - row.length) / 6));
  const form = new FormData();
  form.append('filepond', new Blob([body], { type: 'text/csv' }), 'import.csv');
  const response = await fetch(`http://127.0.0.1:${stack.ports['upload-service']}/csvupload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.rootKey}` },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: JSON.parse(text) };
}

const fileRows = (stack: Stack) =>
  withPool(stack.database.url, async (pool) => {
    const { rows } = await pool.query<{ key: string }>('SELECT key FROM uploaded_files');
    return rows.map((row) => row.key);
  });

const describeMounted = mounted ? describe : describe.skip;
if (!mounted) {
  console.warn('SKIPPED: "storage directory full" needs to mount a tmpfs (root); it cannot here.');
}

describeMounted('the storage directory full', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { STORAGE_DIR: mountPoint } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 503 naming full storage, leaves no file behind nor a row referring to one, and stores what fits', async () => {
    const full = await uploadCsv(stack, 3 * 1024 * 1024);
    expect(full.status).toBe(503);
    expect(full.retryAfter).not.toBeNull();
    expect(full.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(full.body.error.message).toMatch(/full/i);
    expect(filesUnder(mountPoint)).toEqual([]);
    expect(await fileRows(stack)).toEqual([]);

    const small = await uploadCsv(stack, 10 * 1024);
    expect(small.status).toBe(201);
    expect(await fileRows(stack)).toEqual([small.body.s3Key]);
    expect(filesUnder(mountPoint)).toEqual([join(mountPoint, small.body.s3Key)]);
  });
});

afterAll(() => {
  if (mounted) execFileSync('umount', ['-l', mountPoint], { stdio: 'pipe' });
  rmSync(mountPoint, { recursive: true, force: true });
});
