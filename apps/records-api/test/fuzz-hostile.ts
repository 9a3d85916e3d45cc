import fc from 'fast-check';

/**
 * Hostile values for the fuzzer, and how they are planted into a valid-shaped body, a path segment
 * or a query string. Bodies are built as raw bytes, so that what JSON.stringify cannot say (nesting
 * 10,000 deep, -0, 1e309, invalid UTF-8) still reaches the parser.
 */

const MEGABYTE = 1024 * 1024;

/** A piece of raw JSON text, with the name printed when it causes a failure. */
export interface Fragment {
  name: string;
  json: Buffer;
}

const fragment = (name: string, json: string | Buffer): Fragment => ({
  name,
  json: Buffer.isBuffer(json) ? json : Buffer.from(json, 'utf8'),
});

/** Built once: they are large. */
let cached: Fragment[] | undefined;
export function hostileFragments(): Fragment[] {
  cached ??= [
    fragment('NUL', '"\\u0000"'),
    fragment('NUL inside text', '"a\\u0000b"'),
    fragment('lone high surrogate', '"\\ud800"'),
    fragment('lone low surrogate', '"x\\udc00y"'),
    fragment('raw NUL byte in a string', Buffer.from([0x22, 0x61, 0x00, 0x62, 0x22])),
    fragment('invalid UTF-8 in a string', Buffer.from([0x22, 0xc3, 0x28, 0xff, 0x22])),
    fragment('1 MB string', `"${'a'.repeat(MEGABYTE)}"`),
    fragment('1 MB of two-byte characters', `"${'é'.repeat(MEGABYTE / 2)}"`),
    fragment('arrays nested 10,000 deep', `${'['.repeat(10_000)}1${']'.repeat(10_000)}`),
    fragment('objects nested 10,000 deep', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`),
    fragment('100,000 numbers', `[${new Array(100_000).fill('1').join(',')}]`),
    fragment('100,000 strings', `[${new Array(100_000).fill('"x"').join(',')}]`),
    fragment('100,000 objects', `[${new Array(100_000).fill('{}').join(',')}]`),
    fragment('1e308', '1e308'),
    fragment('-1e308', '-1e308'),
    fragment('1e309 (Infinity once parsed)', '1e309'),
    fragment('-0', '-0'),
    fragment('5e-324', '5e-324'),
    fragment('2^53 + 1', '9007199254740993'),
    fragment('a 30-digit integer', '123456789012345678901234567890'),
    fragment('2^31', '2147483648'),
    fragment('-1', '-1'),
    fragment('1.5', '1.5'),
    fragment('"NaN"', '"NaN"'),
    fragment('"Infinity"', '"Infinity"'),
    fragment('"-Infinity"', '"-Infinity"'),
    fragment('"1e308"', '"1e308"'),
    fragment('null', 'null'),
    fragment('true', 'true'),
    fragment('false', 'false'),
    fragment('0', '0'),
    fragment('empty string', '""'),
    fragment('empty array', '[]'),
    fragment('empty object', '{}'),
    fragment('"[object Object]"', '"[object Object]"'),
    fragment('__proto__ object', '{"__proto__":{"polluted":true}}'),
    fragment('constructor.prototype object', '{"constructor":{"prototype":{"polluted":true}}}'),
    fragment('"__proto__"', '"__proto__"'),
    fragment('"constructor"', '"constructor"'),
    fragment('"toString"', '"toString"'),
    fragment('"hasOwnProperty"', '"hasOwnProperty"'),
    fragment('impossible date', '"2024-02-30"'),
    fragment('year 0', '"0000-01-01"'),
    fragment('year 99999', '"99999-12-31T23:59:59Z"'),
    fragment('offset +99:99', '"2024-01-01T00:00:00+99:99"'),
    fragment('SQL quote', `"'; DROP TABLE x; --"`),
    fragment('LIKE wildcards and a backslash', '"%_\\\\"'),
    fragment('a JSON text in a string', '"{\\"a\\":1}"'),
    fragment('a negative zero string', '"-0"'),
    fragment('a UUID of zeros', '"00000000-0000-0000-0000-000000000000"'),
    fragment('emoji and combining marks', '"\\ud83d\\ude00e\\u0301\\u202e"'),
  ];
  return cached;
}

/** Keys that prototype pollution and naive `in` checks trip on. */
export const HOSTILE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '\u0000',
  '\ud800',
  '',
  'id',
  'a'.repeat(10_000),
];

/** One change to a valid-shaped body; `site` picks a place by its index among all places. */
export type Mutation =
  | { kind: 'replace'; site: number; fragment: number }
  | { kind: 'add-key'; site: number; key: number; fragment: number }
  | { kind: 'inject'; site: number; text: number };

/** Text spliced into an existing string value. */
const INJECTED = ['\u0000', '\ud800', '\udfff', 'x'.repeat(MEGABYTE), '\u0000'.repeat(1000), '%', "'"];

export const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('replace' as const), site: fc.nat(), fragment: fc.nat() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('add-key' as const),
      site: fc.nat(),
      key: fc.nat(),
      fragment: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('inject' as const), site: fc.nat(), text: fc.nat() }),
  },
);

type Path = (string | number)[];

function sitesOf(value: unknown, path: Path = [], into: Path[] = []): Path[] {
  into.push(path);
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) sitesOf(item, [...path, index], into);
  } else if (value && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) sitesOf(item, [...path, key], into);
  return into;
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, step) => (node as Record<string | number, unknown>)[step], value);
}

function setAt(root: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const parent = getAt(root, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1]!] = replacement;
  return root;
}

const token = (n: number) => `\u0001FUZZ${n}\u0001`;

/**
 * A valid-shaped value with the mutations applied, as the raw bytes of a request body, and a
 * description of what was planted where (for the failure report).
 */
export function renderBody(valid: unknown, mutations: Mutation[]): { bytes: Buffer; planted: string[] } {
  const fragments = hostileFragments();
  let value: unknown = structuredClone(valid);
  const raw = new Map<string, Buffer>();
  const planted: string[] = [];
  mutations.forEach((mutation, n) => {
    const sites = sitesOf(value);
    const site = sites[mutation.site % sites.length]!;
    const where = `/${site.join('/')}`;
    if (mutation.kind === 'replace') {
      const chosen = fragments[mutation.fragment % fragments.length]!;
      raw.set(token(n), chosen.json);
      value = setAt(value, site, token(n));
      planted.push(`${chosen.name} at ${where}`);
    } else if (mutation.kind === 'add-key') {
      const target = getAt(value, site);
      const chosen = fragments[mutation.fragment % fragments.length]!;
      const key = HOSTILE_KEYS[mutation.key % HOSTILE_KEYS.length]!;
      if (target && typeof target === 'object' && !Array.isArray(target)) {
        // The key goes in as raw text too: assigning `__proto__` in JavaScript would not add a key.
        raw.set(token(n), Buffer.concat([Buffer.from(`${JSON.stringify(key)}:`), chosen.json]));
        (target as Record<string, unknown>)[token(n)] = null;
        planted.push(`key ${JSON.stringify(key.slice(0, 20))} = ${chosen.name} in ${where}`);
      } else {
        raw.set(token(n), chosen.json);
        value = setAt(value, site, token(n));
        planted.push(`${chosen.name} at ${where}`);
      }
    } else {
      const target = getAt(value, site);
      const text = INJECTED[mutation.text % INJECTED.length]!;
      const spliced = typeof target === 'string' ? target.slice(0, 1) + text + target.slice(1) : text;
      value = setAt(value, site, spliced);
      planted.push(
        `${JSON.stringify(text.slice(0, 8))}${text.length > 8 ? `… (${text.length})` : ''} in ${where}`,
      );
    }
  });
  const text = JSON.stringify(value) ?? 'null';
  // Tokens appear as JSON strings (a value) or as a key followed by `:null` (an added key).
  const pattern = /"\\u0001FUZZ(\d+)\\u0001"(:null)?/g;
  const parts: Buffer[] = [];
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    parts.push(Buffer.from(text.slice(last, match.index), 'utf8'));
    parts.push(raw.get(token(Number(match[1])))!);
    last = match.index + match[0].length;
  }
  parts.push(Buffer.from(text.slice(last), 'utf8'));
  return { bytes: Buffer.concat(parts), planted };
}

/**
 * Percent-encodes text for a URL like encodeURIComponent, but also encodes lone surrogates (as the
 * three bytes UTF-8 would give them, which are not valid UTF-8) instead of throwing.
 */
export function encodeComponent(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(text[i]!);
    }
  }
  return out;
}

/** Path segments and query values, already as they go on the wire (raw escapes kept raw). */
export const HOSTILE_URL_PARTS = [
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%FF',
  '%C3%28',
  '%',
  '%zz',
  '%2e%2e',
  '..',
  '%2F',
  '%2Fetc%2Fpasswd',
  "'%3B--",
  '%22',
  '__proto__',
  'constructor',
  'toString',
  'NaN',
  '-0',
  '1e308',
  '-1',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  'a'.repeat(10_000),
  '%E2%80%AE',
  '%F0%9F%98%80',
];
