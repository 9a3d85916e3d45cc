import { type Supervisable, supervise } from '../src/supervise';

/** A stand-in for a launched process: the test decides when it is ready and when it exits. */
class FakeProcess implements Supervisable {
  static launched: FakeProcess[] = [];
  readonly pid = FakeProcess.launched.length + 1000;
  readonly launchedAt = Date.now();
  exit!: (how: { code: number | null; signal: NodeJS.Signals | null }) => void;
  becomeReady!: () => void;
  failToStart!: () => void;
  stoppedWith: NodeJS.Signals | null = null;
  readonly exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    this.exit = resolve;
  });
  readonly ready = new Promise<void>((resolve, reject) => {
    this.becomeReady = resolve;
    this.failToStart = () => reject(new Error('never ready'));
  });

  constructor() {
    this.ready.catch(() => {});
    FakeProcess.launched.push(this);
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM') {
    this.stoppedWith = signal;
    this.exit({ code: null, signal });
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const launched = () => FakeProcess.launched;
const last = () => FakeProcess.launched[FakeProcess.launched.length - 1] as FakeProcess;

beforeEach(() => {
  FakeProcess.launched = [];
  jest.useFakeTimers({ doNotFake: ['setImmediate'] });
});
afterEach(() => jest.useRealTimers());

function supervised(lines: string[] = []) {
  return supervise(() => new FakeProcess(), {
    label: 'records-api',
    initialDelayMs: 1000,
    maxDelayMs: 8000,
    stableAfterMs: 60_000,
    report: (line) => lines.push(line),
  });
}

describe('supervise', () => {
  it('starts a process that exited unasked again, after a delay doubling up to its ceiling', async () => {
    const lines: string[] = [];
    const service = supervised(lines);
    last().becomeReady();
    await tick();
    const delays: number[] = [];
    for (let crash = 0; crash < 5; crash += 1) {
      const before = launched().length;
      last().exit({ code: null, signal: 'SIGKILL' });
      await tick();
      let waited = 0;
      while (launched().length === before) {
        jest.advanceTimersByTime(500);
        waited += 500;
        await tick();
      }
      delays.push(waited);
      last().becomeReady();
      await tick();
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(service.restarts()).toBe(5);
    expect(service.current()).toBe(last());
    expect(lines[0]).toBe('records-api exited (SIGKILL); starting it again in 1 s (restart 1)');
    expect(lines[1]).toBe(`records-api is running again (pid ${launched()[1]?.pid})`);
  });

  it('waits the initial delay again after a run that lasted', async () => {
    const lines: string[] = [];
    supervised(lines);
    last().becomeReady();
    await tick();
    for (const _ of [1, 2]) {
      last().exit({ code: 1, signal: null });
      await tick();
      jest.advanceTimersByTime(8000);
      await tick();
      last().becomeReady();
    }
    jest.advanceTimersByTime(60_000);
    last().exit({ code: 1, signal: null });
    await tick();
    expect(lines.at(-1)).toBe('records-api exited (exit code 1); starting it again in 1 s (restart 3)');
  });

  it('relaunches nothing once stopped, nor while waiting to relaunch', async () => {
    const service = supervised();
    last().becomeReady();
    await tick();
    last().exit({ code: null, signal: 'SIGSEGV' });
    await tick();
    await service.stop('SIGTERM');
    jest.advanceTimersByTime(60_000);
    await tick();
    expect(launched()).toHaveLength(1);

    const other = supervised();
    last().becomeReady();
    await tick();
    await other.stop('SIGINT');
    expect(last().stoppedWith).toBe('SIGINT');
    jest.advanceTimersByTime(60_000);
    await tick();
    expect(launched()).toHaveLength(2);
  });

  it('does not retry a process that never came up the first time', async () => {
    const service = supervised();
    last().failToStart();
    last().exit({ code: null, signal: 'SIGKILL' });
    await expect(service.ready).rejects.toThrow('never ready');
    jest.advanceTimersByTime(60_000);
    await tick();
    expect(launched()).toHaveLength(1);
  });

  it('keeps relaunching a restart that does not come up, with the growing delay', async () => {
    const lines: string[] = [];
    supervised(lines);
    last().becomeReady();
    await tick();
    last().exit({ code: 1, signal: null });
    await tick();
    jest.advanceTimersByTime(1000);
    await tick();
    // The relaunch never answers: the launcher kills it, and it is tried again.
    last().failToStart();
    last().exit({ code: null, signal: 'SIGKILL' });
    await tick();
    expect(lines.at(-1)).toBe('records-api exited (SIGKILL); starting it again in 2 s (restart 2)');
    jest.advanceTimersByTime(2000);
    await tick();
    expect(launched()).toHaveLength(3);
  });
});
