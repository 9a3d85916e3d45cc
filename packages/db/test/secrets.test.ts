import { decryptSecret, encryptSecret, newSecretKey, parseSecretKey } from '../src/secrets';

describe('webhook secret encryption', () => {
  const key = parseSecretKey(newSecretKey());

  it('round-trips and never stores the plaintext', () => {
    const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';
    const stored = encryptSecret(key, secret);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain('c2VjcmV0');
    expect(decryptSecret(key, stored)).toBe(secret);
    expect(encryptSecret(key, secret)).not.toBe(stored);
  });

  it('refuses a tampered ciphertext and a wrong key', () => {
    const stored = encryptSecret(key, 'whsec_abc');
    const bytes = Buffer.from(stored.slice(3), 'base64');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    expect(() => decryptSecret(key, `v1:${bytes.toString('base64')}`)).toThrow();
    expect(() => decryptSecret(parseSecretKey(newSecretKey()), stored)).toThrow();
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => parseSecretKey(Buffer.alloc(16).toString('base64'))).toThrow(/32 bytes/);
  });
});
