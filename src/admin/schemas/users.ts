import Type, { type Static } from 'typebox';
import { BILLING_PLANS } from '../../domain/billing-plan.js';
import { NullableString, StringEnum } from '../../domain/schema-helpers.js';
import type { User } from '../../operations/users.js';

const DateTime = { format: 'date-time', examples: ['2026-05-01T09:30:00.000Z'] };
/** Long enough for any real address (RFC 5321 allows 254) and any display name. */
const MAX_EMAIL_LENGTH = 320;
const MAX_NAME_LENGTH = 200;

const email = (description: string) =>
  Type.String({ minLength: 1, maxLength: MAX_EMAIL_LENGTH, description, examples: ['ada@example.com'] });
const name = NullableString({ maxLength: MAX_NAME_LENGTH, description: 'Display name; trimmed, and blank or null means none.' });
const plan = StringEnum(BILLING_PLANS, { description: 'The billing plan: API keys work only on `pro`.' });

export const UserSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The user’s id: the host’s own when it gave one at creation.' }),
    email: Type.String({ description: 'Unique, ignoring case.' }),
    name: NullableString({ description: 'Display name, or null.' }),
    plan,
    created_at: Type.String(DateTime),
  },
  { additionalProperties: false, description: 'A user of the host product, who owns a network of contacts and API keys.' },
);

export const UserListSchema = Type.Object(
  { data: Type.Array(UserSchema, { description: 'The user holding the email, or nothing.' }) },
  { additionalProperties: false },
);

export const NewUserSchema = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'Your own id for the user, a UUID, so that both systems share one id; a new UUIDv7 when absent.',
      }),
    ),
    email: email('The user’s email address: unique, ignoring case.'),
    name: Type.Optional(name),
    plan,
  },
  { additionalProperties: false },
);

export const UserChangesSchema = Type.Object(
  {
    email: Type.Optional(email('A new email address: unique, ignoring case.')),
    name: Type.Optional(name),
    plan: Type.Optional(
      StringEnum(BILLING_PLANS, {
        description: 'A new plan. Every worker applies it to the user’s keys and OAuth tokens within a second: on `free` they get 403.',
      }),
    ),
  },
  { additionalProperties: false, description: 'The fields to change; a field left out keeps its value.' },
);

export const UserParamsSchema = Type.Object(
  { id: Type.String({ description: 'The user’s id (a UUID).' }) },
  { additionalProperties: false },
);

export const UserEmailQuerySchema = Type.Object(
  { email: email('The email address to look up, ignoring case.') },
  { additionalProperties: false },
);

export type UserJson = Static<typeof UserSchema>;

export function userJson(user: User): UserJson {
  return { id: user.id, email: user.email, name: user.name, plan: user.plan, created_at: user.created_at };
}
