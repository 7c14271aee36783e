// Issue 12's tamper matrix: each tamper a process with the store's SQL can make, on both engines,
// with the owner's key file (and head file) at hand and without it (a fresh process that knows
// only the store). For each: what live memory, the arrival, recall and `chain verify` say.
import { recordKeyFileHead, recordKeyFileRevocation, type ChainReport } from '../src/index.js';
import { code } from './support/errors.js';
import { EVE, forgerKey, rekey, supersedeCity, unsupersede } from './support/tampers.js';
import { UNANCHORED_LINE } from '../src/domain/trust.js';
import { describe, expect, it } from 'vitest';
import { ENGINES } from './support/engines.js';
import {
  anchorOf,
  shown,
  TEXTS,
  trustStoreFor,
  type TrustFixture,
} from './support/trust-fixture.js';

type BreakCode = Extract<ChainReport, { ok: false }>['code'];

interface Case {
  name: string;
  /** Which text must never be shown as live afterwards (forged, or no longer backed). */
  hidden: string;
  /** Which text stays live (the tamper must not take down what is still backed); null: none. */
  kept: string | null;
  tamper(f: TrustFixture): Promise<void>;
  /**
   * The chain verify code in a process that holds the owner's anchor (the key file and the head
   * file beside it), and in a fresh one that knows only the store ('ok': the store alone cannot
   * tell).
   */
  anchored: BreakCode;
  unanchored: BreakCode | 'ok';
  /** Whether a fresh process without the anchor shows the integrity warning. */
  freshIntegrity: boolean;
  /**
   * Whether a fresh process without the anchor still withholds `hidden` (default true). A store
   * re-signed under another key agrees with itself: only the anchor tells, and an unanchored read
   * says it is unanchored.
   */
  unanchoredHides?: boolean;
  /**
   * An in-place edit of a link this process verified (its hash column kept): the very next read
   * finds it, since every read compares the verified links' row versions.
   */
  inPlace?: boolean;
}

