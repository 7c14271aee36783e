import { randomBytes } from 'node:crypto';
import type { OwnerSigner } from '../crypto/owner-key.js';
import type { ChainCrypto } from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import { invalidField, optionalString } from '../domain/input.js';
import { anchorKeyMismatch, type OwnerAnchor } from '../domain/anchor.js';
import {
  hasTokenShape,
  TOKEN_PREFIX,
  TOKEN_ROLES,
  tokenGrantPayload,
  type TokenInfo,
  type TokenRole,
} from '../domain/token.js';
import { parseChoice } from '../domain/vocabulary.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { SubjectSql } from '../store/subject-sql.js';
import { TokenSql, type TokenRow } from '../store/token-sql.js';

/** A token just made: its secret, shown this once and stored only as a hash, and its record. */
export interface CreatedToken {
  token: string;
  info: TokenInfo;
}

/** A revoked token's record, with the chain head its signed revocation made (`head`), or why none. */
export type RevokedToken = TokenInfo & {
  head?: { seq: number; hash: string; root: string };
  unsigned?: string;
};

/**
 * The owner's credentials for the servers, managed in the subject's owner namespace
 * (`handle.owner`): making and revoking a token needs the subject's owner key.
 */
export interface OwnerTokensApi {
  /** Makes an agent or reader token for this subject, its grant signed by the owner key. */
  createToken(input: {
    role: TokenRole;
    name?: string;
    signer: OwnerSigner;
  }): Promise<CreatedToken>;
  /** This subject's tokens, revoked ones too (never a secret). */
  tokens(): Promise<TokenInfo[]>;
  /**
   * Revokes one of this subject's tokens: the row at once, then a signed link in the subject's
   * chain. `head`: the chain head that link made (for the owner's head file), absent when a
   * verified link revoked it already. `unsigned`: why no link could be appended (a broken chain);
   * the row still refuses it, and an anchored process refuses it once the owner's head file
   * records it. Another subject's token reads as a missing one (TOKEN_NOT_FOUND).
   */
  revokeToken(input: { id: string; signer: OwnerSigner }): Promise<RevokedToken>;
}

/** The engine's side of tokens: what the servers authenticate with. */
export interface TokensApi {
  /** The token's record when the secret is a live, owner-signed token; TOKEN_INVALID or TOKEN_REVOKED otherwise. */
  authenticate(secret: string): Promise<TokenInfo>;
}

/** The tokens module: authentication for the engine, and each subject's owner powers over its tokens. */
export interface TokensModule extends TokensApi {
  owner(subjectId: string): OwnerTokensApi;
}

export interface TokensDeps extends ModuleDeps {
  crypto: ChainCrypto;
  /** The owner's anchor for a subject (EngineConfig.anchor): a grant verifies only under it. */
  anchor?: (subjectId: string) => OwnerAnchor | null;
  /** The tokens the verified part of the subject's chain revokes. */
  verifiedRevocations(subjectId: string): Promise<ReadonlyMap<string, number>>;
  /** Appends the owner's signed revocation link (OwnerDecisions.revokeToken). */
  revokeOnChain(input: {
    subjectId: string;
    tokenId: string;
    tokenHash: string;
    signer: OwnerSigner;
  }): Promise<{ seq: number; hash: string; root: string }>;
  storeId: string;
  /** ENGINE_CLOSED once the engine is closed. */
  assertOpen(): void;
}

const NAME_MAX = 200;

const info = (r: TokenRow): TokenInfo => ({
  id: r.id,
  subject: r.subjectId,
  role: r.role,
  name: r.name,
  createdAt: new Date(r.createdAt),
  revokedAt: r.revokedAt,
});

const invalid = (why: string): EngineError =>
  new EngineError('TOKEN_INVALID', `this token is not accepted: ${why}`);

function requireSigner(signer: unknown): OwnerSigner {
  const s = signer as Partial<OwnerSigner> | null;
  if (
    typeof s !== 'object' ||
    s === null ||
    typeof s.keyId !== 'string' ||
    typeof s.publicKeyPem !== 'string' ||
    typeof s.sign !== 'function'
  ) {
    throw invalidField('signer', 'must be the owner signer from loadOwnerKey');
  }
  return s as OwnerSigner;
}

function requireObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EngineError('INVALID_ARGUMENT', `owner.${what} takes an input object`, {
      data: { field: 'input' },
    });
  }
  return value as Record<string, unknown>;
}

