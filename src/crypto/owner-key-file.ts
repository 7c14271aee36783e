import { closeSync, fchmodSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { EngineError } from '../domain/errors.js';
import {
  keyFileUnreadable,
  ownerKeyId,
  parseOwnerKeyFile,
  type OwnerKeyFile,
} from './owner-key-format.js';

/** Creates the key file with mode 0600; never replaces an existing file. */
export function writeOwnerKeyFile(path: string, content: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message =
      code === 'EEXIST'
        ? `refusing to overwrite the existing owner key file ${path}; move it away first`
        : `cannot create the owner key file ${path} (${code ?? String(error)})`;
    throw new EngineError('INVALID_ARGUMENT', message, { cause: error });
  }
  try {
    fchmodSync(fd, 0o600); // the umask can only remove bits, but say exactly what we mean
    writeSync(fd, content);
    closeSync(fd);
  } catch (error) {
    // Leave no half-written key behind: the next `init` must not be refused by our own debris.
    try {
      closeSync(fd);
    } catch {
      /* already closed */
    }
    try {
      unlinkSync(path);
    } catch {
      /* nothing to remove */
    }
    throw new EngineError('INVALID_ARGUMENT', `cannot write the owner key file ${path}`, {
      cause: error,
    });
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
