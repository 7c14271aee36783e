import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, FactId } from '../src/index.js';
import { callerForToken, type Caller } from '../server/access.js';
import { createMcpServer, MCP_OPERATIONS, MCP_TOOLS } from '../server/mcp/mcp-server.js';
import { toolErrorSchema } from '../server/mcp/mcp-schemas.js';
import { mayRun, OPERATIONS, type Operation } from '../server/operations/table.js';
import { createServeApp } from '../server/serve.js';
import { dumpStore } from './support/dump-store.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { makeOwnerSigner, ownerWithTokens, type SubjectWithTokens } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

async function connect(caller: Caller, recheck?: () => Promise<void>): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(caller, recheck ? { recheck } : {}).connect(serverSide);
  const client = new Client({ name: 'roles-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

async function errorCode(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name} should be refused`).toBe(true);
  return toolErrorSchema.parse(result.structuredContent).error.code;
}

/** Words an owner power would be named with. No tool may offer one. */
const OWNER_WORDS =
  /\b(approv\w*|reject\w*|decid\w*|decision\w*|sign|signs|signed|signer|signing|signature\w*|delegat\w*|tokens?|owner\w*|auto-?live)\b/i;

/** Every property name anywhere in a JSON Schema. */
function propertyNames(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const own = Object.entries(schema as Record<string, unknown>);
  const props = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  return [...Object.keys(props), ...own.flatMap(([, v]) => propertyNames(v))];
}

/** Every description anywhere in a JSON Schema. */
function descriptions(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const own = (schema as { description?: unknown }).description;
  return [
    ...(typeof own === 'string' ? [own] : []),
    ...Object.values(schema as Record<string, unknown>).flatMap(descriptions),
  ];
}

let counter = 0;

describe.each(ENGINES)('MCP tools against the role table [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let mine: SubjectWithTokens;
  let agent: Client;
  let reader: Client;
  /** Valid arguments for every tool, in this subject. */
  let valid: Record<string, Record<string, unknown>>;
  /** Ids belonging to another subject. */
  let theirs: { session: string; commitment: string; fact: string };
  const owner = makeOwnerSigner(TEST_KEYS);

  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
    const subject = `roles-${++counter}-${Date.now().toString(36)}`;
    mine = await ownerWithTokens(engine, subject, owner);
    const other = await ownerWithTokens(engine, `${subject}-other`, owner);
    const me = engine.subject(subject);
    const session = await me.sessions.create();
    await me.turns.add({ sessionId: session.id, role: 'user', content: 'I like tea.' });
    const commitment = await me.commitments.add({ title: 'Brew tea' });

    const them = engine.subject(other.agentInfo.subject);
    const theirSession = await them.sessions.create();
    await them.turns.add({ sessionId: theirSession.id, role: 'user', content: 'I like coffee.' });
    const { proposed } = await them.gate.propose({
      sessionId: theirSession.id,
      proposals: [
        {
          slot: 'stances',
          text: 'The user likes coffee.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I like coffee' },
        },
      ],
    });
    const theirCommitment = await them.commitments.add({ title: 'Buy coffee' });
    theirs = {
      session: theirSession.id,
      commitment: theirCommitment.id,
      fact: proposed[0]?.id ?? '',
    };

    valid = {
      start_session: { title: 'x' },
      list_sessions: {},
      record_turn: { sessionId: session.id, role: 'user', content: 'More tea.' },
      read_history: { sessionId: session.id },
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
      recall: { query: 'tea' },
      get_arrival: {},
      retract_claim: {
        claim: 'a',
        stoodOn: 'b',
        whyWrong: 'c',
        corrected: 'd',
        procedure: 'e',
        passObservation: 'f',
        overturnCondition: 'g',
      },
      run_probe: { spec: { kind: 'file', path: 'package.json', mode: 'exists' } },
      list_commitments: {},
      add_commitment: { title: 'Steep longer' },
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
    agent = await connect(await callerForToken(engine, mine.agent));
    reader = await connect(await callerForToken(engine, mine.reader));
  });
  afterAll(async () => {
    await agent?.close();
    await reader?.close();
    await t?.close();
  });

  it('names one operation of the role table for every tool, prompt and resource', async () => {
    expect(Object.keys(valid).sort()).toEqual(MCP_TOOLS.map((x) => x.name).sort());
    for (const [client, role] of [
      [agent, 'agent'],
      [reader, 'reader'],
    ] as const) {
      // each token is shown the tools its role may run, and only those
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual(
        MCP_TOOLS.filter((x) => mayRun(role, x.operation.name as Operation))
          .map((x) => x.name)
          .sort(),
      );
      for (const tool of tools) {
        const op = MCP_OPERATIONS.tools[tool.name];
        expect(op, tool.name).toBeDefined();
        expect(Object.keys(OPERATIONS), tool.name).toContain(op);
        expect(mayRun('agent', op as keyof typeof OPERATIONS), tool.name).toBe(true);
      }
      const { prompts } = await client.listPrompts();
      for (const p of prompts)
        expect(Object.keys(OPERATIONS)).toContain(MCP_OPERATIONS.prompts[p.name]);
      const { resourceTemplates } = await client.listResourceTemplates();
      for (const r of resourceTemplates) {
        expect(Object.keys(OPERATIONS)).toContain(MCP_OPERATIONS.resources[r.name]);
      }
    }
    expect(MCP_TOOLS.map((x) => x.name).sort()).toEqual(Object.keys(MCP_OPERATIONS.tools).sort());
  });

  it('offers no owner power: no tool approves, rejects, decides, signs, delegates or handles tokens', async () => {
    const { tools } = await agent.listTools();
    for (const tool of tools) {
      const said = [tool.name.replace(/_/g, ' '), tool.title ?? '', tool.description ?? ''].join(
        ' ',
      );
      expect(said, tool.name).not.toMatch(OWNER_WORDS);
      // field names and their descriptions (an enum value like caughtBy "owner" offers nothing)
      const fields = [...propertyNames(tool.inputSchema), ...descriptions(tool.inputSchema)];
      expect(fields.join(' '), tool.name).not.toMatch(OWNER_WORDS);
    }
    // the checker is not blind
    expect('approve_memory'.replace(/_/g, ' ')).toMatch(OWNER_WORDS);
    expect('sign the design'.replace(/_/g, ' ')).toMatch(OWNER_WORDS);
    expect('assign a design'.replace(/_/g, ' ')).not.toMatch(OWNER_WORDS);
    expect('create a token').toMatch(OWNER_WORDS);
  });

  it('takes the subject from the token alone: no input schema has a subject field', async () => {
    const { tools } = await agent.listTools();
    for (const tool of tools) {
      const names = propertyNames(tool.inputSchema);
      expect(names, tool.name).not.toContain('subject');
      expect(
        names.filter((n) => /subject/i.test(n)),
        tool.name,
      ).toEqual([]);
    }
    expect(propertyNames({ properties: { a: { properties: { subject: {} } } } })).toContain(
      'subject',
    );
  });

  it('refuses an owner power or another subject smuggled into any tool, and changes nothing', async () => {
    const other = theirs;
    const smuggled = [
      { subject: 'someone-else' },
      { subjectId: 'someone-else' },
      { decision: 'approve' },
      { approve: true },
      { signer: { keyId: 'k' } },
      { autoLive: true },
      { token: 'mlt_x' },
    ];
    const before = await dumpStore(engine);
    for (const [name, args] of Object.entries(valid)) {
      for (const extra of smuggled) {
        expect(
          await errorCode(agent, name, { ...args, ...extra }),
          `${name} ${JSON.stringify(extra)}`,
        ).toBe('INVALID_ARGUMENT');
      }
    }
    const reach: Array<[string, Record<string, unknown>, string]> = [
      ['read_history', { sessionId: other.session }, 'SESSION_NOT_FOUND'],
      [
        'record_turn',
        { sessionId: other.session, role: 'user', content: 'hi' },
        'SESSION_NOT_FOUND',
      ],
      [
        'propose_memories',
        { ...valid.propose_memories, sessionId: other.session },
        'SESSION_NOT_FOUND',
      ],
      ['recall', { query: 'coffee', sessionId: other.session }, 'SESSION_NOT_FOUND'],
      ['get_arrival', { sessionId: other.session }, 'SESSION_NOT_FOUND'],
      [
        'request_forget',
        { ...valid.request_forget, sessionId: other.session },
        'SESSION_NOT_FOUND',
      ],
      ['complete_commitment', { commitmentId: other.commitment }, 'COMMITMENT_NOT_FOUND'],
      ['retract_claim', { ...valid.retract_claim, factId: other.fact }, 'FACT_NOT_FOUND'],
      // a chosen session id would answer SESSION_EXISTS for another subject's: not offered
      ['start_session', { id: other.session }, 'INVALID_ARGUMENT'],
    ];
    for (const [name, args, code] of reach) {
      expect(await errorCode(agent, name, args), name).toBe(code);
    }
    expect(await dumpStore(engine)).toEqual(before);
    // another subject's words are not recalled either
    const recalled = await agent.callTool({ name: 'recall', arguments: { query: 'coffee' } });
    expect(JSON.stringify(recalled.structuredContent)).not.toContain('coffee');
  });

  it('keeps a reader to reading: no agent tool is listed or runs, and the store is unchanged', async () => {
    const before = await dumpStore(engine);
    const forbidden = MCP_TOOLS.filter((x) => !mayRun('reader', x.operation.name as Operation));
    expect(forbidden.map((x) => x.name)).toEqual(
      expect.arrayContaining(['record_turn', 'propose_memories', 'retract_claim', 'run_probe']),
    );
    const listed = (await reader.listTools()).tools.map((x) => x.name);
    for (const tool of forbidden) {
      expect(listed, tool.name).not.toContain(tool.name);
      // called anyway: refused, as a tool the connection does not have
      const refused = await reader
        .callTool({ name: tool.name, arguments: valid[tool.name] ?? {} })
        .then((r) => (r.isError === true ? JSON.stringify(r.content) : 'ran'))
        .catch((err: Error) => err.message);
      expect(refused, tool.name).toMatch(/not found|unknown tool/i);
    }
    expect(await dumpStore(engine)).toEqual(before);
    for (const name of [
      'list_sessions',
      'read_history',
      'recall',
      'list_commitments',
      'list_memories',
    ]) {
      const result = await reader.callTool({ name, arguments: valid[name] ?? {} });
      expect(result.isError, name).not.toBe(true);
    }
    expect(await dumpStore(engine)).toEqual(before);
  });

  it('list_memories lists only what the owner signed, each with its passport', async () => {
    const me = engine.subject(mine.agentInfo.subject);
    const session = await me.sessions.create();
    await me.turns.add({ sessionId: session.id, role: 'user', content: 'I keep bees in Lund.' });
    const { proposed } = await me.gate.propose({
      sessionId: session.id,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user keeps bees.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I keep bees' },
        },
        {
          slot: 'what_i_know_about_user',
          text: 'The user lives in Lund.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'in Lund' },
        },
      ],
    });
    const [bees, lund] = proposed.map((p) => p.id);
    const list = async () => {
      const r = await reader.callTool({ name: 'list_memories', arguments: {} });
      expect(r.isError).not.toBe(true);
      const text = (r.content as Array<{ text: string }>)[0]?.text ?? '';
      const ids = (r.structuredContent as { facts: Array<{ id: string }> }).facts.map((f) => f.id);
      return { text, ids };
    };
    // negative control: proposed is not live
    const before = await list();
    expect(before.ids).not.toContain(bees);
    expect(before.text).not.toContain('keeps bees');
    await me.owner.decide({
      proposalId: bees as FactId,
      decision: 'approve',
      signer: owner.signer,
    });
    const after = await list();
    expect(after.ids).toContain(bees);
    expect(after.ids).not.toContain(lund);
    expect(after.text).toMatch(
      /\(saw, \d{1,2} [A-Z][a-z]{2} \d{4}\)[^\n]* what_i_know_about_user: The user keeps bees\./u,
    );
    expect(after.text).not.toContain('Lund');
    // an agent's retraction of it takes nothing down: it stays listed, marked disputed
    const retracted = await agent.callTool({
      name: 'retract_claim',
      arguments: { ...valid.retract_claim, claim: 'The user keeps bees.', factId: bees },
    });
    expect(retracted.isError).not.toBe(true);
    expect((retracted.content as Array<{ text: string }>)[0]?.text).toContain(
      `Fact ${bees} stays in live memory, marked disputed`,
    );
    expect((await list()).ids).toContain(bees);
    const arrival = await reader.callTool({ name: 'get_arrival', arguments: {} });
    expect(JSON.stringify(arrival.structuredContent)).toContain('[disputed: retraction');
  });

  it('stops a connection whose token is revoked at its next request', async () => {
    const made = await engine.subject(mine.agentInfo.subject).owner.createToken({
      role: 'agent',
      signer: owner.signer,
    });
    const caller = await callerForToken(engine, made.token);
    const client = await connect(caller, async () => {
      await engine.tokens.authenticate(made.token);
    });
    try {
      const ok = await client.callTool({ name: 'list_sessions', arguments: {} });
      expect(ok.isError).not.toBe(true);
      await engine
        .subject(made.info.subject)
        .owner.revokeToken({ id: made.info.id, signer: owner.signer });
      const before = await dumpStore(engine);
      expect(await errorCode(client, 'record_turn', valid.record_turn ?? {})).toBe('TOKEN_REVOKED');
      await expect(client.getPrompt({ name: 'arrival', arguments: {} })).rejects.toThrow(
        /TOKEN_REVOKED/,
      );
      expect(await dumpStore(engine)).toEqual(before);
    } finally {
      await client.close();
    }
  });

  it('answers a revoked token over HTTP /mcp with 401 TOKEN_REVOKED', async () => {
    const made = await engine.subject(mine.agentInfo.subject).owner.createToken({
      role: 'reader',
      signer: owner.signer,
    });
    await engine
      .subject(made.info.subject)
      .owner.revokeToken({ id: made.info.id, signer: owner.signer });
    const serve = createServeApp({ engine });
    try {
      const post = (authorization?: string) =>
        serve.app.request('http://127.0.0.1/mcp', {
          method: 'POST',
          headers: {
            host: '127.0.0.1:7777',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(authorization === undefined ? {} : { authorization }),
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
      const revoked = await post(`Bearer ${made.token}`);
      expect(revoked.status).toBe(401);
      expect(await revoked.json()).toMatchObject({ error: { code: 'TOKEN_REVOKED' } });
      const none = await post();
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await none.json()).toMatchObject({ error: { code: 'TOKEN_REQUIRED' } });
      const forged = await post(`Bearer mlt_${'A'.repeat(43)}`);
      expect(forged.status).toBe(401);
      expect(await forged.json()).toMatchObject({ error: { code: 'TOKEN_INVALID' } });
    } finally {
      await serve.close();
    }
  });
});
