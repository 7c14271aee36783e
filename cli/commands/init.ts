import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { DEFAULT_SUBJECT } from '../../src/domain/defaults.js';
import { EngineError } from '../../src/domain/errors.js';
import { requireId } from '../../src/domain/turn.js';
import {
  generateOwnerKey,
  loadOwnerKey,
  readOwnerPublicKey,
  writeOwnerKeyFile,
} from '../../src/faces.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { SUBJECT_OPTION } from '../options.js';
import {
  KEY_OPTIONS,
  keyPath,
  ownerKeyOptions,
  passphrase,
  passphraseIfGiven,
} from '../owner-key-options.js';

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
 * Test-only: `MEMLEDGER_TEST_CRASH_AT=<step>` SIGKILLs this process at that step of `init`, so
 * test/heavy/regressions/init-crash-bricked-the-store.test.ts can stop a child `memledger init` exactly
 * there. Steps: init-key-written (the key file exists, the store is untouched), init-store-opened
 * (the store exists, the subject does not), init-subject-created (the subject exists, its owner key
 * is not stored). The store's own steps are in src/pglite/pglite-client.ts.
 */
function crashPoint(ctx: CommandContext, step: string): void {
  if (ctx.io.env.MEMLEDGER_TEST_CRASH_AT === step) process.kill(process.pid, 'SIGKILL');
}

/** The owner key `init` stores: one it made (and wrote to `path`), or the key file already there. */
interface ChosenKey {
  keyId: string;
  publicKeyPem: string;
  created: boolean;
}

/**
 * One owner key can serve many stores, like an SSH key: a key file already at `path` (the default
 * one, one named, or one an interrupted `init` wrote) is used once its passphrase opens it, which
 * proves it is the owner's. A file there that is no key file is refused and left alone.
 */
async function chooseKey(ctx: CommandContext<typeof OPTIONS>, path: string): Promise<ChosenKey> {
  if (existsSync(path)) {
    try {
      readOwnerPublicKey(path);
    } catch (err) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `${path} already exists and is not a memledger owner key file (${(err as Error).message}); choose another --key or move it away`,
      );
    }
    const secret = await passphrase(ctx, `Passphrase of the existing owner key (${path}): `);
    const signer = loadOwnerKey(path, secret, ownerKeyOptions(ctx));
    return { keyId: signer.keyId, publicKeyPem: signer.publicKeyPem, created: false };
  }
  let secret = passphraseIfGiven(ctx);
  if (secret === null) {
    // Typed at a terminal: asked twice, since a typo would lock the owner out of their key.
    secret = await passphrase(ctx, `Choose a passphrase for the owner key (${path}): `);
    if ((await passphrase(ctx, 'Type it again: ')) !== secret) {
      throw new EngineError('INVALID_ARGUMENT', 'the two passphrases differ; nothing was created');
    }
  }
  const key = generateOwnerKey(secret, ownerKeyOptions(ctx));
  writeKeyFile(path, key.keyFile);
  crashPoint(ctx, 'init-key-written');
  return { keyId: key.keyId, publicKeyPem: key.publicKeyPem, created: true };
}

function keyLine(keyId: string, path: string, key: ChosenKey | null): string {
  if (key === null) return `Owner key ${keyId} (already set)`;
  if (key.created) return `Owner key ${keyId} written to ${path} (encrypted; keep the passphrase)`;
  return `Owner key ${keyId} from ${path} (an existing key file, reused)`;
}

/**
 * Creates the store and the subject, and the owner's signing key: the public half goes into the
 * store, the private half into a file encrypted under a passphrase the owner types (or the key
 * file already there, reused). Every check runs before anything is created, so a refused init
 * leaves no half-made store behind; and each step can be interrupted: the store appears whole or
 * not at all (src/pglite/pglite-client.ts; one transaction on PostgreSQL), and a rerun reuses the
 * key file, keeps the subject, and stores whatever key is missing.
 */
export const initCommand = defineCommand({
  path: ['init'],
  summary: 'Creates the store (if needed), the subject, and its owner key.',
  options: OPTIONS,
  async run(ctx) {
    // Checked before any I/O: a bad subject id must not leave a store or a key behind.
    const subject = requireId(ctx.values.subject ?? DEFAULT_SUBJECT, 'subject');
    const path = keyPath(ctx, subject);
    const key = (await hasOwnerKey(ctx, subject)) ? null : await chooseKey(ctx, path);
    let keyStored = false;
    try {
      await ctx.withEngine(true, async (engine) => {
        crashPoint(ctx, 'init-store-opened');
        const result = await engine.subjects.create(subject);
        crashPoint(ctx, 'init-subject-created');
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
            ownerKey: {
              keyId,
              keyFile,
              created: key?.created ?? false,
              reused: key !== null && !key.created,
            },
          },
          () =>
            [
              `${result.created ? 'Initialized' : 'Already initialized'}: subject "${subject}" in ${engine.location} (${engine.kind})`,
              keyLine(keyId, path, key),
            ].join('\n'),
        );
      });
    } catch (err) {
      // The store refused: take back the key file this run wrote, so nothing is left half-made
      // (never once the store holds its public half: that would strand the owner without a key;
      // never a key file that was there before: it may anchor other stores).
      if (key?.created === true && !keyStored) rmSync(path, { force: true });
      throw err;
    }
  },
});
