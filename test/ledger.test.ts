import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type OwnerSigner,
  type SubjectHandle,
  type FactId,
  type RetractionId,
} from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { checkPolarity } from '../src/rules.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { TEST_KEYS } from './support/test-keys.js';

const root = mkdtempSync(join(tmpdir(), 'memledger-ledger-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const DAY = 86_400_000;

describe('falsifier polarity in the engine', () => {
  it('refuses empty or identical observations, and accepts distinct ones', () => {
    const ok = {
      procedure: 'ls the folder',
      passObservation: 'artifacts/ is empty',
      overturnCondition: 'artifacts/probe.txt exists',
    };
    expect(() => checkPolarity(ok)).not.toThrow();
    for (const bad of [
      { ...ok, overturnCondition: ok.passObservation },
      { ...ok, overturnCondition: '  ARTIFACTS/ is   empty. ' },
      { ...ok, passObservation: '   ' },
      { ...ok, overturnCondition: '' },
    ]) {
      expect(() => checkPolarity(bad)).toThrowError(
        expect.objectContaining({ code: 'POLARITY_NOT_DISTINCT' }),
      );
    }
  });
});

describe.each(ENGINES)('retraction ledger [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;
  let signer: OwnerSigner;
  let now = new Date('2026-10-21T10:00:00Z');
  const dir = join(root, kind);

  beforeAll(async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir, { recursive: true });
    t = await openTestEngine(kind, { clock: () => now, probes: { roots: [dir] } });
    engine = t.engine;
    me = engine.subject();
    const keyFile = join(root, `${kind}.key`);
    writeOwnerKeyFile(keyFile, generateOwnerKey('pw', TEST_KEYS).keyFile);
    signer = loadOwnerKey(keyFile, 'pw', TEST_KEYS);
    await engine.subjects.create();
    await me.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
  });
  afterAll(async () => {
    await t.close();
  });

  const falsifier = {
    stoodOn: 'a summary of the worker run, not the directory itself',
    whyWrong: 'the directory held artifacts/probe.txt (17 bytes)',
    corrected: 'worker 013b4306 left a 17-byte artifact',
    procedure: 'read workers/013b4306/artifacts',
    passObservation: 'artifacts/probe.txt exists with HARNESS PROBE OK',
    overturnCondition: 'artifacts/ is empty',
  };

  /** A live fact about the worker, approved by the owner. */
  async function liveFact(text: string): Promise<string> {
    const s = await me.sessions.create();
    await me.turns.add({ sessionId: s.id, role: 'user', content: `Note this: ${text}` });
    const r = await me.gate.propose({
      sessionId: s.id,
      proposals: [
        { slot: 'what_i_know_about_user', text, origin: 'saw', evidence: { turn: 1, quote: text } },
      ],
    });
    const id = r.proposed[0]?.id ?? '';
    await me.owner.decide({ proposalId: id as FactId, decision: 'approve', signer });
    return id;
  }

  it('refuses a falsifier without distinct polarity, in the engine and in the database', async () => {
    expect(
      await code(
        me.ledger.retract({
          claim: 'x',
          ...falsifier,
          overturnCondition: 'ARTIFACTS/PROBE.TXT exists with harness probe ok.',
        }),
      ),
    ).toBe('POLARITY_NOT_DISTINCT');
    expect(await me.ledger.list()).toEqual([]);
    await expect(
      storeClient(engine).query(
        `INSERT INTO retractions (subject_id, id, claim, stood_on, why_wrong, corrected_claim, corrected_at, caught_by,
           procedure, pass_observation, overturn_condition, due_at, recorded_at)
         VALUES ('owner', 'raw-1', 'c', 's', 'w', 'c2', now(), 'self', 'p', 'Same thing.', ' same   THING ', now(), now())`,
      ),
    ).rejects.toThrow(/retractions_polarity_distinct/);
    await expect(
      storeClient(engine).query(
        `INSERT INTO retractions (subject_id, id, claim, stood_on, why_wrong, corrected_claim, corrected_at, caught_by,
           procedure, pass_observation, overturn_condition, due_at, recorded_at)
         VALUES ('owner', 'raw-2', 'c', 's', 'w', 'c2', now(), 'self', 'p', '', 'something', now(), now())`,
      ),
    ).rejects.toThrow(/retractions_polarity_distinct/);
  });

  it('retracts a live fact, matures, settles by a calibrated probe, restores on overturn, and the gate drops the re-assertion', async () => {
    const claim = 'Worker 013b4306 left no artifacts on disk.';
    const factId = await liveFact(claim);
    const probeFile = join(dir, 'probe.txt');
    writeFileSync(probeFile, 'HARNESS PROBE OK\n');
    const r = await me.ledger.retract({
      claim,
      ...falsifier,
      factId: factId as FactId,
      signer,
      caughtBy: 'reality',
      probe: {
        spec: { kind: 'file', path: 'probe.txt', mode: 'exists' },
        standsIf: 'verified',
        overturnsIf: 'falsified',
      },
    });
    expect(r).toMatchObject({ verdict: 'unchecked', factId, caughtBy: 'reality' });
    expect(r.dueAt.getTime() - r.correctedAt.getTime()).toBe(3 * DAY);
    expect((await me.facts.live()).map((f) => f.id)).not.toContain(factId);
    expect((await me.facts.get(factId as FactId)).status).toBe('retracted');

    // not due yet
    expect(await me.ledger.due()).toEqual([]);
    expect(await code(me.ledger.settle({ retractionId: r.id, runProbe: true }))).toBe('NOT_DUE');

    // the gate drops a re-assertion of the retracted claim
    const s = await me.sessions.create();
    await me.turns.add({ sessionId: s.id, role: 'user', content: `Remember: ${claim}` });
    now = new Date(now.getTime() + 4 * DAY);
    const again = await me.gate.propose({
      sessionId: s.id,
      proposals: [
        { slot: 'stances', text: claim, origin: 'saw', evidence: { turn: 1, quote: claim } },
      ],
    });
    expect(again.proposed).toEqual([]);
    expect(again.dropped[0]?.code).toBe('RETRACTED_CLAIM');

    expect((await me.ledger.due()).map((x) => x.id)).toEqual([r.id]);
    // the instrument the settling probe runs on (calibrating them all boots two SQL snapshots)
    await me.probes.calibrate({ instrument: 'file' });
    const settled = await me.ledger.settle({ retractionId: r.id, runProbe: true });
    expect(settled).toMatchObject({ verdict: 'stands', settledBy: 'probe', restoredFactId: null });
    expect(settled.settledProbeRecordId).not.toBeNull();
    const log = await me.probes.log();
    expect(log.find((p) => p.id === settled.settledProbeRecordId)).toMatchObject({
      verdict: 'verified',
      calibrated: true,
    });
    expect(
      await code(me.ledger.settle({ retractionId: r.id, verdict: 'overturned', outcome: 'x' })),
    ).toBe('ALREADY_SETTLED');
    expect(await me.ledger.due()).toEqual([]);
  });

  it('restores the original as a new active fact when the retraction is overturned', async () => {
    const claim = 'The user prefers tea.';
    const factId = await liveFact(claim);
    const r = await me.ledger.retract({
      claim,
      ...falsifier,
      factId: factId as FactId,
      signer,
      dueDays: 0,
      probe: {
        spec: { kind: 'file', path: 'tea.txt', mode: 'contains', needle: 'coffee' },
        standsIf: 'verified',
        overturnsIf: 'falsified',
      },
    });
    writeFileSync(join(dir, 'tea.txt'), 'tea, always tea');
    await me.probes.calibrate({ instrument: 'file' });
    const settled = await me.ledger.settle({ retractionId: r.id, runProbe: true });
    expect(settled.verdict).toBe('overturned');
    const restored = await me.facts.get(settled.restoredFactId ?? ('' as FactId));
    expect(restored).toMatchObject({ status: 'active', text: claim });
    expect((await me.facts.live()).map((f) => f.text)).toContain(claim);
    expect((await me.facts.get(factId as FactId)).status).toBe('retracted');
    // an overturned claim no longer blocks the gate, and the chain still verifies
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });

  it('refuses a probe through an instrument that has not passed calibration', async () => {
    const yes = await openTestEngine(kind, {
      probes: {
        roots: [dir],
        instruments: [
          {
            name: 'file',
            kind: 'file',
            run: async () => ({ verdict: 'verified', evidence: {} }),
            controls: async () => ({
              positive: { kind: 'file', path: 'a', mode: 'exists' },
              negative: { kind: 'file', path: 'b', mode: 'exists' },
            }),
          },
        ],
      },
    });
    try {
      const e = yes.engine.subject();
      await yes.engine.subjects.create();
      const r = await e.ledger.retract({
        claim: 'c',
        ...falsifier,
        dueDays: 0,
        probe: {
          spec: { kind: 'file', path: 'x.txt', mode: 'exists' },
          standsIf: 'verified',
          overturnsIf: 'falsified',
        },
      });
      const cal = await e.probes.calibrate({ instrument: 'file' });
      expect(cal).toEqual([
        expect.objectContaining({
          instrument: 'file',
          passed: false,
          positive: 'verified',
          negative: 'verified',
        }),
      ]);
      expect(await code(e.ledger.settle({ retractionId: r.id, runProbe: true }))).toBe(
        'INSTRUMENT_NOT_CALIBRATED',
      );
      expect((await e.ledger.get(r.id)).verdict).toBe('unchecked');
    } finally {
      await yes.close();
    }
  });

  it('settles by the owner with an outcome, and refuses bad settlements', async () => {
    const r = await me.ledger.retract({
      claim: 'The deploy ran on Friday.',
      ...falsifier,
      dueDays: 0,
    });
    expect(await code(me.ledger.settle({ retractionId: r.id, runProbe: true }))).toBe('NO_PROBE');
    expect(
      await code(
        me.ledger.settle({ retractionId: r.id, verdict: 'upheld' as 'stands', outcome: 'x' }),
      ),
    ).toBe('INVALID_ARGUMENT');
    expect(
      await code(
        me.ledger.settle({ retractionId: 'nope' as RetractionId, verdict: 'stands', outcome: 'x' }),
      ),
    ).toBe('RETRACTION_NOT_FOUND');
    const s = await me.ledger.settle({
      retractionId: r.id,
      verdict: 'unresolvable',
      outcome: 'the logs were rotated away',
    });
    expect(s).toMatchObject({
      verdict: 'unresolvable',
      settledBy: 'owner',
      settledOutcome: 'the logs were rotated away',
    });
    expect(
      await code(me.ledger.retract({ claim: 'c', ...falsifier, factId: 'no-such-fact' as FactId })),
    ).toBe('FACT_NOT_FOUND');
    await expect(
      storeClient(engine).query(`UPDATE retractions SET claim = 'edited' WHERE id = $1`, [r.id]),
    ).rejects.toThrow(/final|immutable/);
  });
});
