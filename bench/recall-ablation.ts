/**
 * Recall ablation on the development conversations (LoCoMo's dev file and the project's second
 * development set, bench/data/recall-dev): the same lexicalSearch the engine runs, over an
 * in-memory copy of the index the store keeps (same analysis, same statistics), so each variant
 * takes seconds. `memledger bench locomo` measures the real thing through the store.
 *
 * It prints, for every conversation on its own (not only pooled):
 * - the full method and plain BM25;
 * - each part's gain: the full method minus the method without that part, per conversation, so
 *   a part that helps one conversation and hurts four shows it;
 * - leave-one-conversation-out cross-validation of every tuned parameter and boost (and the
 *   boost pool): each conversation is scored with the value the others would choose from a grid,
 *   one parameter at a time and then all of them at once, against the defaults.
 * The score is turn any@10 over categories 1–4, averaged over conversations (each counts once).
 * Usage: node dist/bench/recall-ablation.js [--data FILE[,FILE…]] [--only NAME] [--no-cv]
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_RANK_PARAMS, type RankParams } from '../src/index.js';
import { lexicalSearch } from '../src/recall/lexical-search.js';
import { analyze } from '../src/rules.js';
import type { LexicalIndexPort } from '../src/domain/recall-index.js';
import {
  evidenceCount,
  formatEvidenceCount,
  loadLocomoFiles,
  type LocomoConversation,
} from '../eval/locomo-data.js';
import { formatRows, metricRows, type QuestionResult } from '../eval/locomo-metrics.js';
import { heldOutMean, leaveOneOut, type ScoresByValue } from './support/cross-validation.js';
import { memoryIndex } from './support/memory-index.js';
import { progress } from './support/progress.js';
import { runMain } from './support/run-main.js';
import { loadWordNet, type WordNet } from './support/wordnet-synonyms.js';

/** The development files read when --data is not given: LoCoMo's dev file and the second set. */
function defaultData(): string[] {
  const second = join(import.meta.dirname, '../../bench/data/recall-dev');
  const files = ['../shared/bench/locomo-dev.json'];
  if (existsSync(second)) {
    for (const f of readdirSync(second).sort())
      if (f.endsWith('.json')) files.push(join(second, f));
  }
  return files;
}

/** Analysed synonym terms of a question's words, each at `weight` (WordNet, first senses). */
function synonymExpansion(wordnet: WordNet, question: string, weight: number): Map<string, number> {
  const own = new Set(analyze(question));
  const out = new Map<string, number>();
  for (const word of question.toLowerCase().match(/[a-z]+/g) ?? []) {
    // stopwords have no terms: they are not expanded
    if (analyze(word).length === 0) continue;
    for (const synonym of wordnet.synonyms(word)) {
      for (const t of analyze(synonym)) if (!own.has(t)) out.set(t, weight);
    }
  }
  return out;
}

/** Each conversation's questions ranked with these parameters: results by conversation id. */
type Results = Map<string, QuestionResult[]>;

async function evaluate(
  convs: readonly LocomoConversation[],
  indexes: ReadonlyMap<string, LexicalIndexPort>,
  params: Partial<RankParams>,
  expand?: (question: string) => ReadonlyMap<string, number>,
): Promise<Results> {
  const out: Results = new Map();
  for (const conv of convs) {
    const index = indexes.get(conv.id) as LexicalIndexPort;
    const results: QuestionResult[] = [];
    for (const q of conv.questions) {
      const ranked = await lexicalSearch(index, q.question, {
        limit: 40,
        params,
        ...(expand === undefined ? {} : { expansions: expand(q.question) }),
      });
      results.push({
        category: q.category,
        evidence: q.evidence.map((e) => `${e.session}:${e.seq}`),
        ranked: ranked.map((r) => `${r.session.slice(r.session.lastIndexOf('-s') + 2)}:${r.seq}`),
      });
    }
    out.set(conv.id, results);
  }
  return out;
}

/** Turn any@10 over categories 1–4 of one conversation's results. */
function score(results: readonly QuestionResult[]): number {
  return metricRows(results).find((r) => r.label === 'categories 1-4')?.turnAny[10] ?? 0;
}

const byConversation = (r: Results): Map<string, number> =>
  new Map([...r].map(([id, results]) => [id, score(results)]));

const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length;

