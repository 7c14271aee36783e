import { sql as foundation } from './0001-foundation.js';
import { sql as factsGate } from './0002-facts-gate.js';
import { sql as retractions } from './0004-retractions.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** One list for both engines; append only, never edit an applied migration. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'foundation', sql: foundation },
  { version: 2, name: 'facts-gate', sql: factsGate },
  { version: 4, name: 'retractions', sql: retractions },
];
