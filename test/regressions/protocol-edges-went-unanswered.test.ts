// Issue 33, finding 11: MCP prompts/get with a non-string argument answered -32603 with the SDK
// validator's raw dump; over stdio a request whose params was an array, and a line that was not
// JSON, got no answer at all; and after an HTTP 413 the next keep-alive request on that
// connection was reset. Each now gets its proper answer; each has a control that is served.
import { Agent, request as httpRequest, type ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/index.js';
import { callerForToken } from '../../server/access.js';
import { createMcpServer } from '../../server/mcp/mcp-server.js';
import { serveMcpStdio } from '../../server/mcp/mcp-stdio.js';
import { startServe, type RunningServe } from '../../server/serve.js';
import { initializeRequest } from '../support/mcp.js';
import { ONE_ENGINE } from '../support/engines.js';
import { makeOwnerSigner, ownerWithTokens, type SubjectWithTokens } from '../support/tokens.js';
import { TEST_KEYS } from '../support/test-keys.js';

interface Answer {
  id?: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: { error?: { code?: string } } };
}

/** MCP over stdio as `memledger mcp` serves it, on in-process streams: lines in, answers out. */
function stdioSession(engine: Engine, token: string) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const answers: Answer[] = [];
  const waiting: Array<() => void> = [];
  let buffered = '';
  stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
      answers.push(JSON.parse(buffered.slice(0, at)) as Answer);
      buffered = buffered.slice(at + 1);
      waiting.splice(0).forEach((wake) => wake());
    }
  });
  const handle = (async () => {
    const caller = await callerForToken(engine, token);
    return serveMcpStdio(() => createMcpServer(caller), {
      stdin,
      stdout,
      onerror: () => undefined,
    });
  })();
  /** Sends lines; the answers they got, once `count` have come. */
  const send = async (lines: string[], count: number): Promise<Answer[]> => {
    await handle;
    const from = answers.length;
    stdin.write(lines.map((l) => `${l}\n`).join(''));
    while (answers.length < from + count) await new Promise<void>((r) => waiting.push(r));
    return answers.slice(from);
  };
  return { send, close: async () => (await handle).close() };
}

