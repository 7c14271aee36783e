// adapters/agent-memory.ts: the agent's side of memory reads the same through a handle and
// through a running `memledger serve`, pages long sessions to their end, and takes nothing but a
// handle or a server and token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentMemoryOf, handleMemory, httpMemory } from '../adapters/agent-memory.js';
import type { Engine } from '../src/index.js';
import { startServe } from '../server/serve.js';
import { openTestEngine, type TestEngine } from './support/engines.js';
import { makeOwnerSigner, ownerWithTokens } from './support/tokens.js';

describe('the agent’s side of memory [pglite]', () => {
  let t: TestEngine;
  let engine: Engine;
  let url: string;
  let agent: string;
  let close: () => Promise<void>;
  const subject = 'agent-memory';

  beforeAll(async () => {
    t = await openTestEngine('pglite');
    engine = t.engine;
    const { signer, agent: token } = await ownerWithTokens(engine, subject, makeOwnerSigner());
    agent = token;
    const me = engine.subject(subject);
    await me.sessions.create({ id: 'long' });
    for (let i = 1; i <= 250; i++) {
      await me.turns.add({
        sessionId: 'long',
        role: i % 2 ? 'user' : 'assistant',
        content: `turn ${i}`,
      });
    }
    const { proposed } = await me.gate.propose({
      sessionId: 'long',
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user counts turns.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'turn 1' },
        },
      ],
    });
    await me.owner.decide({ proposalId: proposed[0]!.id, decision: 'approve', signer });
    const running = await startServe({ engine, host: '127.0.0.1', port: 0 });
    url = running.url;
    close = () => running.close();
  });
  afterAll(async () => {
    await close?.();
    await t?.close();
  });

  it('reads the same through a handle and through the server', async () => {
    const local = handleMemory(engine.subject(subject));
    const remote = httpMemory(url, agent);
    for (const last of [undefined, 3, 200, 230]) {
      const a = (await local.turns('long', last)).map((x) => x.seq);
      const b = (await remote.turns('long', last)).map((x) => x.seq);
      expect(b, `last ${last}`).toEqual(a);
      expect(b.length).toBe(last ?? 250);
      expect(b.at(-1)).toBe(250);
    }
    const [lf, rf] = [await local.liveFacts(), await remote.liveFacts()];
    expect(rf.map((f) => f.text)).toEqual(['The user counts turns.']);
    expect(rf[0]?.recordedAt).toBeInstanceOf(Date);
    expect(rf[0]?.recordedAt.getTime()).toBe(lf[0]?.recordedAt.getTime());
    expect(await remote.session('nope')).toBeNull();
    expect((await remote.session('long'))?.turnCount).toBe(250);
  });

  it('takes a handle or { url, token }, and nothing else', async () => {
    for (const bad of [{}, { url: 1, token: 'x' }, { gate: {} }, { url: 'http://x' }]) {
      expect(() => agentMemoryOf(bad as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    // positive control: both kinds are taken
    expect(typeof agentMemoryOf(engine.subject(subject)).propose).toBe('function');
    expect(typeof agentMemoryOf({ url, token: agent }).propose).toBe('function');
  });
});
