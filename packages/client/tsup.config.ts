import { defineConfig } from 'tsup';

/**
 * `pnpm run build`: dist/ holds each entry point as ESM (.mjs, typed by .d.mts) and as CommonJS
 * (.js, typed by .d.ts; the package has no `"type"`, so .js is CommonJS). The contracts are
 * compiled in, their types too, so the published package needs zod only: @recordbase/contracts
 * stays a private workspace package.
 */
export default defineConfig({
  entry: { index: 'src/index.ts', node: 'src/node.ts', webhooks: 'src/webhook-verifier.ts' },
  format: ['esm', 'cjs'],
  // Shared code in shared chunks for CommonJS too: one RecordbaseError class whichever entry
  // point threw it, so `instanceof` and isRecordbaseError hold across entry points.
  splitting: true,
  // The same code for Node 20 and current browsers; `node:` imports stay as written.
  target: 'es2022',
  removeNodeProtocol: false,
  noExternal: [/^@recordbase\/contracts(\/|$)/],
  dts: {
    // Resolved as local sources (not as a package), the contracts' types are inlined too.
    compilerOptions: { paths: { '@recordbase/contracts/*': ['../contracts/src/*'] } },
  },
  clean: true,
});
