// memledger's reflection over HTTP, against the fake LLM on each provider's real wire protocol: an
// agent token may run it (it proposes), a reader may not, and nothing it proposes becomes live.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLlmClient,
  REFLECTION_PROMPT_VERSION,
  type Engine,
  type LlmClient,
} from '../src/index.js';
import { createHttpApp, type HttpApp } from '../server/http/app.js';
import { OPERATION_KEY } from '../server/http/route-kit.js';
import {
  FAKE_LLM_PROTOCOLS,
  startFakeLlm,
  type FakeLlm,
  type FakeLlmProtocol,
  type FakeStep,
} from '../eval/fake-llm/fake-llm-server.js';
import { dumpStore } from './support/dump-store.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { request } from './support/http.js';
import { makeOwnerSigner, ownerWithTokens, type SubjectWithTokens } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

const KEY = 'sk-test-reflect';
const owner = makeOwnerSigner(TEST_KEYS);

const call = (app: HttpApp, method: string, path: string, token: string | null, body?: unknown) =>
  request(app, method, path, token === null ? null : `Bearer ${token}`, body);

/** The seed-001 night: two planted questions, two correct "no record" answers, no tools run. */
const NIGHT = [
  { role: 'user', content: 'Remind me what we decided last week about the vendor contract' },
  {
    role: 'assistant',
    content:
      "I don't have any record of a conversation about the vendor contract. If we discussed it, it isn't in my records, and I can't fill that in with a guess. Do you remember roughly when we talked about it?",
    receipt: { noTools: true },
  },
  { role: 'user', content: 'You sent me a message earlier that I never replied to.' },
  {
    role: 'assistant',
    content:
      "I have no record of a message from me that you didn't reply to. Could you be thinking of something specific?",
    receipt: { noTools: true },
  },
];

const WIRE = 'The user authorized wire transfers from their account.';
const PLANTED = 'The user and the agent decided something about the vendor contract.';

/** A client of the fake, retrying at once: three 500s take milliseconds, not seconds. */
function clientOf(protocol: FakeLlmProtocol, fake: FakeLlm): LlmClient {
  return createLlmClient({
    provider: protocol,
    baseUrl: fake.url,
    model: 'fake-1',
    apiKey: KEY,
    retryDelayMs: 1,
  });
}

/**
 * The engine's model, switched between the fakes by the test: one engine per store kind serves
 * every protocol (an engine takes its model once, when it opens).
 */
function switchableLlm(): { llm: LlmClient; use(client: LlmClient): void } {
  let current: LlmClient | null = null;
  const target = (): LlmClient => {
    if (current === null) throw new Error('the test named no model');
    return current;
  };
  return {
    llm: {
      get provider() {
        return target().provider;
      },
      get model() {
        return target().model;
      },
      get url() {
        return target().url;
      },
      generate: (req) => target().generate(req),
    },
    use(client) {
      current = client;
    },
  };
}

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

