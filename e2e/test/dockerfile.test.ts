import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@recordbase/launcher';
import { validate } from 'dockerfile-utils';

/**
 * The Dockerfile and docker-compose.yml, checked as far as a machine without a Docker engine can:
 * the Dockerfile by a linter and by what each service's target must hold, the compose file by
 * `docker-compose config` (.ci/run installs Debian's docker-compose when it is missing).
 */

const TARGETS = ['records-api', 'upload-service', 'webhook-dispatcher', 'import-worker', 'migrate'];
const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');

/** Each stage's instructions (continuations joined, comments dropped), by stage name. */
function stages(text: string): Map<string, string[]> {
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const byStage = new Map<string, string[]>();
  let current: string[] = [];
  for (const instruction of instructions) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(instruction);
    if (from) {
      current = [instruction];
      byStage.set(from[1] ?? `stage-${byStage.size}`, current);
    } else current.push(instruction);
  }
  return byStage;
}

describe('Dockerfile', () => {
  it('passes the linter, with warnings counted as errors', () => {
    const problems = validate(dockerfile).map(
      (diagnostic) => `line ${diagnostic.range.start.line + 1}: ${diagnostic.message}`,
    );
    expect(problems).toEqual([]);
  });

  it('is checked by a linter that does find problems', () => {
    const broken = 'FROM node:20 AS a\nEXPOSE notaport\nHEALTHCHECK --interval=abc CMD true\nUSER\n';
    expect(validate(broken).length).toBeGreaterThanOrEqual(3);
  });

  it.each(TARGETS)('has a %s target: its compiled output, non-root, with a health check', (name) => {
    const stage = stages(dockerfile).get(name);
    if (!stage) throw new Error(`no "FROM ... AS ${name}" stage`);
    const text = stage.join('\n');
    // Only what scripts/build-services.mjs made for this service, from the build stage.
    expect(stage.filter((line) => /^(COPY|ADD)\b/i.test(line))).toEqual([
      `COPY --from=build /out/${name} /app`,
    ]);
    const user = stage.filter((line) => /^USER\b/i.test(line)).at(-1);
    expect(user).toBe('USER node');
    expect(text).toMatch(
      name === 'migrate' ? /^HEALTHCHECK NONE$/m : /^HEALTHCHECK .*CMD \["node", "-e", .*\/readyz/m,
    );
    expect(text).toMatch(/^CMD \["node", "[\w/]+\.js"\]$/m);
    expect(text).not.toMatch(/tsx|pnpm|npm /);
  });

  it('starts every service image from one runtime stage that listens on every interface', () => {
    const all = stages(dockerfile);
    for (const name of TARGETS) expect(all.get(name)?.[0]).toBe(`FROM runtime AS ${name}`);
    expect(all.get('runtime')?.join('\n')).toMatch(/HOST=0\.0\.0\.0/);
    expect(all.get('build')?.join('\n')).toMatch(/node scripts\/build-services\.mjs --out \/out/);
  });
});

describe('docker-compose.yml', () => {
  const compose = spawnSync('docker-compose', ['version', '--short'], { encoding: 'utf8' });
  const available = !compose.error && compose.status === 0;
  if (!available)
    console.warn(
      'SKIPPED: docker-compose.yml is not checked: no docker-compose binary (`apt-get install docker-compose`; .ci/run does)',
    );
  const maybe = available ? it : it.skip;

  // A clean environment: what a fresh checkout gets with no variables set.
  const config = (...args: string[]) =>
    spawnSync('docker-compose', ['-f', 'docker-compose.yml', 'config', ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });

  maybe('passes `docker-compose config -q`', () => {
    const result = config('-q');
    expect(result.stderr.split('\n').filter((line) => /error|invalid/i.test(line))).toEqual([]);
    expect(result.status).toBe(0);
  });

  maybe('runs every service from its own image target, MinIO and its bucket beside them', () => {
    const services = config('--services').stdout.split('\n').filter(Boolean).sort();
    expect(services).toEqual(expect.arrayContaining([...TARGETS, 'minio', 'minio-init', 'gateway']));
    const resolved = config().stdout;
    for (const name of TARGETS) expect(resolved).toContain(`target: ${name}`);
    expect(resolved).not.toMatch(/tsx/);
    expect(resolved).toMatch(/STORAGE_DRIVER: s3/);
    expect(resolved).toMatch(/S3_ENDPOINT: http:\/\/minio:9000/);
  });
});
