import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  REFUSAL_TEXT,
  startFakeLlm,
  type FakeLlm,
  type FakeLlmConfig,
  type FakeStep,
} from '../eval/fake-llm/fake-llm-server.js';
import { EngineError } from '../src/index.js';
import {
  MAX_ANSWER_BYTES,
  retryAfterMs,
  type LlmOptions,
  type LlmProvider,
  type StructuredRequest,
} from '../src/reflection/llm-client.js';
import { ANTHROPIC_VERSION, createLlmClient } from '../src/reflection/llm-providers.js';

const PROTOCOLS = ['openai', 'anthropic'] as const satisfies readonly LlmProvider[];
const KEY = 'sk-test-0b7d9e4f2a61';
const MODEL = 'fake-model-1';
/** A per-test limit well under any wait a broken retry policy would sit through. */
const FAST = 5_000;

const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['proposals'],
  properties: {
    proposals: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['slot', 'text'],
        properties: { slot: { type: 'string' }, text: { type: 'string' } },
      },
    },
  },
} as const;

const REQUEST: StructuredRequest = {
  name: 'propose_memories',
  description: 'Propose memories from the session.',
  schema: SCHEMA,
  system: 'You propose memories; every one quotes a user turn.',
  user: [
    '<turns>',
    JSON.stringify({ turn: 1, role: 'user', text: 'I live in Lisbon.' }),
    '</turns>',
    '<slots>',
    JSON.stringify({ slot: 'facts', rule: 'user_fact' }),
    '</slots>',
  ].join('\n'),
  maxTokens: 321,
};

const ANSWER = { proposals: [{ slot: 'facts', text: 'The user lives in Lisbon.' }] };

/** Every fake a test starts, closed after it. */
const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function fake(
  protocol: LlmProvider,
  script: FakeStep[] = [],
  extra: Partial<FakeLlmConfig> = {},
) {
  const f = await startFakeLlm({ protocol, script, apiKey: KEY, model: MODEL, ...extra });
  running.push(f);
  return f;
}

function clientFor(f: FakeLlm, provider: LlmProvider, options: Partial<LlmOptions> = {}) {
  return createLlmClient({
    provider,
    baseUrl: f.url,
    model: MODEL,
    apiKey: KEY,
    timeoutMs: 2_000,
    retries: 2,
    retryDelayMs: 1,
    ...options,
  });
}

/** The EngineError a call fails with; success fails the test. */
async function failure(promise: Promise<unknown>): Promise<EngineError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
  throw new Error('expected an EngineError, got success');
}

function thrown(fn: () => unknown): EngineError {
  try {
    fn();
  } catch (err) {
    if (err instanceof EngineError) return err;
    throw err;
  }
  throw new Error('expected an EngineError, got none');
}

