import {
  commonEnvSchema,
  defaultQueuePrefix,
  parseEnv,
  queuePrefixSchema,
  withQueuePrefix,
} from '../src/env';

describe('QUEUE_PREFIX', () => {
  it('is derived from the database name when unset', () => {
    expect(defaultQueuePrefix('postgresql://postgres@127.0.0.1:5432/recordbase')).toBe('rb-recordbase');
    expect(defaultQueuePrefix('postgres://u:p@db.internal/staging?sslmode=require')).toBe('rb-staging');
  });

  it('differs between databases and agrees between services of one database', () => {
    const a = 'postgresql://postgres@127.0.0.1:5432/stack_a';
    const b = 'postgresql://postgres@127.0.0.1:5432/stack_b';
    expect(defaultQueuePrefix(a)).not.toBe(defaultQueuePrefix(b));
    // Another host spelling of the same database is the same installation.
    expect(defaultQueuePrefix(a)).toBe(defaultQueuePrefix('postgresql://postgres:pw@localhost/stack_a'));
  });

  it('takes the user name when the URL names no database, as PostgreSQL does', () => {
    expect(defaultQueuePrefix('postgresql://alice@127.0.0.1:5432')).toBe('rb-alice');
    expect(defaultQueuePrefix('postgresql://127.0.0.1:5432/')).toBe('rb-postgres');
  });

  it('keeps the derived prefix to the characters QUEUE_PREFIX allows', () => {
    const prefix = defaultQueuePrefix('postgresql://postgres@127.0.0.1/my%3Adb%20x');
    expect(prefix).toBe('rb-my_db_x');
    expect(queuePrefixSchema.parse(prefix)).toBe(prefix);
  });

  it('keeps a QUEUE_PREFIX that is set', () => {
    const config = withQueuePrefix({ DATABASE_URL: 'postgresql://h/db', QUEUE_PREFIX: 'custom' });
    expect(config.QUEUE_PREFIX).toBe('custom');
    expect(withQueuePrefix({ DATABASE_URL: 'postgresql://h/db' }).QUEUE_PREFIX).toBe('rb-db');
  });
});

describe('HOST', () => {
  it('binds loopback unless told otherwise', () => {
    expect(parseEnv(commonEnvSchema, {}).HOST).toBe('127.0.0.1');
    expect(parseEnv(commonEnvSchema, { HOST: '0.0.0.0' }).HOST).toBe('0.0.0.0');
  });

  it('names HOST when it is empty', () => {
    expect(() => parseEnv(commonEnvSchema, { HOST: '' })).toThrow(/HOST: must not be empty/);
  });
});
