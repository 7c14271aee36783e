/**
 * The write gate through the CLI: init and the owner key, propose / pile / dropped / memory,
 * owner decisions (decide, review), supersession, declared slots with auto-live actions, and the
 * decision chain (verify, anchor check, tampering that blocks promotion). Every case runs on both
 * engines.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeClient } from '../src/engine/test-access.js';
import { runCliCaptured, type CliOptions, type CliResult } from './support/cli.js';
import { dropSchema, ENGINES, pgUrlWithSchema, uniqueSchema } from './support/engines.js';
import { sharedEngines, type SharedEngines } from './support/shared-engines.js';

const PASS = 'correct horse battery staple';

const tmpRoot = mkdtempSync(join(tmpdir(), 'memledger-cli-gate-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

/** The passphrase as a file, for `--passphrase-file`; and a wrong one. */
const passFile = join(tmpRoot, 'passphrase.txt');
const badPassFile = join(tmpRoot, 'wrong-passphrase.txt');
writeFileSync(passFile, `${PASS}\n`);
writeFileSync(badPassFile, 'not the passphrase\n');

type Env = Record<string, string>;

interface Proposed {
  id: string;
  slot: string;
  text: string;
  attested: boolean;
  status: string;
}
interface Dropped {
  slot: string;
  text: string;
  code: string;
  reason: string;
}
interface ProposeOutput {
  proposed: Proposed[];
  dropped: Dropped[];
}
interface FactJson {
  id: string;
  slot: string;
  key: string | null;
  text: string;
  origin: string;
  status: string;
  attested: boolean;
  evidence: { seq: number | null; quote: string | null; tool: string | null };
  supersedesId: string | null;
  supersededById: string | null;
  line: string;
}
interface PendingJson extends FactJson {
  citedTurn: { seq: number; role: string; content: string; sessionId: string } | null;
}
interface DecideOutput {
  proposalId: string;
  decision: string;
  status: string;
  seq: number;
  hash: string;
  root: string;
  superseded: string | null;
}
interface ChainOutput {
  ok: boolean;
  length: number;
  brokenAt: number | null;
  code?: string;
}

