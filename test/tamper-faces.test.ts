// Every case of the tamper matrix (test/support/tamper-cases.ts) on every face a model reads: the CLI (memory, arrival as text, json and
// anthropic, recall), HTTP (facts, arrival, recall) and MCP (get_arrival, recall) over stdio (the
// command's line server on in-process streams) and over Streamable HTTP (a real `serve`), each read
// by a process that holds the owner's anchor (the key file beside it). After each tamper, no face
// shows the forged or no-longer-backed text, and each face that carries an integrity block names
// the code the anchored `chain verify` names (a face whose token the anchor refuses shows nothing
// at all, and says why). Issue 33 counts these 12 faces, 8 of them with an integrity block.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callerForToken } from '../server/access.js';
import { createHttpApp } from '../server/http/app.js';
import { startServe } from '../server/serve.js';
import { isEngineError, recordKeyFileHead, type Engine } from '../src/index.js';
import { runCliCaptured } from './support/cli.js';
import { ENGINES } from './support/engines.js';
import { request } from './support/http.js';
import { stdioClient, textOf } from './support/mcp.js';
import type { SharedEngines } from './support/shared-engines.js';
import { TAMPER_CASES } from './support/tamper-cases.js';
import { forgeAssertedVerdict, proposeFromQuestion, RECOUNTED } from './support/tampers.js';
import { trustStore, type TrustFixture, type TrustStore } from './support/trust-fixture.js';

/** What recall is asked after a case: two of the hidden text's words (a face echoes its query). */
const queryFor = (hidden: string): string =>
  hidden
    .split(/\W+/)
    .filter((w) => w.length > 3 && w !== 'user')
    .slice(0, 2)
    .join(' ');

/** One face's answer: its text, and whether it carries an integrity block. */
interface Face {
  face: string;
  text: string;
  integrity: boolean;
}

