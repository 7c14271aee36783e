// [pglite] memledger/claude's hooks in the real Claude Agent SDK: `query()` spawns the Claude Code
// binary (@anthropic-ai/claude-agent-sdk-linux-x64), pointed at a fake Anthropic Messages API on
// loopback (ANTHROPIC_BASE_URL, streaming server-sent events as the API sends them), with
// memledger's hooks as the `hooks` option. The arrival (with an approved fact) reaches the model's
// request through UserPromptSubmit; the prompt and each reply are recorded with the tools Claude
// Code really ran (Read), or "no tools ran"; a fact edited in the database never reaches the model.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { query, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type FactId,
  type SubjectHandle,
} from '../../src/index.js';
import { storeClient } from '../../src/engine/test-access.js';
import { memledgerHooks } from '../../adapters/claude.js';
import { openTestEngine, type TestEngine } from '../support/engines.js';
import {
  say,
  startFakeAnthropic,
  toolResults,
  toolUse,
  type FakeAnthropic,
  type FakeMessage,
} from '../support/fake-anthropic.js';
import { TEST_KEYS } from '../support/test-keys.js';

const LISBON = 'The user flies to Lisbon on Friday.';
const tmp = mkdtempSync(join(tmpdir(), 'ml-claude-sdk-'));
const project = join(tmp, 'project');
const notes = join(project, 'notes.txt');

/** Everything the model was sent, as one string (system prompt, messages, reminders). */
const sent = (r: { body: Record<string, unknown> }): string => JSON.stringify(r.body);

/** The text of the conversation's last user message (a string or its text blocks). */
function lastUserText(c: readonly FakeMessage[]): string {
  const last = c.at(-1);
  if (last === undefined || last.role !== 'user') return '';
  return typeof last.content === 'string'
    ? last.content
    : last.content.map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n');
}

/**
 * The model: reads the notes file when asked about them (a real Read in Claude Code), answers
 * from the tool's result, and answers anything else in words.
 */
function model(c: FakeMessage[]) {
  const results = toolResults(c);
  const read = results.get('toolu_read');
  if (read !== undefined)
    return say(
      read.isError
        ? 'I could not read them.'
        : `Your notes: ${read.text.includes('passport') ? 'bring your passport' : '?'}.`,
    );
  if (lastUserText(c).includes('my notes')) {
    return toolUse('toolu_read', 'Read', { file_path: notes });
  }
  return say('You are welcome.');
}

describe('memledger hooks in the Claude Agent SDK [pglite]', () => {
  let t: TestEngine;
  let engine: Engine;
  let me: SubjectHandle;
  let factId: FactId;
  let fake: FakeAnthropic;

  beforeAll(async () => {
    mkdirSync(join(tmp, 'home'), { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(notes, 'Friday: bring your passport.\n');
    t = await openTestEngine('pglite');
    engine = t.engine;
    await engine.subjects.create('alice');
    me = engine.subject('alice');
    const keyPath = join(tmp, 'owner.key');
    writeOwnerKeyFile(keyPath, generateOwnerKey('pw', TEST_KEYS).keyFile);
    const signer = loadOwnerKey(keyPath, 'pw', TEST_KEYS);
    await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    await me.sessions.create({ id: 'earlier', title: 'Earlier' });
    await me.turns.add({
      sessionId: 'earlier',
      role: 'user',
      content: 'I fly to Lisbon on Friday.',
    });
    const { proposed } = await me.gate.propose({
      sessionId: 'earlier',
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: LISBON,
          origin: 'saw',
          evidence: { turn: 1, quote: 'I fly to Lisbon on Friday' },
        },
      ],
    });
    factId = proposed[0]?.id as FactId;
    await me.owner.decide({ proposalId: factId, decision: 'approve', signer });
    fake = await startFakeAnthropic(model);
  });
  afterAll(async () => {
    await fake?.close();
    await t?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** One prompt through Claude Code; its messages, and the session it ran in. */
  async function ask(
    prompt: string,
    resume?: string,
  ): Promise<{ sessionId: string; messages: SDKMessage[] }> {
    const errors: unknown[] = [];
    const messages: SDKMessage[] = [];
    const q = query({
      prompt,
      options: {
        cwd: project,
        model: 'claude-sonnet-4-5',
        ...(resume === undefined ? {} : { resume }),
        allowedTools: ['Read'],
        hooks: memledgerHooks(me, { onError: (err) => errors.push(err) }),
        env: {
          PATH: process.env.PATH ?? '',
          HOME: join(tmp, 'home'),
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_API_KEY: 'test',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1',
          DISABLE_ERROR_REPORTING: '1',
        },
      },
    });
    for await (const m of q) messages.push(m);
    expect(errors).toEqual([]);
    const result = messages.find((m) => m.type === 'result');
    expect(result).toMatchObject({ subtype: 'success' });
    return { sessionId: (result as { session_id: string }).session_id, messages };
  }

  it('joins the arrival in and records the prompt and the reply with the tools Claude Code ran', async () => {
    const first = fake.requests.length;
    const { sessionId, messages } = await ask('What do my notes say?');
    const requests = fake.requests.slice(first);
    // the arrival, with the approved fact, went to the model with the prompt
    expect(sent(requests[0] ?? { body: {} })).toContain(LISBON);
    expect(sent(requests[0] ?? { body: {} })).toContain('[This message is turn 1 of this session');
    // Claude Code really read the file (its result went back to the model)
    expect(
      requests.some((r) =>
        toolResults(r.conversation).get('toolu_read')?.text.includes('bring your passport'),
      ),
    ).toBe(true);
    expect(messages.some((m) => m.type === 'assistant')).toBe(true);

    const again = await ask('Thanks!', sessionId);
    expect(again.sessionId).toBe(sessionId);
    const turns = await me.history.turns(sessionId);
    expect(turns.map((x) => [x.role, x.content, x.receipt])).toEqual([
      ['user', 'What do my notes say?', null],
      [
        'assistant',
        'Your notes: bring your passport.',
        { kind: 'tools', tools: ['Read'], sources: [] },
      ],
      ['user', 'Thanks!', null],
      ['assistant', 'You are welcome.', { kind: 'none' }],
    ]);
  });

  it('never sends the model a fact edited in the database', async () => {
    await storeClient(engine).transaction(async (tx) => {
      await tx.exec('SET LOCAL session_replication_role = replica');
      await tx.query(`UPDATE facts SET text = $2 WHERE id = $1`, [
        factId,
        'The user flies to Pyongyang on Friday.',
      ]);
    });
    const first = fake.requests.length;
    await ask('Thanks!');
    const requests = fake.requests.slice(first);
    expect(requests.length).toBeGreaterThan(0);
    for (const r of requests) {
      expect(sent(r)).not.toContain('Pyongyang');
      expect(sent(r)).not.toContain(LISBON);
    }
  });
});
