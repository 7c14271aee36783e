// eval/ (and the PostgreSQL driver it loads) only when a bench runs: every other command, and
// --help, loads none of it
import type { LocomoEngineReport } from '../../eval/run-locomo.js';
import type { FakeLlm } from '../../eval/fake-llm/fake-llm-server.js';
import type { ConfabulationReport } from '../../eval/run-confabulation.js';
import type { LlmClient } from '../../src/index.js';
import { createLlmClient } from '../../src/faces.js';
import { defineCommand } from '../command.js';
import { LLM_OPTIONS, llmFrom } from '../llm-options.js';
import { EMBEDDER_OPTIONS, embedderFrom, VECTOR_WEIGHT_OPTION } from '../embedder-options.js';

function report(
  r: LocomoEngineReport,
  formatRows: (m: LocomoEngineReport['metrics']) => string,
  evidence: string,
): string {
  return [
    `== ${r.engine}: ${r.conversations} conversations, ${r.turns} turns, ${r.questions} questions`,
    evidence,
    `ingest ${r.ingestMs} ms (${r.ingestTurnsPerSecond} turns/s through the engine)`,
    r.vectors === null
      ? 'ranking: lexical only (no embedder)'
      : `ranking: lexical and vectors (${r.vectors}; embedding took ${r.embedMs} ms)`,
    `query latency p50 ${r.latencyMs.p50} ms, p95 ${r.latencyMs.p95} ms, max ${r.latencyMs.max} ms`,
    formatRows(r.metrics),
  ].join('\n');
}

/**
 * `bench locomo --data FILE[,FILE…] [--engines pglite,postgres] [embedder]`: recall quality and
 * speed on LoCoMo-format files (evidence mapped by each turn's dia_id; references that name no
 * turn are counted and listed); with an embedder, every conversation is embedded and recall
 * fuses vectors in.
 */
export const benchLocomoCommand = defineCommand({
  path: ['bench', 'locomo'],
  summary: 'Measures recall on LoCoMo: each conversation a subject, every question through recall.',
  options: {
    data: {
      kind: 'text',
      value: '../shared/bench/locomo-dev.json',
      required: true,
      help: 'the LoCoMo-format file, or several separated by commas',
    },
    engines: {
      kind: 'text',
      value: 'pglite,postgres',
      help: 'the engines to run on (default both; PostgreSQL from $MEMLEDGER_BENCH_PG)',
    },
    ...VECTOR_WEIGHT_OPTION,
    ...EMBEDDER_OPTIONS,
  },
  async run(ctx) {
    const [
      { benchKinds },
      { runLocomo },
      { evidenceCount, formatEvidenceCount, loadLocomoFiles },
      { formatRows },
    ] = await Promise.all([
      import('../../eval/bench-store.js'),
      import('../../eval/run-locomo.js'),
      import('../../eval/locomo-data.js'),
      import('../../eval/locomo-metrics.js'),
    ]);
    const { data } = ctx.values;
    const convs = loadLocomoFiles(data.split(',').filter((p) => p.trim() !== ''));
    const evidence = evidenceCount(convs);
    const kinds = await benchKinds(ctx.values.engines ?? 'pglite,postgres');
    const embedder = await embedderFrom(ctx);
    const vectorWeight = ctx.values['vector-weight'];
    const reports: LocomoEngineReport[] = [];
    for (const kind of kinds) {
      const r = await runLocomo(kind, convs, (l) => ctx.io.stderr(`${l}\n`), {
        embedder,
        ...(vectorWeight === undefined ? {} : { params: { vectorWeight } }),
      });
      reports.push(r);
      if (!ctx.json) ctx.io.stdout(`${report(r, formatRows, formatEvidenceCount(evidence))}\n\n`);
    }
    if (ctx.json) ctx.io.stdout(JSON.stringify({ data, evidence, engines: reports }) + '\n');
  },
});

/**
 * `bench confabulation [--llm-url U --llm-model M]`: replays the labelled days through
 * memledger's reflection and counts what the gate drops and what reaches the pile. With no model
 * named, it runs against the scripted fake (a confabulating, seed-001-style reflection) over both
 * providers' real HTTP protocols, on this machine.
 */
export const benchConfabulationCommand = defineCommand({
  path: ['bench', 'confabulation'],
  summary:
    'Replays labelled days through the reflection: drops per code, the pile, confabulation rate, recall.',
  options: { ...LLM_OPTIONS },
  notes: [
    'without --llm-url (or MEMLEDGER_LLM_URL): the scripted fake model, over the openai and anthropic protocols',
  ],
  async run(ctx) {
    const [{ startFakeLlm }, { formatConfabulation, runConfabulation }] = await Promise.all([
      import('../../eval/fake-llm/fake-llm-server.js'),
      import('../../eval/run-confabulation.js'),
    ]);
    const named = llmFrom(ctx);
    const progress = (line: string) => {
      if (ctx.io.stderrIsTTY) ctx.io.stderr(`${line}\n`);
    };
    const reports: ConfabulationReport[] = [];
    const runOne = async (llm: LlmClient) => {
      const r = await runConfabulation(llm, progress);
      reports.push(r);
      if (!ctx.json) ctx.io.stdout(`${formatConfabulation(r)}\n\n`);
    };
    if (named !== undefined) {
      await runOne(named);
    } else {
      for (const protocol of ['openai', 'anthropic'] as const) {
        const fake: FakeLlm = await startFakeLlm({ protocol });
        try {
          await runOne(
            createLlmClient({
              provider: protocol,
              baseUrl: fake.url,
              model: 'memledger-scripted-confabulator',
              retries: 0,
            }),
          );
        } finally {
          await fake.close();
        }
      }
    }
    if (ctx.json) ctx.io.stdout(JSON.stringify({ runs: reports }) + '\n');
  },
});
