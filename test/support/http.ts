/** What an in-process request to a Hono app answered: the status, the JSON body, the headers. */
export interface Answer {
  status: number;
  json: Record<string, unknown> & { error?: { code: string; message: string } };
  headers: Headers;
}

/** Anything that answers `request` as a Hono app does (the HTTP app, the serve app). */
interface Requestable {
  request(path: string, init: RequestInit): Response | Promise<Response>;
}

/**
 * One request in-process: `authorization` is sent as given (null: none), `body` as JSON, and
 * `headers` besides (a Host the serve app checks, say). An empty body reads as {}.
 */
export async function request(
  app: Requestable,
  method: string,
  path: string,
  authorization: string | null,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const sent: Record<string, string> = { ...headers };
  if (authorization !== null) sent.authorization = authorization;
  if (body !== undefined) sent['content-type'] = 'application/json';
  const res = await app.request(path, {
    method,
    headers: sent,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return {
    status: res.status,
    json: (text === '' ? {} : JSON.parse(text)) as Answer['json'],
    headers: res.headers,
  };
}
