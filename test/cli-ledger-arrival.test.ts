/**
 * The retraction ledger and arrival through the CLI only, on both engines: retract a live fact
 * with a probe spec, settle it once due by a calibrated probe (stands, and overturned with the
 * original restored), the gate's RETRACTED_CLAIM rule, the ledger's refusals; then arrival's
 * settled facts, tool surfaces, manifest diff, actions, time zones and output formats.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured, type CliResult } from './support/cli.js';
import { dropSchema, ENGINES, pgUrlWithSchema, uniqueSchema } from './support/engines.js';
import { sharedEngines, type SharedEngines } from './support/shared-engines.js';

const PASS = 'correct horse battery staple';
const DAY = 86_400_000;
const SLOT = 'what_i_know_about_user';

const tmpRoot = mkdtempSync(join(tmpdir(), 'memledger-cli-ledger-arrival-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

type Env = Record<string, string>;

interface FactJson {
  id: string;
  slot: string;
  key: string | null;
  text: string;
  status: string;
  supersedesId: string | null;
  line: string;
}
interface Proposed {
  id: string;
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
interface RetractionJson {
  id: string;
  claim: string;
  corrected: string;
  correctedAt: string;
  caughtBy: string;
  falsifier: { procedure: string; passObservation: string; overturnCondition: string };
  probe: { spec: unknown; standsIf: string; overturnsIf: string } | null;
  dueAt: string;
  factId: string | null;
  verdict: string;
  settlement: {
    at: string;
    outcome: string;
    by: string;
    probeRecordId: string | null;
    restoredFactId: string | null;
  } | null;
}
interface ProbeLogJson {
  records: Array<{
    recordId: string;
    verdict: string;
    calibrated: boolean;
    instrument: string;
    purpose: string | null;
    evidence: Record<string, unknown>;
  }>;
}
interface ArrivalJson {
  blocks: Array<{ name: string; tier: string; text: string; sha256: string; degraded: boolean }>;
  tools: string[];
  manifestId: string;
}
interface DiffJson {
  from: string | null;
  to: string;
  surface: string;
  blocks: { added: string[]; removed: string[]; changed: string[] };
  tools: { added: string[]; removed: string[] };
}

let fileCounter = 0;
/** Writes a JSON document (a proposals list or a probe spec) into the temp dir. */
function jsonFile(content: unknown): string {
  const file = join(tmpRoot, `doc-${++fileCounter}.json`);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

/** A probe spec file: a file probe on `path` in mode `exists`, stands if verified. */
function existsProbeFile(path: string): string {
  return jsonFile({
    probe: { kind: 'file', path, mode: 'exists' },
    standsIf: 'verified',
    overturnsIf: 'falsified',
  });
}

const FALSIFIER = {
  stoodOn: 'a summary of the worker run, not the directory itself',
  whyWrong: 'the directory held worker/probe.txt',
  procedure: 'list the worker directory',
  passObservation: 'worker/probe.txt exists',
  overturnCondition: 'worker/ holds no probe.txt',
};

/** `retract` arguments for `claim`; `extra` adds or overrides flags (parseArgs: last wins). */
function retractArgs(claim: string, ...extra: string[]): string[] {
  return [
    'retract',
    '--claim',
    claim,
    '--stood-on',
    FALSIFIER.stoodOn,
    '--why-wrong',
    FALSIFIER.whyWrong,
    '--corrected',
    `Not so: ${claim}`,
    '--procedure',
    FALSIFIER.procedure,
    '--pass-obs',
    FALSIFIER.passObservation,
    '--overturn-if',
    FALSIFIER.overturnCondition,
    ...extra,
  ];
}

const daysAgo = (days: number): string => new Date(Date.now() - days * DAY).toISOString();

/**
 * A CLI bound to one store; `env` is the default environment of every run. Its commands share one
 * kept engine on the store, as a long-running host does (the built binary: test/heavy/).
 */
function cliOn(db: string, env: Env, engines: SharedEngines) {
  const run = (args: string[], runEnv: Env = env): Promise<CliResult> =>
    runCliCaptured([...args, '--db', db], runEnv, { engines });

  /** Runs with --json, expects success and returns the one JSON document. */
  async function ok<T>(args: string[], runEnv: Env = env): Promise<T> {
    const r = await run([...args, '--json'], runEnv);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.json() as T;
  }

  /** Runs with --json, expects a refusal reported on stderr, and returns its error code. */
  async function fail(args: string[], runEnv: Env = env): Promise<string> {
    const r = await run([...args, '--json'], runEnv);
    expect(r.code, `${args.join(' ')} should fail; stdout: ${r.stdout}`).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toEqual({
      error: { code: expect.any(String), message: expect.any(String) },
    });
    return r.errorCode();
  }

  async function session(): Promise<string> {
    return (await ok<{ sessionId: string }>(['session', 'new'])).sessionId;
  }

  async function userTurn(sessionId: string, text: string): Promise<number> {
    const args = ['turn', 'add', '--session', sessionId, '--role', 'user', '--text', text];
    return (await ok<{ seq: number }>(args)).seq;
  }

  /** `propose`, its exit checked: 5 when the gate dropped every item, else 0. */
  async function propose(sessionId: string, items: unknown[]): Promise<ProposeOutput> {
    const args = ['propose', '--session', sessionId, '--file', jsonFile(items), '--json'];
    const r = await run(args);
    const out = r.json() as ProposeOutput;
    const allDropped = items.length > 0 && out.proposed.length === 0;
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(allDropped ? 5 : 0);
    return out;
  }

  /** Proposes `text` quoting it verbatim from turn `turn`; returns the proposal's id. */
  async function proposeQuoted(
    sessionId: string,
    turn: number,
    text: string,
    quote = text,
    key?: string,
  ): Promise<string> {
    const out = await propose(sessionId, [
      {
        slot: SLOT,
        text,
        origin: 'saw',
        evidence: { turn, quote },
        ...(key === undefined ? {} : { key }),
      },
    ]);
    expect(out.dropped).toEqual([]);
    expect(out.proposed).toHaveLength(1);
    return (out.proposed[0] as Proposed).id;
  }

  async function approve(id: string): Promise<{ status: string; superseded: string | null }> {
    return ok(['decide', id, 'approve']);
  }

  /** A session, a user turn saying `text`, a proposal quoting it, approved by the owner. */
  async function liveFact(text: string): Promise<{ factId: string; sessionId: string }> {
    const sessionId = await session();
    const seq = await userTurn(sessionId, `Note this: ${text}`);
    const factId = await proposeQuoted(sessionId, seq, text);
    expect(await approve(factId)).toMatchObject({ status: 'active' });
    return { factId, sessionId };
  }

  async function memory(all = false): Promise<FactJson[]> {
    return (await ok<{ facts: FactJson[] }>(['memory', ...(all ? ['--all'] : [])])).facts;
  }

  async function retractions(...extra: string[]): Promise<RetractionJson[]> {
    return (await ok<{ retractions: RetractionJson[] }>(['retract', 'list', ...extra])).retractions;
  }

  async function due(): Promise<RetractionJson[]> {
    return (await ok<{ due: RetractionJson[] }>(['retract', 'due'])).due;
  }

  return {
    run,
    ok,
    fail,
    session,
    userTurn,
    propose,
    proposeQuoted,
    approve,
    liveFact,
    memory,
    retractions,
    due,
  };
}

const byId = <T extends { id: string }>(items: readonly T[], id: string): T | undefined =>
  items.find((x) => x.id === id);

/** A fresh store location per engine: a directory that does not exist yet, or a new schema. */
function storeFactory(kind: (typeof ENGINES)[number]) {
  const schemas: string[] = [];
  return {
    fresh(name: string): string {
      if (kind === 'pglite') return join(tmpRoot, `${name}-${kind}`);
      const schema = uniqueSchema();
      schemas.push(schema);
      return pgUrlWithSchema(schema);
    },
    async cleanup(): Promise<void> {
      for (const schema of schemas) await dropSchema(schema);
    },
  };
}

describe.each(ENGINES)('memledger CLI retraction ledger [%s]', (kind) => {
  const stores = storeFactory(kind);
  afterAll(() => stores.cleanup());

  /** File probes look here (MEMLEDGER_PROBE_ROOTS); `worker/probe.txt` is present. */
  const probeRoot = join(tmpRoot, `probe-root-${kind}`);
  mkdirSync(join(probeRoot, 'worker'), { recursive: true });
  writeFileSync(join(probeRoot, 'worker', 'probe.txt'), 'HARNESS PROBE OK\n');

  const env: Env = {
    MEMLEDGER_OWNER_PASSPHRASE: PASS,
    MEMLEDGER_OWNER_KEY: join(tmpRoot, `ledger-owner-${kind}.key`),
    MEMLEDGER_PROBE_ROOTS: probeRoot,
  };
  const engines = sharedEngines();
  afterAll(() => engines.close());
  const cli = cliOn(stores.fresh('ledger'), env, engines);

  beforeAll(async () => {
    await cli.ok(['init']);
  });

  // Shared by the end-to-end cases, in order.
  const CLAIM_A = 'Worker 013b4306 left no artifacts on disk.';
  const CLAIM_B = 'The nightly backup job skipped the archive volume.';
  let factA = '';
  let sessionA = '';
  let standsId = '';

  it('retracts a live fact with a probe spec: it leaves memory, shows retracted in --all, and is due', async () => {
    ({ factId: factA, sessionId: sessionA } = await cli.liveFact(CLAIM_A));
    expect(byId(await cli.memory(), factA)).toMatchObject({ text: CLAIM_A, status: 'active' });

    const correctedAt = daysAgo(4);
    const r = await cli.ok<RetractionJson>(
      retractArgs(
        CLAIM_A,
        '--fact',
        factA,
        '--sign',
        '--probe-file',
        existsProbeFile('worker/probe.txt'),
        '--caught-by',
        'reality',
        '--corrected-at',
        correctedAt,
      ),
    );
    standsId = r.id;
    expect(r).toMatchObject({
      claim: CLAIM_A,
      corrected: `Not so: ${CLAIM_A}`,
      correctedAt,
      caughtBy: 'reality',
      factId: factA,
      verdict: 'unchecked',
      settlement: null,
      probe: {
        spec: expect.objectContaining({ kind: 'file', path: 'worker/probe.txt', mode: 'exists' }),
        standsIf: 'verified',
        overturnsIf: 'falsified',
      },
    });
    expect(r.falsifier).toEqual({
      procedure: FALSIFIER.procedure,
      passObservation: FALSIFIER.passObservation,
      overturnCondition: FALSIFIER.overturnCondition,
    });
    // Matures the default three days after the correction.
    expect(Date.parse(r.dueAt) - Date.parse(r.correctedAt)).toBe(3 * DAY);

    expect(byId(await cli.memory(), factA)).toBeUndefined();
    const all = byId(await cli.memory(true), factA);
    expect(all).toMatchObject({ text: CLAIM_A, status: 'retracted' });
    expect(all?.line.startsWith('[RETRACTED] ')).toBe(true);

    expect((await cli.due()).map((x) => x.id)).toContain(standsId);
    expect((await cli.retractions('--verdict', 'unchecked')).map((x) => x.id)).toContain(standsId);
  });

  it('once due, settle --run-probe through a calibrated instrument records stands and its probe record', async () => {
    // the instrument the settling probe runs on (every instrument: test/cli-probe.test.ts)
    const cal = await cli.ok<{ passed: boolean; calibrations: Array<{ instrument: string }> }>([
      'probe',
      'calibrate',
      '--instrument',
      'file',
    ]);
    expect(cal.passed).toBe(true);
    expect(cal.calibrations.map((c) => c.instrument)).toContain('file');

    // The probe roots come from MEMLEDGER_PROBE_ROOTS, as for every command that runs probes.
    const settled = await cli.ok<RetractionJson>(['retract', 'settle', standsId, '--run-probe']);
    expect(settled).toMatchObject({
      id: standsId,
      verdict: 'stands',
      settlement: {
        by: 'probe',
        probeRecordId: expect.any(String),
        restoredFactId: null,
        outcome: expect.stringContaining('verified'),
      },
    });
    const recordId = settled.settlement?.probeRecordId ?? '';
    const log = await cli.ok<ProbeLogJson>(['probe', 'log']);
    expect(log.records.find((p) => p.recordId === recordId)).toMatchObject({
      verdict: 'verified',
      calibrated: true,
      instrument: 'file',
      evidence: expect.objectContaining({ path: 'worker/probe.txt', exists: true }),
    });

    expect((await cli.due()).map((x) => x.id)).not.toContain(standsId);
    expect(byId(await cli.retractions('--verdict', 'stands'), standsId)).toBeDefined();
    // The retraction stands: the fact stays out of memory.
    expect(byId(await cli.memory(), factA)).toBeUndefined();
    expect(byId(await cli.memory(true), factA)?.status).toBe('retracted');
  });

  it('an overturned verdict restores the original as a new live fact; the original stays retracted', async () => {
    const { factId: factB } = await cli.liveFact(CLAIM_B);
    const r = await cli.ok<RetractionJson>(
      retractArgs(
        CLAIM_B,
        '--fact',
        factB,
        '--sign',
        '--probe-file',
        existsProbeFile('worker/absent.txt'),
        '--caught-by',
        'reality',
        '--corrected-at',
        daysAgo(4),
      ),
    );
    expect(byId(await cli.memory(), factB)).toBeUndefined();
    expect((await cli.due()).map((x) => x.id)).toContain(r.id);

    const settled = await cli.ok<RetractionJson>(['retract', 'settle', r.id, '--run-probe']);
    expect(settled).toMatchObject({
      verdict: 'overturned',
      factId: factB,
      settlement: {
        by: 'probe',
        probeRecordId: expect.any(String),
        restoredFactId: expect.any(String),
      },
    });
    const restoredId = settled.settlement?.restoredFactId ?? '';
    expect(restoredId).not.toBe(factB);

    const live = await cli.memory();
    expect(byId(live, restoredId)).toMatchObject({ text: CLAIM_B, slot: SLOT, status: 'active' });
    expect(byId(live, factB)).toBeUndefined();
    expect(live.filter((f) => f.text === CLAIM_B)).toHaveLength(1);
    expect(byId(await cli.memory(true), factB)).toMatchObject({
      text: CLAIM_B,
      status: 'retracted',
    });

    const log = await cli.ok<ProbeLogJson>(['probe', 'log']);
    expect(log.records.find((p) => p.recordId === settled.settlement?.probeRecordId)).toMatchObject(
      { verdict: 'falsified', calibrated: true },
    );
    expect(byId(await cli.retractions('--verdict', 'overturned'), r.id)).toBeDefined();
  });

  it('settle --run-probe takes --root, like every command that runs probes', async () => {
    const elsewhere = join(tmpRoot, `elsewhere-${kind}`);
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(join(elsewhere, 'only-here.txt'), 'here\n');
    const r = await cli.ok<RetractionJson>(
      retractArgs(
        'The export left nothing in the elsewhere folder.',
        '--probe-file',
        existsProbeFile('only-here.txt'),
        '--due-days',
        '0',
      ),
    );
    // MEMLEDGER_PROBE_ROOTS names probeRoot, which lacks the file; --root takes precedence.
    const settled = await cli.ok<RetractionJson>([
      'retract',
      'settle',
      r.id,
      '--run-probe',
      '--root',
      elsewhere,
    ]);
    expect(settled).toMatchObject({ verdict: 'stands', settlement: { by: 'probe' } });
  });

  it('the gate drops a re-proposal of the retracted (stands) claim that cites an old turn', async () => {
    // Turn 1 of sessionA is the very turn the retracted fact stood on.
    const out = await cli.propose(sessionA, [
      { slot: SLOT, text: CLAIM_A, origin: 'saw', evidence: { turn: 1, quote: CLAIM_A } },
    ]);
    expect(out.proposed).toEqual([]);
    expect(out.dropped).toEqual([
      expect.objectContaining({ slot: SLOT, text: CLAIM_A, code: 'RETRACTED_CLAIM' }),
    ]);
    expect((await cli.ok<{ dropped: Dropped[] }>(['dropped'])).dropped).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'RETRACTED_CLAIM' })]),
    );
  });

  it('RETRACTED_CLAIM holds against turns older than the retraction and yields to a newer one', async () => {
    const claim = 'The staging database listens on port 5433.';
    const s = await cli.session();
    const old = await cli.userTurn(s, `Note this: ${claim}`);
    await cli.ok(retractArgs(claim));
    const dropped = await cli.propose(s, [
      { slot: SLOT, text: claim, origin: 'saw', evidence: { turn: old, quote: claim } },
    ]);
    expect(dropped.proposed).toEqual([]);
    expect(dropped.dropped.map((d) => d.code)).toEqual(['RETRACTED_CLAIM']);

    const newer = await cli.userTurn(s, `I checked again today. ${claim}`);
    const passed = await cli.propose(s, [
      { slot: SLOT, text: claim, origin: 'saw', evidence: { turn: newer, quote: claim } },
    ]);
    expect(passed.dropped).toEqual([]);
    expect(passed.proposed).toEqual([expect.objectContaining({ status: 'proposed' })]);
  });

  it('RETRACTED_CLAIM compares with when the retraction was recorded, not a back-dated --corrected-at', async () => {
    // Settled by the owner, so this case does not depend on settle --run-probe.
    const claim = 'The invoice run finished before midnight.';
    const { factId, sessionId } = await cli.liveFact(claim);
    const r = await cli.ok<RetractionJson>(
      retractArgs(claim, '--fact', factId, '--sign', '--corrected-at', daysAgo(4)),
    );
    await cli.ok(['retract', 'settle', r.id, '--verdict', 'stands', '--outcome', 'log read']);
    // Turn 1 was recorded before the retraction (though after its back-dated correction time):
    // it is the very evidence the retracted fact stood on, not new evidence.
    const again = await cli.propose(sessionId, [
      { slot: SLOT, text: claim, origin: 'saw', evidence: { turn: 1, quote: claim } },
    ]);
    expect(again.proposed).toEqual([]);
    expect(again.dropped.map((d) => d.code)).toEqual(['RETRACTED_CLAIM']);

    const newer = await cli.userTurn(sessionId, `Checked the log again: ${claim}`);
    const passed = await cli.propose(sessionId, [
      { slot: SLOT, text: claim, origin: 'saw', evidence: { turn: newer, quote: claim } },
    ]);
    expect(passed.dropped).toEqual([]);
    expect(passed.proposed).toHaveLength(1);
  });

  it('refuses a falsifier whose observations differ only in case, spacing or a trailing period', async () => {
    const before = await cli.retractions();
    const same: Array<[string, string]> = [
      ['The probe file exists.', '  the PROBE   file exists '],
      ['worker/probe.txt exists', 'WORKER/PROBE.TXT EXISTS.'],
      ['   ', 'worker/ is empty'],
    ];
    for (const [pass, overturn] of same) {
      expect(
        await cli.fail(
          retractArgs('The deploy ran on Friday.', '--pass-obs', pass, '--overturn-if', overturn),
        ),
        `${pass} / ${overturn}`,
      ).toBe('POLARITY_NOT_DISTINCT');
    }
    // The probe's two verdicts must differ too.
    const samePolarity = jsonFile({
      probe: { kind: 'file', path: 'worker/probe.txt', mode: 'exists' },
      standsIf: 'verified',
      overturnsIf: 'verified',
    });
    expect(
      await cli.fail(retractArgs('The deploy ran on Friday.', '--probe-file', samePolarity)),
    ).toBe('POLARITY_NOT_DISTINCT');
    expect(await cli.retractions()).toEqual(before);
  });

  it('refuses a retraction without a claim or with bad arguments, and writes nothing', async () => {
    const before = await cli.retractions();
    const noClaim = retractArgs('x').filter(
      (a, i, all) => a !== '--claim' && all[i - 1] !== '--claim',
    );
    expect(noClaim).not.toContain('--claim');
    expect(await cli.fail(noClaim)).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(retractArgs('   '))).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(retractArgs('c', '--caught-by', 'nobody'))).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(retractArgs('c', '--corrected-at', 'yesterday-ish'))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await cli.fail(retractArgs('c', '--probe-file', join(tmpRoot, 'no-such.json')))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await cli.fail(retractArgs('c', '--fact', 'no-such-fact'))).toBe('FACT_NOT_FOUND');
    expect(await cli.retractions()).toEqual(before);
  });

  it('settle refuses before due, both or neither mode, a verdict without outcome, twice, and an unknown id', async () => {
    const young = await cli.ok<RetractionJson>(retractArgs('The cache was cold at 09:00.'));
    expect(
      await cli.fail(['retract', 'settle', young.id, '--verdict', 'stands', '--outcome', 'seen']),
    ).toBe('NOT_DUE');
    expect(await cli.fail(['retract', 'settle', young.id, '--run-probe'])).toBe('NOT_DUE');

    const ripe = await cli.ok<RetractionJson>(
      retractArgs('The logs showed no retries.', '--due-days', '0'),
    );
    expect(
      await cli.fail([
        'retract',
        'settle',
        ripe.id,
        '--run-probe',
        '--verdict',
        'stands',
        '--outcome',
        'seen',
      ]),
    ).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(['retract', 'settle', ripe.id])).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(['retract', 'settle', ripe.id, '--verdict', 'stands'])).toBe(
      'INVALID_ARGUMENT',
    );
    expect(
      await cli.fail(['retract', 'settle', ripe.id, '--verdict', 'upheld', '--outcome', 'x']),
    ).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(['retract', 'settle', ripe.id, '--run-probe'])).toBe('NO_PROBE');
    expect(await cli.fail(['retract', 'settle'])).toBe('INVALID_ARGUMENT');
    expect(byId(await cli.retractions(), ripe.id)?.verdict).toBe('unchecked');

    const settled = await cli.ok<RetractionJson>([
      'retract',
      'settle',
      ripe.id,
      '--verdict',
      'unresolvable',
      '--outcome',
      'logs rotated',
    ]);
    expect(settled).toMatchObject({
      verdict: 'unresolvable',
      settlement: {
        outcome: 'logs rotated',
        by: 'owner',
        probeRecordId: null,
        restoredFactId: null,
      },
    });
    expect(
      await cli.fail(['retract', 'settle', ripe.id, '--verdict', 'stands', '--outcome', 'x']),
    ).toBe('ALREADY_SETTLED');
    expect(await cli.fail(['retract', 'settle', ripe.id, '--run-probe'])).toBe('ALREADY_SETTLED');
    expect(byId(await cli.retractions(), ripe.id)).toMatchObject({
      verdict: 'unresolvable',
      settlement: { outcome: 'logs rotated' },
    });
    expect(
      await cli.fail(['retract', 'settle', 'no-such-id', '--verdict', 'stands', '--outcome', 'x']),
    ).toBe('RETRACTION_NOT_FOUND');
  });

  it('a retraction of an approved fact waits for the owner: the fact stays live until retract sign', async () => {
    const claim = 'The standup moved to Tuesdays.';
    const { factId } = await cli.liveFact(claim);
    const waiting = await cli.run(retractArgs(claim, '--fact', factId));
    expect(waiting.code).toBe(0);
    expect(waiting.stdout).toContain(
      `a fact the owner approved stays live, marked disputed, until the owner signs this`,
    );
    const id = /\[([^\]]+)\] UNCHECKED/u.exec(waiting.stdout)?.[1] ?? '';
    expect(byId(await cli.memory(), factId)).toMatchObject({ status: 'active' });
    // bad input changes nothing
    expect(await cli.fail(['retract', 'sign', 'no-such-id'])).toBe('RETRACTION_NOT_FOUND');
    expect(await cli.fail(retractArgs(claim, '--sign'))).toBe('INVALID_ARGUMENT');
    expect(byId(await cli.memory(), factId)).toMatchObject({ status: 'active' });
    const signed = await cli.ok<{ retractionId: string; factId: string; seq: number }>([
      'retract',
      'sign',
      id,
    ]);
    expect(signed).toMatchObject({ retractionId: id, factId });
    expect(byId(await cli.memory(), factId)).toBeUndefined();
    expect(await cli.fail(['retract', 'sign', id])).toBe('NOT_PENDING');
  });

  it('retract sign shows the person signing what it takes down, before the key is used', async () => {
    const claim = 'The user prefers tea to coffee.';
    const { factId } = await cli.liveFact(claim);
    const r = await cli.ok<RetractionJson>(retractArgs(claim, '--fact', factId));
    const signed = await cli.run(['retract', 'sign', r.id], env);
    expect(signed.code).toBe(0);
    expect(signed.stderr).toContain(`signing retraction ${r.id}: "${claim}" → "Not so: ${claim}"`);
    expect(signed.stderr).toContain(
      `it takes out of live memory fact ${factId} (active): ${claim}`,
    );
    expect(signed.stdout).toMatch(new RegExp(`^signed retraction ${r.id} \\(decision #\\d+\\)`));
  });

  it('forget lists what it would remove, signs only with --yes, and leaves a tombstone in the history', async () => {
    const claim = 'The user hides a spare key in the red watering can.';
    const { factId, sessionId } = await cli.liveFact(claim);
    const turn = `${sessionId}:1`;
    // usage errors, and a dry run: nothing changes
    expect(await cli.fail(['forget'])).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(['forget', '--turn', sessionId])).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(['forget', '--turn', turn, '--fact', factId])).toBe('INVALID_ARGUMENT');
    const dry = await cli.ok<{ dryRun: boolean; liveFacts: Array<{ id: string }> }>([
      'forget',
      '--turn',
      turn,
      '--dry-run',
    ]);
    expect(dry).toMatchObject({ dryRun: true, liveFacts: [{ id: factId }] });
    const text = await cli.run(['forget', '--turn', turn, '--dry-run']);
    expect(text.stdout).toContain('forgetting this removes 1 turn and 1 fact:');
    expect(text.stdout).toContain(`live facts that rest on it, which --with-facts forgets too:`);
    expect(await cli.fail(['forget', '--turn', turn])).toBe('CONFIRMATION_REQUIRED');
    expect(await cli.fail(['forget', '--turn', turn, '--yes'])).toBe('FORGET_CITED');
    expect(byId(await cli.memory(), factId)).toMatchObject({ status: 'active' });

    const done = await cli.ok<{ removed: Record<string, number>; seq: number }>([
      'forget',
      '--turn',
      turn,
      '--with-facts',
      '--yes',
    ]);
    expect(done.removed).toMatchObject({ turns: 1, facts: 1 });
    expect(byId(await cli.memory(), factId)).toBeUndefined();
    const history = await cli.run(['history', '--session', sessionId]);
    expect(history.stdout).toMatch(
      /#1 user \[[^\]]+\]: \[turn 1: forgotten by the owner on \d{4}-\d{2}-\d{2}\]/,
    );
    expect(history.stdout).not.toContain('watering can');
    expect(await cli.ok(['chain', 'verify'])).toMatchObject({ ok: true });
    expect(await cli.fail(['forget', '--turn', turn, '--yes'])).toBe('NOTHING_TO_FORGET');
    // agents' requests: none here; an unknown one is named, honoured or declined
    expect(await cli.ok(['forget', 'requests'])).toEqual({ requests: [] });
    expect((await cli.run(['forget', 'requests'])).stdout).toContain('no pending forget requests');
    expect(await cli.fail(['forget', 'decline', 'nope'])).toBe('FORGET_REQUEST_NOT_FOUND');
    expect(await cli.fail(['forget', '--request', 'nope', '--yes'])).toBe(
      'FORGET_REQUEST_NOT_FOUND',
    );
  });

  it('forget policy shows and signs the policy; forget --retention applies the rule with no passphrase; remember --corrects replaces a fact', async () => {
    expect(await cli.ok(['forget', 'policy'])).toEqual({
      policy: { honourRequests: false, retainDays: null },
      seq: null,
      recent: [],
    });
    expect(await cli.fail(['forget', '--retention', '--dry-run'])).toBe('NO_RETENTION_RULE');
    expect(await cli.fail(['forget', 'policy', '--retain-days', 'soon'])).toBe('INVALID_ARGUMENT');
    const signed = await cli.ok<{ seq: number }>(['forget', 'policy', '--retain-days', '3650']);
    expect(signed).toMatchObject({ policy: { honourRequests: false, retainDays: 3650 } });
    expect((await cli.run(['forget', 'policy'])).stdout).toContain(
      'turns older than 3650 days are forgotten by forget --retention',
    );
    // nothing here is ten years old: the dry run lists nothing, and a run is a quiet success
    const dry = await cli.ok<{ dryRun: boolean; cutoff: string }>([
      'forget',
      '--retention',
      '--dry-run',
    ]);
    expect(dry.dryRun).toBe(true);
    expect(await cli.fail(['forget', '--retention'])).toBe('CONFIRMATION_REQUIRED');
    // a scheduler has no passphrase: none is asked for
    const noPassphrase = { ...env, MEMLEDGER_OWNER_PASSPHRASE: '' };
    const quiet = await cli.run(['forget', '--retention', '--yes'], noPassphrase);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toMatch(/nothing recorded before \d{4}-\d{2}-\d{2} is left to forget/);
    await cli.ok(['forget', 'policy', '--retain-days', 'off', '--honour-requests', 'on']);
    expect(await cli.ok(['forget', 'policy'])).toMatchObject({
      policy: { honourRequests: true, retainDays: null },
    });

    const first = await cli.ok<{ proposalId: string }>(['remember', 'The user likes green tea.']);
    const fixed = await cli.ok<{ proposalId: string; superseded: string }>([
      'remember',
      'The user likes green tea, without sugar.',
      '--corrects',
      first.proposalId,
    ]);
    expect(fixed.superseded).toBe(first.proposalId);
    expect(byId(await cli.memory(), first.proposalId)).toBeUndefined();
    expect(
      await cli.fail(['remember', 'The user likes tea.', '--corrects', first.proposalId]),
    ).toBe('FACT_NOT_LIVE');
    expect(await cli.ok(['chain', 'verify'])).toMatchObject({ ok: true });
  });

  it("remember records the owner's words and approves them; decide --text approves an edit", async () => {
    const r = await cli.ok<{ proposalId: string; status: string; sessionId: string; turn: number }>(
      ['remember', "The user's cat is called Miso.", '--fact-key', 'cat'],
    );
    expect(r).toMatchObject({ status: 'active', turn: 1 });
    expect(byId(await cli.memory(), r.proposalId)).toMatchObject({
      text: "The user's cat is called Miso.",
    });
    expect(await cli.fail(['remember', '   '])).toBe('INVALID_ARGUMENT');

    const s = await cli.session();
    const seq = await cli.userTurn(s, 'We moved to Lund last spring.');
    const id = await cli.proposeQuoted(
      s,
      seq,
      'The user moved to Lund.',
      'We moved to Lund last spring',
    );
    expect(
      await cli.fail(['decide', id, 'approve', '--text', 'The user moved to\u200b Lund.']),
    ).toBe('EDIT_DROPPED');
    const text = await cli.run([
      'decide',
      id,
      'approve',
      '--text',
      'The user moved to Lund last spring.',
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `^edited ${id} \\("The user moved to Lund\\."\\) into \\S+; approved \\S+: now active`,
      ),
    );
    expect(byId(await cli.memory(), id)).toBeUndefined();
  });

  it('refuses to retract a fact that is not live (proposed, or already retracted)', async () => {
    const s = await cli.session();
    const text = 'The user keeps a spare key under the mat.';
    const seq = await cli.userTurn(s, `Note this: ${text}`);
    const proposedId = await cli.proposeQuoted(s, seq, text);
    const before = await cli.retractions();
    expect(await cli.fail(retractArgs(text, '--fact', proposedId))).toBe('FACT_NOT_LIVE');
    expect(await cli.fail(retractArgs(CLAIM_A, '--fact', factA))).toBe('FACT_NOT_LIVE');
    expect(await cli.retractions()).toEqual(before);
    expect(byId(await cli.memory(true), proposedId)?.status).toBe('proposed');
  });

  it('chain verify is ok after retractions, settlements and a restoration', async () => {
    const r = await cli.run(['chain', 'verify', '--json']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({ ok: true, brokenAt: null, anchored: true });
  });
});

