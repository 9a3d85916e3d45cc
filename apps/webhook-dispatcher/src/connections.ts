import type { LookupAddress, LookupOneOptions } from 'node:dns';
import { type Cidr, type Resolver, resolveAndVet, type VettedAddress } from '@recordbase/server-kit/ssrf';
import { Agent } from 'undici';

/**
 * Keep-alive connections to receivers. A connection is opened only to addresses the SSRF guard
 * has checked (the agent's `lookup` answers nothing else), and agents are keyed by those
 * addresses: a host whose DNS answer changes gets a new agent after the new addresses are
 * checked. Checked answers are reused for `vetTtlMs`; idle agents are closed.
 */

export interface AgentSettings {
  connectTimeoutMs: number;
  /** Headers and body deadlines of a response. */
  timeoutMs: number;
}

/** A `lookup` for net/tls that answers only the addresses already checked. */
export function vettedLookup(addresses: readonly VettedAddress[]) {
  return (
    _hostname: string,
    options: LookupOneOptions & { all?: boolean },
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ) => {
    const family = options.family === 4 || options.family === 6 ? options.family : undefined;
    const candidates = family ? addresses.filter((entry) => entry.family === family) : [...addresses];
    process.nextTick(() => {
      if (candidates.length === 0) {
        const error: NodeJS.ErrnoException = new Error('no checked address of the requested family');
        error.code = 'ENOTFOUND';
        callback(error, '');
      } else if (options.all) {
        callback(null, candidates);
      } else {
        callback(null, candidates[0]!.address, candidates[0]!.family);
      }
    });
  };
}

export function newAgent(
  addresses: readonly VettedAddress[],
  settings: AgentSettings,
  connections: number,
): Agent {
  return new Agent({
    connect: { timeout: settings.connectTimeoutMs, lookup: vettedLookup(addresses) as never },
    connections,
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
  });
}

export class ReceiverConnections {
  private readonly vetted = new Map<string, { addresses: VettedAddress[]; until: number }>();
  private readonly agents = new Map<string, { agent: Agent; usedAt: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly options: {
      /** How long a checked DNS answer is reused. */
      vetTtlMs?: number;
      /** An agent unused for this long is closed. */
      idleMs?: number;
      /** Connections per agent (one receiver origin at given addresses). */
      connectionsPerAgent?: number;
    } = {},
  ) {
    const idleMs = options.idleMs ?? 60_000;
    this.timer = setInterval(() => this.closeIdle(idleMs), Math.min(idleMs, 30_000));
    this.timer.unref();
  }

  /** The host's addresses, resolved and checked (or the cached check). Throws RefusedAddressError. */
  async vet(hostname: string, allowedCidrs: readonly Cidr[], resolve: Resolver): Promise<VettedAddress[]> {
    const now = Date.now();
    const cached = this.vetted.get(hostname);
    if (cached && cached.until > now) return cached.addresses;
    const addresses = await resolveAndVet(hostname, allowedCidrs, resolve);
    if (this.vetted.size > 10_000) this.vetted.clear();
    this.vetted.set(hostname, { addresses, until: now + (this.options.vetTtlMs ?? 30_000) });
    return addresses;
  }

  agentFor(target: URL, addresses: readonly VettedAddress[], settings: AgentSettings): Agent {
    const key = `${target.origin}|${settings.connectTimeoutMs}|${settings.timeoutMs}|${addresses
      .map((entry) => entry.address)
      .join(',')}`;
    const now = Date.now();
    const known = this.agents.get(key);
    if (known) {
      known.usedAt = now;
      return known.agent;
    }
    const agent = newAgent(addresses, settings, this.options.connectionsPerAgent ?? 64);
    this.agents.set(key, { agent, usedAt: now });
    return agent;
  }

  private closeIdle(idleMs: number): void {
    const cutoff = Date.now() - idleMs;
    for (const [key, entry] of this.agents) {
      if (entry.usedAt < cutoff) {
        this.agents.delete(key);
        void entry.agent.close().catch(() => {});
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((entry) => entry.agent.destroy().catch(() => {})));
  }
}
