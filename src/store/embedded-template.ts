/**
 * A dump of a freshly migrated embedded store that the embedded stores this process creates start
 * from: PGlite's initdb is most of the cost of a new store. Set by tests only (through
 * `src/engine/test-access.ts`, or this module alone where a test replaces the migrations); a host
 * never sets it. The migrations still run on every open, so a template older than the code is
 * brought up to date and one the code would refuse is refused.
 */
let template: Blob | undefined;

export function setEmbeddedTemplate(next: Blob | undefined): void {
  template = next;
}

export function embeddedTemplate(): Blob | undefined {
  return template;
}
