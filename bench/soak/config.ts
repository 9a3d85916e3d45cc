/** The soak's settings, from the environment (see bench/README.md, "soak"). */

const number = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${raw}`);
  return value;
};

export interface SoakConfig {
  /** How long the steady load lasts. */
  minutes: number;
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
    ratePerSecond: number('SOAK_RATE', 40),
    seedRecords: number('SOAK_SEED_RECORDS', 10_000),
    rssSamplesPerMinute: number('SOAK_RSS_SAMPLES_PER_MINUTE', 12),
    drainSeconds: number('SOAK_DRAIN_SECONDS', 120),
  };
}

/** Results are written to the README and results.json only by a run of the full length. */
export const isFullRun = (config: SoakConfig) => config.minutes >= 10;
