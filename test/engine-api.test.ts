// The subject handle's promises, checked by enumerating the handle itself, so a namespace or a
// method added later cannot escape them: closed means ENGINE_CLOSED, unknown means
// SUBJECT_NOT_FOUND, and nothing written through one subject is readable through another.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type OwnerSigner,
  type SubjectHandle,
  type FactId,
  type RetractionId,
} from '../src/index.js';
import {
  engineBeside,
  ENGINES,
  ONE_ENGINE,
  openTestEngine,
  type TestEngine,
} from './support/engines.js';
import { code } from './support/errors.js';
import { tempDir } from './support/probe-fixtures.js';
import { TEST_KEYS } from './support/test-keys.js';

/** The namespaces docs/API.md describes; a new one must be added here and there. */
const NAMESPACES = [
  'sessions',
  'turns',
  'history',
  'gate',
  'owner',
  'slots',
  'facts',
  'ledger',
  'probes',
  'arrival',
  'tools',
  'commitments',
  'actions',
  'recall',
  'reflection',
  'summaries',
  'vectors',
] as const;

type Method = (...args: unknown[]) => unknown;

/** Every method of every namespace of a handle, by `namespace.method`. */
function methodsOf(handle: SubjectHandle): Array<[string, Method]> {
  const out: Array<[string, Method]> = [];
  for (const [ns, api] of Object.entries(handle)) {
    if (ns === 'id' || ns === 'storeId') continue;
    for (const [name, fn] of Object.entries(api as Record<string, unknown>)) {
      expect(typeof fn, `${ns}.${name}`).toBe('function');
      out.push([`${ns}.${name}`, fn as Method]);
    }
  }
  return out;
}

/** Calls each method with no arguments and collects the code it rejects with. */
async function codesOf(handle: SubjectHandle): Promise<Record<string, string>> {
  const codes: Record<string, string> = {};
  for (const [name, fn] of methodsOf(handle)) {
    const result = fn();
    expect(result, `${name} returns a promise`).toBeInstanceOf(Promise);
    codes[name] = await code(result as Promise<unknown>);
  }
  return codes;
}

const keyDir = tempDir('memledger-api-');
afterAll(() => keyDir.cleanup());

function makeSigner(name: string): OwnerSigner {
  const file = join(keyDir.dir, `${name}.key`);
  writeOwnerKeyFile(file, generateOwnerKey('pw', TEST_KEYS).keyFile);
  return loadOwnerKey(file, 'pw', TEST_KEYS);
}

describe.each(ONE_ENGINE)('the subject handle [%s]', (kind) => {
  // one store for these handles: no test writes to it but to create 'ghost', and the closed
  // engine's 'owner' (after the subjects were listed)
  let t: TestEngine;
  beforeAll(async () => {
    t = await openTestEngine(kind);
  });
  afterAll(() => t.close());

  it('has exactly the documented namespaces, each a non-empty set of methods', async () => {
    const me = t.engine.subject();
    expect(me.id).toBe('owner');
    expect(me.storeId).toBe(t.engine.storeId);
    expect(me.storeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys(me).filter((k) => k !== 'id' && k !== 'storeId')).toEqual([...NAMESPACES]);
    expect(methodsOf(me).length).toBeGreaterThan(NAMESPACES.length * 2);
  });

  it('rejects every method of an unknown subject with SUBJECT_NOT_FOUND, and creates nothing', async () => {
    const ghost = t.engine.subject('ghost');
    const codes = await codesOf(ghost);
    const wrong = Object.entries(codes).filter(([, c]) => c !== 'SUBJECT_NOT_FOUND');
    expect(wrong).toEqual([]);
    expect(Object.keys(codes).length).toBe(methodsOf(ghost).length);
    expect(await t.engine.subjects.list()).toEqual([]);
    // Created explicitly, the same handle works.
    expect(await t.engine.subjects.create('ghost')).toEqual({ id: 'ghost', created: true });
    expect(await ghost.sessions.list()).toEqual([]);
    expect(await t.engine.subjects.create('ghost')).toEqual({ id: 'ghost', created: false });
  });

  it('rejects a malformed subject id on every method, not only on create', async () => {
    const bad = t.engine.subject('no spaces allowed');
    const codes = Object.values(await codesOf(bad));
    expect(new Set(codes)).toEqual(new Set(['INVALID_ARGUMENT']));
    expect(await code(t.engine.subjects.create('no spaces allowed'))).toBe('INVALID_ARGUMENT');
  });

  it('rejects every method with ENGINE_CLOSED after close, a handle made before or after', async () => {
    // an engine of its own on the store, closed here
    const engine: Engine = await engineBeside(t);
    await engine.subjects.create();
    const before = engine.subject();
    await engine.close();
    await engine.close(); // closing twice is harmless
    for (const handle of [before, engine.subject(), engine.subject('ghost')]) {
      const wrong = Object.entries(await codesOf(handle)).filter(([, c]) => c !== 'ENGINE_CLOSED');
      expect(wrong).toEqual([]);
    }
    expect(await code(engine.subjects.create('x'))).toBe('ENGINE_CLOSED');
    expect(await code(engine.subjects.list())).toBe('ENGINE_CLOSED');
    expect(() =>
      engine.addArrivalBlock({ name: 'late', tier: 'volatile', render: async () => 'x' }),
    ).toThrow(expect.objectContaining({ code: 'ENGINE_CLOSED' }));
  });
});

