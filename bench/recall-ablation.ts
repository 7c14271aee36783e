/**
 * Recall ablation on the LoCoMo dev conversations: the same lexicalSearch the engine runs, over
 * an in-memory copy of the index the store keeps (same analysis, same statistics), so each
 * variant takes seconds. `memledger bench locomo` measures the real thing through the store.
 * Usage: node dist/bench/recall-ablation.js [--data ../shared/bench/locomo-dev.json]
 */
import { parseArgs } from 'node:util';
import { DEFAULT_RANK_PARAMS, type RankParams } from '../src/index.js';
import { lexicalSearch } from '../src/recall/lexical-search.js';
import { analyze } from '../src/rules.js';
import { loadLocomo, type LocomoConversation } from '../eval/locomo-data.js';
import { formatRows, metricRows, type QuestionResult } from '../eval/locomo-metrics.js';
import { memoryIndex } from './support/memory-index.js';
import { runMain } from './support/run-main.js';
import { loadWordNet, type WordNet } from './support/wordnet-synonyms.js';

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

async function evaluate(
  convs: readonly LocomoConversation[],
  params: Partial<RankParams>,
  expand?: (question: string) => ReadonlyMap<string, number>,
): Promise<QuestionResult[]> {
  const results: QuestionResult[] = [];
  for (const conv of convs) {
    const index = memoryIndex(conv);
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
  }
  return results;
}

const PLAIN: Partial<RankParams> = {
  b: 0.75,
  idfFloor: 0,
  prevWeight: 0,
  nextWeight: 0,
  sessionWeight: 0,
  smoothing: 0,
  feedbackDocs: 0,
  speakerBoost: 1,
  timeWordBoost: 1,
  dateBoost: 1,
};

/** A synonym-expansion variant: the full method with WordNet synonyms at this weight. */
const SYNONYMS = Symbol('synonyms');

const VARIANTS: [string, Partial<RankParams> | { [SYNONYMS]: number }][] = [
  ['plain BM25 (k1 1.2, b 0.75)', PLAIN],
  ['full method', {}],
  ['- neighbour expansion', { prevWeight: 0, nextWeight: 0 }],
  ['- session score', { sessionWeight: 0 }],
  ['+ feedback (10 docs, 10 terms, 0.2)', { feedbackDocs: 10 }],
  ['- smoothing', { smoothing: 0 }],
  ['- speaker boost', { speakerBoost: 1 }],
  ['- time-word boost', { timeWordBoost: 1 }],
  ['- date boost', { dateBoost: 1 }],
  ['- idf floor', { idfFloor: 0 }],
  ['+ WordNet synonyms (weight 0.2)', { [SYNONYMS]: 0.2 }],
  ['+ WordNet synonyms (weight 0.5)', { [SYNONYMS]: 0.5 }],
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      data: { type: 'string', default: '../shared/bench/locomo-dev.json' },
      only: { type: 'string' },
    },
  });
  const convs = loadLocomo(values.data);
  const pick =
    values.only === undefined ? VARIANTS : VARIANTS.filter(([n]) => n.includes(values.only ?? ''));
  console.log(`defaults: ${JSON.stringify(DEFAULT_RANK_PARAMS)}\n`);
  let wordnet: WordNet | undefined;
  for (const [name, variant] of pick) {
    let results: QuestionResult[];
    if (SYNONYMS in variant) {
      const wn = (wordnet ??= loadWordNet());
      results = await evaluate(convs, {}, (q) => synonymExpansion(wn, q, variant[SYNONYMS]));
    } else {
      results = await evaluate(convs, variant);
    }
    const rows = metricRows(results);
    const pooled = rows.find((r) => r.label === 'categories 1-4');
    const all = rows.find((r) => r.label === 'all categories');
    console.log(
      `${name.padEnd(30)} turn any@10 (1-4) ${((pooled?.turnAny[10] ?? 0) * 100).toFixed(1)}%  pair any@10 ${((all?.pairAny10 ?? 0) * 100).toFixed(1)}%`,
    );
    if (name === 'full method') console.log(`${formatRows(rows)}\n`);
  }
}

runMain('recall-ablation', main);
