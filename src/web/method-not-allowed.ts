import type { FastifyInstance, FastifyRequest } from 'fastify';
import { PublicError } from '../domain/errors.js';

/**
 * Remembers which methods each path serves, so a request that matches a path but not its method is
 * answered 405 with `Allow`, and a path nobody serves 404. A route's `:param` segment matches any one segment.
 */
export function trackAllowedMethods(app: FastifyInstance): (request: FastifyRequest) => never {
  const allowed = new Map<string, Set<string>>();
  const withParameters = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (route) => {
    const methods = allowed.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) methods.add(method);
    allowed.set(route.url, methods);
    if (route.url.includes('/:')) withParameters.set(route.url, { pattern: patternOf(route.url), methods });
  });
  const methodsAt = (path: string): Set<string> | undefined => {
    const exact = allowed.get(path);
    if (exact) return exact;
    const matched = [...withParameters.values()].filter(({ pattern }) => pattern.test(path)).flatMap(({ methods }) => [...methods]);
    return matched.length === 0 ? undefined : new Set(matched);
  };
  return (request) => {
    const path = request.url.split('?', 1)[0]!;
    const methods = methodsAt(path);
    if (!methods) throw new PublicError(404, noSuchEndpointMessage(request.method, path));
    const allow = [...methods].sort().join(', ');
    throw new PublicError(405, methodNotAllowedMessage(request.method, path, allow), { headers: { allow } });
  };
}

export const noSuchEndpointMessage = (method: string, path: string): string => `No such endpoint: ${method} ${path}`;

export const methodNotAllowedMessage = (method: string, path: string, allow: string): string =>
  `Method ${method} is not allowed on ${path}; allowed: ${allow}`;

function patternOf(url: string): RegExp {
  const segments = url.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}$`);
}
