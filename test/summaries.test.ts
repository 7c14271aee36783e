// Issue 15: living summaries (seed 000, tier 2) that cannot turn an inference into an
// observation: every sentence cites the turns it rests on and is checked against them, what is
// unsupported never reaches live memory, and the rest goes live only through the owner. Real
// engines, a real HTTP fake of each provider's protocol, no mocks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLlmClient,
  SUMMARY_PROMPT_VERSION,
  type Engine,
  type SubjectHandle,
} from '../src/index.js';
import { checkSummary, type SummaryTurn } from '../src/domain/summary-check.js';
import { pileNights } from '../server/review/review-data.js';
import { pileView } from '../server/review/views/pile-view.js';
import { storeClient } from '../src/engine/test-access.js';
import { startFakeLlm, type FakeLlm, type FakeStep } from '../eval/fake-llm/fake-llm-server.js';
import { PHANTOM_TURN_SENTENCE, UNSUPPORTED_SENTENCE } from '../eval/fake-llm/scripted-summary.js';
import { engineBeside, ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { makeOwnerSigner } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

const { signer } = makeOwnerSigner(TEST_KEYS);

const PROTOCOLS = ['openai', 'anthropic'] as const;

type Day = Array<[role: 'user' | 'assistant', text: string]>;

const WEEK_ONE: Day = [
  ['user', 'I started a new job at the city library in March.'],
  ['assistant', 'Congratulations on the new job!'],
  ['user', 'My sister moved to Porto last month.'],
  ['assistant', 'That is a long way to move.'],
  ['user', 'I have been sleeping badly since the move.'],
];

const WEEK_TWO: Day = [
  ['user', 'I adopted a grey cat called Miso on Saturday.'],
  ['assistant', 'Miso is a lovely name.'],
];

let subjects = 0;

describe.each(ENGINES)('living summaries [%s]', (kind) => {
  // one store of the kind: each engine below opens it with its own model, for subjects of its own
  let base: TestEngine;
  beforeAll(async () => {
    base = await openTestEngine(kind);
  });
  afterAll(() => base.close());

  describe.each(PROTOCOLS)('over the %s protocol', (protocol) => {
    let engine: Engine;
    let fake: FakeLlm;
    const script: FakeStep[] = [];

    beforeAll(async () => {
      fake = await startFakeLlm({ protocol, apiKey: 'sk-test', script });
      engine = await engineBeside(base, {
        llm: createLlmClient({
          provider: protocol,
          baseUrl: fake.url,
          model: 'fake-1',
          apiKey: 'sk-test',
          retries: 0,
          timeoutMs: 5000,
        }),
      });
    });
    afterAll(async () => {
      await engine.close();
      await fake.close();
    });

    async function subject(): Promise<SubjectHandle> {
      const id = `sum${++subjects}`;
      await engine.subjects.create(id);
      const me = engine.subject(id);
      await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
      await me.slots.declare({ name: 'life_lately', rule: 'summary' });
      return me;
    }

    async function day(me: SubjectHandle, turns: Day): Promise<string> {
      const s = await me.sessions.create();
      for (const [role, content] of turns) {
        await me.turns.add({
          sessionId: s.id,
          role,
          content,
          ...(role === 'assistant' ? { receipt: { noTools: true } } : {}),
        });
      }
      return s.id;
    }

    it('one unsupported sentence never reaches live memory; the rest does after approval, rendered below the saw facts', async () => {
      const me = await subject();
      const sessionId = await day(me, WEEK_ONE);
      // a saw fact, live, recorded before the summary
      const saw = await me.gate.propose({
        sessionId,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            text: 'The user works at the city library.',
            origin: 'saw',
            evidence: { turn: 1, quote: 'a new job at the city library' },
          },
        ],
      });
      await me.owner.decide({ proposalId: saw.proposed[0]!.id, decision: 'approve', signer });
      const turnsBefore = (await me.history.turns(sessionId)).length;

      const r = await me.summaries.summarize({ aspect: 'life_lately', sessionId });
      const verdicts = Object.fromEntries(r.sentences.map((s) => [s.text, s.verdict]));
      expect(verdicts[UNSUPPORTED_SENTENCE]).toBe('unattested');
      expect(verdicts[PHANTOM_TURN_SENTENCE]).toBe('turn_not_found');
      const supported = r.sentences.filter((s) => s.verdict === 'supported');
      expect(supported.length).toBeGreaterThanOrEqual(1);
      expect(r.text).toBe(supported.map((s) => s.text).join(' '));
      expect(r.text).not.toContain('much better');
      expect(r.text).not.toContain('trip');
      expect(r).toMatchObject({
        aspect: 'life_lately',
        sessionId,
        previousId: null,
        factStatus: 'proposed',
        promptVersion: SUMMARY_PROMPT_VERSION,
        provider: protocol,
        changes: { kept: 0, added: supported.length, leftOut: 0 },
      });
      expect(r.usage.inputTokens).toBeGreaterThan(0);

      // in the pile, not live, until the owner decides
      expect((await me.facts.live()).map((f) => f.slot)).toEqual(['what_i_know_about_user']);
      const pending = await me.facts.get(r.factId!);
      expect(pending).toMatchObject({ origin: 'summarized', status: 'proposed', attested: true });
      expect(pending.proposedBy).toBe('summary');
      expect(pending.evidence.citations!.map((c) => c.seq)).toEqual(
        supported.flatMap((s) => s.citations.map((c) => c.seq)),
      );

      await me.owner.decide({ proposalId: r.factId!, decision: 'approve', signer });
      const live = await me.facts.live();
      expect(live.map((f) => f.origin).sort()).toEqual(['saw', 'summarized']);
      expect(live.find((f) => f.origin === 'summarized')!.text).toBe(r.text);
      expect(live.map((f) => f.text).join(' ')).not.toContain('much better');

      const text = (await me.arrival.assemble({ surface: 'chat', sessionId })).text;
      const lines = text.split('\n');
      const sawAt = lines.findIndex((l) => l.startsWith('(saw, '));
      const seqs = supported.flatMap((s) => s.citations.map((c) => `#${c.seq}`)).join(' ');
      const summaryAt = lines.findIndex((l) =>
        new RegExp(`^\\(summarized, \\d+ \\w+ \\d{4}, from ${seqs}\\) life_lately: `).test(l),
      );
      expect(sawAt).toBeGreaterThanOrEqual(0);
      expect(summaryAt).toBeGreaterThan(sawAt);
      expect(text).not.toContain('much better');
      expect(text).not.toContain(PHANTOM_TURN_SENTENCE);

      // the model's call is a utility generation: counted, never a turn
      expect((await me.history.turns(sessionId)).length).toBe(turnsBefore);
      const usage = (await me.history.usage(sessionId)).find((u) => u.kind === 'summary');
      expect(usage).toMatchObject({ requests: 1, inputTokens: r.usage.inputTokens });
    });

    it('a rolling aspect folds forward: a kept sentence keeps its turns, the new version supersedes the old when approved', async () => {
      const me = await subject();
      const first = await day(me, WEEK_ONE);
      script.push({
        answer: {
          sentences: [
            { text: 'The user started a new job at the city library in March.', turns: [1] },
          ],
        },
      });
      const v1 = await me.summaries.summarize({ aspect: 'life_lately', sessionId: first });
      expect(v1.sentences.map((s) => s.verdict)).toEqual(['supported']);
      await me.owner.decide({ proposalId: v1.factId!, decision: 'approve', signer });

      const second = await day(me, WEEK_TWO);
      script.push({
        answer: {
          sentences: [
            { text: 'The user started a new job at the city library in March.', turns: [] },
            { text: 'The user adopted a grey cat called Miso.', turns: [1] },
            { text: 'The user is much happier now.', turns: [] },
          ],
        },
      });
      // the newest session by default
      const v2 = await me.summaries.summarize({ aspect: 'life_lately' });
      expect(v2.sessionId).toBe(second);
      expect(v2.previousId).toBe(v1.id);
      expect(v2.sentences.map((s) => s.verdict)).toEqual(['kept', 'supported', 'no_citation']);
      expect(v2.sentences[0]!.citations).toEqual(v1.sentences[0]!.citations);
      expect(v2.changes).toEqual({ kept: 1, added: 1, leftOut: 0 });
      // the prompt showed the previous version
      const prompt = JSON.stringify(fake.requests.at(-1)!.body);
      expect(prompt).toContain('previous_summary');
      expect(prompt).toContain('city library in March.');

      await me.owner.decide({ proposalId: v2.factId!, decision: 'approve', signer });
      const live = (await me.facts.live()).filter((f) => f.slot === 'life_lately');
      expect(live.map((f) => f.id)).toEqual([v2.factId]);
      expect((await me.facts.get(v1.factId!)).status).toBe('superseded');
      const line = (await me.arrival.assemble({ surface: 'chat', sessionId: second })).text
        .split('\n')
        .find((l) => l.startsWith('(summarized'));
      expect(line).toMatch(/^\(summarized, [^)]*from #1 of \d+ \w+ \d{4}, #1 of \d+ \w+ \d{4}\)/);
      expect(line).not.toContain('happier');

      // a third version that drops the job says so
      script.push({
        answer: { sentences: [{ text: 'The user adopted a grey cat called Miso.', turns: [1] }] },
      });
      const v3 = await me.summaries.summarize({ aspect: 'life_lately', sessionId: second });
      expect(v3.previousId).toBe(v2.id);
      expect(v3.changes).toEqual({ kept: 1, added: 0, leftOut: 1 });
      const listed = await me.summaries.list({ aspect: 'life_lately' });
      expect(listed.map((s) => s.id)).toEqual([v3.id, v2.id, v1.id]);
      expect(listed[1]).toMatchObject({ factStatus: 'active', text: v2.text });
      expect(await me.summaries.list({ aspect: 'presence' })).toEqual([]);
    });

    it('every way a sentence can fail is left out with its verdict', async () => {
      const me = await subject();
      const sessionId = await day(me, WEEK_ONE);
      script.push({
        answer: {
          sentences: [
            { text: 'The user said congratulations on the new job.', turns: [2] },
            { text: 'The user started a new job at the city library.', turns: [1, 3] },
            { text: 'The user has a sister.', turns: [] },
            { text: 'The user moved\u202e to Porto.', turns: [3] },
            { text: '   ', turns: [1] },
            { text: 'The user started a new job.', turns: ['1'] },
            'not an object',
            { text: 'The user started a new job at the city library in March.', turns: [1] },
            { text: 'the user started a new job at the city library in march.', turns: [1] },
            { text: 'The user did not start a new job at the city library in March.', turns: [1] },
          ],
        },
      });
      const r = await me.summaries.summarize({ aspect: 'life_lately', sessionId });
      expect(r.sentences.map((s) => s.verdict)).toEqual([
        'not_user_turn',
        'idle_citation',
        'no_citation',
        'hidden_characters',
        'invalid',
        'invalid',
        'invalid',
        'supported',
        'invalid',
        'unattested',
      ]);
      expect(r.text).toBe('The user started a new job at the city library in March.');
      expect(r.sentences.every((s) => s.reason.length > 0)).toBe(true);
    });

    it('a summary with no supported sentence stores no fact, and is still a recorded outcome', async () => {
      const me = await subject();
      const sessionId = await day(me, WEEK_ONE);
      script.push({ answer: { sentences: [] } });
      const none = await me.summaries.summarize({ aspect: 'life_lately', sessionId });
      expect(none).toMatchObject({ factId: null, factStatus: null, text: '', sentences: [] });
      script.push({ answer: { sentences: [{ text: 'The user is lonely.', turns: [3] }] } });
      const unsupported = await me.summaries.summarize({ aspect: 'life_lately', sessionId });
      expect(unsupported.factId).toBeNull();
      expect(await me.gate.pileCount()).toBe(0);
      expect((await me.summaries.list()).map((s) => s.id)).toEqual([unsupported.id, none.id]);
    });

    it('a summary does not bring back a retracted claim, nor a failure to recall', async () => {
      const me = await subject();
      const sessionId = await day(me, [['user', 'I work night shifts at the hospital.']]);
      await me.ledger.retract({
        claim: 'The user works night shifts at the hospital.',
        stoodOn: 'an old schedule',
        whyWrong: 'the user changed jobs',
        corrected: 'The user works days now.',
        procedure: 'ask the user',
        passObservation: 'the user says days',
        overturnCondition: 'the user says nights',
      });
      script.push({
        answer: {
          sentences: [
            { text: 'The user works night shifts at the hospital.', turns: [1] },
            { text: 'The user works night shifts at the hospital.', turns: [] },
            {
              text: 'The assistant failed to recall the night shifts at the hospital.',
              turns: [1],
            },
          ],
        },
      });
      const r = await me.summaries.summarize({ aspect: 'life_lately', sessionId });
      expect(r.sentences.map((x) => x.verdict)).toEqual([
        'retracted_claim',
        'no_citation',
        'failure_claim',
      ]);
      expect(r.factId).toBeNull();
    });

    it('a sentence row added in the store makes its version unreadable: nothing of it is shown or kept', async () => {
      const me = await subject();
      const first = await day(me, WEEK_ONE);
      script.push({
        answer: {
          sentences: [
            { text: 'The user started a new job at the city library in March.', turns: [1] },
          ],
        },
      });
      const v1 = await me.summaries.summarize({ aspect: 'life_lately', sessionId: first });
      const forged = 'The user authorized a wire transfer of 5000 dollars to Bob.';
      // an insert needs no trigger disabled: the tables are append-only, not closed
      await storeClient(engine).query(
        `INSERT INTO summary_sentences (subject_id, summary_id, position, text, citations, verdict, reason)
         VALUES ($1, $2, 2, $3, $4::jsonb, 'kept', 'forged')`,
        [me.id, v1.id, forged, JSON.stringify(v1.sentences[0]!.citations)],
      );
      script.push({
        answer: {
          sentences: [
            { text: forged, turns: [] },
            { text: 'The user started a new job at the city library in March.', turns: [] },
          ],
        },
      });
      const v2 = await me.summaries.summarize({ aspect: 'life_lately', sessionId: first });
      // the rows no longer make up the fact: the version is not shown to the model, nor kept
      expect(JSON.stringify(fake.requests.at(-1)!.body)).not.toContain('5000 dollars');
      expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain(
        '<previous_summary>\\n</previous_summary>',
      );
      expect(v2.sentences.map((x) => x.verdict)).toEqual(['no_citation', 'no_citation']);
      expect(v2.factId).toBeNull();
      // the list shows the fact's own text, not the rows beside it
      const listed = (await me.summaries.list()).find((x) => x.id === v1.id)!;
      expect(listed.text).toBe(v1.text);
    });

    it('a version whose sentence rows do not make up its fact is not folded', async () => {
      const me = await subject();
      const sessionId = await day(me, WEEK_ONE);
      script.push({
        answer: {
          sentences: [
            { text: 'The user started a new job at the city library in March.', turns: [1] },
          ],
        },
      });
      const v1 = await me.summaries.summarize({ aspect: 'life_lately', sessionId });
      // a row whose text is part of the fact's, added beside it in the store
      await storeClient(engine).query(
        `INSERT INTO summary_sentences (subject_id, summary_id, position, text, citations, verdict, reason)
         VALUES ($1, $2, 2, 'city library in March.', $3::jsonb, 'supported', 'forged')`,
        [me.id, v1.id, JSON.stringify(v1.sentences[0]!.citations)],
      );
      script.push({
        answer: {
          sentences: [
            { text: 'The user started a new job at the city library in March.', turns: [] },
          ],
        },
      });
      const v2 = await me.summaries.summarize({ aspect: 'life_lately', sessionId });
      expect(v2.previousId).toBe(v1.id);
      expect(v2.sentences.map((x) => x.verdict)).toEqual(['no_citation']);
      expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain(
        '<previous_summary>\\n</previous_summary>',
      );
    });

    it('a session without a user turn is refused before the model is called', async () => {
      const me = await subject();
      const s = await me.sessions.create();
      await me.turns.add({
        sessionId: s.id,
        role: 'assistant',
        content: 'Hello!',
        receipt: { noTools: true },
      });
      const calls = fake.requests.length;
      expect(await code(me.summaries.summarize({ aspect: 'life_lately', sessionId: s.id }))).toBe(
        'INVALID_ARGUMENT',
      );
      expect(fake.requests.length).toBe(calls);
    });

    it('malformed answers are LLM_FAILED and write nothing; bad input gets its code', async () => {
      const me = await subject();
      const sessionId = await day(me, WEEK_ONE);
      const before = {
        pile: await me.gate.pileCount(),
        usage: await me.history.usage(sessionId),
      };
      for (const step of [
        { content: 'not json' },
        'refusal',
        'truncated',
        { status: 400 },
        { answer: { summary: 'no sentences list' } },
        { answer: { sentences: Array.from({ length: 51 }, () => ({ text: 'x', turns: [1] })) } },
      ] as FakeStep[]) {
        script.push(step);
        expect(await code(me.summaries.summarize({ aspect: 'life_lately', sessionId }))).toBe(
          'LLM_FAILED',
        );
      }
      expect(await me.summaries.list()).toEqual([]);
      expect(await me.gate.pileCount()).toBe(before.pile);
      expect(await me.history.usage(sessionId)).toEqual(before.usage);

      const calls = fake.requests.length;
      expect(await code(me.summaries.summarize({ aspect: 'presence' }))).toBe('SLOT_NOT_FOUND');
      expect(await code(me.summaries.summarize({ aspect: 'stances' }))).toBe('SLOT_NOT_FOUND');
      expect(await code(me.summaries.summarize({ aspect: 7 as unknown as string }))).toBe(
        'INVALID_ARGUMENT',
      );
      expect(await code(me.summaries.summarize({ aspect: 'life_lately', sessionId: 'nope' }))).toBe(
        'SESSION_NOT_FOUND',
      );
      expect(fake.requests.length).toBe(calls);
    });
  });

  // the store's own engine, opened with no model
  describe('without a model, and at the gate', () => {
    it('LLM_NOT_CONFIGURED without a model; an aspect takes no proposals, and a reflection is not offered it', async () => {
      const me = base.engine.subject((await base.engine.subjects.create('nollm')).id);
      await me.slots.declare({ name: 'life_lately', rule: 'summary' });
      const s = await me.sessions.create();
      await me.turns.add({ sessionId: s.id, role: 'user', content: 'I moved to Porto.' });
      expect(await code(me.summaries.summarize({ aspect: 'life_lately' }))).toBe(
        'LLM_NOT_CONFIGURED',
      );
      const r = await me.gate.propose({
        sessionId: s.id,
        proposals: [
          {
            slot: 'life_lately',
            text: 'The user moved to Porto.',
            origin: 'summarized',
            evidence: { turn: 1, quote: 'I moved to Porto' },
          },
        ],
      });
      expect(r.dropped.map((d) => d.code)).toEqual(['SLOT_NOT_OFFERED']);
      expect(r.dropped[0]!.reason).toContain('summary aspect');
    });

    it('declares aspects with a scope; a scope is refused on other rules and changing it under summaries is SLOT_IN_USE', async () => {
      const me = base.engine.subject((await base.engine.subjects.create('scopes')).id);
      expect(
        await me.slots.declare({ name: 'presence', rule: 'summary', scope: 'session' }),
      ).toMatchObject({
        rule: 'summary',
        scope: 'session',
      });
      expect(await me.slots.declare({ name: 'life_lately', rule: 'summary' })).toMatchObject({
        scope: 'rolling',
      });
      expect(await code(me.slots.declare({ name: 'x', rule: 'user_fact', scope: 'rolling' }))).toBe(
        'INVALID_ARGUMENT',
      );
      expect(
        await code(
          me.slots.declare({ name: 'y', rule: 'summary', scope: 'weekly' as unknown as 'rolling' }),
        ),
      ).toBe('INVALID_ARGUMENT');
      const names = (await me.slots.list()).map((s) => s.name);
      expect(names).not.toContain('x');
      expect(names).not.toContain('y');
      // re-declared without a scope, an aspect keeps the one it has
      expect(await me.slots.declare({ name: 'presence', rule: 'summary' })).toMatchObject({
        scope: 'session',
      });
    });
  });

  describe('a summary is signed with its citations', () => {
    let engine: Engine;
    let fake: FakeLlm;
    beforeAll(async () => {
      fake = await startFakeLlm({ protocol: 'openai' });
      engine = await engineBeside(base, {
        llm: createLlmClient({ provider: 'openai', baseUrl: fake.url, model: 'fake-1' }),
      });
    });
    afterAll(async () => {
      await engine.close();
      await fake.close();
    });

    it('the review card shows the owner every turn a summary cites', async () => {
      const me = engine.subject((await engine.subjects.create('card')).id);
      await me.slots.declare({ name: 'life_lately', rule: 'summary' });
      const s = await me.sessions.create();
      for (const [role, content] of WEEK_ONE) {
        await me.turns.add({
          sessionId: s.id,
          role,
          content,
          ...(role === 'assistant' ? { receipt: { noTools: true } } : {}),
        });
      }
      const r = await me.summaries.summarize({ aspect: 'life_lately' });
      const cited = (await me.facts.get(r.factId!)).evidence.citations!;
      expect(cited.length).toBeGreaterThan(0);
      const pile = await pileNights(me, 1, 10, 'UTC');
      const card = pileView(pile.nights, 'csrf', 'UTC').toString();
      expect(card).toContain(`summarizes ${cited.length} user turn`);
      for (const c of cited) {
        const said = WEEK_ONE[c.seq - 1]![1];
        expect(card).toContain(`#${c.seq} user:`);
        expect(card).toContain(said.slice(0, 20));
      }
      // the assistant's turns are not offered as evidence
      expect(card).not.toContain('Congratulations on the new job');
    });

    it('a citation changed in the store is refused by the guard, and with the guard off the summary is withheld', async () => {
      const me = engine.subject((await engine.subjects.create('signed')).id);
      await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
      await me.slots.declare({ name: 'presence', rule: 'summary', scope: 'session' });
      const s = await me.sessions.create();
      for (const [role, content] of WEEK_ONE) {
        await me.turns.add({
          sessionId: s.id,
          role,
          content,
          ...(role === 'assistant' ? { receipt: { noTools: true } } : {}),
        });
      }
      const r = await me.summaries.summarize({ aspect: 'presence', sessionId: s.id });
      await me.owner.decide({ proposalId: r.factId!, decision: 'approve', signer });
      expect((await me.facts.live()).map((f) => f.id)).toEqual([r.factId]);
      expect((await me.facts.get(r.factId!)).key).toBe(`session:${s.id}`);

      const db = storeClient(engine);
      const moved = JSON.stringify([
        { turn: 'x', session: s.id, seq: 99, at: '2026-01-01T00:00:00.000Z' },
      ]);
      await expect(
        db.query(
          `UPDATE facts SET evidence_citations = $3::jsonb WHERE subject_id = $1 AND id = $2`,
          [me.id, r.factId, moved],
        ),
      ).rejects.toThrow(/immutable/);
      await db.transaction(async (tx) => {
        await tx.exec('SET LOCAL session_replication_role = replica');
        await tx.query(
          `UPDATE facts SET evidence_citations = $3::jsonb WHERE subject_id = $1 AND id = $2`,
          [me.id, r.factId, moved],
        );
      });
      expect(await me.facts.live()).toEqual([]);
      const integrity = await me.facts.integrity();
      expect(integrity.ok).toBe(false);
      expect(integrity.withheld.map((w) => w.factId)).toEqual([r.factId]);
      expect((await me.arrival.assemble({ surface: 'chat', sessionId: s.id })).text).not.toContain(
        '(summarized',
      );
    });
  });
});

