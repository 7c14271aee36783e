/**
 * A dump of a freshly migrated embedded store that the embedded stores this process creates start
 * from: PGlite's initdb is most of the cost of a new store. Set by tests only (through
 * `src/engine/test-access.ts`, or this module alone where a test replaces the migrations); a host
 * never sets it. The migrations still run on every open, so a template older than the code is
 * brought up to date and one the code would refuse is refused.
 */
let source: Blob | (() => Blob) | undefined;

/** The template, or a function that loads it when the first store needs it; undefined: none. */
export function setEmbeddedTemplate(template: Blob | (() => Blob) | undefined): void {
  source = template;
}

export function embeddedTemplate(): Blob | undefined {
  if (typeof source === 'function') source = source();
  return source;
}
