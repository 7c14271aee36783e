import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
// Only the template's holder: importing the store here would load the migrations before a test
// file's vi.mock of them (test/subject-keys-migration.test.ts).
import { setEmbeddedTemplate } from '../../src/store/embedded-template.js';

let template: Blob | undefined;

/** The run's template: a dump of a store migrated to the last migration, read when first asked. */
export function runTemplate(): Blob {
  template ??= new Blob([readFileSync(inject('embeddedTemplatePath'))]);
  return template;
}

let empty: Blob | undefined;

/** An embedded store before any migration: where a test builds a store of an older release. */
export function emptyTemplate(): Blob {
  empty ??= new Blob([readFileSync(inject('emptyTemplatePath'))]);
  return empty;
}

/** Sets the run's template again (test/store-template.test.ts replaces it). */
export function useRunTemplate(): void {
  setEmbeddedTemplate(runTemplate);
}

// Every test file's embedded stores start from the run's migrated template (global-setup.ts).
useRunTemplate();
