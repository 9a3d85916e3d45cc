import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONTAINER_GATEWAY_CONFIG,
  findNginx,
  nginxArgs,
  renderContainerGatewayConfig,
  renderGatewayConfig,
  writeGatewayConfig,
} from '@recordbase/launcher/gateway';
import { createHttpServer } from '@recordbase/server-kit/lifecycle';
import { describeWithNginx, nginx } from './gateway-stack';

/** The one template renders both gateway configurations; nginx itself accepts the local one. */

describe('the container configuration', () => {
  it('is what the template renders (regenerate: npx tsx packages/launcher/src/gateway-config.ts)', () => {
    expect(readFileSync(CONTAINER_GATEWAY_CONFIG, 'utf8')).toBe(renderContainerGatewayConfig());
  });

  it("runs as the image's nginx user and proxies to the compose services", () => {
    const config = renderContainerGatewayConfig();
    expect(config).toMatch(/^user nginx;$/m);
    expect(config).toMatch(/^\s*listen 8080;$/m);
    expect(config).toContain('server records-api:3000;');
    expect(config).toContain('server upload-service:3001;');
    expect(config).not.toContain('{{');
  });
});

describe('rendering', () => {
  const local = {
    target: 'local' as const,
    listen: '127.0.0.1:8080',
    dataDir: '/tmp/gateway',
    accessLog: '/tmp/gateway/access.log',
    recordsApi: ['127.0.0.1:3000', '127.0.0.1:3010'],
    uploadService: ['127.0.0.1:3001'],
  };

  it('lists every replica in the upstream and keeps state under the data directory, with no user line', () => {
    const config = renderGatewayConfig(local);
    expect(config).not.toMatch(/^\s*user /m);
    expect(config).toMatch(/upstream records_api \{\s+server 127\.0\.0\.1:3000;\s+server 127\.0\.0\.1:3010;/);
    expect(config).toContain('pid /tmp/gateway/nginx.pid;');
    expect(config).toContain('client_body_temp_path /tmp/gateway/client_body-temp;');
    expect(config).toContain('access_log /tmp/gateway/access.log recordbase;');
  });

  it('closes an idle connection to a service long before the service would, even if it lags', () => {
    const serviceKeepAliveMs = createHttpServer(() => {}, {
      HTTP_HEADERS_TIMEOUT_MS: 1000,
      HTTP_REQUEST_TIMEOUT_MS: 1000,
    }).keepAliveTimeout;
    // A second of margin (4 s against Node's default 5 s) was overrun by a gateway starved of CPU.
    const marginMs = 30_000;
    const upstreams = [...renderGatewayConfig(local).matchAll(/upstream (\w+) \{([^}]*)\}/g)];
    expect(upstreams.map(([, name]) => name)).toEqual(['records_api', 'upload_service']);
    for (const [, name, body] of upstreams) {
      const seconds = Number(/keepalive_timeout (\d+)s;/.exec(body ?? '')?.[1]);
      expect({ name, closesFirst: seconds * 1000 + marginMs <= serviceKeepAliveMs }).toEqual({
        name,
        closesFirst: true,
      });
    }
  });

  it('refuses values that would break out of their directive', () => {
    expect(() => renderGatewayConfig({ ...local, recordsApi: ['a:1; include /etc/passwd'] })).toThrow(
      'records-api address "a:1; include /etc/passwd" is not host:port',
    );
    expect(() => renderGatewayConfig({ ...local, dataDir: '/tmp/my gateway' })).toThrow(
      'data directory "/tmp/my gateway" has spaces',
    );
    expect(() => renderGatewayConfig({ ...local, uploadService: [] })).toThrow(
      'the gateway needs at least one upload-service address',
    );
  });

  it('names a placeholder the template has but nothing fills', () => {
    expect(() => renderGatewayConfig(local, 'events {}\n{{unknown}}\n')).toThrow(
      'the gateway template has an unknown placeholder {{unknown}}',
    );
  });
});

describe('finding nginx', () => {
  it('is null when no directory searched holds it, so npm start runs without a gateway', () => {
    expect(findNginx({ PATH: '/nonexistent/bin' }, ['/nonexistent/sbin'])).toBeNull();
  });

  it('refuses an NGINX_BIN that is not an executable', () => {
    expect(() => findNginx({ NGINX_BIN: '/nonexistent/nginx' })).toThrow(
      'NGINX_BIN=/nonexistent/nginx is not an executable file',
    );
  });
});

describeWithNginx('nginx -t', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'recordbase-gateway-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts the rendered local configuration with a prefix under a temp directory', () => {
    const configFile = writeGatewayConfig({
      port: 18_080,
      host: '127.0.0.1',
      dataDir: dir,
      recordsApi: ['127.0.0.1:3000', '127.0.0.1:3010'],
      uploadService: ['127.0.0.1:3001'],
    });
    const output = execFileSync(nginx!, ['-t', ...nginxArgs(dir, configFile)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // nginx -t reports on stderr; execFileSync throws (with it) when the test fails.
    expect(output).toBe('');
  });

  it('rejects a broken configuration, so the test above could fail', () => {
    const configFile = join(dir, 'broken.conf');
    writeFileSync(configFile, 'events {}\nhttp { server { listen nowhere:port; } }\n');
    expect(() =>
      execFileSync(nginx!, ['-t', ...nginxArgs(dir, configFile)], { stdio: ['ignore', 'pipe', 'pipe'] }),
    ).toThrow();
  });
});
