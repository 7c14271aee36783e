import { ACTION_STATUSES } from '../domain/action.js';
import { EngineError } from '../domain/errors.js';
import { parseChoice } from '../domain/vocabulary.js';
import { ActionSql } from '../store/action-sql.js';
import type { ModuleDeps } from '../store/module-deps.js';
import type { ActionsApi } from './arrival-types.js';
import { requireSurface } from './surface.js';

/** A non-blank string, trimmed: INVALID_ARGUMENT naming `field` otherwise. */
function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new EngineError('INVALID_ARGUMENT', `an action needs a ${field}`, { data: { field } });
  }
  return value.trim();
}

/** The actions the host records, bound to one subject at a time. */
export function createActionsApi(deps: ModuleDeps): (subjectId: string) => ActionsApi {
  const { clock, newId } = deps;
  const actions = new ActionSql(deps.client);
  return (subjectId) => ({
    async record(input) {
      const status = parseChoice(ACTION_STATUSES, input.status ?? 'confirmed', 'status');
      const tool = requireText(input.tool, 'tool');
      const target = requireText(input.target, 'target');
      const surface = requireSurface(input.surface);
      const completedAt = input.completedAt;
      if (
        completedAt !== undefined &&
        (!(completedAt instanceof Date) || Number.isNaN(completedAt.getTime()))
      ) {
        throw new EngineError('INVALID_ARGUMENT', 'completedAt must be a valid Date', {
          data: { field: 'completedAt' },
        });
      }
      const at = clock();
      return actions.record({
        id: newId(),
        subjectId,
        tool,
        surface,
        target,
        status,
        completedAt: status === 'pending' ? null : (completedAt ?? at),
        at,
      });
    },
  });
}
