import { COMMITMENT_STATUSES, type Commitment } from '../domain/commitment.js';
import { EngineError } from '../domain/errors.js';
import { pageOf } from '../domain/input.js';
import { parseChoice } from '../domain/vocabulary.js';
import { CommitmentSql } from '../store/commitment-sql.js';
import type { ModuleDeps } from '../store/module-deps.js';
import type { CommitmentsApi } from './arrival-types.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DEFAULT_LIMIT = 100;

/** YYYY-MM-DD naming a day that exists (2026-02-30 does not). */
function isCalendarDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

function commitmentIdOf(id: unknown): string {
  if (typeof id !== 'string' || id === '') {
    throw new EngineError('INVALID_ARGUMENT', 'name the commitment by its id', {
      data: { field: 'commitmentId' },
    });
  }
  return id;
}

/** Commitments, bound to one subject at a time: another subject's read as not found. */
export function createCommitmentsApi(deps: ModuleDeps): (subjectId: string) => CommitmentsApi {
  const { clock, newId } = deps;
  const commitments = new CommitmentSql(deps.client);
  const close = async (
    subjectId: string,
    raw: unknown,
    status: 'done' | 'dropped',
  ): Promise<Commitment> => {
    const id = commitmentIdOf(raw);
    const closed = await commitments.close(subjectId, id, status, clock());
    if (closed !== null) return closed;
    const existing = await commitments.get(subjectId, id);
    if (existing === null) throw new EngineError('COMMITMENT_NOT_FOUND', `no commitment "${id}"`);
    throw new EngineError(
      'COMMITMENT_NOT_OPEN',
      `commitment "${id}" is already ${existing.status}`,
    );
  };
  return (subjectId) => ({
    async add(input) {
      if (typeof input.title !== 'string') {
        throw new EngineError('INVALID_ARGUMENT', 'a commitment title is text', {
          data: { field: 'title' },
        });
      }
      const title = input.title.trim();
      if (title === '') throw new EngineError('EMPTY_TEXT', 'a commitment needs a title');
      if (
        input.due !== undefined &&
        (typeof input.due !== 'string' || !isCalendarDate(input.due))
      ) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          `due date ${typeof input.due === 'string' ? `"${input.due}"` : String(input.due)}: use YYYY-MM-DD`,
          { data: { field: 'due' } },
        );
      }
      return commitments.add({
        id: newId(),
        subjectId,
        title,
        due: input.due ?? null,
        at: clock(),
      });
    },
    done: (id) => close(subjectId, id, 'done'),
    drop: (id) => close(subjectId, id, 'dropped'),
    async list(options = {}) {
      const status =
        options.status === undefined
          ? null
          : parseChoice(COMMITMENT_STATUSES, options.status, 'status');
      return commitments.list(subjectId, status, pageOf(options, DEFAULT_LIMIT));
    },
  });
}
