// A small chat agent on the Vercel AI SDK (ai@6) with memledger as its memory: the middleware
// joins what the agent knows into the prompt and records every exchange with its receipt; the
// model proposes memories through memledger's tools, and only the owner makes them live.
//
//   npm install memledger ai
//   AI_GATEWAY_API_KEY=… node ai-sdk-chat.js      # a real model through the AI Gateway
//   node ai-sdk-chat.js                           # the SDK's test model, scripted (no key)
//
// With another provider, pass its model instead (`openai('gpt-5')` from @ai-sdk/openai, …).
// It prints one JSON line of what happened; test/heavy/package.test.ts runs it from the packed
// package with nothing but `ai` installed beside it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gateway, generateText, stepCountIs, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createEngine, generateOwnerKey, loadOwnerKey, writeOwnerKeyFile } from 'memledger';
import { memledgerMiddleware, memledgerTools } from 'memledger/ai-sdk';

type Scripted = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
/** A model the middleware can wrap (a provider's, the gateway's, or the SDK's test model). */
type Model = Parameters<typeof wrapLanguageModel>[0]['model'];

/** A stand-in model that answers from a script: what a real model might say, without a key. */
function scriptedModel(): MockLanguageModelV3 {
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 },
  };
  const text = (t: string): Scripted => ({
    content: [{ type: 'text', text: t }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
  });
  const script: Scripted[] = [
    // 1. the user says something worth remembering: the model proposes it, quoting the user
    {
      content: [
        {
          type: 'tool-call',
          toolCallId: 'call-1',
          toolName: 'propose_memories',
          input: JSON.stringify({
            proposals: [
              {
                slot: 'what_i_know_about_user',
                text: 'The user is allergic to peanuts.',
                origin: 'saw',
                evidence: { turn: 1, quote: 'I am allergic to peanuts' },
              },
              // and one it made up: the gate drops it (the user never said it)
              {
                slot: 'what_i_know_about_user',
                text: 'The user is vegan.',
                origin: 'saw',
                evidence: { turn: 1, quote: 'I am vegan' },
              },
            ],
          }),
        },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    },
    text('Noted: I will keep peanuts out of my suggestions once that is confirmed.'),
    // 2. a day later: memledger has joined the approved fact into the prompt
    text('How about apple slices with sunflower-seed butter? No peanuts.'),
  ];
  let i = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const next = script[i++];
      if (next === undefined) throw new Error('the scripted model has no more answers');
      return next;
    },
  });
}

export async function main(
  options: { model?: Model; db?: string } = {},
): Promise<Record<string, unknown>> {
  const scripted = options.model === undefined && process.env.AI_GATEWAY_API_KEY === undefined;
  const base: Model = options.model ?? (scripted ? scriptedModel() : gateway('openai/gpt-5-mini'));
  const dir = mkdtempSync(join(tmpdir(), 'memledger-ai-sdk-'));
  const engine = await createEngine({ db: options.db ?? process.env.MEMLEDGER_DB ?? 'memory://' });
  try {
    // The owner: the person whose memory this is. Their key signs what becomes live.
    const keyFile = join(dir, 'owner.key');
    writeOwnerKeyFile(keyFile, generateOwnerKey('correct horse battery').keyFile);
    const owner = loadOwnerKey(keyFile, 'correct horse battery');
    await engine.subjects.create('owner');
    const me = engine.subject('owner');
    if ((await me.owner.key()) === null) {
      await me.owner.setKey({ keyId: owner.keyId, publicKeyPem: owner.publicKeyPem });
    }

    // The agent: a model wrapped in memledger's middleware, with memledger's tools.
    const sessionId = 'kitchen-chat';
    const model = wrapLanguageModel({
      model: base,
      middleware: memledgerMiddleware(me, { sessionId, title: 'Kitchen' }),
    });
    const tools = memledgerTools(me, { sessionId });

    const first = await generateText({
      model,
      system: 'You are a helpful kitchen assistant.',
      prompt: 'I am allergic to peanuts. Please remember that.',
      tools,
      stopWhen: stepCountIs(3),
    });
    const proposal = first.steps.flatMap((s) => s.toolResults)[0]?.output as
      | { proposed: Array<{ id: string; text: string }>; dropped: Array<{ code: string }> }
      | undefined;

    // The owner reviews the pile (here in code; `memledger review` or the review page) and
    // approves with their key. No tool the model holds can do this.
    const pile = await me.gate.pile();
    for (const p of pile) {
      await me.owner.decide({ proposalId: p.fact.id, decision: 'approve', signer: owner });
    }

    const second = await generateText({
      model,
      system: 'You are a helpful kitchen assistant.',
      prompt: 'Suggest a snack for me.',
      tools,
    });

    const turns = await me.history.turns(sessionId);
    return {
      scripted,
      replies: [first.text, second.text],
      proposed: proposal?.proposed.map((p) => p.text) ?? [],
      dropped: proposal?.dropped.map((d) => d.code) ?? [],
      approved: pile.map((p) => p.fact.text),
      live: (await me.facts.live()).map((f) => f.text),
      turns: turns.map((t) => ({ role: t.role, receipt: t.receipt?.kind ?? null })),
      receiptTools: turns[1]?.receipt?.kind === 'tools' ? turns[1].receipt.tools : [],
      sources: second.sources.map((s) => (s.sourceType === 'document' ? s.title : s.url)),
    };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    (out) => console.log(JSON.stringify(out)),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
