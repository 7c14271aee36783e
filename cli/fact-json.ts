import type { Fact } from '../src/index.js';
import { renderFactLine } from '../src/rules.js';

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export function factToJson(f: Fact): Record<string, unknown> {
  return {
    id: f.id,
    subject: f.subjectId,
    slot: f.slot,
    key: f.key,
    text: f.text,
    origin: f.origin,
    status: f.status,
    attested: f.attested,
    evidence: f.evidence,
    supersedesId: f.supersedesId,
    supersededById: f.supersededById,
    validFrom: iso(f.validFrom),
    validTo: iso(f.validTo),
    recordedAt: f.recordedAt.toISOString(),
    supersededAt: iso(f.supersededAt),
    statusAt: f.statusAt.toISOString(),
    proposedBy: f.proposedBy,
    retractionId: f.retractionId,
    restoredFromId: f.restoredFromId,
    line: renderFactLine(f),
  };
}
