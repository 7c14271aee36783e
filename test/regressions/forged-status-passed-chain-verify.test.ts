// A row edited to `active` (or to a receipt promotion) in the facts table passed `chain verify`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type OwnerSigner,
  type FactId,
} from '../../src/index.js';
import { storeClient } from '../../src/engine/test-access.js';
import { ENGINES, openTestEngine, type TestEngine } from '../support/engines.js';
import { TEST_KEYS } from '../support/test-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'memledger-forged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(ENGINES)('forged fact statuses [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let signer: OwnerSigner;
  let n = 0;

  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
    const file = join(dir, `${kind}.key`);
    writeOwnerKeyFile(file, generateOwnerKey('pw', TEST_KEYS).keyFile);
    signer = loadOwnerKey(file, 'pw', TEST_KEYS);
  });
  afterAll(async () => {
    await t.close();
  });

  async function subjectWithPile() {
    const subject = `f${++n}`;
    await engine.subjects.create(subject);
    const me = engine.subject(subject);
    await me.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
    const s = await me.sessions.create();
    await me.turns.add({
      sessionId: s.id,
      role: 'user',
      content: 'Keep your answers short, I read on my phone.',
    });
    await me.turns.add({
      sessionId: s.id,
      role: 'assistant',
      content: 'Emailed it.',
      receipt: { tools: ['send_email'] },
    });
    await me.slots.declare({ name: 'emails', rule: 'action' });
    const r = await me.gate.propose({
      sessionId: s.id,
      proposals: [
        {
          slot: 'stances',
          text: 'Keep answers short.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'Keep your answers short' },
        },
        {
          slot: 'stances',
          text: 'The user reads on a phone.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I read on my phone' },
        },
        {
          slot: 'emails',
          text: 'Emailed the report.',
          origin: 'did',
          evidence: { turn: 2, tool: 'send_email' },
        },
      ],
    });
    const [a, b, c] = r.proposed.map((p) => p.id);
    return { me, a: a ?? '', b: b ?? '', c: c ?? '' };
  }

  it('catches a rejected proposal edited to active', async () => {
    const x = await subjectWithPile();
    await x.me.owner.decide({ proposalId: x.a as FactId, decision: 'reject', signer });
    expect((await x.me.owner.verifyChain()).ok).toBe(true);
    await storeClient(engine).query(
      `UPDATE facts SET status = 'active', promoted_by = 'owner' WHERE id = $1`,
      [x.a],
    );
    expect(await x.me.owner.verifyChain()).toMatchObject({
      ok: false,
      code: 'STATUS_MISMATCH',
      brokenAt: 1,
    });
  });

  it('catches a pending proposal edited to active with no decision, and a forged receipt promotion', async () => {
    const x = await subjectWithPile();
    await storeClient(engine).query(
      `UPDATE facts SET status = 'active', promoted_by = 'owner' WHERE id = $1`,
      [x.b],
    );
    expect(await x.me.owner.verifyChain()).toMatchObject({
      ok: false,
      code: 'MISSING_DECISION',
    });
    const y = await subjectWithPile();
    // the action slot was never delegated: a receipt promotion cannot be claimed for it
    await storeClient(engine).query(
      `UPDATE facts SET status = 'active', promoted_by = 'receipt' WHERE id = $1`,
      [y.c],
    );
    expect(await y.me.owner.verifyChain()).toMatchObject({
      ok: false,
      code: 'UNSIGNED_DELEGATION',
    });
    expect((await y.me.facts.live()).map((f) => f.id)).not.toContain(y.c);
  });

  it('never lets a declaration turn auto-live on, and keeps a used slot to its rule', async () => {
    const x = await subjectWithPile();
    // auto-live is an owner delegation (a signed link), never a declaration
    await expect(
      x.me.slots.declare({ name: 'emails', rule: 'action', autoLive: true }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(
      x.me.slots.declare({ name: 'fresh_slot', rule: 'action', autoLive: true }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(x.me.slots.declare({ name: 'stances', rule: 'action' })).rejects.toMatchObject({
      code: 'SLOT_IN_USE',
    });
    await x.me.slots.declare({ name: 'emails', rule: 'action' });
    // the pending action stays pending when the slot is delegated later: a delegation backs
    // only what is recorded while it stands
    await x.me.owner.delegate({ slot: 'emails', tools: ['send_email'], signer });
    expect((await x.me.facts.get(x.c as FactId)).status).toBe('proposed');
    expect((await x.me.owner.verifyChain()).ok).toBe(true);
  });
});
