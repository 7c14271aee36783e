import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client,
  InMemoryTransport,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../src/index.js';
import { callerForToken } from '../server/access.js';
import { createMcpServer, MCP_TOOLS } from '../server/mcp/mcp-server.js';
import { startServe, type RunningServe } from '../server/serve.js';
import { parseListen } from '../cli/commands/serve.js';
import { dumpStore } from './support/dump-store.js';
import { ENGINES, testStore } from './support/engines.js';
import { codeOf, initializeRequest } from './support/mcp.js';
import { makeOwnerSigner, ownerWithTokens, type SubjectWithTokens } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

const tmp = mkdtempSync(join(tmpdir(), 'ml-mcp-transports-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const owner = makeOwnerSigner(TEST_KEYS);
let counter = 0;

/** A raw HTTP request, so the Host header can be anything. */
function rawPost(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const u = new URL(url);
  return new Promise((done, fail) => {
    let answered = false;
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent: false, // a fresh connection each: a refused large body leaves its socket unusable
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        answered = true;
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, body: text, headers: res.headers }),
        );
      },
    );
    // a server that refuses a large body may close before it has all been sent
    req.on('error', (err) => (answered ? undefined : fail(err)));
    req.end(body);
  });
}

const LIST_TOOLS = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

describe.each(ENGINES)('memledger serve: MCP over Streamable HTTP [%s]', (kind) => {
  const store = testStore(kind, tmp);
  let engine: Engine;
  let running: RunningServe;
  let mine: SubjectWithTokens;
  let theirs: SubjectWithTokens;

  const httpClient = async (token: string): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${running.url}mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'web', version: '1.0.0' });
    await client.connect(transport);
    return client;
  };

  beforeAll(async () => {
    engine = await createEngine({ db: kind === 'pglite' ? 'memory://' : store.db });
    mine = await ownerWithTokens(engine, `http-${++counter}`, owner);
    theirs = await ownerWithTokens(engine, `http-${++counter}`, owner);
    await engine.subject(theirs.agentInfo.subject).sessions.create({ title: 'theirs' });
    running = await startServe({ engine, host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await running?.close();
    await engine?.close();
    await store.cleanup();
  });

  it('serves the tools to the SDK Streamable HTTP client, each request as its own token', async () => {
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const client = await httpClient(mine.agent);
    try {
      const { tools } = await client.listTools();
      expect(tools).toHaveLength(MCP_TOOLS.length);
      const started = await client.callTool({ name: 'start_session', arguments: {} });
      const sessionId = (started.structuredContent as { session: { id: string } }).session.id;
      const turn = await client.callTool({
        name: 'record_turn',
        arguments: { sessionId, role: 'user', content: 'Tea, not coffee.' },
      });
      expect(turn.structuredContent).toMatchObject({ turn: { seq: 1 } });
      const listed = await client.callTool({ name: 'list_sessions', arguments: {} });
      const titles = (listed.structuredContent as { sessions: Array<{ title: string | null }> })
        .sessions;
      expect(titles.map((s) => s.title)).not.toContain('theirs');
      const res = await client.readResource({ uri: 'memledger://arrival/mcp' });
      expect(JSON.stringify(res.contents)).toContain('How to read this context');
    } finally {
      await client.close();
    }
    const reader = await httpClient(mine.reader);
    try {
      // a reader is not shown the agent's tools, and one called anyway is not there
      expect((await reader.listTools()).tools.map((t) => t.name)).not.toContain('start_session');
      await expect(reader.callTool({ name: 'start_session', arguments: {} })).rejects.toThrow(
        /not found/i,
      );
    } finally {
      await reader.close();
    }
  });

  it('issues no session id, so none can let another token in', async () => {
    const init = await rawPost(
      `${running.url}mcp`,
      { ...MCP_HEADERS, host: `127.0.0.1:${running.port}`, authorization: `Bearer ${mine.agent}` },
      initializeRequest(1, 'x'),
    );
    expect(init.status).toBe(200);
    expect(init.headers['mcp-session-id']).toBeUndefined();
    // another subject's token with a made-up session id sees its own subject, and only it
    const call = await rawPost(
      `${running.url}mcp`,
      {
        ...MCP_HEADERS,
        host: `127.0.0.1:${running.port}`,
        authorization: `Bearer ${theirs.reader}`,
        'mcp-session-id': 'a-session-of-someone-else',
        'mcp-protocol-version': '2025-06-18',
      },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'list_sessions', arguments: {} },
      }),
    );
    expect(call.status).toBe(200);
    expect(call.body).toContain('theirs');
    expect(call.body).not.toContain('Tea, not coffee');
  });

  it('refuses a foreign Host or Origin (DNS rebinding), an oversize body, and no token', async () => {
    const url = `${running.url}mcp`;
    const local = `127.0.0.1:${running.port}`;
    const auth = { authorization: `Bearer ${mine.agent}` };
    const before = await dumpStore(engine);
    const evilHost = await rawPost(
      url,
      { ...MCP_HEADERS, ...auth, host: 'evil.example' },
      LIST_TOOLS,
    );
    expect(evilHost.status).toBe(403);
    expect(JSON.parse(evilHost.body)).toMatchObject({ error: { code: 'HOST_NOT_ALLOWED' } });
    const evilOrigin = await rawPost(
      url,
      { ...MCP_HEADERS, ...auth, host: local, origin: 'http://evil.example' },
      LIST_TOOLS,
    );
    expect(evilOrigin.status).toBe(403);
    expect(JSON.parse(evilOrigin.body)).toMatchObject({ error: { code: 'HOST_NOT_ALLOWED' } });
    const nullOrigin = await rawPost(
      url,
      { ...MCP_HEADERS, ...auth, host: local, origin: 'null' },
      LIST_TOOLS,
    );
    expect(nullOrigin.status).toBe(403);
    const goodOrigin = await rawPost(
      url,
      {
        ...MCP_HEADERS,
        ...auth,
        host: `localhost:${running.port}`,
        origin: `http://localhost:${running.port}`,
      },
      LIST_TOOLS,
    );
    expect(goodOrigin.status).toBe(200);
    const healthz = await rawPost(`${running.url}healthz`, { host: 'evil.example' }, '');
    expect(healthz.status).toBe(403);
    const huge = await rawPost(
      url,
      { ...MCP_HEADERS, ...auth, host: local },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'start_session', arguments: { title: 'x'.repeat(2 * 1024 * 1024) } },
      }),
    );
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.body)).toMatchObject({ error: { code: 'BODY_TOO_LARGE' } });
    const anonymous = await rawPost(url, { ...MCP_HEADERS, host: local }, LIST_TOOLS);
    expect(anonymous.status).toBe(401);
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('listens on loopback only, unless a remote address is allowed explicitly', async () => {
    await expect(startServe({ engine, host: '0.0.0.0', port: 0 })).rejects.toMatchObject({
      code: 'REMOTE_NOT_ALLOWED',
    });
    await expect(startServe({ engine, host: '192.0.2.1', port: 0 })).rejects.toMatchObject({
      code: 'REMOTE_NOT_ALLOWED',
    });
    const remote = await startServe({ engine, host: '0.0.0.0', port: 0, allowRemote: true });
    try {
      expect(remote.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/$/);
      const ok = await rawPost(
        `http://127.0.0.1:${remote.port}/mcp`,
        { ...MCP_HEADERS, host: `127.0.0.1:${remote.port}` },
        LIST_TOOLS,
      );
      expect(ok.status).toBe(401); // reached, and asked for a token
    } finally {
      await remote.close();
    }
  });
});

