/**
 * Preloaded into a service child (`node --require count-hook.cjs`) when BENCH_COUNT_FILE is set:
 * counts the process's own PostgreSQL statements (pg's Client#query, which every pool query and
 * the Prisma adapter go through) and Redis commands (ioredis' sendCommand, pipelines and BullMQ's
 * scripts included), and writes the running totals to that file every 500 ms. The modules are
 * resolved from the service's directory (BENCH_COUNT_FROM), so they are the instances it uses.
 * The wrappers cost a counter increment and a regex test per call.
 */
const { renameSync, writeFileSync } = require('node:fs');
const { isMainThread } = require('node:worker_threads');

// Each process of a service (records-api's cluster workers) writes a file of its own beside the
// service's; the reader sums them.
const cluster = require('node:cluster');
const file =
  process.env.BENCH_COUNT_FILE && cluster.isWorker
    ? `${process.env.BENCH_COUNT_FILE}.${process.pid}`
    : process.env.BENCH_COUNT_FILE;
const from = process.env.BENCH_COUNT_FROM || process.cwd();

/** What a statement is: the dispatcher's batched statements by name, others by keyword and first table. */
function tag(text) {
  if (/INSERT INTO webhook_delivery_attempts/.test(text)) return 'record deliveries';
  if (/CROSS JOIN webhook_subscriptions_version/.test(text)) return 'read events';
  if (/JOIN webhooks w ON w\.active/.test(text)) return 'load subscriptions';
  const keyword = /^\s*(\w+)/.exec(text);
  if (!keyword) return 'other';
  const table = /\b(?:FROM|INTO|UPDATE)\s+"?(\w+)/i.exec(text);
  return table ? `${keyword[1].toUpperCase()} ${table[1]}` : keyword[1].toUpperCase();
}

// Worker threads (pino's transport) inherit the flag and the environment: only the main thread counts.
if (file && isMainThread) {
  const counts = { pgStatements: 0, pg: {}, redisCommands: 0, redis: {} };
  const pg = require(require.resolve('pg', { paths: [from] }));
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(config, ...rest) {
    const text =
      typeof config === 'string' ? config : config && typeof config.text === 'string' ? config.text : '';
    const name = tag(text);
    counts.pgStatements += 1;
    counts.pg[name] = (counts.pg[name] || 0) + 1;
    return query.call(this, config, ...rest);
  };
  const { Redis } = require(require.resolve('ioredis', { paths: [from] }));
  const sendCommand = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function countedCommand(command, ...rest) {
    const name = command && typeof command.name === 'string' ? command.name : 'other';
    counts.redisCommands += 1;
    counts.redis[name] = (counts.redis[name] || 0) + 1;
    return sendCommand.call(this, command, ...rest);
  };
  const write = () => {
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify(counts));
      renameSync(`${file}.tmp`, file);
    } catch {
      // the directory went away: the run is over
    }
  };
  setInterval(write, 500).unref();
  process.on('exit', write);
}
