/** The XML namespaces the address book reads and writes, by URI. */
export const DAV_NS = 'DAV:';
export const CARDDAV_NS = 'urn:ietf:params:xml:ns:carddav';
export const CALENDARSERVER_NS = 'http://calendarserver.org/ns/';
/** This service's own: the preconditions no RFC names (RFC 4918 §16 lets a server add its own, in its own namespace). */
export const SERVICE_NS = 'urn:x-contacts-read-api:dav';
