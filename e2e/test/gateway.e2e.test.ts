import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { describeWithNginx, type GatewayStack, startGatewayStack } from './gateway-stack';

/**
 * The services as their users reach them: through the nginx gateway that `npm start` runs in
 * front of them. Lists, bulk writes, uploads and ranged downloads pass through it; the gateway's
 * own refusals keep the JSON error body; every answer carries the request's id.
 */

const MB = 1024 * 1024;

describeWithNginx('through the gateway', () => {
  let gw: GatewayStack;
  let baseId: string;
  let tableId: string;
  let filesFieldId: string;
  const auth = () => ({ authorization: `Bearer ${gw.stack.rootKey}` });
  const json = () => ({ ...auth(), 'content-type': 'application/json' });

  beforeAll(async () => {
    gw = await startGatewayStack();
    const base = await fetch(`${gw.url}/api/v1/bases`, {
      method: 'POST',
      headers: json(),
      body: JSON.stringify({
        name: 'Gateway',
        tables: [
          {
            name: 'Deals',
            fields: [
              { name: 'Name', type: 'single_line_text' },
              { name: 'Amount', type: 'number' },
              { name: 'Files', type: 'attachments' },
            ],
          },
        ],
      }),
    });
    expect(base.status).toBe(201);
    const created = (await base.json()) as {
      id: string;
      tables: { id: string; fields: { id: string }[] }[];
    };
    baseId = created.id;
    tableId = created.tables[0]!.id;
    filesFieldId = created.tables[0]!.fields[2]!.id;
  }, 120_000);
  afterAll(async () => {
    await gw?.stop();
  });

  /**
   * A 503 is the contract's "retry shortly" (a database connection not free in time on a machine
   * the parallel test run saturates): sent again once after its Retry-After, as the typed client
   * does, and said in the output with what the gateway logged, so that a 503 is never hidden.
   */
  async function sendRetryingUnavailable(url: string, init: RequestInit): Promise<Response> {
    for (let attempt = 1; ; attempt += 1) {
      const requestId = `e2e-retry-${randomBytes(6).toString('hex')}`;
      const response = await fetch(url, { ...init, headers: { ...init.headers, 'x-request-id': requestId } });
      if (response.status !== 503 || attempt === 2) return response;
      const body = await response.text();
      const line = (await gw.accessLog(requestId)).find((entry) => entry.request_id === requestId);
      console.warn(`503 on attempt ${attempt}, sent again: ${body} (gateway: ${JSON.stringify(line)})`);
      await new Promise((done) => setTimeout(done, 1000 * Number(response.headers.get('retry-after') ?? 1)));
    }
  }

  it('writes records in bulk and lists them, gzip-compressed for a client that asks', async () => {
    const records = Array.from({ length: 60 }, (_, index) => ({ Name: `Deal ${index}`, Amount: index * 10 }));
    const bulk = await fetch(`${gw.url}/api/v1/bases/${baseId}/tables/${tableId}/records/bulk`, {
      method: 'POST',
      headers: json(),
      body: JSON.stringify({ records }),
    });
    expect(bulk.status).toBe(201);
    const written = (await bulk.json()) as { success: boolean; records: unknown[] };
    expect(written.success).toBe(true);
    expect(written.records).toHaveLength(60);

    const list = await fetch(`${gw.url}/api/v1/bases/${baseId}/tables/${tableId}/records/list`, {
      method: 'POST',
      headers: { ...json(), 'accept-encoding': 'gzip' },
      body: JSON.stringify({ limit: 100, sort: [{ field: 'Amount', direction: 'asc' }] }),
    });
    // fetch decompresses; the records are the ones written, in order.
    const page = (await list.json()) as { records: { fields: { Name: string; Amount: number } }[] };
    expect({ status: list.status, page }).toMatchObject({ status: 200 });
    expect(list.headers.get('content-encoding')).toBe('gzip');
    expect(page.records.map((record) => record.fields.Amount)).toEqual(
      records.map((record) => record.Amount),
    );
  });

  it('passes a JSON body and an answer too large for its memory buffers (spilled to its temp files)', async () => {
    const records = Array.from({ length: 100 }, (_, index) => ({ Name: `${index} ${'n'.repeat(20_000)}` }));
    const bulk = await sendRetryingUnavailable(
      `${gw.url}/api/v1/bases/${baseId}/tables/${tableId}/records/bulk`,
      {
        method: 'POST',
        headers: json(),
        body: JSON.stringify({ records }),
      },
    );
    const written = (await bulk.json()) as { records: unknown[] };
    expect({ status: bulk.status, written }).toEqual({ status: 201, written: expect.anything() });
    expect(written.records).toHaveLength(100);
    const list = await fetch(`${gw.url}/api/v1/bases/${baseId}/tables/${tableId}/records/list`, {
      method: 'POST',
      headers: json(),
      body: JSON.stringify({ limit: 500 }),
    });
    expect(list.status).toBe(200);
    const text = await list.text();
    expect(text.length).toBeGreaterThan(2_000_000);
    expect((JSON.parse(text) as { total: number }).total).toBeGreaterThanOrEqual(100);
  });

  it('uploads an attachment and downloads a range of it, with links on the gateway host', async () => {
    const bytes = Buffer.from(
      Array.from({ length: 8000 }, (_, line) => `line ${line} ${randomBytes(8).toString('hex')}\n`).join(''),
    );
    const form = new FormData();
    form.append('filepond', new Blob([bytes], { type: 'text/plain' }), 'notes.txt');
    const uploaded = await fetch(`${gw.url}/fileupload`, {
      method: 'POST',
      headers: { ...auth(), 'base-public-id': baseId, 'table-id': tableId, 'field-id': filesFieldId },
      body: form,
    });
    const file = (await uploaded.json()) as { url: string; size: number };
    expect({ status: uploaded.status, file }).toMatchObject({ status: 201 });
    expect(file.size).toBe(bytes.length);
    // The gateway passes the caller's Host, so the service names itself by the gateway's address.
    expect(file.url.startsWith(`${gw.url}/files/`)).toBe(true);

    const range = await fetch(file.url, { headers: { ...auth(), range: 'bytes=1000-1999' } });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 1000-1999/${bytes.length}`);
    expect(Buffer.from(await range.arrayBuffer()).equals(bytes.subarray(1000, 2000))).toBe(true);

    const whole = await fetch(file.url, { headers: auth() });
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("refuses an upload past the gateway's limit itself, with a 413 in the JSON error body", async () => {
    const requestId = `e2e-too-large-${randomBytes(4).toString('hex')}`;
    const form = new FormData();
    form.append('filepond', new Blob([Buffer.alloc(22 * MB, 1)]), 'huge.bin');
    const response = await fetch(`${gw.url}/fileupload`, {
      method: 'POST',
      headers: { ...auth(), 'x-request-id': requestId },
      body: form,
    });
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(body.error.message).toContain('20 MB for /fileupload');
    // nginx answered: the request never reached upload-service.
    const line = (await gw.accessLog(requestId)).find((entry) => entry.request_id === requestId);
    expect(line).toMatchObject({ status: 413, upstream: '' });
  });

  it('ends the connection of an upload refused before its body was read, and says so in its answer', async () => {
    // A raw client, to send the body slowly: upload-service refuses a key it does not know before
    // reading a byte of the body, while nginx is still reading it from the client.
    const { port, hostname } = new URL(gw.url);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('error', () => {});
    const bodyBytes = 2 * MB;
    socket.write(
      `POST /fileupload HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer unknown_${randomBytes(12).toString('hex')}\r\n` +
        `Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${bodyBytes}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(16 * 1024, 'a');
    for (
      let sent = 0;
      sent < bodyBytes && !socket.destroyed && !received.includes('\r\n\r\n');
      sent += chunk.length
    ) {
      socket.write(chunk);
      await new Promise((done) => setTimeout(done, 2));
    }
    await closed;
    const head = received.split('\r\n\r\n')[0]!;
    expect(head).toMatch(/^HTTP\/1\.1 401 /);
    // Without it, the answer said keep-alive and the gateway closed the connection under the
    // client's next request, which was lost.
    expect(head).toMatch(/\r\nConnection: close\r\n/i);
  });

  it("refuses a JSON body past the gateway's limit in the JSON error body", async () => {
    const response = await fetch(`${gw.url}/api/v1/bases`, {
      method: 'POST',
      headers: json(),
      body: JSON.stringify({ name: 'x'.repeat(11 * MB) }),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it("echoes the caller's request id, passes it to the service and logs it", async () => {
    const requestId = `e2e-${randomBytes(8).toString('hex')}`;
    const response = await fetch(`${gw.url}/api/v1/bases`, {
      headers: { ...auth(), 'x-request-id': requestId },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe(requestId);
    const line = (await gw.accessLog(requestId)).find((entry) => entry.request_id === requestId);
    expect(line).toMatchObject({ status: 200, uri: '/api/v1/bases', upstream: gw.replicas[0] });
  });

  it('gives a request without a usable id one of its own', async () => {
    const without = await fetch(`${gw.url}/api/v1/bases`, { headers: auth() });
    expect(without.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    // An id that could forge log lines or headers is replaced, not passed on.
    const forged = await fetch(`${gw.url}/api/v1/bases`, {
      headers: { ...auth(), 'x-request-id': 'a b"c' },
    });
    expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('answers an unknown path and the services’ internals with a JSON 404', async () => {
    for (const path of ['/nowhere', '/metrics', '/readyz']) {
      const response = await fetch(`${gw.url}${path}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        error: { code: 'NOT_FOUND', message: 'No route for this path' },
      });
    }
    expect(await (await fetch(`${gw.url}/healthz`)).json()).toEqual({ status: 'ok' });
  });

  it('sends /docs and the OpenAPI document to records-api', async () => {
    for (const path of ['/docs', '/docs/index.html', '/api/v1/openapi.json']) {
      const requestId = `docs-${randomBytes(6).toString('hex')}`;
      const response = await fetch(`${gw.url}${path}`, { headers: { 'x-request-id': requestId } });
      await response.arrayBuffer();
      const line = (await gw.accessLog(requestId)).find((entry) => entry.request_id === requestId);
      expect(line).toMatchObject({ uri: path, upstream: gw.replicas[0] });
    }
  });

  // Last: it stops a service.
  it('answers for a service that is down with a 503 in the JSON error body', async () => {
    await gw.stack.kill('upload-service');
    const response = await fetch(`${gw.url}/files/attachments/anything`, { headers: auth() });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(await response.json()).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'The service behind the gateway is unavailable; retry shortly',
      },
    });
  });
});
