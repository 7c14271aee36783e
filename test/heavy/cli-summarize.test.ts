// `memledger summarize` and `summarize list` as a user runs them: the built CLI as a child
// process, a real PGlite store, the fake model over the OpenAI protocol, an owner decision.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../eval/fake-llm/fake-llm-server.js';
import { UNSUPPORTED_SENTENCE } from '../../eval/fake-llm/scripted-summary.js';
import { BUILT_CLI as MAIN, runBuiltCli, runCliCaptured } from '../support/cli.js';

const root = mkdtempSync(join(tmpdir(), 'memledger-cli-summary-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const db = join(root, 'store');
const ownerEnv = {
  MEMLEDGER_OWNER_PASSPHRASE: 'correct horse battery staple',
  MEMLEDGER_OWNER_KEY: join(root, 'owner.key'),
};

/** The built CLI, asynchronously: the fake model answers from this process's event loop. */
function memledger(args: string[], env: Record<string, string> = {}) {
  return runBuiltCli([...args, '--db', db], { HOME: root, ...ownerEnv, ...env });
}

let fake: FakeLlm;
let session = '';
let llmEnv: Record<string, string> = {};

beforeAll(async () => {
  expect(existsSync(MAIN), `${MAIN} is missing: npm run build first`).toBe(true);
  fake = await startFakeLlm({ protocol: 'openai', apiKey: 'sk-sum', model: 'fake-writer' });
  llmEnv = {
    MEMLEDGER_LLM_URL: fake.url,
    MEMLEDGER_LLM_MODEL: 'fake-writer',
    MEMLEDGER_LLM_API_KEY: 'sk-sum',
  };
  // the owner key is the built binary's to open: production strength
  const setup = (...args: string[]) =>
    runCliCaptured([...args, '--db', db, '--json'], ownerEnv, { keyCost: 'production' });
  expect((await setup('init')).code).toBe(0);
  session = ((await setup('session', 'new')).json() as { sessionId: string }).sessionId;
  for (const [role, text] of [
    ['user', 'My sister moved to Porto last month.'],
    ['assistant', 'That is a long way.'],
    ['user', 'I have been sleeping badly since the move.'],
  ]) {
    expect(
      (await setup('turn', 'add', '--session', session, '--role', role!, '--text', text!)).code,
    ).toBe(0);
  }
});
afterAll(async () => fake.close());

describe('memledger summarize', () => {
  it('declares an aspect with a scope, and refuses a scope on another rule', async () => {
    const ok = await memledger([
      'slot',
      'declare',
      '--name',
      'presence',
      '--rule',
      'summary',
      '--scope',
      'session',
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('presence: summary (session)');
    const bad = await memledger([
      'slot',
      'declare',
      '--name',
      'x',
      '--rule',
      'user_fact',
      '--scope',
      'rolling',
      '--json',
    ]);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stderr).error.code).toBe('INVALID_ARGUMENT');
  });

  it('writes the summary to the pile, shows every verdict, and it goes live only when the owner approves', async () => {
    const r = await memledger(['summarize', '--aspect', 'presence', '--json'], llmEnv);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as {
      factId: string;
      sessionId: string;
      text: string;
      sentences: Array<{ text: string; verdict: string }>;
    };
    expect(s.sessionId).toBe(session);
    expect(s.sentences.find((x) => x.text === UNSUPPORTED_SENTENCE)?.verdict).toBe('unattested');
    expect(s.text).not.toContain('much better');

    const text = await memledger(['summarize', 'list', '--aspect', 'presence']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      'LEFT OUT unattested The user has been sleeping much better lately.',
    );
    expect(text.stdout).toMatch(/SUPPORTED .* \(from #\d/);

    expect((await memledger(['memory'])).stdout).toContain('no live memory');
    const d = await memledger(['decide', s.factId, 'approve']);
    expect(d.code, d.stderr).toBe(0);
    const memory = await memledger(['memory']);
    expect(memory.stdout).toMatch(/^\(summarized, \d+ \w+ \d{4}, from #\d+( #\d+)*\) presence: /m);
    expect(memory.stdout).not.toContain('much better');
  });

  it('an unknown aspect is SLOT_NOT_FOUND, and no model is called', async () => {
    const calls = fake.requests.length;
    const r = await memledger(['summarize', '--aspect', 'nope', '--json'], llmEnv);
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stderr).error.code).toBe('SLOT_NOT_FOUND');
    expect(fake.requests.length).toBe(calls);
  });
});
