import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient, type Engine } from '../src/index.js';
import { startFakeLlm, type FakeLlm } from '../eval/fake-llm/fake-llm-server.js';
import { createHttpApp, type HttpApp } from '../server/http/app.js';
import { OPERATIONS, type Operation } from '../server/operations/table.js';
import { dumpStore } from './support/dump-store.js';
import { request, type Answer } from './support/http.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { tempDir } from './support/probe-fixtures.js';
import { ownerWithTokens, type SubjectWithTokens } from './support/tokens.js';

const root = tempDir('memledger-http-roles-');
afterAll(root.cleanup);
writeFileSync(join(root.dir, 'deploy.log'), 'deploy ok\n');

type Sent = Answer;

const call = (
  app: HttpApp,
  method: string,
  path: string,
  authorization: string | null,
  body?: unknown,
): Promise<Sent> => request(app, method, path, authorization, body);

const bearer = (token: string) => `Bearer ${token}`;

interface DocOperation {
  method: string;
  /** OpenAPI form: /v1/sessions/{sessionId} */
  path: string;
  operation: string;
  parameters: Array<{ name: string; in: string }>;
  requestBody?: unknown;
}

interface OpenApiDoc {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { schemas: Record<string, unknown> };
}

function docOperations(doc: OpenApiDoc): DocOperation[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      operation: op['x-memledger-operation'] as string,
      parameters: (op.parameters ?? []) as DocOperation['parameters'],
      requestBody: op.requestBody,
    })),
  );
}

