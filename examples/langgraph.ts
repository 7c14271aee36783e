// A small LangGraph graph with memledger as its store (`memledger/langgraph`). The user's message
// is recorded as a turn; a memory quoting it is proposed with `store.put` (the write gate checks
// the quote; what passes waits for the owner, and is not read back until the owner approves);
// the reply searches memory, which holds only what the owner approved.
//
//   MEMLEDGER_DB=./.memledger node dist/examples/langgraph.js   (default: an in-memory store)
//
// In a real graph a model writes the proposal (its text, and the user's words it quotes); here a
// rule stands in for it, so the example runs without one.
import { pathToFileURL } from 'node:url';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import {
  END,
  MessagesAnnotation,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from '@langchain/langgraph';
import { createEngine, type Engine, type SubjectHandle } from 'memledger';
import { isProposalDropped, MemledgerStore } from 'memledger/langgraph';

/** Where the memories live: `['memories', <slot>]`, one of the subject's slots. */
const ABOUT_USER = ['memories', 'what_i_know_about_user'];

/** What the last message of the state says. */
const lastText = (state: typeof MessagesAnnotation.State): string =>
  state.messages[state.messages.length - 1]?.text ?? '';

/** The graph: remember (record the turn, propose a memory), then answer (search, reply). */
export function exampleGraph(store: MemledgerStore) {
  return new StateGraph(MessagesAnnotation)
    .addNode('remember', async (state, config: LangGraphRunnableConfig) => {
      // the user's message becomes turn N of the session: a memory can quote it
      const [turn] = await store.recordMessages(state.messages.slice(-1));
      const said = /\bI am ([a-z][a-z -]{1,60}[a-z])/i.exec(lastText(state));
      if (turn?.seq == null || said === null) return {};
      try {
        // the put is a proposal: its text, and the user's own words it rests on
        await config.store?.put(ABOUT_USER, 'self', {
          text: `The user is ${said[1]}.`,
          evidence: { turn: turn.seq, quote: said[0] },
        });
      } catch (err) {
        // the gate dropped it (err.code says why): nothing was stored
        if (!isProposalDropped(err)) throw err;
      }
      return {};
    })
    .addNode('answer', async (state, config: LangGraphRunnableConfig) => {
      // only what the owner approved, each with its passport line
      const found = (await config.store?.search(['memories'], { query: lastText(state) })) ?? [];
      const waiting = await store.pending();
      const reply = new AIMessage(
        [
          found.length > 0
            ? `What I remember: ${found.map((i) => String(i.value.line)).join(' | ')}`
            : 'Nothing in approved memory answers that.',
          ...(waiting.length > 0
            ? [
                `${waiting.length} memory proposal(s) wait for the owner's review; I will remember once they are approved.`,
              ]
            : []),
        ].join(' '),
      );
      await store.recordMessages([reply]); // the reply, with its receipt (no tools ran)
      return { messages: [reply] };
    })
    .addEdge(START, 'remember')
    .addEdge('remember', 'answer')
    .addEdge('answer', END);
}

export interface ExampleRun {
  sessionId: string;
  reply: string;
  /** The proposals this run made that wait for the owner. */
  pending: Array<{ proposalId: string; text: string }>;
  /** How many memories the store reads as live. */
  live: number;
}

/**
 * Runs the graph once on `message`, with memory in `memory` (a subject handle), or else in the
 * store at MEMLEDGER_DB (the default subject), or else in an in-memory store.
 */
export async function main(
  options: { memory?: SubjectHandle; message?: string; sessionId?: string } = {},
): Promise<ExampleRun> {
  let engine: Engine | null = null;
  let me = options.memory;
  if (me === undefined) {
    engine = await createEngine({ db: process.env.MEMLEDGER_DB ?? 'memory://', shared: true });
    await engine.subjects.create(); // the default subject; a store that has it keeps it
    me = engine.subject();
  }
  try {
    const sessionId = options.sessionId ?? `langgraph-${Date.now().toString(36)}`;
    const store = new MemledgerStore(me, { sessionId, title: 'LangGraph example' });
    const graph = exampleGraph(store).compile({ store });
    const out = await graph.invoke({
      messages: [new HumanMessage(options.message ?? 'I am vegetarian, by the way.')],
    });
    return {
      sessionId,
      reply: out.messages[out.messages.length - 1]?.text ?? '',
      pending: (await store.pending()).map((p) => ({ proposalId: p.proposalId, text: p.text })),
      live: (await store.search(['memories'], { limit: 1000 })).length,
    };
  } finally {
    await engine?.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(JSON.stringify(await main(), null, 2));
}
