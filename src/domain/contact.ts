import Type, { type Static } from 'typebox';
import { FreeFormObject, NullableObject, NullableString, NullableStringArray } from './schema-helpers.js';

const DateTime = { format: 'date-time', examples: ['2024-05-01T09:30:00.000Z'] };

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

/** How a contact field holds its value; storage, import, export and the MCP schema all follow from it. */
export type ContactFieldKind = 'id' | 'text' | 'tags' | 'object' | 'timestamp';

export interface ContactField {
  name: keyof Contact;
  kind: ContactFieldKind;
  /** Null when it has no value. */
  nullable: boolean;
  /** Present only when set (the spec's research fields). */
  optional: boolean;
  description: string | undefined;
}

interface PropertySchema {
  type?: string | string[];
  format?: string;
  description?: string;
}

function kindOf(schema: PropertySchema): ContactFieldKind {
  const types = [schema.type ?? []].flat();
  if (types.includes('array')) return 'tags';
  if (types.includes('object')) return 'object';
  if (schema.format === 'uuid') return 'id';
  if (schema.format === 'date-time') return 'timestamp';
  return 'text';
}

/** Every field of ContactSchema in its order, read from the schema itself so that nothing lists them by hand. */
export const CONTACT_FIELDS: readonly ContactField[] = Object.entries(ContactSchema.properties).map(([name, property]) => {
  const schema = property as PropertySchema;
  return {
    name: name as keyof Contact,
    kind: kindOf(schema),
    nullable: [schema.type ?? []].flat().includes('null'),
    optional: !(ContactSchema.required as readonly string[]).includes(name),
    description: schema.description,
  };
});

/** Set by the service when the record gives none; an export puts them last. */
const SERVICE_TIMESTAMPS = ['created_at', 'updated_at'] as const;

/**
 * Fields an import may set and an export writes, in the export's column order: every field of a contact, the
 * service's own timestamps last.
 */
export const IMPORTABLE_FIELDS: readonly (keyof Contact)[] = [
  ...CONTACT_FIELDS.map((field) => field.name).filter((name) => !(SERVICE_TIMESTAMPS as readonly string[]).includes(name)),
  ...SERVICE_TIMESTAMPS,
];

/** The names of the fields of one kind, in the schema's order. */
export function contactFieldsOfKind(kind: ContactFieldKind): (keyof Contact)[] {
  return CONTACT_FIELDS.filter((field) => field.kind === kind).map((field) => field.name);
}

/** Values of every field but `id`, as stored: a field shown only when set is null when unset. */
export type ContactValues = {
  [F in Exclude<keyof Contact, 'id'>]-?: undefined extends Contact[F] ? Exclude<Contact[F], undefined> | null : Contact[F];
};

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
