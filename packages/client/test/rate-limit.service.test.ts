import { isRecordbaseError } from '../src/index';
import { type Services, startServices } from './services';

/** The service's own rate limit: its 429s carry Retry-After, which the client waits out. */

let services: Services;

beforeAll(async () => {
  services = await startServices({ RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '2' });
}, 120_000);
afterAll(async () => {
  await services?.stop();
});

it('waits out 429s until every request of a burst succeeds, and without retries says how long to wait', async () => {
  const statuses: number[] = [];
  const counting: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  const patient = services.client({ fetch: counting, retry: { maxAttempts: 8 } });
  const answers = await Promise.all(Array.from({ length: 6 }, () => patient.bases.list()));
  expect(answers).toEqual(Array(6).fill([]));
  expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
  expect(statuses.filter((status) => status === 200)).toHaveLength(6);
  expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);

  const hasty = services.client({ retry: { maxAttempts: 1 } });
  const results = await Promise.allSettled(Array.from({ length: 4 }, () => hasty.bases.list()));
  const refused = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
  expect(refused.length).toBeGreaterThan(0);
  for (const error of refused) {
    expect(isRecordbaseError(error, 'RATE_LIMITED')).toBe(true);
    expect(error).toMatchObject({ status: 429 });
    expect(error.retryAfterMs).toBeGreaterThanOrEqual(1000);
  }
});