const home = mkdtempSync(join(tmpdir(), 'memledger-faces-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe.each(ENGINES)('every face after a tamper [%s]', (kind) => {
  let store: TrustStore;
  beforeAll(async () => {
    store = await trustStore(kind);
  });
  afterAll(() => store.close());
  let f: TrustFixture | null = null;
  const opened: Engine[] = [];
  afterEach(async () => {
    for (const e of opened.splice(0)) await e.close();
    await f?.close();
    f = null;
  });

  /** An engine on the fixture's store as a new process opens it, holding the owner's anchor. */
  async function open(fx: TrustFixture): Promise<Engine> {
    const engine = await fx.openAnother({ anchor: (s) => fx.anchor(s) });
    opened.push(engine);
    return engine;
  }

  /** The CLI in-process, its engine opened on the fixture's store with the CLI's own anchor. */
  function cliOn(fx: TrustFixture): (args: string[]) => Promise<string> {
    const engines: SharedEngines = {
      open: async (config) => {
        const engine = await fx.openAnother(
          config.anchor === undefined ? {} : { anchor: config.anchor },
        );
        return { engine, release: () => engine.close() };
      },
      engineFor: () => undefined,
      close: async () => undefined,
    };
    return async (args) => {
      const r = await runCliCaptured(
        [...args, '--subject', fx.subject, '--key', fx.keyFile, '--db', fx.db],
        {},
        { homeDir: home, engines },
      );
      return `${r.stdout}${r.stderr}`;
    };
  }

  /** What a model is shown of the fixture's subject, through every face. */
  async function faces(fx: TrustFixture, token: string, query: string): Promise<Face[]> {
    const cli = cliOn(fx);
    const out: Face[] = [
      { face: 'cli memory', text: await cli(['memory']), integrity: true },
      {
        face: 'cli arrival text',
        text: await cli(['arrival', '--surface', 'chat']),
        integrity: true,
      },
      {
        face: 'cli arrival json',
        text: await cli(['arrival', '--surface', 'chat', '--format', 'json']),
        integrity: true,
      },
      {
        face: 'cli arrival anthropic',
        text: await cli(['arrival', '--surface', 'chat', '--format', 'anthropic']),
        integrity: true,
      },
      { face: 'cli recall', text: await cli(['recall', query, '--json']), integrity: false },
    ];
    const engine = await open(fx);
    const app = createHttpApp({ engine, onInternalError: () => undefined });
    const bearer = `Bearer ${token}`;
    const http = async (method: string, path: string, body?: unknown) =>
      JSON.stringify((await request(app, method, path, bearer, body)).json);
    out.push(
      { face: 'http facts', text: await http('GET', '/v1/facts'), integrity: true },
      {
        face: 'http arrival',
        text: await http('POST', '/v1/arrival', { surface: 'chat' }),
        integrity: true,
      },
      {
        face: 'http recall',
        text: await http('GET', `/v1/recall?q=${encodeURIComponent(query)}`),
        integrity: false,
      },
    );
    const running = await startServe({ engine, host: '127.0.0.1', port: 0 });
    try {
      const transports: Array<[string, () => Promise<Client>]> = [
        ['stdio', () => stdioClient(engine, token)],
        [
          'http',
          async () => {
            const client = new Client({ name: 'memledger-faces', version: '1.0.0' });
            await client.connect(
              new StreamableHTTPClientTransport(new URL(`${running.url}mcp`), {
                requestInit: { headers: { Authorization: bearer } },
              }),
            );
            return client;
          },
        ],
      ];
      for (const [transport, connect] of transports) {
        let mcp: { arrival: string; recall: string };
        try {
          const client = await connect();
          try {
            const arrival = await client.callTool({
              name: 'get_arrival',
              arguments: { surface: 'chat' },
            });
            const recalled = await client.callTool({ name: 'recall', arguments: { query } });
            mcp = {
              arrival: `${textOf(arrival)}${JSON.stringify(arrival.structuredContent)}`,
              recall: `${textOf(recalled)}${JSON.stringify(recalled.structuredContent)}`,
            };
          } finally {
            await client.close();
          }
        } catch (err) {
          // the anchored process refuses the token: the MCP session never starts
          const said = isEngineError(err) ? `${err.code}: ${err.message}` : String(err);
          if (!/TOKEN_INVALID/.test(said)) throw err;
          mcp = { arrival: said, recall: said };
        }
        out.push(
          { face: `mcp ${transport} get_arrival`, text: mcp.arrival, integrity: true },
          { face: `mcp ${transport} recall`, text: mcp.recall, integrity: false },
        );
      }
    } finally {
      await running.close();
    }
    return out;
  }

  it('the untampered store: every face shows what the owner signed, and none warns (negative control)', async () => {
    f = await store.fixture();
    const agent = await f.engine.subject(f.subject).owner.createToken({
      role: 'agent',
      signer: f.signer,
    });
    const all = await faces(f, agent.token, 'Lisbon nurse');
    expect(all).toHaveLength(12);
    for (const face of all) {
      expect(face.text, face.face).not.toMatch(
        /integrity warning|"integrity":\{"ok":false|TOKEN_INVALID|not anchored/i,
      );
      expect(face.text, face.face).not.toContain(
        'This memory was checked against the owner key stored',
      );
    }
    for (const face of all.filter((x) => !x.face.includes('recall'))) {
      expect(face.text, face.face).toContain('night nurse');
    }
  });

  for (const c of TAMPER_CASES) {
    it(`${c.name}: no face shows it, every integrity face names ${c.anchored}`, async () => {
      f = await store.fixture();
      const agent = await f.engine.subject(f.subject).owner.createToken({
        role: 'agent',
        signer: f.signer,
      });
      await c.tamper(f);
      const all = await faces(f, agent.token, queryFor(c.hidden));
      for (const face of all) {
        expect(face.text, face.face).not.toContain(c.hidden);
        if (face.integrity) {
          const refused = /TOKEN_INVALID/.test(face.text);
          expect(
            refused || face.text.includes(c.anchored),
            `${face.face}: ${face.text.slice(0, 300)}`,
          ).toBe(true);
          // in words, or (a JSON list of live facts) as its integrity verdict
          if (!refused)
            expect(face.text, face.face).toMatch(/integrity warning|"integrity":\{"ok":false/i);
        }
      }
    });
  }

  it("a pending proposal's verdict forged to asserted: every arrival face counts the gate's verdict and says one was stored otherwise", async () => {
    f = await store.fixture();
    const agent = await f.engine.subject(f.subject).owner.createToken({
      role: 'agent',
      signer: f.signer,
    });
    const id = await proposeFromQuestion(f);
    const arrivals = (all: Face[]) => all.filter((x) => /arrival/.test(x.face));
    // negative control: before the tamper, the gate's verdicts and nothing said to differ
    for (const face of arrivals(await faces(f, agent.token, 'allergic peanuts'))) {
      expect(face.text, face.face).toContain('1 presupposed, 1 paraphrase_unverified');
      expect(face.text, face.face).not.toContain(RECOUNTED);
    }
    await forgeAssertedVerdict(f, id);
    const all = await faces(f, agent.token, 'allergic peanuts');
    expect(arrivals(all)).toHaveLength(6);
    for (const face of arrivals(all)) {
      expect(face.text, face.face).toContain('1 presupposed, 1 paraphrase_unverified');
      expect(face.text, face.face).toContain(RECOUNTED);
    }
    // pending, it is live nowhere
    for (const face of all) expect(face.text, face.face).not.toContain('is allergic to peanuts');
  });

  it('a revoked token whose row was cleared is refused on the HTTP and MCP faces', async () => {
    f = await store.fixture();
    const made = await f.engine.subject(f.subject).owner.createToken({
      role: 'agent',
      signer: f.signer,
    });
    const revoked = await f.engine
      .subject(made.info.subject)
      .owner.revokeToken({ id: made.info.id, signer: f.signer });
    if (revoked.head !== undefined)
      recordKeyFileHead(f.keyFile, f.engine.storeId, f.subject, revoked.head);
    await f.tamper([`UPDATE access_tokens SET revoked_at = NULL WHERE id = $1`], [made.info.id]);
    const engine = await open(f);
    const app = createHttpApp({ engine, onInternalError: () => undefined });
    const answer = await request(app, 'GET', '/v1/facts', `Bearer ${made.token}`);
    expect(answer.status).toBe(401);
    expect(answer.json.error?.code).toBe('TOKEN_REVOKED');
    const write = await request(app, 'POST', '/v1/sessions', `Bearer ${made.token}`, {});
    expect(write.status).toBe(401);
    await expect(callerForToken(engine, made.token)).rejects.toMatchObject({
      code: 'TOKEN_REVOKED',
    });
  });
});
