// The in-process CLI's engine seam (CliIo.openEngine, test/support/shared-engines.ts): commands on
// one store share a kept engine; a command with extras gets its own; without the seam each command
// opens and closes the store as a process does.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from './support/cli.js';
import { openCode } from './support/engines.js';
import { sharedEngines } from './support/shared-engines.js';

const tmp = mkdtempSync(join(tmpdir(), 'memledger-engine-seam-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const env = {
  MEMLEDGER_OWNER_PASSPHRASE: 'pw',
  MEMLEDGER_OWNER_KEY: join(tmp, 'owner.key'),
};

describe('the CLI engine seam [pglite]', () => {
  const db = join(tmp, 'store');
  const engines = sharedEngines({ clock: () => new Date('2026-10-22T09:30:00Z') });
  afterAll(() => engines.close());
  const run = (...args: string[]) =>
    runCliCaptured([...args, '--db', db, '--json'], env, { engines });

  it('keeps one engine per store across commands, holding the directory meanwhile', async () => {
    expect((await run('init')).code).toBe(0);
    const kept = engines.engineFor(db);
    expect(kept).toBeDefined();
    const s = await run('session', 'new');
    const sessionId = (s.json() as { sessionId: string }).sessionId;
    const t = await run('turn', 'add', '--session', sessionId, '--role', 'user', '--text', 'hi');
    expect(t.json()).toMatchObject({ seq: 1, content: 'hi' });
    expect(engines.engineFor(db)).toBe(kept);
    // the kept engine holds the directory: another opener is refused until it is closed
    expect(await openCode(db, false)).toBe('STORE_LOCKED');
  });

  it('runs on the given clock', async () => {
    const s = await run('session', 'new');
    const sessionId = (s.json() as { sessionId: string }).sessionId;
    const listed = (await run('session', 'list')).json() as {
      sessions: Array<{ sessionId: string; createdAt: string }>;
    };
    expect(listed.sessions.find((x) => x.sessionId === sessionId)?.createdAt).toBe(
      '2026-10-22T09:30:00.000Z',
    );
  });

  it('reopens the kept engine for a command with another probe sandbox, and keeps that one', async () => {
    const root = join(tmp, 'probe-root');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'here.txt'), 'x');
    const kept = engines.engineFor(db);
    const probe = () => run('probe', 'file', '--path', 'here.txt', '--exists', '--root', root);
    expect((await probe()).json()).toMatchObject({ verdict: 'verified' });
    const sandboxed = engines.engineFor(db);
    expect(sandboxed).toBeDefined();
    expect(sandboxed).not.toBe(kept);
    expect((await probe()).code).toBe(0);
    expect(engines.engineFor(db)).toBe(sandboxed);
    // a command that runs no probe shares whichever engine is kept
    expect((await run('session', 'list')).code).toBe(0);
    expect(engines.engineFor(db)).toBe(sandboxed);
    // another sandbox, another engine: a probe never runs with roots it was not given
    const elsewhere = await run('probe', 'file', '--path', 'here.txt', '--exists', '--root', tmp);
    expect(elsewhere.json()).toMatchObject({ verdict: 'falsified' });
    expect(engines.engineFor(db)).not.toBe(sandboxed);
  });

  it('gives a command with a reindex an engine of its own, after closing the kept one', async () => {
    expect((await run('session', 'list')).code).toBe(0);
    expect(engines.engineFor(db)).toBeDefined();
    expect((await run('reindex')).json()).toEqual({ reindexed: false, turns: 0, facts: 0 });
    expect(engines.engineFor(db)).toBeUndefined();
    expect(await openCode(db, false)).toBe('OPENED');
  });

  it('close frees the directory; without the seam each command opens and closes it', async () => {
    await engines.close();
    expect(engines.engineFor(db)).toBeUndefined();
    expect(await openCode(db, false)).toBe('OPENED');
    const plain = await runCliCaptured(['session', 'list', '--db', db, '--json'], env);
    expect(plain.code).toBe(0);
    expect(await openCode(db, false)).toBe('OPENED');
  });

  it('refuses a memory:// store, which would not outlive the command', async () => {
    await expect(engines.open({ db: 'memory://' })).rejects.toThrow(/does not outlive/);
  });
});
