import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Authenticator } from '../auth/authenticator.js';
import { basicOrBearer } from './basic-auth.js';
import { handleDavError } from './dav-error.js';
import type { CardDavDependencies } from './dependencies.js';
import { getCard } from './get-card.js';
import { DAV_ROOT, WELL_KNOWN_CARDDAV } from './paths.js';
import { propfind } from './propfind.js';
import { READ_METHODS, refuseWrite, WRITE_METHODS } from './read-only.js';
import { report } from './report.js';
import type { ContactStore } from '../store/store.js';
import { registerAuthorizedRoutes } from '../web/authorize.js';
import type { ServiceKeySource } from '../web/service-key.js';

/**
 * A request body's bound: a multiget naming 10,000 cards is about 1.4 MB (vdirsyncer asks for every card it lacks at
 * once); past this, 413 before the body is read.
 */
export const DAV_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** WebDAV methods Fastify does not know; each may carry a body. */
const WEBDAV_METHODS = ['PROPFIND', 'REPORT', 'PROPPATCH', 'MKCOL', 'MOVE', 'COPY'] as const;
const DAV_PATHS = ['/dav', `${DAV_ROOT}*`];
/** The address book is its own protocol, documented in docs/carddav.md: the REST API's OpenAPI document leaves it out. */
const NOT_IN_OPENAPI = { hide: true };
/** RFC 4918 §10.1 and RFC 6352 §6.1: WebDAV classes 1 and 3, and CardDAV. */
const DAV_COMPLIANCE = '1, 3, addressbook';

export interface CardDavPluginOptions {
  contacts: ContactStore;
  /** API keys, as the REST API checks them; Basic credentials carry the key as their password. */
  authenticator: Authenticator;
  serviceKey: ServiceKeySource;
  /** CHANGES_RETENTION_DAYS in ms: how old a sync token may be. */
  retentionMs: number;
}

/**
 * The read-only CardDAV address book (RFC 6352, RFC 6578 sync, RFC 6764 discovery; docs/carddav.md): each user's network
 * as one book under /dav/, for iOS and macOS Contacts, DAVx5 and Thunderbird. OPTIONS and /.well-known/carddav are
 * public; every other request goes through the REST API's authorization hook and rate limit, with Basic or Bearer.
 */
export default fp<CardDavPluginOptions>(
  async (app, options) => {
    for (const method of WEBDAV_METHODS) app.addHttpMethod(method, { hasBody: true });
    const deps: CardDavDependencies = { contacts: options.contacts, serviceKey: options.serviceKey, retentionMs: options.retentionMs };
    // iOS and DAVx5 send their PROPFIND body to the well-known address too: it is taken (and not read) like any other.
    await app.register(async (open) => {
      acceptAnyBodyAsText(open);
      open.route({ method: ['GET', 'PROPFIND'], url: WELL_KNOWN_CARDDAV, schema: NOT_IN_OPENAPI, handler: redirectToService });
      for (const url of DAV_PATHS) open.route({ method: 'OPTIONS', url, schema: NOT_IN_OPENAPI, handler: answerOptions });
    });
    const authenticator = basicOrBearer(options.authenticator);
    const { rateLimiter, limitAuthFailures } = app;
    await registerAuthorizedRoutes(app, { authenticator, rateLimiter, limitAuthFailures }, (api) => {
      api.setErrorHandler(handleDavError);
      acceptAnyBodyAsText(api);
      const routes = (method: string | string[], urls: readonly string[], handler: DavHandler, compress: boolean) => {
        for (const url of urls) {
          api.route({
            method,
            url,
            bodyLimit: DAV_BODY_LIMIT_BYTES,
            schema: NOT_IN_OPENAPI,
            config: { compress },
            handler: (request, reply) => handler(deps, request, reply),
          });
        }
      };
      routes('PROPFIND', ['/', ...DAV_PATHS], propfind, true);
      routes('REPORT', DAV_PATHS, report, true);
      routes('GET', DAV_PATHS, getCard, false);
      routes([...WRITE_METHODS], DAV_PATHS, (_deps, request, reply) => refuseWrite(request, reply), false);
    });
  },
  { name: 'carddav', dependencies: ['rate-limit', 'compression'], decorators: { fastify: ['rateLimiter', 'limitAuthFailures'] } },
);

type DavHandler = (deps: CardDavDependencies, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

/**
 * Bodies reach the handlers as text, bounded by the route's limit: XML (application/xml, text/xml) for the handlers to
 * read with the XML parser, and whatever a refused write carries (a vCard), which is never read.
 */
function acceptAnyBodyAsText(api: FastifyInstance): void {
  api.removeAllContentTypeParsers();
  const asText = (_request: FastifyRequest, body: string, done: (error: null, body: string) => void) => done(null, body);
  api.addContentTypeParser(['application/xml', 'text/xml'], { parseAs: 'string' }, asText);
  api.addContentTypeParser('*', { parseAs: 'string' }, asText);
}

/** RFC 6764 §5: the service's context path. */
async function redirectToService(_request: FastifyRequest, reply: FastifyReply) {
  return reply.code(301).header('location', DAV_ROOT).send();
}

/** OPTIONS on any path of the service, without a key: what it speaks, and that it only reads. */
async function answerOptions(_request: FastifyRequest, reply: FastifyReply) {
  return reply
    .code(200)
    .headers({ dav: DAV_COMPLIANCE, allow: READ_METHODS.join(', ') })
    .send();
}
