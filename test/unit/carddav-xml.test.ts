import { describe, expect, it } from 'vitest';
import type { Contact } from 'contacts-read-api-client';
import { readQueryFilter } from '../../src/carddav/query-filter.js';
import { escapeXml, propertiesResponse, dav, carddav } from '../../src/carddav/multistatus.js';
import { resourceAt, resourceOfHref } from '../../src/carddav/paths.js';
import { CARDDAV_NS, DAV_NS, SERVICE_NS } from '../../src/carddav/namespaces.js';
import { MAX_XML_DEPTH, MAX_XML_PATH } from '../../src/carddav/xml-nesting.js';
import { readXml } from '../../src/carddav/xml-reading.js';
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

  it('a declaration holds inside its element only: the siblings after it see the outer binding again', () => {
    const root = readXml('<D:a xmlns:D="DAV:" xmlns="urn:one"><D:b xmlns:D="urn:two" xmlns="urn:three"><c/></D:b><D:d/><e/></D:a>');
    const [b, d, e] = root.children;
    expect([b!.namespace, b!.children[0]!.namespace, d!.namespace, e!.namespace]).toEqual(['urn:two', 'urn:three', DAV_NS, 'urn:one']);
  });

  it('refuses what is not well-formed, an undeclared prefix, several roots and any DTD', () => {
    for (const body of ['<a><b></a>', '<x:propfind/>', '<a/><b/>', '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', 'not xml']) {
      expect(() => readXml(body), body).toThrow(expect.objectContaining({ status: 400 }));
    }
  });
});

describe('reading request XML: nesting limits', () => {
  const nested = (levels: number, name = 'a') => `<${name}>`.repeat(levels) + `</${name}>`.repeat(levels);
  const refusal = expect.objectContaining({ status: 400, condition: { namespace: SERVICE_NS, name: 'xml-nesting-within-limits' } });
  /** The CPU a read costs, in ms: the least of three runs, whatever it throws. */
  const cpuMs = (body: string) => {
    let least = Infinity;
    for (let run = 0; run < 3; run++) {
      const started = process.cpuUsage();
      try {
        readXml(body);
      } catch {
        // Only the time counts here.
      }
      const { user, system } = process.cpuUsage(started);
      least = Math.min(least, (user + system) / 1000);
    }
    return least;
  };
  /** A body of this size that clients send: a multiget of many hrefs. */
  const flat = (size: number) => {
    const href = '<D:href>/dav/addressbooks/u/contacts/0190b000-0000-7000-8000-000000000001.vcf</D:href>';
    return `<C:addressbook-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav">${href.repeat(Math.ceil(size / href.length))}</C:addressbook-multiget>`;
  };

  it(`nests up to ${MAX_XML_DEPTH} deep; one more is refused`, () => {
    expect(() => readXml(nested(MAX_XML_DEPTH))).not.toThrow();
    expect(() => readXml(nested(MAX_XML_DEPTH + 1))).toThrow(refusal);
  });

  it(`names along one branch run up to ${MAX_XML_PATH} characters, a dot after each; one more is refused`, () => {
    const name = (length: number) => 'n'.repeat(length - 1);
    expect(() => readXml(`<${name(MAX_XML_PATH / 2)}><${name(MAX_XML_PATH / 2)}/></${name(MAX_XML_PATH / 2)}>`)).not.toThrow();
    expect(() => readXml(`<${name(MAX_XML_PATH / 2)}><${name(MAX_XML_PATH / 2 + 1)}/></${name(MAX_XML_PATH / 2)}>`)).toThrow(refusal);
  });

  it('counts elements only: empty elements, end tags, and markup in comments, CDATA, processing instructions and attribute values', () => {
    const filler = '<?pi <a><a>?><!-- <a><a> --><![CDATA[<a><a>]]><b/><b attr="<a>/"/><b attr=\'>\'></b>';
    const body = `<?xml version="1.0"?>${'<a>'.repeat(MAX_XML_DEPTH - 1)}${filler.repeat(100)}${'</a>'.repeat(MAX_XML_DEPTH - 1)}`;
    expect(() => readXml(body)).not.toThrow();
  });

  it('a body 100,000 deep is refused having read no more than its first levels: under a tenth of what a flat body of its size costs', () => {
    const deep = nested(100_000);
    expect(() => readXml(deep)).toThrow(refusal);
    expect(cpuMs(deep)).toBeLessThan(cpuMs(flat(deep.length)) / 10);
  });

  it('long names are refused before the parser copies their path at every element (a 480 kB body took 15 s)', () => {
    const long = 'n'.repeat(200_000);
    const body = `<${long}>${'<c/>'.repeat(20_000)}</${long}>`;
    expect(() => readXml(body)).toThrow(refusal);
    expect(cpuMs(body)).toBeLessThan(cpuMs(flat(body.length)) / 10);
  });

  it('thousands of namespace declarations cost their number, not their number times the elements’ (20,000 of each took 236 s)', () => {
    const declarations = Array.from({ length: 20_000 }, (_, index) => ` xmlns:p${index}="urn:p${index}"`).join('');
    const body = `<D:propfind xmlns:D="DAV:"${declarations}><D:prop>${'<p7:x/>'.repeat(20_000)}</D:prop></D:propfind>`;
    const prop = readXml(body).children[0]!;
    expect(prop.children).toHaveLength(20_000);
    expect(prop.children.every((child) => child.namespace === 'urn:p7')).toBe(true);
    // Attributes cost fast-xml-parser more than elements do: about 6 times a flat body; it was 9,000 times.
    expect(cpuMs(body)).toBeLessThan(cpuMs(flat(body.length)) * 50);
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
