import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, type Engine } from '../src/index.js';
import { SERVER_ERROR_CODES } from '../server/server-errors.js';
import { createHttpApp, type HttpApp } from '../server/http/app.js';
import { dumpStore } from './support/dump-store.js';
import { unstorable } from './support/bad-input-arbitraries.js';
import { ONE_ENGINE, openTestEngine, type TestEngine } from './support/engines.js';
import { ownerWithTokens } from './support/tokens.js';

type Json = Record<string, unknown> & { error?: { code: string; message: string } };

/** A raw request: the body is sent exactly as given. */
async function raw(
  app: HttpApp,
  method: string,
  path: string,
  token: string,
  body?: string | Uint8Array | ReadableStream<Uint8Array>,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; json: Json }> {
  const init: RequestInit & { duplex?: 'half' } = {
    method,
    headers: { authorization: `Bearer ${token}`, ...headers },
  };
  if (body !== undefined) init.body = body;
  if (body instanceof ReadableStream) init.duplex = 'half';
  const res = await app.request(path, init);
  const text = await res.text();
  let json: Json;
  try {
    json = JSON.parse(text) as Json;
  } catch {
    json = { unparsed: text };
  }
  return { status: res.status, json };
}

/** A refusal as the API makes them: a 4xx with a documented code and a message. */
function expectRefused(res: { status: number; json: Json }, code?: string, what = ''): void {
  expect(res.status, `${what} ${JSON.stringify(res.json).slice(0, 300)}`).toBeGreaterThanOrEqual(
    400,
  );
  expect(res.status, what).toBeLessThan(500);
  expect([...ERROR_CODES, ...SERVER_ERROR_CODES] as readonly string[]).toContain(
    res.json.error?.code,
  );
  expect(typeof res.json.error?.message).toBe('string');
  if (code !== undefined) expect(res.json.error?.code, what).toBe(code);
}

