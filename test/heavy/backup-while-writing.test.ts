// Issue 37, item 3: `memledger backup` taken while another process writes turns. The restored
// store verifies and holds every turn acknowledged before the backup began, and what it holds is
// one snapshot: the writer's turns from the first, with no gap. On an embedded store (through its
// host) and on PostgreSQL, with the built program in separate processes.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILT_CLI, ENV_WITHOUT_MEMLEDGER } from '../support/cli.js';
import { dropSchema, pgUrlWithSchema, uniqueSchema } from '../support/engines.js';

const WRITER = resolve(import.meta.dirname, '../support/shared-writer.mjs');
const tmp = mkdtempSync(join(tmpdir(), 'ml-backup-writing-'));
const env = {
  ...ENV_WITHOUT_MEMLEDGER,
  HOME: join(tmp, 'home'),
  MEMLEDGER_OWNER_PASSPHRASE: 'correct horse battery staple',
  MEMLEDGER_OWNER_KEY: join(tmp, 'owner.key'),
  MEMLEDGER_HOST_IDLE_SECONDS: '3',
};
const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas) await dropSchema(s);
  rmSync(tmp, { recursive: true, force: true });
});

function cli(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BUILT_CLI, ...args], { encoding: 'utf8', env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function cliAsync(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BUILT_CLI, ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe.each([
  ['pglite', () => join(tmp, `store-${Math.random().toString(16).slice(2)}`)],
  [
    'postgres',
    () => {
      const s = uniqueSchema();
      schemas.push(s);
      return pgUrlWithSchema(s);
    },
  ],
] as const)('a backup while another process writes [%s]', (_kind, place) => {
  it('restores every turn acknowledged before it began, as one snapshot, and verifies', async () => {
    const db = place();
    const init = cli(['init', '--db', db]);
    expect(init.code, init.stderr).toBe(0);
    const acked: string[] = [];
    let before: string[] | null = null;
    let backup: Promise<{ code: number | null; stderr: string }> | null = null;
    const out = join(tmp, `backup-${Math.random().toString(16).slice(2)}`);
    const written = new Promise<void>((done, fail) => {
      const child = spawn(process.execPath, [WRITER, db, 'w', 'turn', '600'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      createInterface({ input: child.stdout }).on('line', (line) => {
        const doc = JSON.parse(line) as { ack?: string };
        if (doc.ack === undefined) return;
        acked.push(doc.ack);
        // the backup begins once 150 turns are acknowledged, while the writer goes on
        if (acked.length === 150) {
          before = [...acked];
          backup = cliAsync(['backup', '--db', db, '--out', out]);
        }
      });
      child.on('close', (code) =>
        code === 0 ? done() : fail(new Error(`writer exited ${code}: ${stderr}`)),
      );
    });
    await written;
    const took = await backup!;
    expect(took.code, took.stderr).toBe(0);
    expect(acked).toHaveLength(600);

    const restored = join(tmp, `restored-${Math.random().toString(16).slice(2)}`);
    const r = cli(['restore', out, '--db', restored]);
    expect(r.code, r.stderr).toBe(0);
    const h = cli(['history', '--db', restored, '--session', 'w', '--format', 'json', '--json']);
    expect(h.code, h.stderr).toBe(0);
    const contents = (JSON.parse(h.stdout) as { turns: Array<{ content: string }> }).turns.map(
      (t) => t.content,
    );
    // every turn acknowledged before the backup began
    expect(contents.slice(0, before!.length)).toEqual(before);
    // one snapshot: the first k of the writer's turns, in order, none missing
    expect(contents).toEqual(Array.from({ length: contents.length }, (_, i) => `turn ${i}`));
    // and the writer was still writing when it was taken (about 200 of 600 here; the rest of the
    // writer's turns take seconds, the backup's start well under one)
    expect(contents.length).toBeLessThan(600);
    const v = cli(['chain', 'verify', '--db', restored]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    // the same backup as one file: a tar archive the system's tar reads, restored as the folder is
    const tar = join(tmp, `backup-${Math.random().toString(16).slice(2)}.tar`);
    expect(cli(['backup', '--db', db, '--out', tar]).code).toBe(0);
    const listed = spawnSync('tar', ['-tf', tar], { encoding: 'utf8' });
    expect(listed.status, listed.stderr).toBe(0);
    const top = tar.slice(tar.lastIndexOf('/') + 1, -'.tar'.length);
    expect(listed.stdout.split('\n')).toContain(`${top}/manifest.json`);
    const fromTar = join(tmp, `restored-${Math.random().toString(16).slice(2)}`);
    const rt = cli(['restore', tar, '--db', fromTar]);
    expect(rt.code, rt.stderr).toBe(0);
    // the writer went on after the backup began: the source holds all it acknowledged
    const all = cli(['history', '--db', db, '--session', 'w', '--format', 'json', '--json']);
    expect((JSON.parse(all.stdout) as { turns: unknown[] }).turns).toHaveLength(600);
  }, 240_000);
});