describe.each(ENGINES)('subjects are sealed from each other [%s]', (kind) => {
  let t: TestEngine;
  let a: SubjectHandle;
  let b: SubjectHandle;
  const probeRoot = tempDir('memledger-api-probe-');
  const signer = makeSigner(`sealed-${kind}`);
  const ids: Record<string, string> = {};
  const SECRET = 'zanzibar';

  beforeAll(async () => {
    writeFileSync(join(probeRoot.dir, 'probe.txt'), 'ok');
    t = await openTestEngine(kind, { probes: { roots: [probeRoot.dir] } });
    await t.engine.subjects.create('alice');
    await t.engine.subjects.create('bob');
    a = t.engine.subject('alice');
    b = t.engine.subject('bob');

    // Everything written through alice.
    await a.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    const session = await a.sessions.create({ title: `the ${SECRET} trip` });
    ids.session = session.id;
    await a.turns.add({
      sessionId: session.id,
      role: 'user',
      content: `I am flying to ${SECRET} next week with my sister.`,
    });
    await a.turns.add({
      sessionId: session.id,
      role: 'assistant',
      content: `Noted: ${SECRET} next week.`,
      receipt: { tools: ['calendar'], sources: ['https://example.org/flights'] },
    });
    await a.turns.add({ sessionId: session.id, role: 'user', content: 'title', utility: true });
    const proposed = await a.gate.propose({
      sessionId: session.id,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: `The user is flying to ${SECRET} next week.`,
          origin: 'saw',
          evidence: { turn: 1, quote: `flying to ${SECRET} next week` },
        },
        {
          slot: 'what_i_know_about_user',
          text: `The user has a sister in ${SECRET}.`,
          origin: 'saw',
          evidence: { turn: 1, quote: `my brother lives in ${SECRET}` },
        },
        {
          slot: 'what_i_know_about_user',
          text: `The user will need a hotel in ${SECRET}.`,
          origin: 'inferred',
          evidence: { turn: 1, quote: `flying to ${SECRET}` },
        },
      ],
    });
    expect(proposed.proposed).toHaveLength(2);
    expect(proposed.dropped).toHaveLength(1);
    ids.approved = proposed.proposed[0]!.id;
    ids.pending = proposed.proposed[1]!.id;
    await a.owner.decide({ proposalId: ids.approved as FactId, decision: 'approve', signer });
    await a.slots.declare({ name: `${SECRET}_notes`, rule: 'user_fact' });
    const retraction = await a.ledger.retract({
      claim: `The user lives in ${SECRET}.`,
      stoodOn: 'a guess',
      whyWrong: 'the user is only visiting',
      corrected: `The user is visiting ${SECRET}.`,
      procedure: 'Look for probe.txt in the probe root.',
      passObservation: 'probe.txt exists',
      overturnCondition: 'probe.txt is missing',
      dueDays: 0,
      probe: {
        spec: { kind: 'file', path: 'probe.txt', mode: 'exists' },
        standsIf: 'verified',
        overturnsIf: 'falsified',
      },
    });
    ids.retraction = retraction.id;
    ids.probeRecord = (
      await a.probes.run(
        { kind: 'file', path: 'probe.txt', mode: 'exists' },
        { purpose: `check ${SECRET}` },
      )
    ).id;
    await a.tools.register({ name: `${SECRET}_booker`, surfaces: ['chat'] });
    ids.commitment = (await a.commitments.add({ title: `Book the ${SECRET} hotel` })).id;
    await a.actions.record({
      tool: `${SECRET}_booker`,
      surface: 'chat',
      target: `${SECRET} flight`,
    });
    await a.arrival.setTimeZone('Africa/Dar_es_Salaam');
    ids.manifest = (
      await a.arrival.assemble({ surface: 'chat', sessionId: session.id })
    ).manifestId;
    expect(await a.recall.search(SECRET)).not.toEqual([]);
  });
  afterAll(async () => {
    await t.close();
    probeRoot.cleanup();
  });

  it("reads nothing of alice's through bob", async () => {
    expect(await b.sessions.list()).toEqual([]);
    expect(await b.facts.all()).toEqual([]);
    expect(await b.facts.live()).toEqual([]);
    expect(await b.gate.pile()).toEqual([]);
    expect(await b.gate.dropped()).toEqual([]);
    expect(await b.ledger.list()).toEqual([]);
    expect(await b.ledger.due()).toEqual([]);
    expect(await b.probes.log()).toEqual([]);
    expect(await b.tools.list()).toEqual([]);
    expect(await b.tools.forSurface('chat')).toEqual([]);
    expect(await b.commitments.list()).toEqual([]);
    expect(await b.owner.key()).toBeNull();
    expect(await b.owner.verifyChain()).toMatchObject({ ok: true, length: 0 });
    expect((await b.slots.list()).map((s) => s.name)).not.toContain(`${SECRET}_notes`);
    expect(await b.arrival.timeZone()).not.toBe('Africa/Dar_es_Salaam');
    expect(await b.recall.search(SECRET)).toEqual([]);
    expect(await b.recall.search(`${SECRET} sister flying`, { includeHistory: true })).toEqual([]);
    expect(await code(b.arrival.diff({ surface: 'chat' }))).toBe('MANIFEST_NOT_FOUND');
    const arrival = await b.arrival.assemble({ surface: 'chat' });
    expect(arrival.text).not.toContain(SECRET);
    expect(arrival.tools).toEqual([]);
  });

  it("finds none of alice's ids through bob: each looks exactly like a missing one", async () => {
    const s = ids.session!;
    expect(await code(b.sessions.get(s))).toBe('SESSION_NOT_FOUND');
    expect(await code(b.history.turns(s))).toBe('SESSION_NOT_FOUND');
    expect(await code(b.history.render(s))).toBe('SESSION_NOT_FOUND');
    expect(await code(b.history.messages(s))).toBe('SESSION_NOT_FOUND');
    expect(await code(b.history.usage(s))).toBe('SESSION_NOT_FOUND');
    expect(await code(b.recall.search(SECRET, { session: s }))).toBe('SESSION_NOT_FOUND');
    expect(await code(b.arrival.assemble({ surface: 'chat', sessionId: s }))).toBe(
      'SESSION_NOT_FOUND',
    );
    expect(await code(b.facts.get(ids.approved! as FactId))).toBe('FACT_NOT_FOUND');
    expect(await code(b.facts.get(ids.pending! as FactId))).toBe('FACT_NOT_FOUND');
    expect(await code(b.ledger.get(ids.retraction! as RetractionId))).toBe('RETRACTION_NOT_FOUND');
    expect(await code(b.probes.get(ids.probeRecord!))).toBe('PROBE_RECORD_NOT_FOUND');
    expect(await code(b.arrival.diff({ manifestId: ids.manifest! }))).toBe('MANIFEST_NOT_FOUND');
    // The same calls through alice succeed: the ids are real.
    expect((await a.sessions.get(s)).id).toBe(s);
    expect((await a.facts.get(ids.pending! as FactId)).status).toBe('proposed');
    expect((await a.ledger.get(ids.retraction! as RetractionId)).id).toBe(ids.retraction);
    expect((await a.probes.get(ids.probeRecord!)).id).toBe(ids.probeRecord);
  });

  it("writes nothing into alice's memory through bob", async () => {
    const s = ids.session!;
    await t.engine.subjects.create('bob');
    await b.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    const before = {
      turns: (await a.history.turns(s)).length,
      facts: await a.facts.all(),
      commitments: await a.commitments.list(),
      retraction: await a.ledger.get(ids.retraction! as RetractionId),
    };
    expect(
      await code(b.turns.add({ sessionId: s, role: 'user', content: 'I moved to Oslo.' })),
    ).toBe('SESSION_NOT_FOUND');
    expect(
      await code(
        b.turns.recordResponse({ sessionId: s, blocks: [{ type: 'text', text: 'Oslo it is.' }] }),
      ),
    ).toBe('SESSION_NOT_FOUND');
    expect(
      await code(
        b.gate.propose({
          sessionId: s,
          proposals: [
            {
              slot: 'what_i_know_about_user',
              text: `The user is flying to ${SECRET}.`,
              origin: 'saw',
              evidence: { turn: 1, quote: `flying to ${SECRET}` },
            },
          ],
        }),
      ),
    ).toBe('SESSION_NOT_FOUND');
    // bob's owner key is the same key pair, and still cannot decide alice's proposal.
    expect(
      await code(
        b.owner.decide({ proposalId: ids.pending! as FactId, decision: 'approve', signer }),
      ),
    ).toBe('PROPOSAL_NOT_FOUND');
    expect(await code(b.commitments.done(ids.commitment!))).toBe('COMMITMENT_NOT_FOUND');
    expect(await code(b.commitments.drop(ids.commitment!))).toBe('COMMITMENT_NOT_FOUND');
    expect(
      await code(
        b.ledger.settle({
          retractionId: ids.retraction! as RetractionId,
          verdict: 'stands',
          outcome: 'x',
        }),
      ),
    ).toBe('RETRACTION_NOT_FOUND');
    expect(
      await code(
        b.ledger.retract({
          claim: 'c',
          stoodOn: 's',
          whyWrong: 'w',
          corrected: 'c2',
          procedure: 'p',
          passObservation: 'it holds',
          overturnCondition: 'it breaks',
          factId: ids.approved! as FactId,
        }),
      ),
    ).toBe('FACT_NOT_FOUND');
    expect((await a.history.turns(s)).length).toBe(before.turns);
    expect(await a.facts.all()).toEqual(before.facts);
    expect(await a.commitments.list()).toEqual(before.commitments);
    expect(await a.ledger.get(ids.retraction! as RetractionId)).toEqual(before.retraction);
  });
});
