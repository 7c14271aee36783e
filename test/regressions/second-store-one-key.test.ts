// A second store on one machine: `init` refused because the default key file existed; a store
// made with `--key second.key` then failed `chain verify` (KEY_MISMATCH, on zero decisions) and
// `decide` (WRONG_KEY, no hint) without --key, and text verify never said what anchored it. Since
// issue 33 such a store is checked against the subject's key file all the same (a key the store's
// own key id chose would let a swapped key choose its checker), and every message says how to
// name its own key file.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured, type CliResult } from '../support/cli.js';
import { dropSchema, ENGINES, pgUrlWithSchema, uniqueSchema } from '../support/engines.js';
import { sharedEngines } from '../support/shared-engines.js';

const PASS = 'one key, many stores';
const tmpRoot = mkdtempSync(join(tmpdir(), 'memledger-one-key-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

interface InitOutput {
  created: boolean;
  ownerKey: { keyId: string; keyFile: string | null; created: boolean; reused: boolean };
}
interface VerifyOutput {
  ok: boolean;
  length: number;
  brokenAt: number | null;
  code?: string;
  anchored: boolean;
  anchor: { keyFile: string | null; keyId: string | null; storeKeyId: string | null };
}

describe.each(ENGINES)('one owner key serving many stores [%s]', (kind) => {
  const schemas: string[] = [];
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });
  const freshDb = (name: string): string => {
    if (kind === 'pglite') return join(tmpRoot, `${name}-${kind}`);
    const schema = uniqueSchema();
    schemas.push(schema);
    return pgUrlWithSchema(schema);
  };

  const home = join(tmpRoot, `home-${kind}`);
  const keyDir = join(home, '.config', 'memledger');
  const defaultKey = join(keyDir, 'owner-owner.key');
  const elsewhere = join(tmpRoot, `elsewhere-${kind}`);
  const secondKey = join(elsewhere, 'second.key');
  const env = { MEMLEDGER_OWNER_PASSPHRASE: PASS };

  // commands share one kept engine per store, as a long-running host does
  const engines = sharedEngines();
  afterAll(() => engines.close());
  const run = (db: string, args: string[], runEnv: Record<string, string> = env) =>
    runCliCaptured([...args, '--db', db], runEnv, { homeDir: home, engines });
  async function ok<T>(db: string, args: string[]): Promise<T> {
    const r = await run(db, [...args, '--json']);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.json() as T;
  }
  async function fail(db: string, args: string[], runEnv = env): Promise<CliResult> {
    const r = await run(db, [...args, '--json'], runEnv);
    expect(r.code, `${args.join(' ')} should fail`).not.toBe(0);
    expect(r.stdout).toBe('');
    return r;
  }
  /** `chain verify --json`; exit 3 when broken. */
  async function verify(db: string, ...extra: string[]) {
    const r = await run(db, ['chain', 'verify', ...extra, '--json']);
    return { code: r.code, report: r.json() as VerifyOutput };
  }
  /** A proposal in the pile, citing the user's words. */
  async function pending(db: string, text: string): Promise<string> {
    const { sessionId } = await ok<{ sessionId: string }>(db, ['session', 'new']);
    const words = `Please remember: ${text}`;
    await ok(db, ['turn', 'add', '--session', sessionId, '--role', 'user', '--text', words]);
    const file = join(tmpRoot, `proposal-${kind}-${sessionId}.json`);
    const proposal = { slot: 'what_i_know_about_user', text, origin: 'saw' };
    writeFileSync(file, JSON.stringify([{ ...proposal, evidence: { turn: 1, quote: text } }]));
    const out = await ok<{ proposed: Array<{ id: string }> }>(db, [
      'propose',
      '--session',
      sessionId,
      '--file',
      file,
    ]);
    expect(out.proposed).toHaveLength(1);
    return (out.proposed[0] as { id: string }).id;
  }

  const first = freshDb('first');
  const second = freshDb('second');
  const third = freshDb('third');
  let firstInit: InitOutput;
  let keyId = '';

  beforeAll(async () => {
    mkdirSync(elsewhere, { recursive: true });
    firstInit = await ok<InitOutput>(first, ['init']);
    keyId = firstInit.ownerKey.keyId;
  });

  it('the first init writes the default key file; a second store reuses it after its passphrase', async () => {
    expect(firstInit.ownerKey).toEqual({
      keyId: expect.stringMatching(/^ed25519:[0-9a-f]{16}$/),
      keyFile: defaultKey,
      created: true,
      reused: false,
    });

    // The passphrase proves the key is the owner's: a wrong one creates nothing.
    const wrong = await fail(second, ['init'], { MEMLEDGER_OWNER_PASSPHRASE: 'not it' });
    expect(wrong.errorCode()).toBe('BAD_PASSPHRASE');
    if (kind === 'pglite') expect(existsSync(second)).toBe(false);
    expect((await fail(second, ['session', 'new'])).errorCode()).toBe('NOT_INITIALIZED');

    // At a terminal it is asked once (it exists already: no second "type it again").
    const r = await runCliCaptured(
      ['init', '--db', second, '--json'],
      {},
      {
        homeDir: home,
        answers: [PASS],
        engines,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Passphrase of the existing owner key (${defaultKey}): `);
    expect(r.stdout).not.toContain('Type it again');
    const out = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as InitOutput;
    expect(out).toMatchObject({
      created: true,
      ownerKey: { keyId, keyFile: defaultKey, created: false, reused: true },
    });
  });

  it('chain verify and decide find the key without --key, in both stores', async () => {
    for (const db of [first, second]) {
      const id = await pending(db, 'The user takes the 7:40 ferry');
      const decided = await ok<{ status: string }>(db, ['decide', id, 'approve']);
      expect(decided.status).toBe('active');
      expect(await verify(db)).toEqual({
        code: 0,
        report: expect.objectContaining({
          ok: true,
          length: 1,
          anchored: true,
          anchor: { keyFile: defaultKey, keyId, storeKeyId: keyId },
        }),
      });
      const text = await run(db, ['chain', 'verify']);
      expect(text.code).toBe(0);
      expect(text.stdout).toBe(
        `chain ok: 1 decisions\nanchored by key file ${defaultKey} (key id ${keyId})\n` +
          'signed head: link 1 (recorded beside the key file)\n',
      );
    }
  });

  it("a store made with another key is checked against the subject's key file, and says how to name its own", async () => {
    const made = await ok<InitOutput>(third, ['init', '--key', secondKey]);
    expect(made.ownerKey).toMatchObject({ keyFile: secondKey, created: true, reused: false });
    const thirdId = made.ownerKey.keyId;
    expect(thirdId).not.toBe(keyId);

    // Without --key, the subject's default key file anchors it: it holds another key, which is
    // what a store whose key was replaced looks like (issue 33: never a file the store's key id
    // chooses). The text says which key the store holds and how to name its own file.
    const mismatch = await verify(third);
    expect(mismatch).toEqual({
      code: 3,
      report: expect.objectContaining({
        ok: false,
        brokenAt: 1,
        code: 'KEY_MISMATCH',
        anchored: true,
        anchor: { keyFile: defaultKey, keyId, storeKeyId: thirdId },
      }),
    });
    const text = await run(third, ['chain', 'verify']);
    expect(text.stdout).toContain(`anchored by key file ${defaultKey} (key id ${keyId})`);
    expect(text.stdout).toContain(
      `the store holds key ${thirdId}: if this store was made with another key file, name it with --key F`,
    );

    const id = await pending(third, 'The user keeps bees');
    // decide looks in the same one place: the default file holds another key
    const lost = await fail(third, ['decide', id, 'approve']);
    expect(lost.errorCode()).toBe('WRONG_KEY');
    const message = (JSON.parse(lost.stderr) as { error: { message: string } }).error.message;
    for (const part of [thirdId, keyId, defaultKey, '--key']) expect(message).toContain(part);
    // its key file in the key directory under another name is not looked for by its id
    copyFileSync(secondKey, join(keyDir, 'work.key'));
    expect((await fail(third, ['decide', id, 'approve'])).errorCode()).toBe('WRONG_KEY');
    rmSync(join(keyDir, 'work.key'));
    expect(await ok(third, ['pile'])).toMatchObject({ pending: [{ id }] });

    // Named, the store's own key file anchors it, and decides.
    expect(await ok(third, ['decide', id, 'approve', '--key', secondKey])).toMatchObject({
      status: 'active',
    });
    expect((await verify(third, '--key', secondKey)).report).toMatchObject({
      ok: true,
      length: 1,
      anchored: true,
      anchor: { keyFile: secondKey, keyId: thirdId },
    });
    // and so does the environment, for every command
    const viaEnv = await run(third, ['memory', '--json'], {
      ...env,
      MEMLEDGER_OWNER_KEY: secondKey,
    });
    expect((viaEnv.json() as { facts: Array<{ text: string }> }).facts.map((f) => f.text)).toEqual([
      'The user keeps bees',
    ]);
    // read against the default key file, nothing the store signed is live
    expect(await ok(third, ['memory'])).toMatchObject({ facts: [] });
    // The default-key stores still find theirs.
    expect((await verify(first)).report.anchor.keyFile).toBe(defaultKey);
  });

  it('init with a file at the key path that is no key file refuses and leaves it alone', async () => {
    const db = freshDb('junk-key');
    const junk = join(elsewhere, 'junk.key');
    writeFileSync(junk, '');
    const r = await fail(db, ['init', '--key', junk]);
    expect(r.errorCode()).toBe('INVALID_ARGUMENT');
    expect(r.stderr).toContain('is not a memledger owner key file');
    expect(existsSync(junk)).toBe(true);
    if (kind === 'pglite') expect(existsSync(db)).toBe(false);
  });
});
