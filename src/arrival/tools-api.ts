import { EngineError } from '../domain/errors.js';
import type { ModuleDeps } from '../store/module-deps.js';
import { ToolSql } from '../store/tool-sql.js';
import type { ToolsApi } from './arrival-types.js';
import { requireSurface } from './surface.js';

const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

function requireToolName(name: unknown): string {
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    const shown = typeof name === 'string' ? `"${name}"` : String(name);
    throw new EngineError(
      'INVALID_ARGUMENT',
      `tool name ${shown}: use letters, digits and _ . : -`,
      {
        data: { field: 'name' },
      },
    );
  }
  return name;
}

/** The tool registry, bound to one subject at a time. */
export function createToolsApi(deps: ModuleDeps): (subjectId: string) => ToolsApi {
  const { clock } = deps;
  const tools = new ToolSql(deps.client);
  return (subjectId) => ({
    async register(input) {
      const name = requireToolName(input.name);
      const description = input.description ?? '';
      if (typeof description !== 'string') {
        throw new EngineError('INVALID_ARGUMENT', 'a tool description is text', {
          data: { field: 'description' },
        });
      }
      if (!Array.isArray(input.surfaces) || input.surfaces.length === 0) {
        throw new EngineError('INVALID_ARGUMENT', 'a tool declares at least one surface', {
          data: { field: 'surfaces' },
        });
      }
      const surfaces = [...new Set(input.surfaces.map((s) => requireSurface(s, 'surfaces')))];
      await tools.register(subjectId, { name, description, surfaces }, clock());
    },
    async remove(name) {
      if (typeof name !== 'string') {
        throw new EngineError('INVALID_ARGUMENT', 'name the tool to remove', {
          data: { field: 'name' },
        });
      }
      return tools.remove(subjectId, name);
    },
    list: () => tools.list(subjectId),
    async forSurface(surface) {
      return tools.toolsFor(subjectId, requireSurface(surface));
    },
  });
}
