import type { EngineContext } from './context.js';
import type { EngineModules } from './modules.js';
import type { SubjectHandle } from './handle-types.js';

/**
 * Wraps every method of a namespace so that it first checks the engine is open and the subject
 * exists. Generic on purpose: a method added to a namespace cannot skip the check. Every method
 * becomes async, so failures are rejections, never synchronous throws.
 */
function guarded<T extends object>(api: T, ready: () => Promise<unknown>): T {
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(api)) {
    if (typeof member !== 'function') continue;
    const method = member as (...args: unknown[]) => unknown;
    out[name] = async (...args: unknown[]) => {
      await ready();
      return method.apply(api, args);
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
  const g = <T extends object>(api: T): T => guarded(api, ready);
  return Object.freeze({
    id,
    sessions: g(modules.history.sessions(id)),
    turns: g(modules.history.turns(id)),
    history: g(modules.history.history(id)),
    gate: g(modules.gate.gate(id)),
    owner: g(modules.gate.owner(id)),
    slots: g(modules.gate.slots(id)),
    facts: g(modules.gate.facts(id)),
    ledger: g(modules.ledger.ledger(id)),
    probes: g(modules.probes.probes(id)),
    arrival: g(modules.arrival.arrival(id)),
    tools: g(modules.arrival.tools(id)),
    commitments: g(modules.arrival.commitments(id)),
    actions: g(modules.arrival.actions(id)),
    recall: g(modules.recall.recall(id)),
    vectors: g(modules.recall.vectors(id)),
  });
}
