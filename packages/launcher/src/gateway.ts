import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { type GatewayConfigOptions, renderGatewayConfig } from './gateway-config';
import { type OutputOption, spawnWithOutput, stopChild, waitReady } from './index';

/**
 * The nginx gateway in front of the services, for `npm start` and the tests: its configuration
 * rendered from infra/nginx/nginx.conf.template into `dataDir`, nginx run in the foreground as
 * a child process, ready once its own /healthz answers.
 */

export {
  CONTAINER_GATEWAY_CONFIG,
  type GatewayConfigOptions,
  renderContainerGatewayConfig,
  renderGatewayConfig,
} from './gateway-config';

/** Debian puts nginx in /usr/sbin, which is not on every user's PATH. */
const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin'];

const isExecutable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The nginx binary: NGINX_BIN when set (which must be executable), else the first `nginx` on
 * PATH or in the usual sbin directories; null when there is none.
 */
export function findNginx(env: NodeJS.ProcessEnv = process.env, extraDirs = EXTRA_DIRS): string | null {
  if (env.NGINX_BIN) {
    if (!isExecutable(env.NGINX_BIN)) throw new Error(`NGINX_BIN=${env.NGINX_BIN} is not an executable file`);
    return env.NGINX_BIN;
  }
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), ...extraDirs];
  return dirs.map((dir) => join(dir, 'nginx')).find(isExecutable) ?? null;
}

export interface GatewayOptions {
  nginx: string;
  /** The port the gateway listens on. */
  port: number;
  /** The address to listen on; every interface when omitted. */
  host?: string;
  /** Holds the rendered nginx.conf, its pid file and temp files (created if missing). */
  dataDir: string;
  /** `host:port` of every records-api replica. */
  recordsApi: readonly string[];
  /** `host:port` of every upload-service replica. */
  uploadService: readonly string[];
  /** The access log's file (one JSON line per request); `access.log` in dataDir when omitted. */
  accessLog?: string;
  output: OutputOption;
  readyTimeoutMs?: number;
  /** stop(): SIGKILL when nginx has not exited this long after the signal (default: never). */
  killAfterMs?: number;
}

export interface RunningGateway {
  pid: number;
  port: number;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  configFile: string;
  accessLog: string;
  output(): string;
  /** SIGTERM by default: nginx's fast shutdown (SIGQUIT waits for requests in flight). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  ready: Promise<void>;
}

export const gatewayAccessLog = (options: { dataDir: string; accessLog?: string }) =>
  options.accessLog ?? join(options.dataDir, 'access.log');

/** Writes the local configuration into `dataDir` and returns its path. */
export function writeGatewayConfig(options: Omit<GatewayOptions, 'nginx' | 'output'>): string {
  mkdirSync(options.dataDir, { recursive: true });
  const config: GatewayConfigOptions = {
    target: 'local',
    listen: options.host ? `${options.host}:${options.port}` : String(options.port),
    dataDir: options.dataDir,
    recordsApi: options.recordsApi,
    uploadService: options.uploadService,
    accessLog: gatewayAccessLog(options),
  };
  const configFile = join(options.dataDir, 'nginx.conf');
  writeFileSync(configFile, renderGatewayConfig(config));
  return configFile;
}

/** `-e stderr`: nginx would otherwise try its compiled-in error log before reading ours. */
export const nginxArgs = (dataDir: string, configFile: string) => [
  '-p',
  dataDir,
  '-e',
  'stderr',
  '-c',
  configFile,
];

/** Renders the configuration, starts nginx and returns at once; `ready` tells when it answers. */
export function launchGateway(options: GatewayOptions): RunningGateway {
  const configFile = writeGatewayConfig(options);
  const { child, output, exited } = spawnWithOutput(
    options.nginx,
    nginxArgs(options.dataDir, configFile),
    process.env,
    options.output,
  );
  const url = `http://127.0.0.1:${options.port}`;
  const ready = waitReady(
    child,
    'gateway (nginx)',
    `${url}/healthz`,
    options.readyTimeoutMs ?? 15_000,
    output,
  );
  ready.catch(() => {});
  return {
    pid: child.pid ?? 0,
    port: options.port,
    url,
    configFile,
    accessLog: gatewayAccessLog(options),
    output,
    exited,
    ready,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => stopChild(child, exited, signal, options.killAfterMs),
  };
}
