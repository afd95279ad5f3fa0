import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../web/authorize.js';
import { DavError } from './dav-error.js';
import type { CardDavDependencies } from './dependencies.js';
import { multiget } from './multiget.js';
import { dav } from './multistatus.js';
import { propertyRequestIn, requiredXml } from './property-request.js';
import { addressbookQuery } from './query.js';
import { sendMultistatus } from './reply.js';
import { ownedResource } from './resources.js';
import { syncCollection } from './sync-collection.js';
import { CARDDAV_NS, DAV_NS } from './namespaces.js';
import type { XmlElement } from './xml-reading.js';

type Report = typeof multiget;

const REPORTS: ReadonlyMap<string, Report> = new Map([
  [`${CARDDAV_NS} addressbook-multiget`, multiget],
  [`${CARDDAV_NS} addressbook-query`, addressbookQuery],
  [`${DAV_NS} sync-collection`, syncCollection],
]);

/** REPORT on the address book: the three reports its supported-report-set names; any other is 403 supported-report. */
export async function report(deps: CardDavDependencies, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { ownerId } = principalOf(request);
  const resource = ownedResource(request, ownerId);
  const body: XmlElement = requiredXml(request.body, 'REPORT');
  const run = REPORTS.get(`${body.namespace} ${body.name}`);
  if (run === undefined || resource.kind !== 'book') {
    throw new DavError(
      403,
      'This report is not supported here; the address book supports addressbook-multiget, addressbook-query and sync-collection',
      dav('supported-report'),
    );
  }
  // Without DAV:prop a report still answers each card's href; getetag is what every client then needs.
  const asked = propertyRequestIn(body) ?? { kind: 'prop', names: [dav('getetag')] };
  return sendMultistatus(reply, await run(deps, ownerId, body, asked));
}
