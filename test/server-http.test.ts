import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, FactId, RetractionId } from '../src/index.js';
import { createHttpApp, type HttpApp } from '../server/http/app.js';
import { enginePage, pageOf } from '../server/http/route-kit.js';
import { request } from './support/http.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { UNANCHORED_LINE } from '../src/domain/trust.js';
import { tempDir } from './support/probe-fixtures.js';
import { ownerWithTokens, type SubjectWithTokens } from './support/tokens.js';

const root = tempDir('memledger-http-');
afterAll(root.cleanup);
writeFileSync(join(root.dir, 'deploy.log'), 'step 1\ndeploy ok\n');

/** One request to the app in-process, with the token as a bearer; `body` is sent as JSON. */
const call = (app: HttpApp, method: string, path: string, token: string | null, body?: unknown) =>
  request(app, method, path, token === null ? null : `Bearer ${token}`, body);

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(ENGINES)('HTTP API resources [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let app: HttpApp;
  let alice: SubjectWithTokens;
  let sessionId: string;
  const internal: unknown[] = [];

  beforeAll(async () => {
    t = await openTestEngine(kind, { probes: { roots: [root.dir] } });
    engine = t.engine;
    app = createHttpApp({ engine, onInternalError: (err) => internal.push(err) });
    alice = await ownerWithTokens(engine, 'alice');
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers /healthz and /openapi.json without a token', async () => {
    expect(await call(app, 'GET', '/healthz', null)).toMatchObject({
      status: 200,
      json: { ok: true },
    });
    const doc = await call(app, 'GET', '/openapi.json', null);
    expect(doc.status).toBe(200);
    expect(doc.json.openapi).toBe('3.1.0');
    expect(Object.keys(doc.json.paths as object)).toContain('/v1/sessions/{sessionId}/turns');
  });

  it('creates, lists and reads sessions, a page at a time', async () => {
    const made = await call(app, 'POST', '/v1/sessions', alice.agent);
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ title: null, turnCount: 0 });
    expect(made.json.createdAt).toMatch(ISO);
    expect(made.json).not.toHaveProperty('subjectId');
    sessionId = made.json.id as string;

    const named = await call(app, 'POST', '/v1/sessions', alice.agent, {
      id: 'trip-planning',
      title: 'Trip',
    });
    expect(named).toMatchObject({ status: 201, json: { id: 'trip-planning', title: 'Trip' } });
    const again = await call(app, 'POST', '/v1/sessions', alice.agent, { id: 'trip-planning' });
    expect(again).toMatchObject({ status: 409, json: { error: { code: 'SESSION_EXISTS' } } });
    await call(app, 'POST', '/v1/sessions', alice.agent, {});

    const first = await call(app, 'GET', '/v1/sessions?limit=2', alice.reader);
    expect(first.status).toBe(200);
    expect(first.json.sessions).toHaveLength(2);
    expect(first.json.page).toEqual({ limit: 2, offset: 0, nextOffset: 2, truncated: false });
    const second = await call(app, 'GET', '/v1/sessions?limit=2&offset=2', alice.reader);
    expect(second.json.sessions).toHaveLength(1);
    expect((second.json.page as { nextOffset: unknown }).nextOffset).toBeNull();

    const one = await call(app, 'GET', `/v1/sessions/${sessionId}`, alice.reader);
    expect(one).toMatchObject({ status: 200, json: { id: sessionId } });
    const missing = await call(app, 'GET', '/v1/sessions/nope', alice.reader);
    expect(missing).toMatchObject({ status: 404, json: { error: { code: 'SESSION_NOT_FOUND' } } });
  });

  it('records turns with their receipts, and counts utility requests without recording them', async () => {
    const path = `/v1/sessions/${sessionId}/turns`;
    const user = await call(app, 'POST', path, alice.agent, {
      role: 'user',
      content: 'I fly to Lisbon on Friday.',
    });
    expect(user.status).toBe(200);
    expect(user.json).toMatchObject({
      recorded: true,
      turn: { seq: 1, role: 'user', receipt: null },
    });

    const tools = await call(app, 'POST', path, alice.agent, {
      role: 'assistant',
      content: 'Flights look on time.',
      receipt: { tools: ['search'], sources: ['https://example.org/flights'] },
    });
    expect(tools.json).toMatchObject({
      turn: {
        seq: 2,
        receipt: { kind: 'tools', tools: ['search'], sources: ['https://example.org/flights'] },
      },
    });
    const none = await call(app, 'POST', path, alice.agent, {
      role: 'assistant',
      content: 'Safe travels.',
      receipt: { noTools: true },
    });
    expect(none.json).toMatchObject({ turn: { seq: 3, receipt: { kind: 'none' } } });
    const unknown = await call(app, 'POST', path, alice.agent, {
      role: 'assistant',
      content: 'Ok.',
    });
    expect(unknown.json).toMatchObject({ turn: { seq: 4, receipt: { kind: 'unknown' } } });

    const conflict = await call(app, 'POST', path, alice.agent, {
      role: 'assistant',
      content: 'Both?',
      receipt: { tools: ['search'], noTools: true },
    });
    expect(conflict).toMatchObject({ status: 400, json: { error: { code: 'RECEIPT_CONFLICT' } } });

    const utility = await call(app, 'POST', path, alice.agent, {
      role: 'assistant',
      content: 'Lisbon trip',
      utility: true,
    });
    expect(utility.json).toMatchObject({ recorded: false, requests: 1 });
    const usage = await call(app, 'GET', `/v1/sessions/${sessionId}/usage`, alice.reader);
    expect(usage.json.usage).toEqual([
      expect.objectContaining({ requests: 1, firstAt: expect.stringMatching(ISO) }),
    ]);

    const response = await call(app, 'POST', `/v1/sessions/${sessionId}/responses`, alice.agent, {
      blocks: [
        { type: 'text', text: 'Checking the weather.' },
        { type: 'tool_use', id: 'tu_1', name: 'weather', input: { city: 'Lisbon' } },
        { type: 'text', text: 'Sunny.' },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      recorded: true,
      turn: {
        seq: 5,
        content: 'Checking the weather. Sunny.',
        receipt: { kind: 'tools', tools: ['weather'] },
      },
    });
  });

  it('reads history as JSON turns (paged by seq), as text with receipts, and as messages', async () => {
    const base = `/v1/sessions/${sessionId}`;
    const page1 = await call(app, 'GET', `${base}/turns?limit=2`, alice.reader);
    expect((page1.json.turns as Array<{ seq: number }>).map((x) => x.seq)).toEqual([1, 2]);
    expect(page1.json.nextAfterSeq).toBe(2);
    const page3 = await call(app, 'GET', `${base}/turns?afterSeq=4&limit=2`, alice.reader);
    expect((page3.json.turns as Array<{ seq: number }>).map((x) => x.seq)).toEqual([5]);
    expect(page3.json.nextAfterSeq).toBeNull();
    const last = await call(app, 'GET', `${base}/turns?last=1`, alice.reader);
    expect((last.json.turns as Array<{ seq: number }>).map((x) => x.seq)).toEqual([5]);

    const text = await call(app, 'GET', `${base}/history`, alice.reader);
    expect(text.json.text).toContain('#1 user');
    expect(text.json.text).toContain(
      '[[RECEIPT recorded by memledger, not written by the model: no tools ran',
    );
    expect(text.json.text).not.toContain('Lisbon trip');
    const budget = await call(app, 'GET', `${base}/history?budgetChars=200`, alice.reader);
    expect((budget.json.text as string).length).toBeLessThanOrEqual(200);

    const messages = await call(app, 'GET', `${base}/messages?last=2`, alice.reader);
    expect(messages.json.messages).toEqual([
      { role: 'assistant', content: 'Ok.' },
      expect.objectContaining({ role: 'system' }),
      { role: 'assistant', content: 'Checking the weather. Sunny.' },
      expect.objectContaining({ role: 'system' }),
    ]);
  });

  let factId: string;

  it('proposes: what passes waits in the pile, what fails is dropped with its code', async () => {
    const res = await call(app, 'POST', '/v1/proposals', alice.agent, {
      sessionId,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user flies to Lisbon on Friday.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I fly to Lisbon on Friday' },
        },
        {
          slot: 'what_i_know_about_user',
          text: 'The user flies to Rome.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I fly to Rome' },
        },
      ],
    });
    expect(res.status).toBe(200);
    const proposed = res.json.proposed as Array<{ id: string; status: string }>;
    expect(proposed).toHaveLength(1);
    expect(proposed[0]?.status).toBe('proposed');
    expect(res.json.dropped).toEqual([expect.objectContaining({ code: 'QUOTE_NOT_FOUND' })]);
    factId = proposed[0]?.id as string;

    const pile = await call(app, 'GET', '/v1/pile', alice.agent);
    expect(pile.json.pending).toEqual([
      expect.objectContaining({
        fact: expect.objectContaining({ id: factId, proposedBy: `agent:${alice.agentInfo.id}` }),
        citedTurn: expect.objectContaining({ seq: 1 }),
      }),
    ]);
    expect(await call(app, 'GET', '/v1/pile/count', alice.reader)).toMatchObject({
      status: 200,
      json: { count: 1 },
    });
    const dropped = await call(app, 'GET', '/v1/dropped?limit=10', alice.agent);
    expect(dropped.json.dropped).toEqual([
      expect.objectContaining({ code: 'QUOTE_NOT_FOUND', droppedAt: expect.stringMatching(ISO) }),
    ]);
  });

  it('shows live facts with their passports only once the owner approves', async () => {
    expect((await call(app, 'GET', '/v1/facts', alice.reader)).json.facts).toEqual([]);
    await engine
      .subject('alice')
      .owner.decide({ proposalId: factId as FactId, decision: 'approve', signer: alice.signer });

    const live = await call(app, 'GET', '/v1/facts', alice.reader);
    expect(live.json.integrity).toMatchObject({ ok: true });
    expect(live.json.facts).toEqual([
      expect.objectContaining({
        id: factId,
        origin: 'saw',
        status: 'active',
        attested: true,
        evidence: expect.objectContaining({ seq: 1, quote: 'I fly to Lisbon on Friday' }),
        recordedAt: expect.stringMatching(ISO),
      }),
    ]);
    const bySlot = await call(app, 'GET', '/v1/facts?slot=stances', alice.reader);
    expect(bySlot.json.facts).toEqual([]);
    const one = await call(app, 'GET', `/v1/facts/${factId}`, alice.reader);
    expect(one.json).toMatchObject({ id: factId, status: 'active' });
    expect(await call(app, 'GET', '/v1/facts/no-such-fact', alice.reader)).toMatchObject({
      status: 404,
      json: { error: { code: 'FACT_NOT_FOUND' } },
    });
    const integrity = await call(app, 'GET', '/v1/facts/integrity', alice.reader);
    // the server holds no anchor for alice: it says it trusted the store's own key
    expect(integrity.json).toMatchObject({
      ok: true,
      chain: { anchor: null, unanchored: true },
      warning: [UNANCHORED_LINE],
    });
    const slots = await call(app, 'GET', '/v1/slots', alice.reader);
    expect(slots.json.slots).toContainEqual(
      expect.objectContaining({
        name: 'what_i_know_about_user',
        rule: 'user_fact',
        autoLive: false,
      }),
    );
  });

  it('runs, logs and reads probes, and calibrates an instrument', async () => {
    const run = await call(app, 'POST', '/v1/probes/run', alice.agent, {
      spec: { kind: 'file', path: 'deploy.log', mode: 'contains', needle: 'deploy ok' },
      purpose: 'check',
    });
    expect(run.status).toBe(200);
    expect(run.json).toMatchObject({ verdict: 'verified', instrument: 'file', purpose: 'check' });
    const missing = await call(app, 'POST', '/v1/probes/run', alice.agent, {
      spec: { kind: 'file', path: 'deploy.log', mode: 'contains', needle: 'rollback' },
    });
    expect(missing.json).toMatchObject({ verdict: 'falsified' });

    const cal = await call(app, 'POST', '/v1/probes/calibrate', alice.agent, {
      instrument: 'file',
    });
    expect(cal.json.calibrations).toEqual([
      expect.objectContaining({
        instrument: 'file',
        passed: true,
        positive: 'verified',
        negative: 'falsified',
      }),
    ]);
    const log = await call(app, 'GET', '/v1/probes/log?kind=file&limit=1', alice.agent);
    expect(log.json.records).toHaveLength(1);
    expect(log.json.page).toMatchObject({ nextOffset: 1 });
    const one = await call(app, 'GET', `/v1/probes/${run.json.id as string}`, alice.agent);
    expect(one.json).toMatchObject({
      id: run.json.id,
      spec: { kind: 'file', needle: 'deploy ok' },
    });
    expect((await call(app, 'GET', '/v1/probes/nope', alice.agent)).json.error?.code).toBe(
      'PROBE_RECORD_NOT_FOUND',
    );
  });

  it('retracts a live fact, lists the ledger, and settles a due falsifier only by its probe', async () => {
    const retracted = await call(app, 'POST', '/v1/retractions', alice.agent, {
      claim: 'The user flies to Lisbon on Friday.',
      stoodOn: 'turn 1',
      whyWrong: 'the deploy log says otherwise',
      corrected: 'The deploy succeeded.',
      procedure: 'Read deploy.log',
      passObservation: 'deploy.log contains "deploy ok"',
      overturnCondition: 'deploy.log lacks "deploy ok"',
      dueDays: 0,
      factId,
      probe: {
        spec: { kind: 'file', path: 'deploy.log', mode: 'contains', needle: 'deploy ok' },
        standsIf: 'verified',
        overturnsIf: 'falsified',
      },
    });
    expect(retracted.status).toBe(201);
    expect(retracted.json).toMatchObject({
      verdict: 'unchecked',
      factId,
      dueAt: expect.stringMatching(ISO),
    });
    const id = retracted.json.id as string;
    // an agent token's retraction takes nothing down: the approved fact stays live, disputed
    const still = (await call(app, 'GET', '/v1/facts', alice.reader)).json.facts as Array<{
      id: string;
    }>;
    expect(still.map((f) => f.id)).toEqual([factId]);
    const arrival = await engine.subject('alice').arrival.assemble({ surface: 'dispute-check' });
    expect(arrival.text).toContain(`[disputed: retraction ${id} awaits the owner's signature]`);
    expect(arrival.text).not.toContain('The deploy succeeded.');
    // the owner signs it: now the fact leaves live memory
    await engine
      .subject('alice')
      .owner.retract({ retractionId: id as RetractionId, signer: alice.signer });
    expect((await call(app, 'GET', '/v1/facts', alice.reader)).json.facts).toEqual([]);

    const list = await call(app, 'GET', '/v1/retractions?verdict=unchecked', alice.reader);
    expect((list.json.retractions as Array<{ id: string }>).map((r) => r.id)).toEqual([id]);
    const due = await call(app, 'GET', '/v1/retractions/due', alice.reader);
    expect((due.json.retractions as Array<{ id: string }>).map((r) => r.id)).toEqual([id]);
    expect((await call(app, 'GET', `/v1/retractions/${id}`, alice.reader)).json.id).toBe(id);

    const byVerdict = await call(app, 'POST', `/v1/retractions/${id}/settle`, alice.agent, {
      verdict: 'overturned',
      outcome: 'I say so',
    });
    expect(byVerdict).toMatchObject({ status: 400, json: { error: { code: 'INVALID_ARGUMENT' } } });
    const settled = await call(app, 'POST', `/v1/retractions/${id}/settle`, alice.agent, {
      runProbe: true,
    });
    expect(settled.status).toBe(200);
    expect(settled.json).toMatchObject({ verdict: 'stands', settledBy: 'probe' });
    const twice = await call(app, 'POST', `/v1/retractions/${id}/settle`, alice.agent, {
      runProbe: true,
    });
    expect(twice).toMatchObject({ status: 409, json: { error: { code: 'ALREADY_SETTLED' } } });
  });

  it('assembles arrivals and diffs them', async () => {
    await engine
      .subject('alice')
      .tools.register({ name: 'search', description: 'web', surfaces: ['chat'] });
    const first = await call(app, 'POST', '/v1/arrival', alice.reader, {
      surface: 'chat',
      sessionId,
    });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ surface: 'chat', sessionId, tools: ['search'] });
    expect((first.json.blocks as unknown[]).length).toBeGreaterThan(0);
    await engine
      .subject('alice')
      .tools.register({ name: 'mail', description: 'mail', surfaces: ['chat'] });
    await call(app, 'POST', '/v1/arrival', alice.reader, { surface: 'chat' });
    const diff = await call(app, 'GET', '/v1/arrival/diff?surface=chat', alice.reader);
    expect(diff.json).toMatchObject({ from: first.json.manifestId, tools: { added: ['mail'] } });
    const byId = await call(
      app,
      'GET',
      `/v1/arrival/diff?manifestId=${first.json.manifestId as string}`,
      alice.reader,
    );
    expect(byId.json).toMatchObject({ to: first.json.manifestId, from: null });
    const both = await call(app, 'GET', `/v1/arrival/diff?surface=chat&manifestId=x`, alice.reader);
    expect(both).toMatchObject({ status: 400, json: { error: { code: 'INVALID_ARGUMENT' } } });
    const none = await call(app, 'GET', '/v1/arrival/diff?surface=wake', alice.reader);
    expect(none).toMatchObject({ status: 404, json: { error: { code: 'MANIFEST_NOT_FOUND' } } });

    const tools = await call(app, 'GET', '/v1/tools?surface=chat', alice.reader);
    expect((tools.json.tools as Array<{ name: string }>).map((x) => x.name).sort()).toEqual([
      'mail',
      'search',
    ]);
    expect((await call(app, 'GET', '/v1/tools?surface=wake', alice.reader)).json.tools).toEqual([]);
  });

  it('records commitments and actions', async () => {
    const made = await call(app, 'POST', '/v1/commitments', alice.agent, {
      title: 'Send the packing list',
      due: '2026-12-04',
    });
    expect(made).toMatchObject({ status: 201, json: { status: 'open', due: '2026-12-04' } });
    const id = made.json.id as string;
    const open = await call(app, 'GET', '/v1/commitments?status=open', alice.reader);
    expect((open.json.commitments as Array<{ id: string }>).map((x) => x.id)).toEqual([id]);
    const done = await call(app, 'POST', `/v1/commitments/${id}/done`, alice.agent);
    expect(done.json).toMatchObject({ id, status: 'done' });
    const again = await call(app, 'POST', `/v1/commitments/${id}/drop`, alice.agent, {});
    expect(again).toMatchObject({ status: 409, json: { error: { code: 'COMMITMENT_NOT_OPEN' } } });
    const missing = await call(app, 'POST', '/v1/commitments/nope/done', alice.agent);
    expect(missing).toMatchObject({
      status: 404,
      json: { error: { code: 'COMMITMENT_NOT_FOUND' } },
    });

    const action = await call(app, 'POST', '/v1/actions', alice.agent, {
      tool: 'search',
      surface: 'chat',
      target: 'Lisbon weather',
    });
    expect(action).toMatchObject({ status: 201, json: { status: 'confirmed', tool: 'search' } });
    expect(action.json.completedAt).toMatch(ISO);
  });

  it('recalls turns and facts with passports, and reads only', async () => {
    const res = await call(app, 'GET', '/v1/recall?q=Lisbon%20Friday&k=5&kinds=turn', alice.reader);
    expect(res.status).toBe(200);
    const items = res.json.items as Array<{ kind: string; passport: { origin: string } }>;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((i) => i.kind === 'turn' && i.passport.origin === 'turn')).toBe(true);
    const bad = await call(app, 'GET', '/v1/recall?q=x&kinds=turn,secret', alice.reader);
    expect(bad).toMatchObject({ status: 400, json: { error: { code: 'INVALID_ARGUMENT' } } });
  });

  it('answers unknown routes and methods with ROUTE_NOT_FOUND', async () => {
    expect(await call(app, 'GET', '/v1/nothing', alice.agent)).toMatchObject({
      status: 404,
      json: { error: { code: 'ROUTE_NOT_FOUND' } },
    });
    expect(
      (await call(app, 'DELETE', `/v1/sessions/${sessionId}`, alice.agent)).json.error?.code,
    ).toBe('ROUTE_NOT_FOUND');
  });

  it('never shows the message of an error that is not an EngineError', async () => {
    const probe = createHttpApp({ engine, onInternalError: (err) => internal.push(err) });
    probe.get('/boom', () => {
      throw new Error('SELECT secret FROM owner_keys at /srv/memledger/x.ts:12');
    });
    const res = await call(probe, 'GET', '/boom', null);
    expect(res).toMatchObject({ status: 500, json: { error: { code: 'INTERNAL' } } });
    expect(JSON.stringify(res.json)).not.toMatch(/SELECT|owner_keys|srv|\.ts/);
    expect(internal).toHaveLength(1);
  });
});

