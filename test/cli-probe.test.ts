import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from './support/cli.js';
import { sharedEngines } from './support/shared-engines.js';
import { dropSchema, ENGINES, pgUrlWithSchema, uniqueSchema } from './support/engines.js';
import { tempDir } from './support/probe-fixtures.js';

const tmp = tempDir('memledger-cli-probe-');
const root = join(tmp.dir, 'root');
const other = join(tmp.dir, 'other');
mkdirSync(root);
mkdirSync(other);
writeFileSync(join(root, 'report.md'), 'absent absent absent\n');
writeFileSync(join(other, 'elsewhere.txt'), 'in the other root\n');
writeFileSync(join(tmp.dir, 'outside.txt'), 'not under any root\n');

let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((_req, res) => res.end('service ok\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  tmp.cleanup();
});

describe.each(ENGINES)('memledger probe CLI [%s]', (kind) => {
  const schema = uniqueSchema();
  const db = kind === 'pglite' ? join(tmp.dir, 'store') : pgUrlWithSchema(schema);
  // commands share one kept engine on the store, as a long-running host does
  const engines = sharedEngines();
  afterAll(() => engines.close());
  const run = (args: string[], env: Record<string, string> = {}) =>
    runCliCaptured([...args, '--db', db, '--json'], env, { engines });
  const file = (...args: string[]) => run(['probe', 'file', '--root', root, ...args]);

  beforeAll(async () => {
    const before = await run(['probe', 'log']);
    expect(before.errorCode()).toBe('NOT_INITIALIZED');
    expect(
      (
        await run(['init'], {
          MEMLEDGER_OWNER_KEY: join(tmp.dir, `${kind}.key`),
          MEMLEDGER_OWNER_PASSPHRASE: 'pw',
        })
      ).code,
    ).toBe(0);
  });
  afterAll(async () => {
    if (kind === 'postgres') await dropSchema(schema);
  });

  it('prints verdict, evidence, calibrated and recordId as one JSON document', async () => {
    const r = await file('--path', 'report.md', '--contains', 'absent');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.json()).toEqual({
      verdict: 'verified',
      evidence: {
        path: 'report.md',
        root,
        exists: true,
        sizeBytes: 21,
        mode: 'contains',
        needle: 'absent',
        negate: false,
        matchCount: 3,
      },
      calibrated: false,
      recordId: expect.any(String),
    });
  });

  it('exits 3 on a falsified probe and 0 on its verified counterpart', async () => {
    const lacks = await file('--path', 'report.md', '--contains', 'present');
    expect(lacks.code).toBe(3);
    expect(lacks.json()).toMatchObject({ verdict: 'falsified', evidence: { matchCount: 0 } });
    const negated = await file('--path', 'report.md', '--contains', 'present', '--negate');
    expect(negated.code).toBe(0);
    expect(negated.json()).toMatchObject({ verdict: 'verified_missing' });
    const missing = await file('--path', 'nothing.md', '--missing');
    expect(missing.json()).toMatchObject({ verdict: 'verified_missing' });
    const exists = await file('--path', 'nothing.md', '--exists');
    expect(exists.json()).toMatchObject({ verdict: 'falsified' });
  });

  it('gives PATH_OUTSIDE_ROOTS with exit 4 for traversal and absolute escapes', async () => {
    for (const path of ['../outside.txt', join(tmp.dir, 'outside.txt')]) {
      const r = await file('--path', path, '--exists');
      expect(r.code).toBe(4);
      expect(r.json()).toMatchObject({ verdict: 'error', errorCode: 'PATH_OUTSIDE_ROOTS' });
    }
    // The same file is reachable once its directory is a root (control).
    const rooted = await run([
      'probe',
      'file',
      '--root',
      tmp.dir,
      '--path',
      'outside.txt',
      '--exists',
    ]);
    expect(rooted.json()).toMatchObject({ verdict: 'verified' });
  });

  it('takes repeated --root, else MEMLEDGER_PROBE_ROOTS', async () => {
    const both = await run([
      'probe',
      'file',
      '--root',
      root,
      '--root',
      other,
      '--path',
      'elsewhere.txt',
      '--exists',
    ]);
    expect(both.json()).toMatchObject({ verdict: 'verified', evidence: { root: other } });
    const env = { MEMLEDGER_PROBE_ROOTS: [root, other].join(delimiter) };
    const fromEnv = await run(['probe', 'file', '--path', 'elsewhere.txt', '--exists'], env);
    expect(fromEnv.json()).toMatchObject({ verdict: 'verified' });
    const onlyFirst = await run(
      ['probe', 'file', '--root', root, '--path', 'elsewhere.txt', '--exists'],
      env,
    );
    expect(onlyFirst.json()).toMatchObject({ verdict: 'falsified' });
  });

  it('refuses ambiguous or incomplete file probes with INVALID_ARGUMENT', async () => {
    for (const args of [
      ['--path', 'report.md'],
      ['--path', 'report.md', '--exists', '--missing'],
      ['--path', 'report.md', '--exists', '--negate'],
      ['--exists'],
    ]) {
      const r = await file(...args);
      expect(r.code).toBe(2);
      expect(r.errorCode()).toBe('INVALID_ARGUMENT');
    }
  });

  it('runs sql probes read-only with explicit operators', async () => {
    const q = 'SELECT count(*)::int FROM schema_migrations WHERE version = 1';
    const eq = await run(['probe', 'sql', '--query', q, '--op', 'eq', '--expect', '1']);
    expect(eq.code).toBe(0);
    expect(eq.json()).toMatchObject({
      verdict: 'verified',
      evidence: { value: 1, op: 'eq', expect: 1 },
    });
    const gt = await run(['probe', 'sql', '--query', q, '--op', 'gt', '--expect', '1']);
    expect(gt.code).toBe(3);
    const negative = await run(['probe', 'sql', '--query', q, '--op', 'gt', '--expect=-1']);
    expect(negative.json()).toMatchObject({ verdict: 'verified' });
    const write = await run([
      'probe',
      'sql',
      '--query',
      'DELETE FROM subjects',
      '--op',
      'eq',
      '--expect',
      '0',
    ]);
    expect(write.errorCode()).toBe('INVALID_ARGUMENT');
    const cte = await run([
      'probe',
      'sql',
      '--query',
      'WITH d AS (DELETE FROM subjects RETURNING 1) SELECT count(*)::int FROM d',
      '--op',
      'eq',
      '--expect',
      '0',
    ]);
    expect(cte.code).toBe(4);
    expect(cte.json()).toMatchObject({ verdict: 'error', errorCode: 'READ_ONLY_VIOLATION' });
    expect(
      (await run(['probe', 'sql', '--query', q, '--op', 'eq', '--expect', '1'])).json(),
    ).toMatchObject({ evidence: { value: 1 } });
    const badOp = await run(['probe', 'sql', '--query', q, '--op', '=', '--expect', '1']);
    expect(badOp.errorCode()).toBe('INVALID_ARGUMENT');
    const badExpect = await run(['probe', 'sql', '--query', q, '--op', 'eq', '--expect', 'one']);
    expect(badExpect.errorCode()).toBe('INVALID_ARGUMENT');
  });

  it('runs http probes on loopback and refuses other hosts unless allowed', async () => {
    const ok = await run([
      'probe',
      'http',
      '--url',
      `${base}/health`,
      '--status',
      '200',
      '--contains',
      'ok',
    ]);
    expect(ok.json()).toMatchObject({
      verdict: 'verified',
      evidence: { status: 200, matchCount: 1 },
    });
    const wrong = await run(['probe', 'http', '--url', `${base}/health`, '--contains', 'down']);
    expect(wrong.json()).toMatchObject({ verdict: 'falsified' });
    const far = await run(['probe', 'http', '--url', 'http://example.invalid/', '--status', '200']);
    expect(far.code).toBe(4);
    expect(far.json()).toMatchObject({ verdict: 'error', errorCode: 'NOT_ALLOWED' });
    // Allowed, the same name gets as far as name resolution (which .invalid never passes).
    const allowed = await run([
      'probe',
      'http',
      '--url',
      'http://example.invalid/',
      '--status',
      '200',
      '--allow',
      'example.invalid',
      '--timeout-ms',
      '2000',
    ]);
    const allowedDoc = allowed.json() as { verdict: string; errorCode: string };
    expect(allowedDoc.verdict).toBe('error');
    expect(['CONNECTION_FAILED', 'TIMEOUT']).toContain(allowedDoc.errorCode);
    const none = await run(['probe', 'http', '--url', `${base}/`]);
    expect(none.errorCode()).toBe('INVALID_ARGUMENT');
  });

  it('calibrates every instrument, after which runs say calibrated', async () => {
    const r = await run(['probe', 'calibrate', '--root', root]);
    expect(r.code).toBe(0);
    const doc = r.json() as { passed: boolean; calibrations: Array<Record<string, unknown>> };
    expect(doc.passed).toBe(true);
    expect(doc.calibrations.map((c) => [c.instrument, c.passed, c.positive, c.negative])).toEqual([
      ['file', true, 'verified', 'falsified'],
      ['sql', true, 'verified', 'falsified'],
      ['http', true, 'verified', 'falsified'],
    ]);
    expect(existsSync(join(root, '.memledger-probe-controls'))).toBe(false);
    const after = await file('--path', 'report.md', '--contains', 'absent');
    expect(after.json()).toMatchObject({ calibrated: true });
    const unknown = await run(['probe', 'calibrate', '--instrument', 'nope']);
    expect(unknown.errorCode()).toBe('UNKNOWN_INSTRUMENT');
  });

  it('lists the probe log newest first, with --limit', async () => {
    const r = await run(['probe', 'log', '--limit', '2']);
    expect(r.code).toBe(0);
    const { records } = r.json() as { records: Array<Record<string, unknown>> };
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({
      verdict: 'verified',
      calibrated: true,
      instrument: 'file',
      spec: { kind: 'file', path: 'report.md', mode: 'contains', needle: 'absent', negate: false },
      errorCode: null,
    });
    const text = await runCliCaptured(['probe', 'log', '--db', db], {}, { engines });
    expect(text.stdout).toMatch(/verified \[file, calibrated\]/);
    const sqlOnly = await run(['probe', 'log', '--kind', 'sql']);
    const sqlRecords = (sqlOnly.json() as { records: Array<{ spec: { kind: string } }> }).records;
    expect(sqlRecords.length).toBeGreaterThan(0);
    expect(sqlRecords.every((r) => r.spec.kind === 'sql')).toBe(true);
  });

  it('lists recorded calibrations', async () => {
    const r = await run(['probe', 'calibrations', '--instrument', 'http']);
    expect(r.code).toBe(0);
    const { calibrations } = r.json() as { calibrations: Array<Record<string, unknown>> };
    expect(calibrations).toHaveLength(1);
    expect(calibrations[0]).toMatchObject({
      instrument: 'http',
      kind: 'http',
      passed: true,
      positive: 'verified',
      negative: 'falsified',
      calibrationId: expect.any(String),
      ranAt: expect.stringMatching(/^\d{4}-/),
    });
  });
});
