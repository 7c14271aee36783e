import { canonicalEncode } from './canonical.js';

/** The roles a token can carry; the owner's powers are never a token's (DESIGN.md, trust model). */
export const TOKEN_ROLES = ['agent', 'reader'] as const;
/** One of `TOKEN_ROLES`. */
export type TokenRole = (typeof TOKEN_ROLES)[number];

/** What every token's secret starts with, so a leaked one is recognisable in logs and scanners. */
export const TOKEN_PREFIX = 'mlt_';

/** A token as the owner sees it: never its secret, which is stored only as a SHA-256 hash. */
export interface TokenInfo {
  id: string;
  /** The one subject the token acts for; no route or tool takes a subject from its caller. */
  subject: string;
  role: TokenRole;
  name: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/** The fields the owner signs when a token is made: a changed role, subject or hash fails. */
export interface TokenGrant {
  storeId: string;
  id: string;
  subject: string;
  role: TokenRole;
  name: string | null;
  tokenHash: string;
  keyId: string;
  createdAt: string;
}

/** The canonical text an owner signature over a token grant covers. */
export function tokenGrantPayload(g: TokenGrant): string {
  return canonicalEncode({
    kind: 'memledger-token',
    storeId: g.storeId,
    id: g.id,
    subject: g.subject,
    role: g.role,
    name: g.name,
    tokenHash: g.tokenHash,
    keyId: g.keyId,
    createdAt: g.createdAt,
  });
}

/** Whether `secret` has a token's shape: the prefix and 43 base64url characters (32 bytes). */
export function hasTokenShape(secret: string): boolean {
  return /^mlt_[A-Za-z0-9_-]{43}$/.test(secret);
}
