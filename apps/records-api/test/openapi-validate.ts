import { spawnSync } from 'node:child_process';

export interface ValidationResult {
  valid: boolean;
  version: string;
  errors?: unknown;
}

// The validator is published as an ES module only, which jest's CommonJS runtime cannot load;
// node itself runs it in a child process, reading the document from stdin.
const SCRIPT = `
import { Validator } from '@seriousme/openapi-schema-validator';
let text = '';
for await (const chunk of process.stdin) text += chunk;
const validator = new Validator();
const result = await validator.validate(JSON.parse(text));
process.stdout.write(JSON.stringify({ ...result, version: validator.version }));
`;

/** Validates an OpenAPI document against the specification's JSON schema of its version. */
export function validateOpenApi(document: unknown): ValidationResult {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], {
    cwd: `${__dirname}/..`,
    input: JSON.stringify(document),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0) throw new Error(`the OpenAPI validator failed to run: ${child.stderr}`);
  return JSON.parse(child.stdout) as ValidationResult;
}
