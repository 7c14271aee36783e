import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { EngineError, generateOwnerKey, writeOwnerKeyFile, type Engine } from '../../src/index.js';
import { stringValue } from '../args.js';
import type { CommandContext } from '../context.js';
import { KEY_OPTIONS, keyPath, passphrase, passphraseIfGiven } from '../owner-key-options.js';

export const INIT_OPTIONS = { ...KEY_OPTIONS, subject: { type: 'string' } } as const;

async function hasOwnerKey(ctx: CommandContext, subject: string): Promise<boolean> {
  try {
    return await ctx.withEngine(
      false,
      async (engine) => (await engine.owner.key({ subject })) !== null,
    );
  } catch (err) {
    if (
      err instanceof EngineError &&
      (err.code === 'NOT_INITIALIZED' || err.code === 'SUBJECT_NOT_FOUND')
    )
      return false;
    throw err;
  }
}

/**
 * Creates the store and the subject, and the owner's signing key: the public half goes into the
 * store, the private half into a file encrypted under a passphrase the owner types. Every check
 * runs before anything is created, so a refused init leaves no half-made store behind.
 */
export async function initCommand(ctx: CommandContext): Promise<void> {
  const subject = stringValue(ctx.values, 'subject') ?? 'owner';
  const path = keyPath(ctx, subject);
  let secret = passphraseIfGiven(ctx);
  const keyed = await hasOwnerKey(ctx, subject);
  if (!keyed) {
    if (existsSync(path)) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `${path} already exists; choose another --key or move it away`,
      );
    }
    if (secret === null && !ctx.io.isTTY) await passphrase(ctx, ''); // throws PASSPHRASE_REQUIRED
    secret ??= await passphrase(ctx, `Choose a passphrase for the owner key (${path}): `);
  }
  await ctx.withEngine(true, async (engine: Engine) => {
    const result = await engine.init({ subject });
    let owner = await engine.owner.key({ subject });
    let keyFile: string | null = null;
    if (owner === null) {
      const key = generateOwnerKey(secret ?? (await passphrase(ctx, 'Owner passphrase: ')));
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeOwnerKeyFile(path, key.keyFile);
      await engine.owner.setKey({ subject, publicKeyPem: key.publicKeyPem, keyId: key.keyId });
      owner = { keyId: key.keyId, publicKeyPem: key.publicKeyPem };
      keyFile = path;
    }
    const keyId = owner.keyId;
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
}