const CASES: Case[] = [
  {
    name: 'a proposal flipped to active',
    hidden: TEXTS.sister,
    kept: TEXTS.city,
    tamper: (f) => f.tamper([`UPDATE facts SET status = 'active' WHERE id = $1`], [f.ids.sister]),
    anchored: 'MISSING_DECISION',
    unanchored: 'MISSING_DECISION',
    freshIntegrity: true,
  },
  {
    name: 'an approved text edited',
    hidden: TEXTS.forged,
    kept: TEXTS.email,
    tamper: (f) =>
      f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.job, TEXTS.forged]),
    anchored: 'CONTENT_CHANGED',
    unanchored: 'CONTENT_CHANGED',
    freshIntegrity: true,
  },
  {
    // the gate's verdict is part of what the owner signed: a reworded reason is an edit
    name: "an approved fact's attestation reason edited",
    hidden: TEXTS.job,
    kept: TEXTS.email,
    tamper: (f) =>
      f.tamper(
        [`UPDATE facts SET attestation_reason = $2 WHERE id = $1 AND attestation IS NOT NULL`],
        [f.ids.job, 'the user states it, twice over'],
      ),
    anchored: 'CONTENT_CHANGED',
    unanchored: 'CONTENT_CHANGED',
    freshIntegrity: true,
  },
  {
    // a link past the verified prefix could have replaced any keyed value: only the email stays
    name: 'a decision inserted (forged approval of the pending proposal)',
    hidden: TEXTS.sister,
    kept: TEXTS.email,
    async tamper(f) {
      const forger = forgerKey();
      await f.tamper(
        [
          `INSERT INTO decisions (subject_id, seq, proposal_id, content_hash, decision, decided_at, note, key_id, prev_hash, hash, signature)
           SELECT subject_id, seq + 1, $1, content_hash, 'approve', decided_at, '', key_id, hash, hash, $2
           FROM decisions WHERE subject_id = '${f.subject}' ORDER BY seq DESC LIMIT 1`,
          `UPDATE facts SET status = 'active', promoted_by = 'owner' WHERE id = $1`,
        ],
        [f.ids.sister, forger.sign('forged')],
      );
    },
    anchored: 'HASH_MISMATCH',
    unanchored: 'HASH_MISMATCH',
    freshIntegrity: true,
  },
  {
    name: 'a decision deleted (the middle one)',
    hidden: TEXTS.city,
    kept: null,
    tamper: (f) =>
      f.tamper([`DELETE FROM decisions WHERE subject_id = '${f.subject}' AND seq = 2`]),
    anchored: 'SEQ_GAP',
    unanchored: 'SEQ_GAP',
    freshIntegrity: true,
  },
  {
    name: 'decisions reordered',
    hidden: TEXTS.city,
    kept: null,
    tamper: (f) =>
      f.tamper([
        `UPDATE decisions SET seq = 100 WHERE subject_id = '${f.subject}' AND seq = 2`,
        `UPDATE decisions SET seq = 2 WHERE subject_id = '${f.subject}' AND seq = 3`,
        `UPDATE decisions SET seq = 3 WHERE subject_id = '${f.subject}' AND seq = 100`,
      ]),
    anchored: 'PREV_HASH_MISMATCH',
    unanchored: 'PREV_HASH_MISMATCH',
    freshIntegrity: true,
  },
  {
    name: 'a decision edited (approve turned into reject)',
    hidden: TEXTS.job,
    kept: TEXTS.email,
    tamper: (f) =>
      f.tamper([
        `UPDATE decisions SET decision = 'reject' WHERE subject_id = '${f.subject}' AND seq = 3`,
      ]),
    anchored: 'HASH_MISMATCH',
    unanchored: 'HASH_MISMATCH',
    freshIntegrity: true,
    inPlace: true,
  },
  {
    name: 'the head cut and its fact set back to proposed',
    hidden: TEXTS.job,
    kept: TEXTS.email,
    tamper: (f) =>
      f.tamper(
        [
          `DELETE FROM decisions WHERE subject_id = '${f.subject}' AND seq = 3`,
          `UPDATE facts SET status = 'proposed', promoted_by = NULL WHERE id = $1`,
        ],
        [f.ids.job],
      ),
    // the head file beside the key file names link 3; a fresh process with no head file and no
    // arrival that saw link 3 cannot tell (docs/TRUST.md says so)
    anchored: 'HEAD_CUT',
    unanchored: 'ok',
    freshIntegrity: false,
  },
  {
    name: 'an approved fact set to retracted with no ledger row',
    hidden: TEXTS.job,
    kept: TEXTS.city,
    tamper: (f) => f.tamper([`UPDATE facts SET status = 'retracted' WHERE id = $1`], [f.ids.job]),
    anchored: 'UNEXPLAINED_STATUS',
    unanchored: 'UNEXPLAINED_STATUS',
    freshIntegrity: true,
  },
  {
    name: 'an unsigned auto-live slot (and a fact promoted on it)',
    hidden: TEXTS.forged,
    kept: TEXTS.city,
    async tamper(f) {
      await f.tamper(
        [
          `INSERT INTO slots (subject_id, name, rule, auto_live, auto_live_tools, declared_at)
           VALUES ('${f.subject}', 'user_profile', 'action', true, '{send_email}', now())`,
          `INSERT INTO facts (subject_id, id, slot, text, origin, status, attested, evidence_turn_id,
             evidence_session_id, evidence_seq, evidence_tool, proposed_by, recorded_at, status_at,
             promoted_by, terms)
           SELECT '${f.subject}', 'forged-1', 'user_profile', $1, 'did', 'active', true, id, session_id, seq,
                  'send_email', 'agent', now(), now(), 'receipt', ARRAY['safety', 'check', 'disabl']
           FROM turns WHERE subject_id = '${f.subject}' AND seq = 2`,
        ],
        [TEXTS.forged],
      );
    },
    anchored: 'UNSIGNED_DELEGATION',
    unanchored: 'UNSIGNED_DELEGATION',
    freshIntegrity: true,
  },
  {
    name: "the owner key swapped in the store (another key's public half)",
    hidden: TEXTS.city,
    kept: null,
    async tamper(f) {
      const other = forgerKey();
      await f.tamper(
        [`UPDATE subjects SET owner_public_key = $1, owner_key_id = $2 WHERE id = '${f.subject}'`],
        [other.publicKeyPem, other.keyId],
      );
    },
    anchored: 'KEY_MISMATCH',
    unanchored: 'KEY_MISMATCH',
    freshIntegrity: true,
  },
  {
    // the delegation decides what is live, not the row: nothing changes but the warning
    name: "a delegated slot's tools widened in its row",
    hidden: TEXTS.forged,
    kept: TEXTS.email,
    tamper: (f) =>
      f.tamper([
        `UPDATE slots SET auto_live_tools = '{send_email,wire_money}'
         WHERE subject_id = '${f.subject}' AND name = 'emails'`,
      ]),
    anchored: 'DELEGATION_CHANGED',
    unanchored: 'DELEGATION_CHANGED',
    freshIntegrity: true,
  },
  {
    // no signature covers a receipt fact's text: the delegation's signed template bounds it
    name: "a receipt fact's text edited beyond what its delegation lets it say",
    hidden: EVE,
    kept: TEXTS.city,
    tamper: (f) => f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.email, EVE]),
    anchored: 'UNSIGNED_DELEGATION',
    unanchored: 'UNSIGNED_DELEGATION',
    freshIntegrity: true,
  },
  {
    name: 'a receipt fact inserted, citing a real receipt, beyond what the delegation lets it say',
    hidden: EVE,
    kept: TEXTS.email,
    tamper: (f) =>
      f.tamper(
        [
          `INSERT INTO facts (subject_id, id, slot, text, origin, status, attested, evidence_turn_id,
             evidence_session_id, evidence_seq, evidence_tool, proposed_by, recorded_at, status_at,
             promoted_by, terms)
           SELECT '${f.subject}', 'forged-receipt', 'emails', $1, 'did', 'active', true, id, session_id,
                  seq, 'send_email', 'agent', now(), now(), 'receipt', ARRAY['forward', 'eve']
           FROM turns WHERE subject_id = '${f.subject}' AND seq = 2`,
        ],
        [EVE],
      ),
    anchored: 'UNSIGNED_DELEGATION',
    unanchored: 'UNSIGNED_DELEGATION',
    freshIntegrity: true,
  },
  {
    // a "restoration" no probe-settled overturn names backs nothing
    name: 'an approved fact hidden behind a fake restoration of itself',
    hidden: TEXTS.city,
    kept: TEXTS.job,
    tamper: (f) =>
      f.tamper([
        `INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
           evidence_session_id, evidence_seq, evidence_quote, proposed_by, recorded_at, status_at,
           promoted_by, supersedes_id, restored_from_id, valid_to, terms)
         SELECT subject_id, 'fake-r', slot, key, text, origin, 'expired', attested, evidence_turn_id,
                evidence_session_id, evidence_seq, evidence_quote, proposed_by, now(), now(),
                'restoration', id, id, now() - interval '1 day', terms
         FROM facts WHERE id = '${f.ids.city}'`,
        `UPDATE facts SET status = 'superseded', superseded_by_id = 'fake-r' WHERE id = '${f.ids.city}'`,
      ]),
    anchored: 'UNEXPLAINED_STATUS',
    unanchored: 'UNEXPLAINED_STATUS',
    freshIntegrity: true,
  },
  {
    // the approved city moved out of live memory behind a superseder nothing backed
    name: 'an approved fact hidden behind a fake superseder (receipt-promoted, expired)',
    hidden: TEXTS.city,
    kept: TEXTS.job,
    async tamper(f) {
      await f.tamper(
        [
          `INSERT INTO facts (subject_id, id, slot, key, text, origin, status, attested, evidence_turn_id,
             evidence_session_id, evidence_seq, evidence_tool, proposed_by, recorded_at, status_at,
             promoted_by, supersedes_id, valid_to, terms)
           SELECT '${f.subject}', 'fake-1', 'what_i_know_about_user', 'city', $1, 'did', 'expired', true,
                  id, session_id, seq, 'send_email', 'agent', now(), now(), 'receipt', '${f.ids.city}',
                  now() - interval '1 day', ARRAY['move']
           FROM turns WHERE subject_id = '${f.subject}' AND seq = 2`,
          `UPDATE facts SET status = 'superseded', superseded_by_id = 'fake-1' WHERE id = '${f.ids.city}'`,
        ],
        ['The user moved away.'],
      );
    },
    anchored: 'UNEXPLAINED_STATUS',
    unanchored: 'UNEXPLAINED_STATUS',
    freshIntegrity: true,
  },
  {
    name: 'the owner key swapped, its key id kept, the chain and token grants re-signed, and the pending proposal approved',
    hidden: TEXTS.sister,
    kept: null,
    tamper: (f) => rekey(f, { keepKeyId: true }, { grants: true }),
    anchored: 'KEY_MISMATCH',
    unanchored: 'ok',
    freshIntegrity: false,
    unanchoredHides: false,
  },
  {
    name: 'the owner key swapped under a new key id, everything re-signed',
    hidden: TEXTS.sister,
    kept: null,
    tamper: (f) => rekey(f, { keepKeyId: false }),
    anchored: 'KEY_MISMATCH',
    unanchored: 'ok',
    freshIntegrity: false,
    unanchoredHides: false,
  },
  {
    name: 'the owner key swapped under a new key id, and the arrival manifests deleted',
    hidden: TEXTS.sister,
    kept: null,
    async tamper(f) {
      // an arrival saw the owner's head; its manifest would name the re-signed chain a cut one
      await f.me.arrival.assemble({ surface: 'chat' });
      await f.tamper([`DELETE FROM arrival_manifests WHERE subject_id = '${f.subject}'`]);
      await rekey(f, { keepKeyId: false });
    },
    anchored: 'KEY_MISMATCH',
    unanchored: 'ok',
    freshIntegrity: false,
    unanchoredHides: false,
  },
  {
    // the value the owner replaced comes back when the replacing link is cut and the rows reverted
    name: 'the head cut over a superseding approval, an arrival having seen it',
    hidden: TEXTS.city,
    kept: TEXTS.email,
    async tamper(f) {
      await supersedeCity(f);
      await f.me.arrival.assemble({ surface: 'chat' });
      await unsupersede(f);
    },
    anchored: 'HEAD_CUT',
    unanchored: 'HEAD_CUT',
    freshIntegrity: true,
  },
  {
    name: 'the head cut over a superseding approval, and the arrival manifests deleted',
    hidden: TEXTS.city,
    kept: TEXTS.email,
    async tamper(f) {
      await supersedeCity(f);
      await f.me.arrival.assemble({ surface: 'chat' });
      await unsupersede(f);
      await f.tamper([`DELETE FROM arrival_manifests WHERE subject_id = '${f.subject}'`]);
    },
    anchored: 'HEAD_CUT',
    unanchored: 'ok',
    freshIntegrity: false,
    unanchoredHides: false,
  },
];

