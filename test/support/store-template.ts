import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
// Only the template's holder: importing the store here would load the migrations before a test
// file's vi.mock of them (test/subject-keys-migration.test.ts).
import { setEmbeddedTemplate } from '../../src/store/embedded-template.js';

const template = new Blob([readFileSync(inject('embeddedTemplatePath'))]);

/** The run's template: a dump of a store migrated to the last migration. */
export function runTemplate(): Blob {
  return template;
}

/** Sets the run's template again (test/store-template.test.ts replaces it). */
export function useRunTemplate(): void {
  setEmbeddedTemplate(template);
}

// Every test file's embedded stores start from the run's migrated template (global-setup.ts).
useRunTemplate();