/** A plain node:http server answering every request with `reply`, for bodies the fake never sends. */
async function rawServer(
  reply: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; hits: () => number; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    req.resume();
    req.on('end', () => reply(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, hits: () => paths.length, paths };
}

const sendJson = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** The fake's token estimate: a quarter of the characters, rounded up. */
const tokens = (chars: number) => Math.ceil(chars / 4);

describe.each(PROTOCOLS)('LLM client over the %s protocol', (provider) => {
  const endpoint = provider === 'openai' ? '/v1/chat/completions' : '/v1/messages';

  it('returns the structured value, the model and the token counts', async () => {
    const f = await fake(provider, [{ answer: ANSWER }]);
    const answer = await clientFor(f, provider).generate(REQUEST);
    expect(answer).toEqual({
      value: ANSWER,
      model: MODEL,
      usage: {
        inputTokens: tokens(REQUEST.system.length + REQUEST.user.length),
        outputTokens: tokens(JSON.stringify(ANSWER).length),
      },
    });
    expect(f.requests).toHaveLength(1);
  });

  it('sends the right path, auth header and schema, and the key only in its header', async () => {
    const f = await fake(provider, [{ answer: ANSWER }]);
    const client = clientFor(f, provider);
    await client.generate(REQUEST);
    const [req] = f.requests;
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe(endpoint);
    expect(req?.headers['content-type']).toBe('application/json');
    const body = req?.body as Record<string, unknown>;
    if (provider === 'openai') {
      expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(req?.headers['x-api-key']).toBeUndefined();
      expect(body).toMatchObject({
        model: MODEL,
        messages: [
          { role: 'system', content: REQUEST.system },
          { role: 'user', content: REQUEST.user },
        ],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: REQUEST.name,
            description: REQUEST.description,
            schema: SCHEMA,
            strict: true,
          },
        },
        max_tokens: 321,
      });
    } else {
      expect(req?.headers['x-api-key']).toBe(KEY);
      expect(req?.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
      expect(req?.headers.authorization).toBeUndefined();
      expect(body).toMatchObject({
        model: MODEL,
        system: REQUEST.system,
        messages: [{ role: 'user', content: REQUEST.user }],
        tools: [{ name: REQUEST.name, description: REQUEST.description, input_schema: SCHEMA }],
        tool_choice: { type: 'tool', name: REQUEST.name },
        max_tokens: 321,
      });
    }
    const keyHeader = provider === 'openai' ? 'authorization' : 'x-api-key';
    const elsewhere = Object.entries(req?.headers ?? {}).filter(([name]) => name !== keyHeader);
    expect(elsewhere.filter(([, value]) => value.includes(KEY))).toEqual([]);
    expect(req?.raw).not.toContain(KEY);
    expect(req?.path).not.toContain(KEY);
    expect(client.url).not.toContain(KEY);
  });

  it('defaults max_tokens to 4096 when the request names none', async () => {
    const f = await fake(provider, [{ answer: ANSWER }]);
    const request: StructuredRequest = { ...REQUEST };
    delete request.maxTokens;
    await clientFor(f, provider).generate(request);
    expect((f.requests[0]?.body as Record<string, unknown>).max_tokens).toBe(4096);
  });

  it('answers the scripted model through the fake when no step is queued', async () => {
    const f = await fake(provider);
    const answer = await clientFor(f, provider).generate(REQUEST);
    expect(answer.value).toMatchObject({
      proposals: expect.arrayContaining([
        expect.objectContaining({ slot: 'facts', text: 'The user lives in Lisbon.' }),
      ]),
    });
  });

  it('reports the model the server names, and falls back to its own when none is named', async () => {
    let named: string | null = 'served-model-2025-01-01';
    const server = await rawServer((_req, res) => {
      const model = named === null ? {} : { model: named };
      sendJson(
        res,
        200,
        provider === 'openai'
          ? {
              ...model,
              choices: [{ message: { content: JSON.stringify(ANSWER) }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 11, completion_tokens: 7 },
            }
          : {
              ...model,
              content: [{ type: 'tool_use', name: REQUEST.name, input: ANSWER }],
              stop_reason: 'tool_use',
              usage: { input_tokens: 11, output_tokens: 7 },
            },
      );
    });
    const client = createLlmClient({ provider, baseUrl: server.url, model: MODEL, retries: 0 });
    expect(await client.generate(REQUEST)).toEqual({
      value: ANSWER,
      model: 'served-model-2025-01-01',
      usage: { inputTokens: 11, outputTokens: 7 },
    });
    named = null;
    expect((await client.generate(REQUEST)).model).toBe(MODEL);
  });

  it('counts odd usage fields as 0 tokens', async () => {
    const server = await rawServer((_req, res) =>
      sendJson(
        res,
        200,
        provider === 'openai'
          ? {
              choices: [{ message: { content: JSON.stringify(ANSWER) }, finish_reason: 'stop' }],
              usage: { prompt_tokens: -3, completion_tokens: '7' },
            }
          : {
              content: [{ type: 'tool_use', name: REQUEST.name, input: ANSWER }],
              usage: { input_tokens: 1.5 },
            },
      ),
    );
    const client = createLlmClient({ provider, baseUrl: server.url, model: MODEL, retries: 0 });
    expect((await client.generate(REQUEST)).usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('a wrong key is the provider’s 401, not retried', async () => {
    const f = await fake(provider, [{ answer: ANSWER }]);
    const err = await failure(clientFor(f, provider, { apiKey: 'sk-wrong' }).generate(REQUEST));
    expect(err.code).toBe('LLM_FAILED');
    expect(err.data).toEqual({ provider, reason: 'http', status: 401 });
    expect(err.message).toContain(
      provider === 'openai' ? 'Incorrect API key provided' : 'invalid x-api-key',
    );
    expect(f.requests).toHaveLength(1);
  });

  it('a model the provider does not serve is its 404, with its message', async () => {
    const f = await fake(provider);
    const err = await failure(clientFor(f, provider, { model: 'no-such-model' }).generate(REQUEST));
    expect(err.data).toEqual({ provider, reason: 'http', status: 404 });
    expect(err.message).toContain('no-such-model');
    expect(f.requests).toHaveLength(1);
  });

  describe('retries', () => {
    it(
      'honours retry-after: 0 on a 429 (far shorter than retryDelayMs) and succeeds',
      async () => {
        const f = await fake(provider, [
          { status: 429, headers: { 'retry-after': '0' } },
          { answer: ANSWER },
        ]);
        // were Retry-After ignored, the 60 s retryDelayMs would outlast the test's limit
        const answer = await clientFor(f, provider, {
          retryDelayMs: 60_000,
          maxRetryDelayMs: 60_000,
        }).generate(REQUEST);
        expect(answer.value).toEqual(ANSWER);
        expect(f.requests).toHaveLength(2);
      },
      FAST,
    );

    const transient = [
      408,
      409,
      425,
      500,
      502,
      503,
      504,
      ...(provider === 'anthropic' ? [529] : []),
    ];
    it.each(transient)('retries a %i, then succeeds', async (status) => {
      const f = await fake(provider, [{ status }, { answer: ANSWER }]);
      const answer = await clientFor(f, provider).generate(REQUEST);
      expect(answer.value).toEqual(ANSWER);
      expect(f.requests).toHaveLength(2);
    });

    it('gives up after retries + 1 attempts with the provider’s message and status', async () => {
      // a fourth attempt would succeed: a client that retried once too often passes no check here
      const f = await fake(provider, [
        { status: 500 },
        { status: 500 },
        { status: 500 },
        { answer: ANSWER },
      ]);
      const err = await failure(clientFor(f, provider, { retries: 2 }).generate(REQUEST));
      expect(err.code).toBe('LLM_FAILED');
      expect(err.data).toEqual({ provider, reason: 'http', status: 500 });
      expect(err.message).toContain(
        provider === 'openai'
          ? 'The server had an error while processing your request'
          : 'api_error: Internal server error',
      );
      expect(err.message).toMatch(new RegExp(`^${provider}: `));
      expect(f.requests).toHaveLength(3);
    });

    it('retries 0 means exactly one attempt', async () => {
      const f = await fake(provider, [{ status: 503 }, { answer: ANSWER }]);
      const err = await failure(clientFor(f, provider, { retries: 0 }).generate(REQUEST));
      expect(err.data).toEqual({ provider, reason: 'http', status: 503 });
      expect(f.requests).toHaveLength(1);
    });

    it.each([400, 401, 403, 404, 422])('does not retry a %i', async (status) => {
      const message = `fake says no (${status}): check your request`;
      const body =
        provider === 'openai'
          ? { error: { message, type: 'invalid_request_error', param: null, code: null } }
          : { type: 'error', error: { type: 'invalid_request_error', message } };
      const f = await fake(provider, [{ status, body }, { answer: ANSWER }]);
      const err = await failure(clientFor(f, provider).generate(REQUEST));
      expect(err.code).toBe('LLM_FAILED');
      expect(err.data).toEqual({ provider, reason: 'http', status });
      expect(err.message).toContain(`invalid_request_error: ${message}`);
      expect(f.requests).toHaveLength(1);
    });

    it('quotes a plain-text error body when it is not the provider’s JSON', async () => {
      const f = await fake(provider, [{ status: 502, body: '<html>502 Bad Gateway</html>' }]);
      const err = await failure(clientFor(f, provider, { retries: 0 }).generate(REQUEST));
      expect(err.data).toEqual({ provider, reason: 'http', status: 502 });
      expect(err.message).toContain('<html>502 Bad Gateway</html>');
    });

    it(
      'caps a Retry-After longer than maxRetryDelayMs (seconds and HTTP date)',
      async () => {
        const inAnHour = new Date(Date.now() + 3_600_000).toUTCString();
        const f = await fake(provider, [
          { status: 429, headers: { 'retry-after': '3600' } },
          { status: 503, headers: { 'retry-after': inAnHour } },
          { answer: ANSWER },
        ]);
        const answer = await clientFor(f, provider, { maxRetryDelayMs: 20 }).generate(REQUEST);
        expect(answer.value).toEqual(ANSWER);
        expect(f.requests).toHaveLength(3);
      },
      FAST,
    );
  });

  describe('connections', () => {
    it('a hang past timeoutMs is reason timeout', async () => {
      const f = await fake(provider, ['hang', { answer: ANSWER }]);
      const err = await failure(
        clientFor(f, provider, { timeoutMs: 200, retries: 0 }).generate(REQUEST),
      );
      expect(err.code).toBe('LLM_FAILED');
      expect(err.data).toEqual({ provider, reason: 'timeout' });
      expect(err.message).toContain('within 200 ms');
      expect(f.requests).toHaveLength(1);
    });

    it('a hang is retried like any timeout', async () => {
      const f = await fake(provider, ['hang', { answer: ANSWER }]);
      const answer = await clientFor(f, provider, { timeoutMs: 200, retries: 1 }).generate(REQUEST);
      expect(answer.value).toEqual(ANSWER);
      expect(f.requests).toHaveLength(2);
    });

    it('a dropped connection is reason unreachable', async () => {
      const f = await fake(provider, ['drop', { answer: ANSWER }]);
      const err = await failure(clientFor(f, provider, { retries: 0 }).generate(REQUEST));
      expect(err.code).toBe('LLM_FAILED');
      expect(err.data).toEqual({ provider, reason: 'unreachable' });
      expect(f.requests).toHaveLength(1);
    });

    it('a dropped connection is retried, then the scripted model answers', async () => {
      const f = await fake(provider, ['drop', 'scripted']);
      const answer = await clientFor(f, provider, { retries: 1 }).generate(REQUEST);
      expect(answer.value).toHaveProperty('proposals');
      expect(f.requests).toHaveLength(2);
    });

    it('nobody listening is reason unreachable', async () => {
      const f = await fake(provider);
      await f.close();
      const err = await failure(clientFor(f, provider, { retries: 1 }).generate(REQUEST));
      expect(err.data).toEqual({ provider, reason: 'unreachable' });
      expect(err.message).toContain('cannot reach http://127.0.0.1:');
    });

    it('an answer that stalls after its headers is reason timeout', async () => {
      const server = await rawServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"choices":');
      });
      const client = createLlmClient({
        provider,
        baseUrl: server.url,
        model: MODEL,
        timeoutMs: 200,
        retries: 0,
      });
      const err = await failure(client.generate(REQUEST));
      expect(err.data).toEqual({ provider, reason: 'timeout' });
      expect(server.hits()).toBe(1);
    });

    it('an answer that breaks off mid-body is retried, then read whole', async () => {
      const whole = JSON.stringify(
        provider === 'openai'
          ? { choices: [{ message: { content: JSON.stringify(ANSWER) }, finish_reason: 'stop' }] }
          : { content: [{ type: 'tool_use', name: REQUEST.name, input: ANSWER }] },
      );
      const server = await rawServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': whole.length });
        if (server.hits() === 1) {
          res.write(whole.slice(0, 10));
          setTimeout(() => res.destroy(), 20);
        } else res.end(whole);
      });
      const client = createLlmClient({
        provider,
        baseUrl: server.url,
        model: MODEL,
        retries: 1,
        retryDelayMs: 1,
      });
      expect((await client.generate(REQUEST)).value).toEqual(ANSWER);
      expect(server.hits()).toBe(2);
    });

    it('an answer that breaks off on the last attempt is reason unreachable', async () => {
      const server = await rawServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
        res.write('{"choices":');
        setTimeout(() => res.destroy(), 20);
      });
      const client = createLlmClient({ provider, baseUrl: server.url, model: MODEL, retries: 0 });
      const err = await failure(client.generate(REQUEST));
      expect(err.data).toEqual({ provider, reason: 'unreachable' });
      expect(err.message).toContain('broke off');
      expect(server.hits()).toBe(1);
    });

    it('does not follow a redirect', async () => {
      const target = await fake(provider);
      const server = await rawServer((_req, res) => {
        res.writeHead(307, { location: `${new URL(target.url).origin}${endpoint}` });
        res.end();
      });
      // retries allowed, and still one request: a redirect is an answer, not a transient failure
      const client = createLlmClient({
        provider,
        baseUrl: server.url,
        model: MODEL,
        retries: 2,
        retryDelayMs: 1,
      });
      const err = await failure(client.generate(REQUEST));
      expect(err.code).toBe('LLM_FAILED');
      expect(err.data).toMatchObject({ reason: 'http', status: 307 });
      expect(err.message).toContain('does not follow redirects');
      expect(server.hits()).toBe(1);
      expect(target.requests).toHaveLength(0);
    });
  });

  describe('malformed answers', () => {
    const cases: Array<[string, FakeStep, string]> =
      provider === 'openai'
        ? [
            ['content that is not JSON', { content: 'not json' }, 'not_json'],
            ['a JSON array as the answer', { answer: [1, 2] }, 'not_an_object'],
            ['a JSON array as the content', { content: '[1,2]' }, 'not_an_object'],
            ['a JSON number as the content', { content: '42' }, 'not_an_object'],
            ['JSON null as the content', { content: 'null' }, 'not_an_object'],
            ['a JSON string as the answer', { answer: 'a string' }, 'not_an_object'],
            ['empty content', { content: '  ' }, 'no_answer'],
            ['a 200 whose body is not JSON', { status: 200, body: 'hello' }, 'not_json'],
            ['no choices', { status: 200, body: { choices: [] } }, 'no_answer'],
            [
              'a choice without a message',
              { status: 200, body: { choices: [{ finish_reason: 'stop' }] } },
              'no_answer',
            ],
            [
              'a message with null content',
              {
                status: 200,
                body: { choices: [{ message: { content: null }, finish_reason: 'stop' }] },
              },
              'no_answer',
            ],
          ]
        : [
            ['a text block instead of the tool call', { content: 'not json' }, 'no_answer'],
            ['a JSON array as the tool input', { answer: [1, 2] }, 'not_an_object'],
            ['a JSON number as the tool input', { answer: 42 }, 'not_an_object'],
            ['null as the tool input', { answer: null }, 'not_an_object'],
            ['a tool input string that is not JSON', { answer: 'not json' }, 'not_json'],
            ['a 200 whose body is not JSON', { status: 200, body: 'hello' }, 'not_json'],
            [
              'a call of another tool',
              {
                status: 200,
                body: {
                  content: [{ type: 'tool_use', name: 'other_tool', input: ANSWER }],
                  stop_reason: 'tool_use',
                },
              },
              'no_answer',
            ],
            ['no content at all', { status: 200, body: { stop_reason: 'end_turn' } }, 'no_answer'],
          ];

    it.each(cases)('%s is LLM_FAILED %s', async (_what, step, reason) => {
      const f = await fake(provider, [step, { answer: ANSWER }]);
      const err = await failure(clientFor(f, provider).generate(REQUEST));
      expect(err.code).toBe('LLM_FAILED');
      expect(err.data).toMatchObject({ provider, reason });
      // a malformed answer is final: retrying would pay for the same answer again
      expect(f.requests).toHaveLength(1);
    });

    it('a refusal is reason refusal', async () => {
      const f = await fake(provider, ['refusal']);
      const err = await failure(clientFor(f, provider).generate(REQUEST));
      expect(err.data).toEqual({ provider, reason: 'refusal' });
      if (provider === 'openai') expect(err.message).toContain(REFUSAL_TEXT);
    });

    it('an answer cut at the token limit is reason truncated', async () => {
      const f = await fake(provider, ['truncated']);
      const err = await failure(clientFor(f, provider).generate(REQUEST));
      expect(err.data).toEqual({ provider, reason: 'truncated' });
    });

    it('an answer body over MAX_ANSWER_BYTES is LLM_FAILED, not a crash, and not retried', async () => {
      const f = await fake(provider, [
        { answer: { big: 'x'.repeat(MAX_ANSWER_BYTES + 10) } },
        { answer: ANSWER },
      ]);
      const err = await failure(clientFor(f, provider).generate(REQUEST));
      expect(err.code).toBe('LLM_FAILED');
      expect(err.message).toContain(`longer than ${MAX_ANSWER_BYTES} bytes`);
      expect(f.requests).toHaveLength(1);
    });

    it('an answer body just under MAX_ANSWER_BYTES is read whole', async () => {
      const big = 'x'.repeat(MAX_ANSWER_BYTES - 8_192);
      const f = await fake(provider, [{ answer: { big } }]);
      const answer = await clientFor(f, provider).generate(REQUEST);
      expect(answer.value).toEqual({ big });
    });
  });

  describe('endpoints', () => {
    const bases =
      provider === 'openai'
        ? [
            ['the base', ''],
            ['the base with a trailing slash', '/'],
            ['the full endpoint', '/chat/completions'],
          ]
        : [
            ['the origin', ''],
            ['the origin with a trailing slash', '/'],
            ['a base ending in /v1', '/v1'],
            ['a base ending in /v1/', '/v1/'],
            ['the full endpoint', '/v1/messages'],
          ];
    it.each(bases)('reaches %s at %s', async (_what, suffix) => {
      const f = await fake(provider, [{ answer: ANSWER }]);
      const client = clientFor(f, provider, { baseUrl: `${f.url}${suffix}` });
      expect((await client.generate(REQUEST)).value).toEqual(ANSWER);
      expect(f.requests.map((r) => r.path)).toEqual([endpoint]);
    });

    it('a query string on the base is refused (a key never rides in a URL); a fragment is dropped', async () => {
      const server = await rawServer((_req, res) => sendJson(res, 500, {}));
      const base = provider === 'openai' ? `${server.url}/v1` : server.url;
      let refused: unknown = null;
      try {
        createLlmClient({ provider, baseUrl: `${base}?key=${KEY}`, model: MODEL, retries: 0 });
      } catch (err) {
        refused = err;
      }
      expect(refused).toMatchObject({ code: 'INVALID_ARGUMENT', data: { field: 'llmUrl' } });
      expect((refused as Error).message).not.toContain(KEY);
      const client = createLlmClient({
        provider,
        baseUrl: `${base}#frag`,
        model: MODEL,
        retries: 0,
      });
      await failure(client.generate(REQUEST));
      expect(server.paths).toEqual([endpoint]);
    });
  });
});

