import { type ChildProcess, fork } from 'node:child_process';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import type { RecordbaseClient } from '@recordbase/client';
import { freePort } from '@recordbase/launcher';
import type { SoakConfig } from './config';
import type { AnswerFigures } from './measure';

/**
 * The hostile tenant: one tenant with a base of its own and keys limited to it, running
 * the attacks of a security review in a loop beside the normal load (hostile-child.ts has them). This side
 * sets the tenant up with the root key and runs the attacks in a child process, so that building
 * its uploads and reading its answers takes no turn of the load generator's event loop, whose
 * open-loop schedule and latencies are the other tenants' figures.
 */

/** The hostile tenant's table of long texts: 400 records of 2 × 45,000 characters (36 MB). */
export const LONG_TEXTS = { records: 400, characters: 45_000, perRequest: 50 } as const;

/** What the child needs to attack: addresses, keys and ids, and the settings. */
export interface HostilePlan {
  gatewayUrl: string;
  /** Every scope, on the tenant's own base only. */
  key: string;
  /** webhooks:manage and schema:read only: a key that must not read records, even through a webhook. */
  webhooksKey: string;
  baseId: string;
  /** Its table of long texts (Title, Body, Notes) with an attachments field, Files. */
  tableId: string;
  /** Its record-event webhook, to an address nobody answers: its deliveries stay open. */
  webhookId: number;
  /** Where the tenant would have those deliveries sent instead. */
  stealUrl: string;
  /** The other tenants' base and webhook, out of the tenant's reach. */
  victim: { baseId: string; webhookId: number };
  listings: number;
  uploadBytes: number;
  /** SOAK_HOSTILE_ATTACKS: name fragments of the attacks to run, or empty for all. */
  attacks: string[];
}

export type HostileMessage = { type: 'ready' } | { type: 'done'; figures: HostileFigures };
export type HostileParentMessage = { type: 'start'; plan: HostilePlan } | { type: 'stop' };

export interface HostileFigures {
  answers: AnswerFigures;
  /** Imports of its bombs that were started, to be waited for like the others. */
  importIds: string[];
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Creates the tenant with the root key: its base and keys, its long texts (written by itself,
 * without events), and a webhook with a delivery still open, which the retarget attack needs.
 */
export async function setUpHostileTenant(
  root: RecordbaseClient,
  makeClient: (apiKey: string) => RecordbaseClient,
  gatewayUrl: string,
  victim: HostilePlan['victim'],
  config: SoakConfig,
): Promise<HostilePlan> {
  const base = await root.bases.create({
    name: 'Hostile',
    tables: [
      {
        name: 'Essays',
        fields: [
          { name: 'Title', type: 'single_line_text' },
          { name: 'Body', type: 'long_text' },
          { name: 'Notes', type: 'long_text' },
          { name: 'Files', type: 'attachments' },
        ],
      },
    ],
  });
  const table = base.tables[0]!;
  const key = await root.apiKeys.create({
    name: 'hostile',
    scopes: [
      'records:read',
      'records:write',
      'schema:read',
      'schema:write',
      'webhooks:manage',
      'sql:read',
      'files:write',
    ],
    databaseIds: [base.id],
  });
  const webhooksKey = await root.apiKeys.create({
    name: 'hostile-webhooks',
    scopes: ['webhooks:manage', 'schema:read'],
    databaseIds: [base.id],
  });
  const tenant = makeClient(key.key);
  for (let done = 0; done < LONG_TEXTS.records; done += LONG_TEXTS.perRequest) {
    const records = Array.from({ length: LONG_TEXTS.perRequest }, (_, i) => ({
      Title: `Essay ${done + i}`,
      Body: 'b'.repeat(LONG_TEXTS.characters),
      Notes: 'n'.repeat(LONG_TEXTS.characters),
    }));
    await tenant.records.createMany(base.id, table.id, records, { suppressWebhooks: true });
  }
  // Ports nothing listens on (127.0.0.1 is an allowed webhook address in the soak's stack).
  const hook = await tenant.webhooks.create(base.id, {
    url: `http://127.0.0.1:${await freePort()}/hostile`,
    events: ['record.created', 'record.updated', 'record.deleted'],
    tableId: table.id,
  });
  await tenant.records.create(base.id, table.id, { Title: 'Open delivery' });
  // Its first attempt failed: the delivery is open, retried over days.
  for (const giveUpAt = Date.now() + 60_000; ; ) {
    if ((await root.webhooks.deliveries(base.id, hook.id)).length > 0) break;
    if (Date.now() > giveUpAt)
      throw new Error("the hostile tenant's webhook had no delivery attempt within 60 s");
    await sleep(250);
  }
  return {
    gatewayUrl,
    key: key.key,
    webhooksKey: webhooksKey.key,
    baseId: base.id,
    tableId: table.id,
    webhookId: hook.id,
    stealUrl: `http://127.0.0.1:${await freePort()}/stolen`,
    victim,
    listings: config.hostileListings,
    uploadBytes: config.hostileUploadBytes,
    attacks: config.hostileAttacks,
  };
}

export interface RunningHostileTenant {
  /** Stops starting attacks, waits for those in flight, and gives what they got. */
  stop(): Promise<HostileFigures>;
}

/** Starts the attacks in a child process; resolves once they run. */
export async function startHostileTenant(plan: HostilePlan): Promise<RunningHostileTenant> {
  const child: ChildProcess = fork(join(__dirname, 'hostile-child.ts'), [], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) =>
      reject(new Error(`the hostile tenant's process exited (${signal ?? `code ${code}`})`)),
    ),
  );
  exited.catch(() => {});
  // The attacker's own machine would be another: on this one its process yields the CPU to the
  // services under test, so what it costs them is what they spend answering it, not what it
  // spends building its requests (a third of a core, unniced, on 2 cores).
  if (child.pid !== undefined) setPriority(child.pid, 19);
  const next = <Type extends HostileMessage['type']>(type: Type) =>
    Promise.race([
      new Promise<Extract<HostileMessage, { type: Type }>>((resolve) => {
        const listener = (message: HostileMessage) => {
          if (message.type !== type) return;
          child.off('message', listener);
          resolve(message as Extract<HostileMessage, { type: Type }>);
        };
        child.on('message', listener);
      }),
      exited,
    ]);
  const ready = next('ready');
  child.send({ type: 'start', plan } satisfies HostileParentMessage);
  await ready;
  return {
    async stop() {
      const done = next('done');
      child.send({ type: 'stop' } satisfies HostileParentMessage);
      const { figures } = await done;
      child.disconnect();
      return figures;
    },
  };
}
