import { describe, expect, it } from 'vitest';
import { renderConsentPage } from '../../src/oauth/consent-page.js';
import { loadConfig } from '../../src/config.js';

const VIEW = { clientName: 'Claude', redirectHost: 'claude.ai', action: '/oauth/interaction/x', csrfToken: 'token', error: null };

/** Markup as a reader sees it: tags dropped, whitespace collapsed. */
const textOf = (markup: string): string =>
  markup
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
const headingOf = (page: string): string => textOf(/<h1>(.*?)<\/h1>/s.exec(page)?.[1] ?? '');

describe('the consent page’s heading', () => {
  it('reads as a sentence with the default product name (no “Contacts contacts”)', () => {
    const page = renderConsentPage(loadConfig({}).oauth.consent, VIEW);
    expect(headingOf(page)).toBe('Connect Claude to Contacts');
    expect(textOf(/<body>(.*)<\/body>/s.exec(page)?.[1] ?? '')).not.toMatch(/\b(\w+) \1\b/i);
  });

  it('names the product the deployment brands it with', () => {
    const page = renderConsentPage(loadConfig({ OAUTH_PRODUCT_NAME: 'Acme CRM' }).oauth.consent, VIEW);
    expect(headingOf(page)).toBe('Connect Claude to Acme CRM');
  });
});
