// Seed 000 stage 2: polarity was inferred from the assertion's English, so the word "absent" in a needle flipped verdicts (a file holding "absent" 3 times came back FALSIFIED).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError, type ProbeSpec } from '../../src/index.js';
import { ONE_ENGINE, openTestEngine, type TestEngine } from '../support/engines.js';
import { tempDir } from '../support/probe-fixtures.js';

const tmp = tempDir('memledger-reg-polarity-');
afterAll(tmp.cleanup);
writeFileSync(
  join(tmp.dir, 'report.md'),
  'The bug is absent.\nLogs: absent, absent.\nNothing is missing here except a word.\n',
);
writeFileSync(join(tmp.dir, 'plain.txt'), 'nothing of note\n');

describe.each(ONE_ENGINE)('probe polarity from wording [%s]', (kind) => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await openTestEngine(kind, { probes: { roots: [tmp.dir] } });
    await t.engine.subjects.create();
  });
  afterAll(() => t.close());
  const run = (spec: ProbeSpec) => t.engine.subject().probes.run(spec);

  it('verifies --contains absent on a file holding the token three times, matchCount 3', async () => {
    const record = await run({
      kind: 'file',
      path: 'report.md',
      mode: 'contains',
      needle: 'absent',
    });
    expect(record.verdict).toBe('verified');
    expect(record.evidence).toMatchObject({ needle: 'absent', matchCount: 3, negate: false });
  });

  it('lets the words "absent" and "missing" change no verdict: negate alone decides', async () => {
    const cases: Array<[string, string, boolean, string]> = [
      ['report.md', 'absent', false, 'verified'],
      ['report.md', 'absent', true, 'falsified'],
      ['report.md', 'missing', false, 'verified'],
      ['report.md', 'missing', true, 'falsified'],
      ['plain.txt', 'absent', false, 'falsified'],
      ['plain.txt', 'absent', true, 'verified_missing'],
      ['plain.txt', 'does not contain', false, 'falsified'],
      ['plain.txt', 'is missing', true, 'verified_missing'],
    ];
    for (const [path, needle, negate, verdict] of cases) {
      const record = await run({ kind: 'file', path, mode: 'contains', needle, negate });
      expect({ path, needle, negate, verdict: record.verdict }).toEqual({
        path,
        needle,
        negate,
        verdict,
      });
    }
  });

  it('never turns a missing file into a verified absence', async () => {
    const gone = await run({
      kind: 'file',
      path: 'gone.md',
      mode: 'contains',
      needle: 'absent',
      negate: true,
    });
    expect(gone).toMatchObject({ verdict: 'error', errorCode: 'FILE_NOT_FOUND' });
    const exists = await run({ kind: 'file', path: 'gone.md', mode: 'exists' });
    expect(exists.verdict).toBe('falsified');
  });

  it('refuses a free-text assertion field instead of reading polarity from it', async () => {
    const spec = {
      kind: 'file',
      path: 'report.md',
      mode: 'exists',
      assertion: 'the bug is absent',
    };
    await expect(run(spec as unknown as ProbeSpec)).rejects.toSatisfy(
      (err) => err instanceof EngineError && err.code === 'INVALID_ARGUMENT',
    );
  });
});
