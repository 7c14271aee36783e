/**
 * A bench subject's owner-decision chain, built in memory with the chain's own pure functions
 * (nextLinkFields, sealLink, factContentHash, the delegation payload) and signed with a real
 * owner key, then bulk-inserted. `owner.decide` verifies the whole chain before each link, so
 * 10,000 of them one by one would take hours; the links written here are exactly the links it
 * writes, and `assertChainOk` proves it with the engine's own full check.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeChainCrypto } from '../../src/crypto/chain-crypto.js';
import {
  delegationPayload,
  delegationTarget,
  nextLinkFields,
  sealLink,
  type DecisionLink,
} from '../../src/domain/decision-chain.js';
import type { OwnerAnchor } from '../../src/domain/anchor.js';
import type { Fact } from '../../src/domain/fact.js';
import { delegationNote } from '../../src/domain/trust.js';
import { factContentHash } from '../../src/domain/chain-state.js';
import { storeClient } from '../../src/engine/test-access.js';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type OwnerSigner,
} from '../../src/index.js';
import { DecisionSql } from '../../src/store/decision-sql.js';
import { FACT_COLUMNS, toFact, type FactDbRow } from '../../src/store/fact-sql.js';
import { SlotSql } from '../../src/store/slot-sql.js';
import { BenchError } from './bench-error.js';

/** One thing the owner signed: a decision on a stored proposal, or a slot delegation. */
export type ChainEntry =
  | { kind: 'decide'; fact: Fact; decision: 'approve' | 'reject'; at: Date }
  | { kind: 'delegate'; slot: string; tools: readonly string[]; at: Date };

const BATCH = 2_000;

/**
 * A fresh owner key, made and opened the way the CLI does it (generated, written to a key file
 * encrypted under a passphrase, loaded back); the file is removed once the signer is open.
 */
