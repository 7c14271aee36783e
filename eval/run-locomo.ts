/**
 * `memledger bench locomo`'s run: each LoCoMo conversation becomes its own subject, recorded turn
 * by turn through the engine's normal write path (turns carry their session's date and speaker);
 * then every question goes through recall, and the bench README's metrics are computed per
 * category and pooled, with query latency and ingest time, on one engine.
 */
import { performance } from 'node:perf_hooks';
import { EngineError, type Embedder, type Engine, type RecallOptions } from '../src/index.js';
import { withBenchStore, type BenchKind } from './bench-store.js';
import type { LocomoConversation } from './locomo-data.js';
import { metricRows, type MetricRow, type QuestionResult } from './locomo-metrics.js';
import { percentile } from './percentile.js';

/** Turns asked for per question: enough for any@20 and for 10 distinct pairs. */
const DEPTH = 40;

/** What one engine measured on the conversations. */
export interface LocomoEngineReport {
  engine: BenchKind;
  conversations: number;
  turns: number;
  questions: number;
  ingestMs: number;
  ingestTurnsPerSecond: number;
  /** The embedder's model when recall also ranked by vectors, else null. */
  vectors: string | null;
  /** Time `embedPending` took over all conversations, embedding included (0 without vectors). */
  embedMs: number;
  latencyMs: { p50: number; p95: number; max: number };
  metrics: MetricRow[];
}

/** What `runLocomo` may vary: an embedder for vector recall, and ranking parameters. */
export interface RunLocomoOptions {
  embedder?: Embedder | undefined;
  params?: RecallOptions['params'];
}

/** The session a LoCoMo session is recorded in: `<sample>-s<n>`. */
export const locomoSessionId = (conv: string, n: number): string => `${conv}-s${n}`;
const sessionId = locomoSessionId;

async function ingest(engine: Engine, conv: LocomoConversation): Promise<number> {
  await engine.subjects.create(conv.id);
  const me = engine.subject(conv.id);
  let turns = 0;
  for (const s of conv.sessions) {
    await me.sessions.create({ id: sessionId(conv.id, s.number) });
    for (const t of s.turns) {
      // Two people talk; both are users of the agent. A second apart keeps the order visible.
      await me.turns.add({
        sessionId: sessionId(conv.id, s.number),
        role: 'user',
        speaker: t.speaker,
        content: t.content,
        at: new Date(s.date.getTime() + t.seq * 1000),
      });
      turns += 1;
    }
  }
  return turns;
}

/** Records the conversations in a fresh store of `kind`, then asks every question. */
export async function runLocomo(
  kind: BenchKind,
  convs: readonly LocomoConversation[],
  log: (line: string) => void,
  options: RunLocomoOptions = {},
): Promise<LocomoEngineReport> {
  const { embedder } = options;
  const config = embedder === undefined ? {} : { embedder };
  return withBenchStore(
    kind,
    'ml_locomo',
    async (engine) => {
      let turns = 0;
      const t0 = performance.now();
      for (const conv of convs) turns += await ingest(engine, conv);
      const ingestMs = performance.now() - t0;
      log(
        `${kind}: ingested ${turns} turns of ${convs.length} conversations in ${Math.round(ingestMs)} ms`,
      );
      let embedMs = 0;
      if (embedder !== undefined) {
        const t1 = performance.now();
        for (const conv of convs) {
          const r = await engine.subject(conv.id).vectors.embedPending({ limit: 100_000 });
          if (r.remaining) {
            throw new EngineError(
              'INVALID_ARGUMENT',
              `${conv.id}: more than 100,000 turns to embed in one conversation`,
            );
          }
        }
        embedMs = performance.now() - t1;
        log(`${kind}: embedded them with ${embedder.model} in ${Math.round(embedMs)} ms`);
      }

      const results: QuestionResult[] = [];
      const latencies: number[] = [];
      for (const conv of convs) {
        const me = engine.subject(conv.id);
        const sessionNumber = new Map(
          conv.sessions.map((s) => [sessionId(conv.id, s.number), s.number]),
        );
        for (const q of conv.questions) {
          const start = performance.now();
          const items = await me.recall.search(q.question, {
            k: DEPTH,
            kinds: ['turn'],
            ...(options.params === undefined ? {} : { params: options.params }),
          });
          latencies.push(performance.now() - start);
          results.push({
            category: q.category,
            evidence: q.evidence.map((e) => `${e.session}:${e.seq}`),
            ranked: items.map(
              (i) =>
                `${sessionNumber.get(i.passport.sessionId ?? '') ?? '?'}:${i.passport.turn ?? '?'}`,
            ),
          });
        }
      }
      return {
        engine: kind,
        conversations: convs.length,
        turns,
        questions: results.length,
        ingestMs: Math.round(ingestMs),
        ingestTurnsPerSecond: Math.round((turns * 1000) / ingestMs),
        // a vector weight of 0 leaves the vectors out of every recall
        vectors: options.params?.vectorWeight === 0 ? null : (embedder?.model ?? null),
        embedMs: Math.round(embedMs),
        latencyMs: {
          p50: round2(percentile(latencies, 0.5)),
          p95: round2(percentile(latencies, 0.95)),
          max: round2(Math.max(...latencies)),
        },
        metrics: metricRows(results),
      };
    },
    config,
  );
}

const round2 = (x: number): number => Math.round(x * 100) / 100;
