// Issue 12's tamper matrix: each tamper a process with the store's SQL can make, on both engines,
// with the owner's key file (and head file) at hand and without it (a fresh process that knows
// only the store). For each: what live memory, the arrival, recall and `chain verify` say.
import { recordKeyFileHead, recordKeyFileRevocation } from '../src/index.js';
import { code } from './support/errors.js';
import { TAMPER_CASES, type BreakCode, type TamperCase } from './support/tamper-cases.js';
import {
  forgeAssertedVerdict,
  proposeFromQuestion,
  RECOUNTED,
  rekey,
  supersedeCity,
  unsupersede,
} from './support/tampers.js';
import { UNANCHORED_LINE } from '../src/domain/trust.js';
import { describe, expect, it } from 'vitest';
import { ENGINES, type EngineKind } from './support/engines.js';
import {
  anchorOf,
  shown,
  TEXTS,
  trustStoreFor,
  type Reach,
  type TrustFixture,
} from './support/trust-fixture.js';

// Each engine as one process opens it, and the embedded store as processes share it: through its
// host, which keeps each subject's trust view between them (a `reopen` is a new client of it).
const REACHES = [
  ...ENGINES.map((kind) => [kind, 'direct'] as const),
  ['pglite', 'host'] as const,
] satisfies ReadonlyArray<readonly [EngineKind, Reach]>;

