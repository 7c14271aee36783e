import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createFileInstrument,
  EngineError,
  FILE_CONTROL_DIR,
  type FileProbeSpec,
  type ProbeInstrument,
  type ProbeSpec,
} from '../src/index.js';
import { fileVerdict, parseProbeSpec } from '../src/rules.js';
import { countOccurrences } from '../src/domain/probe.js';
import { calibrate } from '../src/probes/calibration.js';
import { fileContext, tempDir } from './support/probe-fixtures.js';

const tmp = tempDir('memledger-probe-file-');
afterAll(tmp.cleanup);

// root/ holds the probed files; outside/ is a sibling the probes must never reach.
const root = join(tmp.dir, 'root');
const second = join(tmp.dir, 'second');
const outside = join(tmp.dir, 'outside');
for (const d of [root, second, outside, join(root, 'sub'), join(root, 'dist', 'lib')]) {
  mkdirSync(d, { recursive: true });
}
writeFileSync(join(root, 'notes.txt'), 'alpha beta alpha\nabsent absent absent\n');
writeFileSync(join(root, 'sub', 'inner.txt'), 'inner needle\n');
writeFileSync(join(root, 'dist', 'lib', 'util.js'), 'export const built = 1;\n');
writeFileSync(join(second, 'only-second.txt'), 'second root\n');
writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
symlinkSync(join(outside, 'secret.txt'), join(root, 'escape.txt'));
symlinkSync(outside, join(root, 'escape-dir'));
symlinkSync(join(outside, 'not-there.txt'), join(root, 'dangling-out.txt'));
symlinkSync(join(root, 'not-there.txt'), join(root, 'dangling-in.txt'));
symlinkSync(join(root, 'notes.txt'), join(root, 'alias.txt'));
symlinkSync(join(root, 'loop-b'), join(root, 'loop-a'));
symlinkSync(join(root, 'loop-a'), join(root, 'loop-b'));

const file = createFileInstrument();
const ctx = fileContext([root, second]);

function spec(path: string, mode: FileProbeSpec['mode'], needle?: string, negate?: boolean) {
  return parseProbeSpec({
    kind: 'file',
    path,
    mode,
    ...(needle === undefined ? {} : { needle }),
    ...(negate === undefined ? {} : { negate }),
  });
}

function invalid(raw: unknown): string {
  try {
    parseProbeSpec(raw);
  } catch (err) {
    if (err instanceof EngineError) return err.code;
    throw err;
  }
  return 'accepted';
}

describe('countOccurrences', () => {
  it('counts case-sensitively without overlaps', () => {
    expect(countOccurrences('aaaa', 'aa')).toBe(2);
    expect(countOccurrences('Absent absent ABSENT', 'absent')).toBe(1);
    expect(countOccurrences('absent absent absent', 'absent')).toBe(3);
    expect(countOccurrences('nothing here', 'absent')).toBe(0);
    expect(countOccurrences('anything', '')).toBe(0);
  });
});

describe('fileVerdict', () => {
  const contains = (negate: boolean): FileProbeSpec => ({
    kind: 'file',
    path: 'x',
    mode: 'contains',
    needle: 'n',
    negate,
  });
  const present = { exists: true, content: 'a n b n' } as const;
  const lacking = { exists: true, content: 'a b' } as const;

  it('decides exists and missing from existence alone', () => {
    const exists: FileProbeSpec = { kind: 'file', path: 'x', mode: 'exists' };
    const missing: FileProbeSpec = { kind: 'file', path: 'x', mode: 'missing' };
    expect(fileVerdict(exists, present).verdict).toBe('verified');
    expect(fileVerdict(exists, { exists: false }).verdict).toBe('falsified');
    expect(fileVerdict(missing, { exists: false }).verdict).toBe('verified_missing');
    expect(fileVerdict(missing, present).verdict).toBe('falsified');
  });

  it('decides contains from the content, with polarity from negate only', () => {
    expect(fileVerdict(contains(false), present)).toEqual({ verdict: 'verified', matchCount: 2 });
    expect(fileVerdict(contains(false), lacking)).toEqual({ verdict: 'falsified', matchCount: 0 });
    expect(fileVerdict(contains(true), lacking)).toEqual({
      verdict: 'verified_missing',
      matchCount: 0,
    });
    expect(fileVerdict(contains(true), present)).toEqual({ verdict: 'falsified', matchCount: 2 });
  });

  it('says error, never verified_missing, when the file itself is absent', () => {
    expect(fileVerdict(contains(true), { exists: false })).toMatchObject({
      verdict: 'error',
      errorCode: 'FILE_NOT_FOUND',
    });
    expect(fileVerdict(contains(false), { exists: true, content: null })).toMatchObject({
      verdict: 'error',
      errorCode: 'UNREADABLE',
    });
  });
});

