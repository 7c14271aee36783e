/**
 * docs/INTEGRATIONS.md, tried: every code block it marks `<!-- tried: NAME -->` is run as
 * written, from a project directory where `npx memledger` is this build. MCP configurations are
 * started and spoken to by a real MCP client (stdio or Streamable HTTP); hook commands get the
 * documented hook input on stdin; the curl requests are sent with fetch to a running
 * `memledger serve`. `npx memledger` finds this build in the project (as after `npm install
 * memledger`) and elsewhere (as after `npm install -g memledger`), never the registry. Only the
 * doc's placeholders change: the project path, the PostgreSQL URL, and port 7777 (a free one).
 * A code block without a mark fails the test: nothing is shown that was not tried. Needs the build (`npx tsc -p tsconfig.build.json`), as the bin runs dist/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, pgUrlWithSchema, uniqueSchema } from '../support/engines.js';

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'dist/cli/main.js');
const DOC = readFileSync(join(ROOT, 'docs/INTEGRATIONS.md'), 'utf8');

/** The blocks the doc marks as tried, by name. */
function triedBlocks(doc: string): Map<string, { lang: string; body: string }> {
  const out = new Map<string, { lang: string; body: string }>();
  for (const m of doc.matchAll(/<!-- tried: ([\w-]+) -->\s*\n```(\w+)\n([\s\S]*?)\n```/g)) {
    out.set(m[1] ?? '', { lang: m[2] ?? '', body: m[3] ?? '' });
  }
  return out;
}
const BLOCKS = triedBlocks(DOC);
const block = (name: string): string => {
  const b = BLOCKS.get(name);
  if (b === undefined) throw new Error(`docs/INTEGRATIONS.md has no block "${name}"`);
  return b.body;
};

const tmp = mkdtempSync(join(tmpdir(), 'ml-integrations-'));
const project = join(tmp, 'project');
const elsewhere = join(tmp, 'elsewhere');
const schema = uniqueSchema();
const PG_PLACEHOLDER = 'postgres://127.0.0.1:5432/memledger';
const pgUrl = pgUrlWithSchema(schema);
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await dropSchema(schema);
});

/** The doc's placeholders, made real. */
const sub = (text: string): string =>
  text.replaceAll('/absolute/path/to/project', project).replaceAll(PG_PLACEHOLDER, pgUrl);

const env: Record<string, string> = {
  PATH: process.env.PATH ?? '',
  HOME: join(tmp, 'home'),
  // `npx memledger` must find this build, never the registry
  npm_config_offline: 'true',
  // and from outside the project (Claude Desktop, Cursor), this build as if installed globally
  npm_config_prefix: join(tmp, 'global'),
  npm_config_cache: join(tmp, 'npm-cache'),
  npm_config_update_notifier: 'false',
  MEMLEDGER_OWNER_PASSPHRASE: 'correct horse battery staple',
  MEMLEDGER_OWNER_KEY: join(tmp, 'home', 'owner.key'),
};

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one command line in a shell, in the project, with `stdin` piped in. */
function sh(command: string, stdin = '', cwd = project): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

