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
} from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { storedVerdictDiffers } from '../src/rules.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { TEST_KEYS } from './support/test-keys.js';
import { unchecked } from './support/unchecked.js';

const keyDir = mkdtempSync(join(tmpdir(), 'memledger-gate-'));
afterAll(() => rmSync(keyDir, { recursive: true, force: true }));

function makeSigner(name: string): OwnerSigner {
  const file = join(keyDir, `${name}.key`);
  writeOwnerKeyFile(file, generateOwnerKey('pw', TEST_KEYS).keyFile);
  return loadOwnerKey(file, 'pw', TEST_KEYS);
}

let counter = 0;

/** A subject with an owner key and a session holding the seed-001 day. */
async function setup(engine: Engine, signer: OwnerSigner) {
  const subject = `s${++counter}-${Date.now().toString(36)}`;
  await engine.subjects.create(subject);
  const me = engine.subject(subject);
  await me.owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
  const session = await me.sessions.create();
  const day = [
    ['user', 'Remind me what we decided last week about the vendor contract'],
    ['assistant', "I don't have any record of a conversation about the vendor contract."],
    ['user', 'You sent me a message earlier that I never replied to.'],
    ['assistant', "I have no record of a message from me that you didn't reply to."],
    ['user', 'OK. Keep your answers short, I read these on my phone.'],
    ['assistant', 'Will do.'],
  ] as const;
  for (const [role, content] of day) {
    await me.turns.add({
      sessionId: session.id,
      role,
      content,
      ...(role === 'assistant' ? { receipt: { noTools: true } } : {}),
    });
  }
  return { subject, me, sessionId: session.id };
}

