// A manual "overturned" verdict (no signature) restored a fact to live memory and superseded a newer approved value.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type SubjectHandle,
  type OwnerSigner,
  type FactId,
} from '../../src/index.js';
import { ENGINES, openTestEngine, type TestEngine } from '../support/engines.js';
import { TEST_KEYS } from '../support/test-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'memledger-overturn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(ENGINES)(
  'restoration needs the owner unless a calibrated probe decided [%s]',
  (kind) => {
    let t: TestEngine;
    let engine: Engine;
    let me: SubjectHandle;
    let signer: OwnerSigner;
    let now = new Date('2026-10-01T10:00:00Z');

    beforeAll(async () => {
      t = await openTestEngine(kind, { clock: () => now });
      engine = t.engine;
      const file = join(dir, `${kind}.key`);
      writeOwnerKeyFile(file, generateOwnerKey('pw', TEST_KEYS).keyFile);
      signer = loadOwnerKey(file, 'pw', TEST_KEYS);
      await engine.subjects.create();
      me = engine.subject();
      await me.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
    });
    afterAll(async () => {
      await t.close();
    });

    it('puts a manually restored fact in the pile, and leaves the newer approved value live', async () => {
      const s = await me.sessions.create();
      await me.turns.add({ sessionId: s.id, role: 'user', content: 'I live in Oslo.' });
      await me.turns.add({ sessionId: s.id, role: 'user', content: 'Now I live in Bergen.' });
      const oslo = await me.gate.propose({
        sessionId: s.id,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            key: 'city',
            text: 'The user lives in Oslo.',
            origin: 'saw',
            evidence: { turn: 1, quote: 'I live in Oslo' },
          },
        ],
      });
      const osloId = oslo.proposed[0]?.id ?? '';
      await me.owner.decide({ proposalId: osloId as FactId, decision: 'approve', signer });
      const r = await me.ledger.retract({
        claim: 'The user lives in Oslo.',
        stoodOn: 'an old message',
        whyWrong: 'the user moved',
        corrected: 'The user lives in Bergen.',
        procedure: 'ask the user',
        passObservation: 'the user confirms Bergen',
        overturnCondition: 'the user says Oslo again',
        factId: osloId as FactId,
        signer,
        dueDays: 0,
      });
      now = new Date(now.getTime() + 60_000);
      const bergen = await me.gate.propose({
        sessionId: s.id,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            key: 'city',
            text: 'The user lives in Bergen.',
            origin: 'saw',
            evidence: { turn: 2, quote: 'Now I live in Bergen' },
          },
        ],
      });
      await me.owner.decide({
        proposalId: bergen.proposed[0]?.id ?? ('' as FactId),
        decision: 'approve',
        signer,
      });
      now = new Date(now.getTime() + 60_000);
      const settled = await me.ledger.settle({
        retractionId: r.id,
        verdict: 'overturned',
        outcome: 'said so',
      });
      const restored = await me.facts.get(settled.restoredFactId ?? ('' as FactId));
      expect(restored).toMatchObject({
        status: 'proposed',
        restoredFromId: osloId,
        proposedBy: 'restoration',
      });
      expect((await me.facts.live()).map((f) => f.text)).toEqual(['The user lives in Bergen.']);
      expect((await me.gate.pile()).map((p) => p.fact.id)).toContain(restored.id);
      expect((await me.owner.verifyChain()).ok).toBe(true);
    });
  },
);
