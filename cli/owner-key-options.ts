import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  EngineError,
  loadOwnerKey,
  readOwnerPublicKey,
  keyFileAnchor,
  type OwnerAnchor,
  type OwnerKeyOptions,
  type OwnerSigner,
  type SubjectHandle,
} from '../src/index.js';
import type { CommandContext } from './context.js';
import type { OptionSpecs } from './options.js';
import { readPassphrase } from './passphrase.js';

/** `--key F` and `--passphrase-file P`: the owner key file and what opens it. */
export const KEY_OPTIONS = {
  key: {
    kind: 'text',
    value: 'F',
    help: 'the owner key file (else $MEMLEDGER_OWNER_KEY, else ~/.config/memledger/owner-<subject>.key): it anchors every read, and signs',
  },
  'passphrase-file': {
    kind: 'text',
    value: 'P',
    help: 'a file whose first line is the owner passphrase (else $MEMLEDGER_OWNER_PASSPHRASE, else a prompt)',
  },
} as const satisfies OptionSpecs;

export type KeyContext = CommandContext<Pick<typeof KEY_OPTIONS, 'key'>>;
type PassphraseContext = CommandContext<Pick<typeof KEY_OPTIONS, 'passphrase-file'>>;

/** ~/.config/memledger: where owner key files live unless a path is named. */
export function defaultKeyDir(ctx: Pick<CommandContext, 'io'>): string {
  return join(ctx.io.homeDir, '.config', 'memledger');
}

/** The default key file of `subject`: ~/.config/memledger/owner-<subject>.key. */
export function defaultKeyPath(ctx: Pick<CommandContext, 'io'>, subject: string): string {
  return join(defaultKeyDir(ctx), `owner-${subject}.key`);
}

/** --key, then MEMLEDGER_OWNER_KEY, then ~/.config/memledger/owner-<subject>.key. */
export function keyPath(ctx: KeyContext, subject: string): string {
  return ctx.values.key ?? ctx.io.env.MEMLEDGER_OWNER_KEY ?? defaultKeyPath(ctx, subject);
}

/** The public half of a key file, as `readOwnerPublicKey` reads it. */
export type OwnerPublicKey = ReturnType<typeof readOwnerPublicKey>;

/** Which key file holds the key a store anchors a subject with, and where that was looked for. */
export interface OwnerKeyLookup {
  subject: string;
  /** The key id the store holds for the subject; null when it holds none yet. */
  wanted: string | null;
  /** The key file chosen, and its public half; null when none was found. */
  keyFile: string | null;
  publicKey: OwnerPublicKey | null;
  /** Named by --key or MEMLEDGER_OWNER_KEY: used as given, even when it holds another key. */
  explicit: boolean;
  /** Every key file looked at, in order, with the key id it holds (null: not a key file). */
  seen: Array<{ path: string; keyId: string | null }>;
  /** Where the search went when nothing was named: the default file, then the directory. */
  defaultFile: string;
  defaultDir: string;
}

function keyFilesIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith('.key'))
      .sort()
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/**
 * The key file for the subject whose stored owner key id is `wanted`. A file named by --key (or
 * an existing MEMLEDGER_OWNER_KEY) is taken as given: the caller compares it with the store, so a
 * store whose key was swapped fails against it. Otherwise, like an SSH key that serves many
 * hosts, the key file is looked up by id: owner-<subject>.key in ~/.config/memledger first, then
 * every other *.key file there. Only the owner's own locations are searched, never a path the
 * store names, so the store cannot choose the key it is checked against.
 */