describe('memledger serve --listen', () => {
  it('reads host:port, [v6]:port, a bare host or :port, and refuses the rest', () => {
    expect(parseListen(undefined)).toEqual({ host: '127.0.0.1', port: 7777 });
    expect(parseListen('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseListen('localhost')).toEqual({ host: 'localhost', port: 7777 });
    expect(parseListen(':9000')).toEqual({ host: '127.0.0.1', port: 9000 });
    for (const bad of ['a:b', '1.2.3.4:70000', '::1', '', 'host:80:80', 'a b:80']) {
      expect(() => parseListen(bad), bad).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
  });
});

describe.each(ENGINES)('bad input over MCP changes nothing [%s]', (kind) => {
  let engine: Engine;
  let client: Client;
  let valid: Record<string, Record<string, unknown>>;
  const store = testStore(kind, tmp);

  beforeAll(async () => {
    engine = await createEngine({ db: kind === 'pglite' ? 'memory://' : store.db });
    const { agent, agentInfo } = await ownerWithTokens(engine, `bad-${++counter}`, owner);
    const me = engine.subject(agentInfo.subject);
    const session = await me.sessions.create();
    await me.turns.add({ sessionId: session.id, role: 'user', content: 'I like tea.' });
    const commitment = await me.commitments.add({ title: 'Brew tea' });
    valid = {
      start_session: { title: 'x' },
      list_sessions: { limit: 5 },
      record_turn: {
        sessionId: session.id,
        role: 'assistant',
        content: 'Ok.',
        receipt: { tools: ['t'] },
      },
      read_history: { sessionId: session.id, last: 2 },
      propose_memories: {
        sessionId: session.id,
        proposals: [
          {
            slot: 'stances',
            text: 'Likes tea.',
            origin: 'saw',
            evidence: { turn: 1, quote: 'I like tea' },
          },
        ],
      },
      recall: { query: 'tea', k: 3 },
      get_arrival: { surface: 'chat', sessionId: session.id },
      retract_claim: {
        claim: 'a',
        stoodOn: 'b',
        whyWrong: 'c',
        corrected: 'd',
        procedure: 'e',
        passObservation: 'f',
        overturnCondition: 'g',
        tags: ['t'],
      },
      run_probe: { spec: { kind: 'file', path: 'package.json', mode: 'exists' }, purpose: 'p' },
      list_commitments: { status: 'open' },
      add_commitment: { title: 'Steep longer', due: '2030-01-01' },
      complete_commitment: { commitmentId: commitment.id },
      record_action: { tool: 'kettle', surface: 'chat', target: 'water' },
      list_memories: {},
      request_forget: {
        sessionId: session.id,
        turn: 1,
        quote: 'I like tea',
        scope: { kind: 'phrase', phrase: 'tea' },
      },
    };
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(await callerForToken(engine, agent)).connect(serverSide);
    client = new Client({ name: 'fuzz', version: '1.0.0' });
    await client.connect(clientSide);
  });
  afterAll(async () => {
    await client?.close();
    await engine?.close();
    await store.cleanup();
  });

  /** Every way to spoil one top-level field of a valid call. */
  function spoiled(args: Record<string, unknown>): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = [
      { ...args, unexpected: 1 },
      { ...args, __proto__x: {} },
    ];
    for (const [key, value] of Object.entries(args)) {
      out.push({ ...args, [key]: typeof value === 'number' ? 'seven' : 7 });
      out.push({ ...args, [key]: null });
      if (typeof value === 'string') {
        out.push({ ...args, [key]: `${value}\u0000` });
        out.push({ ...args, [key]: `${value}\ud800` });
        out.push({ ...args, [key]: 'x'.repeat(1_000_001) });
      }
      if (typeof value === 'number') out.push({ ...args, [key]: 2 ** 40 }, { ...args, [key]: 0.5 });
      if (Array.isArray(value)) out.push({ ...args, [key]: [...value, 7] });
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        out.push({ ...args, [key]: { ...value, unexpected: true } });
      }
    }
    return out;
  }

  it('answers every spoiled call of every tool with INVALID_ARGUMENT, and the store stays as it was', async () => {
    expect(Object.keys(valid).sort()).toEqual(MCP_TOOLS.map((x) => x.name).sort());
    const before = await dumpStore(engine);
    let calls = 0;
    for (const [name, args] of Object.entries(valid)) {
      for (const bad of spoiled(args)) {
        const code = await codeOf(client, name, bad);
        expect(code, `${name} ${JSON.stringify(bad).slice(0, 200)}`).toBe('INVALID_ARGUMENT');
        calls += 1;
      }
    }
    expect(calls).toBeGreaterThan(150);
    // a proposal smuggling a NUL deep inside is refused whole, not logged as a drop
    const deep = {
      ...valid.propose_memories,
      proposals: [
        {
          slot: 'stances',
          text: 'x',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I like\u0000 tea' },
        },
      ],
    };
    expect(await codeOf(client, 'propose_memories', deep)).toBe('INVALID_ARGUMENT');
    // a "__proto__" key (as JSON.parse makes it) reaches no prototype and nothing else
    const polluted = JSON.parse('{"query":"tea","__proto__":{"polluted":true}}') as Record<
      string,
      unknown
    >;
    await client.callTool({ name: 'recall', arguments: polluted });
    expect(Object.prototype).not.toHaveProperty('polluted');
    const notObject = await client.callTool({ name: 'recall', arguments: { query: ['tea'] } });
    expect(notObject.isError).toBe(true);
    expect(await dumpStore(engine)).toEqual(before);
  });
});
