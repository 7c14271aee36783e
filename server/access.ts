import { ServerError } from './server-errors.js';
import type { Engine, SubjectHandle, TokenRole } from '../src/index.js';

/** Who a request acts as: one token's subject and role. A face reads the subject from nothing else. */
export interface Caller {
  /** The token's id; null for `memledger mcp --subject S` on the owner's own local store. */
  readonly tokenId: string | null;
  readonly subject: string;
  readonly role: TokenRole;
  readonly handle: SubjectHandle;
}

/** The caller an `Authorization: Bearer <token>` header names; TOKEN_REQUIRED when there is none. */
export async function authenticateBearer(
  engine: Engine,
  authorization: string | undefined,
): Promise<Caller> {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
  const secret = match?.[1];
  if (secret === undefined) {
    throw new ServerError(
      'TOKEN_REQUIRED',
      'this API needs a token: send "Authorization: Bearer <token>" (memledger token create)',
    );
  }
  return callerForToken(engine, secret);
}

/** The caller a token's secret names (TOKEN_INVALID, TOKEN_REVOKED otherwise). */
export async function callerForToken(engine: Engine, secret: string): Promise<Caller> {
  const token = await engine.tokens.authenticate(secret);
  return Object.freeze({
    tokenId: token.id,
    subject: token.subject,
    role: token.role,
    handle: engine.subject(token.subject),
  });
}

/** The owner's own caller for a local store (`memledger mcp --subject S`): an agent, no token. */
export async function localCaller(engine: Engine, subject: string): Promise<Caller> {
  const handle = engine.subject(subject);
  await handle.sessions.list({ limit: 1 }); // SUBJECT_NOT_FOUND now, not on the first tool call
  return Object.freeze({ tokenId: null, subject, role: 'agent', handle });
}
