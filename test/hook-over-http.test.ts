// A running `memledger serve` holds an embedded store open, so a Claude Code hook could not open
// it too (STORE_LOCKED): `hook … --url U --token-file F` goes through the server's HTTP API as
// the token's subject, records the same turns, and is refused like any other caller.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../src/index.js';
import { startServe, type RunningServe } from '../server/serve.js';
import { runCliCaptured } from './support/cli.js';
import { ownerWithTokens, type SubjectWithTokens } from './support/tokens.js';

const dir = mkdtempSync(join(tmpdir(), 'ml-hook-http-'));
const db = join(dir, 'store');
const transcript = join(dir, 'transcript.jsonl');
const input = join(dir, 'hook.json');
const line = (type: 'user' | 'assistant', n: number, content: unknown) =>
  JSON.stringify({
    type,
    uuid: `${type[0]}${n}`,
    timestamp: `2026-03-01T10:0${n}:00.000Z`,
    message: { role: type, ...(type === 'assistant' ? { id: `m${n}` } : {}), content },
  });

describe('hook stop and session-start over HTTP', () => {
  let engine: Engine;
  let running: RunningServe;
  let tokens: SubjectWithTokens;
  const tokenFile = join(dir, 'agent.token');
  const readerFile = join(dir, 'reader.token');

  beforeAll(async () => {
    engine = await createEngine({ db });
    tokens = await ownerWithTokens(engine, 'alice');
    writeFileSync(tokenFile, tokens.agent + '\n');
    writeFileSync(readerFile, tokens.reader + '\n');
    running = await startServe({ engine, host: '127.0.0.1', port: 0 });
    writeFileSync(
      transcript,
      [
        line('user', 1, 'I fly to Lisbon on Friday.'),
        line('assistant', 2, [
          { type: 'tool_use', id: 't1', name: 'WebSearch', input: { q: 'Lisbon' } },
        ]),
        line('user', 3, [{ type: 'tool_result', tool_use_id: 't1', content: 'sunny' }]),
        line('assistant', 4, [{ type: 'text', text: 'Sunny in Lisbon.' }]),
      ].join('\n') + '\n',
    );
    writeFileSync(
      input,
      JSON.stringify({
        session_id: 'claude-sess-1',
        transcript_path: transcript,
        hook_event_name: 'Stop',
        last_assistant_message: 'Sunny in Lisbon.',
      }),
    );
  });
  afterAll(async () => {
    await running?.close();
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const hook = (verb: string, extra: string[] = ['--token-file', tokenFile]) =>
    runCliCaptured(['hook', verb, '--input', input, '--url', running.url, ...extra, '--json']);

  it('records the new turns as the token\u2019s subject, once, with their receipts', async () => {
    // the store is held by the server: a hook on the store itself is refused
    const local = await runCliCaptured(['hook', 'stop', '--input', input, '--db', db, '--json']);
    expect(local.errorCode()).toBe('STORE_LOCKED');

    const r = await hook('stop');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ sessionId: 'claude-sess-1', recorded: 2, turns: 2 });
    const again = await hook('stop');
    expect(again.json()).toMatchObject({ recorded: 0, turns: 2 });
    const turns = await engine.subject('alice').history.turns('claude-sess-1');
    expect(turns.map((t) => [t.role, t.content, t.receipt?.kind ?? null])).toEqual([
      ['user', 'I fly to Lisbon on Friday.', null],
      ['assistant', 'Sunny in Lisbon.', 'tools'],
    ]);
    expect(turns[1]?.receipt).toMatchObject({ tools: ['WebSearch'] });
  });

  it('session-start prints the arrival the server assembles', async () => {
    const r = await hook('session-start');
    expect(r.code, r.stderr).toBe(0);
    const out = r.json() as { hookSpecificOutput: { additionalContext: string } };
    expect(out.hookSpecificOutput.additionalContext).toContain('[This session: 2 turns so far]');
  });

  it('is refused like any caller: a reader cannot record, a bad token or no server is an error code, exit 1', async () => {
    appendFileSync(transcript, line('user', 5, 'And back on Sunday.') + '\n');
    const reader = await hook('stop', ['--token-file', readerFile]);
    expect(reader.code).toBe(1);
    expect(reader.errorCode()).toBe('ROLE_FORBIDDEN');
    const badFile = join(dir, 'bad.token');
    writeFileSync(badFile, 'mlt_' + 'x'.repeat(43));
    expect((await hook('stop', ['--token-file', badFile])).errorCode()).toBe('TOKEN_INVALID');
    const gone = await runCliCaptured([
      'hook',
      'stop',
      '--input',
      input,
      '--url',
      'http://127.0.0.1:1/',
      '--token-file',
      tokenFile,
    ]);
    expect(gone.code).toBe(1);
    expect(gone.errorCode()).toBe('SERVER_UNREACHABLE');
    expect((await hook('stop', ['--token-file', tokenFile, '--subject', 'bob'])).errorCode()).toBe(
      'INVALID_ARGUMENT',
    );
    // none of the refusals recorded anything; the agent's token then records the new turn
    expect((await engine.subject('alice').sessions.get('claude-sess-1')).turnCount).toBe(2);
    expect((await hook('stop')).json()).toMatchObject({ recorded: 1, turns: 3 });
  });
});
