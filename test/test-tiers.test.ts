// The two tiers stay what the README says (docs/ARCHITECTURE.md, Testing): a file of `npm test`
// starts no process and no browser and needs no build; a file of test/heavy/ does one of those,
// or it belongs in the fast tier.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

/** What starts a process or a browser, or reads the build. */
const HEAVY_MARKS: ReadonlyArray<[string, RegExp]> = [
  ['child processes', /from 'node:child_process'/],
  ['the built CLI', /\b(BUILT_CLI|runBuiltCli)\b|dist\/cli\//],
  ['a browser', /playwright-core|launchChromium/],
  // the Claude Agent SDK's query() spawns the Claude Code binary (its types start nothing)
  [
    'the Claude Code binary',
    /import \{[^}]*\bquery\b[^}]*\} from '@anthropic-ai\/claude-agent-sdk'/,
  ],
];

/**
 * Unit-tier files that may start a process, and why: each use is named here, so a new one is a
 * decision, not an accident.
 */
const ALLOWED: Record<string, string> = {
  // `node -e` prints its pid and exits: a pid no process has, for a stale lock to name
  'test/store-open.test.ts': 'child processes',
};

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [relative(ROOT, path).split(sep).join('/')] : [];
  });
}

/** The heavy marks a file's text carries. */
function heavyMarks(text: string): string[] {
  return HEAVY_MARKS.filter(([, re]) => re.test(text)).map(([name]) => name);
}

/** Why a file is in the wrong tier; empty when it is in the right one. */
function misplaced(path: string, text: string): string[] {
  const marks = heavyMarks(text);
  if (path.startsWith('test/heavy/')) {
    return marks.length === 0 ? [`${path}: starts no process or browser; move it to test/`] : [];
  }
  return marks
    .filter((m) => ALLOWED[path] !== m)
    .map((m) => `${path}: uses ${m}; move it to test/heavy/ (npm run test:heavy)`);
}

describe('the test tiers', () => {
  // this file names the marks it looks for
  const files = testFiles(join(ROOT, 'test')).filter((f) => f !== 'test/test-tiers.test.ts');

  it('every file is in its tier: processes, browsers and the build only in test/heavy/', () => {
    expect(files.filter((f) => f.startsWith('test/heavy/')).length).toBeGreaterThan(5);
    const problems = files.flatMap((f) => misplaced(f, readFileSync(join(ROOT, f), 'utf8')));
    expect(problems).toEqual([]);
  });

  it('negative control: a unit file that spawns, and a heavy file that does not, are named', () => {
    const spawning = "import { spawn } from 'node:child_process';\nconst x = BUILT_CLI;";
    expect(misplaced('test/some.test.ts', spawning)).toEqual([
      'test/some.test.ts: uses child processes; move it to test/heavy/ (npm run test:heavy)',
      'test/some.test.ts: uses the built CLI; move it to test/heavy/ (npm run test:heavy)',
    ]);
    expect(misplaced('test/heavy/quiet.test.ts', "import { it } from 'vitest';")).toEqual([
      'test/heavy/quiet.test.ts: starts no process or browser; move it to test/',
    ]);
    // the Agent SDK's query() spawns Claude Code; its types alone start nothing
    expect(
      misplaced('test/sdk.test.ts', "import { query } from '@anthropic-ai/claude-agent-sdk';"),
    ).toEqual([
      'test/sdk.test.ts: uses the Claude Code binary; move it to test/heavy/ (npm run test:heavy)',
    ]);
    expect(
      misplaced(
        'test/sdk.test.ts',
        "import type { HookInput } from '@anthropic-ai/claude-agent-sdk';",
      ),
    ).toEqual([]);
    // an allowed use is allowed only for what it names
    expect(misplaced('test/store-open.test.ts', spawning)).toEqual([
      'test/store-open.test.ts: uses the built CLI; move it to test/heavy/ (npm run test:heavy)',
    ]);
  });
});
