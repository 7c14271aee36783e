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
  /** Evidence as (session, seq); ids that match no turn are dropped. */
  evidence: { session: number; seq: number }[];
}

/** One LoCoMo sample: two speakers, their sessions, and the questions asked about them. */
export interface LocomoConversation {
  id: string;
  speakers: [string, string];
  sessions: LocomoSession[];
  questions: LocomoQuestion[];
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

/** Every `D<s>:<t>` in an evidence string, leading zeros dropped ("D:11:26" reads as D11:26). */
export function parseEvidence(raw: unknown): { session: number; seq: number }[] {
  const out: { session: number; seq: number }[] = [];
  const items = Array.isArray(raw) ? raw : [raw];
  for (const item of items) {
    if (typeof item !== 'string') continue;
    for (const m of item.matchAll(/D:?(\d+):(\d+)/g)) {
      out.push({ session: Number(m[1]), seq: Number(m[2]) });
    }
  }
  return out;
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
    const exists = new Set(sessions.flatMap((s) => s.turns.map((t) => `${s.number}:${t.seq}`)));
    const qa = Array.isArray(sample.qa) ? (sample.qa as Record<string, unknown>[]) : [];
    const questions = qa.map((q): LocomoQuestion => ({
      question: typeof q.question === 'string' ? q.question : '',
      category: typeof q.category === 'number' ? q.category : 0,
      evidence: parseEvidence(q.evidence).filter((e) => exists.has(`${e.session}:${e.seq}`)),
    }));
    return { id, speakers: [a, b], sessions, questions };
  });
}
