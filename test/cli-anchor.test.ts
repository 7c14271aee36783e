// Issue 33: the CLI's anchor. Every command that reads a subject's memory holds the owner's key
// from outside the store: the key file named by --key or MEMLEDGER_OWNER_KEY, or the subject's
// default key file, or a pinned key id; never one a key id in the store chooses. `chain verify`
// refuses to run without one unless told --unanchored.
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliAnchor } from '../cli/anchor.js';
import type { CliIo } from '../cli/io.js';
import {
  generateOwnerKey,
  readOwnerPublicKey,
  recordKeyFileHead,
  writeOwnerKeyFile,
} from '../src/index.js';
import { runCliCaptured } from './support/cli.js';
import { ONE_ENGINE } from './support/engines.js';
import { sharedEngines } from './support/shared-engines.js';
import { TEST_KEYS } from './support/test-keys.js';

const root = mkdtempSync(join(tmpdir(), 'memledger-anchor-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function keyFile(path: string): string {
  writeOwnerKeyFile(path, generateOwnerKey('pw', TEST_KEYS).keyFile);
  return readOwnerPublicKey(path).keyId;
}

describe('cliAnchor: which key file anchors a subject', () => {
  const home = join(root, 'home');
  const dir = join(home, '.config', 'memledger');
  const io = (env: Record<string, string> = {}) =>
    ({ env, homeDir: home }) as unknown as Pick<CliIo, 'env' | 'homeDir'>;
  let ownerId = '';
  let bobId = '';
  let namedId = '';
  const named = join(root, 'named.key');
  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    ownerId = keyFile(join(dir, 'owner-owner.key'));
    bobId = keyFile(join(dir, 'owner-bob.key'));
    namedId = keyFile(named);
  });

  it("the subject's default key file; none for a subject with no key file (a negative control)", () => {
    const anchor = cliAnchor({ io: io(), values: {} });
    expect(anchor('owner')).toMatchObject({ keyId: ownerId, heads: [] });
    expect(anchor('owner')?.publicKeyPem).toContain('PUBLIC KEY');
    expect(anchor('bob')?.keyId).toBe(bobId);
    expect(anchor('carol')).toBeNull();
  });

  it("--key and MEMLEDGER_OWNER_KEY name the command's subject only", () => {
    const byFlag = cliAnchor({ io: io(), values: { key: named } });
    expect(byFlag('owner')?.keyId).toBe(namedId);
    expect(byFlag('bob')?.keyId).toBe(bobId);
    const forBob = cliAnchor({ io: io(), values: { subject: 'bob', key: named } });
    expect(forBob('bob')?.keyId).toBe(namedId);
    expect(forBob('owner')?.keyId).toBe(ownerId);
    const byEnv = cliAnchor({ io: io({ MEMLEDGER_OWNER_KEY: named }), values: {} });
    expect(byEnv('owner')?.keyId).toBe(namedId);
    expect(byEnv('bob')?.keyId).toBe(bobId);
    // an environment that names no file falls back to the default one
    const missing = cliAnchor({
      io: io({ MEMLEDGER_OWNER_KEY: join(root, 'no.key') }),
      values: {},
    });
    expect(missing('owner')?.keyId).toBe(ownerId);
    // a named file that cannot be read is an error, not an unanchored read
    const broken = cliAnchor({ io: io(), values: { key: join(root, 'no.key') } });
    expect(() => broken('owner')).toThrow(expect.objectContaining({ code: 'KEY_UNREADABLE' }));
  });

  it('--key-id pins the key id; a malformed one is refused before anything opens', () => {
    const pinned = cliAnchor({ io: io(), values: { 'key-id': 'ed25519:0123456789abcdef' } });
    expect(pinned('owner')).toEqual({
      keyId: 'ed25519:0123456789abcdef',
      source: 'the owner key id pinned with --key-id',
      heads: [],
      revokedTokens: [],
    });
    // mcp --token-file serves its token's subject, whichever: the pin applies to it
    const byToken = cliAnchor({
      io: io(),
      values: { 'token-file': '/t', 'key-id': 'ed25519:0123456789abcdef' },
    });
    expect(byToken('bob')?.keyId).toBe('ed25519:0123456789abcdef');
    expect(pinned('bob')?.keyId).toBe(bobId);
    expect(() => cliAnchor({ io: io(), values: { 'key-id': 'ed25519:xyz' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('the heads the owner signed come from the head file beside the key file, per subject', () => {
    recordKeyFileHead(join(dir, 'owner-bob.key'), 'store-1', 'bob', {
      seq: 4,
      hash: 'a'.repeat(64),
      root: 'b'.repeat(64),
    });
    recordKeyFileHead(join(dir, 'owner-bob.key'), 'store-1', 'dave', {
      seq: 9,
      hash: 'c'.repeat(64),
      root: 'd'.repeat(64),
    });
    expect(cliAnchor({ io: io(), values: {} })('bob')?.heads).toEqual([
      { seq: 4, hash: 'a'.repeat(64), root: 'b'.repeat(64), storeId: 'store-1' },
    ]);
    // a pinned key id still reads the head file beside the default key file, when it can
    const pinned = cliAnchor({
      io: io(),
      values: { subject: 'bob', 'key-id': 'ed25519:0123456789abcdef' },
    });
    expect(pinned('bob')?.heads).toEqual([
      { seq: 4, hash: 'a'.repeat(64), root: 'b'.repeat(64), storeId: 'store-1' },
    ]);
  });
});

describe.each(ONE_ENGINE)('chain verify needs an anchor [%s]', () => {
  const home = join(root, 'verify-home');
  const db = join(root, 'verify-db');
  const engines = sharedEngines();
  afterAll(() => engines.close());
  const env = { MEMLEDGER_OWNER_PASSPHRASE: 'pw' };
  const run = (args: string[], runEnv: Record<string, string> = env) =>
    runCliCaptured([...args, '--db', db], runEnv, { homeDir: home, engines });

  it('refuses without a key file (NOT_ANCHORED) unless --unanchored; anchored by the default file', async () => {
    const init = await run(['init', '--json']);
    expect(init.code, init.stderr).toBe(0);
    const keyPath = join(home, '.config', 'memledger', 'owner-owner.key');
    const withKey = await run(['chain', 'verify', '--json']);
    expect(withKey.code).toBe(0);
    expect(withKey.json()).toMatchObject({
      ok: true,
      anchored: true,
      anchor: { keyFile: keyPath },
    });

    // the key file moved away: nothing anchors the store
    const moved = join(root, 'moved.key');
    rmSync(moved, { force: true });
    renameSync(keyPath, moved);
    try {
      const refused = await run(['chain', 'verify', '--json']);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.errorCode()).toBe('NOT_ANCHORED');
      expect(refused.stderr).toContain('--unanchored');
      const unanchored = await run(['chain', 'verify', '--unanchored']);
      expect(unanchored.code).toBe(0);
      expect(unanchored.stdout).toContain('not anchored: no owner key file at');
      // memory says it too, in a note, not a warning
      const memory = await run(['memory']);
      expect(memory.stdout).toContain(
        'note: This memory was checked against the owner key stored with it',
      );
      expect(memory.stdout).not.toContain('INTEGRITY WARNING');
      // named, the moved file anchors it again
      const named = await run(['chain', 'verify', '--key', moved, '--json']);
      expect(named.json()).toMatchObject({ ok: true, anchored: true, anchor: { keyFile: moved } });
    } finally {
      renameSync(moved, keyPath);
    }
  });
});
