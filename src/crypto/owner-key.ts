import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  scryptSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { closeSync, fchmodSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import type { ChainCrypto } from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';

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

export interface GeneratedOwnerKey {
  publicKeyPem: string;
  keyId: string;
  /** The key file's text; write it with writeOwnerKeyFile. */
  keyFile: string;
}

export const OWNER_KEY_FORMAT = 'memledger-owner-key';
export const OWNER_PASSPHRASE_ENV = 'MEMLEDGER_OWNER_PASSPHRASE';

const KDF = { N: 2 ** 15, r: 8, p: 1 } as const;
// Bounds on what a key file may ask for, so a crafted file cannot make scrypt eat the machine:
// scrypt needs 128·N·r bytes, so at most 256 MiB, and p multiplies the work (not the memory).
// The generated default (N = 2^15, r = 8, p = 1) is well inside.
const MAX_N = 2 ** 17;
const MAX_R = 16;
const MAX_P = 4;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

function scryptKey(passphrase: string, salt: Buffer, N: number, r: number, p: number): Buffer {
  // NFC, so the same passphrase typed on two systems derives the same key.
  return scryptSync(passphrase.normalize('NFC'), salt, KEY_BYTES, {
    N,
    r,
    p,
    maxmem: 256 * N * r + 1024 * 1024,
  });
}

/** 'ed25519:' + the first 16 hex characters of sha256 over the public key's SPKI DER. */
export function ownerKeyId(publicKey: string | KeyObject): string {
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  const der = key.export({ type: 'spki', format: 'der' });
  return 'ed25519:' + createHash('sha256').update(der).digest('hex').slice(0, 16);
}

export function generateOwnerKey(passphrase: string): GeneratedOwnerKey {
  if (passphrase.length === 0) {
    throw new EngineError('INVALID_ARGUMENT', 'the owner passphrase must not be empty');
  }
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyId = ownerKeyId(publicKey);
  const salt = randomBytes(16);
  const iv = randomBytes(IV_BYTES);
  const key = scryptKey(passphrase, salt, KDF.N, KDF.r, KDF.p);
  const secret = privateKey.export({ type: 'pkcs8', format: 'der' });
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(secret), cipher.final()]);
  const tag = cipher.getAuthTag();
  key.fill(0);
  secret.fill(0);
  const file = {
    format: OWNER_KEY_FORMAT,
    version: 1,
    keyId,
    publicKeyPem,
    kdf: { name: 'scrypt', ...KDF, salt: salt.toString('base64') },
    cipher: { name: 'aes-256-gcm', iv: iv.toString('base64'), tag: tag.toString('base64') },
    ciphertext: ciphertext.toString('base64'),
  };
  return { publicKeyPem, keyId, keyFile: JSON.stringify(file, null, 2) + '\n' };
}

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

function unreadable(path: string, why: string, cause?: unknown): EngineError {
  return new EngineError('KEY_UNREADABLE', `owner key file ${path}: ${why}`, {
    data: { path },
    ...(cause === undefined ? {} : { cause }),
  });
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function base64Field(path: string, value: unknown, name: string, bytes?: number): Buffer {
  if (typeof value !== 'string' || !BASE64.test(value))
    throw unreadable(path, `${name} is not base64`);
  const buf = Buffer.from(value, 'base64');
  if (bytes !== undefined && buf.length !== bytes) {
    throw unreadable(path, `${name} must be ${bytes} bytes`);
  }
  return buf;
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function boundedInt(value: unknown, max: number): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= max
    ? value
    : null;
}

interface ParsedKeyFile {
  keyId: string;
  publicKeyPem: string;
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

function parseKeyFile(path: string, text: string): ParsedKeyFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw unreadable(path, 'not valid JSON', error);
  }
  const file = record(parsed);
  if (file === null || file.format !== OWNER_KEY_FORMAT) {
    throw unreadable(path, `not a ${OWNER_KEY_FORMAT} file`);
  }
  if (file.version !== 1) throw unreadable(path, `unsupported version ${String(file.version)}`);
  const kdf = record(file.kdf);
  const cipher = record(file.cipher);
  if (kdf === null || kdf.name !== 'scrypt') throw unreadable(path, 'kdf must be scrypt');
  if (cipher === null || cipher.name !== 'aes-256-gcm') {
    throw unreadable(path, 'cipher must be aes-256-gcm');
  }
  const N = boundedInt(kdf.N, MAX_N);
  const r = boundedInt(kdf.r, MAX_R);
  const p = boundedInt(kdf.p, MAX_P);
  if (N === null || N < 2 || (N & (N - 1)) !== 0 || r === null || p === null) {
    throw unreadable(path, 'scrypt parameters are out of range');
  }
  if (typeof file.keyId !== 'string' || typeof file.publicKeyPem !== 'string') {
    throw unreadable(path, 'keyId and publicKeyPem must be strings');
  }
  return {
    keyId: file.keyId,
    publicKeyPem: file.publicKeyPem,
    N,
    r,
    p,
    salt: base64Field(path, kdf.salt, 'kdf.salt'),
    iv: base64Field(path, cipher.iv, 'cipher.iv', IV_BYTES),
    tag: base64Field(path, cipher.tag, 'cipher.tag', TAG_BYTES),
    ciphertext: base64Field(path, file.ciphertext, 'ciphertext'),
  };
}

