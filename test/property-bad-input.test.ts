// Generated bad input (>= 10,000 items) across recording turns, proposing, retracting, probe specs and the CLI's flags: each is refused with its own specific code, never STORE_ERROR or INTERNAL, and the store is unchanged (real processes: test/heavy/cli-bad-input-processes.test.ts).
import { exportCommand, importCommand, moveCommand } from '../cli/commands/transfer.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Command } from '../cli/command.js';
import { proposeCommand, droppedCommand, decideCommand } from '../cli/commands/gate.js';
import { historyCommand } from '../cli/commands/history.js';
import { probeFileCommand, probeHttpCommand, probeSqlCommand } from '../cli/commands/probe.js';
import { recallCommand } from '../cli/commands/recall.js';
import { retractCommand, retractSettleCommand } from '../cli/commands/retract.js';
import { sessionListCommand, sessionNewCommand } from '../cli/commands/session.js';
import { slotDeclareCommand } from '../cli/commands/slot.js';
import { turnAddCommand } from '../cli/commands/turn.js';
import { actionRecordCommand, commitmentAddCommand } from '../cli/commands/ground-truth.js';
import { parseCommandLine } from '../cli/parse-options.js';
import { storeClient } from '../src/engine/test-access.js';
import { createEngine, EngineError, type Engine, type ProbeSpec } from '../src/index.js';
import { parseProbeSpec } from '../src/rules.js';
import { encodeJson, renderBounded } from '../src/domain/dropped-proposal.js';
import { badCommandLine, RETRACT_ARGV } from './support/bad-cli-arbitraries.js';
import {
  badItem,
  badShape,
  badSessionId,
  badRetraction,
  badSpec,
  badText,
  badTurn,
  GOOD_ITEM,
  GOOD_RETRACTION,
  GOOD_SPECS,
  longer,
  QUOTE,
  unstorable,
} from './support/bad-input-arbitraries.js';
import { runCliCaptured } from './support/cli.js';
import { digests, dumpStore } from './support/dump-store.js';
import {
  dropSchema,
  ENGINES,
  pgUrlWithSchema,
  uniqueSchema,
  type EngineKind,
} from './support/engines.js';
import { unchecked } from './support/unchecked.js';

/** Generated inputs per property; the bulk runs on PGlite, a share on PostgreSQL. */
const RUNS: Record<EngineKind, { turns: number; propose: number; retract: number; probe: number }> =
  {
    pglite: {
      turns: 1200,
      propose: 500,
      retract: 900,
      probe: 300,
    },
    postgres: {
      turns: 200,
      propose: 80,
      retract: 150,
      probe: 60,
    },
  };
const PURE_RUNS = { specs: 3000, cli: 3000 };
// Each property runs its whole count in one test; on a loaded machine that can pass a minute.
vi.setConfig({ testTimeout: 180_000 });
/** Every bad input generated, by where it went; the last test adds them up. */
const counted: Record<string, number> = {};
const count = (what: string, n = 1) => {
  counted[what] = (counted[what] ?? 0) + n;
};
const FAIL_HARD = new Set(['STORE_ERROR', 'INTERNAL']);

/** The code a call fails with; success, or a failure that is not an EngineError, fails the test. */
async function refusal(call: () => Promise<unknown>): Promise<string> {
  let outcome: unknown;
  try {
    await call();
    outcome = 'accepted';
  } catch (err) {
    if (err instanceof EngineError) {
      expect(FAIL_HARD.has(err.code), `${err.code}: ${err.message}`).toBe(false);
      return err.code;
    }
    outcome = err;
  }
  throw new Error(`expected a refusal, got ${String(outcome)}`);
}

