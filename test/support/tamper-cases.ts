// The tampers of the tamper matrix, one per thing a process with the store's SQL can change: what
// each must never let a model see, and what `chain verify` says of it with and without the owner's
// anchor. Run by the tamper matrix (engine reads, chain verify, fresh processes) and the faces test
// (every face a model reads).
import type { ChainReport } from '../../src/index.js';
import { EVE, forgerKey, rekey, supersedeCity, unsupersede } from './tampers.js';
import { TEXTS, type TrustFixture } from './trust-fixture.js';

export type BreakCode = Extract<ChainReport, { ok: false }>['code'];

export interface TamperCase {
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

/**
 * The owner supersedes the city, an arrival records the head it saw, and the attacker cuts the
 * superseding link and sets the rows back (deleting the arrival's manifests too, if asked).
 */
async function cutOverSuperseding(
  f: TrustFixture,
  o: { manifests: 'kept' | 'deleted' },
): Promise<void> {
  await supersedeCity(f);
  await f.me.arrival.assemble({ surface: 'chat' });
  await unsupersede(f);
  if (o.manifests === 'deleted')
    await f.tamper([`DELETE FROM arrival_manifests WHERE subject_id = '${f.subject}'`]);
}

export const TAMPER_CASES: TamperCase[] = [
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
    tamper: (f) => cutOverSuperseding(f, { manifests: 'kept' }),
    anchored: 'HEAD_CUT',
    unanchored: 'HEAD_CUT',
    freshIntegrity: true,
  },
  {
    name: 'the head cut over a superseding approval, and the arrival manifests deleted',
    hidden: TEXTS.city,
    kept: TEXTS.email,
    tamper: (f) => cutOverSuperseding(f, { manifests: 'deleted' }),
    anchored: 'HEAD_CUT',
    unanchored: 'ok',
    freshIntegrity: false,
    unanchoredHides: false,
  },
];