describe('HTTP API edges', () => {
  it('pages a list the face holds whole, and one the engine pages, past its 1,000th item too', async () => {
    const all = Array.from({ length: 5 }, (_, i) => i);
    expect(pageOf(all, { limit: 2, offset: 2 })).toEqual({
      items: [2, 3],
      page: { limit: 2, offset: 2, nextOffset: 4, truncated: false },
    });
    expect(pageOf(all, { limit: 2, offset: 4 }).page.nextOffset).toBeNull();
    expect(pageOf(all, { offset: 9 }).items).toEqual([]);
    // the engine's side: asked one more than the page, at the page's offset
    const store = Array.from({ length: 1_250 }, (_, i) => i);
    const asked: Array<{ limit: number; offset: number }> = [];
    const list = async (p: { limit: number; offset: number }) => {
      asked.push(p);
      return store.slice(p.offset, p.offset + p.limit);
    };
    expect(await enginePage({ limit: 50, offset: 100 }, list)).toEqual({
      items: store.slice(100, 150),
      page: { limit: 50, offset: 100, nextOffset: 150, truncated: false },
    });
    expect(asked).toEqual([{ limit: 51, offset: 100 }]);
    const deep = await enginePage({ limit: 200, offset: 1_000 }, list);
    expect(deep.items).toEqual(store.slice(1_000, 1_200));
    expect(deep.page.nextOffset).toBe(1_200);
    const last = await enginePage({ limit: 200, offset: 1_200 }, list);
    expect(last.items).toHaveLength(50);
    expect(last.page).toEqual({ limit: 200, offset: 1_200, nextOffset: null, truncated: false });
  });

  it('answers 503 ENGINE_CLOSED, without the engine’s message, once the engine is closed', async () => {
    const t = await openTestEngine('pglite');
    const seen: unknown[] = [];
    const app = createHttpApp({ engine: t.engine, onInternalError: (err) => seen.push(err) });
    const { agent } = await ownerWithTokens(t.engine, 'carol');
    await t.close();
    const res = await call(app, 'GET', '/v1/sessions', agent);
    expect(res).toMatchObject({
      status: 503,
      json: { error: { code: 'ENGINE_CLOSED', message: 'the server is shutting down' } },
    });
    expect(seen).toHaveLength(1);
  });
});
