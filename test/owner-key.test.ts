import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPassphrase } from '../cli/passphrase.js';
import { createNodeChainCrypto, nodeChainCrypto } from '../src/crypto/chain-crypto.js';
import { generateOwnerKey, loadOwnerKey, type GeneratedOwnerKey } from '../src/crypto/owner-key.js';
import { readOwnerPublicKey, writeOwnerKeyFile } from '../src/crypto/owner-key-file.js';
import {
  ownerKeyId,
  parseOwnerKeyFile,
  serializeOwnerKeyFile,
} from '../src/crypto/owner-key-format.js';
import { EngineError, type ErrorCode } from '../src/domain/errors.js';

const PASSPHRASE = 'correct horse battery staple';

function expectEngineError(fn: () => unknown, code: ErrorCode): EngineError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(EngineError);
  const error = caught as EngineError;
  expect(error.code).toBe(code);
  expect(error.message.length).toBeGreaterThan(0);
  return error;
}

let dir: string;
let generated: GeneratedOwnerKey;
let keyPath: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memledger-owner-key-'));
  generated = generateOwnerKey(PASSPHRASE);
  keyPath = join(dir, 'owner.key');
  writeOwnerKeyFile(keyPath, generated.keyFile);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Writes a variant of the key file and returns its path. */
function variant(name: string, edit: (file: Record<string, unknown>) => void): string {
  const file = JSON.parse(generated.keyFile) as Record<string, unknown>;
  edit(file);
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(file));
  return path;
}

