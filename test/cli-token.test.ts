// `memledger token create|list|revoke`: the owner key makes and revokes tokens, the secret is
// shown once (or written to a 0600 file), and nothing without the key can make one.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../src/index.js';
import { runCliCaptured } from './support/cli.js';
import { sharedEngines } from './support/shared-engines.js';

const PASS = 'correct horse battery staple';
const root = mkdtempSync(join(tmpdir(), 'memledger-cli-token-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const db = join(root, 'store');
const key = join(root, 'owner.key');
const env = { MEMLEDGER_OWNER_PASSPHRASE: PASS, MEMLEDGER_OWNER_KEY: key };
// commands share one kept engine on the store, as a long-running host does
const engines = sharedEngines();
afterAll(() => engines.close());
const cli = (args: string[], e: Record<string, string> = env) =>
  runCliCaptured([...args, '--db', db, '--json'], e, { homeDir: root, engines });
/** The store as the commands left it, read through the engine they share. */
const store = (): Engine => {
  const engine = engines.engineFor(db);
  if (engine === undefined) throw new Error('no command has opened the store');
  return engine;
};

describe('memledger token', () => {
  beforeAll(async () => {
    const r = await cli(['init', '--key', key]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('creates a token that authenticates as its role, shows it once, and lists it without the secret', async () => {
    const made = await cli(['token', 'create', '--role', 'agent', '--name', 'laptop']);
    expect(made.code, made.stderr).toBe(0);
    const doc = made.json() as { token: string; id: string; role: string; subject: string };
    expect(doc).toMatchObject({ role: 'agent', subject: 'owner' });
    const listed = await cli(['token', 'list']);
    expect(listed.stdout).not.toContain(doc.token);
    expect((listed.json() as { tokens: Array<{ id: string; name: string }> }).tokens).toEqual([
      expect.objectContaining({ id: doc.id, name: 'laptop', revokedAt: null }),
    ]);
    expect((await store().tokens.authenticate(doc.token)).role).toBe('agent');
    const revoked = await cli(['token', 'revoke', doc.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((revoked.json() as { revokedAt: string | null }).revokedAt).not.toBeNull();
    await expect(store().tokens.authenticate(doc.token)).rejects.toMatchObject({
      code: 'TOKEN_REVOKED',
    });
  });

  it("lists and revokes through each subject's own namespace, with that subject's key", async () => {
    const bobKey = join(root, 'bob.key');
    const bobEnv = { MEMLEDGER_OWNER_PASSPHRASE: PASS, MEMLEDGER_OWNER_KEY: bobKey };
    const init = await cli(['init', '--subject', 'bob', '--key', bobKey], bobEnv);
    expect(init.code, init.stderr).toBe(0);
    const bobs = await cli(['token', 'create', '--role', 'reader', '--subject', 'bob'], bobEnv);
    expect(bobs.code, bobs.stderr).toBe(0);
    const bobToken = bobs.json() as { token: string; id: string };
    const mine = await cli(['token', 'create', '--role', 'reader', '--name', 'mine']);
    const ownerToken = mine.json() as { id: string };
    const subjects = async (args: string[]) =>
      (
        (await cli(['token', 'list', ...args])).json() as {
          tokens: Array<{ id: string; subject: string }>;
        }
      ).tokens;
    const everyone = await subjects([]);
    expect(everyone.map((x) => x.id)).toEqual(expect.arrayContaining([bobToken.id, ownerToken.id]));
    expect((await subjects(['--subject', 'bob'])).map((x) => x.id)).toEqual([bobToken.id]);
    expect((await cli(['token', 'list', '--subject', 'ghost'])).errorCode()).toBe(
      'SUBJECT_NOT_FOUND',
    );
    // the owner's key cannot revoke bob's token; bob's key can
    expect((await cli(['token', 'revoke', bobToken.id])).errorCode()).toBe('WRONG_KEY');
    await store().tokens.authenticate(bobToken.token);
    const revoked = await cli(['token', 'revoke', bobToken.id], bobEnv);
    expect(revoked.code, revoked.stderr).toBe(0);
    await expect(store().tokens.authenticate(bobToken.token)).rejects.toMatchObject({
      code: 'TOKEN_REVOKED',
    });
  });

  it('--out writes the secret to a new 0600 file and refuses to overwrite it', async () => {
    const out = join(root, 'reader.token');
    const made = await cli(['token', 'create', '--role', 'reader', '--out', out]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).not.toMatch(/mlt_/);
    expect(readFileSync(out, 'utf8')).toMatch(/^mlt_[A-Za-z0-9_-]{43}\n$/);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const again = await cli(['token', 'create', '--role', 'reader', '--out', out]);
    expect(again.errorCode()).toBe('INVALID_ARGUMENT');
  });

  it('refuses without the owner passphrase, with a wrong one, an unknown role or id, and changes nothing', async () => {
    const before = (await cli(['token', 'list'])).stdout;
    expect(
      (await cli(['token', 'create', '--role', 'agent'], { MEMLEDGER_OWNER_KEY: key })).errorCode(),
    ).toBe('PASSPHRASE_REQUIRED');
    expect(
      (
        await cli(['token', 'create', '--role', 'agent'], {
          MEMLEDGER_OWNER_KEY: key,
          MEMLEDGER_OWNER_PASSPHRASE: 'wrong',
        })
      ).errorCode(),
    ).toBe('BAD_PASSPHRASE');
    expect((await cli(['token', 'create', '--role', 'owner'])).errorCode()).toBe(
      'INVALID_ARGUMENT',
    );
    expect((await cli(['token', 'create'])).code).not.toBe(0);
    expect((await cli(['token', 'revoke', 'tok_nosuch'])).errorCode()).toBe('TOKEN_NOT_FOUND');
    expect((await cli(['token', 'list'])).stdout).toBe(before);
  });
});
