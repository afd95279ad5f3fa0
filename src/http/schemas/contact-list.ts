import Type, { type Static } from 'typebox';
import { ContactSchema } from '../../domain/contact.js';
import { LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, OFFSET_DEFAULT, OFFSET_MAX, OFFSET_MIN } from '../../domain/pagination.js';

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

export const ContactListResponseSchema = Type.Object(
  {
    data: Type.Array(ContactSchema, { maxItems: LIMIT_MAX }),
    pagination: PaginationSchema,
  },
  { additionalProperties: false },
);

export type ContactListResponse = Static<typeof ContactListResponseSchema>;