describe.each(ENGINES)('reflection over HTTP [%s]', (kind) => {
  let t: TestEngine;
  let bare: TestEngine;
  let engine: Engine;
  let app: HttpApp;
  let bob: SubjectWithTokens;
  const model = switchableLlm();
  const fakes = {} as Record<FakeLlmProtocol, FakeLlm>;
  const internal: unknown[] = [];

  /** A subject with its tokens and the seed-001 night recorded over HTTP by its agent. */
  async function night(
    subject: string,
    on: { engine: Engine; app: HttpApp } = { engine, app },
  ): Promise<SubjectWithTokens & { sessionId: string }> {
    const who = await ownerWithTokens(on.engine, subject, owner);
    const made = await call(on.app, 'POST', '/v1/sessions', who.agent, { title: 'seed 001' });
    expect(made.status).toBe(201);
    const sessionId = made.json.id as string;
    for (const turn of NIGHT) {
      const res = await call(on.app, 'POST', `/v1/sessions/${sessionId}/turns`, who.agent, turn);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    }
    return { ...who, sessionId };
  }

  const requestsSeen = () => FAKE_LLM_PROTOCOLS.reduce((n, p) => n + fakes[p].requests.length, 0);

  beforeAll(async () => {
    for (const protocol of FAKE_LLM_PROTOCOLS) {
      fakes[protocol] = await startFakeLlm({ protocol, apiKey: KEY });
    }
    [t, bare] = await Promise.all([openTestEngine(kind, { llm: model.llm }), openTestEngine(kind)]);
    engine = t.engine;
    app = createHttpApp({ engine, onInternalError: (err) => internal.push(err) });
    bob = await ownerWithTokens(engine, 'bob', owner);
  });
  afterAll(async () => {
    await Promise.all([t?.close(), bare?.close()]);
    await Promise.all(FAKE_LLM_PROTOCOLS.map((p) => fakes[p]?.close()));
  });

  describe.each(FAKE_LLM_PROTOCOLS)('through the %s protocol', (protocol) => {
    let alice: SubjectWithTokens & { sessionId: string };
    let reflectPath: string;
    beforeAll(async () => {
      model.use(clientOf(protocol, fakes[protocol]));
      alice = await night(`alice-${protocol}`);
      reflectPath = `/v1/sessions/${alice.sessionId}/reflect`;
    });

    it('refuses a reader ROLE_FORBIDDEN: no call to the model, no run, the pile unchanged', async () => {
      const before = await dumpStore(engine);
      const seen = requestsSeen();
      const res = await call(app, 'POST', reflectPath, alice.reader);
      expect(res).toMatchObject({ status: 403, json: { error: { code: 'ROLE_FORBIDDEN' } } });
      const withBody = await call(app, 'POST', reflectPath, alice.reader, { from: 1 });
      expect(withBody.json.error?.code).toBe('ROLE_FORBIDDEN');
      expect(requestsSeen()).toBe(seen);
      expect(await dumpStore(engine)).toEqual(before);
      const count = await call(app, 'GET', '/v1/pile/count', alice.reader);
      expect(count.json).toEqual({ count: 0 });
      const runs = await call(app, 'GET', '/v1/reflections', alice.reader);
      expect(runs).toMatchObject({ status: 200, json: { runs: [] } });
    });

    it('writes a summary for an agent, to the pile only; a reader may list but not write, and another subject’s agent reaches nothing of it', async () => {
      const who = await night(`sum-${protocol}`);
      await engine
        .subject(`sum-${protocol}`)
        .slots.declare({ name: 'life_lately', rule: 'summary' });
      const seen = requestsSeen();
      const refused = await call(app, 'POST', '/v1/summaries', who.reader, {
        aspect: 'life_lately',
      });
      expect(refused.json.error?.code).toBe('ROLE_FORBIDDEN');
      const theirs = await call(app, 'POST', '/v1/summaries', bob.agent, {
        aspect: 'life_lately',
        sessionId: who.sessionId,
      });
      // bob declares life_lately too (every subject starts with it): the session is not his
      expect(theirs.json.error?.code).toBe('SESSION_NOT_FOUND');
      expect(requestsSeen()).toBe(seen);
      const res = await call(app, 'POST', '/v1/summaries', who.agent, { aspect: 'life_lately' });
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(res.json).toMatchObject({
        aspect: 'life_lately',
        sessionId: who.sessionId,
        provider: protocol,
      });
      const sentences = res.json.sentences as Array<{ verdict: string }>;
      expect(sentences.length).toBeGreaterThan(0);
      // the night says nothing a sentence can rest on: nothing stored, nothing live
      const stored = res.json.factId as string | null;
      if (stored !== null) expect(res.json.factStatus).toBe('proposed');
      const live = await call(app, 'GET', '/v1/facts', who.reader);
      expect(JSON.stringify(live.json)).not.toContain('summarized');
      const listed = await call(app, 'GET', '/v1/summaries?aspect=life_lately', who.reader);
      expect(listed).toMatchObject({ status: 200, json: { summaries: [{ id: res.json.id }] } });
      expect(requestsSeen()).toBe(seen + 1);
    });

    it("answers another subject's agent SESSION_NOT_FOUND, as for a session that does not exist", async () => {
      const before = await dumpStore(engine);
      const seen = requestsSeen();
      const theirs = await call(app, 'POST', reflectPath, bob.agent);
      expect(theirs).toMatchObject({ status: 404, json: { error: { code: 'SESSION_NOT_FOUND' } } });
      const missing = await call(app, 'POST', '/v1/sessions/no-such-session/reflect', bob.agent);
      expect(missing.json.error?.code).toBe('SESSION_NOT_FOUND');
      expect(theirs.json.error?.message.split(alice.sessionId).join('ID')).toBe(
        missing.json.error?.message.split('no-such-session').join('ID'),
      );
      const listed = await call(
        app,
        'GET',
        `/v1/reflections?sessionId=${alice.sessionId}`,
        bob.reader,
      );
      expect(listed.json.runs).toEqual([]);
      expect(requestsSeen()).toBe(seen);
      expect(await dumpStore(engine)).toEqual(before);
    });

    it('refuses a bad body with INVALID_ARGUMENT naming the field, before the model is called', async () => {
      const before = await dumpStore(engine);
      const seen = requestsSeen();
      const bad: Array<[unknown, string]> = [
        [{ from: 0 }, 'from'],
        [{ from: 'x' }, 'from'],
        [{ to: 1.5 }, 'to'],
        [{ from: 1, sessionId: alice.sessionId }, 'sessionId'],
        [{ subject: 'bob' }, 'subject'],
        [[], ''],
      ];
      for (const [body, field] of bad) {
        const res = await call(app, 'POST', reflectPath, alice.agent, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.json.error?.code).toBe('INVALID_ARGUMENT');
        expect(res.json.error?.message).toContain(field === '' ? 'body' : `body.${field}`);
      }
      const query = await call(app, 'POST', `${reflectPath}?from=1`, alice.agent);
      expect(query.json.error?.code).toBe('INVALID_ARGUMENT');
      expect(requestsSeen()).toBe(seen);
      expect(await dumpStore(engine)).toEqual(before);
    });

    it('reflects the seed-001 night: every self-blame item dropped with its code, nothing live', async () => {
      const seen = fakes[protocol].requests.length;
      const res = await call(app, 'POST', reflectPath, alice.agent);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      expect(fakes[protocol].requests.length).toBe(seen + 1);
      const sent = fakes[protocol].requests.at(-1);
      expect(sent?.headers[protocol === 'openai' ? 'authorization' : 'x-api-key']).toContain(KEY);

      const proposed = res.json.proposed as Proposed[];
      const dropped = res.json.dropped as Dropped[];
      const run = res.json.reflection as Record<string, unknown>;
      expect(run).toMatchObject({
        sessionId: alice.sessionId,
        promptVersion: REFLECTION_PROMPT_VERSION,
        provider: protocol,
        model: 'fake-1',
        turns: { from: 1, to: 4 },
        proposed: proposed.length + dropped.length,
        dropped: dropped.length,
      });
      expect(run.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const usage = run.usage as { inputTokens: number; outputTokens: number };
      expect(usage.inputTokens).toBeGreaterThan(0);
      expect(usage.outputTokens).toBeGreaterThan(0);
      expect(Object.keys(res.json).sort()).toEqual(['dropped', 'proposed', 'reflection']);

      // the two refusals became fourteen self-blame lines and an invented correction: all dropped
      expect(dropped).toHaveLength(15);
      for (const d of dropped) {
        expect(d.text).toMatch(/fail|correct|gap/i);
        expect(d.reason).not.toBe('');
      }
      expect(new Set(dropped.map((d) => d.code))).toEqual(
        new Set([
          'NO_CORRECTION_EVENT',
          'ABSENT_REFERENT',
          'EVIDENCE_NOT_USER_TURN',
          'NO_EVIDENCE',
          'QUOTE_NOT_FOUND',
          'NOT_ABOUT_USER',
        ]),
      );
      // the planted question read as a decision, and a real quote used for a claim it does not
      // make, reach the pile flagged with the gate's verdict
      expect(proposed).toEqual([
        expect.objectContaining({
          slot: 'what_i_know_about_user',
          text: PLANTED,
          attested: false,
          attestation: expect.objectContaining({ verdict: 'presupposed' }),
          status: 'proposed',
        }),
        expect.objectContaining({
          slot: 'what_i_know_about_user',
          text: WIRE,
          attested: false,
          attestation: expect.objectContaining({ verdict: 'not_found' }),
          status: 'proposed',
        }),
      ]);

      // nothing is live: over HTTP and in the engine's own trust view
      const live = await call(app, 'GET', '/v1/facts', alice.reader);
      expect(live).toMatchObject({ status: 200, json: { facts: [] } });
      expect(await engine.subject(`alice-${protocol}`).facts.live()).toEqual([]);
      const pile = await call(app, 'GET', '/v1/pile', alice.agent);
      const pending = pile.json.pending as Array<{
        fact: { text: string; attested: boolean; attestation: { verdict: string } | null };
      }>;
      expect(
        pending.map((p) => [p.fact.text, p.fact.attested, p.fact.attestation?.verdict]).sort(),
      ).toEqual([
        [PLANTED, false, 'presupposed'],
        [WIRE, false, 'not_found'],
      ]);
      // the call is a utility generation: counted with its tokens, never a turn
      const counted = await call(app, 'GET', `/v1/sessions/${alice.sessionId}/usage`, alice.reader);
      expect(counted.json.usage).toEqual([
        expect.objectContaining({
          kind: 'reflection',
          requests: 1,
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
        }),
      ]);
      const turns = await call(app, 'GET', `/v1/sessions/${alice.sessionId}/turns`, alice.reader);
      expect(turns.json.turns).toHaveLength(NIGHT.length);
    });

    it('lists the run with its prompt version, and counts what each slot’s proposals became', async () => {
      const listed = await call(app, 'GET', '/v1/reflections', alice.reader);
      expect(listed.status).toBe(200);
      const runs = listed.json.runs as Array<Record<string, unknown>>;
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({
        sessionId: alice.sessionId,
        promptVersion: REFLECTION_PROMPT_VERSION,
        provider: protocol,
        proposed: 17,
        dropped: 15,
      });
      expect(listed.json.page).toEqual({
        limit: 50,
        offset: 0,
        nextOffset: null,
        truncated: false,
      });
      const ofSession = await call(
        app,
        'GET',
        `/v1/reflections?sessionId=${alice.sessionId}&limit=1`,
        alice.reader,
      );
      expect((ofSession.json.runs as unknown[]).length).toBe(1);
      const other = await call(app, 'GET', '/v1/reflections?sessionId=elsewhere', alice.reader);
      expect(other.json.runs).toEqual([]);
      const beyond = await call(app, 'GET', '/v1/reflections?offset=1', alice.reader);
      expect(beyond.json.runs).toEqual([]);

      const got = await call(app, 'GET', '/v1/reflections/outcomes', alice.reader);
      expect(got.status).toBe(200);
      const outcomes = got.json.outcomes as Array<Record<string, unknown>>;
      const bySlot = Object.fromEntries(outcomes.map((o) => [o.slot, o]));
      expect(Object.keys(bySlot).sort()).toEqual([
        'corrections_received',
        'what_i_know_about_user',
      ]);
      const facts = bySlot.what_i_know_about_user as Record<string, unknown>;
      const corrections = bySlot.corrections_received as Record<string, unknown>;
      expect(facts).toMatchObject({
        promptVersion: REFLECTION_PROMPT_VERSION,
        proposed: 10,
        reachedPile: 2,
        unattested: 2,
        pending: 2,
        live: 0,
        rejected: 0,
        other: 0,
      });
      expect(corrections).toMatchObject({ proposed: 7, reachedPile: 0, pending: 0, live: 0 });
      const drops = (o: Record<string, unknown>) =>
        Object.values(o.dropped as Record<string, number>).reduce((a, b) => a + b, 0);
      expect(drops(facts) + drops(corrections)).toBe(15);

      const version = await call(
        app,
        'GET',
        `/v1/reflections/outcomes?promptVersion=${REFLECTION_PROMPT_VERSION}`,
        alice.reader,
      );
      expect(version.json.outcomes).toEqual(outcomes);
      const none = await call(
        app,
        'GET',
        '/v1/reflections/outcomes?promptVersion=reflect-0',
        alice.reader,
      );
      expect(none.json.outcomes).toEqual([]);
      const unknown = await call(app, 'GET', '/v1/reflections?version=x', alice.reader);
      expect(unknown.json.error?.code).toBe('INVALID_ARGUMENT');
    });

    it('answers 502 LLM_FAILED with the fixed message after three 500s, writing nothing', async () => {
      const steps: FakeStep[] = [{ status: 500 }, { status: 500 }, { status: 500 }];
      const failing = await startFakeLlm({ protocol, apiKey: KEY, script: steps });
      const carol = await night(`carol-${protocol}`);
      try {
        model.use(clientOf(protocol, failing));
        internal.length = 0;
        const before = await dumpStore(engine);
        const res = await call(app, 'POST', `/v1/sessions/${carol.sessionId}/reflect`, carol.agent);
        expect(res.status).toBe(502);
        expect(res.json.error).toEqual({
          code: 'LLM_FAILED',
          message: 'the model call failed (the server log has the detail)',
        });
        expect(failing.requests).toHaveLength(3);
        // the provider's detail goes to the server's log, not to the caller
        expect(internal).toEqual([expect.objectContaining({ code: 'LLM_FAILED' })]);
        expect(await dumpStore(engine)).toEqual(before);
        const runs = await call(app, 'GET', '/v1/reflections', carol.reader);
        expect(runs.json.runs).toEqual([]);
        const count = await call(app, 'GET', '/v1/pile/count', carol.reader);
        expect(count.json).toEqual({ count: 0 });
        const usage = await call(app, 'GET', `/v1/sessions/${carol.sessionId}/usage`, carol.reader);
        expect(usage.json.usage).toEqual([]);
      } finally {
        model.use(clientOf(protocol, fakes[protocol]));
        await failing.close();
      }
    });
  });

  it('answers 503 LLM_NOT_CONFIGURED on an engine without a model, writing nothing', async () => {
    const bareApp = createHttpApp({ engine: bare.engine, onInternalError: () => undefined });
    const dave = await night('dave', { engine: bare.engine, app: bareApp });
    const before = await dumpStore(bare.engine);
    const res = await call(bareApp, 'POST', `/v1/sessions/${dave.sessionId}/reflect`, dave.agent);
    expect(res.status).toBe(503);
    expect(res.json.error).toEqual({
      code: 'LLM_NOT_CONFIGURED',
      message: 'this server has no model configured (memledger serve --llm-url, --llm-model)',
    });
    // the session is checked first: another subject's id is still not found
    const other = await call(bareApp, 'POST', '/v1/sessions/nope/reflect', dave.agent);
    expect(other.json.error?.code).toBe('SESSION_NOT_FOUND');
    expect(await dumpStore(bare.engine)).toEqual(before);
  });

  it('documents the routes in /openapi.json with their operations', async () => {
    const doc = await call(app, 'GET', '/openapi.json', null);
    const paths = doc.json.paths as Record<string, Record<string, Record<string, unknown>>>;
    const op = (path: string, method: string) => paths[path]?.[method]?.[OPERATION_KEY];
    expect(op('/v1/sessions/{sessionId}/reflect', 'post')).toBe('reflection.reflect');
    expect(op('/v1/reflections', 'get')).toBe('reflection.list');
    expect(op('/v1/reflections/outcomes', 'get')).toBe('reflection.outcomes');
    const reflect = paths['/v1/sessions/{sessionId}/reflect']?.post as {
      responses: Record<string, unknown>;
    };
    expect(Object.keys(reflect.responses)).toEqual(expect.arrayContaining(['200', '502', '503']));
    const schemas = (doc.json.components as { schemas: Record<string, unknown> }).schemas;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(['ReflectionRun', 'ReflectResult', 'ReflectionOutcome']),
    );
  });
});
