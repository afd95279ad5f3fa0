/**
 * The link the search and fetch tools give a contact: CONTACT_URL_TEMPLATE with `{id}` replaced (the product's own
 * contact page), or else `<issuer>/contacts/<id>`, a stable name for the contact on this service (docs/mcp.md).
 */
export function contactUrlFor(template: string | null, issuer: string): (id: string) => string {
  return template === null
    ? (id) => `${issuer}/contacts/${encodeURIComponent(id)}`
    : (id) => template.replaceAll('{id}', encodeURIComponent(id));
}
