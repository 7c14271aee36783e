// The test-only scrypt cost: owner keys a test suite makes by the hundred cost microseconds, and
// nothing outside tests opens one. The default, the CLI and the review page stay at production
// strength (the built binary's own check is in test/heavy/cli-smoke.test.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EngineError,
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type KdfCost,
} from '../src/index.js';
import { OwnerSessions } from '../server/review/owner-sessions.js';
import { runCliCaptured } from './support/cli.js';
import { sharedEngines } from './support/shared-engines.js';
import { TEST_KEYS } from './support/test-keys.js';

const PASS = 'correct horse battery staple';
const dir = mkdtempSync(join(tmpdir(), 'memledger-key-cost-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function keyFile(text: string): string {
  const path = join(dir, `k-${++files}.key`);
  writeOwnerKeyFile(path, text);
  return path;
}
/** The EngineError a call throws; a call that returns fails the test. */
function refusal(fn: () => unknown): EngineError {
  try {
    fn();
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
  throw new Error('expected an EngineError, got success');
}
const code = (fn: () => unknown): string => refusal(fn).code;

const kdfOf = (path: string): { N: number; r: number; p: number } =>
  (JSON.parse(readFileSync(path, 'utf8')) as { kdf: { N: number; r: number; p: number } }).kdf;

describe('owner key cost', () => {
  const production = keyFile(generateOwnerKey(PASS).keyFile);
  const test = keyFile(generateOwnerKey(PASS, TEST_KEYS).keyFile);

  it('is production scrypt by default and when named; the test cost only when asked for', () => {
    expect(kdfOf(production)).toMatchObject({ N: 2 ** 15, r: 8, p: 1 });
    expect(kdfOf(keyFile(generateOwnerKey(PASS, { kdf: 'production' }).keyFile))).toMatchObject({
      N: 2 ** 15,
      r: 8,
    });
    expect(kdfOf(test)).toMatchObject({ N: 16, r: 1, p: 1 });
  });

  it('a test-cost key opens only for a caller that asks for test keys', () => {
    const refused = refusal(() => loadOwnerKey(test, PASS));
    expect(refused.code).toBe('KEY_UNREADABLE');
    expect(refused.message).toMatch(/below production strength/);
    expect(code(() => loadOwnerKey(test, PASS, { kdf: 'production' }))).toBe('KEY_UNREADABLE');
    // positive controls: asked for, it opens; a production key opens either way
    expect(loadOwnerKey(test, PASS, TEST_KEYS).keyId).toMatch(/^ed25519:/);
    expect(loadOwnerKey(production, PASS).keyId).toBe(
      loadOwnerKey(production, PASS, TEST_KEYS).keyId,
    );
  });

  it('the bar is scrypt’s work N·r: just below is refused, the same work otherwise made passes', () => {
    const variant = (kdf: Record<string, number>): string => {
      const file = JSON.parse(readFileSync(production, 'utf8')) as { kdf: Record<string, unknown> };
      Object.assign(file.kdf, kdf);
      const path = join(dir, `v-${++files}.key`);
      writeFileSync(path, JSON.stringify(file));
      return path;
    };
    expect(code(() => loadOwnerKey(variant({ N: 2 ** 14 }), PASS))).toBe('KEY_UNREADABLE');
    expect(code(() => loadOwnerKey(variant({ r: 7 }), PASS))).toBe('KEY_UNREADABLE');
    // the same work (2^14 · 16) passes the bar and reaches decryption, which fails: another key
    expect(code(() => loadOwnerKey(variant({ N: 2 ** 14, r: 16 }), PASS))).toBe('BAD_PASSPHRASE');
  });

  it('the review page opens production keys and refuses a test key', async () => {
    const keyId = loadOwnerKey(test, PASS, TEST_KEYS).keyId;
    const sessionsOn = (file: string, id: string) =>
      new OwnerSessions({ keyFile: file, expectedKeyId: async () => id, unlockDelayBaseMs: 1 });
    const refusing = sessionsOn(test, keyId);
    const failed: unknown = await refusing
      .unlock(refusing.session(undefined), PASS)
      .catch((e) => e);
    expect(failed).toBeInstanceOf(EngineError);
    expect((failed as EngineError).code).toBe('KEY_UNREADABLE');
    refusing.close();
    const opening = sessionsOn(production, loadOwnerKey(production, PASS).keyId);
    expect((await opening.unlock(opening.session(undefined), PASS)).unlocked).toBe(true);
    opening.close();
  });
});

describe('owner key cost through the CLI', () => {
  const db = join(dir, 'store');
  const engines = sharedEngines();
  afterAll(() => engines.close());
  /** `memledger … --json` on the one store, for `subject`, at the key cost its io asks for. */
  const run = (subject: string, keyCost: KdfCost, ...args: string[]) =>
    runCliCaptured(
      [...args, '--subject', subject, '--db', db, '--json'],
      { MEMLEDGER_OWNER_PASSPHRASE: PASS, MEMLEDGER_OWNER_KEY: join(dir, `${subject}.key`) },
      { keyCost, engines },
    );

  it('init makes a production key unless its io asks for the test cost', async () => {
    const made = await run('prod', 'production', 'init');
    expect(made.code, made.stderr).toBe(0);
    expect(kdfOf(join(dir, 'prod.key'))).toMatchObject({ N: 2 ** 15, r: 8, p: 1 });
    const cheap = await run('cheap', 'test', 'init');
    expect(cheap.code, cheap.stderr).toBe(0);
    expect(kdfOf(join(dir, 'cheap.key'))).toMatchObject({ N: 16, r: 1 });
  });

  it('a command that signs refuses a test key unless its io asks for the test cost', async () => {
    const declared = await run(
      'cheap',
      'test',
      'slot',
      'declare',
      '--name',
      'emails',
      '--rule',
      'action',
    );
    expect(declared.code, declared.stderr).toBe(0);
    const delegate = (keyCost: KdfCost) =>
      run('cheap', keyCost, 'slot', 'delegate', '--name', 'emails', '--tools', 'send_email');
    const refused = await delegate('production');
    expect(refused.errorCode()).toBe('KEY_UNREADABLE');
    expect(refused.stderr).toMatch(/below production strength/);
    const done = await delegate('test');
    expect(done.code, done.stderr).toBe(0);
  });
});
