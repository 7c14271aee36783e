import { EngineError } from '../../src/index.js';
import { stringValue } from '../args.js';
import { benchKinds, type BenchKind } from '../bench/bench-store.js';
import { runLocomo, type LocomoEngineReport } from '../bench/locomo-bench.js';
import { loadLocomo } from '../bench/locomo-data.js';
import { formatRows } from '../bench/locomo-metrics.js';
import type { CommandContext } from '../context.js';
import { EMBEDDER_OPTIONS, embedderFrom, vectorWeightFrom } from '../embedder-options.js';

export const BENCH_LOCOMO_OPTIONS = {
  data: { type: 'string' },
  engines: { type: 'string' },
  'vector-weight': { type: 'string' },
  ...EMBEDDER_OPTIONS,
} as const;

function report(r: LocomoEngineReport): string {
  return [
    `== ${r.engine}: ${r.conversations} conversations, ${r.turns} turns, ${r.questions} questions`,
    `ingest ${r.ingestMs} ms (${r.ingestTurnsPerSecond} turns/s through the engine)`,
    r.vectors === null
      ? 'ranking: lexical only (no embedder)'
      : `ranking: lexical and vectors (${r.vectors}; embedding took ${r.embedMs} ms)`,
    `query latency p50 ${r.latencyMs.p50} ms, p95 ${r.latencyMs.p95} ms, max ${r.latencyMs.max} ms`,
    formatRows(r.metrics),
  ].join('\n');
}

/**
 * `bench locomo --data FILE [--engines pglite,postgres] [embedder]`: recall quality and speed on
 * LoCoMo; with an embedder, every conversation is embedded and recall fuses vectors in.
 */
export async function benchLocomoCommand(ctx: CommandContext): Promise<void> {
  const data = stringValue(ctx.values, 'data');
  if (data === undefined) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      '--data is required (../shared/bench/locomo-dev.json)',
    );
  }
  const convs = loadLocomo(data);
  let kinds: BenchKind[];
  try {
    kinds = await benchKinds(stringValue(ctx.values, 'engines') ?? 'pglite,postgres');
  } catch (err) {
    throw new EngineError('INVALID_ARGUMENT', (err as Error).message);
  }
  const embedder = await embedderFrom(ctx);
  const vectorWeight = vectorWeightFrom(ctx);
  const reports: LocomoEngineReport[] = [];
  for (const kind of kinds) {
    const r = await runLocomo(kind, convs, (l) => ctx.io.stderr(`${l}\n`), {
      embedder,
      ...(vectorWeight === undefined ? {} : { params: { vectorWeight } }),
    });
    reports.push(r);
    if (!ctx.json) ctx.io.stdout(`${report(r)}\n\n`);
  }
  if (ctx.json) ctx.io.stdout(JSON.stringify({ data, engines: reports }) + '\n');
}
