import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  scryptSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { EngineError } from '../domain/errors.js';
import { readOwnerKeyFile } from './owner-key-file.js';
import {
  IV_BYTES,
  kdfFor,
  keyFileUnreadable,
  ownerKeyId,
  requireKdfCost,
  serializeOwnerKeyFile,
  type KdfCost,
} from './owner-key-format.js';

/**
 * How a key file is made and opened. `kdf: 'test'` (for test suites only) makes a key at a
 * scrypt cost that protects nothing, and lets a load open such a file; without it a load refuses
 * one (KEY_UNREADABLE), so a test key never works in the CLI or a server.
 */
export interface OwnerKeyOptions {
  kdf?: KdfCost;
}

/**
 * The owner's Ed25519 key. The public half goes into the store; the private half lives only in a
 * file encrypted under the owner's passphrase (scrypt + AES-256-GCM), so a process running as the
 * owner but without the passphrase cannot sign a decision.
 */
export interface OwnerSigner {
  keyId: string;
  publicKeyPem: string;
  /** Base64 Ed25519 signature over the UTF-8 bytes of `data`. */
  sign(data: string): string;
}

/** A new owner key: its public half, and the key file that holds the encrypted private half. */
export interface GeneratedOwnerKey {
  publicKeyPem: string;
  keyId: string;
  /** The key file's text; write it with writeOwnerKeyFile. */
  keyFile: string;
}

const KEY_BYTES = 32;

function scryptKey(passphrase: string, salt: Buffer, N: number, r: number, p: number): Buffer {
  // NFC, so the same passphrase typed on two systems derives the same key.
  return scryptSync(passphrase.normalize('NFC'), salt, KEY_BYTES, {
    N,
    r,
    p,
    maxmem: 256 * N * r + 1024 * 1024,
  });
}

/** A fresh Ed25519 key, its private half encrypted under `passphrase` (which must not be empty). */
export function generateOwnerKey(
  passphrase: string,
  options: OwnerKeyOptions = {},
): GeneratedOwnerKey {
  if (passphrase.length === 0) {
    throw new EngineError('INVALID_ARGUMENT', 'the owner passphrase must not be empty');
  }
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyId = ownerKeyId(publicKey);
  const salt = randomBytes(16);
  const iv = randomBytes(IV_BYTES);
  const { N, r, p } = kdfFor(options.kdf ?? 'production');
  const key = scryptKey(passphrase, salt, N, r, p);
  const secret = privateKey.export({ type: 'pkcs8', format: 'der' });
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(secret), cipher.final()]);
  const tag = cipher.getAuthTag();
  key.fill(0);
  secret.fill(0);
  const keyFile = serializeOwnerKeyFile({
    keyId,
    publicKeyPem,
    N,
    r,
    p,
    salt,
    iv,
    tag,
    ciphertext,
  });
  return { publicKeyPem, keyId, keyFile };
}

/**
 * Decrypts the owner's private key. KEY_UNREADABLE for a missing, malformed or inconsistent
 * file, or one made at the test cost unless `options.kdf` is `test`; BAD_PASSPHRASE when AES-GCM
 * refuses (a wrong passphrase, or an altered encrypted part).
 */
export function loadOwnerKey(
  path: string,
  passphrase: string,
  options: OwnerKeyOptions = {},
): OwnerSigner {
  if (passphrase.length === 0) {
    throw new EngineError('PASSPHRASE_REQUIRED', 'the owner passphrase must not be empty');
  }
  const file = readOwnerKeyFile(path);
  requireKdfCost(path, file, options.kdf ?? 'production');
  const key = scryptKey(passphrase, file.salt, file.N, file.r, file.p);
  let secret: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, file.iv);
    decipher.setAuthTag(file.tag);
    secret = Buffer.concat([decipher.update(file.ciphertext), decipher.final()]);
  } catch (error) {
    throw new EngineError(
      'BAD_PASSPHRASE',
      `the passphrase does not open the owner key file ${path} (wrong passphrase, or the file's encrypted part was altered)`,
      { data: { path }, cause: error },
    );
  } finally {
    key.fill(0);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: secret, format: 'der', type: 'pkcs8' });
  } catch (error) {
    throw keyFileUnreadable(path, 'the decrypted key is not a PKCS#8 private key', error);
  } finally {
    secret.fill(0);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw keyFileUnreadable(
      path,
      `expected an ed25519 key, found ${String(privateKey.asymmetricKeyType)}`,
    );
  }
  // The header is not encrypted: check it names the key it holds, so an edited header is caught.
  const publicKey = createPublicKey(privateKey);
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyId = ownerKeyId(publicKey);
  if (keyId !== file.keyId || !samePublicKey(file.publicKeyPem, publicKey)) {
    throw keyFileUnreadable(
      path,
      'its keyId or publicKeyPem does not match the private key it holds',
    );
  }
  return Object.freeze({
    keyId,
    publicKeyPem,
    sign: (data: string): string =>
      sign(null, Buffer.from(data, 'utf8'), privateKey).toString('base64'),
  });
}

function samePublicKey(pem: string, key: KeyObject): boolean {
  try {
    return createPublicKey(pem).equals(key);
  } catch {
    return false;
  }
}