describe('owner key', () => {
  it('generates an Ed25519 key with a keyId derived from the public key', () => {
    expect(generated.keyId).toMatch(/^ed25519:[0-9a-f]{16}$/);
    expect(generated.publicKeyPem).toContain('-----BEGIN PUBLIC KEY-----');
    expect(ownerKeyId(generated.publicKeyPem)).toBe(generated.keyId);
    const file = JSON.parse(generated.keyFile) as Record<string, unknown>;
    expect(file).toMatchObject({
      format: 'memledger-owner-key',
      version: 1,
      keyId: generated.keyId,
      publicKeyPem: generated.publicKeyPem,
      kdf: { name: 'scrypt', N: 2 ** 15, r: 8, p: 1 },
      cipher: { name: 'aes-256-gcm' },
    });
  });

  it('round-trips: the loaded key signs, and the signature verifies under the public key', () => {
    const signer = loadOwnerKey(keyPath, PASSPHRASE);
    expect(signer.keyId).toBe(generated.keyId);
    expect(signer.publicKeyPem).toBe(generated.publicKeyPem);
    const signature = signer.sign('approve p-1');
    expect(Buffer.from(signature, 'base64')).toHaveLength(64);
    expect(nodeChainCrypto.verify(generated.publicKeyPem, 'approve p-1', signature)).toBe(true);
    // Negative controls: other data, another key.
    expect(nodeChainCrypto.verify(generated.publicKeyPem, 'approve p-2', signature)).toBe(false);
    const other = generateOwnerKey('another passphrase');
    expect(nodeChainCrypto.verify(other.publicKeyPem, 'approve p-1', signature)).toBe(false);
  });

  it('does not expose the private key on the signer', () => {
    const signer = loadOwnerKey(keyPath, PASSPHRASE);
    expect(Object.keys(signer).sort()).toEqual(['keyId', 'publicKeyPem', 'sign']);
    expect(Object.isFrozen(signer)).toBe(true);
  });

  it('refuses a wrong passphrase with BAD_PASSPHRASE', () => {
    expectEngineError(() => loadOwnerKey(keyPath, 'wrong horse'), 'BAD_PASSPHRASE');
  });

  it('refuses an altered ciphertext or tag with BAD_PASSPHRASE (GCM authenticates them)', () => {
    const flipped = variant('flipped.key', (file) => {
      const bytes = Buffer.from(file.ciphertext as string, 'base64');
      bytes[5] = (bytes[5] ?? 0) ^ 1;
      file.ciphertext = bytes.toString('base64');
    });
    expectEngineError(() => loadOwnerKey(flipped, PASSPHRASE), 'BAD_PASSPHRASE');
  });

  it('refuses an empty passphrase with PASSPHRASE_REQUIRED', () => {
    expectEngineError(() => loadOwnerKey(keyPath, ''), 'PASSPHRASE_REQUIRED');
  });

  it('refuses a missing, corrupted or foreign file with KEY_UNREADABLE', () => {
    expectEngineError(() => loadOwnerKey(join(dir, 'missing.key'), PASSPHRASE), 'KEY_UNREADABLE');
    const garbage = join(dir, 'garbage.key');
    writeFileSync(garbage, generated.keyFile.slice(0, 80));
    expectEngineError(() => loadOwnerKey(garbage, PASSPHRASE), 'KEY_UNREADABLE');
    const foreign = variant('foreign.key', (file) => {
      file.format = 'something-else';
    });
    expectEngineError(() => loadOwnerKey(foreign, PASSPHRASE), 'KEY_UNREADABLE');
    const badIv = variant('bad-iv.key', (file) => {
      (file.cipher as Record<string, unknown>).iv = 'not base64!';
    });
    expectEngineError(() => loadOwnerKey(badIv, PASSPHRASE), 'KEY_UNREADABLE');
    const noCiphertext = variant('no-ciphertext.key', (file) => {
      delete file.ciphertext;
    });
    expectEngineError(() => loadOwnerKey(noCiphertext, PASSPHRASE), 'KEY_UNREADABLE');
  });

  it('refuses scrypt parameters a crafted file could use to exhaust memory', () => {
    const huge = variant('huge-n.key', (file) => {
      (file.kdf as Record<string, unknown>).N = 2 ** 30;
    });
    expectEngineError(() => loadOwnerKey(huge, PASSPHRASE), 'KEY_UNREADABLE');
    const notPowerOfTwo = variant('odd-n.key', (file) => {
      (file.kdf as Record<string, unknown>).N = 1000;
    });
    expectEngineError(() => loadOwnerKey(notPowerOfTwo, PASSPHRASE), 'KEY_UNREADABLE');
  });

  it('refuses scrypt parameters just past the bounds (N 2^17, r 16, p 4)', () => {
    const kdf = (name: string, values: Record<string, number>) =>
      variant(name, (file) => Object.assign(file.kdf as Record<string, unknown>, values));
    const tooBig = kdf('n-2-18.key', { N: 2 ** 18 });
    expect(
      expectEngineError(() => loadOwnerKey(tooBig, PASSPHRASE), 'KEY_UNREADABLE').message,
    ).toMatch(/scrypt parameters are out of range/);
    expectEngineError(() => loadOwnerKey(kdf('r-17.key', { r: 17 }), PASSPHRASE), 'KEY_UNREADABLE');
    expectEngineError(() => loadOwnerKey(kdf('p-5.key', { p: 5 }), PASSPHRASE), 'KEY_UNREADABLE');
    // Control: parameters inside the bounds pass the check and reach decryption, which fails
    // because they derive another key.
    const inside = kdf('n-2-16.key', { N: 2 ** 16 });
    expectEngineError(() => loadOwnerKey(inside, PASSPHRASE), 'BAD_PASSPHRASE');
  });

  it('refuses a file whose public header was swapped for another key', () => {
    const other = generateOwnerKey('another passphrase');
    const swapped = variant('swapped.key', (file) => {
      file.publicKeyPem = other.publicKeyPem;
      file.keyId = other.keyId;
    });
    expectEngineError(() => loadOwnerKey(swapped, PASSPHRASE), 'KEY_UNREADABLE');
  });

  it('writes the key file with mode 0600 and no plaintext private key', () => {
    if (process.platform !== 'win32') {
      expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    }
    const text = readFileSync(keyPath, 'utf8');
    expect(text).toBe(generated.keyFile);
    expect(text).not.toContain('PRIVATE KEY');
    expect(text).not.toContain('-----BEGIN PRIVATE KEY-----');
    // The PKCS#8 DER of an Ed25519 key starts with these bytes; they must not appear in clear.
    const pkcs8Prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
    const ciphertext = Buffer.from(
      (JSON.parse(text) as { ciphertext: string }).ciphertext,
      'base64',
    );
    expect(ciphertext.includes(pkcs8Prefix)).toBe(false);
    expect(text).not.toContain(pkcs8Prefix.toString('base64').slice(0, 16));
  });

  it('refuses to overwrite an existing key file, and leaves it intact', () => {
    const other = generateOwnerKey('another passphrase');
    const error = expectEngineError(
      () => writeOwnerKeyFile(keyPath, other.keyFile),
      'INVALID_ARGUMENT',
    );
    expect(error.message).toMatch(/overwrite/);
    expect(readFileSync(keyPath, 'utf8')).toBe(generated.keyFile);
  });

  it('refuses an empty passphrase at generation', () => {
    expectEngineError(() => generateOwnerKey(''), 'INVALID_ARGUMENT');
  });

  it('uses a fresh salt, iv and key each time', () => {
    const a = JSON.parse(generateOwnerKey(PASSPHRASE).keyFile) as Record<string, unknown>;
    const b = JSON.parse(generateOwnerKey(PASSPHRASE).keyFile) as Record<string, unknown>;
    expect(a.keyId).not.toBe(b.keyId);
    expect(a.kdf).not.toEqual(b.kdf);
    expect(a.cipher).not.toEqual(b.cipher);
  });
});