export function findOwnerKey(
  ctx: KeyContext,
  subject: string,
  wanted: string | null,
): OwnerKeyLookup {
  const defaultFile = defaultKeyPath(ctx, subject);
  const defaultDir = defaultKeyDir(ctx);
  const lookup: OwnerKeyLookup = {
    subject,
    wanted,
    keyFile: null,
    publicKey: null,
    explicit: false,
    seen: [],
    defaultFile,
    defaultDir,
  };
  const fromEnv = ctx.io.env.MEMLEDGER_OWNER_KEY;
  const named = ctx.values.key ?? (fromEnv !== undefined && existsSync(fromEnv) ? fromEnv : null);
  if (named !== null) {
    const publicKey = readOwnerPublicKey(named);
    lookup.seen.push({ path: named, keyId: publicKey.keyId });
    return { ...lookup, keyFile: named, publicKey, explicit: true };
  }
  if (fromEnv !== undefined) lookup.seen.push({ path: fromEnv, keyId: null });
  if (wanted === null) return lookup;
  const candidates = [defaultFile, ...keyFilesIn(defaultDir).filter((p) => p !== defaultFile)];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    let publicKey: OwnerPublicKey;
    try {
      publicKey = readOwnerPublicKey(path);
    } catch {
      lookup.seen.push({ path, keyId: null });
      continue;
    }
    lookup.seen.push({ path, keyId: publicKey.keyId });
    if (publicKey.keyId === wanted) return { ...lookup, keyFile: path, publicKey };
  }
  return lookup;
}

/** Why no key file was found for the store's key: what it wants, where it looked, what to do. */
export function keyNotFoundMessage(lookup: OwnerKeyLookup): string {
  const found =
    lookup.seen.length === 0
      ? 'none there'
      : 'found ' +
        lookup.seen
          .map((s) => `${s.path} (${s.keyId === null ? 'missing or not a key file' : s.keyId})`)
          .join(', ');
  return (
    `no owner key file for key id ${String(lookup.wanted)} (subject "${lookup.subject}") was found: ` +
    `looked at ${lookup.defaultFile}, then the *.key files in ${lookup.defaultDir} (${found}); ` +
    `pass --key F with the key file that holds ${String(lookup.wanted)}`
  );
}

/**
 * The key file that anchors `subject` for every read this process makes: the one named by --key,
 * else MEMLEDGER_OWNER_KEY when that file exists, else owner-<subject>.key in ~/.config/memledger
 * when it exists; null when there is none. Chosen by the subject the owner asked for, never by a
 * key id the store holds, so a store cannot pick the key it is checked against.
 */
export function anchorKeyFile(
  ctx: Pick<CommandContext, 'io' | 'values'>,
  subject: string,
): { path: string; explicit: boolean } | null {
  const given = (ctx.values as { key?: unknown }).key;
  if (typeof given === 'string') return { path: given, explicit: true };
  const fromEnv = ctx.io.env.MEMLEDGER_OWNER_KEY;
  if (fromEnv !== undefined && existsSync(fromEnv)) return { path: fromEnv, explicit: true };
  const path = defaultKeyPath(ctx, subject);
  return existsSync(path) ? { path, explicit: false } : null;
}

/** The engine's anchor source for a command: `anchorKeyFile`'s key file, read for each subject. */
export function cliAnchor(
  ctx: Pick<CommandContext, 'io' | 'values'>,
): (subject: string) => OwnerAnchor | null {
  return (subject) => {
    const file = anchorKeyFile(ctx, subject);
    return file === null ? null : keyFileAnchor(file.path, subject);
  };
}

/** The `chain verify` anchor: the key file whose public key the chain is checked against. */
export async function chainAnchor(ctx: KeyContext, me: SubjectHandle): Promise<OwnerKeyLookup> {
  const stored = await me.owner.key();
  const lookup: OwnerKeyLookup = {
    subject: me.id,
    wanted: stored?.keyId ?? null,
    keyFile: null,
    publicKey: null,
    explicit: false,
    seen: [],
    defaultFile: defaultKeyPath(ctx, me.id),
    defaultDir: defaultKeyDir(ctx),
  };
  const file = anchorKeyFile(ctx, me.id);
  if (file === null) return lookup;
  const publicKey = readOwnerPublicKey(file.path);
  return {
    ...lookup,
    keyFile: file.path,
    publicKey,
    explicit: file.explicit,
    seen: [{ path: file.path, keyId: publicKey.keyId }],
  };
}

