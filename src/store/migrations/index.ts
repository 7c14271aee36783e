import { sql as foundation } from './0001-foundation.js';
import { sql as factsGate } from './0002-facts-gate.js';
import { sql as probes } from './0003-probes.js';
import { sql as retractions } from './0004-retractions.js';
import { sql as arrival } from './0005-arrival.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** One list for both engines; append only, never edit an applied migration. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'foundation', sql: foundation },
  { version: 2, name: 'facts-gate', sql: factsGate },
  { version: 3, name: 'probes', sql: probes },
  { version: 4, name: 'retractions', sql: retractions },
  { version: 5, name: 'arrival', sql: arrival },
];
