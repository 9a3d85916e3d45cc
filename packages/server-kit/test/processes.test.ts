import { availableParallelism } from 'node:os';
import { defaultProcesses, processShare, quotaCores } from '../src/processes';

describe('processes of a service', () => {
  it('reads the cores a cgroup CPU quota allows, rounded up', () => {
    expect(quotaCores('200000 100000\n')).toBe(2);
    expect(quotaCores('150000 100000')).toBe(2);
    expect(quotaCores('50000 100000')).toBe(1);
    expect(quotaCores('max 100000')).toBeUndefined();
    expect(quotaCores('')).toBeUndefined();
    expect(quotaCores(undefined)).toBeUndefined();
  });

  it('runs one process per core it may use, at most 16 and at least one', () => {
    expect(defaultProcesses('max 100000')).toBe(Math.min(16, availableParallelism()));
    expect(defaultProcesses('100000 100000')).toBe(1);
    expect(defaultProcesses('3200000 100000')).toBe(Math.min(16, availableParallelism()));
  });

  it('gives each process its part of a bound, rounded up, never none', () => {
    expect(processShare(20, 2)).toBe(10);
    expect(processShare(2, 3)).toBe(1);
    expect(processShare(8, 3)).toBe(3);
    expect(processShare(1, 16)).toBe(1);
    expect(processShare(5, 0)).toBe(5);
  });
});
