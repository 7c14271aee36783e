// Issue 12's tamper matrix: each tamper a process with the store's SQL can make, on both engines,
// with the owner's key file (and head file) at hand and without it (a fresh process that knows
// only the store). For each: what live memory, the arrival, recall and `chain verify` say.
import { generateOwnerKey, loadOwnerKey, type ChainReport } from '../src/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from './support/engines.js';
import {
  anchorOf,
  shown,
  TEXTS,
  trustStore,
  type TrustFixture,
  type TrustStore,
} from './support/trust-fixture.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { writeOwnerKeyFile } from '../src/index.js';
import { TEST_KEYS } from './support/test-keys.js';

type BreakCode = Extract<ChainReport, { ok: false }>['code'];

interface Case {
  name: string;
  /** Which text must never be shown as live afterwards (forged, or no longer backed). */
  hidden: string;
  /** Which text stays live (the tamper must not take down what is still backed); null: none. */
  kept: string | null;
  tamper(f: TrustFixture): Promise<void>;
  /** The chain verify code with the key file at hand, and without it (a fresh process). */
  withKey: BreakCode;
  withoutKey: BreakCode | 'ok';
  /** Whether a fresh process (no key file) still shows the integrity block. */
  freshIntegrity: boolean;
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
    withKey: 'MISSING_DECISION',
    withoutKey: 'MISSING_DECISION',
    freshIntegrity: true,
  },
  {
    name: 'an approved text edited',
    hidden: TEXTS.forged,
    kept: TEXTS.city,
    tamper: (f) =>
      f.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [f.ids.job, TEXTS.forged]),
    withKey: 'CONTENT_CHANGED',
    withoutKey: 'CONTENT_CHANGED',
    freshIntegrity: true,
  },
  {
    // the gate's verdict is part of what the owner signed: a reworded reason is an edit
    name: "an approved fact's attestation reason edited",
    hidden: TEXTS.job,
    kept: TEXTS.city,
    tamper: (f) =>
      f.tamper(
        [`UPDATE facts SET attestation_reason = $2 WHERE id = $1 AND attestation IS NOT NULL`],
        [f.ids.job, 'the user states it, twice over'],
      ),
    withKey: 'CONTENT_CHANGED',
    withoutKey: 'CONTENT_CHANGED',
    freshIntegrity: true,
  },
  {
    name: 'a decision inserted (forged approval of the pending proposal)',
    hidden: TEXTS.sister,
    kept: TEXTS.city,
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
    withKey: 'HASH_MISMATCH',
    withoutKey: 'HASH_MISMATCH',
    freshIntegrity: true,
  },
  {
    name: 'a decision deleted (the middle one)',
    hidden: TEXTS.city,
    kept: TEXTS.email,
    tamper: (f) =>
      f.tamper([`DELETE FROM decisions WHERE subject_id = '${f.subject}' AND seq = 2`]),
    withKey: 'SEQ_GAP',
    withoutKey: 'SEQ_GAP',
    freshIntegrity: true,
  },
  {
    name: 'decisions reordered',
    hidden: TEXTS.city,
    kept: TEXTS.email,
    tamper: (f) =>
      f.tamper([
        `UPDATE decisions SET seq = 100 WHERE subject_id = '${f.subject}' AND seq = 2`,
        `UPDATE decisions SET seq = 2 WHERE subject_id = '${f.subject}' AND seq = 3`,
        `UPDATE decisions SET seq = 3 WHERE subject_id = '${f.subject}' AND seq = 100`,
      ]),
    withKey: 'PREV_HASH_MISMATCH',
    withoutKey: 'PREV_HASH_MISMATCH',
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
    withKey: 'HASH_MISMATCH',
    withoutKey: 'HASH_MISMATCH',
    freshIntegrity: true,
    inPlace: true,
  },
  {
    name: 'the head cut and its fact set back to proposed',
    hidden: TEXTS.job,
    kept: TEXTS.city,
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
    withKey: 'HEAD_CUT',
    withoutKey: 'ok',
    freshIntegrity: false,
  },
  {
    name: 'an approved fact set to retracted with no ledger row',
    hidden: TEXTS.job,
    kept: TEXTS.city,
    tamper: (f) => f.tamper([`UPDATE facts SET status = 'retracted' WHERE id = $1`], [f.ids.job]),
    withKey: 'UNEXPLAINED_STATUS',
    withoutKey: 'UNEXPLAINED_STATUS',
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
    withKey: 'UNSIGNED_DELEGATION',
    withoutKey: 'UNSIGNED_DELEGATION',
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
    withKey: 'KEY_MISMATCH',
    withoutKey: 'KEY_MISMATCH',
    freshIntegrity: true,
  },
];

const keyDir = mkdtempSync(join(tmpdir(), 'memledger-forger-'));
let forgers = 0;
function forgerKey() {
  const file = join(keyDir, `forger-${++forgers}.key`);
  writeOwnerKeyFile(file, generateOwnerKey('x', TEST_KEYS).keyFile);
  return loadOwnerKey(file, 'x', TEST_KEYS);
}

describe.each(ENGINES)('tamper matrix [%s]', (kind) => {
  // each case tampers with the rows of a fresh subject of one store
  let store: TrustStore;
  beforeAll(async () => {
    store = await trustStore(kind);
  });
  afterAll(() => store.close());
  let f: TrustFixture | null = null;
  afterEach(async () => {
    await f?.close();
    f = null;
  });

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
      const head = await f.head();
      await c.tamper(f);

      // with the key file (and its head file) at hand, in the process that saw the chain
      const withKey = await f.me.owner.verifyChain({ ownerKey: anchorOf(f), signedHead: head });
      expect(withKey).toMatchObject({ ok: false, code: c.withKey });
      const s = await shown(f.me, `${c.hidden} ${c.kept ?? ''}`);
      expect(s.live).not.toContain(c.hidden);
      if (c.kept !== null) expect(s.live).toContain(c.kept);
      expect(s.arrival).not.toContain(c.hidden);
      expect(s.arrival).toContain('Integrity warning');
      expect(s.recalled).not.toContain(c.hidden);
      for (const item of s.history.filter((i) => i.text === c.hidden)) {
        expect(item.passport.status).not.toBe('active');
      }

      // a fresh process that knows only the store: no key file, no memory of the head
      await f.reopen();
      const fresh = await f.me.owner.verifyChain();
      if (c.withoutKey === 'ok') expect(fresh.ok).toBe(true);
      else expect(fresh).toMatchObject({ ok: false, code: c.withoutKey });
      const t = await shown(f.me, `${c.hidden} ${c.kept ?? ''}`);
      expect(t.live).not.toContain(c.hidden);
      expect(t.arrival).not.toContain(c.hidden);
      expect(t.recalled).not.toContain(c.hidden);
      if (c.freshIntegrity) expect(t.arrival).toContain('Integrity warning');
      else expect(t.arrival).not.toContain('Integrity warning');
    });
  }
});

afterAll(() => rmSync(keyDir, { recursive: true, force: true }));
