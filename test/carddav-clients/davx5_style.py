#!/usr/bin/python3
"""DAVx5's CardDAV request sequence, sent through Debian's python3-caldav.

python3-caldav (0.11) models calendars only, but its DAVClient is a plain WebDAV client: Basic auth negotiated from
the server's 401, PROPFIND and REPORT with a Depth header, and multistatus parsed with lxml. This script sends through
it the requests DAVx5 sends for an address book (DavResourceFinder, then ContactsSyncManager), with the same bodies
and the same choices:

  discover  the URL given (PROPFIND depth 0), /.well-known/carddav, the principal's addressbook-home-set, the home's
            address books (PROPFIND depth 1, read-only when current-user-privilege-set grants no write).
  sync      PROPFIND depth 0 of the book for getctag, sync-token and supported-report-set; nothing more when the ctag
            is the one of the last sync. Else REPORT sync-collection (sync-level 1, getetag only) from the stored
            token, or from none; members that are 404 are deleted locally, the others are downloaded when their ETag
            differs, by addressbook-multiget of 10 hrefs at a time (DAVx5's MAX_MULTIGET_RESOURCES). A 403 with
            DAV:valid-sync-token starts again with no token; after a sync without a token, local cards the server
            did not list are deleted.

Usage: davx5_style.py STATE_FILE discover|sync, with DAV_BASE_URL, DAV_USERNAME and DAV_PASSWORD in the environment.
The state file is the "phone": the book's URL, the token, the ctag and every card (ETag and vCard text) by URL. The
script prints one JSON object saying what it did.
"""
import json
import os
import sys
from urllib.parse import urljoin

import caldav
from caldav.lib import error
from lxml import etree

DAV = "DAV:"
CARD = "urn:ietf:params:xml:ns:carddav"
CS = "http://calendarserver.org/ns/"
NAMESPACES = {"d": DAV, "card": CARD, "cs": CS}
MAX_MULTIGET_RESOURCES = 10


def tag(name):
    prefix, local = name.split(":")
    return "{%s}%s" % (NAMESPACES[prefix], local)


def xml_body(root_name, props, extra=()):
    """A request body: the root element with its children, then <prop> with the named properties."""
    root = etree.Element(tag(root_name), nsmap=NAMESPACES)
    for name, text in extra:
        etree.SubElement(root, tag(name)).text = text
    prop = etree.SubElement(root, tag("d:prop"))
    for name in props:
        etree.SubElement(prop, tag(name))
    return etree.tostring(root, xml_declaration=True, encoding="utf-8")


def multiget_body(hrefs):
    root = etree.Element(tag("card:addressbook-multiget"), nsmap=NAMESPACES)
    prop = etree.SubElement(root, tag("d:prop"))
    for name in ("d:getcontenttype", "d:getetag", "card:address-data"):
        etree.SubElement(prop, tag(name))
    for href in hrefs:
        etree.SubElement(root, tag("d:href")).text = href
    return etree.tostring(root, xml_declaration=True, encoding="utf-8")


class Member:
    def __init__(self, href, status, props):
        self.href = href
        self.status = status
        self.props = props

    def text(self, name):
        element = self.props.get(tag(name))
        return None if element is None else (element.text or "")

    def hrefs(self, name):
        element = self.props.get(tag(name))
        return [] if element is None else [href.text for href in element.iter(tag("d:href"))]

    def has(self, name, child):
        element = self.props.get(tag(name))
        return element is not None and element.find(".//" + tag(child)) is not None


