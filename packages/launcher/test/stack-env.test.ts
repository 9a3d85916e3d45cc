import { stackEnv } from '../src/stack';

const databaseUrl = 'postgresql://postgres@127.0.0.1:5432/stack_env_test';

describe('stackEnv', () => {
  it('gives each stack secrets of its own, shared by all its services', () => {
    const [a, b] = [stackEnv({ databaseUrl, inherit: {} }), stackEnv({ databaseUrl, inherit: {} })];
    for (const name of ['ROOT_API_KEY', 'WEBHOOK_SECRET_KEY', 'FILE_TOKEN_SECRET'] as const) {
      expect(a[name]).not.toBe(b[name]);
    }
    expect(a.ROOT_API_KEY).toMatch(/^root_[0-9a-f]{48}$/);
    // The services require a 32-byte key and a file token secret of at least 32 characters.
    expect(Buffer.from(a.WEBHOOK_SECRET_KEY, 'base64')).toHaveLength(32);
    expect(a.FILE_TOKEN_SECRET.length).toBeGreaterThanOrEqual(32);
  });

  it('keeps the secrets it is given', () => {
    const env = stackEnv({ databaseUrl, inherit: {}, secrets: { ROOT_API_KEY: 'rb_root_kept' } });
    expect(env.ROOT_API_KEY).toBe('rb_root_kept');
    expect(env.FILE_TOKEN_SECRET).toBeTruthy();
  });

  it('makes a throwaway stack local and quiet unless told it is not throwaway', () => {
    const throwaway = stackEnv({ databaseUrl, inherit: {} });
    expect(throwaway).toMatchObject({
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32',
    });
    const kept = stackEnv({ databaseUrl, inherit: { HOST: '0.0.0.0' }, throwaway: false });
    expect(kept.HOST).toBe('0.0.0.0');
    expect(kept.LOG_LEVEL).toBeUndefined();
    expect(kept.WEBHOOK_ALLOWED_CIDRS).toBeUndefined();
  });

  it('sets the variables it is given, lifts the bounds when asked, and lets the caller have the last word', () => {
    const env = stackEnv({
      databaseUrl,
      redisUrl: 'redis://127.0.0.1:6390',
      queuePrefix: 'q-1',
      storageDir: '/tmp/files',
      unbounded: true,
      env: { RATE_LIMIT_BURST: '50', LOG_LEVEL: 'silent' },
      inherit: { PATH: '/bin' },
    });
    expect(env).toMatchObject({
      PATH: '/bin',
      DATABASE_URL: databaseUrl,
      REDIS_URL: 'redis://127.0.0.1:6390',
      QUEUE_PREFIX: 'q-1',
      STORAGE_DIR: '/tmp/files',
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '50',
      LOG_LEVEL: 'silent',
    });
    const bounded = stackEnv({ databaseUrl, inherit: {} });
    expect(bounded.RATE_LIMIT_PER_SECOND).toBeUndefined();
    expect(bounded.QUEUE_PREFIX).toBeUndefined();
    expect(bounded.REDIS_URL).toBe('redis://127.0.0.1:6379');
  });
});
