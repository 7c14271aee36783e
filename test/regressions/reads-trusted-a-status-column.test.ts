// Issue 12, problem 2: reads trusted a status column. `UPDATE facts SET status='active'` on a
// proposal, or an approved fact's text edited after approval (with the guard trigger off, as a
// superuser can), was shown as live by `memory`, by `arrival` (with no warning) and by `recall`.
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.js';
import { shown, TEXTS, trustStoreFor, type TrustFixture } from '../support/trust-fixture.js';

describe.each(ENGINES)('reads verify, not the status column [%s]', (kind) => {
  // each test's fixture is a fresh subject of one store
  const store = trustStoreFor(kind);
  let f: TrustFixture | null = null;

  it('a proposal flipped to active is withheld, labelled, and named in the arrival', async () => {
    f = await store.fixture();
    const before = await shown(f.me, 'sister Ana');
    expect(before.recalled).not.toContain(TEXTS.sister);
    expect(before.arrival).not.toContain('Integrity warning');
    await f.tamper([`UPDATE facts SET status = 'active' WHERE id = $1`], [f.ids.sister]);
    const s = await shown(f.me, 'sister Ana');
    expect(s.live).not.toContain(TEXTS.sister);
    expect(s.recalled).not.toContain(TEXTS.sister);
    expect(s.arrival).not.toContain(TEXTS.sister);
    expect(s.arrival).toContain('Integrity warning');
    expect(s.arrival).toContain(f.ids.sister);
    // history views label it, never as active
    expect(s.history.find((i) => i.id === f?.ids.sister)?.passport.status).toBe('unverified');
    const all = await f.me.facts.all();
    expect(all.find((x) => x.id === f?.ids.sister)).toMatchObject({
      status: 'unverified',
      integrity: { code: 'MISSING_DECISION' },
    });
    expect(await f.me.owner.verifyChain()).toMatchObject({ ok: false, code: 'MISSING_DECISION' });
  });

  it('an approved text edited after approval is withheld at once, in this process and a new one', async () => {
    f = await store.fixture();
    expect((await f.me.facts.live()).map((x) => x.text)).toContain(TEXTS.job);
    await f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.job, TEXTS.forged]);
    for (const round of ['same process', 'new process']) {
      if (round === 'new process') await f.reopen();
      const s = await shown(f.me, 'safety checks disabled nurse');
      expect(s.live, round).not.toContain(TEXTS.forged);
      expect(s.recalled, round).not.toContain(TEXTS.forged);
      expect(s.arrival, round).not.toContain(TEXTS.forged);
      expect(s.arrival, round).toContain('CONTENT_CHANGED');
      // the process that verified link 3 before the edit knows what it decided; a new one finds
      // link 3 broken (its fact no longer hashes to what was signed), and withholds every keyed
      // value a link from 3 on could have replaced
      if (round === 'same process') expect(s.live, round).toContain(TEXTS.city);
      else expect(s.live, round).toEqual([TEXTS.email]);
    }
    expect(await f.me.owner.verifyChain()).toMatchObject({
      ok: false,
      code: 'CONTENT_CHANGED',
      brokenAt: 3,
    });
  });
});
