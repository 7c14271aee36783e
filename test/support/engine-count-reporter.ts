import type { Reporter, TestModule } from 'vitest/node';

export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/** Which engine a test ran on, from the `[pglite]` or `[postgres]` its name carries. */
export function engineOf(fullName: string): string {
  return /\[(pglite|postgres)\]/.exec(fullName)?.[1] ?? 'engine-independent';
}

/** The closing lines: passed, failed and skipped per engine, then the run's totals. */
export function countLines(tests: ReadonlyArray<{ fullName: string; state: string }>): string[] {
  const counts = new Map<string, Counts>();
  const total: Counts = { passed: 0, failed: 0, skipped: 0 };
  for (const t of tests) {
    const key = engineOf(t.fullName);
    const entry = counts.get(key) ?? { passed: 0, failed: 0, skipped: 0 };
    const state = t.state === 'passed' || t.state === 'failed' ? t.state : 'skipped';
    entry[state] += 1;
    total[state] += 1;
    counts.set(key, entry);
  }
  const lines = ['', 'Tests per engine:'];
  for (const name of ['pglite', 'postgres', 'engine-independent']) {
    const c = counts.get(name) ?? { passed: 0, failed: 0, skipped: 0 };
    lines.push(`  ${name.padEnd(19)} ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
  }
  const skipped = total.skipped > 0 ? `, ${total.skipped} skipped` : '';
  lines.push(`${total.passed} passed, ${total.failed} failed${skipped}`);
  return lines;
}

/**
 * Prints how many tests ran on each engine (tests carry `[pglite]` or `[postgres]` in their
 * names) and a closing "N passed, N failed" line.
 */
export default class EngineCountReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const tests = testModules.flatMap((mod) =>
      [...mod.children.allTests()].map((t) => ({ fullName: t.fullName, state: t.result().state })),
    );
    process.stdout.write(countLines(tests).join('\n') + '\n');
  }
}
