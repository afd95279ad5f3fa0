import Type, { type Static } from 'typebox';
import { apiKeyStart } from '../../domain/api-key.js';
import { NullableString, StringEnum } from '../../domain/schema-helpers.js';
import { CONTACTS_READ, KNOWN_SCOPES } from '../../domain/scopes.js';
import { MAX_ROTATION_OVERLAP_SECONDS, type CreatedKey, type ListedKey, type RotatedKey } from '../../operations/keys.js';

const DateTime = { format: 'date-time', examples: ['2026-05-01T09:30:00.000Z'] };
const MAX_LABEL_LENGTH = 200;

const id = Type.String({ format: 'uuid', description: 'The key’s id.' });
const start = (description: string) => Type.String({ description, examples: ['cnt_live_7Hq2…x9Zk'] });
const label = NullableString({ description: 'What the key is for, or null.' });
const scopes = Type.Array(StringEnum(KNOWN_SCOPES), { uniqueItems: true, description: 'What the key may do.' });
const createdAt = Type.String(DateTime);
const expiresAt = NullableString({ ...DateTime, description: 'When the key stops working, or null: until revoked.' });

export const CreatedKeySchema = Type.Object(
  {
    id,
    key: Type.String({
      description: 'The key itself, shown in this answer only: only its hash is stored. Give it to the user now.',
      examples: ['cnt_live_7Hq2pXr0aLmN4bVc8dEf1GhJ3kLx9ZkQ2w'],
    }),
    start: start('What a settings page may show of the key: its prefix and the secret’s first and last four characters.'),
    label,
    scopes,
    created_at: createdAt,
    expires_at: expiresAt,
  },
  { additionalProperties: false, description: 'A new key, with its secret.' },
);

export const RotatedKeySchema = Type.Object(
  { ...CreatedKeySchema.properties, replaces: Type.String({ format: 'uuid', description: 'The id of the key this one replaces.' }) },
  { additionalProperties: false, description: 'The new key, with its secret, and the key it replaces.' },
);

export const ListedKeySchema = Type.Object(
  {
    id,
    start: NullableString({ description: 'What a settings page may show of the key; null for keys made before it was kept.' }),
    label,
    scopes,
    created_at: createdAt,
    last_used_at: NullableString({ ...DateTime, description: 'The key’s last use, at most 60 s behind; null when never used.' }),
    expires_at: expiresAt,
    revoked_at: NullableString({ ...DateTime, description: 'When the key was revoked, or null.' }),
    status: StringEnum(['active', 'expired', 'revoked'] as const, { description: 'Whether the key works now.' }),
  },
  { additionalProperties: false, description: 'A key, never its secret nor its hash.' },
);

export const KeyListSchema = Type.Object(
  { data: Type.Array(ListedKeySchema, { description: 'Every key of the user, oldest first, revoked and expired ones included.' }) },
  { additionalProperties: false },
);

export const NewKeySchema = Type.Object(
  {
    label: Type.Optional(
      NullableString({ maxLength: MAX_LABEL_LENGTH, description: 'What the key is for; trimmed, blank or null means none.' }),
    ),
    scopes: Type.Optional(
      Type.Array(StringEnum(KNOWN_SCOPES), {
        uniqueItems: true,
        default: [CONTACTS_READ],
        description: `What the key may do; \`["${CONTACTS_READ}"]\` when absent. A key without \`${CONTACTS_READ}\` gets 403.`,
      }),
    ),
    expires_at: Type.Optional(
      NullableString({ ...DateTime, description: 'When the key stops working, a time in the future; null or absent: until revoked.' }),
    ),
  },
  { additionalProperties: false },
);

export const RotationSchema = Type.Object(
  {
    overlap_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ROTATION_OVERLAP_SECONDS,
        default: 0,
        description: `How long the old key goes on working, 0 to ${MAX_ROTATION_OVERLAP_SECONDS} seconds (a week); never longer than it already would.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const UserKeysParamsSchema = Type.Object(
  { id: Type.String({ description: 'The owner’s id (a UUID).' }) },
  { additionalProperties: false },
);

export const KeyParamsSchema = Type.Object(
  { keyId: Type.String({ description: 'The key’s id (a UUID).' }) },
  { additionalProperties: false },
);

export function createdKeyJson(created: CreatedKey): Static<typeof CreatedKeySchema> {
  const { record, key } = created;
  return {
    id: record.id,
    key,
    start: apiKeyStart(key),
    label: record.label,
    scopes: record.scopes,
    created_at: record.created_at,
    expires_at: record.expires_at,
  };
}

export function rotatedKeyJson(rotated: RotatedKey): Static<typeof RotatedKeySchema> {
  return { ...createdKeyJson(rotated), replaces: rotated.replaces };
}

export function listedKeyJson(listed: ListedKey): Static<typeof ListedKeySchema> {
  return {
    id: listed.id,
    start: listed.start,
    label: listed.label,
    scopes: listed.scopes,
    created_at: listed.created_at,
    last_used_at: listed.last_used_at,
    expires_at: listed.expires_at,
    revoked_at: listed.revoked_at,
    status: listed.status,
  };
}
