import { docOf, seqOfDoc, sessionOfDoc } from './lexical-rank.js';

/** Session ids as small numbers for the ranker, and back. */
export class SessionNumbers {
  private readonly index = new Map<string, number>();
  /** Session ids by number. */
  readonly names: string[] = [];

  /** The number of a session id (a new one gets the next number). */
  of(id: string): number {
    let n = this.index.get(id);
    if (n === undefined) {
      n = this.names.length;
      this.index.set(id, n);
      this.names.push(id);
    }
    return n;
  }

  /** The doc number of a turn. */
  doc(session: string, seq: number): number {
    return docOf(this.of(session), seq);
  }

  /** The session id and seq a doc number stands for. */
  key(doc: number): { session: string; seq: number } {
    return { session: this.names[sessionOfDoc(doc)] ?? '', seq: seqOfDoc(doc) };
  }

  /** Orders session numbers by session id: numbering follows read order, ids do not. */
  readonly compareSessions = (a: number, b: number): number => {
    const na = this.names[a] ?? '';
    const nb = this.names[b] ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  };

  /** Orders docs by session id, then seq. */
  readonly compare = (a: number, b: number): number =>
    this.compareSessions(sessionOfDoc(a), sessionOfDoc(b)) || seqOfDoc(a) - seqOfDoc(b);
}
