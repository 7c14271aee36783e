import {
  nextLinkFields,
  proposalContentHash,
  sealLink,
  verifyChain,
  type ChainCrypto,
  type ChainReport,
  type Decision,
  type DecisionLink,
  type LinkSigner,
} from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import type { Fact } from '../domain/fact.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { DecisionSql, lockChain } from '../store/decision-sql.js';
import { FactSql } from '../store/fact-sql.js';
import { SubjectSql } from '../store/subject-sql.js';

/** Signs with the owner's private key; only a process holding the key file and passphrase has one. */
export type OwnerSigner = LinkSigner & { publicKeyPem: string };

export interface DecideInput {
  /** The subject whose proposal it is; another subject's proposal is PROPOSAL_NOT_FOUND. */
  subjectId: string;
  proposalId: string;
  decision: Decision;
  note?: string;
  signer: OwnerSigner;
}

export interface DecideResult {
  proposalId: string;
  decision: Decision;
  status: Fact['status'];
  seq: number;
  hash: string;
  superseded: string | null;
}

export function contentHashOf(crypto: ChainCrypto, f: Fact): string {
  return proposalContentHash(
    {
      id: f.id,
      subjectId: f.subjectId,
      slot: f.slot,
      key: f.key,
      text: f.text,
      origin: f.origin,
      evidence: {
        turnId: f.evidence.turnId,
        seq: f.evidence.seq,
        quote: f.evidence.quote,
        tool: f.evidence.tool,
      },
      attested: f.attested,
      validFrom: f.validFrom?.toISOString() ?? null,
      validTo: f.validTo?.toISOString() ?? null,
    },
    crypto,
  );
}

/**
 * Owner decisions: each appends a signed link to the subject's hash chain. A proposal goes live
 * only when the chain up to its decision verifies under the subject's owner key; a broken chain
 * stops every promotion with CHAIN_BROKEN.
 */
export class OwnerDecisions {
  constructor(
    private readonly client: SqlClient,
    private readonly crypto: ChainCrypto,
    private readonly clock: () => Date,
  ) {}