const request = (id: number, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

const INITIALIZE = initializeRequest(0, 'edges');

describe.each(ONE_ENGINE)('MCP and HTTP edges each get their answer [%s]', () => {
  let engine: Engine;
  let alice: SubjectWithTokens;
  let running: RunningServe;

  beforeAll(async () => {
    engine = await createEngine({ db: 'memory://' });
    alice = await ownerWithTokens(engine, 'alice', makeOwnerSigner(TEST_KEYS));
    running = await startServe({ engine, host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await running?.close();
    await engine?.close();
  });

  describe('over stdio', () => {
    let session: ReturnType<typeof stdioSession>;
    beforeAll(async () => {
      session = stdioSession(engine, alice.agent);
      await session.send([INITIALIZE, '{"jsonrpc":"2.0","method":"notifications/initialized"}'], 1);
    });
    afterAll(() => session.close());

    it('answers a line that is not JSON with -32700 and goes on serving', async () => {
      const [parse, ping] = await session.send(
        ['{"jsonrpc": "2.0", "id": 4, "method": ', request(5, 'ping')],
        2,
      );
      expect(parse).toMatchObject({ id: null, error: { code: -32700 } });
      expect(ping).toMatchObject({ id: 5, result: {} });
      // Blank lines are no messages: nothing answers them (control).
      expect(await session.send(['', '   ', request(6, 'ping')], 1)).toEqual([
        expect.objectContaining({ id: 6, result: {} }),
      ]);
    });

    it('answers params that are not an object, and a batch, with -32600', async () => {
      const [array, batch] = await session.send(
        [request(7, 'tools/list', []), `[${request(8, 'ping')}]`],
        2,
      );
      expect(array).toMatchObject({ id: 7, error: { code: -32600 } });
      expect(array?.error?.message).toMatch(/params must be an object/);
      expect(batch).toMatchObject({ id: null, error: { code: -32600 } });
      // The same request with params that are an object is served (control).
      const [listed] = await session.send([request(9, 'tools/list', {})], 1);
      expect((listed?.result?.tools as unknown[]).length).toBeGreaterThan(0);
    });

    it('answers a prompt argument that is not a string with -32602 naming it', async () => {
      const [bad, badUri] = await session.send(
        [
          request(10, 'prompts/get', { name: 'arrival', arguments: { message: 5 } }),
          request(11, 'resources/read', { uri: 5 }),
        ],
        2,
      );
      for (const [answer, field] of [
        [bad, 'arguments.message'],
        [badUri, 'uri'],
      ] as const) {
        expect(answer?.error?.code).toBe(-32602);
        expect(answer?.error?.message).toContain(field);
        expect(answer?.error?.message).not.toMatch(/\n|"code"/); // no validator dump
        expect(answer?.error?.data?.error?.code).toBe('INVALID_ARGUMENT');
      }
      // A string argument is served (control).
      const [good] = await session.send(
        [request(12, 'prompts/get', { name: 'arrival', arguments: { message: 'hello' } })],
        1,
      );
      expect(good?.result?.messages).toHaveLength(1);
    });
  });

  describe('over HTTP', () => {
    const post = async (body: string) => {
      const res = await fetch(`${running.url}mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${alice.agent}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      });
      return { status: res.status, answer: (await res.json()) as Answer };
    };

    it('answers a prompt argument that is not a string with -32602, to the SDK client', async () => {
      const client = new Client({ name: 'edges', version: '1' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${running.url}mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${alice.agent}` } },
        }),
      );
      try {
        const refused = await client
          .getPrompt({ name: 'arrival', arguments: { message: 5 as unknown as string } })
          .then(
            () => null,
            (err: { code?: number; message?: string }) => err,
          );
        expect(refused?.code).toBe(-32602);
        expect(refused?.message).toContain('arguments.message');
        expect(refused?.message).not.toMatch(/\n|"code"/);
        // A string argument is served (control).
        const prompt = await client.getPrompt({ name: 'arrival', arguments: { message: 'hi' } });
        expect(prompt.messages).toHaveLength(1);
      } finally {
        await client.close();
      }
    });

    it('answers params that are an array with -32600, and a body that is not JSON with -32700', async () => {
      const array = await post(request(3, 'tools/list', []));
      expect(array.answer).toMatchObject({ id: 3, error: { code: -32600 } });
      const parse = await post('{"jsonrpc": "2.0", "id": 4, "method": ');
      expect(parse.answer).toMatchObject({ id: null, error: { code: -32700 } });
    });
  });

  describe('after a 413', () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    afterAll(() => agent.destroy());

    /** One request on the keep-alive agent: its status, or the error that ended it, and its socket. */
    const send = (path: string, body: string) =>
      new Promise<{ status: number | string; connection?: string; socket?: Socket }>((done) => {
        const url = new URL(path, running.url);
        const req: ClientRequest = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            agent,
            headers: {
              authorization: `Bearer ${alice.agent}`,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'content-length': String(Buffer.byteLength(body)),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              done({
                status: res.statusCode ?? 0,
                ...(res.headers.connection ? { connection: res.headers.connection } : {}),
                socket: req.socket as Socket,
              }),
            );
          },
        );
        req.on('error', (err: NodeJS.ErrnoException) => done({ status: err.code ?? 'ERROR' }));
        req.end(body);
      });
    const big = JSON.stringify({ title: 'x'.repeat(2 * 1024 * 1024) });

    it('ends the connection with the 413, so the next request is answered, not reset', async () => {
      const next: Record<string, string> = {
        '/v1/sessions': '{"title":"after"}',
        '/mcp': request(1, 'ping'),
      };
      for (const [path, small] of Object.entries(next)) {
        for (let round = 0; round < 10; round += 1) {
          const refused = await send(path, big);
          expect({ path, status: refused.status, connection: refused.connection }).toEqual({
            path,
            status: 413,
            connection: 'close',
          });
          const after = await send(path, small);
          expect({ path, round, status: after.status }).toEqual({
            path,
            round,
            status: path === '/mcp' ? 200 : 201,
          });
        }
      }
    });

    it('keeps the connection of any other answer for the next request (control)', async () => {
      const first = await send('/v1/sessions', '{"title":"one"}');
      const second = await send('/v1/sessions', '{"title":"two"}');
      expect([first.status, second.status]).toEqual([201, 201]);
      expect(first.connection).toBe('keep-alive');
      expect(second.socket).toBe(first.socket);
      // while the socket after a 413 is a new one
      await send('/v1/sessions', big);
      const third = await send('/v1/sessions', '{"title":"three"}');
      expect(third.socket).not.toBe(second.socket);
    });
  });
});