describe.each(ENGINES)('bad input is a clear error, never a store failure [%s]', (kind) => {
  const schema = uniqueSchema();
  let engine: Engine;
  let sessionId = '';
  const runs = RUNS[kind];
  beforeAll(async () => {
    engine = await createEngine({ db: kind === 'pglite' ? 'memory://' : pgUrlWithSchema(schema) });
    await engine.subjects.create();
    const me = engine.subject();
    sessionId = (await me.sessions.create()).id;
    await me.turns.add({ sessionId, role: 'user', content: `${QUOTE} and I live in Paris.` });
  });
  afterAll(async () => {
    await engine.close();
    if (kind === 'postgres') await dropSchema(schema);
  });

  /** The baseline every refused call must leave the store at, checked to be dumpStore's dump. */
  async function baseline(except: readonly string[] = []) {
    const full = await digests(engine);
    expect(full).toEqual(await dumpStore(engine));
    return except.length === 0 ? full : digests(engine, except);
  }

  it('refuses bad turns with their own code, and records nothing', async () => {
    const me = engine.subject();
    const before = await baseline();
    await fc.assert(
      fc.asyncProperty(badTurn(sessionId), async ({ call, input, code }) => {
        count('turns');
        const got = await refusal(() =>
          call === 'add' ? me.turns.add(input as never) : me.turns.recordResponse(input as never),
        );
        expect(got).toBe(code);
      }),
      { numRuns: runs.turns },
    );
    // once per property: whatever a run changed would still show at the end
    expect(await digests(engine)).toEqual(before);
  });

  it('refuses a bad call to propose itself, and changes nothing at all', async () => {
    const me = engine.subject();
    const before = await baseline();
    const bad = fc.oneof(
      badSessionId.map(({ value, code }) => ({
        input: { sessionId: value, proposals: [GOOD_ITEM] },
        code,
      })),
      fc
        .oneof(
          fc.string(),
          fc.integer(),
          fc.constant(null),
          fc.dictionary(fc.string(), fc.string()),
        )
        .map((proposals) => ({ input: { sessionId, proposals }, code: 'INVALID_ARGUMENT' })),
      badText(16_384).map((proposedBy) => ({
        input: { sessionId, proposals: [GOOD_ITEM], proposedBy },
        code: 'INVALID_ARGUMENT',
      })),
    );
    await fc.assert(
      fc.asyncProperty(bad, async ({ input, code }) => {
        count('propose calls');
        expect(await refusal(() => me.gate.propose(input as never))).toBe(code);
      }),
      { numRuns: Math.ceil(runs.propose / 2) },
    );
    // once per property: whatever a run changed would still show at the end
    expect(await digests(engine)).toEqual(before);
  });

  it('refuses bad retractions with their own code, and changes nothing', async () => {
    const me = engine.subject();
    const before = await baseline();
    await fc.assert(
      fc.asyncProperty(badRetraction, async ({ patch, code }) => {
        count('retractions');
        expect(
          await refusal(() => me.ledger.retract({ ...GOOD_RETRACTION, ...patch } as never)),
        ).toBe(code);
      }),
      { numRuns: runs.retract },
    );
    // once per property: whatever a run changed would still show at the end
    expect(await digests(engine)).toEqual(before);
  });

  it('refuses bad probe specs (and bad run options) before anything runs', async () => {
    const me = engine.subject();
    const before = await baseline();
    const bad = fc.oneof(
      { weight: 4, arbitrary: badSpec.map((spec) => ({ spec, options: {} })) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.constantFrom(...GOOD_SPECS),
            fc.constantFrom('purpose', 'instrument'),
            badText(16_384),
          )
          .map(([spec, field, v]) => ({ spec, options: { [field]: v } })),
      },
    );
    await fc.assert(
      fc.asyncProperty(bad, async ({ spec, options }) => {
        count('probe runs');
        expect(await refusal(() => me.probes.run(spec as never, options as never))).toBe(
          'INVALID_ARGUMENT',
        );
      }),
      { numRuns: runs.probe },
    );
    // once per property: whatever a run changed would still show at the end
    expect(await digests(engine)).toEqual(before);
  });

  // last of the engine's properties: it is the one that grows a table (the dropped log)
  it('drops each bad proposal with INVALID_PROPOSAL, logging it bounded, and stores nothing else', async () => {
    const me = engine.subject();
    const before = await baseline(['dropped_proposals']);
    const sql = storeClient(engine);
    const logged = async () =>
      (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM dropped_proposals')).rows[0]
        ?.n ?? 0;
    await fc.assert(
      fc.asyncProperty(fc.array(badItem, { minLength: 1, maxLength: 8 }), async (items) => {
        count('proposals', items.length);
        const n = await logged();
        const result = await me.gate.propose({ sessionId, proposals: unchecked(items) });
        expect(result.proposed).toEqual([]);
        expect(result.dropped.map((d) => d.code)).toEqual(items.map(() => 'INVALID_PROPOSAL'));
        expect(await logged()).toBe(n + items.length);
        const { rows } = await sql.query<{
          slot: number;
          text: number;
          reason: number;
          proposal: number;
          digest: boolean;
        }>(
          `SELECT length(slot) AS slot, length(text) AS text, length(reason) AS reason,
                  length(proposal::text) AS proposal, proposal ? 'digest' AS digest
           FROM (SELECT * FROM dropped_proposals ORDER BY dropped_at DESC LIMIT $1) d`,
          [items.length],
        );
        for (const r of rows) {
          expect(Math.max(r.slot, r.text, r.reason)).toBeLessThanOrEqual(2048);
          expect(r.proposal).toBeLessThan(96 * 1024);
          expect(r.digest).toBe(true);
        }
      }),
      { numRuns: runs.propose },
    );
    // once per property: whatever a run changed would still show at the end
    expect(await digests(engine, ['dropped_proposals'])).toEqual(before);
  });

  it('negative control: the good inputs the mutations start from are accepted, and the dump sees it', async () => {
    const me = engine.subject();
    const before = await digests(engine);
    await me.turns.add({ sessionId, role: 'user', content: 'I like tea' });
    await me.turns.add({
      sessionId,
      role: 'assistant',
      content: 'Done.',
      receipt: { tools: ['web_search'], sources: ['https://example.org/a'] },
    });
    const r = await me.gate.propose({ sessionId, proposals: [GOOD_ITEM] });
    expect(r.proposed).toHaveLength(1);
    await me.ledger.retract({
      ...GOOD_RETRACTION,
      probe: {
        spec: GOOD_SPECS[0] as unknown as ProbeSpec,
        standsIf: 'falsified',
        overturnsIf: 'verified',
      },
    });
    for (const spec of GOOD_SPECS) expect(parseProbeSpec(spec)).toMatchObject({ kind: spec.kind });
    expect(await digests(engine)).not.toEqual(before);
  });
});

