import type { ContactValues } from '../../src/domain/contact.js';

/** A contact whose every field tests quoting, escaping, separators, line breaks and folding in each export format. */
export const AWKWARD_CONTACT = {
  name: 'Zoë "Zed" O’Brien, Jr.',
  email: 'zoe@example.com',
  phone: '+1 (555) 010-9999',
  company: 'Acme; Inc., "Intl"',
  title: 'Head of R&D\\Ops',
  school: 'ETH Zürich',
  linkedin_url: 'https://www.linkedin.com/in/zoe-obrien',
  location: 'Zürich, Switzerland',
  description: `Met at the 2023 offsite.\nLikes long descriptions: ${'日本語のテキストと絵文字 🎉, '.repeat(4)}end.`,
  tags: ['friend', 'a,b', 'ünïcode'],
  enrichment: { headline: 'CEO at "Acme"', nested: { list: [1, 'two\nlines'] } },
  enriched_at: '2024-05-01T09:30:00.000Z',
  source: 'linkedin',
  birthday: '1906-12-09',
  created_at: '2024-01-02T03:04:05.678Z',
  updated_at: '2024-06-07T08:09:10.111Z',
  research_data: { summary: 'r, with "quotes"' },
  researched_at: '2024-05-02T07:30:00.500Z',
} as const satisfies ContactValues;
