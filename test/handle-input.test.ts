// JavaScript callers (and the HTTP and MCP faces, which pass on what they are sent) can hand a
// handle anything. Every method, given arguments of the wrong shape, must reject with an
// EngineError that says what is wrong: never a TypeError, never INTERNAL or STORE_ERROR, and
// without changing a row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EngineError,
  type FactId,
  generateOwnerKey,
  type RetractionId,
  type SubjectHandle,
} from '../src/index.js';
import { dumpStore } from './support/dump-store.js';
import { ONE_ENGINE, openTestEngine, type TestEngine } from './support/engines.js';
import { tempDir } from './support/probe-fixtures.js';
import { TEST_KEYS } from './support/test-keys.js';

/** Argument lists of the wrong shape, tried on every method of the handle. */
const SHAPES: unknown[][] = [
  [null],
  [5],
  ['x'],
  [[]],
  [{}],
  [null, null],
  ['x', null],
  ['x', 5],
  [{}, 'x'],
  [{ sessionId: 5, role: [], content: {} }],
];

type Call = [string, (me: SubjectHandle, ids: Ids) => Promise<unknown>];
interface Ids {
  session: string;
  proposal: string;
}

/** Inputs of the right shape with one field of the wrong type or value. */
const FIELDS: Call[] = [
  ['sessions.create title 5', (me) => me.sessions.create({ title: 5 as never })],
  ['sessions.create id 5', (me) => me.sessions.create({ id: 5 as never })],
  ['sessions.list limit -1', (me) => me.sessions.list({ limit: -1 })],
  [
    'turns.add speaker 5',
    (me, ids) =>
      me.turns.add({ sessionId: ids.session, role: 'user', content: 'hi', speaker: 5 as never }),
  ],
  [
    'turns.add content 5',
    (me, ids) => me.turns.add({ sessionId: ids.session, role: 'user', content: 5 as never }),
  ],
  [
    'turns.add at "yesterday"',
    (me, ids) =>
      me.turns.add({ sessionId: ids.session, role: 'user', content: 'hi', at: 'x' as never }),
  ],
  [
    'turns.add receipt tools "bank"',
    (me, ids) =>
      me.turns.add({
        sessionId: ids.session,
        role: 'assistant',
        content: 'done',
        receipt: { tools: 'bank' as never },
      }),
  ],
  [
    'turns.add receipt tools [5]',
    (me, ids) =>
      me.turns.add({
        sessionId: ids.session,
        role: 'assistant',
        content: 'done',
        receipt: { tools: [5] as never },
      }),
  ],
  [
    'turns.add receipt null',
    (me, ids) =>
      me.turns.add({
        sessionId: ids.session,
        role: 'assistant',
        content: 'done',
        receipt: null as never,
      }),
  ],
  [
    'turns.recordResponse blocks "hello"',
    (me, ids) => me.turns.recordResponse({ sessionId: ids.session, blocks: 'hello' as never }),
  ],
  [
    'turns.recordResponse blocks [null]',
    (me, ids) => me.turns.recordResponse({ sessionId: ids.session, blocks: [null] as never }),
  ],
  ['history.turns last "3"', (me, ids) => me.history.turns(ids.session, { last: '3' as never })],
  [
    'history.render budgetChars "x"',
    (me, ids) => me.history.render(ids.session, { budgetChars: 'x' as never }),
  ],
  [
    'gate.propose proposals "x"',
    (me, ids) => me.gate.propose({ sessionId: ids.session, proposals: 'x' as never }),
  ],
  [
    'gate.propose proposedBy 5',
    (me, ids) => me.gate.propose({ sessionId: ids.session, proposals: [], proposedBy: 5 as never }),
  ],
  ['gate.dropped limit "x"', (me) => me.gate.dropped({ limit: 'x' as never })],
  [
    'owner.decide without a signer',
    (me, ids) => me.owner.decide({ proposalId: ids.proposal, decision: 'approve' } as never),
  ],
  [
    'owner.decide signer {}',
    (me, ids) =>
      me.owner.decide({
        proposalId: ids.proposal as FactId,
        decision: 'approve',
        signer: {} as never,
      }),
  ],
  [
    'owner.decide note 5',
    (me, ids) =>
      me.owner.decide({
        proposalId: ids.proposal as FactId,
        decision: 'reject',
        note: 5 as never,
        signer: generateOwnerKey('pw', TEST_KEYS) as never,
      }),
  ],
  [
    'owner.setKey a real key under another id',
    (me) => {
      const key = generateOwnerKey('pw', TEST_KEYS);
      return me.owner.setKey({ keyId: 'ed25519:0000000000000000', publicKeyPem: key.publicKeyPem });
    },
  ],
  [
    'owner.setKey a junk key',
    (me) => me.owner.setKey({ keyId: 'junk', publicKeyPem: 'not a pem' }),
  ],
  ['owner.verifyChain ownerKey 5', (me) => me.owner.verifyChain({ ownerKey: 5 as never })],
  [
    'slots.declare autoLive "yes"',
    (me) => me.slots.declare({ name: 'x', rule: 'user_fact', autoLive: 'yes' as never }),
  ],
  ...(
    [
      ['tags "abc"', { tags: 'abc' }],
      ['tags [5]', { tags: [5] }],
      ['correctedAt "2020-01-01"', { correctedAt: '2020-01-01' }],
      ['claimedAt "yesterday"', { claimedAt: 'yesterday' }],
      ['claimSurface 7', { claimSurface: 7 }],
      ['claimRef {}', { claimRef: {} }],
      ['dueDays "3"', { dueDays: '3' }],
      ['factId 5', { factId: 5 }],
      ['probe "x"', { probe: 'x' }],
      ['claim 5', { claim: 5 }],
    ] as const
  ).map(([label, extra]): Call => [
    `ledger.retract ${label}`,
    (me) =>
      me.ledger.retract({
        claim: 'c',
        stoodOn: 's',
        whyWrong: 'w',
        corrected: 'c2',
        procedure: 'p',
        passObservation: 'it holds',
        overturnCondition: 'it breaks',
        ...(extra as object),
      }),
  ]),
  [
    'ledger.settle outcome 5',
    (me) =>
      me.ledger.settle({
        retractionId: 'r' as RetractionId,
        verdict: 'stands',
        outcome: 5 as never,
      }),
  ],
  [
    'probes.run purpose 5',
    (me) => me.probes.run({ kind: 'file', path: 'x', mode: 'exists' }, { purpose: 5 as never }),
  ],
  [
    'probes.run instrument 5',
    (me) => me.probes.run({ kind: 'file', path: 'x', mode: 'exists' }, { instrument: 5 as never }),
  ],
  ['probes.calibrations instrument 5', (me) => me.probes.calibrations({ instrument: 5 as never })],
  ['arrival.assemble surface 5', (me) => me.arrival.assemble({ surface: 5 as never })],
  ['arrival.diff manifestId 5', (me) => me.arrival.diff({ manifestId: 5 as never })],
  ['arrival.setTimeZone 5', (me) => me.arrival.setTimeZone(5 as never)],
  [
    'tools.register surfaces "chat"',
    (me) => me.tools.register({ name: 't', surfaces: 'chat' as never }),
  ],
  [
    'tools.register description 5',
    (me) => me.tools.register({ name: 't', surfaces: ['chat'], description: 5 as never }),
  ],
  ['commitments.add due 5', (me) => me.commitments.add({ title: 't', due: 5 as never })],
  ['commitments.add title 5', (me) => me.commitments.add({ title: 5 as never })],
  [
    'actions.record completedAt "now"',
    (me) =>
      me.actions.record({ tool: 't', surface: 'chat', target: 'x', completedAt: 'now' as never }),
  ],
  ['recall.search k "3"', (me) => me.recall.search('hello', { k: '3' as never })],
  ['recall.search kinds "turn"', (me) => me.recall.search('hello', { kinds: 'turn' as never })],
];