describe('createLlmClient refuses bad options before any request', () => {
  const good = (url: string): LlmOptions => ({ provider: 'openai', baseUrl: url, model: MODEL });
  const bad: Array<[string, (url: string) => LlmOptions, string]> = [
    [
      'an unknown provider',
      (u) => ({ ...good(u), provider: 'gemini' as LlmProvider }),
      'llmProvider',
    ],
    ['an empty provider', (u) => ({ ...good(u), provider: '' as LlmProvider }), 'llmProvider'],
    ['an ftp URL', () => good('ftp://127.0.0.1/v1'), 'llmUrl'],
    ['a file URL', () => good('file:///etc/passwd'), 'llmUrl'],
    ['no URL at all', () => good('not a url'), 'llmUrl'],
    ['an empty URL', () => good(''), 'llmUrl'],
    ['a URL with user:pass@', (u) => good(u.replace('http://', 'http://user:s3cr3t@')), 'llmUrl'],
    ['a URL with a user only', (u) => good(u.replace('http://', 'http://user@')), 'llmUrl'],
    ['an empty model', (u) => ({ ...good(u), model: '' }), 'llmModel'],
    ['a blank model', (u) => ({ ...good(u), model: '   ' }), 'llmModel'],
    ['timeoutMs 0', (u) => ({ ...good(u), timeoutMs: 0 }), 'timeoutMs'],
    ['timeoutMs 1.5', (u) => ({ ...good(u), timeoutMs: 1.5 }), 'timeoutMs'],
    ['timeoutMs NaN', (u) => ({ ...good(u), timeoutMs: Number.NaN }), 'timeoutMs'],
    ['retries -1', (u) => ({ ...good(u), retries: -1 }), 'retries'],
    ['retries 0.5', (u) => ({ ...good(u), retries: 0.5 }), 'retries'],
    ['retries Infinity', (u) => ({ ...good(u), retries: Infinity }), 'retries'],
    ['retryDelayMs -1', (u) => ({ ...good(u), retryDelayMs: -1 }), 'retryDelayMs'],
    ['maxRetryDelayMs -1', (u) => ({ ...good(u), maxRetryDelayMs: -1 }), 'maxRetryDelayMs'],
  ];

  it.each(bad)('%s is INVALID_ARGUMENT', async (_what, options, field) => {
    const f = await fake('openai');
    const err = thrown(() => createLlmClient(options(f.url)));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.data).toEqual({ field });
    expect(f.requests).toHaveLength(0);
  });

  it('never echoes the password of a URL it refuses', async () => {
    const f = await fake('openai');
    const err = thrown(() =>
      createLlmClient(good(f.url.replace('http://', 'http://user:s3cr3t@'))),
    );
    expect(err.message).not.toContain('s3cr3t');
    expect(err.message).toContain('MEMLEDGER_LLM_API_KEY');
  });

  it('never echoes the password of a URL that does not even parse', () => {
    for (const raw of ['http://me:hunter2@exa mple.com/v1', 'http://me:hun/ter2@[bad/v1']) {
      const err = thrown(() => createLlmClient(good(raw)));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(/^not a URL: /);
      expect(err.message).not.toMatch(/hunter2|hun\/ter2/);
    }
    // a URL without credentials is still quoted, so the user sees what was wrong
    expect(thrown(() => createLlmClient(good('http://exa mple.com/v1'))).message).toContain(
      'exa mple.com',
    );
  });

  const fine: Array<[string, (url: string) => LlmOptions]> = [
    ['openai', (u) => good(u)],
    ['anthropic', (u) => ({ ...good(u), provider: 'anthropic' })],
    [
      'a provider in other case, padded',
      (u) => ({ ...good(u), provider: ' OpenAI ' as LlmProvider }),
    ],
    ['an https URL', () => good('https://api.example.com/v1')],
    ['a padded model', (u) => ({ ...good(u), model: `  ${MODEL}  ` })],
    ['timeoutMs 1', (u) => ({ ...good(u), timeoutMs: 1 })],
    ['retries 0', (u) => ({ ...good(u), retries: 0 })],
    ['retryDelayMs 0', (u) => ({ ...good(u), retryDelayMs: 0 })],
    ['maxRetryDelayMs 0', (u) => ({ ...good(u), maxRetryDelayMs: 0 })],
  ];

  it.each(fine)('%s constructs, and still makes no request', async (_what, options) => {
    const f = await fake('openai');
    const client = createLlmClient(options(f.url));
    expect(client.model).toBe(MODEL);
    expect(['openai', 'anthropic']).toContain(client.provider);
    expect(f.requests).toHaveLength(0);
  });

  it('keeps the base URL without credentials or trailing slashes', async () => {
    const client = createLlmClient({
      provider: 'anthropic',
      baseUrl: ' https://api.anthropic.com/// ',
      model: MODEL,
    });
    expect(client).toMatchObject({ provider: 'anthropic', url: 'https://api.anthropic.com/' });
  });

  it('a padded provider and model are used trimmed on the wire', async () => {
    const f = await fake('openai', [{ answer: ANSWER }]);
    const client = createLlmClient({
      provider: ' OpenAI ' as LlmProvider,
      baseUrl: f.url,
      model: `  ${MODEL}  `,
      apiKey: KEY,
      retries: 0,
    });
    expect(client.provider).toBe('openai');
    await client.generate(REQUEST);
    expect((f.requests[0]?.body as Record<string, unknown>).model).toBe(MODEL);
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2025-03-01T12:00:00Z');

  it.each([
    ['0', 0],
    ['5', 5_000],
    ['1.5', 1_500],
    [' 7 ', 7_000],
    ['-3', 0],
  ])('reads seconds: %j is %i ms', (header, ms) => {
    expect(retryAfterMs(header, now)).toBe(ms);
  });

  it('reads an HTTP date, relative to now', () => {
    expect(retryAfterMs('Sat, 01 Mar 2025 12:00:30 GMT', now)).toBe(30_000);
  });

  it('a date in the past is no wait', () => {
    expect(retryAfterMs('Sat, 01 Mar 2025 11:00:00 GMT', now)).toBe(0);
  });

  it.each([['garbage'], ['soon'], ['Infinity'], [''], ['   ']])('%j is null', (header) => {
    expect(retryAfterMs(header, now)).toBeNull();
  });

  it('an absent header is null', () => {
    expect(retryAfterMs(null, now)).toBeNull();
  });
});
