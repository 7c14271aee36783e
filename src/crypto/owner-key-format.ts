import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { EngineError } from '../domain/errors.js';
import { isBase64 } from './base64.js';

/** The `format` field every owner key file carries. */
export const OWNER_KEY_FORMAT = 'memledger-owner-key';

/** The scrypt parameters a new key file is written with. */
export const DEFAULT_KDF = { N: 2 ** 15, r: 8, p: 1 } as const;
/**
 * The scrypt cost a key file is made with: `production` (DEFAULT_KDF, the default everywhere), or
 * `test`, for test suites that make hundreds of keys: TEST_KDF, which protects nothing. A file
 * below production cost opens only for a caller that asks for `test`; the CLI and the servers
 * never do, so a test key is refused there.
 */
export type KdfCost = 'production' | 'test';
export const TEST_KDF = { N: 2 ** 4, r: 1, p: 1 } as const;
/** scrypt's memory-hard work is N·r; a production open refuses a file below the default's. */
const PRODUCTION_WORK = DEFAULT_KDF.N * DEFAULT_KDF.r;
// Bounds on what a key file may ask for, so a crafted file cannot make scrypt eat the machine:
// scrypt needs 128·N·r bytes, so at most 256 MiB, and p multiplies the work (not the memory).
// The generated default (N = 2^15, r = 8, p = 1) is well inside.
const MAX_N = 2 ** 17;
const MAX_R = 16;
const MAX_P = 4;
/** AES-256-GCM's nonce and authentication tag sizes, in bytes. */
export const IV_BYTES = 12;
export const TAG_BYTES = 16;

/**
 * An owner key file's fields: a public header (keyId, publicKeyPem) that anyone may read, and
 * the PKCS#8 private key encrypted with AES-256-GCM under a scrypt key from the passphrase.
 */
export interface OwnerKeyFile {
  keyId: string;
  publicKeyPem: string;
  /** scrypt cost, block size and parallelism. */
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

/** 'ed25519:' + the first 16 hex characters of sha256 over the public key's SPKI DER. */
export function ownerKeyId(publicKey: string | KeyObject): string {
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  const der = key.export({ type: 'spki', format: 'der' });
  return 'ed25519:' + createHash('sha256').update(der).digest('hex').slice(0, 16);
}

/** The parameters a new key file of that cost is written with. */
export function kdfFor(cost: KdfCost): { N: number; r: number; p: number } {
  return cost === 'test' ? TEST_KDF : DEFAULT_KDF;
}

/**
 * KEY_UNREADABLE for a file below production cost, unless the caller opens `test` keys: a weak
 * file protects nothing, and one in the owner's place means a test key escaped its test.
 */
export function requireKdfCost(path: string, file: OwnerKeyFile, cost: KdfCost): void {
  if (cost === 'test' || file.N * file.r >= PRODUCTION_WORK) return;
  throw keyFileUnreadable(
    path,
    `its scrypt cost (N ${file.N}, r ${file.r}) is below production strength (N·r at least ${PRODUCTION_WORK}): ` +
      'it is a key made for tests, which only tests open; make a real one with `memledger init`',
  );
}

/** KEY_UNREADABLE for the key file at `path`, saying what is wrong with it. */
export function keyFileUnreadable(path: string, why: string, cause?: unknown): EngineError {
  return new EngineError('KEY_UNREADABLE', `owner key file ${path}: ${why}`, {
    data: { path },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The key file's text: pretty JSON with a final newline, fields in a fixed order. */
export function serializeOwnerKeyFile(file: OwnerKeyFile): string {
  const json = {
    format: OWNER_KEY_FORMAT,
    version: 1,
    keyId: file.keyId,
    publicKeyPem: file.publicKeyPem,
    kdf: { name: 'scrypt', N: file.N, r: file.r, p: file.p, salt: file.salt.toString('base64') },
    cipher: {
      name: 'aes-256-gcm',
      iv: file.iv.toString('base64'),
      tag: file.tag.toString('base64'),
    },
    ciphertext: file.ciphertext.toString('base64'),
  };
  return JSON.stringify(json, null, 2) + '\n';
}

function base64Field(path: string, value: unknown, name: string, bytes?: number): Buffer {
  if (typeof value !== 'string' || !isBase64(value)) {
    throw keyFileUnreadable(path, `${name} is not base64`);
  }
  const buf = Buffer.from(value, 'base64');
  if (bytes !== undefined && buf.length !== bytes) {
    throw keyFileUnreadable(path, `${name} must be ${bytes} bytes`);
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

/**
 * Reads a key file's text (`path` is for messages only). KEY_UNREADABLE for anything that is not
 * a version-1 scrypt + AES-256-GCM key file with parameters inside the bounds. It does not check
 * that the header names the key inside: only the passphrase can show that.
 */
export function parseOwnerKeyFile(path: string, text: string): OwnerKeyFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw keyFileUnreadable(path, 'not valid JSON', error);
  }
  const file = record(parsed);
  if (file === null || file.format !== OWNER_KEY_FORMAT) {
    throw keyFileUnreadable(path, `not a ${OWNER_KEY_FORMAT} file`);
  }
  if (file.version !== 1) {
    throw keyFileUnreadable(path, `unsupported version ${String(file.version)}`);
  }
  const kdf = record(file.kdf);
  const cipher = record(file.cipher);
  if (kdf === null || kdf.name !== 'scrypt') throw keyFileUnreadable(path, 'kdf must be scrypt');
  if (cipher === null || cipher.name !== 'aes-256-gcm') {
    throw keyFileUnreadable(path, 'cipher must be aes-256-gcm');
  }
  const N = boundedInt(kdf.N, MAX_N);
  const r = boundedInt(kdf.r, MAX_R);
  const p = boundedInt(kdf.p, MAX_P);
  if (N === null || N < 2 || (N & (N - 1)) !== 0 || r === null || p === null) {
    throw keyFileUnreadable(path, 'scrypt parameters are out of range');
  }
  if (typeof file.keyId !== 'string' || typeof file.publicKeyPem !== 'string') {
    throw keyFileUnreadable(path, 'keyId and publicKeyPem must be strings');
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