describe('nodeChainCrypto', () => {
  it('hashes UTF-8 with SHA-256', () => {
    expect(nodeChainCrypto.sha256Hex('')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(nodeChainCrypto.sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('returns false, never throws, on malformed keys and signatures', () => {
    const signer = loadOwnerKey(keyPath, PASSPHRASE);
    const good = signer.sign('data');
    expect(nodeChainCrypto.verify('not a pem', 'data', good)).toBe(false);
    expect(nodeChainCrypto.verify(generated.publicKeyPem, 'data', '')).toBe(false);
    expect(nodeChainCrypto.verify(generated.publicKeyPem, 'data', '%%%')).toBe(false);
    expect(nodeChainCrypto.verify(generated.publicKeyPem, 'data', good.slice(0, 40))).toBe(false);
    expect(nodeChainCrypto.verify(generated.publicKeyPem, 'data', good)).toBe(true);
  });
});

describe('key file format', () => {
  it('serialises what it parses, byte for byte', () => {
    const parsed = parseOwnerKeyFile(keyPath, generated.keyFile);
    expect(parsed.keyId).toBe(generated.keyId);
    expect(serializeOwnerKeyFile(parsed)).toBe(generated.keyFile);
  });

  it('reads the public half without the passphrase, and refuses a header that lies', () => {
    expect(readOwnerPublicKey(keyPath)).toEqual({
      keyId: generated.keyId,
      publicKeyPem: generated.publicKeyPem,
    });
    const other = generateOwnerKey('another passphrase');
    const wrongId = variant('wrong-id.key', (file) => {
      file.keyId = other.keyId;
    });
    expectEngineError(() => readOwnerPublicKey(wrongId), 'KEY_UNREADABLE');
    const notPem = variant('not-pem.key', (file) => {
      file.publicKeyPem = 'not a pem';
    });
    expectEngineError(() => readOwnerPublicKey(notPem), 'KEY_UNREADABLE');
  });
});

describe('createNodeChainCrypto', () => {
  it('gives each instance its own key cache, so alternating keys still verify exactly', () => {
    const signer = loadOwnerKey(keyPath, PASSPHRASE);
    const other = generateOwnerKey('another passphrase');
    const signature = signer.sign('data');
    const a = createNodeChainCrypto();
    const b = createNodeChainCrypto();
    expect(a.verify(generated.publicKeyPem, 'data', signature)).toBe(true);
    expect(b.verify(other.publicKeyPem, 'data', signature)).toBe(false);
    expect(a.verify(other.publicKeyPem, 'data', signature)).toBe(false);
    expect(a.verify(generated.publicKeyPem, 'data', signature)).toBe(true);
    expect(b.verify(generated.publicKeyPem, 'data', signature)).toBe(true);
  });
});

describe('readPassphrase', () => {
  it('reads the first line of the file, without its line ending', () => {
    const path = join(dir, 'pass.txt');
    writeFileSync(path, '  spaced pass  \nsecond line\n');
    expect(readPassphrase({ file: path, env: {} })).toBe('  spaced pass  ');
    const crlf = join(dir, 'pass-crlf.txt');
    writeFileSync(crlf, 'windows pass\r\n');
    expect(readPassphrase({ file: crlf, env: {} })).toBe('windows pass');
    const bare = join(dir, 'pass-bare.txt');
    writeFileSync(bare, 'no newline');
    expect(readPassphrase({ file: bare, env: {} })).toBe('no newline');
  });

  it('prefers the file over the environment', () => {
    const path = join(dir, 'pass-pref.txt');
    writeFileSync(path, 'from file\n');
    expect(readPassphrase({ file: path, env: { MEMLEDGER_OWNER_PASSPHRASE: 'from env' } })).toBe(
      'from file',
    );
  });

  it('reads MEMLEDGER_OWNER_PASSPHRASE', () => {
    expect(readPassphrase({ env: { MEMLEDGER_OWNER_PASSPHRASE: 'from env' } })).toBe('from env');
  });

  it('returns null when neither gives one (an empty variable counts as unset)', () => {
    expect(readPassphrase({ env: {} })).toBeNull();
    expect(readPassphrase({ env: { MEMLEDGER_OWNER_PASSPHRASE: '' } })).toBeNull();
  });

  it('refuses an unreadable file and a file with an empty first line', () => {
    expectEngineError(
      () => readPassphrase({ file: join(dir, 'nope.txt'), env: {} }),
      'INVALID_ARGUMENT',
    );
    const empty = join(dir, 'pass-empty.txt');
    writeFileSync(empty, '\nsecret on line two\n');
    expectEngineError(() => readPassphrase({ file: empty, env: {} }), 'PASSPHRASE_REQUIRED');
  });

  it('the passphrase it reads opens the key file', () => {
    const path = join(dir, 'pass-real.txt');
    writeFileSync(path, PASSPHRASE + '\n');
    const passphrase = readPassphrase({ file: path, env: {} });
    expect(passphrase).toBe(PASSPHRASE);
    expect(loadOwnerKey(keyPath, passphrase ?? '').keyId).toBe(generated.keyId);
  });
});
