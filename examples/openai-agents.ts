// A small OpenAI Agents SDK agent with memledger memory: every message goes through one
// memledger session (the arrival in front of the history, each reply recorded with its receipt),
// and the agent can recall and propose memories (which wait for the owner's review).
//
// In a project with memledger and @openai/agents installed (TypeScript run with tsx, say):
//
//   OPENAI_API_KEY=… npx tsx openai-agents.ts "I fly to Lisbon on Friday." "When do I fly?"
//
// The store is MEMLEDGER_DB (default ./.memledger, made by `memledger init`); MEMLEDGER_URL and
// MEMLEDGER_TOKEN use a running `memledger serve` instead, as an agent token. OPENAI_BASE_URL
// points the SDK at another Responses API; OPENAI_MODEL names the model (default gpt-4.1-mini).
// `test/openai-agents-adapter.test.ts` runs `main` against a fake Responses API.
import { pathToFileURL } from 'node:url';
import { Agent, OpenAIProvider, Runner } from '@openai/agents';
import { createEngine } from 'memledger';
import { memledgerSession, memledgerTools, type MemoryTarget } from 'memledger/openai-agents';

export interface ExampleOptions {
  /** A subject handle or `{ url, token }` (default: from the environment, see above). */
  memory?: MemoryTarget;
  /** The memledger session of this conversation (default `openai-agents-example`). */
  sessionId?: string;
  apiKey?: string;
  baseURL?: string;
  model?: string;
}

/** Runs the agent on each message in turn, in one session; returns its replies. */
export async function main(
  messages: readonly string[],
  options: ExampleOptions = {},
): Promise<string[]> {
  let memory = options.memory;
  let close = async (): Promise<void> => undefined;
  if (memory === undefined) {
    const url = process.env.MEMLEDGER_URL;
    const token = process.env.MEMLEDGER_TOKEN;
    if (url !== undefined && token !== undefined) {
      memory = { url, token };
    } else {
      const engine = await createEngine({ db: process.env.MEMLEDGER_DB ?? './.memledger' });
      close = () => engine.close();
      await engine.subjects.create(); // the default subject, left as it is when it exists
      memory = engine.subject();
    }
  }
  try {
    const sessionId = options.sessionId ?? 'openai-agents-example';
    const session = memledgerSession(memory, { sessionId, title: 'OpenAI Agents example' });
    const tools = memledgerTools(memory, { sessionId });
    const agent = new Agent({
      name: 'Assistant',
      instructions:
        'You are a helpful assistant with a memory the user’s owner reviews. Read the memory in your context before answering. When the user tells you something worth keeping, propose it with propose_memories, quoting their own words; it is kept only once the owner approves it. Use recall to look up what was said before.',
      tools,
      model: options.model ?? process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
    });
    const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
    const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
    const runner = new Runner({
      modelProvider: new OpenAIProvider({
        useResponses: true,
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(baseURL === undefined ? {} : { baseURL }),
      }),
      // a trace holds the model's input, the arrival's memories among it
      tracingDisabled: true,
    });
    const replies: string[] = [];
    for (const message of messages) {
      const result = await runner.run(agent, message, {
        session,
        sessionInputCallback: session.withArrival,
      });
      replies.push(String(result.finalOutput ?? ''));
    }
    return replies;
  } finally {
    await close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const messages = process.argv.slice(2);
  for (const reply of await main(messages.length > 0 ? messages : ['What do you know about me?'])) {
    console.log(reply);
  }
}
