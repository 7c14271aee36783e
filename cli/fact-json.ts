import type { Attestation, Fact } from '../src/index.js';
import { renderFactLine } from '../src/domain/fact-render.js';
import { shownJson } from '../src/domain/shown-text.js';

/**
 * A proposal's attestation as the CLI prints it after the proposal: its verdict and reason on a
 * line of their own, marked UNATTESTED unless the verdict is `asserted`.
 */
export function verdictLine(p: { attested: boolean; attestation?: Attestation | null }): string {
  const a = p.attestation;
  if (a === undefined || a === null) return p.attested ? '' : '  (UNATTESTED)';
  return `\n  ${a.verdict}${p.attested ? '' : ' (UNATTESTED)'}: ${a.reason}`;
}

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/** A fact as the CLI prints it in JSON: its strings shown as a model is shown stored text. */
export function factToJson(f: Fact): Record<string, unknown> {
  return shownJson({
    id: f.id,
    subject: f.subjectId,
    slot: f.slot,
    key: f.key,
    text: f.text,
    origin: f.origin,
    status: f.status,
    attested: f.attested,
    attestation: f.attestation ?? null,
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
  }) as Record<string, unknown>;
}
