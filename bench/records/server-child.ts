import { type ServerOptions, startServer } from './server';

/** Entry of the records-api child process: start, report the port, stop on SIGTERM or parent exit. */
async function main(): Promise<void> {
  const options = JSON.parse(process.env.BENCH_SERVER_OPTIONS ?? '{}') as ServerOptions;
  const server = await startServer(options);
  const stop = () => {
    void server.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('disconnect', stop);
  process.send?.({ port: Number(new URL(server.baseUrl).port) });
}

main().catch((error: unknown) => {
  console.error('records-api child failed:', error);
  process.exit(1);
});
