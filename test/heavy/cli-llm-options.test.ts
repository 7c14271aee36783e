import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  startFakeLlm,
  type FakeLlm,
  type FakeLlmProtocol,
} from '../../eval/fake-llm/fake-llm-server.js';
import { DROP_CODES } from '../../src/index.js';
import { BUILT_CLI as MAIN, runBuiltCli, runCliCaptured } from '../support/cli.js';

const KEY = 'sk-cli-test-8c41f0d2';
const MODEL = 'fake-reflector-1';

const tmpRoot = mkdtempSync(join(tmpdir(), 'memledger-cli-llm-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));
const db = join(tmpRoot, 'store');
const ownerEnv = {
  MEMLEDGER_OWNER_PASSPHRASE: 'correct horse battery staple',
  MEMLEDGER_OWNER_KEY: join(tmpRoot, 'owner.key'),
};

type Run = Awaited<ReturnType<typeof runBuiltCli>>;

/**
 * Runs the built `memledger … --db <store> --json` as a child process. Asynchronously: the fake
 * LLM answers from this process's event loop.
 */
function memledger(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runBuiltCli([...args, '--db', db, '--json'], { HOME: tmpRoot, ...env });
}

/** The `{"error":{code,message}}` document a failed run prints on stderr. */
function errorOf(r: Run): { code: string; message: string } {
  expect(r.stdout).toBe('');
  return (JSON.parse(r.stderr) as { error: { code: string; message: string } }).error;
}

const fakes: FakeLlm[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});
async function fake(protocol: FakeLlmProtocol): Promise<FakeLlm> {
  const f = await startFakeLlm({ protocol, apiKey: KEY, model: MODEL });
  fakes.push(f);
  return f;
}

/** The turns the test records, and nothing else may become one. */
const TURNS: Array<[role: 'user' | 'assistant', text: string]> = [
  ['user', 'I live in Lisbon. My sister is called Ana.'],
  ['assistant', 'Noted: Lisbon, and your sister Ana.'],
  ['user', 'Did we talk about my trip to Rome last week?'],
  ['assistant', 'I have no record of that conversation.'],
];

let session = '';
let historyBefore: unknown;
/** Reflections that went through, for the usage count at the end. */
let reflections = 0;

beforeAll(async () => {
  expect(existsSync(MAIN), `${MAIN} is missing: npm run build first`).toBe(true);
  // the owner key is the built binary's to open: production strength
  const setup = (...args: string[]) =>
    runCliCaptured([...args, '--db', db, '--json'], ownerEnv, { keyCost: 'production' });
  expect((await setup('init')).code).toBe(0);
  const s = await setup('session', 'new');
  session = (s.json() as { sessionId: string }).sessionId;
  for (const [role, text] of TURNS) {
    expect(
      (await setup('turn', 'add', '--session', session, '--role', role, '--text', text)).code,
    ).toBe(0);
  }
  expect((await setup('slot', 'declare', '--name', 'facts', '--rule', 'user_fact')).code).toBe(0);
  expect(
    (await setup('slot', 'declare', '--name', 'corrections', '--rule', 'correction')).code,
  ).toBe(0);
  const h = await setup('history', '--session', session);
  expect(h.code).toBe(0);
  historyBefore = h.json();
});

const reflect = (args: string[] = [], env: Record<string, string> = {}) =>
  memledger(['reflect', '--session', session, ...args], env);

describe('memledger reflect: which model, from flags and the environment', () => {
  it('no URL and no environment is LLM_NOT_CONFIGURED', async () => {
    const r = await reflect();
    expect(r.code).toBe(1);
    const error = errorOf(r);
    expect(error.code).toBe('LLM_NOT_CONFIGURED');
    expect(error.message).toContain('MEMLEDGER_LLM_URL');
  });

  it('blank variables count as unset', async () => {
    const r = await reflect([], { MEMLEDGER_LLM_URL: '  ', MEMLEDGER_LLM_MODEL: '' });
    expect(errorOf(r).code).toBe('LLM_NOT_CONFIGURED');
  });

  it.each([
    ['--llm-model without --llm-url', ['--llm-model', MODEL], {}],
    ['MEMLEDGER_LLM_MODEL without a URL', [], { MEMLEDGER_LLM_MODEL: MODEL }],
    ['--llm-provider without --llm-url', ['--llm-provider', 'openai'], {}],
    ['--llm-timeout without --llm-url', ['--llm-timeout', '5'], {}],
  ])('%s is INVALID_ARGUMENT', async (_what, args, env: Record<string, string>) => {
    const r = await reflect(args, env);
    expect(r.code).toBe(2);
    const error = errorOf(r);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('--llm-url');
  });

  it('--llm-url without a model is INVALID_ARGUMENT, and no request is made', async () => {
    const f = await fake('openai');
    const r = await reflect(['--llm-url', f.url]);
    expect(r.code).toBe(2);
    const error = errorOf(r);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('--llm-model');
    expect(f.requests).toHaveLength(0);
  });

  it('--llm-provider bogus is INVALID_ARGUMENT, and no request is made', async () => {
    const f = await fake('openai');
    const r = await reflect(['--llm-url', f.url, '--llm-model', MODEL, '--llm-provider', 'bogus']);
    expect(r.code).toBe(2);
    const error = errorOf(r);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('bogus');
    expect(f.requests).toHaveLength(0);
  });

  it('a URL with credentials is INVALID_ARGUMENT and its password is not printed', async () => {
    const f = await fake('openai');
    const url = f.url.replace('http://', 'http://me:hunter2@');
    const r = await reflect(['--llm-url', url, '--llm-model', MODEL]);
    expect(r.code).toBe(2);
    expect(errorOf(r).code).toBe('INVALID_ARGUMENT');
    expect(r.stderr).not.toContain('hunter2');
    expect(f.requests).toHaveLength(0);
  });

  describe.each(['openai', 'anthropic'] as const)('over %s', (protocol) => {
    it('the environment alone reaches the model; the JSON names the run and the drops', async () => {
      const f = await fake(protocol);
      const r = await reflect([], {
        MEMLEDGER_LLM_URL: f.url,
        MEMLEDGER_LLM_MODEL: MODEL,
        MEMLEDGER_LLM_API_KEY: KEY,
        ...(protocol === 'anthropic' ? { MEMLEDGER_LLM_PROVIDER: 'anthropic' } : {}),
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const first = reflections === 0;
      reflections++;
      const out = r.stdout.trim();
      expect(out.split('\n')).toHaveLength(1);
      const doc = JSON.parse(out) as {
        reflection: {
          promptVersion: string;
          provider: string;
          model: string;
          sessionId: string;
          proposed: number;
          dropped: number;
          turns: { from: number; to: number };
          usage: { inputTokens: number; outputTokens: number };
        };
        proposed: unknown[];
        dropped: Array<{ code: string }>;
      };
      expect(doc.reflection).toMatchObject({
        promptVersion: expect.stringMatching(/^reflect-[0-9a-f]{12}$/),
        provider: protocol,
        model: MODEL,
        sessionId: session,
        turns: { from: 1, to: TURNS.length },
      });
      expect(doc.reflection.usage.inputTokens).toBeGreaterThan(0);
      expect(doc.reflection.usage.outputTokens).toBeGreaterThan(0);
      // the scripted model confabulates from the "no record" answer: the gate must drop that
      const codes = doc.dropped.map((d) => d.code);
      expect(codes).toContain('QUOTE_NOT_FOUND');
      for (const code of codes) expect(DROP_CODES).toContain(code);
      // the user's real statements reach the pile once; a later run proposes them again
      if (first) expect(doc.proposed.length).toBeGreaterThan(0);
      else expect(codes).toContain('DUPLICATE');
      expect(doc.reflection.dropped).toBe(doc.dropped.length);
      expect(doc.reflection.proposed).toBe(doc.proposed.length + doc.dropped.length);

      expect(f.requests).toHaveLength(1);
      const [req] = f.requests;
      expect(req?.path).toBe(protocol === 'openai' ? '/v1/chat/completions' : '/v1/messages');
      const keyHeader = protocol === 'openai' ? 'authorization' : 'x-api-key';
      expect(req?.headers[keyHeader]).toBe(protocol === 'openai' ? `Bearer ${KEY}` : KEY);
      expect(req?.raw).not.toContain(KEY);
    });

    it('a wrong key is LLM_FAILED with the provider’s 401', async () => {
      const f = await fake(protocol);
      const r = await reflect(
        ['--llm-url', f.url, '--llm-model', MODEL, '--llm-provider', protocol],
        {
          MEMLEDGER_LLM_API_KEY: 'sk-wrong',
        },
      );
      expect(r.code).toBe(1);
      const error = errorOf(r);
      expect(error.code).toBe('LLM_FAILED');
      expect(error.message).toContain('answered 401');
      expect(error.message).toContain(
        protocol === 'openai' ? 'Incorrect API key provided' : 'invalid x-api-key',
      );
      expect(r.stderr).not.toContain('sk-wrong');
      // a 401 is final: no retry
      expect(f.requests).toHaveLength(1);
    });
  });

  it('with no provider named, a non-Anthropic host is spoken to as openai', async () => {
    const f = await fake('anthropic');
    const r = await reflect(['--llm-url', f.url, '--llm-model', MODEL], {
      MEMLEDGER_LLM_API_KEY: KEY,
    });
    expect(errorOf(r).code).toBe('LLM_FAILED');
    expect(f.requests.map((q) => q.path)).toEqual(['/chat/completions']);
  });

  it('flags win over the environment (URL, model and provider)', async () => {
    const fromEnv = await fake('anthropic');
    const fromFlags = await fake('openai');
    const r = await reflect(
      ['--llm-url', fromFlags.url, '--llm-model', MODEL, '--llm-provider', 'openai'],
      {
        MEMLEDGER_LLM_URL: fromEnv.url,
        MEMLEDGER_LLM_MODEL: 'env-model',
        MEMLEDGER_LLM_PROVIDER: 'anthropic',
        MEMLEDGER_LLM_API_KEY: KEY,
      },
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    reflections++;
    expect(JSON.parse(r.stdout)).toMatchObject({
      reflection: { provider: 'openai', model: MODEL },
    });
    expect(fromEnv.requests).toHaveLength(0);
    expect(fromFlags.requests).toHaveLength(1);
    expect((fromFlags.requests[0]?.body as { model: string }).model).toBe(MODEL);
  });

  it('the model calls never became turns, and usage counts them as reflections', async () => {
    expect(reflections).toBe(3);
    const h = await memledger(['history', '--session', session]);
    expect(h.code).toBe(0);
    expect(JSON.parse(h.stdout)).toEqual(historyBefore);
    const turns = (historyBefore as { turns: Array<{ role: string; content: string }> }).turns;
    expect(turns.map((t) => [t.role, t.content])).toEqual(TURNS);

    const u = await memledger(['usage', '--session', session]);
    expect(u.code).toBe(0);
    const usage = (JSON.parse(u.stdout) as { usage: Array<Record<string, unknown>> }).usage;
    const rows = usage.filter((x) => x.kind === 'reflection');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ requests: reflections });
    expect(rows[0]?.inputTokens).toBeGreaterThan(0);
    expect(rows[0]?.outputTokens).toBeGreaterThan(0);
  });
});