/** One line saying what anchored a `chain verify`, for its text output. */
export function anchorLine(lookup: OwnerKeyLookup): string {
  if (lookup.keyFile !== null) {
    return `anchored by key file ${lookup.keyFile} (key id ${lookup.publicKey?.keyId ?? '?'})`;
  }
  return (
    `not anchored: no owner key file at ${lookup.defaultFile}, and none named by --key or MEMLEDGER_OWNER_KEY; ` +
    `the store's own copy of the public key (${lookup.wanted ?? 'none'}) was used, so a store whose key was replaced would pass`
  );
}

/** The JSON `chain verify` reports about its anchor. */
export function anchorJson(lookup: OwnerKeyLookup): {
  anchored: boolean;
  anchor: { keyFile: string | null; keyId: string | null; storeKeyId: string | null };
} {
  return {
    anchored: lookup.keyFile !== null,
    anchor: {
      keyFile: lookup.keyFile,
      keyId: lookup.publicKey?.keyId ?? null,
      storeKeyId: lookup.wanted,
    },
  };
}

/**
 * The signer for a decision on `me`, and the key file it was opened from: the file holding the
 * subject's stored owner key (named, or found as `findOwnerKey` finds it), opened with the
 * passphrase. A key that is not the store's is refused before the passphrase is asked for, saying
 * which key the store wants and which was given.
 */
export async function ownerSigner(
  ctx: KeyContext & PassphraseContext,
  me: SubjectHandle,
): Promise<{ signer: OwnerSigner; keyFile: string }> {
  const stored = await me.owner.key();
  if (stored === null) {
    throw new EngineError(
      'NO_OWNER_KEY',
      `subject "${me.id}" has no owner key in the store yet; \`memledger init\` stores one`,
    );
  }
  const lookup = findOwnerKey(ctx, me.id, stored.keyId);
  if (lookup.keyFile === null) {
    const sawKeys = lookup.seen.some((s) => s.keyId !== null);
    throw new EngineError(sawKeys ? 'WRONG_KEY' : 'KEY_UNREADABLE', keyNotFoundMessage(lookup), {
      data: { wanted: stored.keyId, lookedAt: lookup.seen.map((s) => s.path) },
    });
  }
  const given = lookup.publicKey?.keyId ?? null;
  if (given !== stored.keyId) {
    throw new EngineError(
      'WRONG_KEY',
      `the key file ${lookup.keyFile} holds key ${String(given)}, but subject "${me.id}" is anchored by key ${stored.keyId}; ` +
        `pass --key F with the key file that holds ${stored.keyId}`,
      { data: { wanted: stored.keyId, given, keyFile: lookup.keyFile } },
    );
  }
  const secret = await passphrase(ctx, 'Owner passphrase: ');
  const signer = loadOwnerKey(lookup.keyFile, secret, ownerKeyOptions(ctx));
  return { signer, keyFile: lookup.keyFile };
}

/** The scrypt cost owner keys are made and opened at: production, unless a test's io says so. */
export function ownerKeyOptions(ctx: CommandContext): OwnerKeyOptions {
  return ctx.io.keyCost === undefined ? {} : { kdf: ctx.io.keyCost };
}

/** --passphrase-file, then MEMLEDGER_OWNER_PASSPHRASE; null when neither is given. */
export function passphraseIfGiven(ctx: PassphraseContext): string | null {
  const file = ctx.values['passphrase-file'];
  return readPassphrase({ ...(file === undefined ? {} : { file }), env: ctx.io.env });
}

/** --passphrase-file, then MEMLEDGER_OWNER_PASSPHRASE, then a hidden prompt at a terminal. */
export async function passphrase(ctx: PassphraseContext, question: string): Promise<string> {
  const value = passphraseIfGiven(ctx);
  if (value !== null) return value;
  if (!ctx.io.isTTY) {
    throw new EngineError(
      'PASSPHRASE_REQUIRED',
      'the owner passphrase is required: --passphrase-file P, MEMLEDGER_OWNER_PASSPHRASE, or a terminal',
    );
  }
  return ctx.io.prompt(question, { hidden: true });
}