describe.each(REACHES)('tamper matrix [%s] (%s)', (kind, reach) => {
  // each case tampers with the rows of a fresh subject of one store
  const store = trustStoreFor(kind, reach);
  let f: TrustFixture | null = null;

  it('the untampered fixture verifies and shows what was signed (negative control)', async () => {
    f = await store.fixture();
    const head = await f.head();
    expect(await f.me.owner.verifyChain({ ownerKey: anchorOf(f), signedHead: head })).toMatchObject(
      {
        ok: true,
        length: 3,
      },
    );
    const s = await shown(f.me, 'Lisbon nurse sister rota');
    expect(s.live.sort()).toEqual([TEXTS.city, TEXTS.email, TEXTS.job].sort());
    expect(s.arrival).not.toContain('Integrity warning');
    expect(s.arrival).toContain(TEXTS.city);
    expect(s.recalled).toContain(TEXTS.city);
    expect(s.recalled).not.toContain(TEXTS.sister);
    await f.reopen();
    expect((await f.me.owner.verifyChain()).ok).toBe(true);
    // a process without the owner's key file trusts the store's key, and says so, once
    await f.reopen({ anchored: false });
    const u = await shown(f.me, 'Lisbon nurse sister rota');
    expect(u.live.sort()).toEqual([TEXTS.city, TEXTS.email, TEXTS.job].sort());
    expect(u.arrival).not.toContain('Integrity warning');
    expect(u.arrival).toContain(`[Integrity note (written by memledger)] ${UNANCHORED_LINE}`);
    expect((await f.me.facts.integrity()).ok).toBe(true);
  });

  it('a cut head is found by a fresh process when an arrival saw it', async () => {
    f = await store.fixture();
    await f.me.arrival.assemble({ surface: 'chat' });
    await f.tamper(
      [
        `DELETE FROM decisions WHERE subject_id = '${f.subject}' AND seq = 3`,
        `UPDATE facts SET status = 'proposed', promoted_by = NULL WHERE id = $1`,
      ],
      [f.ids.job],
    );
    await f.reopen();
    expect(await f.me.owner.verifyChain()).toMatchObject({ ok: false, code: 'HEAD_CUT' });
    const arrival = (await f.me.arrival.assemble({ surface: 'chat' })).text;
    expect(arrival).toContain('Integrity warning');
    expect(arrival).toContain('HEAD_CUT');
  });

  for (const c of TAMPER_CASES) {
    it(`${c.name}: never shown, and chain verify names it`, async () => {
      f = await store.fixture();
      // a view kept from before the tamper must not outlive it (no arrival: it records a head)
      await f.me.facts.live();
      await c.tamper(f);

      // the process that made the chain, holding the owner's anchor (key file and head file)
      if (c.anchored !== 'KEY_MISMATCH') await expectWithheld(c, c.anchored);
      // a fresh process that holds the anchor
      await f.reopen();
      await expectWithheld(c, c.anchored);

      // a fresh process that knows only the store: no key file, no memory of the head
      await f.reopen({ anchored: false });
      const fresh = await f.me.owner.verifyChain();
      if (c.unanchored === 'ok') expect(fresh.ok).toBe(true);
      else expect(fresh).toMatchObject({ ok: false, code: c.unanchored });
      const t = await shown(f.me, `${c.hidden} ${c.kept ?? ''}`);
      if (c.unanchoredHides ?? true) {
        expect(t.live).not.toContain(c.hidden);
        expect(t.arrival).not.toContain(c.hidden);
        expect(t.recalled).not.toContain(c.hidden);
      }
      if (c.freshIntegrity) expect(t.arrival).toContain('Integrity warning');
      else expect(t.arrival).not.toContain('Integrity warning');
      // and it says it is not anchored, once
      expect(t.arrival.split(UNANCHORED_LINE.slice(0, 60)).length - 1).toBe(1);
    });
  }

  it("a pinned key id anchors as the key file does: the owner's store passes, a swapped key under the same id fails", async () => {
    f = await store.fixture();
    const pinned = { anchor: () => ({ keyId: f?.signer.keyId ?? '', source: 'a pinned key id' }) };
    const server = await f.openAnother(pinned);
    const me = server.subject(f.subject);
    const before = await shown(me, TEXTS.city);
    expect(before.live).toContain(TEXTS.city);
    expect(before.arrival).not.toContain('Integrity');
    await server.close();
    await rekey(f, { keepKeyId: true });
    const after = await f.openAnother(pinned);
    const t = await shown(after.subject(f.subject), `${TEXTS.city} ${TEXTS.sister}`);
    expect(t.live).toEqual([]);
    expect(t.arrival).toContain('KEY_MISMATCH');
    expect(t.arrival).toContain('in name only');
    expect(await after.subject(f.subject).owner.verifyChain()).toMatchObject({
      code: 'KEY_MISMATCH',
    });
    await after.close();
  });

  it('a revoked token stays revoked when its row is cleared; a grant re-signed under a swapped key is refused where the anchor is held', async () => {
    f = await store.fixture();
    const made = await f.engine.subject(f.subject).owner.createToken({
      role: 'agent',
      signer: f.signer,
    });
    const kept = await f.engine.subject(f.subject).owner.createToken({
      role: 'reader',
      signer: f.signer,
    });
    const revoked = await f.engine
      .subject(made.info.subject)
      .owner.revokeToken({ id: made.info.id, signer: f.signer });
    // recorded beside the key file, as `memledger token revoke` records it
    recordKeyFileRevocation(f.keyFile, f.engine.storeId, f.subject, made.info.id);
    if (revoked.head !== undefined) {
      recordKeyFileHead(f.keyFile, f.engine.storeId, f.subject, revoked.head);
    }
    await f.tamper([`UPDATE access_tokens SET revoked_at = NULL WHERE id = $1`], [made.info.id]);
    expect((await f.engine.subject(f.subject).owner.tokens())[0]?.revokedAt ?? null).toBeNull();
    expect(await code(f.engine.tokens.authenticate(made.token))).toBe('TOKEN_REVOKED');
    // negative control: the token never revoked still authenticates
    expect((await f.engine.tokens.authenticate(kept.token)).role).toBe('reader');
    // the revocation is a link of the chain: deleting it is a cut the anchored reads name
    await f.tamper([
      `DELETE FROM decisions WHERE subject_id = '${f.subject}' AND decision = 'revoke'`,
    ]);
    await f.reopen();
    expect(await f.me.owner.verifyChain()).toMatchObject({ ok: false, code: 'HEAD_CUT' });
    expect((await shown(f.me, TEXTS.city)).arrival).toContain('HEAD_CUT');
    // and the owner's record beside the key file still refuses the token
    expect(await code(f.engine.tokens.authenticate(made.token))).toBe('TOKEN_REVOKED');
    expect((await f.engine.tokens.authenticate(kept.token)).role).toBe('reader');

    // the owner key swapped and every grant re-signed: the store agrees with itself...
    const other = await store.fixture();
    f = other;
    const reader = await other.engine.subject(other.subject).owner.createToken({
      role: 'reader',
      signer: other.signer,
    });
    await rekey(other, { keepKeyId: true }, { grants: true });
    await other.reopen({ anchored: false });
    expect((await other.engine.tokens.authenticate(reader.token)).role).toBe('reader');
    // ...but not with the owner's key file
    await other.reopen();
    expect(await code(other.engine.tokens.authenticate(reader.token))).toBe('TOKEN_INVALID');
  });

  it("a pending proposal's verdict forged to asserted: the arrival's pile line reads it again and says so", async () => {
    f = await store.fixture();
    const line = async () =>
      ((await f?.me.arrival.assemble({ surface: 'chat' }))?.text ?? '')
        .split('\n')
        .find((l) => l.startsWith('Proposals awaiting owner review')) ?? '';
    const id = await proposeFromQuestion(f);
    // negative control: the gate's own verdicts, and nothing said to differ
    const before = await line();
    expect(before).toContain('1 presupposed, 1 paraphrase_unverified');
    expect(before).not.toContain(RECOUNTED);
    await forgeAssertedVerdict(f, id);
    for (const round of ['same process', 'new process']) {
      if (round === 'new process') await f.reopen();
      const after = await line();
      expect(after, round).toContain('1 presupposed, 1 paraphrase_unverified');
      expect(after, round).not.toContain('asserted');
      expect(after, round).toContain(RECOUNTED);
    }
    // one whose quote cannot be read again (its cited turn gone) is not counted as it claims
    await f.tamper([`UPDATE facts SET evidence_seq = 999 WHERE id = $1`], [id]);
    const unreadable = await line();
    expect(unreadable).toContain('1 paraphrase_unverified, 1 unverifiable');
    expect(unreadable).toContain(RECOUNTED);
  });

  it("a forged revoke link does not make the owner's revocation a no-op; a broken chain leaves the row revoked", async () => {
    f = await store.fixture();
    const made = await f.engine.subject(f.subject).owner.createToken({
      role: 'agent',
      signer: f.signer,
    });
    // a link that names the token but verifies under no key: the chain breaks at 4
    await f.tamper(
      [
        `INSERT INTO decisions (subject_id, seq, proposal_id, content_hash, decision, decided_at, note,
           key_id, prev_hash, hash, signature)
         SELECT subject_id, seq + 1, $1, content_hash, 'revoke', decided_at, '', key_id, hash, hash, 'x'
         FROM decisions WHERE subject_id = '${f.subject}' ORDER BY seq DESC LIMIT 1`,
      ],
      [`token:${made.info.id}`],
    );
    const revoked = await f.engine
      .subject(made.info.subject)
      .owner.revokeToken({ id: made.info.id, signer: f.signer });
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect(revoked.head).toBeUndefined();
    expect(revoked.unsigned).toMatch(/broken/i);
    recordKeyFileRevocation(f.keyFile, f.engine.storeId, f.subject, made.info.id);
    expect(await code(f.engine.tokens.authenticate(made.token))).toBe('TOKEN_REVOKED');
    // the forged link removed and the row cleared: the owner's record still refuses it
    await f.tamper([
      `DELETE FROM decisions WHERE subject_id = '${f.subject}' AND decision = 'revoke'`,
      `UPDATE access_tokens SET revoked_at = NULL WHERE id = '${made.info.id}'`,
    ]);
    await f.reopen();
    expect(await code(f.engine.tokens.authenticate(made.token))).toBe('TOKEN_REVOKED');
    // and on a whole chain the owner's revoke signs a link after all
    const again = await f.engine
      .subject(made.info.subject)
      .owner.revokeToken({ id: made.info.id, signer: f.signer });
    expect(again.head?.seq).toBe(4);
  });

  it('the pile line reads at most 32 verdicts again per arrival; the rest follow on the next ones', async () => {
    f = await store.fixture();
    for (let i = 1; i <= 40; i++) {
      const turn = await f.me.turns.add({
        sessionId: f.sessionId,
        role: 'user',
        content: `I keep ${i} beehives.`,
      });
      if (!turn.recorded) throw new Error('not recorded');
      const r = await f.me.gate.propose({
        sessionId: f.sessionId,
        proposals: [
          {
            slot: 'what_i_know_about_user',
            key: `bees${i}`,
            text: `The user keeps ${i} beehives.`,
            origin: 'saw',
            evidence: { turn: turn.turn.seq, quote: `I keep ${i} beehives` },
          },
        ],
      });
      expect(r.proposed).toHaveLength(1);
    }
    const line = async () =>
      ((await f?.me.arrival.assemble({ surface: 'chat' }))?.text ?? '')
        .split('\n')
        .find((l) => l.startsWith('Proposals awaiting owner review')) ?? '';
    const first = await line();
    expect(first).toMatch(/Proposals awaiting owner review: 41 /);
    expect(first).toContain('9 not re-checked yet');
    const second = await line();
    expect(second).not.toContain('not re-checked yet');
    // the pile unchanged: the third arrival reads nothing again, and says the same
    expect(await line()).toBe(second);
  });

  it('no decision is made on a cut chain, and the head file keeps the head it recorded', async () => {
    f = await store.fixture();
    await supersedeCity(f);
    await unsupersede(f);
    await f.reopen();
    expect(
      await code(
        f.me.owner.decide({ proposalId: f.ids.sister, decision: 'approve', signer: f.signer }),
      ),
    ).toBe('CHAIN_BROKEN');
    const live = (await shown(f.me, TEXTS.city)).live;
    expect(live).not.toContain(TEXTS.city);
    // a head of the same length with another hash never replaces the one recorded
    expect(() =>
      recordKeyFileHead(f?.keyFile ?? '', f?.engine.storeId ?? '', f?.subject ?? '', {
        seq: 4,
        hash: 'f'.repeat(64),
        root: 'e'.repeat(64),
      }),
    ).toThrow(/another hash/);
    await f.reopen();
    expect(await f.me.owner.verifyChain()).toMatchObject({ ok: false, code: 'HEAD_CUT' });
  });

  /** What every read of the fixture shows after `c`'s tamper, to a process with the anchor. */
  async function expectWithheld(c: TamperCase, code: BreakCode): Promise<void> {
    if (f === null) throw new Error('no fixture');
    expect(await f.me.owner.verifyChain()).toMatchObject({ ok: false, code });
    const s = await shown(f.me, `${c.hidden} ${c.kept ?? ''} ${TEXTS.city} ${TEXTS.job}`);
    expect(s.live).not.toContain(c.hidden);
    if (c.kept !== null) expect(s.live).toContain(c.kept);
    else expect(s.live).toEqual([]);
    expect(s.arrival).not.toContain(c.hidden);
    expect(s.arrival).toContain('Integrity warning');
    expect(s.arrival).toContain(code);
    expect(s.arrival).not.toContain(UNANCHORED_LINE.slice(0, 60));
    expect(s.recalled).not.toContain(c.hidden);
    for (const item of s.history.filter((i) => i.text === c.hidden)) {
      expect(item.passport.status).not.toBe('active');
    }
  }
});