it(`refuses ${PURE_RUNS.specs} bad probe specs in the parser with INVALID_ARGUMENT`, () => {
  fc.assert(
    fc.property(badSpec, (spec) => {
      count('probe specs');
      let code = 'accepted';
      try {
        parseProbeSpec(spec);
      } catch (err) {
        code = err instanceof EngineError ? err.code : `not an EngineError: ${String(err)}`;
      }
      expect(code).toBe('INVALID_ARGUMENT');
    }),
    { numRuns: PURE_RUNS.specs },
  );
});

it('encodes any JSON value exactly as JSON.stringify does (the dropped log hashes that text)', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.jsonValue(),
        fc.anything({ withDate: true, withSparseArray: true, withBoxedValues: true }),
      ),
      (value) => {
        let out = '';
        const problem = encodeJson(value, (piece) => {
          out += piece;
        });
        const expected = JSON.stringify(value);
        expect(problem === null ? out : problem).toBe(
          expected === undefined ? 'is not a JSON value' : expected,
        );
      },
    ),
    { numRuns: 500 },
  );
});

it('renders anything, however deep, cyclic or BigInt-holding, as bounded storable JSON', () => {
  const hostile = fc.oneof(
    fc.anything({ withBigInt: true, withDate: true, withMap: true, withNullPrototype: true }),
    badShape,
    unstorable,
  );
  fc.assert(
    fc.property(hostile, (value) => {
      const json = JSON.stringify(renderBounded(value).value) ?? 'null';
      expect(json.length).toBeLessThan(96 * 1024);
      expect(json).not.toContain('\\u0000');
      // JSON.stringify writes a lone surrogate as an escape, which jsonb refuses
      expect(
        /\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f]/i.test(json),
      ).toBe(false);
    }),
    { numRuns: 500 },
  );
});

const COMMANDS: readonly Command[] = [
  turnAddCommand,
  historyCommand,
  sessionNewCommand,
  sessionListCommand,
  proposeCommand,
  droppedCommand,
  decideCommand,
  slotDeclareCommand,
  retractCommand,
  retractSettleCommand,
  probeFileCommand,
  probeSqlCommand,
  probeHttpCommand,
  recallCommand,
  commitmentAddCommand,
  actionRecordCommand,
  exportCommand,
  importCommand,
  moveCommand,
];

