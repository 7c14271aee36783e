import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeChainCrypto } from '../src/crypto/chain-crypto.js';
import { writeOwnerKeyFile } from '../src/crypto/owner-key-file.js';
import { generateOwnerKey, loadOwnerKey, type OwnerSigner } from '../src/crypto/owner-key.js';
import {
  GENESIS_HASH,
  decisionPayload,
  nextLinkFields,
  proposalContentHash,
  proposalContentPayload,
  sealLink,
  verifyChain,
  type ChainBreakCode,
  type ChainReport,
  type Decision,
  type DecisionFields,
  type DecisionLink,
  type ProposalContent,
  type VerifyChainOptions,
} from '../src/domain/decision-chain.js';
import { EngineError } from '../src/domain/errors.js';
import { forgetNote, forgetTarget, targetsOf } from '../src/domain/forget.js';
import {
  FORGET_POLICY_TARGET,
  forgetPolicyNote,
  parseForgetPolicyNote,
} from '../src/domain/forget-policy.js';
import type { Fact } from '../src/domain/fact.js';
import type { FactId } from '../src/domain/ids.js';
import { ChainState } from '../src/domain/chain-state.js';
import { TEST_KEYS } from './support/test-keys.js';

const SUBJECT = 'keniel';
const crypto = nodeChainCrypto;

let dir: string;
let owner: OwnerSigner;
let intruder: OwnerSigner;

