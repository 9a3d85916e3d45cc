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
}

export function loadConfig(): SoakConfig {
  return {
    minutes: number('SOAK_MINUTES', 10),
    warmUpMinutes: number('SOAK_WARMUP_MINUTES', 2, true),
    ratePerSecond: number('SOAK_RATE', 40),
    seedRecords: number('SOAK_SEED_RECORDS', 10_000),
    rssSamplesPerMinute: number('SOAK_RSS_SAMPLES_PER_MINUTE', 12),
    drainSeconds: number('SOAK_DRAIN_SECONDS', 120),
  };
}

/** Results are written to the README and results.json only by a run of the full length. */
export const isFullRun = (config: SoakConfig) => config.minutes >= 10;
