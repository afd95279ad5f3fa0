import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  createWebhook,
  DELIVERIES_LIMIT_DEFAULT,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  replayWebhook,
  rotateWebhookSecret,
  updateWebhook,
  webhookDeliveryView,
  webhookLag,
  webhookView,
  type WebhookPolicy,
  type WebhookRecord,
} from '../../operations/webhooks.js';
import type { Store } from '../../store/store.js';
import { noteTargets } from '../plugins/call-log.js';
import {
  ADMIN_SECURITY,
  adminErrorResponses,
  IDEMPOTENCY_KEY_REQUEST_HEADER,
  IDEMPOTENT_SUCCESS_HEADERS,
  NO_SUCH_USER,
  noContentResponse,
  SUCCESS_HEADERS,
} from '../schemas/common.js';
import {
  CreatedWebhookSchema,
  DeliveriesQuerySchema,
  DeliveryListSchema,
  NewWebhookSchema,
  ReplaySchema,
  RotatedSecretSchema,
  SecretRotationSchema,
  WebhookChangesSchema,
  WebhookListSchema,
  WebhookParamsSchema,
  WebhookSchema,
} from '../schemas/webhooks.js';
import { UserParamsSchema } from '../schemas/users.js';

export interface AdminWebhookRoutesOptions {
  store: Pick<Store, 'users' | 'contacts' | 'webhooks' | 'oauth'>;
  /** WEBHOOKS_ALLOW_PRIVATE_URLS and the change log's retention, which the operations check URLs and times against. */
  policy: WebhookPolicy;
}

const NO_WEBHOOK = { 'No endpoint with this id': 'No webhook with id "0190b7a4-3c2e-7f00-8000-0000000000a1"' };
const BAD_URL = {
  'A URL that is not https': 'url must use https; got "http"',
  'A private address': 'url must not name a loopback, private, link-local, shared or other non-public address; got "10.0.0.7"',
};
const OUT_OF_RETENTION = {
  'A time out of the change log’s retention':
    'since must be within the change log\'s retention (30 days); got "2020-01-01T00:00:00Z": resync with the contact listing instead',
};
const TAGS = ['webhooks'];

/**
 * Webhook endpoints (docs/webhooks.md): make one for a user, list, read, change and delete them, rotate the signing
 * secret, read the delivery attempts, deliver again from a time.
 */