  async verify(subjectId: string, db: SqlExecutor = this.client): Promise<ChainReport> {
    const subject = await new SubjectSql(db).get(subjectId);
    if (subject === null)
      throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subjectId}" does not exist`);
    const links = await new DecisionSql(db).chain(subjectId);
    if (subject.ownerPublicKey === null || subject.ownerKeyId === null) {
      if (links.length === 0)
        return verifyChain([], { crypto: this.crypto, publicKeyPem: '', keyId: '' });
      return {
        ok: false,
        length: links.length,
        brokenAt: 1,
        code: 'KEY_MISMATCH',
        reason: 'the subject has decisions but no owner key',
      };
    }
    const facts = new FactSql(db);
    const hashes = new Map<string, string | null>();
    for (const link of links) {
      if (hashes.has(link.proposalId)) continue;
      const fact = await facts.get(subjectId, link.proposalId);
      hashes.set(link.proposalId, fact === null ? null : contentHashOf(this.crypto, fact));
    }
    const report = verifyChain(links, {
      crypto: this.crypto,
      publicKeyPem: subject.ownerPublicKey,
      keyId: subject.ownerKeyId,
      currentContentHash: (id) => hashes.get(id) ?? null,
    });
    if (!report.ok) return report;
    return (await this.auditStatuses(subjectId, links, facts)) ?? report;
  }

  /**
   * A chain proves its prefix, not its length, and says nothing of the rows it decided. Every
   * fact out of the pile must agree with its last decision (approve: active, superseded or
   * retracted; reject: rejected), or have no decision for a reason the store can show: an action
   * promoted on a checked receipt in an auto-live slot, or a restoration by a probe-settled
   * retraction of a fact that itself passes this audit.
   */
  private async auditStatuses(
    subjectId: string,
    links: readonly DecisionLink[],
    facts: FactSql,
  ): Promise<ChainReport | null> {
    const last = new Map(links.map((l) => [l.proposalId, l]));
    const rows = await facts.decisionAudit(subjectId);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const justified = (id: string, depth: number): boolean => {
      const row = byId.get(id);
      if (row === undefined || depth > 32) return false;
      const link = last.get(id);
      if (link !== undefined) return link.decision === 'approve';
      if (row.receiptOk) return true;
      return row.restoredOriginal !== null && justified(row.restoredOriginal, depth + 1);
    };
    for (const row of rows) {
      const link = last.get(row.id);
      if (link !== undefined) {
        const ok =
          link.decision === 'approve'
            ? ['active', 'superseded', 'retracted'].includes(row.status)
            : row.status === 'rejected';
        if (!ok) {
          return {
            ok: false,
            length: links.length,
            brokenAt: link.seq,
            code: 'STATUS_MISMATCH',
            reason: `fact ${row.id} is ${row.status}, but its decision (link ${link.seq}) was ${link.decision}`,
          };
        }
      } else if (!justified(row.id, 0)) {
        return {
          ok: false,
          length: links.length,
          brokenAt: links.length + 1,
          code: 'MISSING_DECISION',
          reason: `fact ${row.id} is ${row.status} with no decision in the chain and no receipt or restoration that explains it`,
        };
      }
    }
    return null;
  }

  async decide(input: DecideInput): Promise<DecideResult> {
    const { subjectId } = input;
    if ((await new FactSql(this.client).get(subjectId, input.proposalId)) === null)
      throw new EngineError('PROPOSAL_NOT_FOUND', `no proposal "${input.proposalId}"`);
    return this.client.transaction(async (tx) => {
      await lockChain(tx, subjectId);
      const subject = await new SubjectSql(tx).get(subjectId);
      if (subject?.ownerKeyId == null || subject.ownerPublicKey === null) {
        throw new EngineError(
          'NO_OWNER_KEY',
          `subject "${subjectId}" has no owner key to verify decisions with; store one first`,
        );
      }
      const report = await this.verify(subjectId, tx);
      if (!report.ok) {
        throw new EngineError(
          'CHAIN_BROKEN',
          `the decision chain is broken at link ${report.brokenAt}: ${report.reason}`,
          {
            data: { brokenAt: report.brokenAt, chainCode: report.code },
          },
        );
      }
      if (
        input.signer.keyId !== subject.ownerKeyId ||
        input.signer.publicKeyPem !== subject.ownerPublicKey
      ) {
        throw new EngineError(
          'WRONG_KEY',
          `this key (${input.signer.keyId}) is not the owner key of "${subjectId}"`,
        );
      }
      const facts = new FactSql(tx);
      const fact = await facts.get(subjectId, input.proposalId);
      if (fact === null || fact.status !== 'proposed') {
        throw new EngineError(
          'NOT_PENDING',
          `proposal "${input.proposalId}" is ${fact?.status ?? 'gone'}, not pending`,
        );
      }
      const decisions = new DecisionSql(tx);
      const links = await decisions.chain(subjectId);
      const fields = nextLinkFields(links.at(-1) ?? null, {
        subjectId,
        proposalId: fact.id,
        contentHash: contentHashOf(this.crypto, fact),
        decision: input.decision,
        decidedAt: this.clock().toISOString(),
        note: input.note ?? '',
        keyId: input.signer.keyId,
      });
      const link = sealLink(fields, this.crypto, input.signer);
      await decisions.append(link);
      // The decision must verify in place before anything goes live.
      const after = await this.verify(subjectId, tx);
      if (!after.ok) {
        throw new EngineError('CHAIN_BROKEN', `the new decision does not verify: ${after.reason}`, {
          data: { brokenAt: after.brokenAt, chainCode: after.code },
        });
      }
      const at = new Date(fields.decidedAt);
      let superseded: string | null = null;
      if (input.decision === 'approve')
        superseded = (await facts.promote(subjectId, fact.id, at, 'owner')).superseded;
      else await facts.setStatus(subjectId, fact.id, 'rejected', at);
      return {
        proposalId: fact.id,
        decision: input.decision,
        status: input.decision === 'approve' ? 'active' : 'rejected',
        seq: link.seq,
        hash: link.hash,
        superseded,
      };
    });
  }
}
