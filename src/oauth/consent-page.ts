import { createHash } from 'node:crypto';
import type { ConsentBranding } from '../config.js';

/** What the consent page shows about the request being approved. */
export interface ConsentView {
  /** The client's registered name, or its client_id when it gave none. */
  clientName: string;
  /** The host the browser is sent back to with the code (`claude.ai`, `localhost:6274`, `cursor://…`'s scheme). */
  redirectHost: string;
  /** Where the form posts: this interaction's consent URL. */
  action: string;
  csrfToken: string;
  /** Why the last attempt failed (a key the API refuses), shown above the field. */
  error: string | null;
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const html = (text: string): string => text.replace(/[&<>"']/g, (c) => escapes[c]!);

function stylesheet(accent: string): string {
  return `
:root{color-scheme:light dark;--accent:${accent}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:Canvas;color:CanvasText}
main{max-width:28rem;margin:8vh auto;padding:2rem;border:1px solid color-mix(in srgb,CanvasText 15%,transparent);border-radius:12px}
h1{font-size:1.35rem;margin:0 0 1rem}
.logo{max-height:48px;max-width:100%;margin-bottom:1rem}
.client{font-weight:600}
ul{padding-left:1.25rem}
label{display:block;font-weight:600;margin:1.25rem 0 .35rem}
input[type=password]{width:100%;padding:.6rem .7rem;font:inherit;border:1px solid color-mix(in srgb,CanvasText 35%,transparent);border-radius:8px;background:Field;color:FieldText}
.hint{font-size:.875rem;opacity:.8;margin:.35rem 0 0}
.error{border-left:4px solid #c62828;padding:.5rem .75rem;background:color-mix(in srgb,#c62828 12%,Canvas)}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
button{flex:1;padding:.65rem 1rem;font:inherit;font-weight:600;border-radius:8px;cursor:pointer;border:2px solid var(--accent)}
button.approve{background:var(--accent);color:#fff}
button.deny{background:transparent;color:inherit}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
a{color:var(--accent)}
`;
}

/**
 * The policy of the consent and error pages: no script at all, the one inline stylesheet by its hash, the logo from
 * its own origin, never framed (clickjacking a consent page is how grants are stolen).
 */
export function consentContentSecurityPolicy(branding: ConsentBranding): string {
  const styleHash = createHash('sha256').update(stylesheet(branding.accentColor)).digest('base64');
  return [
    "default-src 'none'",
    `style-src 'sha256-${styleHash}'`,
    `img-src ${branding.logoUrl === null ? "'none'" : new URL(branding.logoUrl).origin}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function page(branding: ConsentBranding, title: string, body: string): string {
  const logo = branding.logoUrl === null ? '' : `<img class="logo" src="${html(branding.logoUrl)}" alt="${html(branding.productName)}">`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${html(title)} – ${html(branding.productName)}</title>
<style>${stylesheet(branding.accentColor)}</style>
</head>
<body>
<main>
${logo}
${body}
</main>
</body>
</html>
`;
}

/** The page where a user approves an agent: a plain form, so it works without JavaScript. */
export function renderConsentPage(branding: ConsentBranding, view: ConsentView): string {
  const product = html(branding.productName);
  const error = view.error === null ? '' : `<p class="error" role="alert" id="key-error">${html(view.error)}</p>`;
  const keysLink =
    branding.apiKeysUrl === null
      ? 'Make one in your account’s API settings (Pro plan, with the contacts:read scope).'
      : `Make one in <a href="${html(branding.apiKeysUrl)}">your API settings</a> (Pro plan, with the contacts:read scope).`;
  const body = `<h1>Connect <span class="client">${html(view.clientName)}</span> to ${product}</h1>
<p><span class="client">${html(view.clientName)}</span> asks to:</p>
<ul><li>read the contacts in your network (no changes)</li></ul>
<p>After you approve, your browser returns to <strong>${html(view.redirectHost)}</strong>. Its access lasts until you revoke the API key you enter here.</p>
<form method="post" action="${html(view.action)}">
<input type="hidden" name="csrf" value="${html(view.csrfToken)}">
${error}
<label for="api_key">Your personal API key</label>
<input type="password" id="api_key" name="api_key" autocomplete="off" spellcheck="false" required aria-describedby="key-hint${view.error === null ? '' : ' key-error'}"${view.error === null ? '' : ' aria-invalid="true" autofocus'}>
<p class="hint" id="key-hint">${keysLink}</p>
<div class="actions">
<button type="submit" class="approve" name="decision" value="approve">Approve</button>
<button type="submit" class="deny" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>`;
  return page(branding, `Connect ${view.clientName}`, body);
}

/** The page for an authorization that cannot go on (an unknown client, an expired page), in the same look. */
export function renderOAuthErrorPage(branding: ConsentBranding, out: { error?: string; error_description?: string }): string {
  const description = out.error_description ?? 'The authorization request cannot be completed.';
  const body = `<h1>This connection cannot be completed</h1>
<p role="alert">${html(description)}</p>
${out.error === undefined ? '' : `<p class="hint">Error code: <code>${html(out.error)}</code></p>`}
<p>Go back to the app you were connecting and start again.</p>`;
  return page(branding, 'Authorization error', body);
}
