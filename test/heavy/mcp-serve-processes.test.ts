// memledger's MCP and HTTP faces as real child processes: `memledger mcp` over stdio to the SDK's
// stdio client, and `memledger serve` started, probed and stopped with SIGTERM (the in-process
// Streamable HTTP and bad-input tests are in test/server-mcp-transports.test.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { MCP_TOOLS } from '../../server/mcp/mcp-server.js';
import { BUILT_CLI as MAIN, runBuiltCli } from '../support/cli.js';
import { ENGINES, testStore } from '../support/engines.js';
import { codeOf, initializeRequest } from '../support/mcp.js';
import { makeOwnerSigner, ownerWithTokens, type SubjectWithTokens } from '../support/tokens.js';

const tmp = mkdtempSync(join(tmpdir(), 'ml-mcp-processes-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const owner = makeOwnerSigner();
let counter = 0;

/** Runs `memledger …` to its end. */
const runCli = (args: string[]) => runBuiltCli(args, {});

describe.each(ENGINES)('memledger mcp over stdio, a child process [%s]', (kind) => {
  const store = testStore(kind, tmp);
  let tokens: SubjectWithTokens;
  let tokenFile: string;
  let subject: string;

  beforeAll(async () => {
    const engine = await createEngine({ db: store.db });
    try {
      subject = `stdio-${++counter}`;
      tokens = await ownerWithTokens(engine, subject, owner);
    } finally {
      await engine.close(); // a PGlite directory is one process's at a time
    }
    tokenFile = join(tmp, `token-${counter}`);
    writeFileSync(tokenFile, `  ${tokens.agent}\n\n`);
  });
  afterAll(() => store.cleanup());

  it('serves every tool to the SDK stdio client, writing nothing but the protocol to stdout', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp', '--db', store.db, '--token-file', tokenFile],
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(transport);
    let sessionId: string;
    try {
      expect(client.getInstructions()).toMatch(/passport/i);
      const { tools } = await client.listTools();
      expect(tools.map((x) => x.name).sort()).toEqual(MCP_TOOLS.map((x) => x.name).sort());
      const started = await client.callTool({
        name: 'start_session',
        arguments: { title: 'desk' },
      });
      sessionId = (started.structuredContent as { session: { id: string } }).session.id;
      const turn = await client.callTool({
        name: 'record_turn',
        arguments: { sessionId, role: 'user', content: 'I fly to Lisbon on Friday.' },
      });
      expect(turn.structuredContent).toMatchObject({ turn: { seq: 1 } });
      // bad input over the wire: a NUL, an oversize text, a wrong type, an unknown field
      const bad = [
        { sessionId, role: 'user', content: 'a\u0000b' },
        { sessionId, role: 'user', content: 'x'.repeat(1_000_001) },
        { sessionId, role: 'user', content: 42 },
        { sessionId, role: 'user', content: 'hi', corrective: true },
      ];
      for (const args of bad)
        expect(await codeOf(client, 'record_turn', args)).toBe('INVALID_ARGUMENT');
      const prompt = await client.getPrompt({ name: 'arrival', arguments: {} });
      expect(JSON.stringify(prompt.messages)).toContain('How to read this context');
    } finally {
      await client.close();
    }
    expect(stderr).not.toMatch(/INTERNAL/);

    // the child has let go of the store; what it wrote is there, and only that
    const engine = await createEngine({ db: store.db });
    try {
      const turns = await engine.subject(subject).history.turns(sessionId);
      expect(turns.map((x) => x.content)).toEqual(['I fly to Lisbon on Friday.']);
    } finally {
      await engine.close();
    }
  });

  it('refuses a bad token file, both or neither identity, and a revoked token, on stderr only', async () => {
    const empty = join(tmp, `empty-${++counter}`);
    writeFileSync(empty, ' \n');
    const cases: Array<[string[], string]> = [
      [['--token-file', empty], 'TOKEN_REQUIRED'],
      [['--token-file', join(tmp, 'no-such-file')], 'INVALID_ARGUMENT'],
      [['--token-file', tokenFile, '--subject', subject], 'INVALID_ARGUMENT'],
      [[], 'INVALID_ARGUMENT'],
    ];
    for (const [args, code] of cases) {
      const r = await runCli(['mcp', '--db', store.db, ...args]);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(JSON.parse(r.stderr), args.join(' ')).toMatchObject({ error: { code } });
    }
    const engine = await createEngine({ db: store.db });
    let revokedFile: string;
    try {
      const made = await engine
        .subject(subject)
        .owner.createToken({ role: 'agent', signer: owner.signer });
      await engine
        .subject(made.info.subject)
        .owner.revokeToken({ id: made.info.id, signer: owner.signer });
      revokedFile = join(tmp, `revoked-${counter}`);
      writeFileSync(revokedFile, made.token);
    } finally {
      await engine.close();
    }
    const r = await runCli(['mcp', '--db', store.db, '--token-file', revokedFile]);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toMatchObject({ error: { code: 'TOKEN_REVOKED' } });
  });

  it('answers a line that is not JSON, params that are an array and a wrong argument type', async () => {
    const child = spawn(
      process.execPath,
      [MAIN, 'mcp', '--db', store.db, '--token-file', tokenFile],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(((await answers.next()).value as string) ?? 'null');
    const send = (line: string) => child.stdin.write(`${line}\n`);
    try {
      send(initializeRequest(1, 'raw'));
      expect(await next()).toMatchObject({ id: 1, result: { serverInfo: { name: 'memledger' } } });
      send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      send('{"jsonrpc": "2.0", "id": 2, "method": ');
      expect(await next()).toMatchObject({ id: null, error: { code: -32700 } });
      send('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[]}');
      expect(await next()).toMatchObject({ id: 3, error: { code: -32600 } });
      send(
        '{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"arrival","arguments":{"message":5}}}',
      );
      expect(await next()).toMatchObject({ id: 4, error: { code: -32602 } });
      // and it goes on serving (control)
      send('{"jsonrpc":"2.0","id":5,"method":"ping"}');
      expect(await next()).toMatchObject({ id: 5, result: {} });
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });

  it('serves a local store with --subject and no token', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp', '--db', store.db, '--subject', subject],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop', version: '1.0.0' });
    await client.connect(transport);
    try {
      const listed = await client.callTool({ name: 'list_sessions', arguments: {} });
      expect(listed.isError).not.toBe(true);
      expect((listed.structuredContent as { sessions: unknown[] }).sessions).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe.each(ENGINES)('the memledger serve command [%s]', (kind) => {
  const store = testStore(kind, tmp);
  beforeAll(async () => {
    const engine = await createEngine({ db: store.db });
    await engine.close();
  });
  afterAll(() => store.cleanup());

  it('prints where it listens, serves, and closes cleanly on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [MAIN, 'serve', '--db', store.db, '--listen', '127.0.0.1:0', '--json'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const line = await new Promise<string>((done) => {
      createInterface({ input: child.stdout }).once('line', done);
    });
    const printed = JSON.parse(line) as { url: string; mcp: string; port: number };
    expect(printed.mcp).toBe(`${printed.url}mcp`);
    const health = await fetch(`${printed.url}healthz`);
    expect(await health.json()).toEqual({ ok: true });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // the store was closed cleanly: another process can open it
    const engine = await createEngine({ db: store.db });
    await engine.close();
  });

  it('refuses a non-loopback address without --allow-remote', async () => {
    const r = await runCli(['serve', '--db', store.db, '--listen', '0.0.0.0:0']);
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: { code: 'REMOTE_NOT_ALLOWED' } });
  });
});