async function ok(command: string, stdin = ''): Promise<string> {
  const r = await sh(command, stdin);
  expect(r.code, `${command}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

/** The command lines of a shell block: continuations joined, comments and blanks left out. */
function commandLines(body: string): string[] {
  return body
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** Shell words, with quotes and `$NAME` as sh reads them (enough for the doc's lines). */
function words(line: string, vars: Record<string, string> = {}): string[] {
  const out: string[] = [];
  let word: string | null = null;
  const expand = (s: string) => s.replace(/\$(\w+)/g, (_, n: string) => vars[n] ?? env[n] ?? '');
  for (const m of line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\s+)|([^\s'"]+)/g)) {
    if (m[3] !== undefined) {
      if (word !== null) out.push(word);
      word = null;
      continue;
    }
    const piece = m[1] ?? expand((m[2] ?? m[4] ?? '').replace(/\\(.)/g, '$1'));
    word = (word ?? '') + piece;
  }
  if (word !== null) out.push(word);
  return out;
}

interface StdioConfig {
  type?: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

/** An MCP client on a documented stdio server entry. */
async function stdioClient(config: StdioConfig, cwd = project): Promise<Client> {
  expect(config.type ?? 'stdio').toBe('stdio');
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    env: { ...env, ...(config.env ?? {}) },
    cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'integrations-doc', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(
      `${config.command} ${(config.args ?? []).join(' ')}: ${String(err)}\n${stderr}`,
      { cause: err },
    );
  }
  return client;
}

const textOf = (result: { content?: unknown }): string =>
  ((result.content as Array<{ text?: string }> | undefined) ?? [])
    .map((c) => c.text ?? '')
    .join('\n');

/** The server answers: its tools are listed, and a read names the sessions the store holds. */
async function sessionsSeen(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(
    expect.arrayContaining(['get_arrival', 'list_sessions']),
  );
  const result = await client.callTool({ name: 'list_sessions', arguments: {} });
  expect(result.isError ?? false, textOf(result)).toBe(false);
  return textOf(result);
}

const mcpServer = (json: string): StdioConfig => {
  const doc = JSON.parse(sub(json)) as { mcpServers: Record<string, StdioConfig> };
  const entry = doc.mcpServers.memledger;
  if (entry === undefined) throw new Error('no mcpServers.memledger entry');
  return entry;
};

type HookEvent = 'SessionStart' | 'Stop' | 'SessionEnd';
const hookCommand = (json: string, event: HookEvent): string => {
  const doc = JSON.parse(json) as {
    hooks: Record<string, Array<{ hooks: Array<{ type: string; command: string }> }>>;
  };
  const hook = doc.hooks[event]?.[0]?.hooks[0];
  expect(hook?.type).toBe('command');
  return hook?.command ?? '';
};

const SESSION_ID = '9d2b4c1e-4b7a-4f0e-9d51-3c1f2a7e8b10';
const FINAL = 'It will be sunny, 24°C.';
const line = (o: object) => JSON.stringify(o);
const TRANSCRIPT = [
  line({ type: 'user', uuid: 'u1', message: { role: 'user', content: 'Weather in Lisbon?' } }),
  line({
    type: 'assistant',
    uuid: 'a1',
    message: {
      id: 'msg_1',
      role: 'assistant',
      content: [{ type: 'tool_use', id: 't1', name: 'WebFetch', input: {} }],
    },
  }),
  line({
    type: 'user',
    uuid: 'u2',
    message: {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }],
    },
    toolUseResult: { url: 'https://weather.example/lisbon' },
  }),
  line({
    type: 'assistant',
    uuid: 'a2',
    message: { id: 'msg_2', role: 'assistant', content: [{ type: 'text', text: FINAL }] },
  }),
].join('\n');

describe('docs/INTEGRATIONS.md, tried', () => {
  beforeAll(async () => {
    if (!existsSync(MAIN))
      throw new Error(`${MAIN} is missing: run npx tsc -p tsconfig.build.json`);
    // A project where `npx memledger` resolves to this package, as after `npm install memledger`.
    mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    mkdirSync(env.HOME ?? '', { recursive: true });
    symlinkSync(ROOT, join(project, 'node_modules', 'memledger'));
    const bin = join(project, 'node_modules', '.bin', 'memledger');
    writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`, { mode: 0o755 });
    writeFileSync(join(project, 'package.json'), '{"name":"project","private":true}\n');
    mkdirSync(join(tmp, 'global', 'lib', 'node_modules'), { recursive: true });
    mkdirSync(join(tmp, 'global', 'bin'), { recursive: true });
    symlinkSync(ROOT, join(tmp, 'global', 'lib', 'node_modules', 'memledger'));
    writeFileSync(join(tmp, 'global', 'bin', 'memledger'), readFileSync(bin), { mode: 0o755 });
    writeFileSync(join(project, 'transcript.jsonl'), TRANSCRIPT + '\n');
  });

  it('marks every code block as tried', () => {
    const fences = DOC.match(/^```/gm)?.length ?? 0;
    expect(fences % 2).toBe(0);
    expect(BLOCKS.size, 'every code block is marked <!-- tried: NAME -->').toBe(fences / 2);
  });

  it('shows the framework adapters as the examples that run them (test/*-adapter tests)', () => {
    // a block named example-<file> (or example-<file>--<part>) is an excerpt of examples/<file>.ts,
    // which the adapters' tests run; indentation is the doc's own
    const lines = (text: string) =>
      text
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '')
        .join('\n');
    const excerpts = [...BLOCKS].filter(([name]) => name.startsWith('example-'));
    expect(excerpts.length).toBeGreaterThanOrEqual(4);
    for (const [name, b] of excerpts) {
      const file = name.slice('example-'.length).split('--')[0] ?? '';
      expect(b.lang, name).toBe('ts');
      expect(lines(readFileSync(join(ROOT, 'examples', `${file}.ts`), 'utf8')), name).toContain(
        lines(b.body),
      );
    }
    // negative control: a line the example does not hold is not found
    expect(lines(readFileSync(join(ROOT, 'examples', 'ai-sdk-chat.ts'), 'utf8'))).not.toContain(
      lines('const tools = memledgerTools(me, { sessionId: "other" });'),
    );
  });

  it('makes a store with the documented init', async () => {
    for (const command of commandLines(block('init'))) await ok(command);
    // something the arrival must carry, to tell it apart from an empty one
    await ok(`node ${MAIN} commitment add --title "Send the packing list"`);
  });

  it('Claude Code hooks: session-start prints the arrival, stop records the reply', async () => {
    const settings = block('claude-code-hooks');
    const start = await ok(
      hookCommand(settings, 'SessionStart'),
      sub(block('hook-input-session-start')),
    );
    expect(start).toContain('Send the packing list');
    const stop = await ok(hookCommand(settings, 'Stop'), sub(block('hook-input-stop')));
    expect(stop).toContain('recorded 2 turn(s)');
    const end = await ok(hookCommand(settings, 'SessionEnd'), sub(block('hook-input-stop')));
    expect(end).toContain('recorded 0 turn(s)');
    const history = JSON.parse(
      await ok(`node ${MAIN} history --session ${SESSION_ID} --format json --json`),
    ) as { turns: Array<{ role: string; content: string; receipt: unknown }> };
    expect(history.turns).toMatchObject([
      { role: 'user', content: 'Weather in Lisbon?' },
      {
        role: 'assistant',
        content: FINAL,
        receipt: {
          kind: 'tools',
          tools: ['WebFetch'],
          sources: ['https://weather.example/lisbon'],
        },
      },
    ]);
  });

  it('Claude Code MCP: `claude mcp add` and .mcp.json start a server on the project store', async () => {
    const [add] = commandLines(block('claude-code-mcp-add'));
    const argv = words(add ?? '');
    expect(argv.slice(0, 3)).toEqual(['claude', 'mcp', 'add']);
    const [command, ...args] = argv.slice(argv.indexOf('--') + 1);
    const fromAdd = await stdioClient({ command: command ?? '', args });
    try {
      expect(await sessionsSeen(fromAdd)).toContain(SESSION_ID);
      // What the doc says: every process shares the embedded store through its host. While the
      // MCP server holds a session of its own, both hooks (on another Claude session) and a
      // command run beside it, at once, and all succeed.
      const started = await fromAdd.callTool({ name: 'start_session', arguments: {} });
      expect(started.isError ?? false, textOf(started)).toBe(false);
      const mcpSession = (started.structuredContent as { session: { id: string } }).session.id;
      const other = '5b0c7a52-1f4e-4c8e-9a3d-2e6f0b9c4d71';
      const input = (name: string): string => sub(block(name)).replaceAll(SESSION_ID, other);
      const settings = block('claude-code-hooks');
      const [start, stop, command, recorded] = await Promise.all([
        sh(hookCommand(settings, 'SessionStart'), input('hook-input-session-start')),
        sh(hookCommand(settings, 'Stop'), input('hook-input-stop')),
        sh(`node ${MAIN} commitment add --title "Book the ferry"`),
        fromAdd.callTool({
          name: 'record_turn',
          arguments: { sessionId: mcpSession, role: 'user', content: 'Recorded through MCP' },
        }),
      ]);
      for (const r of [start, stop, command]) expect(r.code, r.stderr).toBe(0);
      expect(recorded.isError ?? false, textOf(recorded)).toBe(false);
      expect(stop.stdout).toContain('recorded 2 turn(s)');
      const turnsOf = async (session: string): Promise<string[]> =>
        (
          JSON.parse(
            await ok(`node ${MAIN} history --session ${session} --format json --json`),
          ) as { turns: Array<{ content: string }> }
        ).turns.map((t) => t.content);
      expect(await turnsOf(other)).toEqual(['Weather in Lisbon?', FINAL]);
      expect(await turnsOf(mcpSession)).toEqual(['Recorded through MCP']);
      // the MCP server still answers after them
      expect(await sessionsSeen(fromAdd)).toContain(other);
    } finally {
      await fromAdd.close();
    }
    const config = mcpServer(block('claude-code-mcp-json'));
    expect([config.command, ...(config.args ?? [])]).toEqual([command, ...args]);
    const client = await stdioClient(config);
    try {
      expect(await sessionsSeen(client)).toContain(SESSION_ID);
    } finally {
      await client.close();
    }
  });

  it('Claude Code MCP with a reader token: reads, and may not write', async () => {
    for (const command of commandLines(block('reader-token'))) await ok(command);
    const client = await stdioClient(mcpServer(block('claude-code-mcp-json-reader')));
    try {
      expect(await sessionsSeen(client)).toContain(SESSION_ID);
      // a reader is not shown the write tools, and one called anyway is not there
      const listed = (await client.listTools()).tools.map((t) => t.name);
      expect(listed).toContain('list_memories');
      expect(listed).not.toContain('start_session');
      await expect(client.callTool({ name: 'start_session', arguments: {} })).rejects.toThrow(
        /not found/i,
      );
    } finally {
      await client.close();
    }
  });

  it('Claude Desktop and Cursor: the absolute store path, from any directory', async () => {
    for (const name of ['claude-desktop', 'cursor']) {
      const client = await stdioClient(mcpServer(block(name)), elsewhere);
      try {
        expect(await sessionsSeen(client), name).toContain(SESSION_ID);
      } finally {
        await client.close();
      }
    }
  });

  it('hooks and MCP together on a PostgreSQL store', async () => {
    for (const command of commandLines(block('postgres-init'))) await ok(sub(command));
    const client = await stdioClient(mcpServer(block('claude-code-mcp-json-postgres')));
    try {
      const settings = sub(block('claude-code-hooks-postgres'));
      // while the MCP server has the store open
      const start = await ok(
        hookCommand(settings, 'SessionStart'),
        sub(block('hook-input-session-start')),
      );
      expect(start.length).toBeGreaterThan(0);
      const stop = await ok(hookCommand(settings, 'Stop'), sub(block('hook-input-stop')));
      expect(stop).toContain('recorded 2 turn(s)');
      expect(
        await ok(hookCommand(settings, 'SessionEnd'), sub(block('hook-input-stop'))),
      ).toContain('recorded 0 turn(s)');
      const seen = (await sessionsSeen(client)).split('\n').find((l) => l.includes(SESSION_ID));
      expect(seen).toContain('2 turns');
    } finally {
      await client.close();
    }
  });

  describe('HTTP', () => {
    let serve: ChildProcess | undefined;
    let base = '';

    afterAll(async () => {
      if (serve?.pid !== undefined && serve.exitCode === null) {
        const exited = new Promise((r) => serve?.once('exit', r));
        process.kill(-serve.pid, 'SIGTERM'); // the process group this test started
        await exited;
      }
    });

    it('serves with the documented token and command line', async () => {
      for (const command of commandLines(block('http-token'))) await ok(command);
      const [serveLine] = commandLines(block('http-serve'));
      expect(serveLine).toContain('127.0.0.1:7777');
      const argv = words((serveLine ?? '').replace('127.0.0.1:7777', '127.0.0.1:0'));
      serve = spawn(argv[0] ?? '', argv.slice(1), { cwd: project, env, detached: true });
      let out = '';
      base = await new Promise<string>((found, fail) => {
        serve?.stdout?.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /serving (http:\/\/\S+?)\/? /.exec(out);
          if (m?.[1] !== undefined) found(m[1]);
        });
        serve?.stderr?.on('data', (d: Buffer) => (out += d.toString()));
        serve?.once('exit', (code) => fail(new Error(`serve exited ${code}: ${out}`)));
      });
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    });

    it('answers every documented curl request', async () => {
      expect(base).not.toBe('');
      const vars: Record<string, string> = {};
      const answers: unknown[] = [];
      for (const command of commandLines(block('http-curl'))) {
        const exported = /^export (\w+)="\$\(cat ([^)]+)\)"$/.exec(command);
        if (exported !== null) {
          vars[exported[1] ?? ''] = readFileSync(join(project, exported[2] ?? ''), 'utf8').trim();
          continue;
        }
        const argv = words(command, vars);
        expect(argv[0], command).toBe('curl');
        let method = 'GET';
        let url = '';
        let body: string | undefined;
        const headers: Record<string, string> = {};
        for (let i = 1; i < argv.length; i += 1) {
          const a = argv[i] ?? '';
          if (a === '-s') continue;
          if (a === '-X') method = argv[++i] ?? '';
          else if (a === '-H') {
            const [k, ...v] = (argv[++i] ?? '').split(':');
            headers[k?.trim() ?? ''] = v.join(':').trim();
          } else if (a === '-d') body = argv[++i];
          else if (a.startsWith('http')) url = a.replace('http://127.0.0.1:7777', base);
          else throw new Error(`a curl option the test does not know: ${a}`);
        }
        const res = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
        const text = await res.text();
        expect(res.status, `${command}\n${text}`).toBeLessThan(300);
        answers.push(JSON.parse(text));
      }
      expect(answers).toHaveLength(5);
      expect(answers[0]).toMatchObject({ id: 'curl-demo' });
      const recall = answers[4] as { items: Array<{ text: string }> };
      expect(recall.items.map((i) => i.text)).toContain('I fly to Lisbon on Friday.');
    });

    it('speaks MCP over Streamable HTTP with the documented `claude mcp add`', async () => {
      const vars = { MEMLEDGER_TOKEN: readFileSync(join(project, 'agent.token'), 'utf8').trim() };
      const [add] = commandLines(block('http-mcp-add'));
      const argv = words(add ?? '', vars);
      expect(argv.slice(0, 3)).toEqual(['claude', 'mcp', 'add']);
      expect(argv[argv.indexOf('--transport') + 1]).toBe('http');
      const url = (argv.find((a) => a.startsWith('http://')) ?? '').replace(
        'http://127.0.0.1:7777',
        base,
      );
      const [name, ...value] = (argv[argv.indexOf('--header') + 1] ?? '').split(':');
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { [name ?? '']: value.join(':').trim() } },
      });
      const client = new Client({ name: 'integrations-doc', version: '1.0.0' });
      await client.connect(transport);
      try {
        expect(await sessionsSeen(client)).toContain('curl-demo');
      } finally {
        await client.close();
      }
    });

    it('Claude Code hooks through the running serve (the store is held): --url and --token-file', async () => {
      expect(base).not.toBe('');
      const settings = block('claude-code-hooks-serve').replaceAll('http://127.0.0.1:7777', base);
      const input = (name: string) =>
        sub(block(name)).replaceAll(SESSION_ID, 'hooks-through-serve');
      const start = await ok(
        hookCommand(settings, 'SessionStart'),
        input('hook-input-session-start'),
      );
      expect(start).toContain('Send the packing list');
      expect(await ok(hookCommand(settings, 'Stop'), input('hook-input-stop'))).toContain(
        'recorded 2 turn(s)',
      );
      expect(await ok(hookCommand(settings, 'SessionEnd'), input('hook-input-stop'))).toContain(
        'recorded 0 turn(s)',
      );
    });
  });
});