describe('parseProbeSpec', () => {
  it('normalises a contains spec to state negate explicitly', () => {
    expect(parseProbeSpec({ kind: 'file', path: 'a', mode: 'contains', needle: 'x' })).toEqual({
      kind: 'file',
      path: 'a',
      mode: 'contains',
      needle: 'x',
      negate: false,
    });
    expect(parseProbeSpec({ kind: 'sql', query: 'SELECT 1;', op: 'eq', expect: 1 })).toEqual({
      kind: 'sql',
      query: 'SELECT 1',
      op: 'eq',
      expect: 1,
    });
    expect(parseProbeSpec({ kind: 'http', url: 'http://127.0.0.1:8080/x', status: 200 })).toEqual({
      kind: 'http',
      url: 'http://127.0.0.1:8080/x',
      status: 200,
    });
  });

  it.each<[string, unknown]>([
    ['no object', 'file'],
    ['unknown kind', { kind: 'shell', path: 'a' }],
    ['unknown field', { kind: 'file', path: 'a', mode: 'exists', assertion: 'is absent' }],
    ['bad mode', { kind: 'file', path: 'a', mode: 'present' }],
    ['contains without needle', { kind: 'file', path: 'a', mode: 'contains' }],
    ['empty needle', { kind: 'file', path: 'a', mode: 'contains', needle: '' }],
    ['needle on exists', { kind: 'file', path: 'a', mode: 'exists', needle: 'x' }],
    ['negate on missing', { kind: 'file', path: 'a', mode: 'missing', negate: true }],
    ['negate not boolean', { kind: 'file', path: 'a', mode: 'contains', needle: 'x', negate: 1 }],
    ['NUL in needle', { kind: 'file', path: 'a', mode: 'contains', needle: 'a\u0000b' }],
    ['empty path', { kind: 'file', path: '', mode: 'exists' }],
    ['bad op', { kind: 'sql', query: 'SELECT 1', op: '==', expect: 1 }],
    ['expect not a number', { kind: 'sql', query: 'SELECT 1', op: 'eq', expect: '1' }],
    ['expect infinite', { kind: 'sql', query: 'SELECT 1', op: 'eq', expect: Infinity }],
    ['two statements', { kind: 'sql', query: 'SELECT 1; COMMIT', op: 'eq', expect: 1 }],
    ['a write', { kind: 'sql', query: 'DELETE FROM turns', op: 'eq', expect: 0 }],
    ['a copy', { kind: 'sql', query: "COPY turns TO PROGRAM 'x'", op: 'eq', expect: 0 }],
    [
      'a write behind a comment',
      { kind: 'sql', query: '/* x */ DROP TABLE t', op: 'eq', expect: 0 },
    ],
    ['ftp url', { kind: 'http', url: 'ftp://127.0.0.1/', status: 200 }],
    ['credentials', { kind: 'http', url: 'http://u:p@127.0.0.1/', status: 200 }],
    ['no expectation', { kind: 'http', url: 'http://127.0.0.1/' }],
    ['status out of range', { kind: 'http', url: 'http://127.0.0.1/', status: 42 }],
  ])('refuses %s with INVALID_ARGUMENT', (_name, raw) => {
    expect(invalid(raw)).toBe('INVALID_ARGUMENT');
  });

  it('accepts reads that start with a comment or a parenthesis (negative control)', () => {
    for (const query of ['-- count\nSELECT 1', '(SELECT 1)', 'WITH a AS (SELECT 1) SELECT 1']) {
      expect(invalid({ kind: 'sql', query, op: 'eq', expect: 1 })).toBe('accepted');
    }
  });
});

