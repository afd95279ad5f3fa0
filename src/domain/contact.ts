import Type, { type Static } from 'typebox';
import { FreeFormObject, NullableObject, NullableString, NullableStringArray } from './schema-helpers.js';

const DateTime = { format: 'date-time', examples: ['2024-05-01T09:30:00.000Z'] };

/** The spec's plain text fields of a contact, in the spec's order. */
export const CONTACT_TEXT_FIELDS = [
  'name',
  'email',
  'phone',
  'company',
  'title',
  'school',
  'linkedin_url',
  'location',
  'description',
] as const;

/**
 * A contact as the API returns it. Every field of the spec is always present (null when it has no value);
 * `research_data` and `researched_at` appear only when set.
 */
export const ContactSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Stable identifier of the contact.' }),
    name: NullableString(),
    email: NullableString(),
    phone: NullableString(),
    company: NullableString(),
    title: NullableString(),
    school: NullableString(),
    linkedin_url: NullableString(),
    location: NullableString(),
    description: NullableString(),
    tags: NullableStringArray(),
    enrichment: NullableObject({ description: 'Free-form object; any properties allowed.' }),
    enriched_at: NullableString(DateTime),
    source: NullableString(),
    birthday: NullableString(),
    created_at: Type.String(DateTime),
    updated_at: Type.String(DateTime),
    research_data: Type.Optional(FreeFormObject({ description: 'Present only when set.' })),
    researched_at: Type.Optional(Type.String({ ...DateTime, description: 'Present only when set.' })),
  },
  { additionalProperties: false },
);

export type Contact = Static<typeof ContactSchema>;

/** Fields an import may set on a contact; everything the API shows except what the service owns. */
export const IMPORTABLE_FIELDS = [
  'id',
  ...CONTACT_TEXT_FIELDS,
  'tags',
  'enrichment',
  'enriched_at',
  'source',
  'birthday',
  'research_data',
  'researched_at',
  'created_at',
  'updated_at',
] as const;

export type ImportableField = (typeof IMPORTABLE_FIELDS)[number];

/** Values of the importable fields other than `id`, as stored. */
export interface ContactValues {
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  title: string | null;
  school: string | null;
  linkedin_url: string | null;
  location: string | null;
  description: string | null;
  tags: string[] | null;
  enrichment: Record<string, unknown> | null;
  enriched_at: string | null;
  source: string | null;
  birthday: string | null;
  research_data: Record<string, unknown> | null;
  researched_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * A validated import record. Only the fields the record names are in `values`, so updating an existing
 * contact changes those fields and keeps the others: a partial file never erases data.
 */
export interface ContactInput {
  id: string | null;
  values: Partial<ContactValues>;
  /** For migrations from another system: the owner's contact this one is a soft-merged duplicate of. */
  mergedInto?: string;
}
