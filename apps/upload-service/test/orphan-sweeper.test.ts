import { sweepOrphans } from '../src/sweeps/orphan-sweeper';
import { insertBaseWithStorage, insertRecordWithAttachments, type TestBase } from './fixtures';
import { type Harness, startHarness } from './harness';
import { onePixelPng } from './sniff-files';

/** The sweeper deletes uploads nothing refers to after their grace period, and only those. */

let h: Harness;
let base: TestBase;
const DAY = 24 * 3_600_000;

beforeAll(async () => {
  h = await startHarness();
  base = await insertBaseWithStorage(h.db);
});
afterAll(() => h.close());

async function uploadAttachment(name: string): Promise<{ url: string; key: string }> {
  const response = await h.api
    .post('/fileupload')
    .set('Authorization', `Bearer ${h.rootKey}`)
    .set({ 'base-public-id': base.databaseId, 'table-id': base.tableId, 'field-id': base.filesFieldId })
    .attach('filepond', onePixelPng(1, 2, 3), { filename: name, contentType: 'image/png' })
    .expect(201);
  return { url: response.body.url, key: new URL(response.body.url).pathname.slice('/files/'.length) };
}

async function uploadImport(): Promise<string> {
  const response = await h.api
    .post('/csvupload')
    .set('Authorization', `Bearer ${h.rootKey}`)
    .attach('filepond', Buffer.from('a,b\n'), { filename: 'x.csv', contentType: 'text/csv' })
    .expect(201);
  return response.body.s3Key;
}

/** Ages uploads past the grace period, as if uploaded two days ago. */
async function age(keys: string[]) {
  await h.db.pool.query(
    `UPDATE uploaded_files SET created_at = now() - interval '2 days' WHERE key = ANY($1)`,
    [keys],
  );
}

async function exists(key: string) {
  const row = await h.db.prisma.uploadedFile.findUnique({ where: { key } });
  return { row: row !== null, bytes: (await h.storage.stat(key)) !== null };
}

const gone = { row: false, bytes: false };
const kept = { row: true, bytes: true };

describe('the orphan sweeper', () => {
  it('removes an old orphan and an unimported import file, keeps a referenced file and a recent orphan', async () => {
    const referenced = await uploadAttachment('kept.png');
    const orphan = await uploadAttachment('orphan.png');
    const recent = await uploadAttachment('recent.png');
    const importFile = await uploadImport();
    await insertRecordWithAttachments(h.db, base, [referenced.url]);
    await age([referenced.key, orphan.key, importFile]);
    const deleted = await sweepOrphans(h.db.pool, h.storage, { graceMs: DAY });
    expect(deleted.sort()).toEqual([orphan.key, importFile].sort());
    expect(await exists(orphan.key)).toEqual(gone);
    expect(await exists(importFile)).toEqual(gone);
    expect(await exists(referenced.key)).toEqual(kept);
    expect(await exists(recent.key)).toEqual(kept);
    // A referenced file is not looked at again on the next run.
    expect(await sweepOrphans(h.db.pool, h.storage, { graceMs: DAY })).toEqual([]);
    const row = await h.db.prisma.uploadedFile.findUnique({ where: { key: referenced.key } });
    expect(row?.checkedAt).not.toBeNull();
  });

  it('finds references by the key at the end of the url, whatever host the url names', async () => {
    const file = await uploadAttachment('elsewhere.png');
    await insertRecordWithAttachments(h.db, base, [`https://gateway.example.com/files/${file.key}`]);
    await age([file.key]);
    await sweepOrphans(h.db.pool, h.storage, { graceMs: DAY });
    expect(await exists(file.key)).toEqual(kept);
  });

  it('removes the attachments of a deleted database', async () => {
    const file = await uploadAttachment('doomed.png');
    await age([file.key]);
    const other = await insertBaseWithStorage(h.db);
    await h.db.pool.query('UPDATE uploaded_files SET database_id = $1 WHERE key = $2', [
      other.databaseId,
      file.key,
    ]);
    await h.db.prisma.database.delete({ where: { id: other.databaseId } });
    await sweepOrphans(h.db.pool, h.storage, { graceMs: DAY });
    expect(await exists(file.key)).toEqual(gone);
  });

  it('leaves alone a file a record write is attaching at that moment', async () => {
    const file = await uploadAttachment('busy.png');
    await age([file.key]);
    const writer = await h.db.pool.connect();
    try {
      await writer.query('BEGIN');
      // What records-api does while it attaches an uploaded file (references.ts).
      await writer.query('SELECT key FROM uploaded_files WHERE key = $1 FOR SHARE', [file.key]);
      await sweepOrphans(h.db.pool, h.storage, { graceMs: DAY });
      expect(await exists(file.key)).toEqual(kept);
      await insertRecordWithAttachments(h.db, base, [file.url]);
      await writer.query('COMMIT');
    } finally {
      writer.release();
    }
    await sweepOrphans(h.db.pool, h.storage, { graceMs: DAY });
    expect(await exists(file.key)).toEqual(kept);
  });

  it('works through more files than one batch', async () => {
    const files = [];
    for (let i = 0; i < 7; i += 1) files.push(await uploadAttachment(`many-${i}.png`));
    await age(files.map((file) => file.key));
    const deleted = await sweepOrphans(h.db.pool, h.storage, { graceMs: DAY, batchSize: 3 });
    expect(deleted).toHaveLength(7);
  });
});
