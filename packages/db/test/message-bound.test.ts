import fc from 'fast-check';
import pg from 'pg';
import { boundMessages, createDb, type Db, MessageTooLarge } from '../src';
import { messageScanner } from '../src/message-bound';
import { createTestDatabase, type TestDatabase } from '../src/testing';

/** A protocol message: type byte, then a length counting itself and the body. */
function message(type: string, bodyBytes: number): Buffer {
  const buffer = Buffer.alloc(5 + bodyBytes, 0x61);
  buffer.write(type, 0, 'latin1');
  buffer.writeUInt32BE(4 + bodyBytes, 1);
  return buffer;
}

describe('messageScanner', () => {
  it('finds the first message past the bound wherever the chunks split the stream', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 50 }),
        (bodies, cuts) => {
          const limit = 200;
          const stream = Buffer.concat(bodies.map((body) => message('D', body)));
          const scan = messageScanner(() => limit);
          let found: MessageTooLarge | null = null;
          for (let offset = 0, i = 0; offset < stream.length && !found; i += 1) {
            const size = cuts[i % cuts.length] as number;
            found = scan(stream.subarray(offset, offset + size));
            offset += size;
          }
          const first = bodies.find((body) => body + 5 > limit);
          if (first === undefined) expect(found).toBeNull();
          else expect(found).toMatchObject({ bytes: first + 5, maxBytes: limit, kind: 'a row' });
        },
      ),
    );
  });

  it('names what the message is', () => {
    expect(messageScanner(() => 10)(message('E', 100))?.message).toBe(
      'An error message from the database is 1 MB, past the 1 MB one message may be',
    );
  });
});

describe('a connection receiving a message past its bound', () => {
  let testDb: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = createDb(testDb.url, { maxConnections: 2 });
  });
  afterAll(async () => {
    await db.close();
    await testDb.drop();
  });

  it('fails its query with SQLSTATE 54000 before reading it, and the process carries on', async () => {
    const client = new pg.Client({ connectionString: testDb.url });
    client.on('error', () => {});
    await client.connect();
    boundMessages(client, 1024 * 1024);
    expect((await client.query(`SELECT length(repeat('x', 1000)) AS n`)).rows).toEqual([{ n: 1000 }]);
    const refused = client.query(`SELECT repeat('y', 4 * 1024 * 1024) AS big`);
    await expect(refused).rejects.toBeInstanceOf(MessageTooLarge);
    await expect(refused).rejects.toMatchObject({ code: '54000', kind: 'a row' });
    // The connection is gone, the others are not.
    await expect(client.query('SELECT 1')).rejects.toThrow();
    expect((await db.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('bounds an error quoting a value as it bounds a row', async () => {
    const client = new pg.Client({ connectionString: testDb.url });
    client.on('error', () => {});
    await client.connect();
    boundMessages(client, 1024 * 1024);
    await expect(client.query(`SELECT repeat('x', 2 * 1024 * 1024)::int`)).rejects.toMatchObject({
      code: '54000',
      kind: 'an error message',
    });
  });

  it("takes a bound of its own on a pool's client, which the pool then discards", async () => {
    const client = await db.pool.connect();
    try {
      boundMessages(client, 64 * 1024);
      await expect(client.query(`SELECT repeat('z', 100000)`)).rejects.toMatchObject({ code: '54000' });
    } finally {
      client.release(true);
    }
  });
});
