/** What bench/crash-writer.ts says on stdout, one JSON object a line. */

/** A write the engine acknowledged: the call resolved before this was printed. */
export type Ack =
  | { kind: 'session'; id: string }
  | { kind: 'turn'; sessionId: string; seq: number; id: string; content: string }
  | { kind: 'proposal'; id: string; text: string }
  | {
      kind: 'decision';
      proposalId: string;
      decision: 'approve' | 'reject';
      seq: number;
      status: string;
    };

export type WriterLine =
  | Ack
  | { kind: 'ready' }
  | { kind: 'begin'; op: string }
  | { kind: 'error'; code: string; message: string };

const ACK_KINDS = ['session', 'turn', 'proposal', 'decision'] as const;

/** One line of the writer's stdout, or null when it is not one of the writer's lines. */
export function parseWriterLine(line: string): WriterLine | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const kind = (v as { kind?: unknown }).kind;
  if (kind === 'ready' || kind === 'begin' || kind === 'error') return v as WriterLine;
  return (ACK_KINDS as readonly unknown[]).includes(kind) ? (v as Ack) : null;
}

export function isAck(line: WriterLine): line is Ack {
  return (ACK_KINDS as readonly string[]).includes(line.kind);
}

/** A key naming the acknowledged write, unique within one store. */
export function ackKey(a: Ack): string {
  switch (a.kind) {
    case 'session':
      return `session:${a.id}`;
    case 'turn':
      return `turn:${a.sessionId}:${a.seq}`;
    case 'proposal':
      return `proposal:${a.id}`;
    case 'decision':
      return `decision:${a.seq}`;
  }
}