const pct = (x: number): string => (100 * x).toFixed(1).padStart(5);
const pts = (x: number): string => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`.padStart(6);

const PLAIN: Partial<RankParams> = {
  b: 0.75,
  idfFloor: 0,
  prevWeight: 0,
  nextWeight: 0,
  sessionWeight: 0,
  smoothing: 0,
  lenFloor: 0,
  feedbackDocs: 0,
  speakerBoost: 1,
  timeWordBoost: 1,
  dateBoost: 1,
};

/** A synonym-expansion variant: the full method with WordNet synonyms at this weight. */
const SYNONYMS = Symbol('synonyms');

/** Each part of the method, and the parameters that take it out (or, with +, put it in). */
const PARTS: [string, Partial<RankParams> | { [SYNONYMS]: number }][] = [
  ['neighbour expansion', { prevWeight: 0, nextWeight: 0 }],
  ['session score', { sessionWeight: 0 }],
  ['smoothing', { smoothing: 0 }],
  ['speaker boost', { speakerBoost: 1 }],
  ['time-word boost', { timeWordBoost: 1 }],
  ['date boost', { dateBoost: 1 }],
  ['idf floor', { idfFloor: 0 }],
  ['length floor', { lenFloor: 0 }],
  ['+ feedback (10 docs, 10 terms, 0.2)', { feedbackDocs: 10 }],
  ['+ WordNet synonyms (weight 0.2)', { [SYNONYMS]: 0.2 }],
];

/** The grid each tuned parameter is cross-validated over (the default is always in it). */
const GRID: [keyof RankParams, number[]][] = [
  ['k1', [0.8, 1.0, 1.2, 1.5, 2.0]],
  ['b', [0.3, 0.45, 0.6, 0.75, 0.9]],
  ['idfFloor', [0, 0.5, 1, 1.25, 1.5, 2]],
  ['prevWeight', [0, 0.3, 0.6, 1, 1.5]],
  ['nextWeight', [0, 0.15, 0.3, 0.6, 1]],
  ['sessionWeight', [0, 0.15, 0.3, 0.5, 0.8]],
  ['smoothing', [0, 0.25, 0.5, 0.75]],
  ['lenFloor', [0, 0.5, 0.75, 1, 1.25]],
  ['speakerBoost', [1, 1.25, 1.5, 2]],
  ['timeWordBoost', [1, 1.1, 1.2, 1.4]],
  ['dateBoost', [1, 1.5, 2, 3]],
  ['boostPool', [50, 100, 200]],
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string' },
      only: { type: 'string' },
      'no-cv': { type: 'boolean', default: false },
    },
  });
  const files = values.data === undefined ? defaultData() : values.data.split(',');
  const convs = loadLocomoFiles(files);
  const ids = convs.map((c) => c.id);
  const indexes = new Map(convs.map((c) => [c.id, memoryIndex(c)]));
  console.log(`data: ${files.join(', ')}`);
  console.log(formatEvidenceCount(evidenceCount(convs)));
  console.log(`defaults: ${JSON.stringify(DEFAULT_RANK_PARAMS)}\n`);

  const full = await evaluate(convs, indexes, {});
  const fullBy = byConversation(full);
  const plainBy = byConversation(await evaluate(convs, indexes, PLAIN));
  console.log(`turn any@10, categories 1-4, per conversation (mean over conversations last)`);
  const head = `${''.padEnd(36)} ${ids.map((id) => id.slice(-10).padStart(10)).join(' ')}   mean`;
  console.log(head);
  const line = (name: string, xs: ReadonlyMap<string, number>, f = pct): string =>
    `${name.padEnd(36)} ${ids.map((id) => f(xs.get(id) ?? 0).padStart(10)).join(' ')} ${f(mean(ids.map((id) => xs.get(id) ?? 0))).padStart(6)}`;
  console.log(line('plain BM25 (k1 1.2, b 0.75)', plainBy));
  console.log(line('full method', fullBy));
  console.log(`\n${formatRows(metricRows([...full.values()].flat()))}\n`);

  console.log('each part: the full method minus the method without it (points), per conversation');
  console.log(head.replace(/ {3}mean$/, '  mean  helps/hurts'));
  let wordnet: WordNet | undefined;
  const parts =
    values.only === undefined ? PARTS : PARTS.filter(([n]) => n.includes(values.only ?? ''));
  for (const [name, variant] of parts) {
    progress(`part: ${name}`);
    let r: Results;
    if (SYNONYMS in variant) {
      const wn = (wordnet ??= loadWordNet());
      r = await evaluate(convs, indexes, {}, (q) => synonymExpansion(wn, q, variant[SYNONYMS]));
    } else {
      r = await evaluate(convs, indexes, variant);
    }
    const without = byConversation(r);
    // "+ x" parts are off by default: their gain is the variant minus the full method
    const sign = name.startsWith('+') ? -1 : 1;
    const gain = new Map(
      ids.map((id) => [id, sign * ((fullBy.get(id) ?? 0) - (without.get(id) ?? 0))]),
    );
    const helps = ids.filter((id) => (gain.get(id) ?? 0) > 0.0005).length;
    const hurts = ids.filter((id) => (gain.get(id) ?? 0) < -0.0005).length;
    console.log(`${line(name, gain, pts)}  ${helps}/${hurts}`);
  }
  if (values['no-cv']) return;

  console.log(
    '\nleave-one-conversation-out: each conversation scored with the value the others choose',
  );
  console.log(
    `${'parameter'.padEnd(16)} ${'default'.padStart(7)}  chosen per held-out conversation  default  cross-validated`,
  );
  const defaults = DEFAULT_RANK_PARAMS;
  const chosenBy = new Map<string, Partial<RankParams>>(ids.map((id) => [id, {}]));
  for (const [param, grid] of GRID) {
    const scores = new Map<number, Map<string, number>>();
    for (const v of grid) {
      progress(`cross-validating ${param} = ${v}`);
      scores.set(
        v,
        v === defaults[param]
          ? fullBy
          : byConversation(await evaluate(convs, indexes, { [param]: v })),
      );
    }
    const held = leaveOneOut(scores as ScoresByValue<number>, ids, defaults[param]);
    for (const h of held) (chosenBy.get(h.conversation) as Partial<RankParams>)[param] = h.chosen;
    console.log(
      `${param.padEnd(16)} ${String(defaults[param]).padStart(7)}  ${held
        .map((h) => String(h.chosen))
        .join(' ')
        .padEnd(32)} ${pct(mean(ids.map((id) => fullBy.get(id) ?? 0)))}  ${pct(heldOutMean(held))}`,
    );
  }
  // every parameter at once, each at the value the other conversations chose for it
  const joint = new Map<string, number>();
  for (const conv of convs) {
    progress(`cross-validated full method: ${conv.id}`);
    const r = await evaluate([conv], indexes, chosenBy.get(conv.id) ?? {});
    joint.set(conv.id, score(r.get(conv.id) ?? []));
  }
  console.log(`\n${line('defaults', fullBy)}`);
  console.log(line('cross-validated (all chosen on others)', joint));
}

runMain('recall-ablation', main);
