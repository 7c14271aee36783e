// The attestation rules as a table (ATTESTATION_RULES): each rule decides the case it names, with
// one of its verdicts, and leaves its near-miss to another rule; the table's names are distinct.
import { describe, expect, it } from 'vitest';
import { docSection } from './support/doc-section.js';
import {
  ATTESTATION_RULES,
  decideAttestation,
  type AttestationExample,
} from '../src/domain/attestation.js';

const listed = docSection('docs/ATTESTATION.md', 'attestation-rules');
/** The list's rows: number, rule, its verdicts and when it fires, as docs/ATTESTATION.md has them. */
const rows = [...listed.matchAll(/^\| (\d+)\s*\| `([a-z-]+)`\s*\|([^|]*)\|([^|]*)\|$/gm)].map(
  (m) => ({
    n: Number(m[1]),
    name: m[2] ?? '',
    verdicts: [...(m[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((x) => x[1] ?? ''),
    when: (m[4] ?? '').trim(),
  }),
);

const decide = (e: AttestationExample) => decideAttestation(e.claim, e.quote ?? e.turn, e.turn);
const shown = (e: AttestationExample) => `"${e.turn}" ⇒ ${e.claim}`;

describe('ATTESTATION_RULES', () => {
  it('names each rule once, and gives each a case it decides and a near-miss', () => {
    const names = ATTESTATION_RULES.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).not.toContain('asserted');
    for (const r of ATTESTATION_RULES) {
      expect(r.fires.length, r.name).toBeGreaterThan(0);
      expect(r.nearMiss.length, r.name).toBeGreaterThan(0);
    }
  });

  it('is listed in docs/ATTESTATION.md as the code has it: order, verdicts, when', () => {
    expect(rows).toEqual(
      ATTESTATION_RULES.map((r, i) => ({
        n: i + 1,
        name: r.name,
        verdicts: [...r.verdicts],
        when: r.when,
      })),
    );
  });

  for (const rule of ATTESTATION_RULES) {
    it(`${rule.name}: decides its cases, with one of its verdicts`, () => {
      for (const e of rule.fires) {
        const d = decide(e);
        expect(d.rule, shown(e)).toBe(rule.name);
        expect(rule.verdicts, shown(e)).toContain(d.attestation.verdict);
      }
    });
    it(`${rule.name}: leaves its near-miss to another rule (the negative control)`, () => {
      for (const e of rule.nearMiss) expect(decide(e).rule, shown(e)).not.toBe(rule.name);
    });
  }
});
