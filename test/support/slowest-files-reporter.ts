import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest test files the summary lists. */
export const SLOWEST_SHOWN = 15;

export interface FileCost {
  file: string;
  seconds: number;
  tests: number;
}

/** A test file's own cost: preparing, importing and setting it up, and its tests and hooks. */
export function fileCost(mod: TestModule, root: string): FileCost {
  const d = mod.diagnostic();
  const ms = d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
  const project = mod.project.name;
  const file = relative(root, mod.moduleId);
  return {
    // a file run by two projects (vitest.config.ts) is two entries
    file: project === '' || project === 'unit' ? file : `${file} [${project}]`,
    seconds: ms / 1000,
    tests: [...mod.children.allTests()].length,
  };
}

/** The summary's lines: the slowest files first, each with its seconds and its count of tests. */
export function slowestLines(costs: readonly FileCost[], shown = SLOWEST_SHOWN): string[] {
  const top = [...costs].sort((a, b) => b.seconds - a.seconds).slice(0, shown);
  if (top.length === 0) return [];
  const total = costs.reduce((s, c) => s + c.seconds, 0);
  return [
    '',
    `Slowest ${top.length} of ${costs.length} test files (${total.toFixed(1)} s in files, summed over workers):`,
    ...top.map((c) => `  ${c.seconds.toFixed(1).padStart(7)} s  ${c.file} (${c.tests} tests)`),
  ];
}

/** Prints the slowest test files at the end of every run, so a slow one is seen when it lands. */
export default class SlowestFilesReporter implements Reporter {
  private root = process.cwd();

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines = slowestLines(testModules.map((m) => fileCost(m, this.root)));
    if (lines.length > 0) process.stdout.write(lines.join('\n') + '\n');
  }
}