export async function adminWebhookRoutes(app: FastifyInstance, { store, policy }: AdminWebhookRoutesOptions): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  /** The endpoint as every answer shows it: with its lag, never its secret. */
  const shown = async (record: WebhookRecord) => webhookView(record, await webhookLag(store, record));
  /** An answer about one endpoint, named by its id: the call log notes its owner too. */
  const answerWith = (request: FastifyRequest, record: WebhookRecord) => {
    noteTargets(request, { userId: record.ownerId });
    return shown(record);
  };

  api.post(
    '/users/:id/webhooks',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createWebhook',
        summary: 'Make a webhook endpoint for a user',
        description: [
          'Makes an endpoint that receives the user’s changes as signed Standard Webhooks events, and answers with its',
          'signing secret: in this answer only. Send an `Idempotency-Key` so that a retry after a lost answer gets the same',
          'endpoint and secret back. The endpoint starts at the current end of the change log, or at `since`.',
        ].join('\n'),
        tags: TAGS,
        security: ADMIN_SECURITY,
        headers: IDEMPOTENCY_KEY_REQUEST_HEADER,
        params: UserParamsSchema,
        body: NewWebhookSchema,
        response: {
          ...adminErrorResponses({
            post: true,
            notFound: NO_SUCH_USER,
            badRequest: {
              ...BAD_URL,
              ...OUT_OF_RETENTION,
              'An unknown event type': 'events.0 must be one of: contact.upserted, contact.merged, contact.deleted',
            },
          }),
          201: {
            ...CreatedWebhookSchema,
            description: 'The new endpoint, with its secret: shown this once.',
            headers: IDEMPOTENT_SUCCESS_HEADERS,
          },
        },
      },
    },
    async (request, reply) => {
      const { url, events, description, since } = request.body;
      const { record, secret } = await createWebhook(store, { user: { id: request.params.id }, url, events, description, since }, policy);
      noteTargets(request, { userId: record.ownerId, webhookId: record.id });
      reply.code(201);
      return { ...(await shown(record)), secret };
    },
  );

  api.get(
    '/users/:id/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        summary: 'List a user’s webhook endpoints',
        description: 'Every endpoint of the user, oldest first, with its status and lag; never a secret.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: UserParamsSchema,
        response: {
          ...adminErrorResponses({ notFound: NO_SUCH_USER }),
          200: { ...WebhookListSchema, description: 'The user’s endpoints.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request) => ({ data: await Promise.all((await listWebhooks(store, { id: request.params.id })).map(shown)) }),
  );

  api.get(
    '/webhooks/:webhookId',
    {
      schema: {
        operationId: 'getWebhook',
        summary: 'Get a webhook endpoint',
        description: 'The endpoint, its status, why it is disabled, and how far its cursor is behind the change log; never its secret.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: WebhookParamsSchema,
        response: {
          ...adminErrorResponses({ notFound: NO_WEBHOOK }),
          200: { ...WebhookSchema, description: 'The endpoint.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request) => answerWith(request, await getWebhook(store, request.params.webhookId)),
  );

  api.patch(
    '/webhooks/:webhookId',
    {
      schema: {
        operationId: 'updateWebhook',
        summary: 'Change a webhook endpoint',
        description: [
          'Changes the fields given. Disabling stops deliveries at once (the reason says the admin did it); enabling resumes',
          'from the cursor, or from the current end of the change log when the cursor fell out of its retention (then',
          'resync with the listing).',
        ].join('\n'),
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: WebhookParamsSchema,
        body: WebhookChangesSchema,
        response: {
          ...adminErrorResponses({
            notFound: NO_WEBHOOK,
            badRequest: {
              ...BAD_URL,
              'An unknown status': 'status must be one of: enabled, disabled',
              'An unknown field': 'unknown field "secret"',
            },
          }),
          200: { ...WebhookSchema, description: 'The endpoint, changed.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request) => answerWith(request, await updateWebhook(store, request.params.webhookId, request.body, policy)),
  );

  api.delete(
    '/webhooks/:webhookId',
    {
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint',
        description: 'Deletes the endpoint and its delivery attempts; an attempt already under way may still reach the receiver.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: WebhookParamsSchema,
        response: {
          ...adminErrorResponses({ notFound: NO_WEBHOOK }),
          204: noContentResponse('The endpoint is gone.'),
        },
      },
    },
    async (request, reply) => {
      await deleteWebhook(store, request.params.webhookId);
      return reply.code(204).send(null);
    },
  );

  api.post(
    '/webhooks/:webhookId/rotate-secret',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate a webhook endpoint’s signing secret',
        description: [
          'Makes a new signing secret, in this answer only. For 24 hours every delivery carries two signatures, the new',
          'secret’s and the previous one’s, so that the receiver moves to the new secret without missing an event.',
        ].join('\n'),
        tags: TAGS,
        security: ADMIN_SECURITY,
        headers: IDEMPOTENCY_KEY_REQUEST_HEADER,
        params: WebhookParamsSchema,
        body: SecretRotationSchema,
        response: {
          ...adminErrorResponses({ post: true, notFound: NO_WEBHOOK }),
          200: { ...RotatedSecretSchema, description: 'The new secret: shown this once.', headers: IDEMPOTENT_SUCCESS_HEADERS },
        },
      },
    },
    async (request) => {
      const { record, secret } = await rotateWebhookSecret(store, request.params.webhookId);
      noteTargets(request, { userId: record.ownerId });
      return { secret };
    },
  );

  api.get(
    '/webhooks/:webhookId/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List a webhook endpoint’s delivery attempts',
        description: 'The latest attempts first, successful and failed, kept for 7 days.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: WebhookParamsSchema,
        querystring: DeliveriesQuerySchema,
        response: {
          ...adminErrorResponses({
            notFound: NO_WEBHOOK,
            badRequest: { 'A limit out of range': 'limit must be an integer from 1 to 100; got 500' },
          }),
          200: { ...DeliveryListSchema, description: 'The endpoint’s attempts.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request) => {
      const { limit = String(DELIVERIES_LIMIT_DEFAULT) } = request.query;
      return { data: (await listWebhookDeliveries(store, request.params.webhookId, Number(limit))).map(webhookDeliveryView) };
    },
  );

  api.post(
    '/webhooks/:webhookId/replay',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'replayWebhook',
        summary: 'Deliver a webhook endpoint’s events again from a time',
        description: [
          'Moves the endpoint’s cursor back to `since` (within the change log’s retention): the changes since then are',
          'delivered again, with their original `webhook-id`, so a receiver that deduplicates sees nothing twice. Each',
          'contact is delivered in its latest state, as the change feed gives it. A disabled endpoint is a 409: enable it first.',
        ].join('\n'),
        tags: TAGS,
        security: ADMIN_SECURITY,
        headers: IDEMPOTENCY_KEY_REQUEST_HEADER,
        params: WebhookParamsSchema,
        body: ReplaySchema,
        response: {
          ...adminErrorResponses({
            post: true,
            notFound: NO_WEBHOOK,
            badRequest: OUT_OF_RETENTION,
            conflict: {
              'A disabled endpoint': 'Webhook 0190b7a4-3c2e-7f00-8000-0000000000a1 is disabled: enable it (status "enabled"), then replay',
            },
          }),
          202: {
            ...WebhookSchema,
            description: 'The endpoint, its cursor moved back: `lag` counts what will be delivered again.',
            headers: IDEMPOTENT_SUCCESS_HEADERS,
          },
        },
      },
    },
    async (request, reply) => {
      const record = await replayWebhook(store, request.params.webhookId, request.body.since, policy);
      reply.code(202);
      return answerWith(request, record);
    },
  );
}
