import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  DEFAULT_SUBJECT,
  EngineError,
  generateOwnerKey,
  writeOwnerKeyFile,
} from '../../src/index.js';
import { requireId } from '../../src/rules.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { SUBJECT_OPTION } from '../options.js';
import { KEY_OPTIONS, keyPath, passphrase, passphraseIfGiven } from '../owner-key-options.js';

const OPTIONS = { ...SUBJECT_OPTION, ...KEY_OPTIONS } as const;

async function hasOwnerKey(ctx: CommandContext, subject: string): Promise<boolean> {
  try {
    return await ctx.withSubject(subject, async (me) => (await me.owner.key()) !== null);
  } catch (err) {
    if (
      err instanceof EngineError &&
      (err.code === 'NOT_INITIALIZED' || err.code === 'SUBJECT_NOT_FOUND')
    )
      return false;
    throw err;
  }
}

/** Writes the new key file before the store is touched; a path that cannot be written refuses. */
function writeKeyFile(path: string, keyFile: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeOwnerKeyFile(path, keyFile);
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError(
      'INVALID_ARGUMENT',
      `cannot create the owner key file ${path}: ${(err as Error).message}`,
    );
  }
}

/**
 * Creates the store and the subject, and the owner's signing key: the public half goes into the
 * store, the private half into a file encrypted under a passphrase the owner types. Every check
 * runs before anything is created, so a refused init leaves no half-made store behind.
 */
export const initCommand = defineCommand({
  path: ['init'],
  summary: 'Creates the store (if needed), the subject, and its owner key.',
  options: OPTIONS,
  async run(ctx) {
    // Checked before any I/O: a bad subject id must not leave a store or a key behind.
    const subject = requireId(ctx.values.subject ?? DEFAULT_SUBJECT, 'subject');
    const path = keyPath(ctx, subject);
    let key: ReturnType<typeof generateOwnerKey> | null = null;
    if (!(await hasOwnerKey(ctx, subject))) {
      if (existsSync(path)) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `${path} already exists; choose another --key or move it away`,
        );
      }
      let secret = passphraseIfGiven(ctx);
      if (secret === null) {
        // Typed at a terminal: asked twice, since a typo would lock the owner out of their key.
        secret = await passphrase(ctx, `Choose a passphrase for the owner key (${path}): `);
        if ((await passphrase(ctx, 'Type it again: ')) !== secret) {
          throw new EngineError(
            'INVALID_ARGUMENT',
            'the two passphrases differ; nothing was created',
          );
        }
      }
      key = generateOwnerKey(secret);
      writeKeyFile(path, key.keyFile);
    }
    let keyStored = false;
    try {
      await ctx.withEngine(true, async (engine) => {
        const result = await engine.subjects.create(subject);
        const me = engine.subject(subject);
        if (key !== null)
          await me.owner.setKey({ publicKeyPem: key.publicKeyPem, keyId: key.keyId });
        keyStored = true;
        const keyId = (await me.owner.key())?.keyId ?? '';
        const keyFile = key === null ? null : path;
        ctx.print(
          {
            db: engine.location,
            engine: engine.kind,
            subject,
            created: result.created,
            ownerKey: { keyId, keyFile, created: keyFile !== null },
          },
          () =>
            [
              `${result.created ? 'Initialized' : 'Already initialized'}: subject "${subject}" in ${engine.location} (${engine.kind})`,
              keyFile === null
                ? `Owner key ${keyId} (already set)`
                : `Owner key ${keyId} written to ${keyFile} (encrypted; keep the passphrase)`,
            ].join('\n'),
        );
      });
    } catch (err) {
      // The store refused: take back the key file this run wrote, so nothing is left half-made
      // (never once the store holds its public half: that would strand the owner without a key).
      if (key !== null && !keyStored) rmSync(path, { force: true });
      throw err;
    }
  },
});
