// A session id was unique across the store: a subject creating a session with an id another subject already had got SESSION_EXISTS, which told an agent token whether another subject has that session (the servers and Claude Code hooks take session ids from the caller).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type OwnerSigner,
  type SubjectHandle,
  type FactId,
} from '../../src/index.js';
import { code } from '../support/errors.js';
import { ENGINES, openTestEngine, type TestEngine } from '../support/engines.js';
import { TEST_KEYS } from '../support/test-keys.js';

/** The id both subjects choose, as a host would (Claude Code's session id). */
const SHARED = '3f2a9c1e-claude-session';

/** What each subject says in its session of that id: different turn counts and words. */
const SAYS = {
  alice: {
    turns: ['I play the cello in a small orchestra.', 'Rehearsals are on Tuesdays.'],
    fact: 'The user plays the cello.',
    quote: 'I play the cello',
    word: 'cello',
    utility: 2,
  },
  bob: {
    turns: ['I keep bees on my roof.', 'The hives face south.', 'Honey comes in August.'],
    fact: 'The user keeps bees.',
    quote: 'I keep bees',
    word: 'bees',
    utility: 1,
  },
} as const;
type Name = keyof typeof SAYS;

const dir = mkdtempSync(join(tmpdir(), 'memledger-session-per-subject-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(ENGINES)('a session id is unique per subject, not per store [%s]', (kind) => {
  let t: TestEngine;
  let signer: OwnerSigner;
  const subjects = {} as Record<Name, SubjectHandle>;

  beforeAll(async () => {
    t = await openTestEngine(kind);
    const file = join(dir, `${kind}.key`);
    writeOwnerKeyFile(file, generateOwnerKey('pw', TEST_KEYS).keyFile);
    signer = loadOwnerKey(file, 'pw', TEST_KEYS);
    for (const name of ['alice', 'bob'] as const) {
      await t.engine.subjects.create(name);
      subjects[name] = t.engine.subject(name);
      await subjects[name].owner.setKey({ publicKeyPem: signer.publicKeyPem, keyId: signer.keyId });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('both subjects create a session of the same id, and each sees only their own', async () => {
    for (const name of ['alice', 'bob'] as const) {
      const me = subjects[name];
      const said = SAYS[name];
      const session = await me.sessions.create({ id: SHARED, title: `${name}'s session` });
      expect(session).toMatchObject({ id: SHARED, subjectId: name });
      for (const content of said.turns) {
        await me.turns.add({ sessionId: SHARED, role: 'user', content });
      }
      for (let i = 0; i < said.utility; i += 1) {
        const r = await me.turns.add({
          sessionId: SHARED,
          role: 'user',
          content: 'Write a title for this chat.',
          utility: true,
        });
        expect(r).toEqual({ recorded: false, utility: 'utility', requests: i + 1 });
      }
      const proposed = await me.gate.propose({
        sessionId: SHARED,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            text: said.fact,
            origin: 'saw',
            evidence: { turn: 1, quote: said.quote },
          },
        ],
      });
      expect(proposed.dropped).toEqual([]);
    }

    for (const name of ['alice', 'bob'] as const) {
      const me = subjects[name];
      const said = SAYS[name];
      const other = SAYS[name === 'alice' ? 'bob' : 'alice'];

      expect(await me.sessions.get(SHARED)).toMatchObject({
        subjectId: name,
        title: `${name}'s session`,
        turnCount: said.turns.length,
      });
      expect((await me.sessions.list()).map((s) => [s.id, s.subjectId])).toEqual([[SHARED, name]]);

      // history: only this subject's turns, numbered from 1
      const turns = await me.history.turns(SHARED);
      expect(turns.map((x) => [x.subjectId, x.seq, x.content])).toEqual(
        said.turns.map((content, i) => [name, i + 1, content]),
      );
      expect((await me.history.turns(SHARED, { last: 1 })).map((x) => x.content)).toEqual([
        said.turns.at(-1),
      ]);
      expect(await me.history.render(SHARED)).not.toContain(other.turns[0]);
      const usage = await me.history.usage(SHARED);
      expect(usage.map((u) => [u.kind, u.requests])).toEqual([['utility', said.utility]]);

      // the pile: the proposal cites this subject's turn 1, and the fact's evidence is that turn
      const pile = await me.gate.pile();
      expect(pile).toHaveLength(1);
      const [pending] = pile;
      expect(pending?.fact.text).toBe(said.fact);
      expect(pending?.citedTurn?.content).toBe(said.turns[0]);
      expect(pending?.citedTurn?.subjectId).toBe(name);
      expect(pending?.fact.evidence.turnId).toBe(turns[0]?.id);

      // approved, it is this subject's live memory only
      await me.owner.decide({
        proposalId: pending?.fact.id ?? ('' as FactId),
        decision: 'approve',
        signer,
      });
      expect((await me.facts.live()).map((f) => f.text)).toEqual([said.fact]);
      expect((await me.owner.verifyChain()).ok).toBe(true);
    }

    for (const name of ['alice', 'bob'] as const) {
      const me = subjects[name];
      const said = SAYS[name];
      const other = SAYS[name === 'alice' ? 'bob' : 'alice'];

      // arrival in the shared session: this subject's facts and turn count
      const arrival = await me.arrival.assemble({ surface: 'chat', sessionId: SHARED });
      expect(arrival.text).toContain(said.fact);
      expect(arrival.text).not.toContain(other.fact);
      expect(arrival.text).toContain(`[This session: ${said.turns.length} turns so far]`);
      // a second arrival diffs against this subject's manifest, not the other's
      const again = await me.arrival.assemble({ surface: 'chat', sessionId: SHARED });
      const diff = await me.arrival.diff({ manifestId: again.manifestId });
      expect(diff).toMatchObject({ from: arrival.manifestId, to: again.manifestId });

      // recall: this subject's turn and fact; nothing of the other's, in the session or not
      const ownTurns = (await me.history.turns(SHARED)).map((x) => x.id);
      const ownFacts = (await me.facts.all()).map((f) => f.id);
      const mine = await me.recall.search(said.word, { includeHistory: true });
      expect(mine.map((i) => [i.kind, i.id])).toEqual(
        expect.arrayContaining([
          ['turn', ownTurns[0]],
          ['fact', ownFacts[0]],
        ]),
      );
      for (const item of mine) {
        expect(item.kind === 'turn' ? ownTurns : ownFacts).toContain(item.id);
      }
      for (const options of [{}, { session: SHARED }]) {
        expect(await me.recall.search(other.word, { ...options, includeHistory: true })).toEqual(
          [],
        );
      }
      const inSession = await me.recall.search(said.word, { session: SHARED });
      expect(inSession.map((i) => i.passport.sessionId)).toEqual(inSession.map(() => SHARED));
      expect(inSession.length).toBeGreaterThan(0);
    }
  });

  it('one subject creating the same id twice still answers SESSION_EXISTS (negative control)', async () => {
    for (const name of ['alice', 'bob'] as const) {
      expect(await code(subjects[name].sessions.create({ id: SHARED }))).toBe('SESSION_EXISTS');
      // and nothing changed: one session, its turns intact
      expect((await subjects[name].sessions.list()).map((s) => s.id)).toEqual([SHARED]);
      expect(await subjects[name].history.turns(SHARED)).toHaveLength(SAYS[name].turns.length);
    }
  });

  it('a third subject that never made the session cannot read it', async () => {
    await t.engine.subjects.create('carol');
    const carol = t.engine.subject('carol');
    expect(await code(carol.sessions.get(SHARED))).toBe('SESSION_NOT_FOUND');
    expect(await code(carol.history.turns(SHARED))).toBe('SESSION_NOT_FOUND');
    expect(await code(carol.history.usage(SHARED))).toBe('SESSION_NOT_FOUND');
    expect(await code(carol.turns.add({ sessionId: SHARED, role: 'user', content: 'hello' }))).toBe(
      'SESSION_NOT_FOUND',
    );
    expect(await subjects.alice.history.turns(SHARED)).toHaveLength(SAYS.alice.turns.length);
  });
});
