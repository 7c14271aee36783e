// Issue 12, problem 9: statuses the schema promises but nothing set. `expired` was never set (a
// fact whose valid_to had passed stayed live), and approving an older pending value after a
// newer one went live made the older one live.
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.js';
import { code } from '../support/errors.js';
import { shown, trustStoreFor, type TrustFixture } from '../support/trust-fixture.js';
import type { FactId } from '../../src/index.js';

describe.each(ENGINES)('expiry and the order of supersession [%s]', (kind) => {
  // each test's fixture is a fresh subject of one store
  const store = trustStoreFor(kind);
  let f: TrustFixture | null = null;

  it('a fact whose world time ended is expired, not live', async () => {
    f = await store.fixture();
    const r = await f.me.gate.propose({
      sessionId: f.sessionId,
      proposals: [
        {
          slot: 'stances',
          text: 'The user works night shifts this month.',
          origin: 'saw',
          validTo: new Date(Date.now() + 60_000).toISOString(),
          evidence: { turn: 1, quote: 'I work night shifts' },
        },
      ],
    });
    const id = r.proposed[0]?.id ?? '';
    await f.me.owner.decide({ proposalId: id as FactId, decision: 'approve', signer: f.signer });
    expect((await f.me.facts.live()).map((x) => x.id)).toContain(id);
    // an hour later (a new process with a later clock)
    await f.engine.close();
    const later = await f.openAnother({ clock: () => new Date(Date.now() + 3_600_000) });
    try {
      const me = later.subject(f.subject);
      expect((await me.facts.live()).map((x) => x.id)).not.toContain(id);
      expect((await me.facts.get(id as FactId)).status).toBe('expired');
      const s = await shown(me, 'night shifts this month');
      expect(s.arrival).not.toContain('this month');
      expect(s.history.find((i) => i.id === id)?.passport.status).toBe('expired');
      // expiry explains why it left live memory: the chain verifies, nothing is withheld
      expect(s.arrival).not.toContain('Integrity warning');
      expect((await me.owner.verifyChain()).ok).toBe(true);
    } finally {
      await later.close();
      await f.reopen();
    }
  });

  it('approving an older value over a newer live one needs an explicit supersede', async () => {
    f = await store.fixture();
    const { me, signer, sessionId } = f;
    await me.turns.add({
      sessionId,
      role: 'user',
      content: 'Actually I moved to Porto last week.',
    });
    const older = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'stances',
          key: 'home',
          text: 'The home of the user is Lisbon.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I live in Lisbon' },
        },
      ],
    });
    const newer = await me.gate.propose({
      sessionId,
      proposals: [
        {
          slot: 'stances',
          key: 'home',
          text: 'The user moved to Porto.',
          origin: 'saw',
          evidence: { turn: 3, quote: 'I moved to Porto' },
        },
      ],
    });
    const olderId = older.proposed[0]?.id ?? '';
    const newerId = newer.proposed[0]?.id ?? '';
    await me.owner.decide({ proposalId: newerId as FactId, decision: 'approve', signer });
    expect(
      await code(me.owner.decide({ proposalId: olderId as FactId, decision: 'approve', signer })),
    ).toBe('NEWER_VALUE_LIVE');
    let live = (await me.facts.live()).map((x) => x.text);
    expect(live).toContain('The user moved to Porto.');
    expect(live).not.toContain('The home of the user is Lisbon.');
    expect((await me.facts.get(olderId as FactId)).status).toBe('proposed');
    // said explicitly, the older value replaces the newer one, and the chain says so
    await me.owner.decide({
      proposalId: olderId as FactId,
      decision: 'approve',
      signer,
      supersede: true,
    });
    live = (await me.facts.live()).filter((x) => x.slot === 'stances').map((x) => x.text);
    expect(live).toEqual(['The home of the user is Lisbon.']);
    expect((await me.facts.get(newerId as FactId)).status).toBe('superseded');
    expect((await me.owner.verifyChain()).ok).toBe(true);
  });
});
