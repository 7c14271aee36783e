import { writeFileSync } from 'node:fs';
import { EngineError } from '../../src/domain/errors.js';
import { TOKEN_ROLES, type TokenInfo } from '../../src/domain/token.js';
import type { Engine } from '../../src/index.js';
import { defineCommand } from '../command.js';
import { recordRevokedToken, recordSignedHead } from '../head-file.js';
import { KEY_OPTIONS, ownerSigner } from '../owner-key-options.js';
import { SUBJECT_OPTION } from '../options.js';

const infoJson = (t: TokenInfo) => ({
  id: t.id,
  subject: t.subject,
  role: t.role,
  name: t.name,
  createdAt: t.createdAt.toISOString(),
  revokedAt: t.revokedAt === null ? null : t.revokedAt.toISOString(),
});

const infoLine = (t: TokenInfo): string =>
  `${t.id}  ${t.role.padEnd(6)}  ${t.subject}  ${t.name ?? '-'}  made ${t.createdAt.toISOString()}` +
  (t.revokedAt === null ? '' : `  REVOKED ${t.revokedAt.toISOString()}`);

/** Writes the secret to a new file only its owner can read; never over an existing file. */
function writeTokenFile(path: string, token: string): void {
  try {
    writeFileSync(path, token + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'EEXIST' ? 'it exists' : String(err);
    throw new EngineError('INVALID_ARGUMENT', `cannot write the token to ${path}: ${why}`, {
      data: { field: 'out' },
      cause: err,
    });
  }
}

export const tokenCreateCommand = defineCommand({
  path: ['token', 'create'],
  summary:
    'Makes an agent or reader token for `memledger serve` / `memledger mcp`, signed with the owner key; the secret is shown once.',
  options: {
    role: { kind: 'choice', choices: TOKEN_ROLES, required: true, help: 'agent or reader' },
    ...SUBJECT_OPTION,
    name: { kind: 'text', value: 'N', help: 'a name to tell tokens apart in `token list`' },
    out: {
      kind: 'text',
      value: 'F',
      help: 'write the secret to a new file F (mode 600) instead of printing it',
    },
    ...KEY_OPTIONS,
  },
  async run(ctx) {
    const { role, name, out } = ctx.values;
    const made = await ctx.withEngine(false, async (engine) => {
      const me = engine.subject(ctx.values.subject);
      const { signer } = await ownerSigner(ctx, me);
      const created = await me.owner.createToken({
        role,
        signer,
        ...(name === undefined ? {} : { name }),
      });
      if (out !== undefined) writeTokenFile(out, created.token);
      return created;
    });
    const doc = {
      ...(out === undefined ? { token: made.token } : { tokenFile: out }),
      ...infoJson(made.info),
    };
    ctx.print(doc, () =>
      out === undefined
        ? `${made.token}\n${infoLine(made.info)}\nThis is the only time the token is shown; keep it like a password.`
        : `wrote the token to ${out}\n${infoLine(made.info)}`,
    );
  },
});

/** The tokens of one subject, or of every subject in order (each subject's owner namespace). */
async function everyToken(engine: Engine, subject?: string): Promise<TokenInfo[]> {
  const subjects = subject === undefined ? await engine.subjects.list() : [subject];
  const lists = [];
  for (const s of subjects) lists.push(await engine.subject(s).owner.tokens());
  return lists.flat();
}

export const tokenListCommand = defineCommand({
  path: ['token', 'list'],
  summary: 'Lists the tokens (never their secrets), of one subject with --subject.',
  options: { subject: SUBJECT_OPTION.subject },
  async run(ctx) {
    const { subject } = ctx.values;
    const tokens = await ctx.withEngine(false, (engine) => everyToken(engine, subject));
    ctx.print({ tokens: tokens.map(infoJson) }, () =>
      tokens.length === 0 ? 'no tokens' : tokens.map(infoLine).join('\n'),
    );
  },
});

export const tokenRevokeCommand = defineCommand({
  path: ['token', 'revoke'],
  summary: 'Revokes a token at once; the servers refuse it from the next request on.',
  positionals: ['<id>'],
  options: { ...KEY_OPTIONS },
  async run(ctx) {
    const [id] = ctx.positionals;
    if (id === undefined) {
      throw new EngineError('INVALID_ARGUMENT', 'usage: memledger token revoke <id>');
    }
    const revoked = await ctx.withEngine(false, async (engine) => {
      // Found before the passphrase is asked for: an unknown id needs no key.
      const found = (await everyToken(engine)).find((t) => t.id === id);
      if (found === undefined) {
        throw new EngineError('TOKEN_NOT_FOUND', `no token has the id "${id}"`);
      }
      const me = engine.subject(found.subject);
      const { signer, keyFile } = await ownerSigner(ctx, me);
      const result = await me.owner.revokeToken({ id, signer });
      // recorded beside the key file: anchored processes refuse it whatever the store says; the
      // link's head too, so a cut of it is found
      recordRevokedToken(ctx, keyFile, me, id);
      if (result.head !== undefined) recordSignedHead(ctx, keyFile, me, result.head);
      if (result.unsigned !== undefined) {
        ctx.io.stderr(
          `memledger: token ${id} is revoked in the store and beside the key file, but no signed link could be added: ${result.unsigned}\n`,
        );
      }
      return result;
    });
    ctx.print(infoJson(revoked), () => `revoked ${infoLine(revoked)}`);
  },
});
