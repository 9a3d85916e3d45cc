import { readFileSync } from 'node:fs';
import { type Stack, startStack } from './stack';

/**
 * Many concurrent uploads: the upload-service streams each file to storage as it arrives, so its
 * memory stays flat however many bytes are in flight. 24 uploads of 8 MiB at once (192 MiB); the
 * process's peak resident memory (VmHWM) must grow by less than half of that. Quick; runs in
 * `npm test`.
 */

const UPLOADS = 24;
const FILE_BYTES = 8 * 1024 * 1024;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.stop();
});

/** Peak resident memory of a process so far, in bytes (Linux). */
function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

const csv = (bytes: number, tag: string) => {
  const row = `${tag},1\n`;
  return new Blob([`name,amount\n${row.repeat(Math.ceil(bytes / row.length))}`], { type: 'text/csv' });
};

async function upload(file: Blob) {
  const form = new FormData();
  form.append('filepond', file, 'import.csv');
  const response = await fetch(`http://127.0.0.1:${stack.ports['upload-service']}/csvupload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.rootKey}` },
    body: form,
  });
  await response.arrayBuffer();
  return response.status;
}

it(`${UPLOADS} concurrent uploads of 8 MiB leave the upload-service's memory flat`, async () => {
  const pid = stack.pid('upload-service');
  if (pid === undefined) throw new Error('upload-service is not running');
  // Warm up (the first upload loads the routes' code), then measure from there.
  expect(await upload(csv(64 * 1024, 'warm'))).toBe(201);
  const before = peakRss(pid);
  const statuses = await Promise.all(
    Array.from({ length: UPLOADS }, (_, i) => upload(csv(FILE_BYTES, `u${i}`))),
  );
  expect(statuses).toEqual(Array(UPLOADS).fill(201));
  const grew = peakRss(pid) - before;
  // Buffering whole files would add all of them (192 MiB); streaming costs some buffers per upload.
  expect(grew).toBeLessThan((UPLOADS * FILE_BYTES) / 2);
});
