import { Resolver as DnsResolver, lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';

/**
 * The SSRF guard, shared by records-api (a webhook's URL when it is registered) and the
 * dispatcher (when it is delivered to). A webhook URL is checked when it is delivered to, on the addresses its host
 * resolves to: every address must be public (or inside an operator allow-list,
 * WEBHOOK_ALLOWED_CIDRS), and the connection then goes to exactly the addresses checked, so a DNS
 * answer that changes between the check and the connection (rebinding) cannot reach anything else.
 */

type Family = 4 | 6;

interface ParsedIp {
  family: Family;
  value: bigint;
}

export interface Cidr {
  family: Family;
  base: bigint;
  bits: number;
  text: string;
}

export interface VettedAddress {
  address: string;
  family: Family;
}

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

function parseIpv4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = (value << 8n) | BigInt(octet);
  }
  return value;
}

function parseIpv6(text: string): bigint | null {
  let address = text;
  // An embedded dotted quad at the end (::ffff:127.0.0.1) stands for the last two groups.
  const lastColon = address.lastIndexOf(':');
  const last = address.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIpv4(last);
    if (v4 === null) return null;
    address = `${address.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const toGroups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = toGroups(halves[0]!);
  const tail = halves.length === 2 ? toGroups(halves[1]!) : [];
  let groups: string[];
  if (halves.length === 2) {
    if (head.length + tail.length > 7) return null;
    groups = [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return null;
  let value = 0n;
  for (const group of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
    value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  }
  return value;
}

/** An IPv4 or IPv6 address (brackets and a zone id allowed), or null. */
export function parseIp(text: string): ParsedIp | null {
  let address = text.trim();
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const zone = address.indexOf('%');
  if (zone >= 0) address = address.slice(0, zone);
  const kind = isIP(address);
  if (kind === 4) {
    const value = parseIpv4(address);
    return value === null ? null : { family: 4, value };
  }
  if (kind === 6) {
    const value = parseIpv6(address);
    return value === null ? null : { family: 6, value };
  }
  return null;
}

function maskOf(family: Family, bits: number): bigint {
  const width = family === 4 ? 32n : 128n;
  return ((1n << width) - 1n) ^ ((1n << (width - BigInt(bits))) - 1n);
}

/** `10.0.0.0/8`, `fd00::/8`, or a bare address (a /32 or /128). */
export function parseCidr(text: string): Cidr {
  const trimmed = text.trim();
  const [addressPart, bitsPart, ...extra] = trimmed.split('/');
  const ip = parseIp(addressPart ?? '');
  if (!ip || extra.length > 0) throw new Error(`"${trimmed}" is not an IP address or CIDR range`);
  const max = ip.family === 4 ? 32 : 128;
  const bits = bitsPart === undefined ? max : /^\d{1,3}$/.test(bitsPart) ? Number(bitsPart) : Number.NaN;
  if (!(bits >= 0 && bits <= max)) throw new Error(`"${trimmed}" has an invalid prefix length`);
  return { family: ip.family, base: ip.value & maskOf(ip.family, bits), bits, text: trimmed };
}

/** A comma list of CIDR ranges (WEBHOOK_ALLOWED_CIDRS); empty means none. */
export function parseCidrList(text: string): Cidr[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(parseCidr);
}

function contains(cidr: Cidr, ip: ParsedIp): boolean {
  return cidr.family === ip.family && (ip.value & maskOf(cidr.family, cidr.bits)) === cidr.base;
}

const blocked = (reason: string, ...ranges: string[]) =>
  ranges.map((range) => ({ cidr: parseCidr(range), reason }));

const IPV4_BLOCKED = [
  ...blocked('unspecified', '0.0.0.0/8'),
  ...blocked('private', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'),
  ...blocked('carrier-grade NAT', '100.64.0.0/10'),
  ...blocked('loopback', '127.0.0.0/8'),
  ...blocked('link-local', '169.254.0.0/16'),
  ...blocked('reserved', '192.0.0.0/24', '192.88.99.0/24', '240.0.0.0/4'),
  ...blocked('documentation', '192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'),
  ...blocked('benchmarking', '198.18.0.0/15'),
  ...blocked('multicast', '224.0.0.0/4'),
];

const IPV6_BLOCKED = [
  ...blocked('unspecified', '::/128'),
  ...blocked('loopback', '::1/128'),
  // Deprecated IPv4-compatible addresses (::a.b.c.d).
  ...blocked('reserved', '::/96', '100::/64', 'fec0::/10'),
  ...blocked('private', '64:ff9b:1::/48'),
  ...blocked('documentation', '2001:db8::/32'),
  ...blocked('unique-local', 'fc00::/7'),
  ...blocked('link-local', 'fe80::/10'),
  ...blocked('multicast', 'ff00::/8'),
];

/** IPv6 forms that carry an IPv4 address, judged by that address: mapped, translated, NAT64, 6to4. */
const IPV4_CARRIERS: { cidr: Cidr; extract: (value: bigint) => bigint }[] = [
  { cidr: parseCidr('::ffff:0:0/96'), extract: (value) => value & 0xffffffffn },
  { cidr: parseCidr('::ffff:0:0:0/96'), extract: (value) => value & 0xffffffffn },
  { cidr: parseCidr('64:ff9b::/96'), extract: (value) => value & 0xffffffffn },
  { cidr: parseCidr('2002::/16'), extract: (value) => (value >> 80n) & 0xffffffffn },
];

function embeddedIpv4(ip: ParsedIp): ParsedIp | null {
  if (ip.family !== 6) return null;
  const carrier = IPV4_CARRIERS.find((entry) => contains(entry.cidr, ip));
  return carrier ? { family: 4, value: carrier.extract(ip.value) } : null;
}

function blockedReason(ip: ParsedIp): string | null {
  const table = ip.family === 4 ? IPV4_BLOCKED : IPV6_BLOCKED;
  return table.find((entry) => contains(entry.cidr, ip))?.reason ?? null;
}

/**
 * Whether a delivery may connect to `address`: allowed when the operator's allow-list contains it
 * (or the IPv4 address it carries), refused when it (or the IPv4 address it carries) is private,
 * loopback, link-local, carrier-grade NAT, unique-local, unspecified, multicast or reserved.
 */
export function checkAddress(address: string, allowList: readonly Cidr[] = []): AddressVerdict {
  const ip = parseIp(address);
  if (!ip) return { allowed: false, reason: 'not an IP address' };
  const inner = embeddedIpv4(ip);
  if (allowList.some((cidr) => contains(cidr, ip) || (inner !== null && contains(cidr, inner)))) {
    return { allowed: true };
  }
  const reason = (inner && blockedReason(inner)) ?? blockedReason(ip);
  return reason ? { allowed: false, reason } : { allowed: true };
}

export class RefusedAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RefusedAddressError';
  }
}

export type Resolver = (hostname: string) => Promise<VettedAddress[]>;

export const systemResolver: Resolver = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

/**
 * Resolves `hostname` (an IP literal is its own answer) and checks every address. Throws
 * RefusedAddressError naming the kind of address, never the address itself (the message reaches
 * the webhook's owner through the deliveries API, and internal addresses are not theirs to see).
 */
export async function resolveAndVet(
  hostname: string,
  allowList: readonly Cidr[],
  resolve: Resolver = systemResolver,
): Promise<VettedAddress[]> {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const literal = parseIp(bare);
  const addresses = literal ? [{ address: bare, family: literal.family }] : await resolve(bare);
  if (addresses.length === 0) throw new RefusedAddressError(`${bare} resolves to no address`);
  for (const { address } of addresses) {
    const verdict = checkAddress(address, allowList);
    if (!verdict.allowed) {
      throw new RefusedAddressError(
        literal
          ? `refused to connect to a ${verdict.reason} address`
          : `refused: ${bare} resolves to a ${verdict.reason} address`,
      );
    }
  }
  return addresses;
}

/** How long registering a webhook waits for its host's addresses. */
const REGISTRATION_DNS_TIMEOUT_MS = 1000;

/**
 * The addresses of a host as DNS answers them, asked of DNS directly (c-ares: a slow server holds
 * no thread of the pool files and crypto share) within a second; none when it does not answer.
 * The names RFC 6761 reserves for loopback are loopback, whatever DNS would say.
 */
export const registrationResolver: Resolver = async (hostname) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }];
  const dns = new DnsResolver({ timeout: REGISTRATION_DNS_TIMEOUT_MS, tries: 1 });
  const [v4, v6] = await Promise.allSettled([dns.resolve4(name), dns.resolve6(name)]);
  return [
    ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
    ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
  ];
};

/**
 * Why a webhook URL may not be registered: its host is, or resolves to, an address deliveries
 * would refuse. null when allowed, and when the host does not resolve (yet): every delivery
 * checks again, on the addresses it connects to.
 */
export async function refusedWebhookUrl(
  url: string,
  allowList: readonly Cidr[],
  resolve: Resolver = registrationResolver,
): Promise<string | null> {
  let hostname: string;
  try {
    hostname = new URL(url).hostname;
  } catch {
    return null;
  }
  try {
    await resolveAndVet(hostname, allowList, async (name) => {
      const addresses = await resolve(name);
      if (addresses.length === 0) throw new UnresolvedHost();
      return addresses;
    });
    return null;
  } catch (error) {
    if (error instanceof RefusedAddressError) return error.message;
    if (error instanceof UnresolvedHost) return null;
    throw error;
  }
}

class UnresolvedHost extends Error {}
