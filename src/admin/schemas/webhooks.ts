import Type from 'typebox';
import { NullableString, StringEnum } from '../../domain/schema-helpers.js';
import { WEBHOOK_URL_MAX_LENGTH } from '../../domain/webhook-url.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_STATUSES } from '../../domain/webhooks.js';
import { DELIVERIES_LIMIT_DEFAULT, DELIVERIES_LIMIT_MAX, WEBHOOK_DESCRIPTION_MAX_LENGTH } from '../../operations/webhooks.js';

const DateTime = { format: 'date-time', examples: ['2026-05-01T09:30:00.000Z'] };

const id = Type.String({ format: 'uuid', description: 'The endpoint’s id.' });
const url = (description: string) =>
  Type.String({ minLength: 1, maxLength: WEBHOOK_URL_MAX_LENGTH, description, examples: ['https://hooks.example.com/contacts'] });
const events = (description: string) =>
  Type.Array(StringEnum(WEBHOOK_EVENT_TYPES), { minItems: 1, uniqueItems: true, description, examples: [['contact.upserted']] });
const description = (text: string) => NullableString({ maxLength: WEBHOOK_DESCRIPTION_MAX_LENGTH, description: text });
const status = (text: string) => StringEnum(WEBHOOK_STATUSES, { description: text });
const secret = Type.String({
  description:
    'The signing secret, `whsec_` and base64 as every Standard Webhooks library takes it: shown in this answer only. Give it to the receiver now.',
  examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3Q5lJ7J9k7w='],
});

export const WebhookSchema = Type.Object(
  {
    id,
    url: url('Where the events are POSTed.'),
    events: events('The event types delivered; changes of other types are skipped.'),
    description: description('What the endpoint is for, or null.'),
    status: status('`enabled`: events are delivered; `disabled`: none are, until it is enabled again.'),
    disabled_reason: NullableString({
      description: 'Why it is disabled (by the admin, a `410 Gone`, retries exhausted, or the change log’s retention); null while enabled.',
      examples: ['retries exhausted: 9 attempts failed, the last with HTTP 503'],
    }),
    lag: Type.Object(
      {
        events: Type.Integer({
          minimum: 0,
          description: 'Contacts whose last change is past the cursor, of every type: to be delivered, or skipped when not subscribed.',
        }),
        seconds: Type.Integer({ minimum: 0, description: 'Seconds since the oldest of them changed; 0 when none waits.' }),
      },
      { additionalProperties: false, description: 'How far the endpoint’s cursor is behind its owner’s change log.' },
    ),
    created_at: Type.String(DateTime),
    updated_at: Type.String(DateTime),
  },
  { additionalProperties: false, description: 'A webhook endpoint, never its secret.' },
);

export const CreatedWebhookSchema = Type.Object(
  { ...WebhookSchema.properties, secret },
  { additionalProperties: false, description: 'A new endpoint, with its signing secret.' },
);

export const WebhookListSchema = Type.Object(
  { data: Type.Array(WebhookSchema, { description: 'Every endpoint of the user, oldest first.' }) },
  { additionalProperties: false },
);

export const RotatedSecretSchema = Type.Object(
  { secret },
  { additionalProperties: false, description: 'The new signing secret; the previous one goes on signing for 24 hours.' },
);

export const DeliverySchema = Type.Object(
  {
    event_id: Type.String({
      description: 'The event’s `webhook-id`: the same for every attempt at it.',
      examples: ['msg_2Kq8ZLM4XWQbH7JD3YRvTn5Cf0'],
    }),
    type: StringEnum(WEBHOOK_EVENT_TYPES, { description: 'The event’s type.' }),
    attempt: Type.Integer({ minimum: 1, description: '1 for the first attempt at the event, 2 for its first retry, …' }),
    status_code: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The receiver’s HTTP status; null when none came (a timeout, a refused connection or address).',
    }),
    error: NullableString({ description: 'Why the attempt failed, short, never the response body; null for a 2xx.' }),
    duration_ms: Type.Integer({ minimum: 0, description: 'How long the attempt took.' }),
    attempted_at: Type.String(DateTime),
  },
  { additionalProperties: false, description: 'One attempt to deliver one event.' },
);

export const DeliveryListSchema = Type.Object(
  { data: Type.Array(DeliverySchema, { description: 'The latest attempts first.' }) },
  { additionalProperties: false },
);

export const NewWebhookSchema = Type.Object(
  {
    url: url('Where to POST the events: `https`, on a public address (unless the deployment allows private ones).'),
    events: Type.Optional(events('The event types to deliver; all three when absent.')),
    description: Type.Optional(description('What the endpoint is for; trimmed, blank or null means none.')),
    since: Type.Optional(
      Type.String({
        ...DateTime,
        description: 'Deliver the changes made since this time (within the change log’s retention); absent: only changes from now.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const WebhookChangesSchema = Type.Object(
  {
    url: Type.Optional(url('A new URL, checked as at creation.')),
    events: Type.Optional(events('The event types to deliver from now.')),
    description: Type.Optional(description('What the endpoint is for; trimmed, blank or null means none.')),
    status: Type.Optional(
      status(
        'Disable or enable. An enabled endpoint resumes from its cursor, or from now when its cursor fell out of the change log’s retention.',
      ),
    ),
  },
  { additionalProperties: false, description: 'The fields to change; a field left out keeps its value.' },
);

export const ReplaySchema = Type.Object(
  {
    since: Type.String({
      ...DateTime,
      description: 'Deliver again the changes made since this time, within the change log’s retention, with their original `webhook-id`.',
    }),
  },
  { additionalProperties: false },
);

export const SecretRotationSchema = Type.Object(
  {},
  { additionalProperties: false, description: 'No fields: an empty object, or no body. The previous secret signs for 24 hours more.' },
);

export const DeliveriesQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,3}$',
        description: `How many attempts, 1 to ${DELIVERIES_LIMIT_MAX}; ${DELIVERIES_LIMIT_DEFAULT} when absent.`,
        examples: ['20'],
      }),
    ),
  },
  { additionalProperties: false },
);

export const WebhookParamsSchema = Type.Object(
  { webhookId: Type.String({ description: 'The endpoint’s id (a UUID).' }) },
  { additionalProperties: false },
);
