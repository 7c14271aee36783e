// Issue 12, problem 3: approvals could be undone unseen. `UPDATE facts SET status='retracted'` on
// an approved fact, with no ledger row, passed `chain verify` and quietly took the fact out of
// live memory; deleting the head decision and setting its fact back to `proposed` verified too.
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../support/engines.js';
import {
  anchorOf,
  shown,
  TEXTS,
  trustStoreFor,
  type TrustFixture,
} from '../support/trust-fixture.js';

describe.each(ENGINES)('every status change is explained [%s]', (kind) => {
  // each test's fixture is a fresh subject of one store
  const store = trustStoreFor(kind);
  let f: TrustFixture | null = null;

  it('a retraction with no ledger row is a tamper, named in verify and the arrival', async () => {
    f = await store.fixture();
    await f.tamper([`UPDATE facts SET status = 'retracted' WHERE id = $1`], [f.ids.job]);
    expect(await f.me.owner.verifyChain()).toMatchObject({
      ok: false,
      code: 'UNEXPLAINED_STATUS',
      brokenAt: 3,
    });
    const s = await shown(f.me, 'nurse');
    expect(s.arrival).toContain('UNEXPLAINED_STATUS');
    expect(s.arrival).toContain(f.ids.job);
  });

  it('a retraction through the ledger is explained (negative control)', async () => {
    f = await store.fixture();
    await f.me.ledger.retract({
      claim: TEXTS.job,
      stoodOn: 'what the user said in session one',
      whyWrong: 'the user changed jobs',
      corrected: 'The user now works days.',
      procedure: 'ask the user which shifts they work',
      passObservation: 'the user says nights',
      overturnCondition: 'the user says nights again',
      caughtBy: 'owner',
      factId: f.ids.job,
    });
    expect((await f.me.owner.verifyChain()).ok).toBe(true);
    const s = await shown(f.me, 'nurse');
    expect(s.live).not.toContain(TEXTS.job);
    expect(s.arrival).not.toContain('Integrity warning');
  });

  it('a cut head is found by the head file, by this process, and by an arrival that saw it', async () => {
    f = await store.fixture();
    const head = await f.head();
    await f.tamper(
      [
        `DELETE FROM decisions WHERE subject_id = '${f.subject}' AND seq = 3`,
        `UPDATE facts SET status = 'proposed', promoted_by = NULL WHERE id = $1`,
      ],
      [f.ids.job],
    );
    // the owner's head file (kept beside the key file by the CLI) names link 3
    expect(await f.me.owner.verifyChain({ ownerKey: anchorOf(f), signedHead: head })).toMatchObject(
      { ok: false, code: 'HEAD_CUT' },
    );
    // this process verified link 3 before
    expect(await f.me.owner.verifyChain()).toMatchObject({ ok: false, code: 'HEAD_CUT' });
    expect((await shown(f.me, 'nurse')).arrival).toContain('HEAD_CUT');
    // that arrival recorded the head it saw (the cut one); a new process holding the owner's
    // anchor finds the cut by the head file; one without it, and without an arrival that saw
    // link 3, cannot know (docs/TRUST.md), and says it is not anchored
    await f.reopen();
    expect(await f.me.owner.verifyChain()).toMatchObject({ ok: false, code: 'HEAD_CUT' });
    await f.reopen({ anchored: false });
    expect((await f.me.owner.verifyChain()).ok).toBe(true);
    expect((await f.me.facts.integrity()).chain.unanchored).toBe(true);
  });
});
