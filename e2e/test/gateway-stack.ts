import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, REPO_ROOT, type RunningService, startService, stopAll } from '@recordbase/launcher';
import { findNginx, launchGateway, type RunningGateway } from '@recordbase/launcher/gateway';
import { type Stack, startStack } from './stack';

/**
 * The stack of ./stack.ts behind the nginx gateway, as `npm start` runs it when nginx is
 * installed: records-api `replicas` times (the extra ones on free ports, sharing the stack's
 * database, Redis and secrets), the gateway on a free port of 127.0.0.1.
 */

export const nginx = findNginx();

/**
 * Without nginx the gateway tests cannot run; they are skipped, and said to be, loudly, once per
 * file. CI (.ci/run) installs nginx-light, so there they always run.
 */
export function describeWithNginx(title: string, body: () => void): void {
  if (nginx) {
    describe(title, body);
    return;
  }
  console.warn(
    `SKIPPED: "${title}" needs nginx, which is not installed here (Debian: apt-get install nginx-light; or set NGINX_BIN).`,
  );
  // biome-ignore lint/suspicious/noSkippedTests: skipped only without nginx, and announced above.
  describe.skip(title, body);
}

export interface GatewayStack {
  stack: Stack;
  gateway: RunningGateway;
  /** The gateway's address, `http://127.0.0.1:<port>`. */
  url: string;
  /** `127.0.0.1:<port>` of each records-api replica, the stack's own first. */
  replicas: string[];
  /** Stops the replica at `index` (1 and up; 0 is the stack's own records-api). */
  stopReplica(index: number): Promise<void>;
  /**
   * The gateway's access log, one parsed JSON object per request, once it holds a line for each of
   * `requestIds` (nginx writes a line just after the answer's last byte, so it may trail it).
   */
  accessLog(...requestIds: string[]): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

export interface GatewayStackOptions {
  replicas?: number;
  env?: Record<string, string>;
}

export async function startGatewayStack(options: GatewayStackOptions = {}): Promise<GatewayStack> {
  if (!nginx) throw new Error('nginx is not installed');
  const stack = await startStack({ env: options.env });
  const extra: RunningService[] = [];
  const dataDir = join(REPO_ROOT, '.data', 'e2e', `gateway-${randomBytes(6).toString('hex')}`);
  let gateway: RunningGateway | undefined;
  try {
    for (let index = 1; index < (options.replicas ?? 1); index += 1) {
      extra.push(
        await startService({
          name: 'records-api',
          port: await freePort(),
          // The same environment as the stack's own records-api: database, Redis, secrets, prefix.
          env: stack.env,
          output: 'pipe',
        }),
      );
    }
    const replicas = [stack.ports['records-api'], ...extra.map((service) => service.port)].map(
      (port) => `127.0.0.1:${port}`,
    );
    gateway = launchGateway({
      nginx,
      port: await freePort(),
      host: '127.0.0.1',
      dataDir,
      recordsApi: replicas,
      uploadService: [`127.0.0.1:${stack.ports['upload-service']}`],
      output: 'pipe',
    });
    await gateway.ready;
    const running = gateway;
    return {
      stack,
      gateway: running,
      url: running.url,
      replicas,
      async stopReplica(index) {
        const replica = extra[index - 1];
        if (!replica) throw new Error(`no records-api replica ${index}`);
        await replica.stop();
      },
      async accessLog(...requestIds) {
        // Only whole lines: the last one may be half written while it is read.
        const read = () =>
          readFileSync(running.accessLog, 'utf8')
            .split('\n')
            .slice(0, -1)
            .map((line) => JSON.parse(line) as Record<string, unknown>);
        for (let attempt = 0; attempt < 50; attempt += 1) {
          const lines = read();
          const logged = new Set(lines.map((line) => line.request_id));
          if (requestIds.every((id) => logged.has(id))) return lines;
          await new Promise((done) => setTimeout(done, 100));
        }
        return read();
      },
      async stop() {
        await stopAll([running, ...extra]);
        rmSync(dataDir, { recursive: true, force: true });
        await stack.stop();
      },
    };
  } catch (error) {
    await stopAll(gateway ? [gateway, ...extra] : extra);
    await stack.stop();
    throw error;
  }
}
