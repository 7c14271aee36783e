// What every run prints at its end (test/support/*-reporter.ts): the tests per engine, and the
// slowest files.
import { describe, expect, it } from 'vitest';
import { countLines, engineOf } from './support/engine-count-reporter.js';
import { slowestLines, SLOWEST_SHOWN, type FileCost } from './support/slowest-files-reporter.js';

describe('the tests per engine', () => {
  it('reads the engine from the name, and calls an untagged test engine-independent', () => {
    expect(engineOf('store contract [pglite] > keeps turns')).toBe('pglite');
    expect(engineOf('the quiet view [postgres] > one statement')).toBe('postgres');
    expect(engineOf('gate rules > drops a quote not in the turn')).toBe('engine-independent');
    expect(engineOf('an [sqlite] name is no engine of ours')).toBe('engine-independent');
  });

  it('counts passed, failed and skipped per engine, and the totals', () => {
    const lines = countLines([
      { fullName: 'a [pglite]', state: 'passed' },
      { fullName: 'b [pglite]', state: 'failed' },
      { fullName: 'c [postgres]', state: 'skipped' },
      { fullName: 'd [postgres]', state: 'pending' },
      { fullName: 'e', state: 'passed' },
    ]);
    expect(lines).toEqual([
      '',
      'Tests per engine:',
      '  pglite              1 passed, 1 failed, 0 skipped',
      '  postgres            0 passed, 0 failed, 2 skipped',
      '  engine-independent  1 passed, 0 failed, 0 skipped',
      '2 passed, 1 failed, 2 skipped',
    ]);
  });
});

const cost = (file: string, seconds: number, tests = 1): FileCost => ({ file, seconds, tests });

describe('the slowest files', () => {
  it('lists the slowest files first, each with its seconds and tests, under the total', () => {
    const lines = slowestLines([cost('test/a.test.ts', 1.25, 3), cost('test/b.test.ts', 40, 12)]);
    expect(lines).toEqual([
      '',
      'Slowest 2 of 2 test files (41.3 s in files, summed over workers):',
      '     40.0 s  test/b.test.ts (12 tests)',
      '      1.3 s  test/a.test.ts (3 tests)',
    ]);
  });

  it(`shows ${SLOWEST_SHOWN} at most, and the total counts every file`, () => {
    const costs = Array.from({ length: 40 }, (_, i) => cost(`test/f${i}.test.ts`, i));
    const lines = slowestLines(costs);
    expect(lines).toHaveLength(2 + SLOWEST_SHOWN);
    expect(lines[1]).toBe(
      `Slowest ${SLOWEST_SHOWN} of 40 test files (780.0 s in files, summed over workers):`,
    );
    expect(lines[2]).toContain('test/f39.test.ts');
    expect(lines.at(-1)).toContain(`test/f${40 - SLOWEST_SHOWN}.test.ts`);
    expect(lines.join('\n')).not.toContain(`test/f${39 - SLOWEST_SHOWN}.test.ts`);
  });

  it('prints nothing for a run without files', () => {
    expect(slowestLines([])).toEqual([]);
  });
});
