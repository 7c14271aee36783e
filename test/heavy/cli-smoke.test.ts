// The built `memledger` binary, a few commands of every group on the embedded default store: the
// process wiring (cli/main.ts: its io, exit codes, one JSON document on stdout) that the in-process
// CLI tests, which run on an injected engine at the test key cost, do not reach. It also shows the
// binary makes owner keys at production strength and refuses a test-cost key.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_CLI, ENV_WITHOUT_MEMLEDGER, runCliCaptured } from '../support/cli.js';

const PASS = 'correct horse battery staple';
const tmp = mkdtempSync(join(tmpdir(), 'memledger-smoke-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const db = join(tmp, 'store');
const key = join(tmp, 'owner.key');
const probeRoot = join(tmp, 'probe-root');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** `memledger … --db <store> --json` as a child process. */
function memledger(args: string[], env: Record<string, string> = {}, store = db): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BUILT_CLI, ...args, '--db', store, '--json'],
      {
        env: {
          ...ENV_WITHOUT_MEMLEDGER,
          HOME: tmp,
          MEMLEDGER_OWNER_PASSPHRASE: PASS,
          MEMLEDGER_OWNER_KEY: key,
          ...env,
        },
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** Runs a command that must succeed and returns its one JSON document. */
async function ok<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const r = await memledger(args);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  expect(r.stdout.trim().split('\n'), 'one JSON document').toHaveLength(1);
  return JSON.parse(r.stdout) as T;
}

/** The error code of a command that must fail, with its exit code. */
async function refused(args: string[], env: Record<string, string> = {}) {
  const r = await memledger(args, env);
  expect(r.stdout).toBe('');
  return { exit: r.code, code: (JSON.parse(r.stderr) as { error: { code: string } }).error.code };
}

function jsonFile(name: string, value: unknown): string {
  const path = join(tmp, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe('the built memledger, command group by command group [pglite]', () => {
  let session = '';

  beforeAll(() => {
    mkdirSync(probeRoot, { recursive: true });
    writeFileSync(join(probeRoot, 'report.md'), 'all workers done\n');
  });

  it('init makes the store and an owner key at production strength', async () => {
    const init = await ok<{ engine: string; ownerKey: { created: boolean } }>('init');
    expect(init).toMatchObject({ engine: 'pglite', ownerKey: { created: true } });
    const kdf = (JSON.parse(readFileSync(key, 'utf8')) as { kdf: Record<string, number> }).kdf;
    expect(kdf).toMatchObject({ N: 2 ** 15, r: 8, p: 1 });
  });

  it('session and turn: a session, a user turn, a reply with its receipt, the history', async () => {
    session = (await ok<{ sessionId: string }>('session', 'new', '--title', 'smoke')).sessionId;
    const text = 'I moved to Lund last spring and I play the cello.';
    expect(
      await ok('turn', 'add', '--session', session, '--role', 'user', '--text', text),
    ).toMatchObject({ seq: 1 });
    await ok(
      'turn',
      'add',
      '--session',
      session,
      '--role',
      'assistant',
      '--text',
      'Noted.',
      '--no-tools',
    );
    const history = await ok<{ turns: Array<{ seq: number; receipt: unknown }> }>(
      'history',
      '--session',
      session,
      '--format',
      'json',
    );
    expect(history.turns.map((t) => t.seq)).toEqual([1, 2]);
    expect(history.turns[1]?.receipt).toMatchObject({ kind: 'none' });
    const listed = await ok<{ sessions: Array<{ sessionId: string; turns: number }> }>(
      'session',
      'list',
    );
    expect(listed.sessions).toEqual([expect.objectContaining({ sessionId: session, turns: 2 })]);
    expect(await ok('usage', '--session', session)).toBeDefined();
  });

  it('the gate: propose, pile, decide with the key, memory, chain verify, dropped', async () => {
    const file = jsonFile('proposals.json', [
      {
        slot: 'what_i_know_about_user',
        key: 'city',
        text: 'The user lives in Lund.',
        origin: 'saw',
        evidence: { turn: 1, quote: 'I moved to Lund last spring' },
      },
      {
        slot: 'what_i_know_about_user',
        text: 'The user was corrected about Oslo.',
        origin: 'saw',
        evidence: { turn: 2, quote: 'Noted.' },
      },
    ]);
    const proposed = await ok<{
      proposed: Array<{ id: string }>;
      dropped: Array<{ code: string }>;
    }>('propose', '--session', session, '--file', file);
    expect(proposed.proposed).toHaveLength(1);
    expect(proposed.dropped.map((d) => d.code)).toEqual(['EVIDENCE_NOT_USER_TURN']);
    const id = proposed.proposed[0]?.id ?? '';
    expect((await ok<{ pending: Array<{ id: string }> }>('pile')).pending.map((p) => p.id)).toEqual(
      [id],
    );
    expect(await ok('decide', id, 'approve')).toMatchObject({
      decision: 'approve',
      status: 'active',
    });
    const memory = await ok<{ facts: Array<{ text: string }> }>('memory');
    expect(memory.facts.map((f) => f.text)).toEqual(['The user lives in Lund.']);
    expect(await ok('chain', 'verify')).toMatchObject({ ok: true, length: 1, anchored: true });
    expect((await ok<{ dropped: unknown[] }>('dropped')).dropped).toHaveLength(1);
  });

  it('refuses a bad flag with exit 2, and an unknown command', async () => {
    expect(await refused(['history', '--session', session, '--last', 'many'])).toEqual({
      exit: 2,
      code: 'INVALID_ARGUMENT',
    });
    expect(await refused(['no-such-command'])).toMatchObject({ code: 'UNKNOWN_COMMAND' });
  });

  it('refuses to sign with an owner key made at the test cost (KEY_UNREADABLE)', async () => {
    // a store whose owner key the in-process CLI made at the test cost, as the unit tier does
    const weakDb = join(tmp, 'weak-store');
    const weakEnv = {
      MEMLEDGER_OWNER_PASSPHRASE: PASS,
      MEMLEDGER_OWNER_KEY: join(tmp, 'weak.key'),
    };
    const inProcess = async <T>(...args: string[]): Promise<T> => {
      const r = await runCliCaptured([...args, '--db', weakDb, '--json'], weakEnv);
      expect(r.code, r.stderr).toBe(0);
      return r.json() as T;
    };
    await inProcess('init');
    const s = (await inProcess<{ sessionId: string }>('session', 'new')).sessionId;
    await inProcess('turn', 'add', '--session', s, '--role', 'user', '--text', 'I keep bees.');
    await inProcess('turn', 'add', '--session', s, '--role', 'user', '--text', 'I grow leeks.');
    const propose = async (turn: number, text: string, quote: string): Promise<string> => {
      const file = jsonFile(`weak-${turn}.json`, [
        { slot: 'what_i_know_about_user', text, origin: 'saw', evidence: { turn, quote } },
      ]);
      const r = await inProcess<{ proposed: Array<{ id: string }> }>(
        'propose',
        '--session',
        s,
        '--file',
        file,
      );
      return r.proposed[0]?.id ?? '';
    };
    const first = await propose(1, 'The user keeps bees.', 'I keep bees');
    const second = await propose(2, 'The user grows leeks.', 'I grow leeks');
    const binary = await memledger(['decide', first, 'approve'], weakEnv, weakDb);
    expect(binary.code).not.toBe(0);
    expect(JSON.parse(binary.stderr)).toMatchObject({
      error: { code: 'KEY_UNREADABLE', message: expect.stringMatching(/below production/) },
    });
    // control: the same key signs in process, where the test cost was asked for
    expect(await inProcess('decide', second, 'approve')).toMatchObject({ decision: 'approve' });
  });

  it('the ledger: retract a live fact, list it, see it due', async () => {
    const live = (await ok<{ facts: Array<{ id: string }> }>('memory')).facts[0]?.id ?? '';
    const r = await ok<{ id: string; verdict: string }>(
      'retract',
      '--claim',
      'The user lives in Lund.',
      '--fact',
      live,
      '--stood-on',
      'one remark',
      '--why-wrong',
      'the user moved again',
      '--corrected',
      'The user lives in Malmö.',
      '--procedure',
      'ask the user',
      '--pass-obs',
      'the user names Malmö',
      '--overturn-if',
      'the user names Lund',
      '--corrected-at',
      new Date(Date.now() - 5 * 86_400_000).toISOString(),
    );
    expect(r.verdict).toBe('unchecked');
    expect(
      (await ok<{ retractions: Array<{ id: string }> }>('retract', 'list')).retractions,
    ).toEqual([expect.objectContaining({ id: r.id })]);
    expect(
      (await ok<{ due: Array<{ id: string }> }>('retract', 'due')).due.map((d) => d.id),
    ).toEqual([r.id]);
    // an approved fact stays live, disputed, until the owner signs the retraction
    expect((await ok<{ facts: Array<{ id: string }> }>('memory')).facts.map((f) => f.id)).toEqual([
      live,
    ]);
    expect(await ok('retract', 'sign', r.id)).toMatchObject({ retractionId: r.id, factId: live });
    expect((await ok<{ facts: unknown[] }>('memory')).facts).toEqual([]);
  });

  it('probes: a file probe in a root, its log, the calibrations', async () => {
    const probe = await ok<{ verdict: string }>(
      'probe',
      'file',
      '--path',
      'report.md',
      '--contains',
      'workers done',
      '--root',
      probeRoot,
    );
    expect(probe.verdict).toBe('verified');
    expect((await ok<{ records: unknown[] }>('probe', 'log')).records).toHaveLength(1);
    expect(await ok('probe', 'calibrations')).toBeDefined();
  });

  it('ground truth and arrival: commitments, an action, a tool, the zone, two arrivals and their diff', async () => {
    await ok('commitment', 'add', '--title', 'send the packing list', '--due', '2026-12-10');
    expect((await ok<{ commitments: unknown[] }>('commitment', 'list')).commitments).toHaveLength(
      1,
    );
    await ok(
      'action',
      'record',
      '--tool',
      'send_email',
      '--surface',
      'chat',
      '--target',
      'the list',
    );
    await ok('tool', 'register', '--name', 'web_search', '--surfaces', 'chat');
    expect((await ok<{ tools: unknown[] }>('tool', 'list')).tools).toHaveLength(1);
    expect(await ok('timezone', '--zone', 'Europe/Stockholm')).toEqual({
      timeZone: 'Europe/Stockholm',
    });
    const first = await ok<{ blocks: Array<{ name: string; text: string }> }>(
      'arrival',
      '--surface',
      'chat',
      '--format',
      'json',
    );
    expect(first.blocks.find((b) => b.name === 'settled_facts')?.text).toContain(
      '"send the packing list" (due 2026-12-10)',
    );
    await ok('tool', 'register', '--name', 'check_workers', '--surfaces', 'chat');
    await ok('arrival', '--surface', 'chat', '--format', 'json');
    const diff = await ok<{ tools: { added: string[] } }>('arrival', 'diff', '--surface', 'chat');
    expect(diff.tools.added).toEqual(['check_workers']);
  });

  it('recall, slots, tokens, a hook and a reindex', async () => {
    const recalled = await ok<{ items: Array<{ text: string }> }>(
      'recall',
      'cello',
      '--include-history',
    );
    expect(recalled.items.some((i) => i.text.includes('cello'))).toBe(true);
    await ok('slot', 'declare', '--name', 'emails', '--rule', 'action');
    expect(await ok('slot', 'delegate', '--name', 'emails', '--tools', 'send_email')).toBeDefined();
    expect(
      (await ok<{ slots: Array<{ name: string }> }>('slot', 'list')).slots.map((s) => s.name),
    ).toContain('emails');
    const token = await ok<{ id: string; token: string }>('token', 'create', '--role', 'reader');
    expect(token.token).toMatch(/^mlt_/);
    expect(await ok('token', 'revoke', token.id)).toMatchObject({ id: token.id });
    const input = jsonFile('hook.json', {
      session_id: 'smoke-hook-session',
      transcript_path: join(tmp, 'none.jsonl'),
      cwd: tmp,
      hook_event_name: 'SessionStart',
    });
    const hook = await memledger(['hook', 'session-start', '--input', input]);
    expect(hook.code, hook.stderr).toBe(0);
    expect(hook.stdout).toContain('[Now]');
    expect(await ok('reindex')).toEqual({ reindexed: false, turns: 0, facts: 0 });
  });
});