let fileCounter = 0;
/** Writes a proposals file (a value as JSON, or raw text) into the temp dir. */
function proposalFile(content: unknown): string {
  const file = join(tmpRoot, `proposals-${++fileCounter}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** A user proposal quoting the user's words from turn `turn`. */
function saw(slot: string, text: string, turn: number, quote: string, key?: string): unknown {
  return {
    slot,
    text,
    origin: 'saw',
    evidence: { turn, quote },
    ...(key === undefined ? {} : { key }),
  };
}

/**
 * A CLI bound to one store; `env` is the default environment of every run. Its commands share the
 * engines kept in `engines`, as a long-running host does (the built binary: test/heavy/).
 */
function cliOn(db: string, env: Env, engines: SharedEngines) {
  const run = (args: string[], runEnv: Env = env, options: CliOptions = {}): Promise<CliResult> =>
    runCliCaptured([...args, '--db', db], runEnv, { engines, ...options });

  /** Runs with --json, expects success and returns the one JSON document. */
  async function ok<T>(args: string[], runEnv: Env = env): Promise<T> {
    const r = await run([...args, '--json'], runEnv);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.json() as T;
  }

  /** Runs with --json, expects a refusal reported on stderr, and returns its error code. */
  async function fail(args: string[], runEnv: Env = env): Promise<string> {
    const r = await run([...args, '--json'], runEnv);
    expect(r.code, `${args.join(' ')} should fail`).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toEqual({
      error: { code: expect.any(String), message: expect.any(String) },
    });
    return r.errorCode();
  }

  async function session(subject?: string): Promise<string> {
    const args = ['session', 'new', ...(subject === undefined ? [] : ['--subject', subject])];
    return (await ok<{ sessionId: string }>(args)).sessionId;
  }

  /** Records a turn and returns its seq. */
  async function turn(
    sessionId: string,
    role: 'user' | 'assistant',
    text: string,
    ...extra: string[]
  ): Promise<number> {
    const args = ['turn', 'add', '--session', sessionId, '--role', role, '--text', text, ...extra];
    return (await ok<{ seq: number }>(args)).seq;
  }

  /**
   * `subject`: the session's subject, when it is not the default one. The exit status is checked
   * on every call: 5 when the file held proposals and the gate dropped them all, else 0.
   */
  async function propose(
    sessionId: string,
    items: unknown[],
    subject?: string,
  ): Promise<ProposeOutput> {
    const args = [
      'propose',
      '--session',
      sessionId,
      '--file',
      proposalFile(items),
      ...(subject === undefined ? [] : ['--subject', subject]),
      '--json',
    ];
    const r = await run(args, env);
    const out = r.json() as ProposeOutput;
    const allDropped = items.length > 0 && out.proposed.length === 0;
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(allDropped ? 5 : 0);
    expect(r.stderr).toBe('');
    return out;
  }

  /** Proposes one item that must pass the gate; returns its id. */
  async function proposeOne(sessionId: string, item: unknown, subject?: string): Promise<string> {
    const out = await propose(sessionId, [item], subject);
    expect(out.dropped).toEqual([]);
    expect(out.proposed).toHaveLength(1);
    return (out.proposed[0] as Proposed).id;
  }

  /** `decide` with an explicit key file and passphrase file, and nothing from the environment. */
  function decideArgs(id: string, decision: string, key: string, pass = passFile): string[] {
    return ['decide', id, decision, '--key', key, '--passphrase-file', pass];
  }

  async function memory(all = false, subject?: string, key?: string): Promise<FactJson[]> {
    const args = [
      'memory',
      ...(all ? ['--all'] : []),
      ...(subject === undefined ? [] : ['--subject', subject]),
      ...(key === undefined ? [] : ['--key', key]),
    ];
    return (await ok<{ facts: FactJson[] }>(args)).facts;
  }

  async function pile(subject?: string): Promise<PendingJson[]> {
    const args = ['pile', ...(subject === undefined ? [] : ['--subject', subject])];
    return (await ok<{ pending: PendingJson[] }>(args)).pending;
  }

  async function dropped(): Promise<Dropped[]> {
    return (await ok<{ dropped: Dropped[] }>(['dropped'])).dropped;
  }

  /** `chain verify --json`, which exits 3 when the chain is broken. */
  async function verify(...extra: string[]): Promise<{ code: number; report: ChainOutput }> {
    const r = await run(['chain', 'verify', ...extra, '--json']);
    return { code: r.code, report: r.json() as ChainOutput };
  }

  return {
    run,
    ok,
    fail,
    session,
    turn,
    propose,
    proposeOne,
    decideArgs,
    memory,
    pile,
    dropped,
    verify,
  };
}

const byId = (facts: readonly FactJson[], id: string): FactJson | undefined =>
  facts.find((f) => f.id === id);

/** Runs SQL on a store directly, outside the CLI's commands: on the engine they keep open. */
async function tamper(engines: SharedEngines, db: string, sql: string): Promise<void> {
  const engine = engines.engineFor(db);
  if (engine === undefined) throw new Error(`no command has opened ${db}`);
  await storeClient(engine).exec(sql);
}

describe.each(ENGINES)('memledger CLI write gate [%s]', (kind) => {
  const schemas: string[] = [];
  /** A new, empty store location: a directory that does not exist yet, or an unused schema. */
  const freshDb = (name: string): string => {
    if (kind === 'pglite') return join(tmpRoot, `${name}-${kind}`);
    const schema = uniqueSchema();
    schemas.push(schema);
    return pgUrlWithSchema(schema);
  };
  const engines = sharedEngines();
  afterAll(async () => {
    await engines.close();
    for (const schema of schemas) await dropSchema(schema);
  });

  const ownerKey = join(tmpRoot, `owner-${kind}.key`);
  const otherKey = join(tmpRoot, `other-${kind}.key`);
  const ownerEnv: Env = { MEMLEDGER_OWNER_PASSPHRASE: PASS, MEMLEDGER_OWNER_KEY: ownerKey };
  const passOnly: Env = { MEMLEDGER_OWNER_PASSPHRASE: PASS };
  const db = freshDb('main');
  const cli = cliOn(db, ownerEnv, engines);
  let firstInit: CliResult;

  beforeAll(async () => {
    firstInit = await cli.run(['init', '--key', ownerKey, '--json'], passOnly);
  });

  it('init writes the owner key file (0600) and reports its id; a second init keeps it', async () => {
    expect(firstInit.code, firstInit.stderr).toBe(0);
    const out = firstInit.json() as { ownerKey: { keyId: string } };
    expect(out).toMatchObject({
      subject: 'owner',
      created: true,
      engine: kind,
      ownerKey: { keyId: expect.stringMatching(/^ed25519:[0-9a-f]{16}$/), keyFile: ownerKey },
    });
    const keyId = out.ownerKey.keyId;
    expect(statSync(ownerKey).mode & 0o777).toBe(0o600);
    const keyFileText = readFileSync(ownerKey, 'utf8');
    expect(JSON.parse(keyFileText)).toMatchObject({ format: 'memledger-owner-key', keyId });
    expect(keyFileText).not.toContain(PASS);

    const again = await cli.ok(['init', '--key', ownerKey], passOnly);
    expect(again).toMatchObject({
      subject: 'owner',
      created: false,
      ownerKey: { keyId, keyFile: null, created: false },
    });
    // The key file is untouched.
    expect(readFileSync(ownerKey, 'utf8')).toBe(keyFileText);
  });

  it('init without a passphrase source or a terminal is refused and creates nothing', async () => {
    const fresh = freshDb('no-passphrase');
    const key = join(tmpRoot, `no-passphrase-${kind}.key`);
    const bare = cliOn(fresh, {}, engines);
    expect(await bare.fail(['init', '--key', key])).toBe('PASSPHRASE_REQUIRED');
    expect(existsSync(key)).toBe(false);
    if (kind === 'pglite') expect(existsSync(fresh)).toBe(false);
    expect(await bare.fail(['session', 'new'])).toBe('NOT_INITIALIZED');
    if (kind === 'pglite') expect(existsSync(fresh)).toBe(false);
  });

  it('init refuses a key file path that already exists, and creates nothing', async () => {
    const fresh = freshDb('key-exists');
    const key = join(tmpRoot, `key-exists-${kind}.key`);
    writeFileSync(key, 'someone else’s file\n');
    const other = cliOn(fresh, passOnly, engines);
    expect(await other.fail(['init', '--key', key])).toBe('INVALID_ARGUMENT');
    expect(readFileSync(key, 'utf8')).toBe('someone else’s file\n');
    if (kind === 'pglite') expect(existsSync(fresh)).toBe(false);
    expect(await other.fail(['session', 'new'])).toBe('NOT_INITIALIZED');
  });

  it('init refuses a key file path it cannot create, and creates nothing', async () => {
    const fresh = freshDb('key-uncreatable');
    const notADirectory = join(tmpRoot, `plain-file-${kind}`);
    writeFileSync(notADirectory, 'x');
    const key = join(notADirectory, 'owner.key');
    const other = cliOn(fresh, passOnly, engines);
    expect(await other.fail(['init', '--key', key])).toBe('INVALID_ARGUMENT');
    expect(existsSync(key)).toBe(false);
    if (kind === 'pglite') expect(existsSync(fresh)).toBe(false);
    expect(await other.fail(['session', 'new'])).toBe('NOT_INITIALIZED');
  });

  // Shared by the propose and listing cases below.
  let gateSession = '';
  let validId = '';
  const LATE_SHIFT = 'I work the late shift at the depot, 15:00 to 23:00, on weekdays.';

  it('propose passes a quoted user fact and drops each bad item with its code', async () => {
    gateSession = await cli.session();
    expect(await cli.turn(gateSession, 'user', LATE_SHIFT)).toBe(1);
    expect(
      await cli.turn(gateSession, 'assistant', 'Noted: you work the late shift.', '--no-tools'),
    ).toBe(2);
    const slot = 'what_i_know_about_user';
    const out = await cli.propose(gateSession, [
      saw(
        slot,
        'The user works the late shift at the depot',
        1,
        'I work the late shift at the depot',
      ),
      saw(slot, 'The user works late', 2, 'you work the late shift'),
      saw(slot, 'The user works nights', 1, 'I work the night shift'),
      saw('favourite_colour', 'The user likes green', 1, 'I work the late shift'),
      42,
      { slot, text: 'The user works weekdays', evidence: { turn: 1, quote: 'on weekdays' } },
    ]);
    expect(out.proposed).toEqual([
      {
        id: expect.any(String),
        slot,
        text: 'The user works the late shift at the depot',
        attested: true,
        attestation: { verdict: 'asserted', reason: expect.stringContaining('the user states it') },
        status: 'proposed',
      },
    ]);
    validId = (out.proposed[0] as Proposed).id;
    const drop = (s: string, text: string, code: string): Dropped => ({
      slot: s,
      text,
      code,
      reason: expect.any(String) as unknown as string,
    });
    expect(out.dropped).toEqual([
      drop(slot, 'The user works late', 'EVIDENCE_NOT_USER_TURN'),
      drop(slot, 'The user works nights', 'QUOTE_NOT_FOUND'),
      drop('favourite_colour', 'The user likes green', 'UNKNOWN_SLOT'),
      drop('', '', 'INVALID_PROPOSAL'),
      drop(slot, 'The user works weekdays', 'INVALID_PROPOSAL'),
    ]);
    for (const d of out.dropped) expect(d.reason.length).toBeGreaterThan(0);
  });

  it('propose refuses bad input with a clear error and changes nothing', async () => {
    const pileBefore = await cli.pile();
    const droppedBefore = await cli.dropped();
    const valid = [saw('stances', 'The user prefers weekday shifts', 1, 'on weekdays')];
    expect(
      await cli.fail(['propose', '--session', gateSession, '--file', proposalFile({ slot: 'x' })]),
    ).toBe('INVALID_ARGUMENT');
    expect(
      await cli.fail(['propose', '--session', gateSession, '--file', proposalFile('not json')]),
    ).toBe('INVALID_ARGUMENT');
    expect(
      await cli.fail(['propose', '--session', gateSession, '--file', join(tmpRoot, 'missing')]),
    ).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(['propose', '--session', gateSession])).toBe('INVALID_ARGUMENT');
    expect(
      await cli.fail(['propose', '--session', 'no-such-session', '--file', proposalFile(valid)]),
    ).toBe('SESSION_NOT_FOUND');
    expect(await cli.pile()).toEqual(pileBefore);
    expect(await cli.dropped()).toEqual(droppedBefore);
  });

  it('pile shows the pending proposal in its cited turn; dropped keeps the codes; memory is empty', async () => {
    const pending = await cli.pile();
    const item = pending.find((p) => p.id === validId);
    expect(item).toMatchObject({
      slot: 'what_i_know_about_user',
      origin: 'saw',
      status: 'proposed',
      attested: true,
      evidence: { seq: 1, quote: 'I work the late shift at the depot' },
      citedTurn: { seq: 1, role: 'user', content: LATE_SHIFT, sessionId: gateSession },
    });
    const drops = await cli.dropped();
    expect(drops.map((d) => d.code).sort()).toEqual(
      [
        'EVIDENCE_NOT_USER_TURN',
        'INVALID_PROPOSAL',
        'INVALID_PROPOSAL',
        'QUOTE_NOT_FOUND',
        'UNKNOWN_SLOT',
      ].sort(),
    );
    expect(drops.find((d) => d.code === 'UNKNOWN_SLOT')).toMatchObject({
      slot: 'favourite_colour',
      text: 'The user likes green',
      reason: expect.stringContaining('favourite_colour'),
    });

    expect(await cli.memory()).toEqual([]);
    const all = await cli.memory(true);
    expect(byId(all, validId)).toMatchObject({ status: 'proposed' });
    expect(byId(all, validId)?.line).toMatch(
      /^\[PROPOSED\] \(saw, recorded \d{4}-\d{2}-\d{2}\) what_i_know_about_user: The user works the late shift at the depot$/,
    );
  });

  it('decide approves with the owner key and refuses everything else, changing nothing', async () => {
    const s = await cli.session();
    await cli.turn(s, 'user', 'My manager is called Dana and she runs the Oslo office.');
    const slot = 'what_i_know_about_user';
    const approveId = await cli.proposeOne(
      s,
      saw(slot, "The user's manager is called Dana", 1, 'My manager is called Dana'),
    );
    const rejectId = await cli.proposeOne(
      s,
      saw(slot, 'Dana runs the Oslo office', 1, 'she runs the Oslo office'),
    );
    // The other subject's key: a real owner key, but not this subject's.
    const other = await cli.ok<{ ownerKey: { keyId: string } }>(
      ['init', '--subject', 'other', '--key', otherKey],
      passOnly,
    );
    expect(other).toMatchObject({ subject: 'other', ownerKey: { created: true } });

    const refusals: Array<[string, string[]]> = [
      ['INVALID_ARGUMENT', cli.decideArgs(approveId, 'maybe', ownerKey)],
      ['INVALID_ARGUMENT', ['decide', approveId]],
      ['PROPOSAL_NOT_FOUND', cli.decideArgs('no-such-proposal', 'approve', ownerKey)],
      ['BAD_PASSPHRASE', cli.decideArgs(approveId, 'approve', ownerKey, badPassFile)],
      ['WRONG_KEY', cli.decideArgs(approveId, 'approve', otherKey)],
      ['PASSPHRASE_REQUIRED', ['decide', approveId, 'approve', '--key', ownerKey]],
    ];
    for (const [code, args] of refusals) {
      expect(await cli.fail(args, {}), args.join(' ')).toBe(code);
    }
    expect(await cli.memory()).toEqual([]);
    expect((await cli.pile()).map((p) => p.id)).toEqual(
      expect.arrayContaining([approveId, rejectId]),
    );
    expect((await cli.verify()).report).toMatchObject({ ok: true, length: 0 });

    const approved = await cli.ok<DecideOutput>(cli.decideArgs(approveId, 'approve', ownerKey), {});
    expect(approved).toEqual({
      proposalId: approveId,
      decision: 'approve',
      status: 'active',
      seq: 1,
      hash: expect.any(String),
      root: expect.any(String),
      superseded: null,
    });
    // the first link is the chain's root
    expect(approved.root).toBe(approved.hash);
    const live = await cli.memory();
    expect(live.map((f) => f.id)).toEqual([approveId]);
    expect(live[0]?.status).toBe('active');
    expect(live[0]?.line).toMatch(
      /^\(saw, \d{1,2} [A-Z][a-z]{2} \d{4}\) what_i_know_about_user: The user's manager is called Dana$/,
    );

    expect(await cli.fail(cli.decideArgs(approveId, 'approve', ownerKey), {})).toBe('NOT_PENDING');
    expect(await cli.fail(cli.decideArgs(approveId, 'reject', ownerKey), {})).toBe('NOT_PENDING');

    // in words, as a person reads it
    const rejected = await cli.run(cli.decideArgs(rejectId, 'reject', ownerKey), {});
    expect(rejected.code).toBe(0);
    expect(rejected.stdout.trim()).toBe(`rejected ${rejectId}: now rejected (decision #2)`);
    expect((await cli.memory()).map((f) => f.id)).toEqual([approveId]);
    const all = await cli.memory(true);
    expect(byId(all, rejectId)?.status).toBe('rejected');
    expect(byId(all, rejectId)?.line).toMatch(/^\[REJECTED\] \(saw, recorded /);
    const pendingIds = (await cli.pile()).map((p) => p.id);
    expect(pendingIds).not.toContain(approveId);
    expect(pendingIds).not.toContain(rejectId);
    expect(await cli.verify()).toEqual({
      code: 0,
      report: expect.objectContaining({ ok: true, length: 2, brokenAt: null }),
    });
  });

  it('approving a newer value for a live slot+key supersedes the older one', async () => {
    expect(
      await cli.ok(['slot', 'declare', '--name', 'preferences', '--rule', 'user_fact']),
    ).toEqual({ name: 'preferences', rule: 'user_fact', autoLive: false, tools: [] });
    const first = await cli.session();
    await cli.turn(first, 'user', 'I prefer tea in the morning, black.');
    const olderId = await cli.proposeOne(
      first,
      saw('preferences', 'The user prefers tea in the morning', 1, 'I prefer tea', 'drink'),
    );
    const second = await cli.session();
    await cli.turn(second, 'user', 'Hello again.');
    await cli.turn(second, 'user', 'These days I prefer coffee, strong.');
    const newerId = await cli.proposeOne(
      second,
      saw('preferences', 'The user prefers coffee now', 2, 'These days I prefer coffee', 'drink'),
    );

    const a = await cli.ok<DecideOutput>(cli.decideArgs(olderId, 'approve', ownerKey), {});
    expect(a).toMatchObject({ status: 'active', superseded: null });
    const b = await cli.ok<DecideOutput>(cli.decideArgs(newerId, 'approve', ownerKey), {});
    expect(b).toMatchObject({ status: 'active', superseded: olderId });

    const live = (await cli.memory()).filter((f) => f.slot === 'preferences');
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({
      id: newerId,
      key: 'drink',
      status: 'active',
      supersedesId: olderId,
    });
    expect(live[0]?.line).toMatch(/^\(saw, .*\) preferences\.drink: The user prefers coffee now$/);

    const older = byId(await cli.memory(true), olderId);
    expect(older).toMatchObject({ status: 'superseded', supersededById: newerId });
    expect(older?.line.startsWith('[SUPERSEDED] (')).toBe(true);
    expect(older?.line).toMatch(
      /^\[SUPERSEDED\] \(saw, recorded \d{4}-\d{2}-\d{2}, superseded \d{4}-\d{2}-\d{2}\) preferences\.drink: The user prefers tea in the morning$/,
    );
  });

  it('slot declare checks its rule; a delegated action slot goes live on its receipt only', async () => {
    expect(await cli.fail(['slot', 'declare', '--name', 'x', '--rule', 'nonsense'])).toBe(
      'UNKNOWN_SLOT_RULE',
    );
    expect(
      await cli.fail(['slot', 'declare', '--name', 'likes', '--rule', 'user_fact', '--auto-live']),
    ).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(['slot', 'declare', '--name', 'sent_email'])).toBe('INVALID_ARGUMENT');
    // auto-live is a delegation the owner signs: it names its tools and needs the owner key
    expect(
      await cli.fail([
        'slot',
        'declare',
        '--name',
        'sent_email',
        '--rule',
        'action',
        '--auto-live',
      ]),
    ).toBe('INVALID_ARGUMENT');
    expect(
      await cli.ok([
        'slot',
        'declare',
        '--name',
        'sent_email',
        '--rule',
        'action',
        '--auto-live',
        '--tools',
        'send_email',
        '--key',
        ownerKey,
        '--passphrase-file',
        passFile,
      ]),
    ).toEqual({ name: 'sent_email', rule: 'action', autoLive: true, tools: ['send_email'] });
    expect(
      await cli.ok(['slot', 'declare', '--name', 'booked_meeting', '--rule', 'action']),
    ).toEqual({ name: 'booked_meeting', rule: 'action', autoLive: false, tools: [] });
    const { slots } = await cli.ok<{ slots: Array<{ name: string }> }>(['slot', 'list']);
    expect(slots.map((x) => x.name)).toEqual(
      expect.arrayContaining(['sent_email', 'booked_meeting', 'preferences']),
    );
    expect(slots.map((x) => x.name)).not.toContain('x');
    expect(slots.map((x) => x.name)).not.toContain('likes');

    const s = await cli.session();
    await cli.turn(s, 'user', 'Please send the invoice to Acme and book a call with them.');
    const sent = await cli.turn(
      s,
      'assistant',
      'Sent the invoice to Acme.',
      '--tools',
      'send_email',
    );
    const searched = await cli.turn(s, 'assistant', 'I emailed Acme.', '--tools', 'web_search');
    const booked = await cli.turn(s, 'assistant', 'Booked the call.', '--tools', 'calendar');

    const live = await cli.propose(s, [
      {
        slot: 'sent_email',
        text: 'Sent the invoice to Acme',
        origin: 'did',
        evidence: { turn: sent, tool: 'send_email' },
      },
    ]);
    expect(live.dropped).toEqual([]);
    expect(live.proposed).toEqual([
      expect.objectContaining({ slot: 'sent_email', status: 'active' }),
    ]);
    const liveId = (live.proposed[0] as Proposed).id;
    const fact = byId(await cli.memory(), liveId);
    expect(fact).toMatchObject({
      origin: 'did',
      status: 'active',
      evidence: { tool: 'send_email' },
    });
    expect(fact?.line.startsWith('(did, ')).toBe(true);

    const noReceipt = await cli.propose(s, [
      {
        slot: 'sent_email',
        text: 'Emailed Acme the contract',
        origin: 'did',
        evidence: { turn: searched, tool: 'send_email' },
      },
    ]);
    expect(noReceipt.proposed).toEqual([]);
    expect(noReceipt.dropped).toEqual([
      expect.objectContaining({ slot: 'sent_email', code: 'RECEIPT_NOT_FOUND' }),
    ]);

    const pending = await cli.propose(s, [
      {
        slot: 'booked_meeting',
        text: 'Booked a call with Acme',
        origin: 'did',
        evidence: { turn: booked, tool: 'calendar' },
      },
    ]);
    expect(pending.proposed).toEqual([
      expect.objectContaining({ slot: 'booked_meeting', status: 'proposed' }),
    ]);
    const pendingId = (pending.proposed[0] as Proposed).id;
    expect(byId(await cli.memory(), pendingId)).toBeUndefined();
    expect((await cli.pile()).map((p) => p.id)).toContain(pendingId);

    // A receipt-promoted action needs no decision of its own: the delegation link backs it.
    expect((await cli.verify()).report).toMatchObject({ ok: true, brokenAt: null });
    // revoked (a signed link too): the next action waits in the pile
    await cli.ok([
      'slot',
      'delegate',
      '--name',
      'sent_email',
      '--revoke',
      '--key',
      ownerKey,
      '--passphrase-file',
      passFile,
    ]);
    const after = await cli.propose(s, [
      {
        slot: 'sent_email',
        text: 'Sent the invoice to Acme again',
        origin: 'did',
        evidence: { turn: sent, tool: 'send_email' },
      },
    ]);
    expect(after.proposed).toEqual([
      expect.objectContaining({ slot: 'sent_email', status: 'proposed' }),
    ]);
    expect(byId(await cli.memory(), liveId)).toBeDefined();
    expect((await cli.verify()).report).toMatchObject({ ok: true, brokenAt: null });
  });

  it('review refuses to run without a terminal', async () => {
    expect(await cli.fail(['review'])).toBe('NO_TERMINAL');
  });

  it('review at a terminal approves on YES, rejects on r, skips on Enter and on lowercase yes', async () => {
    const reviewKey = join(tmpRoot, `reviewer-${kind}.key`);
    await cli.ok(['init', '--subject', 'rev', '--key', reviewKey], passOnly);
    const s = await cli.session('rev');
    // The session is the subject's: commands that name it name the subject too.
    await cli.turn(
      s,
      'user',
      'I live in Bergen, I cycle to work, I have two cats and I sing in a choir.',
      '--subject',
      'rev',
    );
    const slot = 'what_i_know_about_user';
    const ids: string[] = [];
    // One call each, so the pile's order (by recording time) is the order here.
    for (const [text, quote] of [
      ['The user lives in Bergen', 'I live in Bergen'],
      ['The user cycles to work', 'I cycle to work'],
      ['The user has two cats', 'I have two cats'],
      ['The user sings in a choir', 'I sing in a choir'],
    ] as const) {
      ids.push(await cli.proposeOne(s, saw(slot, text, 1, quote), 'rev'));
    }
    const [yes, reject, skip, lowercase] = ids as [string, string, string, string];

    const r = await cli.run(
      ['review', '--subject', 'rev', '--key', reviewKey],
      {},
      {
        answers: [PASS, 'YES', 'r', '', 'yes'],
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Owner passphrase: ');
    expect(r.stdout).toContain('»I live in Bergen«');
    expect(r.stdout).toContain('2 decided, 2 left in the pile.');

    // the subject's own key file anchors its reads (the environment names the owner's)
    const all = await cli.memory(true, 'rev', reviewKey);
    expect(byId(all, yes)?.status).toBe('active');
    expect(byId(all, reject)?.status).toBe('rejected');
    expect(byId(all, skip)?.status).toBe('proposed');
    expect(byId(all, lowercase)?.status).toBe('proposed');
    expect((await cli.memory(false, 'rev', reviewKey)).map((f) => f.id)).toEqual([yes]);
    // anchored by another owner's key file, nothing the store signed is live
    expect(await cli.memory(false, 'rev')).toEqual([]);
    expect((await cli.pile('rev')).map((p) => p.id)).toEqual([skip, lowercase]);
    const chain = await cli.verify('--subject', 'rev', '--key', reviewKey);
    expect(chain).toEqual({
      code: 0,
      report: expect.objectContaining({ ok: true, length: 2, brokenAt: null }),
    });
  });

  it('chain verify checks the key anchor, catches an edited decision, and blocks promotion', async () => {
    const tamperDb = freshDb('tamper');
    const key = join(tmpRoot, `tamper-${kind}.key`);
    const t = cliOn(
      tamperDb,
      { MEMLEDGER_OWNER_PASSPHRASE: PASS, MEMLEDGER_OWNER_KEY: key },
      engines,
    );
    await t.ok(['init']);
    const s = await t.session();
    await t.turn(s, 'user', 'I drive a blue van for the bakery.');
    const slot = 'what_i_know_about_user';
    const approveId = await t.proposeOne(
      s,
      saw(slot, 'The user drives a van', 1, 'I drive a blue van'),
    );
    const rejectId = await t.proposeOne(s, saw(slot, 'The van is blue', 1, 'a blue van'));
    const laterId = await t.proposeOne(
      s,
      saw(slot, 'The user works for the bakery', 1, 'for the bakery'),
    );
    await t.ok(t.decideArgs(approveId, 'approve', key), {});
    await t.ok(t.decideArgs(rejectId, 'reject', key), {});

    expect(await t.verify()).toEqual({
      code: 0,
      report: expect.objectContaining({ ok: true, length: 2, brokenAt: null }),
    });
    // Another owner's key file as the anchor: the store's key is not the one in the file.
    const mismatch = await t.verify('--key', ownerKey);
    expect(mismatch.code).toBe(3);
    expect(mismatch.report).toMatchObject({ ok: false, brokenAt: 1, code: 'KEY_MISMATCH' });

    await tamper(
      engines,
      tamperDb,
      `ALTER TABLE decisions DISABLE TRIGGER decisions_append_only;
       UPDATE decisions SET note = 'edited' WHERE seq = 1;`,
    );
    const broken = await t.verify();
    expect(broken.code).toBe(3);
    expect(broken.report).toMatchObject({ ok: false, length: 2, brokenAt: 1 });
    expect(broken.report.code).toEqual(expect.any(String));

    expect(await t.fail(t.decideArgs(laterId, 'approve', key), {})).toBe('CHAIN_BROKEN');
    expect((await t.pile()).map((p) => p.id)).toEqual([laterId]);
    expect(byId(await t.memory(true), laterId)?.status).toBe('proposed');
    expect((await t.verify()).report).toMatchObject({ ok: false, length: 2, brokenAt: 1 });
  });
});
