import { anchoredHead, anchorKeyMismatch } from '../domain/anchor.js';
import type { ChainCrypto, ChainReport } from '../domain/decision-chain.js';
import type { TrustView } from '../domain/trust.js';
import type { SqlClient, SqlExecutor } from '../store/sql-client.js';
import { SubjectSql } from '../store/subject-sql.js';
import { auditChain, decisionProblem } from './chain-audit.js';
import { NeutralWrites } from './neutral-writes.js';
import { createTrustVerifier, type AnchorSource } from './trust-verifier.js';
import type { AuditOptions, Trust } from './trust-types.js';

export type { AuditOptions, HeldTrust, Trust, TrustReader } from './trust-types.js';

/** Trust for one engine: the verifier, and the full audit beside it. */
export function createTrust(deps: {
  client: SqlClient;
  crypto: ChainCrypto;
  clock: () => Date;
  /** The store's id, to pick the anchored head recorded for it. */
  storeId: string;
  /** The owner's key and heads from outside the store; asked on every read. */
  anchor?: AnchorSource;
  /**
   * Where reads get the view instead (the store's host, which keeps it between processes:
   * host-views.ts). Owner decisions and the full audit still verify here.
   */
  remoteView?: (subjectId: string) => Promise<TrustView>;
}): Trust {
  // the engine's own transactions that wrote nothing a view reads (ModuleDeps.wroteNeutral)
  const neutral = new NeutralWrites();
  const verifier = createTrustVerifier({ ...deps, neutral });
  const { client, crypto } = deps;
  const full = (subjectId: string, head?: Parameters<typeof auditChain>[3]) =>
    auditChain(client, subjectId, deps, head);

  async function audit(subjectId: string, options: AuditOptions): Promise<ChainReport> {
    const head = options.signedHead;
    const given =
      options.anchor ??
      (options.ownerKey === undefined && head === undefined
        ? (verifier.anchor(subjectId) ?? undefined)
        : undefined);
    const key = given ?? options.ownerKey;
    if (key !== undefined) {
      const stored = await new SubjectSql(client).get(subjectId);
      const mismatch =
        given === undefined
          ? stored?.ownerKeyId !== key.keyId || stored.ownerPublicKey !== key.publicKeyPem
            ? `the store's owner key (${stored?.ownerKeyId ?? 'none'}) is not the key in the owner's key file (${key.keyId})`
            : null
          : anchorKeyMismatch(
              given,
              { keyId: stored?.ownerKeyId ?? null, publicKeyPem: stored?.ownerPublicKey ?? null },
              crypto,
            );
      if (mismatch !== null) {
        const { length } = await full(subjectId);
        return { ok: false, length, brokenAt: 1, code: 'KEY_MISMATCH', reason: mismatch };
      }
    }
    // the head the anchor recorded for this store, or for a chain with the same first link
    const report = await full(
      subjectId,
      given === undefined ? head : (root) => anchoredHead(given, deps.storeId, root) ?? undefined,
    );
    if (!report.ok) return report;
    // a head this process verified earlier, that the store no longer holds
    const cut = (await verifier.view(subjectId)).chain.headCut;
    if (cut !== null) {
      return {
        ok: false,
        length: report.length,
        brokenAt: Math.min(cut.expected.seq, report.length + 1),
        code: 'HEAD_CUT',
        reason: cut.reason,
      };
    }
    return report;
  }

  async function auditWithin(db: SqlExecutor, subjectId: string): Promise<ChainReport> {
    const anchor = verifier.anchor(subjectId);
    if (anchor !== null) {
      const stored = await new SubjectSql(db).get(subjectId);
      const mismatch = anchorKeyMismatch(
        anchor,
        { keyId: stored?.ownerKeyId ?? null, publicKeyPem: stored?.ownerPublicKey ?? null },
        crypto,
      );
      if (mismatch !== null) {
        const { length } = await auditChain(db, subjectId, deps);
        return { ok: false, length, brokenAt: 1, code: 'KEY_MISMATCH', reason: mismatch };
      }
    }
    return auditChain(db, subjectId, deps, (root) =>
      anchor === null ? undefined : (anchoredHead(anchor, deps.storeId, root) ?? undefined),
    );
  }

  const withSubject: Trust['withSubject'] = (subjectId, fn) =>
    verifier.withSubject(subjectId, (held) =>
      fn({
        ...held,
        async check(db) {
          const chain = await held.chain(db);
          const view = await held.view(db);
          return { chain, problem: await decisionProblem(db, subjectId, view, chain) };
        },
      }),
    );

  const remote = deps.remoteView;
  return {
    ...verifier,
    ...(remote === undefined ? {} : { view: (subjectId: string) => remote(subjectId) }),
    withSubject,
    audit,
    auditWithin,
    wroteNeutral: (xid) => neutral.add(xid),
  };
}
