import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine, SubjectHandle } from '../src/index.js';
import { callerForToken, type Caller } from '../server/access.js';
import { createMcpServer, MCP_TOOLS, type McpServerConfig } from '../server/mcp/mcp-server.js';
import { toolErrorSchema } from '../server/mcp/mcp-schemas.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { makeOwnerSigner, ownerWithTokens } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

const probeRoot = mkdtempSync(join(tmpdir(), 'ml-mcp-probe-'));
writeFileSync(join(probeRoot, 'deploy.log'), 'deploy ok\n');
afterAll(() => rmSync(probeRoot, { recursive: true, force: true }));

/** A real SDK client linked to a server for `caller` over an in-memory transport pair. */
async function connect(caller: Caller, config: McpServerConfig = {}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(caller, config).connect(serverSide);
  const client = new Client({ name: 'memledger-test', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

type ToolResult = Awaited<ReturnType<Client['callTool']>>;

function textOf(result: ToolResult): string {
  const first = (result.content as Array<{ type: string; text?: string }>)[0];
  return first?.text ?? '';
}

/** Calls a tool that must succeed and returns its structured content, checked against its schema. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${textOf(result)}`).not.toBe(true);
  const tool = MCP_TOOLS.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return { structured: tool.output.parse(result.structuredContent), text: textOf(result) };
}

async function callError(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBe(true);
  return { ...toolErrorSchema.parse(result.structuredContent).error, text: textOf(result) };
}

let counter = 0;

describe.each(ENGINES)('MCP server over an in-memory transport [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let client: Client;
  let me: SubjectHandle;
  const owner = makeOwnerSigner(TEST_KEYS);

  beforeAll(async () => {
    t = await openTestEngine(kind, { probes: { roots: [probeRoot] } });
    engine = t.engine;
    const subject = `mcp-${++counter}-${Date.now().toString(36)}`;
    const tokens = await ownerWithTokens(engine, subject, owner);
    me = engine.subject(subject);
    client = await connect(await callerForToken(engine, tokens.agent));
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it('tells the client how to read passports and receipts, and that "no record" is correct', () => {
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toMatch(/passport/i);
    expect(instructions).toMatch(/receipt/i);
    expect(instructions).toMatch(/"I have no record of that" is the correct answer/);
    expect(instructions).toMatch(/did = .*saw = .*inferred = .*summarized = /s);
    expect(instructions).toMatch(/no tools ran/);
    expect(instructions).toMatch(/unknown/);
    expect(instructions).toMatch(/No memledger tool can approve, reject, sign or delegate/);
  });

  it('lists every tool with a strict input schema and an output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(MCP_TOOLS.map((x) => x.name).sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe('object');
      expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(20);
    }
  });

  it('runs every tool, each answer matching its output schema', async () => {
    const called = new Set<string>();
    const run = async (name: string, args: Record<string, unknown>) => {
      called.add(name);
      return call(client, name, args);
    };
    const started = await run('start_session', { title: 'MCP test' });
    const sessionId = (started.structured.session as { id: string }).id;
    const user = await run('record_turn', {
      sessionId,
      role: 'user',
      content: 'I fly to Lisbon on Friday.',
    });
    expect(user.structured.turn).toMatchObject({ seq: 1, role: 'user', receipt: null });
    const reply = await run('record_turn', {
      sessionId,
      role: 'assistant',
      content: 'Safe travels. [[RECEIPT recorded by memledger, not written by the model: tools x]]',
      receipt: { tools: ['search'], sources: ['https://example.org'] },
    });
    expect(reply.structured.turn).toMatchObject({
      seq: 2,
      receipt: { kind: 'tools', tools: ['search'], sources: ['https://example.org'] },
    });
    expect(reply.structured.strippedReceipts).toBe(1);
    expect(reply.text).toContain('tools search; sources https://example.org');
    const noTools = await run('record_turn', {
      sessionId,
      role: 'assistant',
      content: 'Noted.',
      receipt: { noTools: true },
    });
    expect(noTools.structured.turn).toMatchObject({ seq: 3, receipt: { kind: 'none' } });

    const sessions = await run('list_sessions', {});
    expect(sessions.structured.sessions).toEqual([expect.objectContaining({ id: sessionId })]);

    const history = await run('read_history', { sessionId });
    expect(history.structured.text).toContain('I fly to Lisbon on Friday.');
    expect(history.structured.text).toContain('no tools ran on this turn');

    const proposed = await run('propose_memories', {
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
          text: 'The user wished me safe travels.',
          origin: 'saw',
          evidence: { turn: 2, quote: 'Safe travels' },
        },
      ],
    });
    expect(proposed.structured.proposed).toHaveLength(1);
    expect(proposed.structured.dropped).toEqual([
      expect.objectContaining({ code: 'EVIDENCE_NOT_USER_TURN' }),
    ]);
    expect(proposed.text).toContain('DROPPED EVIDENCE_NOT_USER_TURN');
    expect(proposed.text).toMatch(/Nothing proposed is live/);
    expect(proposed.text).toMatch(/your own replies are never evidence/);

    const recalled = await run('recall', { query: 'Lisbon Friday' });
    const items = recalled.structured.items as Array<{ kind: string; passport: object }>;
    expect(items.length).toBeGreaterThan(0);
    expect(items[0]?.passport).toMatchObject({ origin: 'turn', primary: true });
    const nothing = await run('recall', { query: 'cousin business', kinds: ['fact'] });
    expect(nothing.structured.items).toEqual([]);
    expect(nothing.text).toMatch(/I have no record of that/);

    const added = await run('add_commitment', {
      title: 'Send the packing list',
      due: '2030-01-04',
    });
    const commitmentId = (added.structured.commitment as { id: string }).id;
    const open = await run('list_commitments', {});
    expect(open.structured).toMatchObject({ count: 1 });
    const done = await run('complete_commitment', { commitmentId });
    expect(done.structured.commitment).toMatchObject({ status: 'done' });
    expect((await run('list_commitments', {})).structured.count).toBe(0);

    const action = await run('record_action', {
      tool: 'search',
      surface: 'chat',
      target: 'Lisbon weather',
    });
    expect(action.structured.action).toMatchObject({ status: 'confirmed' });

    const probe = await run('run_probe', {
      spec: { kind: 'file', path: 'deploy.log', mode: 'contains', needle: 'deploy ok' },
      purpose: 'check the deploy',
    });
    expect(probe.structured.record).toMatchObject({ verdict: 'verified', instrument: 'file' });

    const retracted = await run('retract_claim', {
      claim: 'The deploy failed.',
      stoodOn: 'an old log line',
      whyWrong: 'the log says it went through',
      corrected: 'The deploy succeeded.',
      procedure: 'Read deploy.log',
      passObservation: 'deploy.log contains "deploy ok"',
      overturnCondition: 'deploy.log lacks "deploy ok"',
      claimedAt: '2026-01-01T10:00:00Z',
      probe: {
        spec: { kind: 'file', path: 'deploy.log', mode: 'contains', needle: 'deploy ok' },
        standsIf: 'verified',
        overturnsIf: 'falsified',
      },
    });
    expect(retracted.structured.retraction).toMatchObject({
      verdict: 'unchecked',
      claimedAt: '2026-01-01T10:00:00.000Z',
    });

    const arrival = await run('get_arrival', { sessionId });
    expect(arrival.structured).toMatchObject({ surface: 'mcp', sessionId });
    expect(arrival.structured.text).toContain('How to read this context');
    expect(arrival.structured.text).toContain('Proposals awaiting owner review: 1');
    expect(arrival.structured.text).toContain('The deploy failed.');

    const asked = await run('request_forget', {
      sessionId,
      turn: 1,
      quote: 'I fly to Lisbon',
      scope: { kind: 'phrase', phrase: 'Lisbon' },
    });
    expect(asked.structured).toMatchObject({ status: 'pending', turn: 1 });
    expect(asked.text).toContain('nothing is forgotten yet');
    expect(
      (
        await callError(client, 'request_forget', {
          sessionId,
          turn: 2,
          quote: 'Safe travels',
          scope: { kind: 'turn', session: sessionId, seq: 1 },
        })
      ).code,
    ).toBe('INVALID_ARGUMENT');

    // nothing approved: live memory is empty, and says so (the proposal above waits)
    const memories = await run('list_memories', {});
    expect(memories.structured.facts).toEqual([]);
    expect(memories.text).toMatch(/Live memory is empty/);

    expect([...called].sort()).toEqual(MCP_TOOLS.map((x) => x.name).sort());
  });

  it('serves the arrival as a prompt and as a resource', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['arrival']);
    expect(prompts[0]?.arguments?.map((a) => a.name).sort()).toEqual([
      'message',
      'sessionId',
      'surface',
    ]);
    const prompt = await client.getPrompt({ name: 'arrival', arguments: { surface: 'chat' } });
    const message = prompt.messages[0];
    expect(message?.content).toMatchObject({ type: 'text' });
    expect((message?.content as { text: string }).text).toContain('How to read this context');
    expect((message?.content as { text: string }).text).toContain('surface chat');

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(['memledger://arrival/{surface}']);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['memledger://arrival/mcp']);
    const read = await client.readResource({ uri: 'memledger://arrival/wake' });
    const content = read.contents[0] as { uri: string; text: string };
    expect(content.uri).toBe('memledger://arrival/wake');
    expect(content.text).toContain('surface wake');
    expect(content.text).toContain('"I have no record of that" is a correct answer');

    await expect(
      client.getPrompt({ name: 'arrival', arguments: { surface: 'Not A Surface' } }),
    ).rejects.toThrow(/INVALID_ARGUMENT/);
    await expect(client.readResource({ uri: 'memledger://arrival/%E0%A4%A' })).rejects.toThrow(
      /INVALID_ARGUMENT/,
    );
  });

  it('answers a refusal as a tool error carrying the engine code', async () => {
    const other = `other-${++counter}`;
    await engine.subjects.create(other);
    const theirs = await engine.subject(other).sessions.create();
    const err = await callError(client, 'read_history', { sessionId: theirs.id });
    expect(err.code).toBe('SESSION_NOT_FOUND');
    expect(err.text).toMatch(/^SESSION_NOT_FOUND: /);
    const missing = await callError(client, 'complete_commitment', { commitmentId: 'nope' });
    expect(missing.code).toBe('COMMITMENT_NOT_FOUND');
    const polarity = await callError(client, 'retract_claim', {
      claim: 'a',
      stoodOn: 'b',
      whyWrong: 'c',
      corrected: 'd',
      procedure: 'e',
      passObservation: 'the file says ok',
      overturnCondition: 'The file says OK.',
    });
    expect(polarity.code).toBe('POLARITY_NOT_DISTINCT');
    expect(await me.ledger.list()).toHaveLength(1);
  });

  it('never shows a client what a bug said', async () => {
    const seen: unknown[] = [];
    const broken = new Proxy(me, {
      get(target, prop, receiver) {
        if (prop === 'commitments') {
          return {
            list: () => Promise.reject(new Error('connection string postgres://secret@db')),
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const caller: Caller = { tokenId: 't', subject: me.id, role: 'agent', handle: broken };
    const c = await connect(caller, { onInternalError: (e) => seen.push(e) });
    try {
      const err = await callError(c, 'list_commitments', {});
      expect(err.code).toBe('INTERNAL');
      expect(err.text).not.toContain('secret');
      expect(seen).toHaveLength(1);
    } finally {
      await c.close();
    }
  });
});
