import Type, { type Static } from 'typebox';
import { ContactSchema, type Contact } from '../../domain/contact.js';
import { LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, OFFSET_DEFAULT, OFFSET_MAX, OFFSET_MIN, type Pagination } from '../../domain/pagination.js';

export const ListContactsQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: LIMIT_MIN,
        maximum: LIMIT_MAX,
        default: LIMIT_DEFAULT,
        description: `Page size, ${LIMIT_MIN} to ${LIMIT_MAX}. Base-10 digits only; given at most once.`,
      }),
    ),
    offset: Type.Optional(
      Type.Integer({
        minimum: OFFSET_MIN,
        maximum: OFFSET_MAX,
        default: OFFSET_DEFAULT,
        description: 'Number of contacts to skip. Base-10 digits only; given at most once. Past the end gives an empty page.',
      }),
    ),
  },
  { additionalProperties: false },
);

export type ListContactsQuery = Static<typeof ListContactsQuerySchema>;

export const PaginationSchema = Type.Object(
  {
    limit: Type.Integer({ description: 'Page size applied.' }),
    offset: Type.Integer({ description: 'Number of contacts skipped.' }),
    total: Type.Integer({
      description: 'Number of listable contacts of the key’s user (soft-merged duplicates and the self row excluded).',
    }),
    nextOffset: Type.Unsafe<number | null>({
      type: ['integer', 'null'],
      description: 'Offset of the next page (offset + number returned), or null when the listing is finished.',
    }),
  },
  { additionalProperties: false },
);

/** The first page of a network of 300 with `limit=2`: what the OpenAPI document and its /docs page show. */
const FIRST_PAGE_EXAMPLE: { data: Contact[]; pagination: Pagination } = {
  data: [
    {
      id: '4a4882fc-fe9e-4130-a564-d5482c1fc30d',
      name: 'Garnet Reynolds-Miller',
      email: 'garnet.reynolds-miller@yahoo.com',
      phone: '+13136426123',
      company: 'Crist - Beer',
      title: 'District Data Officer',
      school: null,
      linkedin_url: 'https://www.linkedin.com/in/garnet-reynolds-miller-2ba4wx',
      location: null,
      description: null,
      tags: ['alumni', 'founder', 'recruiter'],
      enrichment: null,
      enriched_at: null,
      source: 'linkedin',
      birthday: null,
      created_at: '2025-11-24T00:47:56.395Z',
      updated_at: '2025-11-24T00:47:56.395Z',
    },
    {
      id: '2ecadc2e-8ce5-4136-9dd0-86315f58b5ff',
      name: 'Montana Blanda',
      email: 'montana.blanda@gmail.com',
      phone: null,
      company: 'Buckridge and Sons',
      title: 'Human Applications Executive',
      school: null,
      linkedin_url: null,
      location: 'Kundestad, Iraq',
      description: 'Met at the Lisbon product summit; intro to their data team.',
      tags: ['advisor', 'alumni', 'friend'],
      enrichment: { headline: 'Human Applications Executive at Buckridge and Sons' },
      enriched_at: '2025-11-25T06:10:12.000Z',
      source: 'gmail',
      birthday: '1964-02-26',
      created_at: '2025-11-25T04:52:33.318Z',
      updated_at: '2025-11-25T06:10:12.000Z',
      research_data: { summary: 'Leads a 12-person applications team.' },
      researched_at: '2025-11-25T06:10:12.000Z',
    },
  ],
  pagination: { limit: 2, offset: 0, total: 300, nextOffset: 2 },
};

export const ContactListResponseSchema = Type.Object(
  {
    data: Type.Array(ContactSchema, { maxItems: LIMIT_MAX }),
    pagination: PaginationSchema,
  },
  { additionalProperties: false, examples: [FIRST_PAGE_EXAMPLE] },
);

export type ContactListResponse = Static<typeof ContactListResponseSchema>;
