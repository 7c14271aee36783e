import type { EngineContext } from './context.js';
import type { EngineModules } from './modules.js';
import { checkArgs, HANDLE_ARGS, type ArgKind } from './handle-args.js';
import type { SubjectHandle } from './handle-types.js';
import { ownerRemember } from './remember.js';

/**
 * Wraps every method of a namespace so that it first checks the engine is open and the subject
 * exists, then that its arguments have the shapes HANDLE_ARGS declares. Generic on purpose: a
 * method added to a namespace cannot skip the checks. Every method becomes async, so failures
 * are rejections, never synchronous throws.
 */
function guarded<T extends object>(
  namespace: Exclude<keyof SubjectHandle, 'id' | 'storeId'>,
  api: T,
  ready: () => Promise<unknown>,
): T {
  const out: Record<string, unknown> = {};
  const kinds = HANDLE_ARGS[namespace] as Readonly<Record<string, readonly ArgKind[]>>;
  for (const [name, member] of Object.entries(api)) {
    if (typeof member !== 'function') continue;
    const method = member as (...args: unknown[]) => unknown;
    const args = kinds[name] ?? [];
    out[name] = async (...values: unknown[]) => {
      await ready();
      checkArgs(`${namespace}.${name}`, args, values);
      return method.apply(api, values);
    };
  }
  return Object.freeze(out) as T;
}

/** A handle whose every method acts on one subject only. */
export function createSubjectHandle(
  ctx: EngineContext,
  modules: EngineModules,
  id: string,
): SubjectHandle {
  const ready = () => ctx.requireSubject(id);
  const g = <T extends object>(ns: Exclude<keyof SubjectHandle, 'id' | 'storeId'>, api: T): T =>
    guarded(ns, api, ready);
  return Object.freeze({
    id,
    storeId: ctx.storeId,
    sessions: g('sessions', modules.history.sessions(id)),
    turns: g('turns', modules.history.turns(id)),
    history: g('history', modules.history.history(id)),
    gate: g('gate', modules.gate.gate(id)),
    owner: g('owner', {
      ...modules.gate.owner(id),
      ...modules.tokens.owner(id),
      ...ownerRemember(modules, id),
    }),
    slots: g('slots', modules.gate.slots(id)),
    facts: g('facts', modules.gate.facts(id)),
    ledger: g('ledger', modules.ledger.ledger(id)),
    probes: g('probes', modules.probes.probes(id)),
    arrival: g('arrival', modules.arrival.arrival(id)),
    tools: g('tools', modules.arrival.tools(id)),
    commitments: g('commitments', modules.arrival.commitments(id)),
    actions: g('actions', modules.arrival.actions(id)),
    recall: g('recall', modules.recall.recall(id)),
    reflection: g('reflection', modules.reflection.reflection(id)),
    summaries: g('summaries', modules.summaries.summaries(id)),
    vectors: g('vectors', modules.recall.vectors(id)),
  });
}
