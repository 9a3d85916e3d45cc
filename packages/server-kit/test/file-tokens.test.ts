import jwt from 'jsonwebtoken';
import { signFileToken, verifyFileToken } from '../src/file-tokens';

const secret = 'a'.repeat(43);

describe('file tokens', () => {
  it('open the file they name, for the key they were issued to', () => {
    const token = signFileToken(secret, { fileKey: 'attachments/x/1.png', keyId: 'k1' }, 60);
    expect(verifyFileToken(secret, token, 'attachments/x/1.png')).toEqual({ ok: true, keyId: 'k1' });
    const root = signFileToken(secret, { fileKey: 'f', keyId: null }, 60);
    expect(verifyFileToken(secret, root, 'f')).toEqual({ ok: true, keyId: null });
  });

  it('do not open another file', () => {
    const token = signFileToken(secret, { fileKey: 'a', keyId: 'k1' }, 60);
    expect(verifyFileToken(secret, token, 'b')).toEqual({ ok: false, reason: 'other_file' });
  });

  it('expire', () => {
    const token = signFileToken(secret, { fileKey: 'a', keyId: 'k1' }, -1);
    expect(verifyFileToken(secret, token, 'a')).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuse a tampered payload, another secret, another audience and the none algorithm', () => {
    const token = signFileToken(secret, { fileKey: 'a', keyId: 'k1' }, 60);
    const [header, , signature] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ fk: 'b', sub: 'k1', aud: 'recordbase:file', exp: 9e9 }),
    ).toString('base64url');
    expect(verifyFileToken(secret, `${header}.${forged}.${signature}`, 'b').ok).toBe(false);
    expect(verifyFileToken(`${secret}x`, token, 'a').ok).toBe(false);
    const otherAudience = jwt.sign({ fk: 'a', sub: 'k1' }, secret, { audience: 'elsewhere' });
    expect(verifyFileToken(secret, otherAudience, 'a').ok).toBe(false);
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"fk":"a","sub":"k1","aud":"recordbase:file"}').toString('base64url')}.`;
    expect(verifyFileToken(secret, unsigned, 'a').ok).toBe(false);
    expect(verifyFileToken(secret, 'garbage', 'a').ok).toBe(false);
  });
});