function loadFreshKey(name: string, passphrase: string): OwnerSigner {
  const generated = generateOwnerKey(passphrase, TEST_KEYS);
  const path = join(dir, name);
  writeOwnerKeyFile(path, generated.keyFile);
  return loadOwnerKey(path, passphrase, TEST_KEYS);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memledger-chain-'));
  owner = loadFreshKey('owner.key', 'owner test passphrase');
  intruder = loadFreshKey('intruder.key', 'intruder test passphrase');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function proposal(n: number): ProposalContent {
  return {
    id: `p-${n}`,
    subjectId: SUBJECT,
    slot: 'what_i_know_about_user',
    key: n === 1 ? 'shift_pattern' : null,
    text: `fact number ${n}`,
    origin: 'saw',
    evidence: { turnId: `t-${n}`, seq: n, quote: `quote ${n}`, tool: null },
    attested: true,
  };
}

const DECIDED: readonly Decision[] = ['approve', 'approve', 'reject', 'approve', 'reject'];

function contentHashes(): Map<string, string> {
  return new Map(
    [1, 2, 3, 4, 5].map((n) => [`p-${n}`, proposalContentHash(proposal(n), crypto)] as const),
  );
}

/** Appends a decision the way the gate will: next fields, then hash and owner signature. */
function append(chain: DecisionLink[], n: number, decision: Decision, signer = owner): void {
  const prev = chain.at(-1) ?? null;
  const fields = nextLinkFields(prev, {
    subjectId: SUBJECT,
    proposalId: `p-${n}`,
    contentHash: proposalContentHash(proposal(n), crypto),
    decision,
    decidedAt: `2026-11-0${n}T09:00:00.000Z`,
    note: `decision on proposal ${n}`,
    keyId: signer.keyId,
  });
  chain.push(sealLink(fields, crypto, signer));
}

function buildChain(): DecisionLink[] {
  const chain: DecisionLink[] = [];
  DECIDED.forEach((decision, i) => append(chain, i + 1, decision));
  return chain;
}

function ownerOpts(extra: Partial<VerifyChainOptions> = {}): VerifyChainOptions {
  return { crypto, publicKeyPem: owner.publicKeyPem, keyId: owner.keyId, ...extra };
}

/** What a process with write access to the store but no private key can do: fix up hashes. */
function rehash(link: DecisionLink, prevHash = link.prevHash): DecisionLink {
  const fields: DecisionFields = { ...link, prevHash };
  return { ...link, prevHash, hash: crypto.sha256Hex(decisionPayload(fields)) };
}

function at(chain: readonly DecisionLink[], seq: number): DecisionLink {
  const link = chain.find((l) => l.seq === seq);
  if (link === undefined) throw new Error(`no link ${seq}`);
  return link;
}

function expectBroken(report: ChainReport, brokenAt: number, code: ChainBreakCode): void {
  expect(report).toMatchObject({ ok: false, brokenAt, code });
  if (!report.ok) expect(report.reason.length).toBeGreaterThan(0);
}

describe('verifyChain on an untampered chain (negative control)', () => {
  it('verifies a real five-link chain signed with the owner key', () => {
    const chain = buildChain();
    expect(chain.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(chain[0]?.prevHash).toBe(GENESIS_HASH);
    const report = verifyChain(chain, ownerOpts());
    expect(report).toEqual({
      ok: true,
      length: 5,
      headHash: chain[4]?.hash,
      rootHash: chain[0]?.hash,
    });
  });

  it('verifies with the current content hashes of the decided proposals', () => {
    const hashes = contentHashes();
    const report = verifyChain(
      buildChain(),
      ownerOpts({ currentContentHash: (id) => hashes.get(id) ?? null }),
    );
    expect(report.ok).toBe(true);
  });

  it('verifies an empty chain with the genesis head', () => {
    expect(verifyChain([], ownerOpts())).toEqual({
      ok: true,
      length: 0,
      headHash: GENESIS_HASH,
      rootHash: null,
    });
  });
});

describe('verifyChain catches tampering at the right link', () => {
  it('an edited decision (reject → approve on link 3): HASH_MISMATCH at 3', () => {
    const chain = buildChain();
    expect(at(chain, 3).decision).toBe('reject');
    chain[2] = { ...at(chain, 3), decision: 'approve' };
    expectBroken(verifyChain(chain, ownerOpts()), 3, 'HASH_MISMATCH');
  });

  it('an edited note: HASH_MISMATCH at that link', () => {
    const chain = buildChain();
    chain[1] = { ...at(chain, 2), note: 'approved after a long talk' };
    expectBroken(verifyChain(chain, ownerOpts()), 2, 'HASH_MISMATCH');
  });

  it('an edited time, proposal id or content hash: HASH_MISMATCH at that link', () => {
    const edits: Partial<DecisionLink>[] = [
      { decidedAt: '2026-10-01T09:00:00.000Z' },
      { proposalId: 'p-99' },
      { contentHash: 'f'.repeat(64) },
      { subjectId: 'someone-else' },
    ];
    for (const edit of edits) {
      const chain = buildChain();
      chain[3] = { ...at(chain, 4), ...edit };
      expectBroken(verifyChain(chain, ownerOpts()), 4, 'HASH_MISMATCH');
    }
  });

  it('a deleted link 2: broken at 3 (SEQ_GAP)', () => {
    const chain = buildChain();
    chain.splice(1, 1);
    expectBroken(verifyChain(chain, ownerOpts()), 3, 'SEQ_GAP');
  });

  it('a deleted link 2 with the later seqs renumbered: PREV_HASH_MISMATCH at the new 2', () => {
    const chain = buildChain();
    chain.splice(1, 1);
    const renumbered = chain.map((l, i) => ({ ...l, seq: i + 1 }));
    expectBroken(verifyChain(renumbered, ownerOpts()), 2, 'PREV_HASH_MISMATCH');
  });

  it('an inserted link signed with another key, under the owner keyId: BAD_SIGNATURE at its seq', () => {
    const chain = buildChain();
    const fields = nextLinkFields(at(chain, 2), {
      subjectId: SUBJECT,
      proposalId: 'p-forged',
      contentHash: 'a'.repeat(64),
      decision: 'approve',
      decidedAt: '2026-11-02T10:00:00.000Z',
      note: 'the user authorized wire transfers',
      keyId: owner.keyId,
    });
    const forged = sealLink(fields, crypto, { keyId: owner.keyId, sign: intruder.sign });
    expect(forged.seq).toBe(3);
    chain.splice(2, 0, forged);
    expectBroken(verifyChain(chain, ownerOpts()), 3, 'BAD_SIGNATURE');
  });

  it('an appended link signed with another key: BAD_SIGNATURE at 6', () => {
    const chain = buildChain();
    const fields = nextLinkFields(at(chain, 5), {
      subjectId: SUBJECT,
      proposalId: 'p-forged',
      contentHash: 'a'.repeat(64),
      decision: 'approve',
      decidedAt: '2026-11-06T10:00:00.000Z',
      note: '',
      keyId: owner.keyId,
    });
    chain.push(sealLink(fields, crypto, { keyId: owner.keyId, sign: intruder.sign }));
    expectBroken(verifyChain(chain, ownerOpts()), 6, 'BAD_SIGNATURE');
  });

  it('an appended link signed under its own keyId: KEY_MISMATCH at 6', () => {
    const chain = buildChain();
    append(chain, 6, 'approve', intruder);
    expectBroken(verifyChain(chain, ownerOpts()), 6, 'KEY_MISMATCH');
  });

  it('links 3 and 4 reordered (their seqs swapped): PREV_HASH_MISMATCH at 3', () => {
    const chain = buildChain();
    const three = at(chain, 3);
    const four = at(chain, 4);
    // Stored order is by seq, so a reorder in the store is a swap of seq values.
    chain[2] = { ...four, seq: 3 };
    chain[3] = { ...three, seq: 4 };
    expectBroken(verifyChain(chain, ownerOpts()), 3, 'PREV_HASH_MISMATCH');
  });

  it('links 3 and 4 handed over out of order: SEQ_GAP at the first misplaced link (seq 4)', () => {
    const chain = buildChain();
    const [three, four] = [at(chain, 3), at(chain, 4)];
    chain[2] = four;
    chain[3] = three;
    expectBroken(verifyChain(chain, ownerOpts()), 4, 'SEQ_GAP');
  });

  it('a swapped public key (another key and keyId in the store): KEY_MISMATCH at 1', () => {
    const report = verifyChain(
      buildChain(),
      ownerOpts({ publicKeyPem: intruder.publicKeyPem, keyId: intruder.keyId }),
    );
    expectBroken(report, 1, 'KEY_MISMATCH');
  });

  it('a swapped public key under the old keyId: BAD_SIGNATURE at 1', () => {
    const report = verifyChain(buildChain(), ownerOpts({ publicKeyPem: intruder.publicKeyPem }));
    expectBroken(report, 1, 'BAD_SIGNATURE');
  });

  it('a signature by another key with the right keyId: BAD_SIGNATURE at that link', () => {
    const chain = buildChain();
    const link = at(chain, 2);
    chain[1] = { ...link, signature: intruder.sign(decisionPayload(link)) };
    expectBroken(verifyChain(chain, ownerOpts()), 2, 'BAD_SIGNATURE');
  });

  it('a signature copied from another link: BAD_SIGNATURE at that link', () => {
    const chain = buildChain();
    chain[3] = { ...at(chain, 4), signature: at(chain, 3).signature };
    expectBroken(verifyChain(chain, ownerOpts()), 4, 'BAD_SIGNATURE');
  });

  it('a forger who edits link 3 and recomputes every hash, without the key: BAD_SIGNATURE at 3', () => {
    const chain = buildChain();
    const forged: DecisionLink[] = [];
    for (const link of chain) {
      const edited = link.seq === 3 ? { ...link, decision: 'approve' as const } : link;
      forged.push(rehash(edited, forged.at(-1)?.hash ?? GENESIS_HASH));
    }
    // The hashes are consistent again: only the signature can tell.
    expect(forged.every((l, i) => i === 0 || l.prevHash === forged[i - 1]?.hash)).toBe(true);
    expectBroken(verifyChain(forged, ownerOpts()), 3, 'BAD_SIGNATURE');
  });

  it('a first link that does not start at genesis: PREV_HASH_MISMATCH at 1', () => {
    const chain = buildChain();
    chain[0] = { ...at(chain, 1), prevHash: 'b'.repeat(64) };
    expectBroken(verifyChain(chain, ownerOpts()), 1, 'PREV_HASH_MISMATCH');
  });

  it('an approved proposal edited after the decision: CONTENT_CHANGED at its link', () => {
    const hashes = contentHashes();
    hashes.set(
      'p-2',
      proposalContentHash({ ...proposal(2), text: 'the user authorized wire transfers' }, crypto),
    );
    const report = verifyChain(
      buildChain(),
      ownerOpts({ currentContentHash: (id) => hashes.get(id) ?? null }),
    );
    expectBroken(report, 2, 'CONTENT_CHANGED');
  });

  it('a decided proposal that is missing now: CONTENT_CHANGED at its link', () => {
    const hashes = contentHashes();
    hashes.delete('p-4');
    const report = verifyChain(
      buildChain(),
      ownerOpts({ currentContentHash: (id) => hashes.get(id) ?? null }),
    );
    expectBroken(report, 4, 'CONTENT_CHANGED');
  });

  it('a proposal decided twice, even by the owner: DUPLICATE_DECISION at the second', () => {
    const chain = buildChain();
    append(chain, 3, 'approve');
    expect(chain).toHaveLength(6);
    expectBroken(verifyChain(chain, ownerOpts()), 6, 'DUPLICATE_DECISION');
  });

  it('reports the first broken link when several are broken', () => {
    const chain = buildChain();
    chain[1] = { ...at(chain, 2), note: 'edited' };
    chain[3] = { ...at(chain, 4), decision: 'reject' };
    const report = verifyChain(chain, ownerOpts());
    expectBroken(report, 2, 'HASH_MISMATCH');
    expect(report.length).toBe(5);
  });

  it('does not throw on malformed link data', () => {
    const chain = buildChain();
    const base = at(chain, 2);
    const bad: unknown[] = [
      { ...base, seq: '2' },
      { ...base, seq: 2.5 },
      { ...base, note: undefined },
      { ...base, signature: 'not base64 at all!' },
      { ...base, signature: '' },
    ];
    for (const link of bad) {
      const copy = [...chain];
      copy[1] = link as DecisionLink;
      const report = verifyChain(copy, ownerOpts());
      expect(report.ok).toBe(false);
      if (!report.ok) expect(report.brokenAt).toBe(2);
    }
  });

  it('a chain truncated at its head still verifies: the head must be anchored outside it', () => {
    // Documented limit: a hash chain proves its prefix, not its length. Callers that need to
    // detect a deleted last decision must compare against a head recorded elsewhere (a live fact
    // that names its decision link, or a stored head hash).
    const chain = buildChain();
    const report = verifyChain(chain.slice(0, 4), ownerOpts());
    expect(report).toEqual({
      ok: true,
      length: 4,
      headHash: at(chain, 4).hash,
      rootHash: at(chain, 1).hash,
    });
  });
});

/** A decided proposal as the store returns it, hashing as `proposal(n)` does. */
function factOf(id: string): Fact | null {
  const n = Number(id.slice('p-'.length));
  if (!(n >= 1 && n <= 9)) return null;
  const p = proposal(n);
  const at = new Date(`2026-11-0${n}T08:00:00.000Z`);
  return {
    ...p,
    id: p.id as FactId,
    origin: 'saw',
    status: 'proposed',
    attestation: null,
    evidence: { ...p.evidence, sessionId: null, citations: null },
    supersedesId: null,
    supersededById: null,
    validFrom: null,
    validTo: null,
    recordedAt: at,
    supersededAt: null,
    statusAt: at,
    proposedBy: 'agent',
    retractionId: null,
    restoredFromId: null,
  };
}

/**
 * A link after `prev` under the owner's key id, signed by the intruder: a delegation of
 * wire_transfer, or a decision on `proposalId` with `contentHash`.
 */
function forgedAfter(
  prev: DecisionLink,
  proposalId: string,
  decision: 'delegate' | 'approve',
  contentHash = 'a'.repeat(64),
): DecisionLink {
  const fields = nextLinkFields(prev, {
    subjectId: SUBJECT,
    proposalId,
    contentHash,
    decision,
    decidedAt: '2026-11-06T10:00:00.000Z',
    note: decision === 'delegate' ? '{"autoLive":true,"tools":["wire_transfer"]}' : '',
    keyId: owner.keyId,
  });
  return sealLink(fields, crypto, { keyId: owner.keyId, sign: intruder.sign });
}

/** The read path's verdict (ChainState.extend, in `batches`), and the signatures it checked. */
function readPath(
  chain: readonly DecisionLink[],
  opts: Partial<VerifyChainOptions> = {},
  batches: number[] = [chain.length],
): { verified: number; broken: { brokenAt: number; code: string } | null; checked: number } {
  let checked = 0;
  const counting = {
    ...crypto,
    verify: (pem: string, data: string, sig: string) => {
      checked++;
      return crypto.verify(pem, data, sig);
    },
  };
  const state = new ChainState(SUBJECT, { ...ownerOpts(opts), crypto: counting });
  let from = 0;
  for (const size of batches) {
    state.extend(chain.slice(from, from + size), factOf, counting);
    from += size;
  }
  const b = state.broken;
  return {
    verified: state.length,
    broken: b === null ? null : { brokenAt: b.brokenAt, code: b.code },
    checked,
  };
}

describe('the read path (ChainState.extend): the last signature covers the links under it', () => {
  it('verifies an untampered chain with one signature check, and extends with one per batch', () => {
    const chain = buildChain();
    expect(readPath(chain)).toEqual({ verified: 5, broken: null, checked: 1 });
    expect(readPath(chain, {}, [3, 2])).toEqual({ verified: 5, broken: null, checked: 2 });
    expect(readPath([])).toEqual({ verified: 0, broken: null, checked: 0 });
  });

  /** Tampered chains where the read path must break where the link-by-link check does. */
  const same: Array<[string, () => DecisionLink[], (() => Partial<VerifyChainOptions>)?]> = [
    [
      'a forger who edits link 3 and recomputes every hash',
      () => {
        const forged: DecisionLink[] = [];
        for (const link of buildChain()) {
          const edited = link.seq === 3 ? { ...link, decision: 'approve' as const } : link;
          forged.push(rehash(edited, forged.at(-1)?.hash ?? GENESIS_HASH));
        }
        return forged;
      },
    ],
    [
      'an appended link signed with another key under the owner keyId',
      () => {
        const chain = buildChain();
        chain.push(forgedAfter(at(chain, 5), 'slot:forged', 'delegate'));
        return chain;
      },
    ],
    [
      'the last link re-signed by another key',
      () => {
        const chain = buildChain();
        chain[4] = { ...at(chain, 5), signature: intruder.sign(decisionPayload(at(chain, 5))) };
        return chain;
      },
    ],
    [
      'a forged link that also decides a proposal again (the signature is reported first)',
      () => {
        const chain = buildChain();
        chain.push(
          forgedAfter(at(chain, 5), 'p-3', 'approve', proposalContentHash(proposal(3), crypto)),
        );
        return chain;
      },
    ],
    [
      'a swapped public key under the old keyId',
      buildChain,
      () => ({ publicKeyPem: intruder.publicKeyPem }),
    ],
    [
      'an edited note',
      () => {
        const chain = buildChain();
        chain[1] = { ...at(chain, 2), note: 'edited' };
        return chain;
      },
    ],
    [
      'a proposal decided twice by the owner',
      () => {
        const chain = buildChain();
        append(chain, 3, 'approve');
        return chain;
      },
    ],
  ];
  for (const [name, build, extra] of same) {
    it(`${name}: broken where the link-by-link check breaks it`, () => {
      const chain = build();
      const opts = extra?.() ?? {};
      const full = verifyChain(chain, ownerOpts(opts));
      expect(full.ok).toBe(false);
      if (full.ok) return;
      for (const batches of [[chain.length], [2, chain.length - 2]]) {
        expect(readPath(chain, opts, batches)).toMatchObject({
          verified: full.brokenAt - 1,
          broken: { brokenAt: full.brokenAt, code: full.code },
        });
      }
    });
  }

  it('past a failed last signature, the chain is checked link by link: damage below a forged link breaks it there', () => {
    const chain = buildChain();
    chain[1] = { ...at(chain, 2), signature: intruder.sign(decisionPayload(at(chain, 2))) };
    let tip = at(chain, 5);
    for (let n = 0; n < 20; n++) {
      tip = forgedAfter(tip, `slot:forged_${n}`, 'delegate');
      chain.push(tip);
    }
    expectBroken(verifyChain(chain, ownerOpts()), 2, 'BAD_SIGNATURE');
    // the last signature, then links 1 and 2: twenty forged links cost no more than one
    expect(readPath(chain)).toEqual({
      verified: 1,
      broken: { brokenAt: 2, code: 'BAD_SIGNATURE' },
      checked: 3,
    });
  });

  /** The chain as a store from before format 2 holds it: every link format 1. */
  function formatOneChain(): DecisionLink[] {
    const chain: DecisionLink[] = [];
    DECIDED.forEach((decision, i) => {
      const n = i + 1;
      const fields = nextLinkFields(chain.at(-1) ?? null, {
        subjectId: SUBJECT,
        proposalId: `p-${n}`,
        contentHash: proposalContentHash(proposal(n), crypto),
        decision,
        decidedAt: `2026-11-0${n}T09:00:00.000Z`,
        note: `decision on proposal ${n}`,
        keyId: owner.keyId,
      });
      chain.push(sealLink({ ...fields, format: 1 }, crypto, owner));
    });
    return chain;
  }

  it('format-1 links (sealed before the rule) are each checked: a damaged one breaks the chain', () => {
    const chain = formatOneChain();
    expect(readPath(chain)).toEqual({ verified: 5, broken: null, checked: 5 });
    chain[1] = { ...at(chain, 2), signature: intruder.sign(decisionPayload(at(chain, 2))) };
    expect(readPath(chain)).toMatchObject({
      verified: 1,
      broken: { brokenAt: 2, code: 'BAD_SIGNATURE' },
    });
  });

  it('a format-2 link on top of format-1 links covers them; the format cannot be changed', () => {
    const chain = formatOneChain();
    chain[1] = { ...at(chain, 2), signature: intruder.sign(decisionPayload(at(chain, 2))) };
    // an owner process checked them all before signing link 6 (a damaged one would be refused)
    const healthy = formatOneChain();
    append(healthy, 6, 'approve');
    expect(at(healthy, 6).format).toBe(2);
    expect(readPath(healthy)).toEqual({ verified: 6, broken: null, checked: 1 });
    healthy[1] = chain[1] as DecisionLink;
    expect(readPath(healthy)).toEqual({ verified: 6, broken: null, checked: 1 });
    // a format-1 link relabelled 2, its hash recomputed: its signature no longer verifies
    const relabelled = formatOneChain();
    relabelled[4] = rehash({ ...at(relabelled, 5), format: 2 });
    expect(readPath(relabelled)).toMatchObject({
      verified: 4,
      broken: { brokenAt: 5, code: 'BAD_SIGNATURE' },
    });
    // and so it covers nothing under it: link 2's damage is found
    relabelled[1] = chain[1] as DecisionLink;
    relabelled.splice(2);
    expect(readPath(relabelled)).toMatchObject({ broken: { brokenAt: 2, code: 'BAD_SIGNATURE' } });
  });

  it('an approved proposal edited after the decision: CONTENT_CHANGED at its link, as before', () => {
    const chain = buildChain();
    const edited = (id: string): Fact | null => {
      const f = factOf(id);
      return f === null || id !== 'p-2' ? f : { ...f, text: 'the user authorized wire transfers' };
    };
    const state = new ChainState(SUBJECT, ownerOpts());
    state.extend(chain, edited, crypto);
    expect(state.length).toBe(1);
    expect(state.broken).toMatchObject({ brokenAt: 2, code: 'CONTENT_CHANGED' });
  });

  it('a damaged signature under a verified one is covered: the content is what the owner signed', () => {
    const chain = buildChain();
    const resigned = [...chain];
    resigned[1] = { ...at(chain, 2), signature: intruder.sign(decisionPayload(at(chain, 2))) };
    const garbled = [...chain];
    garbled[2] = { ...at(chain, 3), signature: 'not base64 at all!' };
    for (const damaged of [resigned, garbled]) {
      // the owner's full audit still finds it
      expect(verifyChain(damaged, ownerOpts()).ok).toBe(false);
      expect(readPath(damaged)).toEqual({ verified: 5, broken: null, checked: 1 });
      expect(stateOf(damaged).approved.has('p-2')).toBe(true);
    }
  });
});

function stateOf(chain: readonly DecisionLink[]): ChainState {
  const state = new ChainState(SUBJECT, ownerOpts());
  state.extend(chain, factOf, crypto);
  return state;
}

describe('payloads', () => {
  it('signs a versioned envelope of exactly the decision fields', () => {
    const link = buildChain()[0] as DecisionLink;
    const payload = decisionPayload(link);
    expect(JSON.parse(payload)).toEqual({
      v: 2,
      kind: 'memledger.decision',
      subjectId: SUBJECT,
      seq: 1,
      prevHash: GENESIS_HASH,
      proposalId: 'p-1',
      contentHash: link.contentHash,
      decision: 'approve',
      decidedAt: '2026-11-01T09:00:00.000Z',
      note: 'decision on proposal 1',
      keyId: owner.keyId,
    });
    expect(payload).not.toContain(link.signature);
    expect(link.hash).toBe(crypto.sha256Hex(payload));
    // a link stored before format 2 is hashed and signed as it was
    expect(JSON.parse(decisionPayload({ ...link, format: 1 }))).toMatchObject({ v: 1 });
  });

  it('changes the content hash when anything the owner approved changes', () => {
    const base = proposal(1);
    const hash = proposalContentHash(base, crypto);
    const variants: ProposalContent[] = [
      { ...base, text: base.text + '.' },
      { ...base, slot: 'stances' },
      { ...base, key: null },
      { ...base, origin: 'inferred' },
      { ...base, attested: false },
      { ...base, evidence: { ...base.evidence, quote: 'other words' } },
      { ...base, evidence: { ...base.evidence, turnId: 't-99' } },
      { ...base, validTo: '2026-12-01' },
    ];
    for (const v of variants) expect(proposalContentHash(v, crypto)).not.toBe(hash);
  });

  it('encodes absent world times as null, so omitting them is stable', () => {
    const base = proposal(1);
    expect(proposalContentPayload(base)).toBe(
      proposalContentPayload({ ...base, validFrom: null, validTo: null }),
    );
    expect(JSON.parse(proposalContentPayload(base))).toMatchObject({
      v: 1,
      kind: 'memledger.proposal',
      id: 'p-1',
    });
  });
});

describe('nextLinkFields and sealLink', () => {
  const input = {
    subjectId: SUBJECT,
    proposalId: 'p-1',
    contentHash: 'c'.repeat(64),
    decision: 'approve' as const,
    decidedAt: '2026-11-01T09:00:00Z',
    note: '',
    keyId: 'ed25519:0000000000000000',
  };

  it('starts at seq 1 from genesis and follows the previous link', () => {
    const first = nextLinkFields(null, input);
    expect(first).toMatchObject({ seq: 1, prevHash: GENESIS_HASH });
    const chain = buildChain();
    const next = nextLinkFields(at(chain, 5), { ...input, keyId: owner.keyId });
    expect(next).toMatchObject({ seq: 6, prevHash: at(chain, 5).hash });
  });

  it('keeps only the decision fields', () => {
    const fields = nextLinkFields(null, { ...input, extra: 'x' } as typeof input);
    expect(Object.keys(fields).sort()).toEqual(
      [
        'contentHash',
        'decidedAt',
        'decision',
        'format',
        'keyId',
        'note',
        'prevHash',
        'proposalId',
        'seq',
        'subjectId',
      ].sort(),
    );
  });

  it('refuses malformed input', () => {
    const bad = [
      { ...input, decision: 'maybe' as 'approve' },
      { ...input, contentHash: 'C'.repeat(64) },
      { ...input, contentHash: 'c'.repeat(63) },
      { ...input, decidedAt: '2026-11-01 09:00:00' },
      { ...input, decidedAt: '2026-11-01T09:00:00+01:00' },
      { ...input, proposalId: '' },
      { ...input, keyId: '' },
    ];
    for (const b of bad) {
      expect(() => nextLinkFields(null, b)).toThrow(EngineError);
    }
    const chain = buildChain();
    expect(() => nextLinkFields(at(chain, 5), { ...input, subjectId: 'other' })).toThrow(
      EngineError,
    );
  });

  it('refuses to seal a link with a signer that holds another key', () => {
    const fields = nextLinkFields(null, { ...input, keyId: owner.keyId });
    expect(() => sealLink(fields, crypto, intruder)).toThrow(EngineError);
  });
});

describe('forget links: a decided proposal gone on the owner’s word', () => {
  /** Appends a forget link naming `facts`, sealed by `signer`. */
  function forget(chain: DecisionLink[], facts: string[], signer = owner): void {
    const note = forgetNote(targetsOf('fact', { facts }));
    const fields = nextLinkFields(chain.at(-1) ?? null, {
      subjectId: SUBJECT,
      proposalId: forgetTarget(`f-${chain.length}`),
      contentHash: crypto.sha256Hex(note),
      decision: 'forget',
      decidedAt: '2026-11-09T09:00:00.000Z',
      note,
      keyId: owner.keyId,
    });
    chain.push(sealLink(fields, crypto, { keyId: owner.keyId, sign: (x) => signer.sign(x) }));
  }
  const without =
    (gone: string) =>
    (id: string): Fact | null =>
      id === gone ? null : factOf(id);

  it('a fresh read and a read link by link agree: the fact is not live, the chain unbroken', () => {
    const chain = buildChain();
    forget(chain, ['p-2']);
    const fresh = new ChainState(SUBJECT, ownerOpts());
    fresh.extend(chain, without('p-2'), crypto);
    expect(fresh.broken).toBeNull();
    expect(fresh.length).toBe(6);
    expect(fresh.chainLive()).not.toContain('p-2');
    expect(fresh.forgottenFacts.get('p-2')).toBe(6);

    const stepwise = new ChainState(SUBJECT, ownerOpts());
    stepwise.extend(chain.slice(0, 5), factOf, crypto);
    expect(stepwise.chainLive()).toContain('p-2');
    stepwise.extend(chain.slice(5), without('p-2'), crypto);
    expect(stepwise.chainLive().sort()).toEqual(fresh.chainLive().sort());
    expect(stepwise.lastApproval('what_i_know_about_user', 'shift_pattern')).toEqual(
      fresh.lastApproval('what_i_know_about_user', 'shift_pattern'),
    );
  });

  it('a forget link another key signed takes nothing away: the missing fact breaks the chain at its approval', () => {
    const chain = buildChain();
    forget(chain, ['p-2'], intruder);
    const state = new ChainState(SUBJECT, ownerOpts());
    state.extend(chain, without('p-2'), crypto);
    expect(state.broken).toMatchObject({ brokenAt: 2, code: 'CONTENT_CHANGED' });
    expect(state.length).toBe(1);
  });

  it('a missing fact no forget names breaks the chain at its approval (negative control)', () => {
    const chain = buildChain();
    forget(chain, ['p-4']);
    const state = new ChainState(SUBJECT, ownerOpts());
    state.extend(chain, without('p-2'), crypto);
    expect(state.broken).toMatchObject({ brokenAt: 2, code: 'CONTENT_CHANGED' });
  });
});

describe('policy links: the forget policy in effect is the last verified one', () => {
  function policy(chain: DecisionLink[], note: string, contentHash = crypto.sha256Hex(note)): void {
    const fields = nextLinkFields(chain.at(-1) ?? null, {
      subjectId: SUBJECT,
      proposalId: FORGET_POLICY_TARGET,
      contentHash,
      decision: 'policy',
      decidedAt: '2026-11-09T09:00:00.000Z',
      note,
      keyId: owner.keyId,
    });
    chain.push(sealLink(fields, crypto, owner));
  }

  it('reads the last policy link, fresh or link by link', () => {
    const chain = buildChain();
    policy(chain, forgetPolicyNote({ honourRequests: true, retainDays: 30 }));
    policy(chain, forgetPolicyNote({ honourRequests: false, retainDays: 90 }));
    const fresh = new ChainState(SUBJECT, ownerOpts());
    fresh.extend(chain, factOf, crypto);
    expect(fresh.broken).toBeNull();
    expect(fresh.forgetPolicy).toEqual({ honourRequests: false, retainDays: 90, seq: 7 });
    const stepwise = new ChainState(SUBJECT, ownerOpts());
    stepwise.extend(chain.slice(0, 6), factOf, crypto);
    expect(stepwise.forgetPolicy).toEqual({ honourRequests: true, retainDays: 30, seq: 6 });
    stepwise.extend(chain.slice(6), factOf, crypto);
    expect(stepwise.forgetPolicy).toEqual(fresh.forgetPolicy);
  });

  it('a policy link whose note is not what its hash sealed allows nothing (negative control)', () => {
    const chain = buildChain();
    policy(
      chain,
      forgetPolicyNote({ honourRequests: true, retainDays: 1 }),
      crypto.sha256Hex('something else'),
    );
    const state = new ChainState(SUBJECT, ownerOpts());
    state.extend(chain, factOf, crypto);
    expect(state.broken).toBeNull();
    expect(state.forgetPolicy).toEqual({ honourRequests: false, retainDays: null, seq: 6 });
    expect(
      parseForgetPolicyNote('{"kind":"memledger.forget-policy","retainDays":-3}', 'x', () => 'x'),
    ).toEqual({ honourRequests: false, retainDays: null });
  });
});
