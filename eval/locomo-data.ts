/**
 * The LoCoMo benchmark file (see ../shared/bench/README.md): conversations with dated sessions,
 * and questions whose evidence names turns as `D<session>:<turn>`.
 */
import { readFileSync } from 'node:fs';
import { EngineError } from '../src/index.js';

/** The month names LoCoMo's session dates are written with (English, as the dataset is). */
const MONTH_NAMES: readonly string[] = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** One turn of a LoCoMo session. */
export interface LocomoTurn {
  /** `D<session>:<turn>` as the dataset names it. */
  diaId: string;
  session: number;
  /** 1-based position in its session: the seq the turn gets when recorded in order. */
  seq: number;
  speaker: string;
  /** The words, with a shared image's caption as "[shares …]". */
  content: string;
}

/** One dated session of a LoCoMo conversation. */
export interface LocomoSession {
  number: number;
  date: Date;
  turns: LocomoTurn[];
}

/** A question about a conversation, with the turns that answer it. */
export interface LocomoQuestion {
  question: string;
  category: number;
  /**
   * Evidence as (session, seq) of the turns whose `dia_id` the question names; a reference no
   * turn carries is left out here and listed in the conversation's `unmapped`.
   */
  evidence: { session: number; seq: number }[];
}

/** An evidence reference no turn of its conversation carries. */
export interface UnmappedRef {
  /** The question's place in the conversation's `qa` list, from 1. */
  question: number;
  /** The reference as read (`D<s>:<t>`, leading zeros dropped). */
  ref: string;
}

/** One LoCoMo sample: two speakers, their sessions, and the questions asked about them. */
export interface LocomoConversation {
  id: string;
  speakers: [string, string];
  sessions: LocomoSession[];
  questions: LocomoQuestion[];
  /** Evidence references that name no turn of this conversation. */
  unmapped: UnmappedRef[];
}

