// Issue 36, items 2 and 5: forgetting under a policy the owner signed. With a signed policy that
// honours the user's requests, an agent's request quoting the user's own words asking to forget is
// honoured at once, but only within those words (a phrase they hold, their own conversation) and
// only for what the owner never signed; a signed retention rule forgets old turns, except those a
// decided or live fact cites, when a scheduler runs it. Negative controls for each: no policy, words
// that do not ask, a reach past the words, a live fact, a forged policy link. Real engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, SubjectHandle } from '../src/index.js';
import { storeClient } from '../src/engine/test-access.js';
import { DecisionSql } from '../src/store/decision-sql.js';
import { nodeChainCrypto } from '../src/crypto/chain-crypto.js';
import { nextLinkFields, sealLink } from '../src/domain/decision-chain.js';
import {
  FORGET_POLICY_TARGET,
  asksToForget,
  forgetPolicyNote,
  requestWithinPolicy,
} from '../src/domain/forget-policy.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { makeOwnerSigner } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

const { signer } = makeOwnerSigner(TEST_KEYS);
const DAY = 86_400_000;

describe('which words ask to forget, and how far a request may reach unsigned', () => {
  it('reads a request to forget, and not its negation, a question or a mere mention', () => {
    for (const yes of [
      'Please forget that I told you about my divorce.',
      'erase what I said about Tom',
      'Delete everything about the trip',
      'can you stop remembering my address',
      'Don’t keep it. Just forget it.',
    ])
      expect(asksToForget(yes), yes).toBe(true);
    for (const no of [
      "Don't forget my divorce hearing is on Monday.",
      'Never forget where we met.',
      'I can’t forget her face.',
      'Don’t you dare forget it.',
      'Never, ever forget that.',
      'Do not, under any circumstances, forget it.',
      "I didn't ask you to forget anything.",
      'Do\u200bn’t forget my dentist is Dr Berg.',
      'Donʼt forget my dentist.',
      'How do I delete my Gmail account?',
      'My divorce was finalised in May.',
      'I deleted the photos yesterday.',
    ])
      expect(asksToForget(no), no).toBe(false);
  });

  it('honours only within the words where the user asks: a phrase there, or their own conversation', () => {
    const policy = { honourRequests: true, retainDays: null };
    const said = 'My divorce was hard. Please forget my divorce.';
    const r = { sessionId: 's1', quote: 'forget my divorce', said };
    const within = (scope: Parameters<typeof requestWithinPolicy>[1]['scope'], x = r) =>
      requestWithinPolicy(policy, { ...x, scope });
    expect(within({ kind: 'phrase', phrase: 'Divorce' })).toBe(null);
    expect(within({ kind: 'session', session: 's1' })).toBe(null);
    expect(within({ kind: 'turn', session: 's1', seq: 2 })).toBe(null);
    expect(within({ kind: 'phrase', phrase: 'hard' })).toMatch(/not in the words where/);
    expect(within({ kind: 'session', session: 's2' })).toMatch(/beyond the conversation/);
    expect(within({ kind: 'subject' })).toMatch(/owner's signature/);
    expect(within({ kind: 'fact', fact: 'f1' })).toMatch(/owner's signature/);
    // the agent's quote cannot cut the negation off: the turn's sentence is what is read
    const hearing = {
      sessionId: 's1',
      quote: 'forget my divorce hearing is on Monday',
      said: "Don't forget my divorce hearing is on Monday.",
    };
    expect(within({ kind: 'phrase', phrase: 'divorce hearing' }, hearing)).toMatch(
      /do not ask to forget/,
    );
    // a quote from a sentence that does not ask, beside one that does, is not enough
    const beside = {
      sessionId: 's1',
      quote: 'My divorce was hard',
      said,
    };
    expect(within({ kind: 'phrase', phrase: 'divorce' }, beside)).toMatch(/do not ask to forget/);
    expect(
      requestWithinPolicy(
        { honourRequests: false, retainDays: 30 },
        { ...r, scope: { kind: 'phrase', phrase: 'divorce' } },
      ),
    ).toMatch(/not signed a policy/);
  });
});

describe.each(ENGINES)('forgetting under the owner’s signed policy [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let now = new Date('2026-12-05T10:00:00Z');
  let subjects = 0;
  beforeAll(async () => {
    t = await openTestEngine(kind, { clock: () => now });
    engine = t.engine;
  });
  afterAll(() => t.close());

  async function subject(): Promise<SubjectHandle> {
    const id = `fp${++subjects}`;
    await engine.subjects.create(id);
    const me = engine.subject(id);
    await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    return me;
  }

  async function say(me: SubjectHandle, session: string, lines: string[]): Promise<void> {
    for (const [i, content] of lines.entries()) {
      await me.turns.add({ sessionId: session, role: i % 2 === 0 ? 'user' : 'assistant', content });
    }
  }

  const DIVORCE = [
    'My divorce was finalised in May.',
    'I am sorry.',
    'Please forget that I told you about my divorce.',
  ];
  const ask = (session: string) => ({
    sessionId: session,
    turn: 3,
    quote: 'forget that I told you about my divorce',
    scope: { kind: 'phrase', phrase: 'divorce' } as const,
  });

  it("honours the user's own quoted request at once under a signed policy, and says who forgot", async () => {
    const me = await subject();
    const session = (await me.sessions.create()).id;
    await say(me, session, DIVORCE);

    // no policy: the request waits for the owner, and says why (negative control)
    const waiting = await me.gate.requestForget(ask(session));
    expect(waiting).toMatchObject({ status: 'pending', waits: expect.stringMatching(/policy/) });
    expect(await me.history.render(session)).toContain('My divorce was finalised');

    const signed = await me.owner.setForgetPolicy({ honourRequests: true, signer });
    expect(signed.policy).toEqual({ honourRequests: true, retainDays: null });
    expect(await me.owner.forgetPolicy()).toEqual({
      policy: signed.policy,
      seq: signed.seq,
      recent: [],
    });

    const links = (await me.owner.verifyChain()).length;
    const done = await me.gate.requestForget(ask(session));
    expect(done).toMatchObject({ status: 'honoured', quote: '', scope: { kind: 'phrase' } });
    expect(done.waits).toBeUndefined();
    const history = await me.history.render(session);
    expect(history).not.toContain('divorce');
    expect(history).toContain('I am sorry.');
    expect(history).toContain(`[turn 1: forgotten at the user's request on 2026-12-05]`);
    // the earlier request held the words too: answered by the same forget
    expect(await me.gate.forgetRequests({ status: 'pending' })).toEqual([]);
    expect(await me.recall.search('divorce')).toEqual([]);
    // nothing signed, and the chain verifies
    const chain = await me.owner.verifyChain();
    expect(chain).toMatchObject({ ok: true, length: links });
    // recorded, ids only, with the policy link that allowed it
    expect((await me.owner.forgetPolicy()).recent).toMatchObject([
      {
        basis: 'request',
        policySeq: signed.seq,
        requestId: done.id,
        removed: { turns: 2, requests: 2 },
      },
    ]);
    const { rows } = await storeClient(engine).query<{ note: string }>(
      'SELECT note FROM policy_forgets WHERE subject_id = $1',
      [me.id],
    );
    expect(rows[0]?.note).not.toContain('divorce');
  });

  it('leaves a request pending when its words do not ask, it reaches past them, or it would take down a live fact', async () => {
    const me = await subject();
    await me.owner.setForgetPolicy({ honourRequests: true, signer });
    const session = (await me.sessions.create()).id;
    const other = (await me.sessions.create()).id;
    await say(me, session, [
      "Don't forget my divorce hearing is on Monday.",
      'Noted.',
      'Please forget that I told you about my divorce.',
    ]);
    await say(me, other, ['My sister lives in Lund.']);
    const before = await me.history.render(session);

    const notAsking = await me.gate.requestForget({
      ...ask(session),
      turn: 1,
      quote: "Don't forget my divorce hearing",
    });
    expect(notAsking).toMatchObject({
      status: 'pending',
      waits: expect.stringMatching(/do not ask/),
    });
    // the agent's quote cuts the negation off: the whole turn is read, and it waits
    const cut = await me.gate.requestForget({
      ...ask(session),
      turn: 1,
      quote: 'forget my divorce hearing is on Monday',
      scope: { kind: 'phrase', phrase: 'divorce hearing' },
    });
    expect(cut).toMatchObject({ status: 'pending', waits: expect.stringMatching(/do not ask/) });
    const elsewhere = await me.gate.requestForget({
      ...ask(session),
      scope: { kind: 'session', session: other },
    });
    expect(elsewhere.waits).toMatch(/beyond the conversation/);
    const notSaid = await me.gate.requestForget({
      ...ask(session),
      scope: { kind: 'phrase', phrase: 'Lund' },
    });
    expect(notSaid.waits).toMatch(/not in the words where the user asks/);
    // a turn that is not there: recorded, and it waits, as the owner would find it
    const noTurn = await me.gate.requestForget({
      ...ask(session),
      scope: { kind: 'turn', session, seq: 99 },
    });
    expect(noTurn).toMatchObject({ status: 'pending', waits: expect.stringMatching(/no turn 99/) });
    // another key cannot sign a policy
    expect(
      await code(
        me.owner.setForgetPolicy({
          honourRequests: false,
          signer: makeOwnerSigner(TEST_KEYS).signer,
        }),
      ),
    ).toBe('WRONG_KEY');
    expect(await me.history.render(session)).toBe(before);

    // a live fact the owner approved rests on the turn: the owner must sign that forget
    const p = await me.gate.propose({
      sessionId: session,
      proposedBy: 'agent',
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user has a divorce hearing on Monday.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'my divorce hearing is on Monday' },
        },
      ],
    });
    const factId = p.proposed[0]!.id;
    await me.owner.decide({ proposalId: factId, decision: 'approve', signer });
    const blocked = await me.gate.requestForget(ask(session));
    expect(blocked.status).toBe('pending');
    expect(blocked.waits).toContain(factId);
    expect((await me.facts.live()).map((f) => f.id)).toEqual([factId]);
    expect(await me.history.render(session)).toBe(before);
    // the owner can still honour it, signed
    const signed = await me.owner.forget({ request: blocked.id, withFacts: true, signer });
    expect(signed.removed).toMatchObject({ facts: 1 });
    expect(await me.history.render(session)).toContain('forgotten by the owner on');
  });

  it('a phrase is matched as words, in values not JSON keys, and answers only the requests it covers', async () => {
    const me = await subject();
    await me.owner.setForgetPolicy({ honourRequests: true, signer });
    const session = (await me.sessions.create()).id;
    const other = (await me.sessions.create()).id;
    await say(me, other, [
      'My colleague Tomas is nice.',
      'Noted.',
      'See you tomorrow at the atom lab.',
    ]);
    await say(me, session, [
      'I told Tom about the fact sheet.',
      'Noted.',
      'Please forget Tom.',
      'Sure.',
      'Forget the fact sheet too.',
      'Sure.',
      'Forget that kind of thing.',
    ]);
    // a request waiting for the owner (it names a fact, which only the owner forgets)
    const p = await me.gate.propose({
      sessionId: other,
      proposedBy: 'agent',
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user has a colleague called Tomas.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'My colleague Tomas' },
        },
      ],
    });
    const waiting = await me.gate.requestForget({
      sessionId: session,
      turn: 5,
      quote: 'Forget the fact sheet too',
      scope: { kind: 'fact', fact: p.proposed[0]!.id },
    });
    expect(waiting.status).toBe('pending');

    const tom = await me.gate.requestForget({
      sessionId: session,
      turn: 3,
      quote: 'Please forget Tom',
      scope: { kind: 'phrase', phrase: 'tom' },
    });
    expect(tom.status).toBe('honoured');
    expect(await me.history.render(other)).toContain('Tomas');
    expect(await me.history.render(other)).toContain('tomorrow at the atom lab');
    expect(await me.history.render(session)).not.toMatch(/\bTom\b/);

    // "kind" is a key of every request's scope, not a word of it: the waiting request is untouched
    const kind = await me.gate.requestForget({
      sessionId: session,
      turn: 7,
      quote: 'Forget that kind of thing',
      scope: { kind: 'phrase', phrase: 'kind' },
    });
    expect(kind.status).toBe('honoured');
    expect(await me.gate.forgetRequests({ status: 'pending' })).toMatchObject([
      { id: waiting.id, quote: 'Forget the fact sheet too', scope: { kind: 'fact' } },
    ]);
    const sheet = await me.gate.requestForget({
      sessionId: session,
      turn: 5,
      quote: 'Forget the fact sheet too',
      scope: { kind: 'phrase', phrase: 'fact sheet' },
    });
    expect(sheet.status).toBe('honoured');
    // the waiting request's words held the phrase: cleared, but it still waits for the owner
    const still = (await me.gate.forgetRequests({ status: 'pending' })).find(
      (r) => r.id === waiting.id,
    );
    expect(still).toMatchObject({ quote: '', scope: { kind: 'fact' } });
    expect(JSON.stringify(await me.gate.forgetRequests())).not.toContain('fact sheet');
  });

  it('a policy link forged by SQL allows nothing: the request waits, and the chain names the break', async () => {
    const me = await subject();
    const session = (await me.sessions.create()).id;
    await say(me, session, DIVORCE);
    // a link sealed with another key, appended by a process with the store
    const forger = makeOwnerSigner(TEST_KEYS).signer;
    const note = forgetPolicyNote({ honourRequests: true, retainDays: 1 });
    const link = sealLink(
      nextLinkFields(null, {
        subjectId: me.id,
        proposalId: FORGET_POLICY_TARGET,
        contentHash: nodeChainCrypto.sha256Hex(note),
        decision: 'policy',
        note,
        decidedAt: now.toISOString(),
        keyId: forger.keyId,
      }),
      nodeChainCrypto,
      forger,
    );
    await new DecisionSql(storeClient(engine)).append(link);
    const r = await me.gate.requestForget(ask(session));
    expect(r).toMatchObject({ status: 'pending', waits: expect.stringMatching(/broken/) });
    expect(await me.owner.forgetPolicy()).toEqual({
      policy: { honourRequests: false, retainDays: null },
      seq: null,
      recent: [],
    });
    expect(await code(me.owner.applyRetention())).toBe('CHAIN_BROKEN');
    expect(await me.history.render(session)).toContain('My divorce was finalised');
    expect((await me.owner.verifyChain()).ok).toBe(false);
  });

  it('a signed retention rule forgets old turns when a scheduler runs it, except those a decided fact cites', async () => {
    const me = await subject();
    expect(await code(me.owner.applyRetention())).toBe('NO_RETENTION_RULE');
    expect(await code(me.owner.setForgetPolicy({ retainDays: 0, signer }))).toBe(
      'INVALID_ARGUMENT',
    );
    const start = now;
    now = new Date(start.getTime() - 40 * DAY);
    const old = (await me.sessions.create()).id;
    await say(me, old, ['I planted tulips by the gate.', 'Lovely.', 'My sister is called Ana.']);
    const p = await me.gate.propose({
      sessionId: old,
      proposedBy: 'agent',
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: "The user's sister is called Ana.",
          origin: 'saw',
          evidence: { turn: 3, quote: 'My sister is called Ana' },
        },
        {
          slot: 'stances',
          text: 'The user planted tulips.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I planted tulips' },
        },
      ],
    });
    const diary = (await me.sessions.create({ title: 'tulip diary' })).id;
    await say(me, diary, ['The tulips came up red.']);
    const [sister, tulips] = p.proposed.map((x) => x.id);
    await me.owner.decide({ proposalId: sister!, decision: 'approve', signer });
    now = start;
    const recent = (await me.sessions.create()).id;
    await say(me, recent, ['I bought a bike today.']);

    const rule = await me.owner.setForgetPolicy({ retainDays: 30, signer });
    expect(rule.policy).toEqual({ honourRequests: false, retainDays: 30 });
    // the dry run shows what it would take: the two turns no decided fact cites, and the pending
    // proposal citing one of them; nothing changes
    const { plan, cutoff } = await me.owner.retentionPlan();
    expect(cutoff.toISOString()).toBe(new Date(start.getTime() - 30 * DAY).toISOString());
    expect(plan.targets.turns).toEqual(
      [
        [old, 1, 2],
        [diary, 1, 1],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    // a session it empties loses its title; one it leaves a turn in keeps it
    expect(plan.targets.sessions).toEqual([diary]);
    expect(plan.targets.facts).toEqual([tulips]);
    expect(await me.history.render(old)).toContain('tulips');

    const done = await me.owner.applyRetention();
    expect(done).toMatchObject({ basis: 'retention', policySeq: rule.seq });
    expect((await me.owner.forgetPolicy()).recent).toMatchObject([
      { id: done!.forgetId, basis: 'retention', requestId: null, removed: { turns: 3 } },
    ]);
    expect(done!.removed).toMatchObject({ turns: 3, facts: 1, sessions: 1 });
    expect((await me.sessions.get(diary)).title).toBeNull();
    const history = await me.history.render(old);
    expect(history).not.toContain('tulips');
    expect(history).toContain("[turn 1: forgotten under the owner's retention rule on 2026-12-05]");
    expect(history).toContain('My sister is called Ana.');
    expect(await me.history.render(recent)).toContain('bike');
    expect((await me.facts.live()).map((f) => f.id)).toEqual([sister]);
    expect(await me.gate.pile()).toEqual([]);
    expect((await me.owner.verifyChain()).ok).toBe(true);
    // a second run finds nothing old enough: a quiet success for a scheduler
    expect(await me.owner.applyRetention()).toBeNull();
    // turning the rule off keeps the request setting, and the rule is gone
    const off = await me.owner.setForgetPolicy({ retainDays: null, signer });
    expect(off.policy).toEqual({ honourRequests: false, retainDays: null });
    expect(await code(me.owner.retentionPlan())).toBe('NO_RETENTION_RULE');
  });
});
