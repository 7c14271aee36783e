/** A tool as registered: the surfaces it declares are the ones that bind it. */
export interface ToolRegistration {
  name: string;
  description: string;
  surfaces: string[];
}

/** A tool in the registry, with when it was first registered. */
export interface RegisteredTool extends ToolRegistration {
  registeredAt: Date;
}
