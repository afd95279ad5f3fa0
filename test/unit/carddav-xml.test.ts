import { describe, expect, it } from 'vitest';
import type { Contact } from 'contacts-read-api-client';
import { readQueryFilter } from '../../src/carddav/query-filter.js';
import { escapeXml, propertiesResponse, dav, carddav } from '../../src/carddav/multistatus.js';
import { resourceAt, resourceOfHref } from '../../src/carddav/paths.js';
import { readXml, CARDDAV_NS, DAV_NS } from '../../src/carddav/xml-reading.js';
import { parseDepth } from '../../src/carddav/depth.js';
import { LISTED_NULLS } from '../support/contact-fixtures.js';

describe('reading request XML: namespaces resolved, whatever the prefixes', () => {
  it('resolves prefixed, default and redeclared namespaces', () => {
    const bodies = [
      '<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/><C:address-data xmlns:C="urn:ietf:params:xml:ns:carddav"/></D:prop></D:propfind>',
      '<propfind xmlns="DAV:"><prop><getetag/><address-data xmlns="urn:ietf:params:xml:ns:carddav"/></prop></propfind>',
      '<?xml version="1.0" encoding="utf-8"?><x:propfind xmlns:x="DAV:" xmlns:y="urn:ietf:params:xml:ns:carddav"><!-- a comment --><x:prop><x:getetag/><y:address-data/></x:prop></x:propfind>',
    ];
    for (const body of bodies) {
      const root = readXml(body);
      expect([root.namespace, root.name]).toEqual([DAV_NS, 'propfind']);
      const props = root.children[0]!.children.map((child) => [child.namespace, child.name]);
      expect(props).toEqual([
        [DAV_NS, 'getetag'],
        [CARDDAV_NS, 'address-data'],
      ]);
    }
  });

  it('keeps text and attributes, with entities decoded', () => {
    const root = readXml(
      '<C:text-match xmlns:C="urn:ietf:params:xml:ns:carddav" C:collation="i;octet" match-type="equals">A &amp; B &lt;c&gt;</C:text-match>',
    );
    expect(root.text).toBe('A & B <c>');
    expect(root.attributes).toEqual({ collation: 'i;octet', 'match-type': 'equals' });
  });

  it('refuses what is not well-formed, an undeclared prefix, several roots and any DTD', () => {
    for (const body of ['<a><b></a>', '<x:propfind/>', '<a/><b/>', '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', 'not xml']) {
      expect(() => readXml(body), body).toThrow(expect.objectContaining({ status: 400 }));
    }
  });
});

describe('writing multistatus XML', () => {
  it('escapes every text once, CR as a character reference, and declares foreign namespaces on the element', () => {
    expect(escapeXml(`<a href="x">&'\r\n`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&apos;&#13;\n');
    const response = propertiesResponse(
      '/dav/a&b/',
      [[dav('displayname'), escapeXml('A < B')]],
      [{ namespace: 'http://apple.com/ns/ical/', name: 'calendar-color' }, carddav('max-resource-size')],
    );
    expect(response).toBe(
      '<d:response><d:href>/dav/a&amp;b/</d:href>' +
        '<d:propstat><d:prop><d:displayname>A &lt; B</d:displayname></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>' +
        '<d:propstat><d:prop><x:calendar-color xmlns:x="http://apple.com/ns/ical/"/><card:max-resource-size/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>' +
        '</d:response>',
    );
  });
});

describe('paths and headers', () => {
  const user = '0190f5d2-7c3e-7a10-8b2c-3d4e5f607182';
  const contact = '0190f5d2-7c3e-7a10-8b2c-3d4e5f607183';
  it('names each resource with or without its trailing slash, and nothing else', () => {
    expect(resourceAt(`/dav/addressbooks/${user}/contacts`)).toEqual({ kind: 'book', userId: user });
    expect(resourceAt(`/dav/addressbooks/${user.toUpperCase()}/contacts/${contact}.vcf`)).toEqual({
      kind: 'card',
      userId: user,
      contactId: contact,
    });
    expect(resourceOfHref(`https://host.example/dav/addressbooks/${user}/contacts/${contact}.vcf`)).toMatchObject({ kind: 'card' });
    for (const path of [
      `/dav/addressbooks/${user}/other/`,
      `/dav/addressbooks/not-a-uuid/`,
      `/dav/addressbooks/${user}/contacts/${contact}`,
      '/dav/%zz',
      '/elsewhere',
    ]) {
      expect(resourceAt(path), path).toBeNull();
    }
  });

  it('reads Depth 0, 1 and infinity (served as 1), and refuses anything else', () => {
    expect([parseDepth('0'), parseDepth('1'), parseDepth('Infinity'), parseDepth(undefined)]).toEqual([0, 1, 1, 1]);
    expect(() => parseDepth('2')).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('addressbook-query filters (RFC 6352 §10.5)', () => {
  const contact = (values: Partial<Contact>): Contact => ({
    id: '0190f5d2-7c3e-7a10-8b2c-3d4e5f607182',
    ...LISTED_NULLS,
    created_at: '2024-01-03T00:00:00.000Z',
    updated_at: '2024-01-03T00:00:00.000Z',
    ...values,
  });
  const filter = (inner: string, test = 'anyof') =>
    readQueryFilter(readXml(`<C:filter xmlns:C="urn:ietf:params:xml:ns:carddav" test="${test}">${inner}</C:filter>`));
  const match = (prop: string, text: string, attributes = '') =>
    `<C:prop-filter name="${prop}"><C:text-match ${attributes}>${text}</C:text-match></C:prop-filter>`;

  it('folds case by the collation asked for', () => {
    const zoe = contact({ name: 'ZOË Straße' });
    expect(filter(match('FN', 'zoë'))(zoe)).toBe(true);
    expect(filter(match('FN', 'zoë', 'collation="i;ascii-casemap"'))(zoe)).toBe(false);
    expect(filter(match('FN', 'ZO', 'collation="i;ascii-casemap" match-type="starts-with"'))(contact({ name: 'zoe' }))).toBe(true);
    expect(filter(match('FN', 'zo', 'collation="i;octet" match-type="starts-with"'))(zoe)).toBe(false);
  });

  it('negates, combines, and tests whether a property is defined', () => {
    const ada = contact({ name: 'Ada', email: 'ada@example.com' });
    const bare = contact({ name: 'Bare' });
    expect(filter(match('EMAIL', 'example', 'negate-condition="yes"'))(ada)).toBe(false);
    expect(filter(match('EMAIL', 'nothing', 'negate-condition="yes"'))(ada)).toBe(true);
    expect(filter(match('EMAIL', 'x', 'negate-condition="yes"'))(bare)).toBe(false);
    expect(filter('<C:prop-filter name="EMAIL"><C:is-not-defined/></C:prop-filter>')(bare)).toBe(true);
    expect(filter('<C:prop-filter name="EMAIL"/>')(bare)).toBe(false);
    expect(filter(match('FN', 'ada') + match('FN', 'bare'), 'allof')(ada)).toBe(false);
    expect(filter(match('FN', 'ada') + match('FN', 'bare'), 'anyof')(ada)).toBe(true);
  });

  it('refuses what it cannot apply with 403 and the precondition', () => {
    expect(() => filter('<C:prop-filter name="EMAIL"><C:param-filter name="TYPE"/></C:prop-filter>')).toThrow(
      expect.objectContaining({ status: 403, condition: carddav('supported-filter') }),
    );
    expect(() => filter(match('FN', 'x', 'collation="i;nope"'))).toThrow(
      expect.objectContaining({ status: 403, condition: carddav('supported-collation') }),
    );
  });
});
