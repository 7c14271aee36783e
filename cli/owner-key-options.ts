import type { OwnerKeyOptions, OwnerSigner, SubjectHandle } from '../src/index.js';
import { EngineError } from '../src/domain/errors.js';
import { loadOwnerKey, readOwnerPublicKey } from '../src/faces.js';
import { anchorKeyFile, defaultKeyPath } from './anchor.js';
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

/**
 * `--key-id ID`, for the long-running faces: pins the owner key id of their subject, so a server
 * that cannot read the owner's key file still checks the store's key against one from outside it.
 */
export const KEY_ID_OPTION = {
  'key-id': {
    kind: 'text',
    value: 'ID',
    help: "pin the subject's owner key id (ed25519:…, as chain verify shows it) instead of reading the key file",
  },
} as const satisfies OptionSpecs;

export type KeyContext = CommandContext<Pick<typeof KEY_OPTIONS, 'key'>>;
type PassphraseContext = CommandContext<Pick<typeof KEY_OPTIONS, 'passphrase-file'>>;

/** --key, then MEMLEDGER_OWNER_KEY, then ~/.config/memledger/owner-<subject>.key. */
export function keyPath(ctx: KeyContext, subject: string): string {
  return ctx.values.key ?? ctx.io.env.MEMLEDGER_OWNER_KEY ?? defaultKeyPath(ctx, subject);
}

/** The public half of a key file, as `readOwnerPublicKey` reads it. */
export type OwnerPublicKey = ReturnType<typeof readOwnerPublicKey>;

/** The key file that anchors a subject (`anchorKeyFile`), and what the store holds. */
export interface OwnerKeyLookup {
  subject: string;
  /** The key id the store holds for the subject; null when it holds none yet. */
  wanted: string | null;
  /** The key file chosen, and its public half; null when there is none. */
  keyFile: string | null;
  publicKey: OwnerPublicKey | null;
  /** Named by --key or MEMLEDGER_OWNER_KEY (else the subject's default key file). */
  explicit: boolean;
  /** The subject's default key file, looked at when none was named. */
  defaultFile: string;
}

/**
 * The key file of `subject` (`anchorKeyFile`: --key, MEMLEDGER_OWNER_KEY, the default file), with
 * its public half and the key id the store holds (`wanted`). One key file per subject, chosen by
 * the subject, never by a key id the store supplies: a store cannot pick the key it is checked
 * against, and a store whose key differs from the file's is a swapped one.
 */
export function findOwnerKey(
  ctx: KeyContext,
  subject: string,
  wanted: string | null,
): OwnerKeyLookup {
  const lookup: OwnerKeyLookup = {
    subject,
    wanted,
    keyFile: null,
    publicKey: null,
    explicit: false,
    defaultFile: defaultKeyPath(ctx, subject),
  };
  const file = anchorKeyFile(ctx, subject);
  if (file === null) return lookup;
  return {
    ...lookup,
    keyFile: file.path,
    publicKey: readOwnerPublicKey(file.path),
    explicit: file.explicit,
  };
}

/** Why no key file was found for the store's key: where it looked, what to do. */
export function keyNotFoundMessage(lookup: OwnerKeyLookup): string {
  return (
    `no owner key file for subject "${lookup.subject}" (the store holds key ${String(lookup.wanted)}): ` +
    `none named by --key or MEMLEDGER_OWNER_KEY, and none at ${lookup.defaultFile}; ` +
    `pass --key F with the key file that holds ${String(lookup.wanted)}`
  );
}

/** The `chain verify` anchor: the key file whose public key the chain is checked against. */
export async function chainAnchor(ctx: KeyContext, me: SubjectHandle): Promise<OwnerKeyLookup> {
  const stored = await me.owner.key();
  return findOwnerKey(ctx, me.id, stored?.keyId ?? null);
}

/** One line saying what anchored a `chain verify`, for its text output. */
export function anchorLine(lookup: OwnerKeyLookup): string {
  if (lookup.keyFile !== null) {
    const id = lookup.publicKey?.keyId ?? '?';
    return (
      `anchored by key file ${lookup.keyFile} (key id ${id})` +
      (lookup.wanted !== null && lookup.wanted !== id
        ? `; the store holds key ${lookup.wanted}: if this store was made with another key file, name it with --key F (or MEMLEDGER_OWNER_KEY); if not, the store's key was replaced`
        : '')
    );
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
    throw new EngineError('KEY_UNREADABLE', keyNotFoundMessage(lookup), {
      data: { wanted: stored.keyId, lookedAt: [lookup.defaultFile] },
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