function blockText(a: ArrivalJson, name: string): string {
  const b = a.blocks.find((x) => x.name === name);
  if (b === undefined) throw new Error(`no block ${name}`);
  return b.text;
}

describe.each(ENGINES)('memledger CLI arrival [%s]', (kind) => {
  const stores = storeFactory(kind);
  afterAll(() => stores.cleanup());

  const env: Env = {
    MEMLEDGER_OWNER_PASSPHRASE: PASS,
    MEMLEDGER_OWNER_KEY: join(tmpRoot, `arrival-owner-${kind}.key`),
  };
  // [Now] has minute resolution: a test that compares two arrivals' clocks stops this one.
  let stopped: Date | null = null;
  const engines = sharedEngines({ clock: () => stopped ?? new Date() });
  afterAll(() => engines.close());
  const cli = cliOn(stores.fresh('arrival'), env, engines);
  const arrive = (surface: string): Promise<ArrivalJson> =>
    cli.ok<ArrivalJson>([
      'arrival',
      '--surface',
      surface,
      '--subject',
      'owner',
      '--format',
      'json',
    ]);

  beforeAll(async () => {
    await cli.ok(['init']);
  });

  it('the settled facts say 6 open from a COUNT, list three, and render a due date as written', async () => {
    for (let i = 1; i <= 5; i++) await cli.ok(['commitment', 'add', '--title', `commitment ${i}`]);
    const dated = await cli.ok<{ id: string; due: string; status: string }>([
      'commitment',
      'add',
      '--title',
      'file the report',
      '--due',
      '2026-10-22',
    ]);
    expect(dated).toMatchObject({ due: '2026-10-22', status: 'open' });
    const closed = await cli.ok<{ id: string }>(['commitment', 'add', '--title', 'closed one']);
    expect(await cli.ok(['commitment', 'done', closed.id])).toMatchObject({ status: 'done' });

    const open = await cli.ok<{ commitments: Array<{ id: string; due: string | null }> }>([
      'commitment',
      'list',
      '--status',
      'open',
    ]);
    expect(open.commitments).toHaveLength(6);
    expect(byId(open.commitments, dated.id)?.due).toBe('2026-10-22');

    const settled = blockText(await arrive('chat'), 'settled_facts');
    expect(settled).toContain('6 open');
    expect(settled).toContain('Open commitments: 6 open; latest 3:');
    expect(settled.match(/"commitment \d"|"file the report"/g)).toHaveLength(3);
    expect(settled).toContain('"file the report" (due 2026-10-22)');
    expect(settled).not.toContain('closed one');
    expect(settled.split('\n').length).toBeLessThanOrEqual(8);

    expect(await cli.fail(['commitment', 'done', closed.id])).toBe('COMMITMENT_NOT_OPEN');
    expect(await cli.fail(['commitment', 'drop', closed.id])).toBe('COMMITMENT_NOT_OPEN');
    expect(await cli.fail(['commitment', 'done', 'no-such-commitment'])).toBe(
      'COMMITMENT_NOT_FOUND',
    );
    expect(await cli.fail(['commitment', 'add', '--title', 'x', '--due', '22/10/2026'])).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('binds exactly the tools each surface declares', async () => {
    expect(
      await cli.ok(['tool', 'register', '--name', 'web_search', '--surfaces', 'chat,wake']),
    ).toEqual({ name: 'web_search', surfaces: ['chat', 'wake'] });
    await cli.ok(['tool', 'register', '--name', 'send_email', '--surfaces', 'chat']);

    const wake = await arrive('wake');
    expect(wake.tools).toEqual(['web_search']);
    expect(blockText(wake, 'capabilities')).toContain('web_search');
    expect(blockText(wake, 'capabilities')).not.toContain('send_email');
    const chat = await arrive('chat');
    expect([...chat.tools].sort()).toEqual(['send_email', 'web_search']);

    const listed = await cli.ok<{ tools: Array<{ name: string }> }>([
      'tool',
      'list',
      '--surface',
      'wake',
    ]);
    expect(listed.tools.map((t) => t.name)).toEqual(['web_search']);
    expect(await cli.fail(['tool', 'register', '--name', 'x'])).toBe('INVALID_ARGUMENT');
  });

  it('arrival diff shows exactly a new wake tool and a superseded fact', async () => {
    const s = await cli.session();
    await cli.userTurn(s, 'I live in Lund.');
    await cli.userTurn(s, 'I moved to Malmö.');
    const lund = await cli.proposeQuoted(s, 1, 'The user lives in Lund.', 'I live in Lund', 'city');
    expect(await cli.approve(lund)).toMatchObject({ status: 'active', superseded: null });

    // both arrivals at one instant: the diff must not name the clock block
    stopped = new Date();
    const before = await arrive('wake');
    await cli.ok(['tool', 'register', '--name', 'check_workers', '--surfaces', 'wake']);
    const malmo = await cli.proposeQuoted(
      s,
      2,
      'The user lives in Malmö.',
      'I moved to Malmö',
      'city',
    );
    expect(await cli.approve(malmo)).toMatchObject({ status: 'active', superseded: lund });
    const after = await arrive('wake');
    stopped = null;
    expect(blockText(after, 'current_time'), 'both arrivals in one minute').toBe(
      blockText(before, 'current_time'),
    );
    expect(after.tools).toEqual(['check_workers', 'web_search']);

    const diff = await cli.ok<DiffJson>(['arrival', 'diff', '--surface', 'wake']);
    expect(diff).toMatchObject({ from: before.manifestId, to: after.manifestId, surface: 'wake' });
    // Exactly the two changes: one block changed, one tool added (other tool fields, such as
    // counts, may accompany the lists).
    expect(diff.blocks).toEqual({ added: [], removed: [], changed: ['live_facts'] });
    expect(diff.tools.added).toEqual(['check_workers']);
    expect(diff.tools.removed).toEqual([]);
    expect(await cli.ok<DiffJson>(['arrival', 'diff', '--id', after.manifestId])).toEqual(diff);
    expect(await cli.fail(['arrival', 'diff', '--surface', 'never_used'])).toBe(
      'MANIFEST_NOT_FOUND',
    );
  });

  it('a recorded action shows in the settled facts', async () => {
    const a = await cli.ok<{ tool: string; status: string; completedAt: string | null }>([
      'action',
      'record',
      '--tool',
      'send_email',
      '--surface',
      'chat',
      '--target',
      'invoice to Acme',
    ]);
    expect(a).toMatchObject({ tool: 'send_email', status: 'confirmed' });
    expect(a.completedAt).not.toBeNull();
    expect(blockText(await arrive('chat'), 'settled_facts')).toMatch(
      /send_email on chat → invoice to Acme \(\d{4}-\d{2}-\d{2} \d{2}:\d{2}\)/,
    );
    expect(await cli.fail(['action', 'record', '--tool', 'send_email', '--surface', 'chat'])).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('timezone sets an IANA zone, refuses an unknown one, and the arrival uses it', async () => {
    expect(await cli.ok(['timezone', '--zone', 'Europe/Stockholm'])).toEqual({
      timeZone: 'Europe/Stockholm',
    });
    expect(await cli.fail(['timezone', '--zone', 'Mars/Olympus'])).toBe('INVALID_ARGUMENT');
    expect(await cli.ok(['timezone'])).toEqual({ timeZone: 'Europe/Stockholm' });
    expect(blockText(await arrive('chat'), 'current_time')).toMatch(
      /^\[Now\] \d{4}-\d{2}-\d{2} \d{2}:\d{2} \(\w{3}\) Europe\/Stockholm$/,
    );
    // Dates still render as written under the new zone.
    expect(blockText(await arrive('chat'), 'settled_facts')).toContain('(due 2026-10-22)');
  });

  it('arrival refuses a missing surface or an unknown format, and gives Anthropic system parts', async () => {
    expect(await cli.fail(['arrival', '--subject', 'owner'])).toBe('INVALID_ARGUMENT');
    expect(await cli.fail(['arrival', '--surface', 'chat', '--format', 'xml'])).toBe(
      'INVALID_ARGUMENT',
    );
    const doc = await cli.ok<{
      system: Array<{ type: string; text: string; cache_control?: { type: string } }>;
      tools: string[];
      manifestId: string;
    }>(['arrival', '--surface', 'chat', '--subject', 'owner', '--format', 'anthropic']);
    expect(doc.system.length).toBeGreaterThanOrEqual(2);
    const last = doc.system.at(-1);
    expect(last).toBeDefined();
    expect(last).not.toHaveProperty('cache_control');
    expect(last?.text).toContain('[Now]');
    for (const part of doc.system.slice(0, -1)) {
      expect(part).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } });
    }
    expect([...doc.tools].sort()).toEqual(['send_email', 'web_search']);
    expect(doc.manifestId).toEqual(expect.any(String));

    const text = await cli.ok<{ manifestId: string; text: string }>([
      'arrival',
      '--surface',
      'chat',
      '--subject',
      'owner',
      '--format',
      'text',
    ]);
    expect(text.text.indexOf('[Settled facts')).toBeGreaterThan(-1);
    expect(text.text.indexOf('[What I know')).toBeLessThan(text.text.indexOf('[Settled facts'));
  });
});