it(`refuses ${PURE_RUNS.cli} bad command lines in the option parser with their own code`, () => {
  const arb = fc.oneof(
    ...COMMANDS.map((command) => badCommandLine(command).map((bad) => ({ command, ...bad }))),
  );
  fc.assert(
    fc.property(arb, ({ command, argv, code }) => {
      count('cli flags');
      let got = 'accepted';
      try {
        parseCommandLine(argv, command.options, (command.positionals?.length ?? 0) > 0);
      } catch (err) {
        got = err instanceof EngineError ? err.code : `not an EngineError: ${String(err)}`;
      }
      expect({ command: command.path.join(' '), argv, got }).toEqual({
        command: command.path.join(' '),
        argv,
        got: code,
      });
    }),
    { numRuns: PURE_RUNS.cli },
  );
});

describe('the CLI on a store: bad flags and files are refused and change nothing', () => {
  const schema = uniqueSchema();
  const db = pgUrlWithSchema(schema);
  let engine: Engine;
  let session = '';
  beforeAll(async () => {
    engine = await createEngine({ db });
    await engine.subjects.create();
    const me = engine.subject();
    session = (await me.sessions.create()).id;
    await me.turns.add({ sessionId: session, role: 'user', content: `${QUOTE}.` });
  });
  afterAll(async () => {
    await engine.close();
    await dropSchema(schema);
  });

  const badArgv: fc.Arbitrary<string[]> = fc.oneof(
    fc
      .oneof(
        unstorable,
        fc.integer({ min: 1, max: 3 }).map((n) => 'x'.repeat(1_000_000 + n)),
      )
      .map((text) => ['turn', 'add', '--session', session, '--role', 'user', '--text', text]),
    unstorable.map((speaker) => [
      'turn',
      'add',
      '--session',
      session,
      '--role',
      'user',
      '--text',
      'hi',
      '--speaker',
      speaker,
    ]),
    fc
      .oneof(unstorable, longer(2048))
      .map((tool) => [
        'turn',
        'add',
        '--session',
        session,
        '--role',
        'assistant',
        '--text',
        'hi',
        '--tools',
        tool,
      ]),
    badText(16_384)
      .filter((t): t is string => typeof t === 'string')
      .map((title) => ['session', 'new', '--title', title]),
    fc
      .tuple(
        fc.constantFrom('--claim', '--why-wrong', '--surface', '--tags'),
        fc.oneof(unstorable, longer(16_384)),
      )
      .map(([flag, v]) => [...RETRACT_ARGV, flag, v]),
    fc
      .integer({ min: 36_501, max: 10_000_000 })
      .map((d) => [...RETRACT_ARGV, '--due-days', String(d)]),
    fc
      .integer({ min: 1, max: 36_500 })
      .map((d) => [
        ...RETRACT_ARGV,
        '--corrected-at',
        '9999-12-31T00:00:00Z',
        '--due-days',
        String(d),
      ]),
    fc
      .bigInt({ min: 2n ** 31n, max: 2n ** 53n - 1n })
      .map((n) => ['history', '--session', session, '--last', String(n)]),
  );

  it('refuses bad flags in-process with INVALID_ARGUMENT (exit 2), the store unchanged', async () => {
    const before = await digests(engine);
    await fc.assert(
      fc.asyncProperty(badArgv, async (argv) => {
        count('cli runs');
        const r = await runCliCaptured([...argv, '--db', db, '--json']);
        expect({
          argv: argv.map((a) => a.slice(0, 40)),
          code: r.code,
          error: r.errorCode(),
        }).toEqual({
          argv: argv.map((a) => a.slice(0, 40)),
          code: 2,
          error: 'INVALID_ARGUMENT',
        });
      }),
      { numRuns: 60 },
    );
    // once per property: whatever a run changed would still show at the end
    expect(await digests(engine)).toEqual(before);
  });
});

it('generated at least 10,000 bad inputs in all', () => {
  const total = Object.values(counted).reduce((a, b) => a + b, 0);
  console.log(`bad inputs generated: ${total}`, counted);
  expect(total).toBeGreaterThanOrEqual(10_000);
});