describe('file instrument', () => {
  it('answers each mode, and each has its failing side', async () => {
    const run = (s: ProbeSpec) => file.run(s, ctx);
    expect((await run(spec('notes.txt', 'exists'))).verdict).toBe('verified');
    expect((await run(spec('nope.txt', 'exists'))).verdict).toBe('falsified');
    expect((await run(spec('nope.txt', 'missing'))).verdict).toBe('verified_missing');
    expect((await run(spec('notes.txt', 'missing'))).verdict).toBe('falsified');
    expect((await run(spec('notes.txt', 'contains', 'alpha'))).verdict).toBe('verified');
    expect((await run(spec('notes.txt', 'contains', 'gamma'))).verdict).toBe('falsified');
    expect((await run(spec('notes.txt', 'contains', 'gamma', true))).verdict).toBe(
      'verified_missing',
    );
    expect((await run(spec('notes.txt', 'contains', 'alpha', true))).verdict).toBe('falsified');
  });

  it('records the evidence seed 000 asks for', async () => {
    const out = await file.run(spec('sub/inner.txt', 'contains', 'needle'), ctx);
    expect(out).toEqual({
      verdict: 'verified',
      errorCode: null,
      evidence: {
        path: 'sub/inner.txt',
        root,
        exists: true,
        sizeBytes: 13,
        mode: 'contains',
        needle: 'needle',
        negate: false,
        matchCount: 1,
      },
    });
    const absent = await file.run(spec('nope.txt', 'missing'), ctx);
    expect(absent.evidence).toMatchObject({ path: 'nope.txt', exists: false, sizeBytes: null });
  });

  it('gives an error for contains on a missing file or a directory', async () => {
    const missing = await file.run(spec('nope.txt', 'contains', 'x', true), ctx);
    expect(missing).toMatchObject({ verdict: 'error', errorCode: 'FILE_NOT_FOUND' });
    const dir = await file.run(spec('sub', 'contains', 'x'), ctx);
    expect(dir).toMatchObject({ verdict: 'error', errorCode: 'UNREADABLE' });
    expect((await file.run(spec('sub', 'exists'), ctx)).verdict).toBe('verified');
  });

  it('looks in every root in order', async () => {
    const out = await file.run(spec('only-second.txt', 'exists'), ctx);
    expect(out).toMatchObject({ verdict: 'verified', evidence: { root: second } });
    expect((await file.run(spec('only-second.txt', 'missing'), ctx)).verdict).toBe('falsified');
  });
});

describe('file probe sandbox', () => {
  const outsideCode = async (path: string, mode: FileProbeSpec['mode'] = 'exists') =>
    (await file.run(spec(path, mode), ctx)).errorCode;

  it('refuses traversal with PATH_OUTSIDE_ROOTS, even to a file that exists', async () => {
    expect(await outsideCode('../outside/secret.txt')).toBe('PATH_OUTSIDE_ROOTS');
    expect(await outsideCode('sub/../../outside/secret.txt')).toBe('PATH_OUTSIDE_ROOTS');
    // `..` is refused even when it would land inside a root: a probe path never climbs.
    expect(await outsideCode('sub/../notes.txt')).toBe('PATH_OUTSIDE_ROOTS');
    expect(await outsideCode('../outside/nothing-here.txt', 'missing')).toBe('PATH_OUTSIDE_ROOTS');
  });

  it('refuses absolute paths outside the roots and accepts those inside (control)', async () => {
    expect(await outsideCode(join(outside, 'secret.txt'))).toBe('PATH_OUTSIDE_ROOTS');
    expect(await outsideCode('/etc/passwd')).toBe('PATH_OUTSIDE_ROOTS');
    const inside = await file.run(spec(join(root, 'sub', 'inner.txt'), 'exists'), ctx);
    expect(inside).toMatchObject({ verdict: 'verified', evidence: { path: 'sub/inner.txt' } });
  });

  it('refuses symbolic links that leave the roots and follows those that stay (control)', async () => {
    expect(await outsideCode('escape.txt')).toBe('PATH_OUTSIDE_ROOTS');
    expect(await outsideCode('escape-dir/secret.txt')).toBe('PATH_OUTSIDE_ROOTS');
    expect(await outsideCode('escape-dir/none.txt', 'missing')).toBe('PATH_OUTSIDE_ROOTS');
    const alias = await file.run(spec('alias.txt', 'contains', 'alpha'), ctx);
    expect(alias).toMatchObject({ verdict: 'verified', evidence: { path: 'notes.txt' } });
  });

  it('refuses a dangling link that points outside, so "missing" leaks nothing', async () => {
    expect(await outsideCode('dangling-out.txt', 'missing')).toBe('PATH_OUTSIDE_ROOTS');
    const inside = await file.run(spec('dangling-in.txt', 'missing'), ctx);
    expect(inside.verdict).toBe('verified_missing');
  });

  it('gives UNREADABLE for a symbolic link loop', async () => {
    expect(await outsideCode('loop-a')).toBe('UNREADABLE');
  });
});

