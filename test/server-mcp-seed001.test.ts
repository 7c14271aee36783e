// Seed 001 through MCP: a correct "no record" answer must not become a stored false confession.
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../src/index.js';
import { callerForToken } from '../server/access.js';
import { createMcpServer } from '../server/mcp/mcp-server.js';
import { SEED_001_CONFABULATED, SEED_001_DAY } from '../cli/commands/demo-gate.js';
import { ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { makeOwnerSigner, ownerWithTokens } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

/** The day of seed 001 and the overnight reflection's confabulations, as `memledger demo` has them. */
const DAY = SEED_001_DAY;
const CONFABULATED = SEED_001_CONFABULATED;

const REAL_STANCE = {
  slot: 'stances',
  text: 'Keep answers short; the user reads on a phone.',
  origin: 'saw',
  evidence: { turn: 5, quote: 'keep your answers short, I read these on my phone' },
};

interface ProposeOut {
  proposed: Array<{ id: string; slot: string; text: string; attested: boolean; status: string }>;
  dropped: Array<{ slot: string; text: string; code: string; reason: string }>;
}

describe.each(ENGINES)('seed 001 through MCP [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;
  let client: Client;
  let subject: string;

  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
    subject = `seed001-${Date.now().toString(36)}`;
    const { agent } = await ownerWithTokens(engine, subject, makeOwnerSigner(TEST_KEYS));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createMcpServer(await callerForToken(engine, agent)).connect(serverSide);
    client = new Client({ name: 'reflection', version: '1.0.0' });
    await client.connect(clientSide);
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it('drops every confabulated correction with its code; nothing is live; the pile shows', async () => {
    const started = await client.callTool({ name: 'start_session', arguments: {} });
    const sessionId = (started.structuredContent as { session: { id: string } }).session.id;
    for (const turn of DAY) {
      const r = await client.callTool({
        name: 'record_turn',
        arguments: {
          sessionId,
          ...turn,
          ...(turn.role === 'assistant' ? { receipt: { noTools: true } } : {}),
        },
      });
      expect(r.isError).not.toBe(true);
    }

    const result = await client.callTool({
      name: 'propose_memories',
      arguments: { sessionId, proposals: [...CONFABULATED, REAL_STANCE] },
    });
    expect(result.isError).not.toBe(true);
    const out = result.structuredContent as unknown as ProposeOut;
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';

    // Every self-blaming line comes back dropped, each with a code and a reason the model can read.
    expect(out.dropped).toHaveLength(CONFABULATED.length);
    expect(out.dropped.map((d) => d.text).sort()).toEqual(CONFABULATED.map((c) => c.text).sort());
    for (const d of out.dropped) {
      expect(d.code).toMatch(/^[A-Z_]+$/);
      expect(d.reason.length).toBeGreaterThan(10);
      expect(text).toContain(`DROPPED ${d.code} ${d.slot}: ${d.text}`);
    }
    const codeOf = (needle: string) => out.dropped.find((d) => d.text.includes(needle))?.code;
    expect(codeOf('directly validating his memory')).toBe('EVIDENCE_NOT_USER_TURN');
    expect(codeOf('acknowledge the significance')).toBe('NO_EVIDENCE');
    expect(codeOf('deeper pattern')).toBe('QUOTE_NOT_FOUND');
    expect(codeOf('from this afternoon')).toBe('TURN_NOT_FOUND');
    expect(codeOf('tend to forget')).toBe('UNKNOWN_SLOT');
    expect(codeOf("missing the user's message")).toBe('NO_CORRECTION_EVENT');
    expect(text).toMatch(/your own replies are never evidence/);
    expect(text).toMatch(/Nothing proposed is live/);

    // The one real stance waits for the owner; it is not live.
    expect(out.proposed).toEqual([
      expect.objectContaining({ slot: 'stances', text: REAL_STANCE.text, status: 'proposed' }),
    ]);
    const me = engine.subject(subject);
    expect(await me.facts.live()).toEqual([]);
    const logged = await me.gate.dropped();
    expect(logged.map((d) => d.code).sort()).toEqual(out.dropped.map((d) => d.code).sort());

    // The next arrival shows the pile count, and no confession as memory.
    const arrival = await client.callTool({ name: 'get_arrival', arguments: { sessionId } });
    const arrivalText = (arrival.structuredContent as { text: string }).text;
    expect(arrivalText).toContain('Proposals awaiting owner review: 1');
    expect(arrivalText).not.toMatch(/failed to recall|I was corrected/);
    expect(arrivalText).toContain('"I have no record of that" is a correct answer');

    // Recall finds the real day, and no stored confession.
    const recalled = await client.callTool({
      name: 'recall',
      arguments: { query: 'corrected failed to recall vendor contract', kinds: ['fact'] },
    });
    expect((recalled.structuredContent as { items: unknown[] }).items).toEqual([]);
    // facts alone were searched: the answer points to the turns (the real day), and does not
    // call "no record" the answer while a user turn may hold it
    const said = (recalled.content as { type: string; text: string }[])[0]?.text ?? '';
    expect(said).toContain('Only live facts were searched');
    expect(said).toContain('kinds ["turn"]');
    expect(said).not.toContain('is the correct answer');
  });
});