export function createTokensModule(deps: TokensDeps): TokensModule {
  const { client, clock, newId, crypto, storeId } = deps;
  const tokens = new TokenSql(client);

  /** The subject's owner key, and that `signer` is it. */
  async function ownerOf(subjectId: string, signer: OwnerSigner) {
    const subject = await new SubjectSql(client).get(subjectId);
    if (subject === null) {
      throw new EngineError('SUBJECT_NOT_FOUND', `subject "${subjectId}" does not exist`);
    }
    if (subject.ownerKeyId === null || subject.ownerPublicKey === null) {
      throw new EngineError(
        'NO_OWNER_KEY',
        `subject "${subjectId}" has no owner key; a token is signed by it (memledger init)`,
      );
    }
    if (signer.keyId !== subject.ownerKeyId || signer.publicKeyPem !== subject.ownerPublicKey) {
      throw new EngineError(
        'WRONG_KEY',
        `this key (${signer.keyId}) is not the owner key of "${subjectId}" (${subject.ownerKeyId})`,
        { data: { keyId: signer.keyId, ownerKeyId: subject.ownerKeyId } },
      );
    }
  }

  /**
   * Whether a row's grant carries a valid signature by its subject's owner key, as the store holds
   * it and, when this engine holds the owner's anchor, only when the two agree.
   */
  function signedByOwner(
    row: TokenRow,
    subject: { ownerPublicKey: string | null; ownerKeyId: string | null },
  ): boolean {
    if (subject.ownerPublicKey === null || subject.ownerKeyId !== row.keyId) return false;
    const anchor = deps.anchor?.(row.subjectId) ?? null;
    if (
      anchor !== null &&
      anchorKeyMismatch(
        anchor,
        { keyId: subject.ownerKeyId, publicKeyPem: subject.ownerPublicKey },
        crypto,
      ) !== null
    ) {
      return false;
    }
    const payload = tokenGrantPayload({
      storeId,
      id: row.id,
      subject: row.subjectId,
      role: row.role,
      name: row.name,
      tokenHash: row.tokenHash,
      keyId: row.keyId,
      createdAt: row.createdAt,
    });
    return (
      (TOKEN_ROLES as readonly string[]).includes(row.role) &&
      crypto.verify(subject.ownerPublicKey, payload, row.signature)
    );
  }

  return {
    owner: (subjectId): OwnerTokensApi => ({
      async createToken(raw) {
        deps.assertOpen();
        const input = requireObject(raw, 'createToken');
        const role = parseChoice(TOKEN_ROLES, input.role, 'role');
        const name = optionalString(input.name, 'name', NAME_MAX) ?? null;
        const signer = requireSigner(input.signer);
        await ownerOf(subjectId, signer);
        const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
        const row: Omit<TokenRow, 'revokedAt'> = {
          id: `tok_${newId()}`,
          subjectId,
          role,
          name,
          tokenHash: crypto.sha256Hex(token),
          keyId: signer.keyId,
          signature: '',
          createdAt: clock().toISOString(),
        };
        row.signature = signer.sign(
          tokenGrantPayload({ storeId, ...row, subject: subjectId, id: row.id }),
        );
        await tokens.insert(row);
        return { token, info: info({ ...row, revokedAt: null }) };
      },

      async tokens() {
        deps.assertOpen();
        return (await tokens.list(subjectId)).map(info);
      },

      async revokeToken(raw) {
        deps.assertOpen();
        const input = requireObject(raw, 'revokeToken');
        if (typeof input.id !== 'string' || input.id.length === 0 || input.id.length > 200) {
          throw invalidField('id', 'must be a token id (tok_…)');
        }
        const signer = requireSigner(input.signer);
        const row = await tokens.get(input.id);
        // another subject's token reads exactly like a missing one
        if (row === null || row.subjectId !== subjectId) {
          throw new EngineError('TOKEN_NOT_FOUND', `no token has the id "${input.id}"`);
        }
        await ownerOf(row.subjectId, signer);
        // the row first: refused from now on, whatever becomes of the link
        await tokens.revoke(row.id, clock());
        const now = (): Promise<TokenRow> => tokens.get(row.id) as Promise<TokenRow>;
        // a link only the verified chain holds counts (a forged one would make this a no-op)
        if ((await deps.verifiedRevocations(row.subjectId)).has(row.id)) return info(await now());
        try {
          const link = await deps.revokeOnChain({
            subjectId: row.subjectId,
            tokenId: row.id,
            tokenHash: row.tokenHash,
            signer,
          });
          return {
            ...info(await now()),
            head: { seq: link.seq, hash: link.hash, root: link.root },
          };
        } catch (err) {
          if (!(err instanceof EngineError) || err.code !== 'CHAIN_BROKEN') throw err;
          return { ...info(await now()), unsigned: err.message };
        }
      },
    }),

    async authenticate(secret) {
      deps.assertOpen();
      if (typeof secret !== 'string' || !hasTokenShape(secret)) {
        throw invalid(`a token is "${TOKEN_PREFIX}" and 43 characters`);
      }
      const rows = await tokens.byHash(crypto.sha256Hex(secret));
      const row = rows[0];
      if (row === undefined || rows.length !== 1) throw invalid('no such token');
      if (!signedByOwner(row, row)) {
        throw invalid('its grant is not signed by its subject\u2019s owner key');
      }
      // the owner's revocation stands whatever the row says (a cleared revoked_at): a link naming
      // it in the chain, or the owner's record of it outside the store
      const anchor = deps.anchor?.(row.subjectId) ?? null;
      if (
        row.revokedAt !== null ||
        row.revokedOnChain ||
        anchor?.revokedTokens?.includes(row.id) === true
      ) {
        throw new EngineError('TOKEN_REVOKED', `token ${row.id} was revoked`, {
          data: { id: row.id },
        });
      }
      return info(row);
    },
  };
}
