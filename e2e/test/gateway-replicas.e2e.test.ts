import { describeWithNginx, type GatewayStack, startGatewayStack } from './gateway-stack';

/**
 * Two records-api replicas behind the gateway, as `RECORDS_API_REPLICAS=2 npm start` runs them:
 * requests reach both, a key's rate limit is one budget across them (it lives in Redis), and
 * with one replica stopped every request is still answered by the other.
 */

const PER_SECOND = 4;
const BURST = 8;

describeWithNginx('two records-api replicas behind the gateway', () => {
  let gw: GatewayStack;

  beforeAll(async () => {
    gw = await startGatewayStack({
      replicas: 2,
      env: { RATE_LIMIT_PER_SECOND: String(PER_SECOND), RATE_LIMIT_BURST: String(BURST) },
    });
  }, 180_000);
  afterAll(async () => {
    await gw?.stop();
  });

  /**
   * A key of its own, so that its budget is this test's alone (the root key's bucket is shared
   * by every stack on this Redis; a few calls with it cost the others nothing).
   */
  async function newKey(name: string): Promise<string> {
    const response = await fetch(`${gw.url}/api/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.stack.rootKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, scopes: ['schema:read'] }),
    });
    const body = (await response.json()) as { key: string };
    expect({ status: response.status, body }).toMatchObject({ status: 201 });
    return body.key;
  }

  const listBases = (key: string, requestId: string) =>
    fetch(`${gw.url}/api/v1/bases`, {
      headers: { authorization: `Bearer ${key}`, 'x-request-id': requestId },
    });

  /** The access log's lines of the requests `${prefix}0` to `${prefix}${count - 1}`. */
  const linesOf = async (prefix: string, count: number) => {
    const ids = Array.from({ length: count }, (_, index) => `${prefix}${index}`);
    const lines = await gw.accessLog(...ids);
    return lines.filter((entry) => ids.includes(String(entry.request_id)));
  };

  it('shares one rate limit between the replicas', async () => {
    const key = await newKey('replicas-rate');
    const started = Date.now();
    const statuses: number[] = [];
    for (let index = 0; index < 3 * BURST; index += 1) {
      const response = await listBases(key, `rate-${index}`);
      statuses.push(response.status);
      if (response.status === 429) {
        const body = (await response.json()) as { error: { code: string } };
        expect(body.error.code).toBe('RATE_LIMITED');
      } else {
        await response.arrayBuffer();
      }
    }
    const elapsedSeconds = (Date.now() - started) / 1000;

    // Both replicas answered: the gateway spread the requests.
    const answeredBy = (await linesOf('rate-', statuses.length)).map((entry) => entry.upstream);
    expect(new Set(answeredBy)).toEqual(new Set(gw.replicas));
    // One budget: the burst plus what refilled meanwhile, not a burst per replica.
    const allowed = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(allowed).toBeGreaterThanOrEqual(BURST);
    expect(allowed).toBeLessThanOrEqual(BURST + Math.ceil(elapsedSeconds * PER_SECOND) + 1);
    expect(allowed).toBeLessThan(2 * BURST);
  });

  it('still answers every request while one replica is stopped', async () => {
    const key = await newKey('replicas-failover');
    await gw.stopReplica(1);
    const statuses: number[] = [];
    for (let index = 0; index < BURST - 2; index += 1) {
      const response = await listBases(key, `failover-${index}`);
      statuses.push(response.status);
      await response.arrayBuffer();
    }
    expect(statuses).toEqual(Array(BURST - 2).fill(200));
    // The gateway tried the stopped replica at most once, then sent everything to the other.
    const answeredBy = (await linesOf('failover-', statuses.length)).map((entry) =>
      String(entry.upstream).split(', ').at(-1),
    );
    expect(new Set(answeredBy)).toEqual(new Set([gw.replicas[0]]));
  });
});
