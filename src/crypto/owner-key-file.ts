import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { EngineError } from '../domain/errors.js';
import {
  keyFileUnreadable,
  ownerKeyId,
  parseOwnerKeyFile,
  type OwnerKeyFile,
} from './owner-key-format.js';

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function refused(path: string, error: unknown): EngineError {
  const code = errnoOf(error);
  const message =
    code === 'EEXIST'
      ? `refusing to overwrite the existing owner key file ${path}; move it away first`
      : `cannot create the owner key file ${path} (${code ?? String(error)})`;
  return new EngineError('INVALID_ARGUMENT', message, { cause: error });
}

/**
 * Creates `file` (mode 0600, never an existing one) holding `content`, synced to disk; a file it
 * created but could not write is removed again.
 */
function writeNew(file: string, content: string): void {
  const fd = openSync(file, 'wx', 0o600);
  try {
    fchmodSync(fd, 0o600); // the umask can only remove bits, but say exactly what we mean
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(file);
    throw error;
  }
  closeSync(fd);
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // a directory that cannot be synced: the link is still atomic
  }
}

/**
 * Creates the key file with mode 0600; never replaces an existing file. The file appears whole or
 * not at all: it is written to a temp file beside it and hard-linked into place, so a crash never
 * leaves an empty or truncated key file at `path` to block the next `init`.
 */
export function writeOwnerKeyFile(path: string, content: string): void {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeNew(tmp, content);
  } catch (error) {
    throw refused(path, error);
  }
  let linked = false;
  try {
    linkSync(tmp, path);
    linked = true;
  } catch (error) {
    const code = errnoOf(error);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw refused(path, error);
  } finally {
    unlinkSync(tmp);
  }
  if (linked) {
    syncDir(dirname(path));
    return;
  }
  // A file system without hard links: create in place, and take it back if the write fails.
  try {
    writeNew(path, content);
  } catch (error) {
    throw refused(path, error);
  }
}

/** Reads and parses the key file at `path`; KEY_UNREADABLE when it cannot be read or parsed. */
export function readOwnerKeyFile(path: string): OwnerKeyFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw keyFileUnreadable(
      path,
      `cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      error,
    );
  }
  return parseOwnerKeyFile(path, text);
}

/**
 * The public half of a key file, readable without the passphrase: the owner's out-of-store
 * anchor. `chain verify` compares it with the key the store holds, so a key swapped inside the
 * store (with every link re-signed) is still caught.
 */
export function readOwnerPublicKey(path: string): { keyId: string; publicKeyPem: string } {
  const file = readOwnerKeyFile(path);
  let keyId: string;
  try {
    keyId = ownerKeyId(file.publicKeyPem);
  } catch (error) {
    throw keyFileUnreadable(path, 'publicKeyPem is not a public key', error);
  }
  if (keyId !== file.keyId) {
    throw keyFileUnreadable(path, 'keyId does not match publicKeyPem');
  }
  return { keyId: file.keyId, publicKeyPem: file.publicKeyPem };
}