describe.each(ENGINES)('tamper matrix [%s]', (kind) => {
  // each case tampers with the rows of a fresh subject of one store
  const store = trustStoreFor(kind);
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

  for (const c of CASES) {
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
    const made = await f.engine.tokens.create({
      subject: f.subject,
      role: 'agent',
      signer: f.signer,
    });
    const kept = await f.engine.tokens.create({
      subject: f.subject,
      role: 'reader',
      signer: f.signer,
    });
    const revoked = await f.engine.tokens.revoke({ id: made.info.id, signer: f.signer });
    // recorded beside the key file, as `memledger token revoke` records it
    recordKeyFileRevocation(f.keyFile, f.engine.storeId, f.subject, made.info.id);
    if (revoked.head !== undefined) {
      recordKeyFileHead(f.keyFile, f.engine.storeId, f.subject, revoked.head);
    }
    await f.tamper([`UPDATE access_tokens SET revoked_at = NULL WHERE id = $1`], [made.info.id]);
    expect((await f.engine.tokens.list({ subject: f.subject }))[0]?.revokedAt ?? null).toBeNull();
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
    const reader = await other.engine.tokens.create({
      subject: other.subject,
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
    await f.me.turns.add({
      sessionId: f.sessionId,
      role: 'user',
      content: 'Do you think I am allergic to peanuts?',
    });
    const r = await f.me.gate.propose({
      sessionId: f.sessionId,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          key: 'allergy',
          text: 'The user is allergic to peanuts.',
          origin: 'saw',
          evidence: { turn: 3, quote: 'I am allergic to peanuts' },
        },
      ],
    });
    const id = r.proposed[0]?.id as string;
    expect(r.proposed[0]?.attestation?.verdict).toBe('presupposed');
    const line = async () =>
      ((await f?.me.arrival.assemble({ surface: 'chat' }))?.text ?? '')
        .split('\n')
        .find((l) => l.startsWith('Proposals awaiting owner review')) ?? '';
    // negative control: the gate's own verdicts, and nothing said to differ
    const before = await line();
    expect(before).toContain('1 presupposed, 1 paraphrase_unverified');
    expect(before).not.toContain('not trusted');
    await f.tamper(
      [
        `UPDATE facts SET attestation = 'asserted', attested = true, attestation_reason = 'the user states it' WHERE id = $1`,
      ],
      [id],
    );
    for (const round of ['same process', 'new process']) {
      if (round === 'new process') await f.reopen();
      const after = await line();
      expect(after, round).toContain('1 presupposed, 1 paraphrase_unverified');
      expect(after, round).not.toContain('asserted');
      expect(after, round).toContain(
        '1 stored with a verdict the gate does not give its quote now',
      );
    }
    // one whose quote cannot be read again (its cited turn gone) is not counted as it claims
    await f.tamper([`UPDATE facts SET evidence_seq = 999 WHERE id = $1`], [id]);
    const unreadable = await line();
    expect(unreadable).toContain('1 paraphrase_unverified, 1 unverifiable');
    expect(unreadable).toContain('1 stored with a verdict the gate does not give its quote now');
  });

  it("a forged revoke link does not make the owner's revocation a no-op; a broken chain leaves the row revoked", async () => {
    f = await store.fixture();
    const made = await f.engine.tokens.create({
      subject: f.subject,
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
    const revoked = await f.engine.tokens.revoke({ id: made.info.id, signer: f.signer });
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
    const again = await f.engine.tokens.revoke({ id: made.info.id, signer: f.signer });
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
  async function expectWithheld(c: Case, code: BreakCode): Promise<void> {
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