function readKeyFile(path: string): ParsedKeyFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw unreadable(
      path,
      `cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      error,
    );
  }
  return parseKeyFile(path, text);
}

/**
 * The public half of a key file, readable without the passphrase: the owner's out-of-store
 * anchor. `chain verify` compares it with the key the store holds, so a key swapped inside the
 * store (with every link re-signed) is still caught.
 */
export function readOwnerPublicKey(path: string): { keyId: string; publicKeyPem: string } {
  const file = readKeyFile(path);
  if (ownerKeyId(file.publicKeyPem) !== file.keyId)
    throw unreadable(path, 'keyId does not match publicKeyPem');
  return { keyId: file.keyId, publicKeyPem: file.publicKeyPem };
}

/**
 * Decrypts the owner's private key. KEY_UNREADABLE for a missing, malformed or inconsistent
 * file; BAD_PASSPHRASE when AES-GCM refuses (a wrong passphrase, or an altered encrypted part).
 */
export function loadOwnerKey(path: string, passphrase: string): OwnerSigner {
  if (passphrase.length === 0) {
    throw new EngineError('PASSPHRASE_REQUIRED', 'the owner passphrase must not be empty');
  }
  const file = readKeyFile(path);
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
    throw unreadable(path, 'the decrypted key is not a PKCS#8 private key', error);
  } finally {
    secret.fill(0);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw unreadable(
      path,
      `expected an ed25519 key, found ${String(privateKey.asymmetricKeyType)}`,
    );
  }
  // The header is not encrypted: check it names the key it holds, so an edited header is caught.
  const publicKey = createPublicKey(privateKey);
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyId = ownerKeyId(publicKey);
  if (keyId !== file.keyId || !samePublicKey(file.publicKeyPem, publicKey)) {
    throw unreadable(path, 'its keyId or publicKeyPem does not match the private key it holds');
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

let cachedPem: string | null = null;
let cachedKey: KeyObject | null = null;

function publicKeyFromPem(pem: string): KeyObject {
  if (pem !== cachedPem || cachedKey === null) {
    cachedKey = createPublicKey(pem);
    cachedPem = pem;
  }
  return cachedKey;
}

/** SHA-256 and Ed25519 verification from node:crypto; verify returns false on malformed input. */
export const nodeChainCrypto: ChainCrypto = {
  sha256Hex(data: string): string {
    return createHash('sha256').update(data, 'utf8').digest('hex');
  },
  verify(publicKeyPem: string, data: string, signatureB64: string): boolean {
    try {
      if (!BASE64.test(signatureB64)) return false;
      const signature = Buffer.from(signatureB64, 'base64');
      if (signature.length !== 64) return false;
      const key = publicKeyFromPem(publicKeyPem);
      if (key.asymmetricKeyType !== 'ed25519') return false;
      return verify(null, Buffer.from(data, 'utf8'), key, signature);
    } catch {
      return false;
    }
  },
};

export interface ReadPassphraseOptions {
  /** --passphrase-file: its first line is the passphrase. Takes precedence over the env. */
  file?: string;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * The owner passphrase from a file (first line, line ending stripped, other whitespace kept) or
 * MEMLEDGER_OWNER_PASSPHRASE (an empty value counts as unset). Null when neither gives one.
 */
export function readPassphrase(opts: ReadPassphraseOptions): string | null {
  if (opts.file !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new EngineError(
        'INVALID_ARGUMENT',
        `cannot read the passphrase file ${opts.file} (${code})`,
        {
          cause: error,
        },
      );
    }
    const firstLine = text.split('\n', 1)[0] ?? '';
    const passphrase = firstLine.endsWith('\r') ? firstLine.slice(0, -1) : firstLine;
    if (passphrase.length === 0) {
      throw new EngineError(
        'PASSPHRASE_REQUIRED',
        `the passphrase file ${opts.file} has an empty first line`,
      );
    }
    return passphrase;
  }
  const fromEnv = opts.env[OWNER_PASSPHRASE_ENV];
  return fromEnv === undefined || fromEnv === '' ? null : fromEnv;
}
