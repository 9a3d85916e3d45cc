import { createWriteStream, type WriteStream } from 'node:fs';

/**
 * SOAK_TRACE=<file>: one line per request, of the normal load and of the hostile tenant alike
 * (`wall-clock ms<TAB>who<TAB>operation<TAB>ms<TAB>answer`), appended by each process, so a spike
 * in a minute's p99 can be laid beside what the attacks were doing at that second.
 */
let stream: WriteStream | undefined | null;

export function trace(who: string, operation: string, startedAtWallMs: number, ms: number, answer: string) {
  if (stream === undefined) {
    const path = process.env.SOAK_TRACE;
    stream = path ? createWriteStream(path, { flags: 'a' }) : null;
  }
  stream?.write(`${Math.round(startedAtWallMs)}\t${who}\t${operation}\t${Math.round(ms)}\t${answer}\n`);
}
