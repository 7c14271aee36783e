// The operation table is the one place an operation is declared: one added to it in a fixture must
// reach HTTP (and its OpenAPI document), MCP, the role table and the API reference with no other
// file changed, and a face must refuse to start when the table and its adapters disagree.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../src/index.js';
import { callerForToken } from '../server/access.js';
import { createHttpApp } from '../server/http/app.js';
import { OPERATION_KEY } from '../server/http/route-kit.js';
import { createMcpServer, toolsFor } from '../server/mcp/mcp-server.js';
import { toolErrorSchema } from '../server/mcp/mcp-schemas.js';
import {
  GENERATED_SECTIONS,
  renderOperationReference,
  renderRoleTable,
} from '../server/operations/docs.js';
import type { OperationSpec } from '../server/operations/operation.js';
import { OPERATION_TABLE } from '../server/operations/table.js';
import {
  AGENT_OPERATION,
  QUERY_NUMBER_OPERATION,
  THROWAWAY_OPERATION,
} from './fixtures/throwaway-operation.js';
import { docSection } from './support/doc-section.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { ownerWithTokens, type SubjectWithTokens } from './support/tokens.js';

const TABLE: readonly OperationSpec[] = [
  ...OPERATION_TABLE,
  THROWAWAY_OPERATION,
  AGENT_OPERATION,
  QUERY_NUMBER_OPERATION,
];
const PATH = '/v1/sessions/{sessionId}/turn-count';

interface OpenApi {
  paths: Record<string, Record<string, Record<string, unknown>>>;
}

let counter = 0;

describe.each(ENGINES)('an operation added to the table [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let mine: SubjectWithTokens;
  let sessionId: string;

  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
    const subject = `optable-${++counter}-${Date.now().toString(36)}`;
    mine = await ownerWithTokens(engine, subject);
    const me = engine.subject(subject);
    // a title a model must not read raw: a right-to-left override
    const session = await me.sessions.create({ title: 'plan \u202Eevil' });
    sessionId = session.id;
    await me.turns.add({ sessionId, role: 'user', content: 'I like tea.' });
    await me.turns.add({
      sessionId,
      role: 'assistant',
      content: 'Noted.',
      receipt: { noTools: true },
    });
  });
  afterAll(() => t.close());

  const get = (app: ReturnType<typeof createHttpApp>, path: string, token: string) =>
    app.request(path, { headers: { authorization: `Bearer ${token}` } });

  it('is a route of the OpenAPI document, named by its operation, with its path and query fields', async () => {
    const app = createHttpApp({ engine, operations: TABLE });
    const doc = (await (await app.request('/openapi.json')).json()) as OpenApi;
    const op = doc.paths[PATH]?.get;
    expect(op?.[OPERATION_KEY]).toBe('history.countTurns');
    expect(op?.summary).toBe(THROWAWAY_OPERATION.doc);
    const params = op?.parameters as Array<{ name: string; in: string }>;
    expect(params.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['path:sessionId', 'query:role']);
    // negative control: the table as it ships has no such route
    const shipped = (await (
      await createHttpApp({ engine }).request('/openapi.json')
    ).json()) as OpenApi;
    expect(shipped.paths[PATH]).toBeUndefined();
  });

  it('answers over HTTP within its role, and refuses what its input does not name', async () => {
    const app = createHttpApp({ engine, operations: TABLE });
    const path = `/v1/sessions/${sessionId}/turn-count`;
    const all = await get(app, path, mine.reader);
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual({ sessionId, role: null, count: 2 });
    const users = await get(app, `${path}?role=user`, mine.reader);
    expect(await users.json()).toEqual({ sessionId, role: 'user', count: 1 });
    const extra = await get(app, `${path}?limit=3`, mine.reader);
    expect(extra.status).toBe(400);
    expect(await extra.json()).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    // a path parameter is the path's: the query cannot name it
    const aimed = await get(app, `${path}?sessionId=${sessionId}x`, mine.reader);
    expect(aimed.status).toBe(400);
    const badRole = await get(app, `${path}?role=owner`, mine.reader);
    expect(badRole.status).toBe(400);
    expect((await app.request(path)).status).toBe(401);
    // an agent's operation: a reader is refused, an agent answered, the stored title shown
    const titlePath = `/v1/sessions/${sessionId}/title`;
    const post = (token: string) =>
      app.request(titlePath, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    const refused = await post(mine.reader);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'ROLE_FORBIDDEN' } });
    const answered = await post(mine.agent);
    expect(answered.status).toBe(200);
    const { title } = (await answered.json()) as { title: string };
    expect(title).toContain('plan');
    expect(title).not.toContain('\u202E');
    // a number in a GET's query is read from its string once, as the input says
    const seqs = `/v1/sessions/${sessionId}/first-seqs`;
    expect(await (await get(app, `${seqs}?limit=1`, mine.reader)).json()).toEqual({ seqs: [1] });
    expect(await (await get(app, seqs, mine.reader)).json()).toEqual({ seqs: [1, 2] });
    for (const bad of ['0', '11', 'x', '1.5']) {
      const res = await get(app, `${seqs}?limit=${bad}`, mine.reader);
      expect(res.status, bad).toBe(400);
      expect(await res.json(), bad).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    }
    // negative control: the shipped table has no such route
    expect((await get(createHttpApp({ engine }), path, mine.reader)).status).toBe(404);
  });

  it('is an MCP tool in tools/list, called within its role', async () => {
    const connect = async (token: string, operations?: readonly OperationSpec[]) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const caller = await callerForToken(engine, token);
      await createMcpServer(caller, operations ? { operations } : {}).connect(serverSide);
      const client = new Client({ name: 'optable-test', version: '1.0.0' });
      await client.connect(clientSide);
      return client;
    };
    const reader = await connect(mine.reader, TABLE);
    try {
      const { tools } = await reader.listTools();
      const tool = tools.find((x) => x.name === 'count_turns');
      expect(tool?.description).toBe(THROWAWAY_OPERATION.doc);
      expect(tool?.annotations?.readOnlyHint).toBe(true);
      expect(Object.keys(tool?.inputSchema.properties ?? {}).sort()).toEqual(['role', 'sessionId']);
      const result = await reader.callTool({ name: 'count_turns', arguments: { sessionId } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ sessionId, role: null, count: 2 });
      expect(result.content).toEqual([{ type: 'text', text: '2 turns' }]);
      const bad = await reader.callTool({ name: 'count_turns', arguments: { sessionId: 7 } });
      expect(toolErrorSchema.parse(bad.structuredContent).error.code).toBe('INVALID_ARGUMENT');
      // an agent's tool is not listed to a reader, and one called anyway is not there
      expect(tools.map((x) => x.name)).not.toContain('session_title');
      await expect(
        reader.callTool({ name: 'session_title', arguments: { sessionId } }),
      ).rejects.toThrow(/not found/i);
    } finally {
      await reader.close();
    }
    const agent = await connect(mine.agent, TABLE);
    try {
      const shown = await agent.callTool({ name: 'session_title', arguments: { sessionId } });
      expect(JSON.stringify(shown.structuredContent)).toContain('plan');
      expect(JSON.stringify(shown.structuredContent)).not.toContain('\u202E');
      // the tool's own text is made from the shown answer too
      const text = (shown.content as Array<{ text: string }>)[0]?.text ?? '';
      expect(text).toMatch(/^title: plan /);
      expect(text).not.toContain('\u202E');
    } finally {
      await agent.close();
    }
    // negative control: the shipped table offers no such tool
    const shipped = await connect(mine.reader);
    try {
      expect((await shipped.listTools()).tools.map((x) => x.name)).not.toContain('count_turns');
    } finally {
      await shipped.close();
    }
  });
});

