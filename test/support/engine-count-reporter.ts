import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints how many tests ran on each engine (tests carry `[pglite]` or `[postgres]` in their
 * names) and a closing "N passed, N failed" line.
 */
export default class EngineCountReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = new Map<string, { passed: number; failed: number; skipped: number }>();
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const engine = /\[(pglite|postgres)\]/.exec(test.fullName)?.[1] ?? 'engine-independent';
        const entry = counts.get(engine) ?? { passed: 0, failed: 0, skipped: 0 };
        const state = test.result().state;
        if (state === 'passed') {
          entry.passed += 1;
          passed += 1;
        } else if (state === 'failed') {
          entry.failed += 1;
          failed += 1;
        } else {
          entry.skipped += 1;
          skipped += 1;
        }
        counts.set(engine, entry);
      }
    }
    const lines = ['', 'Tests per engine:'];
    for (const name of ['pglite', 'postgres', 'engine-independent']) {
      const c = counts.get(name) ?? { passed: 0, failed: 0, skipped: 0 };
      lines.push(
        `  ${name.padEnd(19)} ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`,
      );
    }
    lines.push(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
    process.stdout.write(lines.join('\n') + '\n');
  }
}
