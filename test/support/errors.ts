import { EngineError } from '../../src/index.js';

/** The EngineError code a call fails with; a call that succeeds fails the test. */
export async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof EngineError) return err.code;
    throw err;
  }
  throw new Error('expected an EngineError, got success');
}
