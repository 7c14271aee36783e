import { EngineError } from '../domain/errors.js';
import type { SubjectHandle } from './handle-types.js';

/**
 * What each argument of a handle method is, checked before the method runs so a JavaScript
 * caller's `null` or number is INVALID_ARGUMENT, never a TypeError: `input` a required object,
 * `options` an optional object, `value` anything the method checks itself (ids, queries, specs).
 */
export type ArgKind = 'input' | 'options' | 'value';

type Namespaces = Exclude<keyof SubjectHandle, 'id' | 'storeId'>;

/** Every method of every namespace; a method missing here does not compile. */
export const HANDLE_ARGS: {
  readonly [N in Namespaces]: { readonly [M in keyof SubjectHandle[N]]: readonly ArgKind[] };
} = {
  sessions: { create: ['options'], get: ['value'], list: ['options'] },
  reflection: { reflect: ['input'], list: ['options'], outcomes: ['options'] },
  summaries: { summarize: ['input'], list: ['options'] },
  turns: { add: ['input'], recordResponse: ['input'] },
  history: {
    turns: ['value', 'options'],
    render: ['value', 'options'],
    messages: ['value', 'options'],
    usage: ['value'],
    importConversations: ['value', 'options'],
  },
  gate: {
    propose: ['input'],
    pile: ['options'],
    pileCount: [],
    dropped: ['options'],
    droppedCount: [],
    droppedByDay: ['options'],
    requestForget: ['input'],
    forgetRequests: ['options'],
  },
  owner: {
    decide: ['input'],
    delegate: ['input'],
    retract: ['input'],
    forget: ['input'],
    forgetPlan: ['value'],
    declineForget: ['input'],
    setForgetPolicy: ['input'],
    forgetPolicy: [],
    retentionPlan: [],
    applyRetention: [],
    remember: ['input'],
    key: [],
    setKey: ['input'],
    verifyChain: ['options'],
    createToken: ['input'],
    tokens: [],
    revokeToken: ['input'],
  },
  slots: { declare: ['input'], list: [] },
  facts: { live: [], all: [], integrity: [], get: ['value'] },
  ledger: {
    retract: ['input'],
    get: ['value'],
    list: ['options'],
    due: [],
    settle: ['input'],
  },
  probes: {
    run: ['value', 'options'],
    get: ['value'],
    log: ['options'],
    calibrate: ['options'],
    calibrations: ['options'],
    isCalibrated: ['value'],
    instruments: [],
  },
  arrival: {
    assemble: ['input'],
    diff: ['input'],
    manifests: ['options'],
    timeZone: [],
    setTimeZone: ['value'],
  },
  tools: { register: ['input'], remove: ['value'], list: [], forSurface: ['value'] },
  commitments: { add: ['input'], done: ['value'], drop: ['value'], list: ['options'] },
  actions: { record: ['input'] },
  recall: { search: ['value', 'options'] },
  vectors: { embedPending: ['options'] },
};

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Throws INVALID_ARGUMENT when an argument is not of its kind. */
export function checkArgs(method: string, kinds: readonly ArgKind[], args: unknown[]): void {
  kinds.forEach((kind, i) => {
    const arg = args[i];
    if (kind === 'value') return;
    if (kind === 'options' && arg === undefined) return;
    if (!isObject(arg)) {
      const what = kind === 'input' ? 'an input object' : 'an options object (or nothing)';
      throw new EngineError('INVALID_ARGUMENT', `${method} takes ${what} as argument ${i + 1}`, {
        data: { field: kind === 'input' ? 'input' : 'options' },
      });
    }
  });
}
