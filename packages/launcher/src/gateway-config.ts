import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The gateway's nginx configuration, rendered from infra/nginx/nginx.conf.template: for the
 * container (the official nginx image, service names as hosts) or for a local nginx run by
 * `npm start` and the tests (no `user` line, its pid and temp files under a directory of ours).
 */

const REPO_ROOT = join(__dirname, '..', '..', '..');
export const GATEWAY_TEMPLATE = join(REPO_ROOT, 'infra', 'nginx', 'nginx.conf.template');
/** The container's configuration, generated from the template and mounted by docker-compose.yml. */
export const CONTAINER_GATEWAY_CONFIG = join(REPO_ROOT, 'infra', 'nginx', 'nginx.conf');

interface Upstreams {
  /** `host:port` of every records-api replica. */
  recordsApi: readonly string[];
  /** `host:port` of every upload-service replica. */
  uploadService: readonly string[];
}

export type GatewayConfigOptions = Upstreams &
  (
    | { target: 'container'; port: number }
    | {
        target: 'local';
        /** `port` or `address:port` to listen on. */
        listen: string;
        /** Where the pid file and the temp files (request bodies, proxied answers) go. */
        dataDir: string;
        /**
         * The access log's file. Not stdout: a child's stdout here is a socket, which nginx cannot
         * open as /dev/stdout.
         */
        accessLog: string;
      }
  );

const ADDRESS = /^[A-Za-z0-9.-]+:\d{1,5}$/;
/** A value placed into the configuration must not be able to end its directive. */
const SAFE_VALUE = /^[^\s;{}'"]+$/;

function servers(name: string, addresses: readonly string[]): string {
  if (addresses.length === 0) throw new Error(`the gateway needs at least one ${name} address`);
  return addresses
    .map((address) => {
      if (!ADDRESS.test(address))
        throw new Error(`${name} address ${JSON.stringify(address)} is not host:port`);
      return `    server ${address};`;
    })
    .join('\n');
}

function safe(what: string, value: string): string {
  if (!SAFE_VALUE.test(value))
    throw new Error(`${what} ${JSON.stringify(value)} has spaces, quotes or ; in it`);
  return value;
}

export function renderGatewayConfig(
  options: GatewayConfigOptions,
  template = readFileSync(GATEWAY_TEMPLATE, 'utf8'),
): string {
  const values: Record<string, string> =
    options.target === 'container'
      ? {
          // The official image runs its workers as `nginx`, the owner of its temp directories.
          main: 'user nginx;\nworker_processes auto;',
          paths: '',
          access_log: '/dev/stdout',
          error_log: '/dev/stderr',
          listen: String(options.port),
        }
      : {
          // In the foreground, so that the launcher owns the process; one worker is plenty here.
          main: [
            'daemon off;',
            'worker_processes 1;',
            `pid ${safe('data directory', options.dataDir)}/nginx.pid;`,
          ].join('\n'),
          paths: ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
            .map((kind) => `  ${kind}_temp_path ${options.dataDir}/${kind}-temp;\n`)
            .join(''),
          access_log: safe('access log', options.accessLog),
          // nginx's own name for its standard error, which it writes without opening anything.
          error_log: 'stderr',
          listen: safe('listen address', options.listen),
        };
  values.records_api_servers = servers('records-api', options.recordsApi);
  values.upload_service_servers = servers('upload-service', options.uploadService);
  const rendered = template.replace(/\{\{(\w+)\}\}/g, (placeholder, name: string) => {
    const value = values[name];
    if (value === undefined)
      throw new Error(`the gateway template has an unknown placeholder ${placeholder}`);
    return value;
  });
  return rendered;
}

/** The container's configuration: the compose file's service names on their default ports. */
export function renderContainerGatewayConfig(): string {
  const header =
    '# Generated from nginx.conf.template by `npx tsx packages/launcher/src/gateway-config.ts`; edit the template.\n';
  return (
    header +
    renderGatewayConfig({
      target: 'container',
      port: 8080,
      recordsApi: ['records-api:3000'],
      uploadService: ['upload-service:3001'],
    })
  );
}

if (require.main === module) {
  writeFileSync(CONTAINER_GATEWAY_CONFIG, renderContainerGatewayConfig());
  console.log(`wrote ${CONTAINER_GATEWAY_CONFIG}`);
}
