// Issue 36, item 4 (its first part): the owner edits a proposal before approving it. The edited
// text goes through the gate against the same evidence, the signature covers the edited text, the
// lineage shows what the agent proposed and what the owner approved, and an edited approval whose
// text is changed after signing is withheld. Real engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, SubjectHandle } from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { makeOwnerSigner } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

const { signer } = makeOwnerSigner(TEST_KEYS);
const SAID = 'We moved to Lund last spring, and the flat is tiny.';
const PROPOSED = 'The user moved to Lund.';
const EDITED = 'The user moved to Lund last spring.';

describe.each(ENGINES)('editing a proposal before approving it [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let subjects = 0;
  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
  });
  afterAll(() => t.close());

  async function pending(): Promise<{ me: SubjectHandle; id: string }> {
    const subject = `ed${++subjects}`;
    await engine.subjects.create(subject);
    const me = engine.subject(subject);
    await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    const sessionId = (await me.sessions.create()).id;
    await me.turns.add({ sessionId, role: 'user', content: SAID });
    const r = await me.gate.propose({
      sessionId,
      proposedBy: 'agent',
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: PROPOSED,
          origin: 'saw',
          evidence: { turn: 1, quote: 'We moved to Lund last spring' },
        },
      ],
    });
    return { me, id: r.proposed[0]!.id };
  }

  it('approves the edited text, checked and signed, with the lineage kept', async () => {
    const { me, id } = await pending();
    const r = await me.owner.decide({
      proposalId: id as never,
      decision: 'approve',
      text: EDITED,
      signer,
    });
    expect(r).toMatchObject({
      decision: 'approve',
      status: 'active',
      edited: { from: id, proposed: PROPOSED, attested: true },
    });
    expect(r.proposalId).not.toBe(id);
    const live = await me.facts.live();
    expect(live.map((f) => f.text)).toEqual([EDITED]);
    expect(live[0]).toMatchObject({
      proposedBy: `owner (edit of ${id})`,
      evidence: { seq: 1, quote: 'We moved to Lund last spring' },
    });
    expect(await me.facts.get(id as never)).toMatchObject({
      text: PROPOSED,
      status: 'rejected',
      proposedBy: 'agent',
    });
    expect(await me.gate.pile()).toEqual([]);
    expect((await me.owner.verifyChain()).ok).toBe(true);

    // the text changed after signing: withheld, and named
    await storeClient(engine).transaction(async (tx) => {
      await tx.query(`SELECT set_config('memledger.forgetting', 'on', true)`);
      await tx.query(
        `UPDATE facts SET text = 'The user moved to Malmö.' WHERE subject_id = $1 AND id = $2`,
        [me.id, r.proposalId],
      );
    });
    expect(await me.facts.live()).toEqual([]);
    const integrity = await me.facts.integrity();
    expect(integrity.ok).toBe(false);
    expect(integrity.warning.join('\n')).toContain('CONTENT_CHANGED');
  });

  it("remember: the owner's own words, recorded as the owner's turn, checked and approved in one signed step", async () => {
    const { me } = await pending();
    const r = await me.owner.remember({
      text: "The user's sister is called Ana.",
      key: 'sister',
      signer,
    });
    expect(r).toMatchObject({ decision: 'approve', status: 'active', turn: 1 });
    const history = await me.history.turns(r.sessionId);
    expect(history).toMatchObject([
      { role: 'user', speaker: 'owner', content: "The user's sister is called Ana." },
    ]);
    const fact = await me.facts.get(r.proposalId as never);
    expect(fact).toMatchObject({
      status: 'active',
      proposedBy: 'owner',
      key: 'sister',
      attested: true,
      evidence: { seq: 1, quote: "The user's sister is called Ana." },
    });
    // a correction under the same key replaces it, lineage kept
    const c = await me.owner.remember({
      text: "The user's sister is called Anna.",
      key: 'sister',
      sessionId: r.sessionId,
      signer,
    });
    expect(c.superseded).toBe(r.proposalId);
    expect((await me.facts.live()).map((f) => f.text)).toEqual([
      "The user's sister is called Anna.",
    ]);
    expect(await me.facts.get(r.proposalId as never)).toMatchObject({
      status: 'superseded',
      supersededById: c.proposalId,
    });
    expect((await me.owner.verifyChain()).ok).toBe(true);
    // another key records nothing; hidden characters are dropped, nothing signed
    const other = makeOwnerSigner(TEST_KEYS).signer;
    expect(await code(me.owner.remember({ text: 'The user likes figs.', signer: other }))).toBe(
      'WRONG_KEY',
    );
    expect((await me.history.turns(r.sessionId)).length).toBe(2);
    expect(await code(me.owner.remember({ text: 'The user likes\u200b figs.', signer }))).toBe(
      'EDIT_DROPPED',
    );
    expect(await code(me.owner.remember({ text: '  ', signer }))).toBe('INVALID_ARGUMENT');
    expect((await me.facts.live()).length).toBe(1);
  });

  it("corrects a live fact with no key: the owner's words replace it, on the chain as well as in the store", async () => {
    const { me, id } = await pending();
    await me.owner.decide({ proposalId: id as never, decision: 'approve', signer });
    const c = await me.owner.remember({
      text: 'The user moved to Lund in 2025.',
      corrects: id as never,
      signer,
    });
    expect(c).toMatchObject({ status: 'active', superseded: id });
    expect((await me.facts.live()).map((f) => f.text)).toEqual(['The user moved to Lund in 2025.']);
    expect(await me.facts.get(id as never)).toMatchObject({
      status: 'superseded',
      supersededById: c.proposalId,
    });
    expect(await me.facts.get(c.proposalId as never)).toMatchObject({
      slot: 'what_i_know_about_user',
      key: null,
      supersedesId: id,
      proposedBy: 'owner',
    });
    expect((await me.owner.verifyChain()).ok).toBe(true);
    expect((await me.facts.integrity()).ok).toBe(true);

    // only a live fact, in its own slot and key, is corrected; nothing is signed otherwise
    const links = (await me.owner.verifyChain()).length;
    expect(
      await code(
        me.owner.remember({ text: 'The user lives in Lund.', corrects: id as never, signer }),
      ),
    ).toBe('FACT_NOT_LIVE');
    expect(
      await code(
        me.owner.remember({
          text: 'The user lives in Lund.',
          corrects: c.proposalId as never,
          slot: 'stances',
          signer,
        }),
      ),
    ).toBe('INVALID_ARGUMENT');
    expect(
      await code(
        me.owner.remember({ text: 'The user lives in Lund.', corrects: 'f_nope' as never, signer }),
      ),
    ).toBe('FACT_NOT_FOUND');
    expect((await me.owner.verifyChain()).length).toBe(links);
    // a note that reads as a correction is refused; one in another shape corrects nothing
    const other = await pending();
    const note = JSON.stringify({ kind: 'memledger.correction', v: 1, corrects: c.proposalId });
    expect(
      await code(
        other.me.owner.decide({ proposalId: other.id as never, decision: 'approve', note, signer }),
      ),
    ).toBe('INVALID_ARGUMENT');
    await other.me.owner.decide({ proposalId: other.id as never, decision: 'approve', signer });
    const second = await other.me.gate.propose({
      sessionId: (await other.me.sessions.list())[0]!.id,
      proposedBy: 'agent',
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The flat is tiny.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'the flat is tiny' },
        },
      ],
    });
    await other.me.owner.decide({
      proposalId: second.proposed[0]!.id,
      decision: 'approve',
      note: JSON.stringify({ corrects: other.id }),
      signer,
    });
    expect((await other.me.facts.live()).map((f) => f.id).sort()).toEqual(
      [other.id, second.proposed[0]!.id].sort(),
    );

    // the corrected fact's status flipped back by SQL: the chain says it was replaced, so it
    // stays out of live memory, and the integrity block names it (negative control)
    await storeClient(engine).transaction(async (tx) => {
      await tx.query(`SELECT set_config('memledger.forgetting', 'on', true)`);
      await tx.query(
        `UPDATE facts SET status = 'active', superseded_by_id = NULL, superseded_at = NULL
         WHERE subject_id = $1 AND id = $2`,
        [me.id, id],
      );
    });
    expect((await me.facts.all()).find((f) => f.id === id)?.status).not.toBe('active');
    const integrity = await me.facts.integrity();
    expect(integrity.ok).toBe(false);
    expect(integrity.warning.join('\n')).toContain(id);
    expect((await me.facts.live()).map((f) => f.id)).not.toContain(id);
  });

  it('corrects a fact that went live on a receipt: reads and later decisions go on', async () => {
    const { me } = await pending();
    const sessionId = (await me.sessions.create()).id;
    await me.turns.add({
      sessionId,
      role: 'assistant',
      content: 'Sent the invoice.',
      receipt: { tools: ['send_email'], sources: ['msg-1'] },
    });
    await me.slots.declare({ name: 'emails_sent', rule: 'action' });
    await me.owner.delegate({ slot: 'emails_sent', tools: ['send_email'], signer });
    const sent = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'emails_sent',
          text: 'Sent the invoice to Acme.',
          origin: 'did',
          evidence: { turn: 1, tool: 'send_email' },
        },
      ],
    });
    const receiptFact = sent.proposed[0]!;
    expect(receiptFact.status).toBe('active');
    // the slot's delegation ends, so the corrected value waits for the owner
    await me.owner.delegate({ slot: 'emails_sent', autoLive: false, signer });
    const fix = await me.gate.propose({
      sessionId,
      proposedBy: 'agent',
      proposals: [
        {
          slot: 'emails_sent',
          text: 'Sent the invoice to Acme Ltd.',
          origin: 'did',
          evidence: { turn: 1, tool: 'send_email' },
        },
      ],
    });
    const proposalId = fix.proposed[0]!.id;
    expect(fix.proposed[0]!.status).toBe('proposed');
    const r = await me.owner.decide({
      proposalId,
      decision: 'approve',
      corrects: receiptFact.id,
      signer,
    });
    expect(r.superseded).toBe(receiptFact.id);
    expect((await me.facts.live()).map((f) => f.id)).not.toContain(receiptFact.id);
    expect((await me.facts.integrity()).ok).toBe(true);
    expect((await me.owner.verifyChain()).ok).toBe(true);
    // the next decision is not refused as CHAIN_BROKEN
    await me.owner.setForgetPolicy({ honourRequests: true, signer });
  });

  it('an edit the gate drops signs nothing, and the proposal still waits (negative control)', async () => {
    const { me, id } = await pending();
    const links = async () => (await me.owner.verifyChain()).length;
    const before = await links();
    expect(
      await code(
        me.owner.decide({
          proposalId: id as never,
          decision: 'approve',
          text: 'The user moved to\u200b Lund.',
          signer,
        }),
      ),
    ).toBe('EDIT_DROPPED');
    expect(
      await code(
        me.owner.decide({ proposalId: id as never, decision: 'reject', text: EDITED, signer }),
      ),
    ).toBe('INVALID_ARGUMENT');
    expect(await links()).toBe(before);
    expect((await me.gate.pile()).map((p) => p.fact.id)).toEqual([id]);
    expect(await me.facts.live()).toEqual([]);
    // the same text as proposed is a plain approval
    const same = await me.owner.decide({
      proposalId: id as never,
      decision: 'approve',
      text: PROPOSED,
      signer,
    });
    expect(same).toMatchObject({ proposalId: id, status: 'active' });
    expect(same.edited).toBeUndefined();
  });
});
