/** The soak's settings, from the environment (see bench/README.md, "soak"). */

/** A number setting: positive, or with `zeroAllowed`, zero or more. */
const number = (name: string, fallback: number, zeroAllowed = false): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed)) {
    throw new Error(`${name} must be ${zeroAllowed ? 'zero or more' : 'a positive number'}, not ${raw}`);
  }
  return value;
};

/** An on/off setting: 1 or true turns it on, 0, false or unset leaves it off. */
const flag = (name: string): boolean => {
  const raw = process.env[name] ?? '';
  if (['', '0', 'false'].includes(raw)) return false;
  if (['1', 'true'].includes(raw)) return true;
  throw new Error(`${name} must be 1 or 0, not ${raw}`);
};

export interface SoakConfig {
  /** How long the steady load lasts once warmed up: the minutes the targets are measured on. */
  minutes: number;
  /**
   * Minutes of the same load before those: V8 sizes each heap's young generation to the
   * allocation rate it meets, and JIT-compiles the hot paths, in the first minutes of load. They
   * count for errors and events but not for the memory and p99 targets, which compare the
   * measured minutes with each other.
   */
  warmUpMinutes: number;
  /** Requests started per second, whatever the answers' pace (an open loop). */
  ratePerSecond: number;
  /** Records in the table before the load starts. */
  seedRecords: number;
  /** RSS samples per process per minute. */
  rssSamplesPerMinute: number;
  /** How long events may take to arrive once the load stops. */
  drainSeconds: number;
  /**
   * API keys the normal load is dealt among, round robin: the other tenants. Each key has its own
   * bounds (requests in flight, rate), as each tenant does; one key for all of them would meet
   * its bound of 16 requests in flight as soon as latency rose, where tenants would not.
   */
  tenants: number;
  /**
   * Bytes of attachments each database may keep (STORAGE_QUOTA_BYTES_PER_DATABASE), set for quiet
   * and hostile runs alike so both measure the same stack. The normal load stores a few kB.
   */
  storageQuotaBytes: number;
  /** A hostile tenant runs beside the normal load (hostile.ts); off for the quiet run. */
  hostile: boolean;
  /** The hostile tenant's slow listings at once: more than a key's 16 in flight, so it meets 429s. */
  hostileListings: number;
  /** Each of the hostile tenant's attachment uploads, bytes. */
  hostileUploadBytes: number;
  /**
   * Only the attacks whose names contain one of these (case aside), to tell which of them costs
   * the other tenants what; empty for every attack.
   */
  hostileAttacks: string[];
}

export function loadConfig(): SoakConfig {
  return {
    minutes: number('SOAK_MINUTES', 10),
    warmUpMinutes: number('SOAK_WARMUP_MINUTES', 2, true),
    ratePerSecond: number('SOAK_RATE', 40),
    seedRecords: number('SOAK_SEED_RECORDS', 10_000),
    rssSamplesPerMinute: number('SOAK_RSS_SAMPLES_PER_MINUTE', 12),
    drainSeconds: number('SOAK_DRAIN_SECONDS', 120),
    tenants: Math.round(number('SOAK_TENANTS', 8)),
    storageQuotaBytes: Math.round(number('SOAK_STORAGE_QUOTA_MIB', 64) * 1024 * 1024),
    hostile: flag('SOAK_HOSTILE'),
    hostileListings: Math.round(number('SOAK_HOSTILE_LISTINGS', 24)),
    hostileUploadBytes: Math.round(number('SOAK_HOSTILE_UPLOAD_KIB', 1024) * 1024),
    hostileAttacks: (process.env.SOAK_HOSTILE_ATTACKS ?? '')
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => part !== ''),
  };
}

/** Results are written to the README and results.json only by a run of the full length. */
export const isFullRun = (config: SoakConfig) => config.minutes >= 10;