/** The failure of a call, described when it is not a clean EngineError. */
async function unclean(call: () => Promise<unknown>): Promise<string | null> {
  try {
    await call();
    return null;
  } catch (err) {
    if (err instanceof EngineError && err.code !== 'INTERNAL' && err.code !== 'STORE_ERROR') {
      return null;
    }
    const e = err as Error;
    return `${e.name}${err instanceof EngineError ? ` ${err.code}` : ''}: ${e.message}`;
  }
}

describe.each(ONE_ENGINE)('handle inputs of the wrong shape [%s]', (kind) => {
  let t: TestEngine;
  let me: SubjectHandle;
  const ids: Ids = { session: '', proposal: '' };
  const tmp = tempDir('memledger-input-');

  beforeAll(async () => {
    t = await openTestEngine(kind, { probes: { roots: [tmp.dir] } });
    await t.engine.subjects.create();
    me = t.engine.subject();
    const key = generateOwnerKey('pw', TEST_KEYS);
    await me.owner.setKey({ keyId: key.keyId, publicKeyPem: key.publicKeyPem });
    ids.session = (await me.sessions.create()).id;
    await me.turns.add({ sessionId: ids.session, role: 'user', content: 'I like tea.' });
    const { proposed } = await me.gate.propose({
      sessionId: ids.session,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user likes tea.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I like tea' },
        },
      ],
    });
    ids.proposal = proposed[0]!.id;
  });
  afterAll(async () => {
    await t.close();
    tmp.cleanup();
  });

  it('rejects every method called with arguments of the wrong shape, cleanly', async () => {
    const before = await dumpStore(t.engine);
    const bad: string[] = [];
    for (const [ns, api] of Object.entries(me)) {
      if (ns === 'id' || ns === 'storeId') continue;
      for (const [name, fn] of Object.entries(
        api as Record<string, (...a: unknown[]) => Promise<unknown>>,
      )) {
        for (const args of SHAPES) {
          const why = await unclean(() => fn(...args));
          if (why !== null) bad.push(`${ns}.${name}(${JSON.stringify(args)}) → ${why}`);
        }
      }
    }
    expect(bad).toEqual([]);
    const after = await dumpStore(t.engine);
    // Only calls whose arguments happen to be valid write: `sessions.create({})` makes a session,
    // an arrival records its manifest, a probe or calibration its run.
    for (const table of ['sessions', 'arrival_manifests', 'probe_records', 'probe_calibrations']) {
      delete before[table];
      delete after[table];
    }
    expect(after).toEqual(before);
  });

  it('rejects a field of the wrong type with INVALID_ARGUMENT, and changes nothing', async () => {
    const before = await dumpStore(t.engine);
    const bad: string[] = [];
    for (const [label, call] of FIELDS) {
      try {
        await call(me, ids);
        bad.push(`${label} → accepted`);
      } catch (err) {
        if (!(err instanceof EngineError) || err.code !== 'INVALID_ARGUMENT') {
          const e = err as Error;
          bad.push(
            `${label} → ${e.name}${err instanceof EngineError ? ` ${err.code}` : ''}: ${e.message}`,
          );
        }
      }
    }
    expect(bad).toEqual([]);
    expect(await dumpStore(t.engine)).toEqual(before);
  });
});