describe.each(ONE_ENGINE)('HTTP bad input [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let app: HttpApp;
  let small: HttpApp;
  let agent: string;
  let sessionId: string;
  let retractionId: string;
  let before: Record<string, string>;

  /** A valid body per write route: the base every malformed variant is made from. */
  const valid = (): Array<{ path: string; body: Record<string, unknown>; blocks?: true }> => [
    { path: '/v1/sessions', body: { title: 'Planning' } },
    {
      path: `/v1/sessions/${sessionId}/turns`,
      body: { role: 'user', content: 'hello', corrective: false },
    },
    {
      path: `/v1/sessions/${sessionId}/turns`,
      body: {
        role: 'assistant',
        content: 'ok',
        receipt: { tools: ['search'], sources: ['https://x.org'] },
      },
    },
    {
      path: `/v1/sessions/${sessionId}/responses`,
      body: {
        blocks: [
          { type: 'text', text: 'hi' },
          { type: 'tool_use', name: 'search', input: { q: 'x' } },
        ],
      },
      blocks: true,
    },
    {
      path: '/v1/proposals',
      body: {
        sessionId,
        proposals: [
          {
            slot: 'stances',
            text: 'The user likes tea.',
            origin: 'saw',
            evidence: { turn: 1, quote: 'I like tea' },
          },
        ],
      },
    },
    {
      path: '/v1/retractions',
      body: {
        claim: 'a',
        stoodOn: 'b',
        whyWrong: 'c',
        corrected: 'd',
        procedure: 'e',
        passObservation: 'f is there',
        overturnCondition: 'f is gone',
        dueDays: 3,
        tags: ['t'],
        probe: {
          spec: { kind: 'file', path: 'x.log', mode: 'exists' },
          standsIf: 'verified',
          overturnsIf: 'falsified',
        },
      },
    },
    {
      path: '/v1/probes/run',
      body: { spec: { kind: 'file', path: 'x.log', mode: 'exists' }, purpose: 'p' },
    },
    { path: '/v1/probes/calibrate', body: { instrument: 'file' } },
    { path: '/v1/arrival', body: { surface: 'chat', sessionId } },
    { path: '/v1/commitments', body: { title: 'Call back', due: '2026-12-04' } },
    {
      path: '/v1/actions',
      body: { tool: 'search', surface: 'chat', target: 'weather', status: 'confirmed' },
    },
    { path: `/v1/retractions/${retractionId}/settle`, body: { runProbe: true } },
    { path: '/v1/summaries', body: { aspect: 'life_lately', sessionId } },
  ];

  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
    app = createHttpApp({ engine });
    small = createHttpApp({ engine, bodyLimitBytes: 1024 });
    const tokens = await ownerWithTokens(engine, 'alice');
    agent = tokens.agent;
    const me = engine.subject('alice');
    sessionId = (await me.sessions.create()).id;
    await me.turns.add({ sessionId, role: 'user', content: 'I like tea' });
    retractionId = (
      await me.ledger.retract({
        claim: 'x',
        stoodOn: 'y',
        whyWrong: 'z',
        corrected: 'w',
        procedure: 'v',
        passObservation: 'it holds',
        overturnCondition: 'it fails',
      })
    ).id;
    // the control: the small app takes a small body
    const ok = await raw(
      small,
      'POST',
      `/v1/sessions/${sessionId}/turns`,
      agent,
      JSON.stringify({ role: 'user', content: 'short' }),
    );
    expect(ok.status).toBe(200);
    before = await dumpStore(engine);
  });
  afterAll(() => t.close());

  it('refuses malformed JSON, other media types and bytes that are not UTF-8 with INVALID_JSON', async () => {
    const path = `/v1/sessions/${sessionId}/turns`;
    for (const body of [
      '{',
      '{"role":',
      "{'role':'user'}",
      '{"role":"user",}',
      'nul',
      '',
      '\uFEFF',
      '{"a":1}{',
    ]) {
      expectRefused(
        await raw(app, 'POST', path, agent, body),
        'INVALID_JSON',
        JSON.stringify(body),
      );
    }
    const json = JSON.stringify({ role: 'user', content: 'hello' });
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
      'multipart/form-data',
    ]) {
      expectRefused(
        await raw(app, 'POST', path, agent, json, { 'content-type': type }),
        'INVALID_JSON',
        type,
      );
    }
    expectRefused(await raw(app, 'POST', path, agent, json, {}), 'INVALID_JSON', 'no content type');
    const latin1 = new Uint8Array([
      ...new TextEncoder().encode('{"role":"user","content":"caf'),
      0xe9,
      0x22,
      0x7d,
    ]);
    expectRefused(await raw(app, 'POST', path, agent, latin1), 'INVALID_JSON', 'latin-1 bytes');
    const rawNul = new Uint8Array([
      ...new TextEncoder().encode('{"role":"user","content":"a'),
      0,
      0x22,
      0x7d,
    ]);
    expectRefused(await raw(app, 'POST', path, agent, rawNul), 'INVALID_JSON', 'a raw NUL byte');
    // valid JSON of the wrong shape is a schema failure, not a parse failure
    for (const body of ['[]', 'null', '"user"', '42', 'true']) {
      expectRefused(await raw(app, 'POST', path, agent, body), 'INVALID_ARGUMENT', body);
    }
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('refuses bodies over the limit with 413 BODY_TOO_LARGE, declared or streamed', async () => {
    const path = `/v1/sessions/${sessionId}/turns`;
    const big = JSON.stringify({ role: 'user', content: 'x'.repeat(2_000) });
    expectRefused(await raw(small, 'POST', path, agent, big), 'BODY_TOO_LARGE');
    expectRefused(
      await raw(small, 'POST', path, agent, big, {
        'content-type': 'application/json',
        'content-length': String(big.length),
      }),
      'BODY_TOO_LARGE',
    );
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 4; i++)
          controller.enqueue(new TextEncoder().encode(big.slice(i * 600, (i + 1) * 600)));
        controller.close();
      },
    });
    expectRefused(await raw(small, 'POST', path, agent, stream), 'BODY_TOO_LARGE', 'streamed');
    const huge = JSON.stringify({ role: 'user', content: 'y'.repeat(1024 * 1024) });
    const res = await raw(app, 'POST', path, agent, huge);
    expectRefused(res, 'BODY_TOO_LARGE', 'over the default 1 MiB');
    expect(res.status).toBe(413);
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('refuses unknown fields, at the top, nested, and in the query string', async () => {
    for (const { path, body, blocks } of valid()) {
      expectRefused(
        await raw(app, 'POST', path, agent, JSON.stringify({ ...body, extra: 1 })),
        'INVALID_ARGUMENT',
        path,
      );
      expectRefused(
        await raw(app, 'POST', path, agent, JSON.stringify({ ...body, subject: 'bob' })),
        'INVALID_ARGUMENT',
        path,
      );
      if (blocks === undefined) {
        const proto = JSON.stringify(body).replace(/^\{/, '{"__proto__":{"role":"system"},');
        expectRefused(
          await raw(app, 'POST', path, agent, proto),
          'INVALID_ARGUMENT',
          `${path} __proto__`,
        );
      }
    }
    const turns = `/v1/sessions/${sessionId}/turns`;
    const nested = [
      { role: 'assistant', content: 'x', receipt: { tools: ['a'], signedBy: 'owner' } },
      { role: 'assistant', content: 'x', receipt: { noTools: true, kind: 'none' } },
    ];
    for (const body of nested)
      expectRefused(await raw(app, 'POST', turns, agent, JSON.stringify(body)), 'INVALID_ARGUMENT');
    const proposal = {
      slot: 'stances',
      text: 't',
      origin: 'saw',
      evidence: { turn: 1, quote: 'I like tea', signed: true },
    };
    expectRefused(
      await raw(
        app,
        'POST',
        '/v1/proposals',
        agent,
        JSON.stringify({ sessionId, proposals: [proposal] }),
      ),
      'INVALID_ARGUMENT',
    );
    const spec = { spec: { kind: 'file', path: 'x', mode: 'exists', root: '/' } };
    expectRefused(
      await raw(app, 'POST', '/v1/probes/run', agent, JSON.stringify(spec)),
      'INVALID_ARGUMENT',
    );
    for (const path of [
      '/v1/sessions?subject=bob',
      '/v1/facts?status=proposed',
      '/v1/pile/count?all=1',
      '/v1/recall?q=x&params=1',
    ]) {
      expectRefused(await raw(app, 'GET', path, agent), 'INVALID_ARGUMENT', path);
    }
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('refuses wrong types, out-of-range numbers and malformed ids in bodies, queries and paths', async () => {
    const turns = `/v1/sessions/${sessionId}/turns`;
    const bodies: unknown[] = [
      { role: 5, content: 'x' },
      { role: 'owner', content: 'x' },
      { role: 'user', content: ['x'] },
      { role: 'user', content: 'x', utility: 'yes' },
      { role: 'assistant', content: 'x', receipt: 'tools' },
      { role: 'assistant', content: 'x', receipt: { tools: 'search' } },
      { role: 'user', content: 'x', at: 'yesterday' },
      { role: 'user', content: 'x', at: '+275760-09-13T00:00:00.000Z' },
      { role: 'user', content: 'x'.repeat(1_000_001) },
    ];
    for (const body of bodies)
      expectRefused(
        await raw(app, 'POST', turns, agent, JSON.stringify(body)),
        undefined,
        JSON.stringify(body).slice(0, 80),
      );
    const proposals = [
      { turn: 2 ** 31 },
      { turn: 0 },
      { turn: -1 },
      { turn: 1.5 },
      { turn: '1' },
    ].map((evidence) => ({
      sessionId,
      proposals: [{ slot: 'stances', text: 't', origin: 'saw', evidence }],
    }));
    for (const body of [
      ...proposals,
      { sessionId, proposals: [] },
      { sessionId: 'a/b', proposals: [] },
    ]) {
      expectRefused(
        await raw(app, 'POST', '/v1/proposals', agent, JSON.stringify(body)),
        'INVALID_ARGUMENT',
        JSON.stringify(body),
      );
    }
    expectRefused(
      await raw(app, 'POST', '/v1/retractions', agent, '{"claim":"a","dueDays":1e400}'),
      'INVALID_ARGUMENT',
    );
    expectRefused(
      await raw(
        app,
        'POST',
        '/v1/commitments',
        agent,
        JSON.stringify({ title: 'x', due: '2026-13-45T00' }),
      ),
      'INVALID_ARGUMENT',
    );
    const queries = [
      '/v1/sessions?limit=0',
      '/v1/sessions?limit=-1',
      '/v1/sessions?limit=201',
      '/v1/sessions?limit=abc',
      '/v1/sessions?limit=1e2',
      '/v1/sessions?limit=99999999999',
      '/v1/sessions?limit=',
      '/v1/sessions?limit=1&limit=2',
      '/v1/sessions?offset=-5',
      '/v1/sessions?offset=0x10',
      `/v1/sessions/${sessionId}/turns?afterSeq=1.5`,
      `/v1/sessions/${sessionId}/history?budgetChars=0`,
      '/v1/recall?q=',
      '/v1/recall?q=x&k=201',
      '/v1/recall?q=x&kinds=',
      '/v1/recall?q=x&includeHistory=yes',
      '/v1/retractions?verdict=maybe',
      '/v1/probes/log?kind=shell',
      '/v1/arrival/diff',
      '/v1/arrival/diff?surface=Chat%20Room',
      '/v1/tools?surface=' + 'a'.repeat(100),
    ];
    for (const path of queries)
      expectRefused(await raw(app, 'GET', path, agent), 'INVALID_ARGUMENT', path);
    const paths = [
      '/v1/sessions/a%2Fb',
      '/v1/sessions/..%2F..%2Fetc',
      `/v1/sessions/${'a'.repeat(200)}`,
      '/v1/sessions/%00',
      '/v1/sessions/-leading-dash',
      '/v1/facts/a%20b',
      '/v1/probes/%E2%80%8B',
      '/v1/retractions/x%0Ay',
    ];
    for (const path of paths)
      expectRefused(await raw(app, 'GET', path, agent), 'INVALID_ARGUMENT', path);
    expectRefused(await raw(app, 'POST', '/v1/commitments/%00/done', agent), 'INVALID_ARGUMENT');
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('refuses NUL characters and lone surrogates in any string, escaped or in the query', async () => {
    const turns = `/v1/sessions/${sessionId}/turns`;
    const bodies: Array<[string, string]> = [
      [turns, '{"role":"user","content":"a\\u0000b"}'],
      [turns, '{"role":"user","content":"a\\ud800b"}'],
      [turns, '{"role":"assistant","content":"ok","receipt":{"tools":["se\\u0000arch"]}}'],
      [turns, '{"role":"user","content":"ok","speaker":"\\udfff"}'],
      ['/v1/sessions', '{"title":"a\\u0000"}'],
      [`/v1/sessions/${sessionId}/responses`, '{"blocks":[{"type":"text","text":"a\\u0000"}]}'],
      [
        `/v1/sessions/${sessionId}/responses`,
        '{"blocks":[{"type":"tool_use","input":{"deep":["\\u0000"]}}]}',
      ],
      [
        `/v1/sessions/${sessionId}/responses`,
        '{"blocks":[{"type":"tool_use","input":{"k\\u0000":1}}]}',
      ],
      [
        '/v1/proposals',
        `{"sessionId":"${sessionId}","proposals":[{"slot":"stances","text":"tea\\u0000","origin":"saw"}]}`,
      ],
      ['/v1/commitments', '{"title":"\\ud83d"}'],
      ['/v1/probes/run', '{"spec":{"kind":"file","path":"a\\u0000b","mode":"exists"}}'],
    ];
    for (const [path, body] of bodies)
      expectRefused(await raw(app, 'POST', path, agent, body), 'INVALID_ARGUMENT', body);
    const deep = `{"blocks":[{"type":"tool_use","input":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}`;
    expectRefused(
      await raw(app, 'POST', `/v1/sessions/${sessionId}/responses`, agent, deep),
      'INVALID_ARGUMENT',
      'deep',
    );
    for (const path of ['/v1/recall?q=a%00b', '/v1/facts?slot=%00', '/v1/recall?q=%ED%A0%80']) {
      expectRefused(await raw(app, 'GET', path, agent), 'INVALID_ARGUMENT', path);
    }
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('refuses any one-field corruption of a valid body, on every write route (property)', async () => {
    const leaves = (
      value: unknown,
      path: Array<string | number> = [],
    ): Array<Array<string | number>> => {
      if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]));
      if (typeof value === 'object' && value !== null) {
        return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
      }
      return [path];
    };
    const set = (root: unknown, path: Array<string | number>, to: unknown): unknown => {
      const copy = structuredClone(root) as Record<string | number, unknown>;
      let node = copy;
      for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
      node[path[path.length - 1] as string | number] = to;
      return copy;
    };
    const wrongType = fc.oneof(
      fc.integer(),
      fc.constant(null),
      fc.boolean().map((b) => [b]),
      fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
    );
    const cases = valid();
    const arb = fc
      .nat(cases.length - 1)
      .chain((i) => {
        const c = cases[i] as (typeof cases)[number];
        const paths = leaves(c.body).filter(
          (p) => c.blocks === undefined || p.at(-1) === 'type' || p.length > 2,
        );
        return fc.constantFrom(...paths).chain((path) => {
          // a value of the leaf's own type may be valid (an integer for `turn: 1` can be 1)
          const leaf = typeof path.reduce<unknown>(
            (node, key) => (node as Record<string | number, unknown>)[key],
            c.body,
          );
          const other = wrongType.filter((v) => typeof v !== leaf);
          return fc.tuple(
            fc.constant(c),
            fc.constant(path),
            c.blocks === undefined ? fc.oneof(unstorable, other) : unstorable,
          );
        });
      })
      .map(([c, path, to]) => ({
        path: c.path,
        body: set(c.body, path, to),
        where: path.join('.'),
      }));
    await fc.assert(
      fc.asyncProperty(arb, async ({ path, body, where }) => {
        const res = await raw(app, 'POST', path, agent, JSON.stringify(body));
        expectRefused(res, 'INVALID_ARGUMENT', `${path} ${where}`);
      }),
      { numRuns: 40 },
    );
    expect(await dumpStore(engine)).toEqual(before);
  });
});
