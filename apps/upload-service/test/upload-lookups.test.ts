import { randomUUID } from 'node:crypto';
import { notifyStatement, SCHEMA_CHANNEL } from '@recordbase/db';
import type pg from 'pg';
import { FILES_FREED_CHANNEL, type UploadLookups } from '../src/files/upload-lookups';
import { sweepOrphans } from '../src/sweeps/orphan-sweeper';
import { insertBase, insertBaseWithStorage, type TestBase } from './fixtures';
import { type Harness, startHarness } from './harness';

/**
 * What an upload is checked against before its body, kept per process (upload-lookups.ts): kept
 * until a schema change or freed files say otherwise, so that a client repeating a refused upload
 * costs no query, and never trusted past such a change.
 */

let h: Harness;
let lookups: UploadLookups;

beforeAll(async () => {
  h = await startHarness();
  lookups = await h.listeningLookups();
});
afterAll(() => h.close());

/** What `read` answers once it differs from `before` (a notification is delivered asynchronously). */
async function changed<T>(read: () => Promise<T>, before: T): Promise<T> {
  for (const giveUpAt = Date.now() + 5_000; ; ) {
    const now = await read();
    if (JSON.stringify(now) !== JSON.stringify(before) || Date.now() > giveUpAt) return now;
    await new Promise((done) => setTimeout(done, 20));
  }
}

const targetOf = (base: TestBase, fieldRef: string) =>
  lookups.attachmentTarget(base.databaseId, 'Docs', fieldRef, base.databaseId).then(
    (target) => ({ target }),
    (error: Error & { code?: string }) => ({ refused: error.message }),
  );

async function storeRow(databaseId: string, size: number) {
  const key = `attachments/${databaseId}/${randomUUID()}.png`;
  await h.db.pool.query(
    `INSERT INTO uploaded_files (id, key, kind, database_id, file_name, size, mime_type, sha256)
     VALUES ($1, $2, 'attachment', $3, 'a.png', $4, 'image/png', '')`,
    [randomUUID(), key, databaseId, size],
  );
  return key;
}

const notify = (pool: pg.Pool, channel: string) => pool.query(notifyStatement(channel));

describe('attachment targets', () => {
  it('are answered from memory until a schema change, then looked up again', async () => {
    const base = await insertBase(h.db);
    const found = {
      target: { databaseId: base.databaseId, tableId: base.tableId, fieldId: base.filesFieldId },
    };
    expect(await targetOf(base, 'Files')).toEqual(found);
    // Renamed behind the service's back, without the notification every schema change sends:
    // the kept answer stands, which shows no query was made for it.
    await h.db.pool.query(`UPDATE fields SET name = 'Scans', name_key = 'scans' WHERE id = $1`, [
      base.filesFieldId,
    ]);
    expect(await targetOf(base, 'Files')).toEqual(found);
    await notify(h.db.pool, SCHEMA_CHANNEL);
    expect(await changed(() => targetOf(base, 'Files'), found)).toEqual({
      refused: 'field-id: no field "Files" in table Docs',
    });
    expect(await targetOf(base, 'Scans')).toEqual(found);
  });

  it('keep a refusal until a schema change too: a database created or a field retyped is seen', async () => {
    const base = await insertBase(h.db);
    const textField = await targetOf(base, 'Title');
    expect(textField).toEqual({
      refused: 'field-id: field "Title" is a single_line_text field, not an attachments field',
    });
    await h.db.pool.query(`UPDATE fields SET type = 'attachments' WHERE id = $1`, [base.textFieldId]);
    expect(await targetOf(base, 'Title')).toEqual(textField);
    await notify(h.db.pool, SCHEMA_CHANNEL);
    expect(await changed(() => targetOf(base, 'Title'), textField)).toEqual({
      target: { databaseId: base.databaseId, tableId: base.tableId, fieldId: base.textFieldId },
    });

    const databaseId = randomUUID();
    const missing = await lookups
      .attachmentTarget(databaseId, 'Docs', 'Files', databaseId.toUpperCase())
      .catch((error: Error) => error.message);
    // Worded with the database as the request wrote it.
    expect(missing).toBe(`Database ${databaseId.toUpperCase()} not found`);
  });
});

describe("a database's stored bytes", () => {
  it('are a figure that only grows until files are freed: kept, read again when forgotten or freed', async () => {
    const base = await insertBase(h.db);
    expect(await lookups.storedBytesAtLeast(base.databaseId)).toBe(0);
    // Another process stored a file: the kept figure is still a lower bound, and stays.
    await storeRow(base.databaseId, 700);
    expect(await lookups.storedBytesAtLeast(base.databaseId)).toBe(0);
    // This process stored one: it reads the figure again.
    lookups.forgetStoredBytes(base.databaseId);
    expect(await lookups.storedBytesAtLeast(base.databaseId)).toBe(700);
    await h.db.pool.query('DELETE FROM uploaded_files WHERE database_id = $1', [base.databaseId]);
    await notify(h.db.pool, FILES_FREED_CHANNEL);
    expect(await changed(() => lookups.storedBytesAtLeast(base.databaseId), 700)).toBe(0);
  });

  it('are read again after the orphan sweeper deletes files, which it announces', async () => {
    const base = await insertBaseWithStorage(h.db);
    await storeRow(base.databaseId, 1_000);
    expect(await lookups.storedBytesAtLeast(base.databaseId)).toBe(1_000);
    // Nothing refers to the file: past its grace period, the sweeper deletes it.
    await h.db.pool.query(`UPDATE uploaded_files SET created_at = now() - interval '2 days'`);
    await sweepOrphans(h.db.pool, h.storage, { graceMs: 24 * 3_600_000 });
    expect(await changed(() => lookups.storedBytesAtLeast(base.databaseId), 1_000)).toBe(0);
  });
});