describe('source-to-build fallback', () => {
  const fallback = { from: 'src/', to: 'dist/', fromExt: '.ts', toExt: '.js' };

  it('applies only when configured and only when the source is absent', async () => {
    const probe = spec('src/lib/util.ts', 'contains', 'built');
    const without = await file.run(probe, ctx);
    expect(without).toMatchObject({ verdict: 'error', errorCode: 'FILE_NOT_FOUND' });
    const withFallback = await file.run(probe, fileContext([root], { sourceFallback: fallback }));
    expect(withFallback).toMatchObject({
      verdict: 'verified',
      evidence: { path: 'dist/lib/util.js', fallbackFrom: 'src/lib/util.ts', matchCount: 1 },
    });
    // A source that exists is probed itself.
    mkdirSync(join(root, 'src', 'lib'), { recursive: true });
    writeFileSync(join(root, 'src', 'lib', 'util.ts'), 'export const source = 1;\n');
    const fromSource = await file.run(probe, fileContext([root], { sourceFallback: fallback }));
    expect(fromSource).toMatchObject({
      verdict: 'falsified',
      evidence: { path: 'src/lib/util.ts' },
    });
    expect(fromSource.evidence).not.toHaveProperty('fallbackFrom');
  });
});

describe('file instrument calibration', () => {
  it('passes with divergent verdicts on a control file it writes and removes', async () => {
    const result = await calibrate(file, fileContext([root]));
    expect(result).toMatchObject({ passed: true, positive: 'verified', negative: 'falsified' });
    expect(existsSync(join(root, FILE_CONTROL_DIR))).toBe(false);
  });

  it('fails an instrument that only checks existence (seed 000 stage 1)', async () => {
    const existenceOnly: ProbeInstrument = {
      ...file,
      fingerprint: 'test:existence-only',
      run: (s, c) => file.run({ ...(s as FileProbeSpec), mode: 'exists' }, c),
    };
    const result = await calibrate(existenceOnly, fileContext([root]));
    expect(result).toMatchObject({ passed: false, positive: 'verified', negative: 'verified' });
    expect(existsSync(join(root, FILE_CONTROL_DIR))).toBe(false);
  });

  it('fails when the controls cannot be set up', async () => {
    const blocked = join(tmp.dir, 'blocked');
    writeFileSync(blocked, 'a file where the root directory should be');
    const result = await calibrate(file, fileContext([blocked]));
    expect(result).toMatchObject({ passed: false, positive: 'error', negative: 'error' });
    expect(result.detail.problem).toMatch(/controls could not be set up/);
    const nowhere = join(tmp.dir, 'no-such-root');
    const missing = await calibrate(file, fileContext([nowhere]));
    expect(missing).toMatchObject({ passed: false, positive: 'error', negative: 'error' });
    expect(existsSync(nowhere)).toBe(false);
  });
});