class Phone:
    """What DAVx5 does, request by request, written down as it goes."""

    def __init__(self, base_url, username, password):
        self.client = caldav.DAVClient(url=base_url, username=username, password=password)
        self.base_url = base_url
        self.log = []

    def members(self, response, url):
        """The multistatus's responses: href made absolute, the status of the response, the props found (200)."""
        found = []
        sync_token = None
        if response.tree is None:
            return found, sync_token
        for element in response.tree:
            if element.tag == tag("d:sync-token"):
                sync_token = element.text
            if element.tag != tag("d:response"):
                continue
            href = urljoin(url, element.findtext(tag("d:href")))
            status = element.findtext(tag("d:status"))
            props = {}
            for propstat in element.iter(tag("d:propstat")):
                if " 200 " in (propstat.findtext(tag("d:status")) or ""):
                    for prop in propstat.find(tag("d:prop")):
                        props[prop.tag] = prop
            found.append(Member(href, status, props))
        return found, sync_token

    def propfind(self, url, props, depth):
        response = self.client.propfind(url, xml_body("d:propfind", props), depth)
        self.log.append({"method": "PROPFIND", "url": url, "depth": depth, "status": response.status})
        return self.members(response, url)[0]

    def report(self, url, body, what):
        response = self.client.report(url, body, 0)
        self.log.append({"method": "REPORT", "url": url, "report": what, "status": response.status})
        return self.members(response, url)

    def refused_report(self, url, body):
        """caldav raises on a 403 without its body: read it again, as DAVx5 reads the precondition from it."""
        answer = self.client.session.request(
            "REPORT", url, data=body, headers={"Depth": "0", "Content-Type": "application/xml; charset=utf-8"}, auth=self.client.auth
        )
        self.log.append({"method": "REPORT", "url": url, "report": "sync-collection", "status": answer.status_code})
        root = etree.fromstring(answer.content)
        preconditions = [etree.QName(child).localname for child in root] if root.tag == tag("d:error") else []
        return {"status": answer.status_code, "preconditions": preconditions}

    def well_known(self):
        """PROPFIND /.well-known/carddav, following its redirect with the body kept (OkHttp keeps a PROPFIND's body;
        requests would drop it on a 301, so the redirect is followed here)."""
        url = urljoin(self.base_url, "/.well-known/carddav")
        body = xml_body("d:propfind", ["d:current-user-principal"])
        headers = {"Depth": "0", "Content-Type": "application/xml; charset=utf-8"}
        answer = self.client.session.request("PROPFIND", url, data=body, headers=headers, auth=self.client.auth, allow_redirects=False)
        location = answer.headers.get("Location")
        self.log.append({"method": "PROPFIND", "url": url, "depth": 0, "status": answer.status_code})
        if answer.status_code not in (301, 302, 307, 308) or location is None:
            return {"status": answer.status_code, "location": location, "principal": None}
        target = urljoin(url, location)
        principals = [member.hrefs("d:current-user-principal") for member in self.propfind(target, ["d:current-user-principal"], 0)]
        principal = next((urljoin(target, hrefs[0]) for hrefs in principals if hrefs), None)
        return {"status": answer.status_code, "location": location, "principal": principal}

    def discover(self):
        given = self.propfind(
            self.base_url,
            ["d:resourcetype", "d:displayname", "d:current-user-privilege-set", "d:current-user-principal", "card:addressbook-home-set"],
            0,
        )
        principal = next((urljoin(self.base_url, m.hrefs("d:current-user-principal")[0]) for m in given if m.hrefs("d:current-user-principal")), None)
        well_known = self.well_known()
        principal = principal or well_known["principal"]
        if principal is None:
            return {"error": "no current-user-principal", "log": self.log}
        homes = [urljoin(principal, href) for m in self.propfind(principal, ["card:addressbook-home-set", "d:displayname"], 0) for href in m.hrefs("card:addressbook-home-set")]
        books = []
        for home in homes:
            props = ["d:resourcetype", "d:displayname", "card:addressbook-description", "d:current-user-privilege-set", "card:supported-address-data"]
            for member in self.propfind(home, props, 1):
                if member.has("d:resourcetype", "card:addressbook"):
                    writable = any(member.has("d:current-user-privilege-set", name) for name in ("d:write", "d:write-content", "d:bind", "d:all"))
                    books.append({"url": member.href, "displayname": member.text("d:displayname"), "read_only": not writable})
        return {"well_known": well_known, "principal": principal, "homes": homes, "books": books, "log": self.log}

    def sync(self, state):
        book = state["book"]
        [collection] = self.propfind(book, ["card:max-resource-size", "card:supported-address-data", "d:supported-report-set", "cs:getctag", "d:sync-token"], 0)
        ctag = collection.text("cs:getctag")
        if not collection.has("d:supported-report-set", "d:sync-collection"):
            return {"error": "the book does not offer sync-collection", "log": self.log}
        summary = {"mode": "unchanged", "downloaded": [], "removed": [], "multigets": 0, "invalid_token": None}
        if ctag is not None and ctag == state.get("ctag") and state.get("token"):
            summary["log"] = self.log
            return summary
        token = state.get("token") or ""
        started_from = token
        members = []
        while True:
            body = xml_body("d:sync-collection", ["d:getetag"], [("d:sync-token", token), ("d:sync-level", "1")])
            try:
                answered, next_token = self.report(book, body, "sync-collection")
            except error.AuthorizationError:
                self.log.append({"method": "REPORT", "url": book, "report": "sync-collection", "status": 403})
                refused = self.refused_report(book, body)
                if token == "" or "valid-sync-token" not in refused["preconditions"]:
                    raise
                summary["invalid_token"] = refused
                token = started_from = ""
                members = []
                continue
            members.extend(answered)
            # RFC 6578 3.6: a 507 for the book itself means the answer was truncated; go on from its token.
            truncated = any(m.href == book and " 507 " in (m.status or "") for m in answered)
            if not truncated:
                break
            summary["rounds"] = summary.get("rounds", 1) + 1
            token = next_token
        token = started_from
        summary["mode"] = "incremental" if token else "initial"
        cards = state.setdefault("cards", {})
        listed = set()
        to_download = []
        for member in members:
            if member.href == book:
                continue
            if member.status is not None and " 404 " in member.status:
                if cards.pop(member.href, None) is not None:
                    summary["removed"].append(member.href)
                continue
            listed.add(member.href)
            etag = member.text("d:getetag")
            if cards.get(member.href, {}).get("etag") != etag:
                to_download.append(member.href)
        if not token:
            for href in [href for href in cards if href not in listed]:
                del cards[href]
                summary["removed"].append(href)
        for start in range(0, len(to_download), MAX_MULTIGET_RESOURCES):
            bunch = to_download[start : start + MAX_MULTIGET_RESOURCES]
            summary["multigets"] += 1
            answered, _ = self.report(book, multiget_body(bunch), "addressbook-multiget")
            for member in answered:
                data = member.text("card:address-data")
                if data is not None:
                    cards[member.href] = {"etag": member.text("d:getetag"), "vcard": data, "contenttype": member.text("d:getcontenttype")}
                    summary["downloaded"].append(member.href)
        state["token"] = next_token
        state["ctag"] = ctag
        summary["members"] = len(members)
        summary["token"] = next_token
        summary["log"] = self.log
        return summary


def main():
    state_file, command = sys.argv[1], sys.argv[2]
    phone = Phone(os.environ["DAV_BASE_URL"], os.environ["DAV_USERNAME"], os.environ["DAV_PASSWORD"])
    state = {}
    if os.path.exists(state_file):
        with open(state_file, encoding="utf-8") as file:
            state = json.load(file)
    if command == "discover":
        result = phone.discover()
        if result.get("books"):
            state = {"book": result["books"][0]["url"]}
    elif command == "sync":
        result = phone.sync(state)
    else:
        raise SystemExit("usage: davx5_style.py STATE_FILE discover|sync")
    with open(state_file, "w", encoding="utf-8") as file:
        json.dump(state, file)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