describe.each(ENGINES)('write gate through the engine [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let owner: OwnerSigner;

  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
    owner = makeSigner(`owner-${kind}`);
  });
  afterAll(async () => {
    await t.close();
  });

  it('keeps a day with no corrections out of live memory (the false confession)', async () => {
    const { me, sessionId } = await setup(engine, owner);
    const reflection: Array<[unknown, string]> = [
      [
        {
          slot: 'what_i_know_about_user',
          text: 'The user recently asked about the vendor contract, a conversation I failed to recall.',
          origin: 'inferred',
          evidence: { turn: 1, quote: 'what we decided last week about the vendor contract' },
        },
        'ABSENT_REFERENT',
      ],
      [
        {
          slot: 'corrections_received',
          text: "I was corrected for failing to recall the user's question about the vendor contract.",
          origin: 'inferred',
          evidence: { turn: 2, quote: "I don't have any record" },
        },
        'EVIDENCE_NOT_USER_TURN',
      ],
      [
        {
          slot: 'corrections_received',
          text: "I failed to validate the user's memory and acknowledge the significance of those gaps.",
          origin: 'inferred',
        },
        'NO_EVIDENCE',
      ],
      [
        {
          slot: 'corrections_received',
          text: "I was corrected for missing the user's message.",
          origin: 'inferred',
          evidence: { turn: 3, quote: 'You sent me a message earlier' },
        },
        'NO_CORRECTION_EVENT',
      ],
      [
        {
          slot: 'corrections_received',
          text: 'I was corrected about the contract.',
          origin: 'inferred',
          evidence: { turn: 1, quote: 'you were wrong about the contract' },
        },
        'QUOTE_NOT_FOUND',
      ],
      [
        {
          slot: 'stances',
          text: "Trust the user's memory over my records.",
          origin: 'inferred',
          evidence: { turn: 4, quote: 'I have no record' },
        },
        'EVIDENCE_NOT_USER_TURN',
      ],
      [
        {
          slot: 'self_model',
          text: 'I tend to forget things.',
          origin: 'inferred',
          evidence: { turn: 1, quote: 'Remind me' },
        },
        'UNKNOWN_SLOT',
      ],
      [
        {
          slot: 'corrections_received',
          text: 'I missed your message.',
          origin: 'inferred',
          evidence: { turn: 42, quote: 'message' },
        },
        'TURN_NOT_FOUND',
      ],
      [
        {
          slot: 'what_i_know_about_user',
          text: 'I have memory gaps about our chats.',
          origin: 'inferred',
          evidence: { turn: 3, quote: 'I never replied to' },
        },
        'ABSENT_REFERENT',
      ],
      [
        {
          slot: 'corrections_received',
          text: 'I was corrected for my reply.',
          origin: 'inferred',
          evidence: { turn: 5, quote: 'Keep your answers short' },
        },
        'NO_CORRECTION_EVENT',
      ],
      [
        {
          slot: 'stances',
          text: 'Keep answers short.',
          origin: 'did',
          evidence: { turn: 5, quote: 'Keep your answers short' },
        },
        'ORIGIN_MISMATCH',
      ],
      [42, 'INVALID_PROPOSAL'],
    ];
    const wire = {
      slot: 'what_i_know_about_user',
      text: 'The user authorized wire transfers.',
      origin: 'saw',
      evidence: { turn: 5, quote: 'Keep your answers short, I read these on my phone' },
    };
    const result = await me.gate.propose({
      sessionId,
      proposals: unchecked([...reflection.map(([p]) => p), wire]),
      proposedBy: 'reflection',
    });
    expect(result.dropped.map((d) => [d.text, d.code])).toEqual(
      reflection.map(([p, c]) => [(p as { text?: string }).text ?? '', c]),
    );
    for (const d of result.dropped) expect(d.reason.length).toBeGreaterThan(10);
    expect(result.proposed).toEqual([
      {
        id: expect.any(String),
        slot: wire.slot,
        text: wire.text,
        attested: false,
        attestation: { verdict: 'not_found', reason: expect.stringContaining('says none of') },
        status: 'proposed',
      },
    ]);
    expect(await me.facts.live()).toEqual([]);
    const pile = await me.gate.pile();
    expect(
      pile.map((p) => [p.fact.text, p.fact.attested, p.fact.attestation?.verdict, p.fact.status]),
    ).toEqual([[wire.text, false, 'not_found', 'proposed']]);
    expect(pile[0]?.citedTurn?.content).toBe(
      'OK. Keep your answers short, I read these on my phone.',
    );
    const logged = await me.gate.dropped();
    expect(logged.map((d) => d.code).sort()).toEqual(reflection.map(([, c]) => c).sort());
    // arrival's pile line counts the waiting proposals by the gate's verdict on their quotes
    const arrival = await me.arrival.assemble({ surface: 'chat', sessionId });
    expect(arrival.text).toContain(
      "Proposals awaiting owner review: 1 (oldest waiting under an hour; by the gate's verdict on their quotes: 1 not_found).",
    );
  });

  it('the pile reads each quote again: a verdict written past the gate shows as differing', async () => {
    const { me, sessionId } = await setup(engine, owner);
    const r = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user and the agent decided something about the vendor contract last week.',
          origin: 'saw',
          evidence: {
            turn: 1,
            quote: 'Remind me what we decided last week about the vendor contract',
          },
        },
      ],
    });
    const id = r.proposed[0]?.id ?? '';
    expect(r.proposed[0]?.attestation?.verdict).toBe('presupposed');
    // a process with the store writes a copy that claims the gate said "asserted"
    await storeClient(engine).query(
      `INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
         evidence_session_id, evidence_seq, evidence_quote, evidence_tool, proposed_by, valid_from,
         recorded_at, status_at, terms, attestation, attestation_reason)
       SELECT subject_id, 'forged-1', slot, key, text, origin, 'proposed', true, evidence_turn_id,
         evidence_session_id, evidence_seq, evidence_quote, evidence_tool, proposed_by, valid_from,
         recorded_at, status_at, terms, 'asserted', 'the user states it'
       FROM facts WHERE id = $1`,
      [id],
    );
    const pile = await me.gate.pile();
    const genuine = pile.find((p) => p.fact.id === id);
    const forged = pile.find((p) => p.fact.id === 'forged-1');
    // negative control: the gate's own row reads the same now
    expect(genuine?.verdictNow?.verdict).toBe(genuine?.fact.attestation?.verdict);
    expect(forged?.fact.attestation?.verdict).toBe('asserted');
    expect(forged?.verdictNow?.verdict).toBe('presupposed');
    expect(storedVerdictDiffers(forged?.fact ?? { attested: false }, forged?.verdictNow)).toEqual({
      stored: 'asserted',
    });
    expect(
      storedVerdictDiffers(genuine?.fact ?? { attested: false }, genuine?.verdictNow),
    ).toBeNull();
    // a copy that drops the verdict but keeps attested = true reads as a pre-migration "yes"
    await storeClient(engine).query(
      `INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
         evidence_session_id, evidence_seq, evidence_quote, evidence_tool, proposed_by, valid_from,
         recorded_at, status_at, terms)
       SELECT subject_id, 'forged-2', slot, key, text, origin, 'proposed', true, evidence_turn_id,
         evidence_session_id, evidence_seq, evidence_quote, evidence_tool, proposed_by, valid_from,
         recorded_at, status_at, terms
       FROM facts WHERE id = $1`,
      [id],
    );
    const bare = (await me.gate.pile()).find((p) => p.fact.id === 'forged-2');
    expect(bare?.fact.attestation).toBeNull();
    expect(storedVerdictDiffers(bare?.fact ?? { attested: false }, bare?.verdictNow)).toEqual({
      stored: 'asserted',
    });
  });

  it("arrival's pile line names each verdict, asserted first, and none once the pile is empty", async () => {
    const { me, sessionId } = await setup(engine, owner);
    const ask = await me.turns.add({
      sessionId,
      role: 'user',
      content: "Do you think I'm allergic to peanuts? I'm allergic to cats, for sure.",
    });
    if (!ask.recorded) throw new Error('not recorded');
    const r = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user is allergic to peanuts.',
          origin: 'saw',
          evidence: { turn: ask.turn.seq, quote: "I'm allergic to peanuts" },
        },
        {
          slot: 'what_i_know_about_user',
          text: 'The user is allergic to cats.',
          origin: 'saw',
          evidence: { turn: ask.turn.seq, quote: "I'm allergic to cats" },
        },
      ],
    });
    expect(r.dropped).toEqual([]);
    expect(r.proposed.map((p) => p.attestation?.verdict)).toEqual(['presupposed', 'asserted']);
    const text = (await me.arrival.assemble({ surface: 'chat', sessionId })).text;
    expect(text).toMatch(/by the gate's verdict on their quotes: 1 asserted, 1 presupposed\)\./u);
    for (const p of r.proposed) {
      await me.owner.decide({ proposalId: p.id, decision: 'reject', signer: owner });
    }
    const after = (await me.arrival.assemble({ surface: 'chat', sessionId })).text;
    expect(after).toContain('Proposals awaiting owner review: none.');
  });

  it('makes a proposal live only through a verified owner decision, and supersedes by slot+key', async () => {
    const { me, sessionId } = await setup(engine, owner);
    await me.turns.add({
      sessionId,
      role: 'user',
      content: 'Actually I read them on my laptop now.',
    });
    const first = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'stances',
          key: 'device',
          text: 'The user reads on a phone.',
          origin: 'saw',
          evidence: { turn: 5, quote: 'I read these on my phone' },
        },
      ],
    });
    const firstId = first.proposed[0]?.id ?? '';
    expect(
      (await me.owner.decide({ proposalId: firstId as FactId, decision: 'approve', signer: owner }))
        .status,
    ).toBe('active');
    const second = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'stances',
          key: 'device',
          text: 'The user reads on a laptop.',
          origin: 'saw',
          evidence: { turn: 7, quote: 'I read them on my laptop now' },
        },
      ],
    });
    const secondId = second.proposed[0]?.id ?? '';
    const d = await me.owner.decide({
      proposalId: secondId as FactId,
      decision: 'approve',
      signer: owner,
    });
    expect(d.superseded).toBe(firstId);
    expect((await me.facts.live()).map((f) => f.text)).toEqual(['The user reads on a laptop.']);
    const all = await me.facts.all();
    const old = all.find((f) => f.id === firstId);
    const fresh = all.find((f) => f.id === secondId);
    expect(old).toMatchObject({ status: 'superseded', supersededById: secondId });
    expect(old?.supersededAt).not.toBeNull();
    expect(fresh).toMatchObject({ status: 'active', supersedesId: firstId });
    expect(
      await code(
        me.owner.decide({ proposalId: secondId as FactId, decision: 'approve', signer: owner }),
      ),
    ).toBe('NOT_PENDING');
    expect(
      await code(
        me.owner.decide({ proposalId: 'nope' as FactId, decision: 'approve', signer: owner }),
      ),
    ).toBe('PROPOSAL_NOT_FOUND');
    const stranger = makeSigner(`stranger-${kind}`);
    const third = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'stances',
          text: 'Short answers.',
          origin: 'saw',
          evidence: { turn: 5, quote: 'Keep your answers short' },
        },
      ],
    });
    expect(
      await code(
        me.owner.decide({
          proposalId: third.proposed[0]?.id ?? ('' as FactId),
          decision: 'approve',
          signer: stranger,
        }),
      ),
    ).toBe('WRONG_KEY');
    expect((await me.owner.verifyChain()).ok).toBe(true);
    expect(await me.owner.verifyChain({ ownerKey: stranger })).toMatchObject({
      ok: false,
      brokenAt: 1,
      code: 'KEY_MISMATCH',
    });
  });

  it('checks action receipts, and goes live on a receipt only where the slot says so', async () => {
    const { me, sessionId } = await setup(engine, owner);
    await me.turns.add({
      sessionId,
      role: 'assistant',
      content: 'Sent the invoice.',
      receipt: { tools: ['send_email'], sources: ['msg-1'] },
    });
    await me.slots.declare({ name: 'emails_sent', rule: 'action' });
    await me.slots.declare({ name: 'files_written', rule: 'action' });
    // a declaration cannot make a slot auto-live: only the owner's signed delegation can
    expect(
      await code(me.slots.declare({ name: 'files_written', rule: 'action', autoLive: true })),
    ).toBe('INVALID_ARGUMENT');
    await me.owner.delegate({ slot: 'files_written', tools: ['send_email'], signer: owner });
    const r = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'emails_sent',
          text: 'Sent the invoice to Acme.',
          origin: 'did',
          evidence: { turn: 7, tool: 'send_email' },
        },
        {
          slot: 'emails_sent',
          text: 'Sent a reminder to Acme.',
          origin: 'did',
          evidence: { turn: 7, tool: 'web_search' },
        },
        {
          slot: 'emails_sent',
          text: 'Sent nothing.',
          origin: 'did',
          evidence: { turn: 6, tool: 'send_email' },
        },
        {
          slot: 'files_written',
          text: 'Emailed the invoice file.',
          origin: 'did',
          evidence: { turn: 7, tool: 'send_email' },
        },
        {
          slot: 'emails_sent',
          text: 'The user wants invoices.',
          origin: 'saw',
          evidence: { turn: 5, quote: 'Keep' },
        },
      ],
    });
    expect(r.proposed.map((p) => [p.slot, p.status])).toEqual([
      ['emails_sent', 'proposed'],
      ['files_written', 'active'],
    ]);
    expect(r.dropped.map((d) => d.code)).toEqual([
      'RECEIPT_NOT_FOUND',
      'RECEIPT_NOT_FOUND',
      'ORIGIN_MISMATCH',
    ]);
    expect((await me.facts.live()).map((f) => f.slot)).toEqual(['files_written']);
    // a receipt promotion needs no decision of its own (the delegation link backs it)
    expect(await me.owner.verifyChain()).toMatchObject({ ok: true, length: 1 });
  });

  describe('tampering', () => {
    /** A subject with three decided proposals and one still pending. */
    async function chainOfThree() {
      const s = await setup(engine, owner);
      const texts = [
        'Keep answers short.',
        'The user reads on a phone.',
        'Answers should be short.',
        'Short is good.',
      ];
      const quotes = [
        'Keep your answers short',
        'I read these on my phone',
        'Keep your answers short',
        'answers short',
      ];
      const r = await s.me.gate.propose({
        sessionId: s.sessionId,
        proposals: texts.map((text, i) => ({
          slot: 'stances',
          text,
          origin: 'saw',
          evidence: { turn: 5, quote: quotes[i] ?? '' },
        })),
      });
      const ids = r.proposed.map((p) => p.id);
      expect(ids).toHaveLength(4);
      await s.me.owner.decide({
        proposalId: ids[0] ?? ('' as FactId),
        decision: 'approve',
        signer: owner,
      });
      await s.me.owner.decide({
        proposalId: ids[1] ?? ('' as FactId),
        decision: 'reject',
        signer: owner,
      });
      await s.me.owner.decide({
        proposalId: ids[2] ?? ('' as FactId),
        decision: 'approve',
        signer: owner,
      });
      expect(await s.me.owner.verifyChain()).toMatchObject({
        ok: true,
        length: 3,
      });
      return { ...s, ids, pending: ids[3] ?? '' };
    }

    async function sql(statements: string[], params: unknown[] = []) {
      const db = storeClient(engine);
      await db.exec('ALTER TABLE decisions DISABLE TRIGGER decisions_append_only');
      await db.exec('ALTER TABLE facts DISABLE TRIGGER facts_guard');
      try {
        for (const s of statements) await db.query(s, params);
      } finally {
        await db.exec('ALTER TABLE decisions ENABLE TRIGGER decisions_append_only');
        await db.exec('ALTER TABLE facts ENABLE TRIGGER facts_guard');
      }
    }

    async function expectBroken(
      c: Awaited<ReturnType<typeof chainOfThree>>,
      brokenAt: number,
      chainCode: string,
    ) {
      expect(await c.me.owner.verifyChain()).toMatchObject({
        ok: false,
        brokenAt,
        code: chainCode,
      });
      expect(
        await code(
          c.me.owner.decide({
            proposalId: c.pending as FactId,
            decision: 'approve',
            signer: owner,
          }),
        ),
      ).toBe('CHAIN_BROKEN');
      expect((await c.me.facts.get(c.pending as FactId)).status).toBe('proposed');
    }

    it('detects an edited decision', async () => {
      const c = await chainOfThree();
      await sql(
        [`UPDATE decisions SET decision = 'approve' WHERE subject_id = $1 AND seq = 2`],
        [c.subject],
      );
      await expectBroken(c, 2, 'HASH_MISMATCH');
    });

    it('detects a deleted decision', async () => {
      const c = await chainOfThree();
      await sql([`DELETE FROM decisions WHERE subject_id = $1 AND seq = 2`], [c.subject]);
      await expectBroken(c, 3, 'SEQ_GAP');
    });

    it('detects a cut head (the last decision deleted)', async () => {
      const c = await chainOfThree();
      await sql([`DELETE FROM decisions WHERE subject_id = $1 AND seq = 3`], [c.subject]);
      await expectBroken(c, 3, 'MISSING_DECISION');
    });

    it('detects an inserted decision forged without the owner key', async () => {
      const c = await chainOfThree();
      const forger = makeSigner(`forger-${kind}-${counter}`);
      await sql(
        [
          `INSERT INTO decisions (subject_id, seq, proposal_id, content_hash, decision, decided_at, note, key_id, prev_hash, hash, signature)
           SELECT subject_id, 4, $2, content_hash, 'approve', decided_at, '', key_id, hash, hash, $3
           FROM decisions WHERE subject_id = $1 AND seq = 3`,
        ],
        [c.subject, c.pending, forger.sign('forged')],
      );
      await expectBroken(c, 4, 'HASH_MISMATCH');
    });

    it('detects reordered decisions', async () => {
      const c = await chainOfThree();
      await sql(
        [
          `UPDATE decisions SET seq = 100 WHERE subject_id = $1 AND seq = 2`,
          `UPDATE decisions SET seq = 2 WHERE subject_id = $1 AND seq = 3`,
          `UPDATE decisions SET seq = 3 WHERE subject_id = $1 AND seq = 100`,
        ],
        [c.subject],
      );
      await expectBroken(c, 2, 'PREV_HASH_MISMATCH');
    });

    it('detects a swapped public key', async () => {
      const c = await chainOfThree();
      const other = makeSigner(`other-${kind}-${counter}`);
      await storeClient(engine).query('UPDATE subjects SET owner_public_key = $2 WHERE id = $1', [
        c.subject,
        other.publicKeyPem,
      ]);
      await expectBroken(c, 1, 'BAD_SIGNATURE');
      await storeClient(engine).query('UPDATE subjects SET owner_key_id = $2 WHERE id = $1', [
        c.subject,
        other.keyId,
      ]);
      expect(await c.me.owner.verifyChain()).toMatchObject({
        ok: false,
        brokenAt: 1,
        code: 'KEY_MISMATCH',
      });
    });

    /** Link `seq` signed again by another key, its content as it was. */
    async function resign(c: Awaited<ReturnType<typeof chainOfThree>>, seq: number) {
      const other = makeSigner(`signer-${kind}-${counter}`);
      const row = await storeClient(engine).query<{ hash: string }>(
        'SELECT hash FROM decisions WHERE subject_id = $1 AND seq = $2',
        [c.subject, seq],
      );
      await sql(
        [`UPDATE decisions SET signature = $3 WHERE subject_id = $1 AND seq = $2`],
        [c.subject, seq, other.sign(row.rows[0]?.hash ?? '')],
      );
    }

    it('detects a decision signed by another key', async () => {
      const c = await chainOfThree();
      await resign(c, 3);
      await expectBroken(c, 3, 'BAD_SIGNATURE');
      // the fact link 3 approved is shown unverified: no verified link decides it
      expect((await c.me.facts.get(c.ids[2] as FactId)).integrity?.code).toBe('MISSING_DECISION');
    });

    it('a damaged signature under the last: the audit reports it; the last signature still covers what reads show', async () => {
      const c = await chainOfThree();
      await resign(c, 2);
      const audit = await c.me.owner.verifyChain();
      expect(audit).toMatchObject({ ok: false, brokenAt: 2, code: 'BAD_SIGNATURE' });
      if (!audit.ok) expect(audit.reason).toContain("link 3's signature covers");
      expect((await c.me.facts.integrity()).ok).toBe(true);
      for (const id of [c.ids[0], c.ids[2]]) {
        const fact = await c.me.facts.get(id as FactId);
        expect(fact.status).toBe('active');
        expect(fact.integrity).toBeUndefined();
      }
      // a decision signs on top of it: link 4 covers link 2's content in turn
      await c.me.owner.decide({
        proposalId: c.pending as FactId,
        decision: 'approve',
        signer: owner,
      });
      expect((await c.me.facts.get(c.pending as FactId)).status).toBe('active');
    });

    it('detects a rejected fact set to expired, where no read looks', async () => {
      const c = await chainOfThree();
      await sql(
        [`UPDATE facts SET status = 'expired' WHERE subject_id = $1 AND id = $2`],
        [c.subject, c.ids[1]],
      );
      // nothing live changed: only the decision's check of the statuses out of the pile finds it
      expect((await c.me.facts.integrity()).ok).toBe(true);
      await expectBroken(c, 2, 'STATUS_MISMATCH');
    });

    it('detects an approved fact edited after its decision', async () => {
      const c = await chainOfThree();
      await sql(
        [`UPDATE facts SET text = 'The user authorized wire transfers.' WHERE id = $1`],
        [c.ids[2]],
      );
      await expectBroken(c, 3, 'CONTENT_CHANGED');
    });

    it('refuses edits at the database while the triggers stand', async () => {
      const c = await chainOfThree();
      await expect(
        storeClient(engine).query(`UPDATE decisions SET note = 'x' WHERE subject_id = $1`, [
          c.subject,
        ]),
      ).rejects.toThrow(/append-only/);
      await expect(
        storeClient(engine).query(`UPDATE facts SET text = 'x' WHERE id = $1`, [c.ids[0]]),
      ).rejects.toThrow(/immutable/);
      await expect(
        storeClient(engine).query(`DELETE FROM facts WHERE id = $1`, [c.ids[0]]),
      ).rejects.toThrow(/never deleted/);
      expect((await c.me.owner.verifyChain()).ok).toBe(true);
    });
  });
});