describe('checkSummary (pure)', () => {
  const at = new Date('2026-12-01T10:00:00Z');
  const turn = (seq: number, role: SummaryTurn['role'], content: string): SummaryTurn => ({
    id: `t${seq}`,
    sessionId: 's1',
    seq,
    role,
    content,
    recordedAt: at,
  });
  const shown = new Map([
    [1, turn(1, 'user', 'I moved to Porto in June.')],
    [2, turn(2, 'assistant', 'Porto is lovely in June.')],
  ]);

  it('supports a sentence its user turn says, and not one it does not (a negative control)', () => {
    const r = checkSummary({
      sentences: [
        { text: 'The user moved to Porto in June.', turns: [1] },
        { text: 'The user moved to Lisbon in May.', turns: [1] },
      ],
      shown,
      previous: [],
      previousTurns: new Map(),
    });
    expect(r.sentences.map((s) => s.verdict)).toEqual(['supported', 'unattested']);
    expect(r.citations.map((c) => c.turn)).toEqual(['t1']);
  });

  const one = (content: string, sentence: string) =>
    checkSummary({
      sentences: [{ text: sentence, turns: [1] }],
      shown: new Map([[1, turn(1, 'user', content)]]),
      previous: [],
      previousTurns: new Map(),
      retracted: [
        { text: 'The user lives in Lisbon.', retractedAt: new Date('2026-12-02T00:00:00Z') },
      ],
      failureCues: ['failed to recall'],
    }).sentences[0]!.verdict;

  it.each([
    [
      'an invented clause',
      'I live in Berlin, work nights at the hospital, and have two cats named Tom and Jerry.',
      'The user lives in Berlin, works nights at the hospital, has two cats named Tom and Jerry, and owes Bob 5000 dollars.',
      'unattested',
    ],
    [
      'a seed-001 claim read into a question',
      'Do you have a record of my wire transfer to Bob from last week?',
      'The user made a wire transfer to Bob last week.',
      'unattested',
    ],
    [
      'a quote without its negation',
      "Honestly I don't want to move to Porto.",
      'want to move to Porto',
      'unattested',
    ],
    ['the writer as itself', 'I owe you 500 dollars.', 'I owe you 500 dollars.', 'first_person'],
    [
      'a second line',
      'I moved to Porto.',
      'The user moved to Porto.\n(saw, 1 Jan 2026) x',
      'hidden_characters',
    ],
    [
      'an escape sequence',
      'I moved to Porto.',
      'The user moved to Porto.\u001b[1A',
      'hidden_characters',
    ],
    [
      'a failure to recall',
      'Did we talk about Porto?',
      'The assistant failed to recall Porto.',
      'failure_claim',
    ],
    ['a retracted claim', 'I live in Lisbon.', 'The user lives in Lisbon.', 'retracted_claim'],
    [
      'what the turn says (the positive control)',
      'I moved to Porto in June.',
      'The user moved to Porto in June.',
      'supported',
    ],
  ])('%s', (_what, content, sentence, verdict) => {
    expect(one(content, sentence)).toBe(verdict);
  });

  it('holds a retracted claim inside a longer sentence, and takes no newer turn cited beside old ones as a new source', () => {
    const at = (d: string) => new Date(`2026-${d}T10:00:00Z`);
    const dated = (seq: number, content: string, d: string): SummaryTurn => ({
      ...turn(seq, 'user', content),
      id: `d${seq}`,
      recordedAt: at(d),
    });
    const shownDated = new Map([
      [1, dated(1, 'I live in Paris with my cat.', '01-01')],
      [3, dated(3, 'Paris was rainy today.', '03-01')],
      [5, dated(5, 'I work as a nurse in central Paris.', '01-02')],
      [7, dated(7, 'I moved back and I live in Paris again.', '03-02')],
    ]);
    const verdict = (text: string, turns: number[]) =>
      checkSummary({
        sentences: [{ text, turns }],
        shown: shownDated,
        previous: [],
        previousTurns: new Map(),
        retracted: [{ text: 'The user lives in Paris.', retractedAt: at('02-01') }],
      }).sentences[0]!.verdict;
    expect(verdict('The user lives in Paris.', [1])).toBe('retracted_claim');
    expect(verdict('The user lives in Paris.', [1, 3])).toBe('retracted_claim');
    expect(verdict('The user lives in central Paris and works as a nurse.', [1, 5])).toBe(
      'retracted_claim',
    );
    // the negative controls: a newer turn that says it on its own, and a sentence that does not say it
    expect(verdict('The user lives in Paris.', [7])).toBe('supported');
    expect(verdict('The user works as a nurse in central Paris.', [5])).toBe('supported');
  });

  it('takes no negation from another cited turn', () => {
    const r = checkSummary({
      sentences: [{ text: 'The user does not live in Berlin and drinks coffee.', turns: [1, 3] }],
      shown: new Map([
        [1, turn(1, 'user', 'I live in Berlin now.')],
        [3, turn(3, 'user', "I don't drink coffee.")],
      ]),
      previous: [],
      previousTurns: new Map(),
    });
    expect(r.sentences[0]!.verdict).toBe('unattested');
  });

  it('keeps a previous sentence only while its turns still say it', () => {
    const previous = [
      {
        text: 'The user moved to Porto in June.',
        citations: [{ turn: 't9', session: 's0', seq: 4, at: at.toISOString() }],
      },
    ];
    const kept = checkSummary({
      sentences: [{ text: 'The user moved to Porto in June.', turns: [] }],
      shown,
      previous,
      previousTurns: new Map([
        ['t9', { ...turn(4, 'user', 'I moved to Porto in June.'), id: 't9' }],
      ]),
    });
    expect(kept.sentences[0]!.verdict).toBe('kept');
    const gone = checkSummary({
      sentences: [{ text: 'The user moved to Porto in June.', turns: [] }],
      shown,
      previous,
      previousTurns: new Map(),
    });
    expect(gone.sentences[0]!.verdict).toBe('turn_not_found');
    expect(gone.text).toBe('');
    expect(gone.leftOut).toBe(1);
  });
});