describe('the docs made from the table', () => {
  it('hold a row and a reference line for an added operation, and the shipped docs none', () => {
    const row = renderRoleTable(TABLE)
      .split('\n')
      .find((line) => line.includes('`history.countTurns`'));
    expect(row).toMatch(
      /\| reader\s+\| `GET \/v1\/sessions\/\{sessionId\}\/turn-count`\s*\| `count_turns`/,
    );
    expect(renderOperationReference(TABLE)).toContain(
      '- `history.countTurns` (reader): How many turns a session holds, of one role or all (a test fixture). HTTP `GET /v1/sessions/{sessionId}/turn-count`; MCP `count_turns`. Input: `sessionId` (string), `role?` (string).',
    );
    for (const { file } of GENERATED_SECTIONS) {
      const doc = readFileSync(resolve(import.meta.dirname, '..', file), 'utf8');
      expect(doc, file).not.toContain('countTurns');
    }
  });

  it('equal, in docs/SERVER.md and docs/API.md, what the shipped table renders', () => {
    for (const { file, marker, render } of GENERATED_SECTIONS) {
      const section = docSection(file, marker);
      expect(section.trim(), `${file}: run npm run docs:operations`).toBe(render(OPERATION_TABLE));
    }
  });
});

describe('a face whose adapters and table disagree', () => {
  const bare: OperationSpec = {
    name: 'facts.bare',
    role: 'reader',
    doc: 'An operation with faces and nothing to run them',
    http: { method: 'get', path: '/v1/bare', tag: 'gate' },
    mcp: { tools: ['bare'] },
  };

  it('does not start: an operation with no route or tool, or a route or tool of none', async () => {
    const t = await openTestEngine('pglite');
    try {
      expect(() =>
        createHttpApp({ engine: t.engine, operations: [...OPERATION_TABLE, bare] }),
      ).toThrow(/facts\.bare has no route/);
      const withoutRecall = OPERATION_TABLE.filter((op) => op.name !== 'recall.search');
      expect(() => createHttpApp({ engine: t.engine, operations: withoutRecall })).toThrow(
        /recall\.search is not in the table/,
      );
      // a static path after a parameter's: the earlier route would answer it
      const settleAll: OperationSpec = {
        ...THROWAWAY_OPERATION,
        name: 'ledger.settleAll',
        http: { method: 'post', path: '/v1/retractions/all/settle', tag: 'ledger' },
        mcp: {},
      };
      expect(() =>
        createHttpApp({ engine: t.engine, operations: [...OPERATION_TABLE, settleAll] }),
      ).toThrow(
        /\/v1\/retractions\/all\/settle is answered by \/v1\/retractions\/\{retractionId\}\/settle/,
      );
      // negative control: the shipped table starts
      expect(() => createHttpApp({ engine: t.engine })).not.toThrow();
    } finally {
      await t.close();
    }
    expect(() => toolsFor([...OPERATION_TABLE, bare])).toThrow(
      /bare \(facts\.bare\) has no adapter and no call/,
    );
    expect(() => toolsFor(OPERATION_TABLE.filter((op) => op.name !== 'recall.search'))).toThrow(
      /recall is in no operation/,
    );
    expect(() => toolsFor([...OPERATION_TABLE, THROWAWAY_OPERATION, THROWAWAY_OPERATION])).toThrow(
      /count_turns is named twice/,
    );
    expect(toolsFor(OPERATION_TABLE).map((x) => x.name)).toContain('recall');
  });
});
