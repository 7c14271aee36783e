// A small agent on the Anthropic client with Claude's memory tool over memledger.
//
// Each run answers one message: it records what the user said, puts the arrival (what memledger
// knows, verified) into the system prompt, lets the model use the memory tool (it reads live facts
// as files under /memories; what it writes there is proposed through the write gate and waits for
// the owner's review), and records the reply with its receipt (the tools that ran).
//
//   ANTHROPIC_API_KEY=… node dist/examples/claude-memory-tool.js "I fly to Lisbon on Friday."
//
// ANTHROPIC_BASE_URL points the client elsewhere; MEMLEDGER_URL and MEMLEDGER_TOKEN (an agent
// token) name a running `memledger serve`, else the local store (MEMLEDGER_DB, default
// ./.memledger) is opened as MEMLEDGER_SUBJECT (default owner). MEMLEDGER_SESSION names the
// session (default: a new one per run).
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import { createEngine } from 'memledger';
import {
  MEMORY_TOOL_GUIDE,
  memledgerConversation,
  memledgerMemoryTool,
  type MemoryTarget,
} from 'memledger/claude';

export interface ExampleOptions {
  /** A subject handle, or `{ url, token }` of a running `memledger serve`. */
  memory: MemoryTarget;
  sessionId: string;
  prompt: string;
  /** The client's API key and base URL (default: the environment's). */
  anthropic?: { apiKey?: string; baseURL?: string };
  model?: string;
}

export async function main(options: ExampleOptions): Promise<{ reply: string; sessionId: string }> {
  const client = new Anthropic({
    ...(options.anthropic?.apiKey === undefined ? {} : { apiKey: options.anthropic.apiKey }),
    ...(options.anthropic?.baseURL === undefined ? {} : { baseURL: options.anthropic.baseURL }),
  });
  const conversation = memledgerConversation(options.memory, {
    sessionId: options.sessionId,
    title: 'Claude memory tool example',
  });
  const turn = await conversation.recordUser(options.prompt);
  const arrival = await conversation.arrival(options.prompt);
  const cite = `The user's message below is turn ${turn} of this session: cite its words as turn ${turn}.`;

  const runner = client.beta.messages.toolRunner({
    model: options.model ?? 'claude-sonnet-4-5',
    max_tokens: 2048,
    system: `${arrival}\n\n${MEMORY_TOOL_GUIDE}\n${cite}`,
    messages: [{ role: 'user', content: options.prompt }],
    tools: [memledgerMemoryTool(options.memory, { sessionId: options.sessionId })],
    max_iterations: 8,
    // the memory tool's beta (Anthropic's memory tool documentation)
    betas: ['context-management-2025-06-27'],
  });
  const final = await runner.runUntilDone();
  // everything after the prompt: the model's messages and the tools' results, the final one too
  const after = runner.params.messages.slice(1);
  await conversation.recordReply(after.at(-1)?.role === 'assistant' ? after : [...after, final]);
  const reply = final.content
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('')
    .trim();
  return { reply, sessionId: options.sessionId };
}

async function fromEnvironment(): Promise<void> {
  const prompt = process.argv.slice(2).join(' ').trim();
  if (prompt === '') {
    console.error('usage: claude-memory-tool "what you want to say"');
    process.exitCode = 2;
    return;
  }
  const sessionId = process.env.MEMLEDGER_SESSION ?? `claude-${randomUUID()}`;
  const url = process.env.MEMLEDGER_URL;
  const token = process.env.MEMLEDGER_TOKEN;
  if (url !== undefined && token !== undefined) {
    console.log((await main({ memory: { url, token }, sessionId, prompt })).reply);
    return;
  }
  const engine = await createEngine({ db: process.env.MEMLEDGER_DB ?? './.memledger' });
  try {
    const memory = engine.subject(process.env.MEMLEDGER_SUBJECT ?? 'owner');
    console.log((await main({ memory, sessionId, prompt })).reply);
  } finally {
    await engine.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await fromEnvironment();
}
