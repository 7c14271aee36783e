// Seed 000 stage 1: claim_probe(file) checked only that the file existed, so a needle provably absent from it came back VERIFIED.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileInstrument, type FileProbeSpec, type ProbeInstrument } from '../../src/index.js';
import { ONE_ENGINE, openTestEngine, type TestEngine } from '../support/engines.js';
import { tempDir } from '../support/probe-fixtures.js';

const tmp = tempDir('memledger-reg-existence-');
afterAll(tmp.cleanup);
writeFileSync(join(tmp.dir, 'package.json'), '{ "name": "app", "version": "1.0.0" }\n');

// The stage-1 instrument, rebuilt: it reads a contains probe as an existence check.
const builtIn = createFileInstrument();
const stage1: ProbeInstrument = {
  name: 'stage1-file',
  kind: 'file',
  run: (spec, ctx) => builtIn.run({ ...(spec as FileProbeSpec), mode: 'exists' }, ctx),
  controls: (ctx) => builtIn.controls(ctx),
};

describe.each(ONE_ENGINE)('probe existence mistaken for content [%s]', (kind) => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await openTestEngine(kind, { probes: { roots: [tmp.dir], instruments: [stage1] } });
    await t.engine.subjects.create();
  });
  afterAll(() => t.close());

  it('falsifies a contains probe on a file that exists but lacks the needle', async () => {
    const record = await t.engine.subject().probes.run({
      kind: 'file',
      path: 'package.json',
      mode: 'contains',
      needle: 'zzz_nonexistent_string_qqq_9481',
    });
    expect(record.verdict).toBe('falsified');
    expect(record.evidence).toMatchObject({ exists: true, matchCount: 0, mode: 'contains' });
  });

  it('gives divergent verdicts, with different evidence, for a positive/negative pair', async () => {
    const probe = (needle: string) =>
      t.engine
        .subject()
        .probes.run({ kind: 'file', path: 'package.json', mode: 'contains', needle });
    const positive = await probe('name');
    const negative = await probe('zzz_nonexistent_string_qqq_9481');
    expect([positive.verdict, negative.verdict]).toEqual(['verified', 'falsified']);
    expect(positive.evidence).not.toEqual(negative.evidence);
  });

  it('fails the calibration of an instrument that answers from existence alone', async () => {
    const [sound] = await t.engine.subject().probes.calibrate({ instrument: 'file' });
    expect(sound).toMatchObject({ passed: true, positive: 'verified', negative: 'falsified' });
    const [broken] = await t.engine.subject().probes.calibrate({ instrument: 'stage1-file' });
    expect(broken).toMatchObject({ passed: false, positive: 'verified', negative: 'verified' });
    const record = await t.engine
      .subject()
      .probes.run(
        { kind: 'file', path: 'package.json', mode: 'contains', needle: 'zzz_nonexistent' },
        { instrument: 'stage1-file' },
      );
    // Its yes is recorded, and recorded as untrusted.
    expect(record).toMatchObject({ verdict: 'verified', calibrated: false });
  });
});
