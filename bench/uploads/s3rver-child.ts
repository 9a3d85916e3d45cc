import S3rver from 's3rver';
import type { ChildMessage } from './children';

/**
 * Entry of the s3rver child: the S3 implementation the storage package's tests use (with
 * the workspace's patch, pnpm-workspace.yaml), on an ephemeral port of 127.0.0.1, storing under
 * the directory given as the first argument. Its one account is S3RVER / S3RVER.
 */

async function main(): Promise<void> {
  const directory = process.argv[2];
  if (!directory) throw new Error('usage: s3rver-child.ts <directory>');
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  process.on('disconnect', () => {
    void server.close().finally(() => process.exit(0));
  });
  process.send?.({ type: 'ready', port } satisfies ChildMessage);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