export function benchOwnerSigner(): OwnerSigner {
  const passphrase = 'bench owner passphrase';
  const generated = generateOwnerKey(passphrase);
  const dir = mkdtempSync(join(tmpdir(), 'memledger-bench-key-'));
  try {
    const path = join(dir, 'owner.key');
    writeOwnerKeyFile(path, generated.keyFile);
    return loadOwnerKey(path, passphrase);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The engine's anchor for a bench owner: its key, held from outside the store as a user's key
 * file holds it (an unanchored read carries a note in its integrity block, which the arrival
 * bench refuses).
 */
export function benchAnchor(signer: OwnerSigner): (subjectId: string) => OwnerAnchor {
  const anchor = {
    keyId: signer.keyId,
    publicKeyPem: signer.publicKeyPem,
    source: 'the bench owner key',
  };
  return () => anchor;
}

/**
 * The signed links for `entries`, in their order (seq 1 first). Each decision signs the content
 * hash of its fact as passed in: pass facts as stored, or the chain will not verify.
 */
export function sealChain(
  subjectId: string,
  entries: readonly ChainEntry[],
  signer: OwnerSigner,
  /** The link the first entry follows (null: the first entry is link 1). */
  after: DecisionLink | null = null,
): DecisionLink[] {
  const links: DecisionLink[] = [];
  let prev: DecisionLink | null = after;
  for (const e of entries) {
    const common = { subjectId, decidedAt: e.at.toISOString(), keyId: signer.keyId };
    const input =
      e.kind === 'decide'
        ? {
            ...common,
            proposalId: e.fact.id,
            contentHash: factContentHash(e.fact, nodeChainCrypto),
            decision: e.decision,
            note: '',
          }
        : {
            ...common,
            proposalId: delegationTarget(e.slot),
            contentHash: nodeChainCrypto.sha256Hex(
              delegationPayload({ subjectId, slot: e.slot, autoLive: true, tools: e.tools }),
            ),
            decision: 'delegate' as const,
            note: delegationNote(true, e.tools),
          };
    const link = sealLink(nextLinkFields(prev, input), nodeChainCrypto, signer);
    links.push(link);
    prev = link;
  }
  return links;
}

/** Stores the signer's public key on the subject and bulk-inserts its links. */
export async function storeChain(
  engine: Engine,
  subjectId: string,
  signer: OwnerSigner,
  links: readonly DecisionLink[],
): Promise<void> {
  await engine
    .subject(subjectId)
    .owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
  await insertLinks(engine, links);
}

async function insertLinks(engine: Engine, links: readonly DecisionLink[]): Promise<void> {
  const sql = storeClient(engine);
  for (let i = 0; i < links.length; i += BATCH) {
    const b = links.slice(i, i + BATCH);
    const col = <K extends keyof DecisionLink>(k: K) => b.map((l) => l[k]);
    await sql.query(
      `INSERT INTO decisions (subject_id, seq, proposal_id, content_hash, decision, decided_at, note,
                              key_id, prev_hash, hash, signature, format)
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[],
                            $7::text[], $8::text[], $9::text[], $10::text[], $11::text[],
                            $12::smallint[])`,
      [
        col('subjectId'),
        col('seq'),
        col('proposalId'),
        col('contentHash'),
        col('decision'),
        col('decidedAt'),
        col('note'),
        col('keyId'),
        col('prevHash'),
        col('hash'),
        col('signature'),
        col('format'),
      ],
    );
  }
}

/**
 * Lengthens a subject's signed chain to `length` links with delegations of the action slot
 * `slot` to `tools` (each the same grant, signed again), after its last link, and records the
 * grant on the slot as `owner.delegate` would. Returns the links added.
 */
export async function padChain(
  engine: Engine,
  subjectId: string,
  signer: OwnerSigner,
  length: number,
  slot: string,
  tools: readonly string[],
): Promise<number> {
  const chain = await new DecisionSql(storeClient(engine)).chain(subjectId);
  const tip = chain.at(-1) ?? null;
  const add = length - chain.length;
  if (add <= 0) return 0;
  await engine.subject(subjectId).slots.declare({ name: slot, rule: 'action' });
  const start = tip === null ? Date.now() : Date.parse(tip.decidedAt);
  const entries: ChainEntry[] = Array.from({ length: add }, (_, i) => ({
    kind: 'delegate',
    slot,
    tools,
    at: new Date(start + (i + 1) * 1000),
  }));
  await insertLinks(engine, sealChain(subjectId, entries, signer, tip));
  await new SlotSql(storeClient(engine)).delegate(subjectId, slot, true, tools);
  return add;
}

/** The subject's facts out of the pile, as stored, with who promoted them. */
export async function decidedFacts(
  engine: Engine,
  subjectId: string,
): Promise<Array<{ fact: Fact; promotedBy: string | null }>> {
  const { rows } = await storeClient(engine).query<FactDbRow & { promoted_by: string | null }>(
    `SELECT ${FACT_COLUMNS}, promoted_by FROM facts WHERE subject_id = $1 AND status <> 'proposed'`,
    [subjectId],
  );
  return rows.map((r) => ({ fact: toFact(r), promotedBy: r.promoted_by }));
}

/** Orders entries by time (a stable sort: entries at the same moment keep their order). */
export function byTime(entries: ChainEntry[]): ChainEntry[] {
  return entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.at.getTime() - b.e.at.getTime() || a.i - b.i)
    .map((x) => x.e);
}

/**
 * The engine's full check of the subject's chain (every link, every decided proposal's content,
 * every status, every delegation), anchored by the signer's public key: anything but ok with
 * `length` links stops the bench, since its figures would measure a broken or short chain. So
 * does the check saying anything but KEY_MISMATCH when anchored by another owner's key.
 */
export async function assertChainOk(
  engine: Engine,
  subjectId: string,
  signer: OwnerSigner,
  length: number,
): Promise<{ verifyMs: number }> {
  const t0 = performance.now();
  const report = await engine.subject(subjectId).owner.verifyChain({
    ownerKey: { keyId: signer.keyId, publicKeyPem: signer.publicKeyPem },
  });
  const verifyMs = performance.now() - t0;
  if (!report.ok) {
    throw new BenchError(
      `subject "${subjectId}": the seeded chain does not verify: link ${report.brokenAt} ` +
        `(${report.code}): ${report.reason}`,
    );
  }
  if (report.length !== length) {
    throw new BenchError(
      `subject "${subjectId}": the chain verifies with ${report.length} links, expected ${length}`,
    );
  }
  // the negative control: anchored by another key, the same chain must not verify
  const other = (otherKey ??= generateOwnerKey('another owner'));
  const refused = await engine.subject(subjectId).owner.verifyChain({
    ownerKey: { keyId: other.keyId, publicKeyPem: other.publicKeyPem },
  });
  if (refused.ok || refused.code !== 'KEY_MISMATCH') {
    throw new BenchError(
      `subject "${subjectId}": anchored by another key, the chain check said ${refused.ok ? 'ok' : refused.code}, not KEY_MISMATCH`,
    );
  }
  return { verifyMs };
}

let otherKey: { keyId: string; publicKeyPem: string } | undefined;