/** "1:56 pm on 8 May, 2023" as a UTC instant. */
export function parseSessionDate(text: string): Date {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(
    text,
  );
  const month = m === null ? -1 : MONTH_NAMES.indexOf((m[5] ?? '').toLowerCase());
  if (m === null || month < 0) {
    throw new EngineError('INVALID_ARGUMENT', `unreadable session date "${text}"`);
  }
  const hour = (Number(m[1]) % 12) + ((m[3] ?? '').toLowerCase() === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

/**
 * Every `D<s>:<t>` in an evidence string, as `D<s>:<t>` with leading zeros dropped ("D:11:26"
 * reads as D11:26, "D30:05" as D30:5): the form a turn's `dia_id` is matched in.
 */
export function parseEvidence(raw: unknown): string[] {
  const out: string[] = [];
  const items = Array.isArray(raw) ? raw : [raw];
  for (const item of items) {
    if (typeof item !== 'string') continue;
    for (const m of item.matchAll(/D:?(\d+):(\d+)/g)) out.push(`D${Number(m[1])}:${Number(m[2])}`);
  }
  return out;
}

/** A turn's `dia_id` in the form evidence is matched in, or null when it is not `D<s>:<t>`. */
function diaKey(diaId: string): string | null {
  const [key, ...more] = parseEvidence(diaId);
  return key === undefined || more.length > 0 ? null : key;
}

function fail(message: string): never {
  throw new EngineError('INVALID_ARGUMENT', message);
}

interface RawTurn {
  speaker?: unknown;
  dia_id?: unknown;
  text?: unknown;
  blip_caption?: unknown;
}

/** Reads a LoCoMo file; INVALID_ARGUMENT when it cannot be read or is not LoCoMo-shaped. */
export function loadLocomo(path: string): LocomoConversation[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (!Array.isArray(raw)) fail(`${path}: expected a JSON array of conversations`);
  return raw.map((sample: Record<string, unknown>, i): LocomoConversation => {
    const id = typeof sample.sample_id === 'string' ? sample.sample_id : `sample-${i + 1}`;
    const conv = sample.conversation as Record<string, unknown> | undefined;
    if (conv === undefined || typeof conv !== 'object') fail(`${id}: no conversation`);
    const a = conv.speaker_a;
    const b = conv.speaker_b;
    if (typeof a !== 'string' || typeof b !== 'string') fail(`${id}: speakers missing`);
    const sessions: LocomoSession[] = [];
    for (const key of Object.keys(conv)) {
      const m = /^session_(\d+)$/.exec(key);
      if (m === null) continue;
      const number = Number(m[1]);
      const list = conv[key];
      if (!Array.isArray(list) || list.length === 0) continue;
      const date = conv[`${key}_date_time`];
      if (typeof date !== 'string') fail(`${id}: ${key} has no date`);
      const turns = (list as RawTurn[]).map((t, j): LocomoTurn => {
        if (typeof t.speaker !== 'string' || typeof t.text !== 'string') {
          fail(`${id}: ${key} turn ${j + 1} lacks a speaker or text`);
        }
        const caption = typeof t.blip_caption === 'string' ? ` [shares ${t.blip_caption}]` : '';
        const text = t.text.trim() === '' && caption === '' ? '(no words)' : t.text;
        return {
          diaId: typeof t.dia_id === 'string' ? t.dia_id : `D${number}:${j + 1}`,
          session: number,
          seq: j + 1,
          speaker: t.speaker,
          content: `${text}${caption}`,
        };
      });
      sessions.push({ number, date: parseSessionDate(date), turns });
    }
    sessions.sort((x, y) => x.number - y.number);
    // evidence names a turn by the dia_id it carries, not by its position: ids may skip numbers
    const byDia = new Map<string, { session: number; seq: number }>();
    for (const s of sessions) {
      for (const t of s.turns) {
        const key = diaKey(t.diaId);
        if (key === null) continue;
        if (byDia.has(key)) fail(`${id}: two turns carry dia_id ${key}`);
        byDia.set(key, { session: s.number, seq: t.seq });
      }
    }
    const qa = Array.isArray(sample.qa) ? (sample.qa as Record<string, unknown>[]) : [];
    const unmapped: UnmappedRef[] = [];
    const questions = qa.map((q, i): LocomoQuestion => {
      const evidence: { session: number; seq: number }[] = [];
      for (const ref of parseEvidence(q.evidence)) {
        const at = byDia.get(ref);
        if (at === undefined) unmapped.push({ question: i + 1, ref });
        else evidence.push(at);
      }
      return {
        question: typeof q.question === 'string' ? q.question : '',
        category: typeof q.category === 'number' ? q.category : 0,
        evidence,
      };
    });
    return { id, speakers: [a, b], sessions, questions, unmapped };
  });
}

/** How many evidence references the conversations make, and those that name no turn. */
export interface EvidenceCount {
  references: number;
  unmapped: { conversation: string; question: number; ref: string }[];
}

export function evidenceCount(convs: readonly LocomoConversation[]): EvidenceCount {
  let mapped = 0;
  const unmapped: EvidenceCount['unmapped'] = [];
  for (const c of convs) {
    for (const q of c.questions) mapped += q.evidence.length;
    for (const u of c.unmapped) unmapped.push({ conversation: c.id, ...u });
  }
  return { references: mapped + unmapped.length, unmapped };
}

/** One line: the references read, and the first of those no turn carries. */
export function formatEvidenceCount(e: EvidenceCount): string {
  const shown = e.unmapped
    .slice(0, 8)
    .map((u) => `${u.conversation} question ${u.question} ${u.ref}`);
  const more =
    e.unmapped.length > shown.length ? `, and ${e.unmapped.length - shown.length} more` : '';
  return e.unmapped.length === 0
    ? `evidence: ${e.references} references, every one names a turn by its dia_id`
    : `evidence: ${e.references} references, ${e.unmapped.length} name no turn (left out of the scores): ${shown.join('; ')}${more}`;
}

/** Reads several LoCoMo-format files as one list; two conversations with one id are refused. */
export function loadLocomoFiles(paths: readonly string[]): LocomoConversation[] {
  const out = paths.flatMap((p) => loadLocomo(p));
  const seen = new Set<string>();
  for (const c of out) {
    if (seen.has(c.id)) fail(`two conversations are named ${c.id}`);
    seen.add(c.id);
  }
  return out;
}