/** The routes the app really serves (method and Hono path), middleware left out. */
function servedRoutes(app: HttpApp): string[] {
  const set = new Set(
    app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path}`),
  );
  return [...set].sort();
}

const UNGUARDED = new Set(['GET /healthz', 'GET /openapi.json']);

/** Every property name anywhere in a JSON schema, following $refs into components. */
function propertyNames(schema: unknown, doc: OpenApiDoc, seen = new Set<string>()): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const out: string[] = [];
  const node = schema as Record<string, unknown>;
  const ref = node.$ref;
  if (typeof ref === 'string') {
    const name = ref.split('/').pop() as string;
    if (seen.has(name)) return [];
    seen.add(name);
    return propertyNames(doc.components.schemas[name], doc, seen);
  }
  if (typeof node.properties === 'object' && node.properties !== null) {
    out.push(...Object.keys(node.properties));
  }
  for (const value of Object.values(node)) {
    if (typeof value === 'object') out.push(...propertyNames(value, doc, seen));
  }
  return out;
}

describe('HTTP routes and the operation table', () => {
  let t: TestEngine;
  let app: HttpApp;
  let doc: OpenApiDoc;

  beforeAll(async () => {
    t = await openTestEngine('pglite');
    app = createHttpApp({ engine: t.engine });
    doc = (await (await app.request('/openapi.json')).json()) as OpenApiDoc;
  });
  afterAll(() => t.close());

  it('serves exactly the routes the OpenAPI document lists, each naming one operation of OPERATIONS', () => {
    const ops = docOperations(doc);
    const documented = ops.map((o) => `${o.method} ${o.path.replace(/\{(\w+)\}/g, ':$1')}`);
    const served = servedRoutes(app).filter((r) => r !== 'GET /openapi.json');
    expect([...documented].sort()).toEqual(served);
    for (const o of ops) {
      if (UNGUARDED.has(`${o.method} ${o.path}`)) {
        expect(o.operation).toBeUndefined();
        continue;
      }
      expect(Object.keys(OPERATIONS), `${o.method} ${o.path}`).toContain(o.operation);
    }
    // every operation has its route, and each operation has one route only
    const named = ops.filter((o) => o.operation !== undefined).map((o) => o.operation);
    expect([...named].sort()).toEqual(Object.keys(OPERATIONS).sort());
  });

  it('takes no subject from the caller: no path, parameter or body field names one', () => {
    for (const o of docOperations(doc)) {
      expect(o.path).not.toMatch(/subject/i);
      for (const p of o.parameters) expect(p.name, `${o.method} ${o.path}`).not.toMatch(/subject/i);
      for (const name of propertyNames(o.requestBody, doc)) {
        expect(name, `${o.method} ${o.path}`).not.toMatch(/subject/i);
      }
    }
  });

  it('lists no owner power: no decision, delegation, slot declaration, token, owner key or tool registry write', () => {
    const forbidden = /approve|reject|decide|decision|delegat|declare|token|owner|key|register/i;
    for (const o of docOperations(doc)) {
      expect(`${o.method} ${o.path} ${o.operation ?? ''}`).not.toMatch(forbidden);
    }
    const writes = docOperations(doc).filter((o) => o.method !== 'GET');
    expect(writes.map((o) => o.path)).not.toContain('/v1/slots');
    expect(writes.map((o) => o.path)).not.toContain('/v1/tools');
    expect(Object.keys(OPERATIONS).join(' ')).not.toMatch(forbidden);
  });

  it('documents a valid OpenAPI 3.1 document whose every guarded operation needs the bearer token', () => {
    expect((doc as unknown as { openapi: string }).openapi).toBe('3.1.0');
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.responses, `${method} ${path}`).toBeDefined();
        if (path === '/healthz') continue;
        expect(op.security, `${method} ${path}`).toEqual([{ bearer: [] }]);
        expect(Object.keys(op.responses as object)).toEqual(
          expect.arrayContaining(['400', '401', '403', '404', '500']),
        );
      }
    }
  });
});

/** A request per operation that an agent could make successfully (or get a non-role refusal). */
type Sample = { query?: string; body?: unknown };
function samples(ids: Record<string, string>): Record<Operation, Sample> {
  return {
    'sessions.list': {},
    'sessions.get': {},
    'history.turns': {},
    'history.render': {},
    'history.messages': {},
    'history.usage': {},
    'gate.pileCount': {},
    'facts.live': {},
    'facts.get': {},
    'facts.integrity': {},
    'slots.list': {},
    'ledger.list': {},
    'ledger.get': {},
    'ledger.due': {},
    'arrival.assemble': { body: { surface: 'chat' } },
    'arrival.diff': { query: '?surface=chat' },
    'commitments.list': {},
    'tools.list': {},
    'recall.search': { query: '?q=Lisbon' },
    'reflection.list': {},
    'reflection.outcomes': {},
    'summaries.list': {},
    'sessions.create': { body: {} },
    'turns.add': { body: { role: 'user', content: 'I fly to Lisbon on Friday.' } },
    'turns.recordResponse': { body: { blocks: [{ type: 'text', text: 'Noted.' }] } },
    'gate.propose': {
      body: {
        sessionId: ids.sessionId,
        proposals: [
          {
            slot: 'stances',
            text: 'The user flies to Lisbon on Friday.',
            origin: 'saw',
            evidence: { turn: 1, quote: 'I fly to Lisbon on Friday' },
          },
        ],
      },
    },
    'gate.pile': {},
    'gate.dropped': {},
    'gate.forgetRequests': {},
    'gate.requestForget': {
      body: {
        sessionId: ids.sessionId,
        turn: 1,
        quote: 'I fly to Lisbon on Friday',
        scope: { kind: 'phrase', phrase: 'Lisbon' },
      },
    },
    'ledger.retract': {
      body: {
        claim: 'The deploy failed.',
        stoodOn: 'an old log line',
        whyWrong: 'the log says it went through',
        corrected: 'The deploy succeeded.',
        procedure: 'Read deploy.log',
        passObservation: 'deploy.log contains "deploy ok"',
        overturnCondition: 'deploy.log lacks "deploy ok"',
      },
    },
    'ledger.settleByProbe': { body: { runProbe: true } },
    'probes.run': { body: { spec: { kind: 'file', path: 'deploy.log', mode: 'exists' } } },
    'probes.calibrate': { body: { instrument: 'file' } },
    'probes.log': {},
    'probes.get': {},
    'commitments.add': { body: { title: 'Send the list' } },
    'commitments.done': {},
    'commitments.drop': {},
    'actions.record': { body: { tool: 'search', surface: 'chat', target: 'weather' } },
    'reflection.reflect': { body: { from: 1 } },
    'summaries.summarize': { body: { aspect: 'life_lately' } },
  };
}

describe.each(ENGINES)('HTTP roles [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let app: HttpApp;
  let alice: SubjectWithTokens;
  let bob: SubjectWithTokens;
  // the model reflection calls: the agent's control run of reflection.reflect gets a real answer
  let fake: FakeLlm;
  let ops: DocOperation[];
  /** Real ids of alice's records, by path parameter name. */
  const ids: Record<string, string> = {};
  /** Bob's records, which alice's tokens must not reach. */
  const bobIds: Record<string, string> = {};

  const pathFor = (o: DocOperation, with_: Record<string, string>) =>
    o.path.replace(/\{(\w+)\}/g, (_, name: string) => with_[name] ?? 'missing-id');

  async function seed(subject: string, into: Record<string, string>): Promise<void> {
    const me = engine.subject(subject);
    await me.slots.declare({ name: 'life_lately', rule: 'summary' });
    const session = await me.sessions.create();
    await me.turns.add({
      sessionId: session.id,
      role: 'user',
      content: 'I fly to Lisbon on Friday.',
    });
    into.sessionId = session.id;
    const { proposed } = await me.gate.propose({
      sessionId: session.id,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user flies to Lisbon on Friday.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I fly to Lisbon on Friday' },
        },
      ],
    });
    into.factId = proposed[0]?.id as string;
    const r = await me.ledger.retract({
      claim: 'x was wrong',
      stoodOn: 'a guess',
      whyWrong: 'it was checked',
      corrected: 'x was right',
      procedure: 'look',
      passObservation: 'it is there',
      overturnCondition: 'it is not there',
    });
    into.retractionId = r.id;
    into.recordId = (await me.probes.run({ kind: 'file', path: 'deploy.log', mode: 'exists' })).id;
    into.commitmentId = (await me.commitments.add({ title: 'Call back' })).id;
    into.manifestId = (await me.arrival.assemble({ surface: 'chat' })).manifestId;
  }

  beforeAll(async () => {
    fake = await startFakeLlm({ protocol: 'openai' });
    const llm = createLlmClient({ provider: 'openai', baseUrl: fake.url, model: 'fake-1' });
    t = await openTestEngine(kind, { probes: { roots: [root.dir] }, llm });
    engine = t.engine;
    app = createHttpApp({ engine });
    alice = await ownerWithTokens(engine, 'alice');
    bob = await ownerWithTokens(engine, 'bob');
    await seed('alice', ids);
    await seed('bob', bobIds);
    const doc = (await (await app.request('/openapi.json')).json()) as OpenApiDoc;
    ops = docOperations(doc).filter((o) => o.operation !== undefined);
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  const send = (o: DocOperation, authorization: string | null, with_ = ids) => {
    const s = samples(with_)[o.operation as Operation];
    return call(app, o.method, pathFor(o, with_) + (s.query ?? ''), authorization, s.body);
  };

  it('refuses every guarded route without a token: 401 TOKEN_REQUIRED, WWW-Authenticate: Bearer', async () => {
    expect(ops.length).toBe(Object.keys(OPERATIONS).length);
    for (const o of ops) {
      for (const auth of [null, 'Basic YWxpY2U6eA==', 'Bearer', '']) {
        const res = await send(o, auth);
        expect(res.status, `${o.method} ${o.path} ${auth}`).toBe(401);
        expect(res.json.error?.code).toBe('TOKEN_REQUIRED');
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      const forged = await send(o, bearer(`mlt_${'A'.repeat(43)}`));
      expect(forged.status).toBe(401);
      expect(forged.json.error?.code).toBe('TOKEN_INVALID');
    }
    expect((await call(app, 'GET', '/healthz', null)).status).toBe(200);
  });

  it('refuses a reader every agent operation with 403 ROLE_FORBIDDEN, changing nothing', async () => {
    const before = await dumpStore(engine);
    const agentOps = ops.filter((o) => OPERATIONS[o.operation as Operation] === 'agent');
    expect(agentOps.length).toBeGreaterThan(10);
    for (const o of agentOps) {
      const res = await send(o, bearer(alice.reader));
      expect(res.status, `${o.method} ${o.path}`).toBe(403);
      expect(res.json.error?.code).toBe('ROLE_FORBIDDEN');
    }
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('lets a reader run every reader operation, which writes nothing but an arrival manifest', async () => {
    const before = await dumpStore(engine);
    for (const o of ops.filter((x) => OPERATIONS[x.operation as Operation] === 'reader')) {
      const res = await send(o, bearer(alice.reader));
      expect(res.status, `${o.method} ${o.path}: ${JSON.stringify(res.json)}`).toBeLessThan(300);
    }
    const after = await dumpStore(engine);
    expect({ ...after, arrival_manifests: '' }).toEqual({ ...before, arrival_manifests: '' });
  });

  it('lets an agent run every operation (the control: the same requests do get through)', async () => {
    for (const o of ops) {
      const res = await send(o, bearer(alice.agent));
      expect(res.status, `${o.method} ${o.path}: ${JSON.stringify(res.json)}`).not.toBe(401);
      expect(res.status, `${o.method} ${o.path}: ${JSON.stringify(res.json)}`).not.toBe(403);
      expect(res.status, `${o.method} ${o.path}: ${JSON.stringify(res.json)}`).toBeLessThan(500);
    }
  });

  it("cannot reach another subject's records: they read exactly like missing ids", async () => {
    const before = await dumpStore(engine);
    for (const o of ops.filter((x) => x.path.includes('{'))) {
      const theirs = await send(o, bearer(alice.agent), bobIds);
      const missing = await send(o, bearer(alice.agent), {});
      expect(theirs.status, `${o.method} ${o.path}`).toBe(404);
      expect(theirs.json.error?.code).toBe(missing.json.error?.code);
      const param = /\{(\w+)\}/.exec(o.path)?.[1] ?? '';
      const shown = (m: string | undefined, id: string) => m?.split(id).join('ID');
      expect(shown(theirs.json.error?.message, bobIds[param] ?? '')).toBe(
        shown(missing.json.error?.message, 'missing-id'),
      );
    }
    const propose = await call(app, 'POST', '/v1/proposals', bearer(alice.agent), {
      sessionId: bobIds.sessionId,
      proposals: [{ slot: 'stances', text: 'x', origin: 'saw', evidence: { turn: 1, quote: 'x' } }],
    });
    expect(propose.json.error?.code).toBe('SESSION_NOT_FOUND');
    const arrival = await call(app, 'POST', '/v1/arrival', bearer(alice.reader), {
      surface: 'chat',
      sessionId: bobIds.sessionId,
    });
    expect(arrival.json.error?.code).toBe('SESSION_NOT_FOUND');
    const diff = await call(
      app,
      'GET',
      `/v1/arrival/diff?manifestId=${bobIds.manifestId}`,
      bearer(alice.reader),
    );
    expect(diff.json.error?.code).toBe('MANIFEST_NOT_FOUND');
    const recall = await call(
      app,
      'GET',
      `/v1/recall?q=Lisbon&session=${bobIds.sessionId}`,
      bearer(alice.reader),
    );
    expect(recall.json.error?.code).toBe('SESSION_NOT_FOUND');
    const subject = await call(app, 'POST', '/v1/sessions', bearer(alice.agent), {
      subject: 'bob',
    });
    expect(subject).toMatchObject({ status: 400, json: { error: { code: 'INVALID_ARGUMENT' } } });
    const query = await call(app, 'GET', '/v1/sessions?subject=bob', bearer(alice.agent));
    expect(query).toMatchObject({ status: 400, json: { error: { code: 'INVALID_ARGUMENT' } } });
    const bobsList = await call(app, 'GET', '/v1/sessions', bearer(bob.reader));
    expect((bobsList.json.sessions as Array<{ id: string }>).map((s) => s.id)).toEqual([
      bobIds.sessionId,
    ]);
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('has no way to decide, delegate, declare a slot, manage tokens or touch the owner key', async () => {
    const before = await dumpStore(engine);
    const attempts: Array<[string, string, unknown?]> = [
      ['POST', `/v1/pile/${ids.factId}/approve`, {}],
      ['POST', `/v1/pile/${ids.factId}/reject`, {}],
      ['POST', `/v1/proposals/${ids.factId}/approve`, {}],
      ['POST', `/v1/proposals/${ids.factId}/decide`, { decision: 'approve' }],
      ['POST', `/v1/facts/${ids.factId}/approve`, {}],
      ['POST', '/v1/decisions', { proposalId: ids.factId, decision: 'approve' }],
      ['POST', '/v1/slots', { name: 'emails_sent', rule: 'action', autoLive: true }],
      ['PUT', '/v1/slots/emails_sent', { rule: 'action', autoLive: true }],
      ['POST', '/v1/slots/emails_sent/delegate', { tools: ['send_email'] }],
      ['GET', '/v1/tokens'],
      ['POST', '/v1/tokens', { role: 'agent' }],
      ['DELETE', `/v1/tokens/${alice.agentInfo.id}`],
      ['POST', `/v1/tokens/${alice.agentInfo.id}/revoke`, {}],
      ['GET', '/v1/owner/key'],
      ['PUT', '/v1/owner/key', { keyId: 'x', publicKeyPem: 'x' }],
      ['POST', '/v1/tools', { name: 'x', surfaces: ['chat'] }],
      ['DELETE', '/v1/tools/search'],
      ['POST', '/v1/arrival/timezone', { zone: 'UTC' }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await call(app, method, path, bearer(alice.agent), body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error?.code).toBe('ROUTE_NOT_FOUND');
    }
    const byVerdict = await call(
      app,
      'POST',
      `/v1/retractions/${ids.retractionId}/settle`,
      bearer(alice.agent),
      { verdict: 'overturned', outcome: 'the agent says so' },
    );
    expect(byVerdict).toMatchObject({ status: 400, json: { error: { code: 'INVALID_ARGUMENT' } } });
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('refuses a revoked token on every route', async () => {
    const made = await engine.subject('alice').owner.createToken({
      role: 'agent',
      signer: alice.signer,
    });
    expect((await call(app, 'GET', '/v1/sessions', bearer(made.token))).status).toBe(200);
    await engine
      .subject(made.info.subject)
      .owner.revokeToken({ id: made.info.id, signer: alice.signer });
    const before = await dumpStore(engine);
    for (const o of ops) {
      const res = await send(o, bearer(made.token));
      expect(res.status, `${o.method} ${o.path}`).toBe(401);
      expect(res.json.error?.code).toBe('TOKEN_REVOKED');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    expect(await dumpStore(engine)).toEqual(before);
  });
});
