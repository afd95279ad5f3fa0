import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { CONTACTS_READ } from '../../domain/scopes.js';
import { createKey, listKeys, MAX_ROTATION_OVERLAP_SECONDS, revokeKey, rotateKey } from '../../operations/keys.js';
import type { Store } from '../../store/store.js';
import { noteTargets } from '../plugins/call-log.js';
import {
  ADMIN_SECURITY,
  adminErrorResponses,
  IDEMPOTENCY_KEY_REQUEST_HEADER,
  IDEMPOTENT_SUCCESS_HEADERS,
  SUCCESS_HEADERS,
} from '../schemas/common.js';
import {
  CreatedKeySchema,
  createdKeyJson,
  KeyListSchema,
  KeyParamsSchema,
  listedKeyJson,
  NewKeySchema,
  RotatedKeySchema,
  rotatedKeyJson,
  RotationSchema,
  UserKeysParamsSchema,
} from '../schemas/keys.js';

export interface AdminKeyRoutesOptions {
  store: Pick<Store, 'users' | 'keys'>;
  /** API_KEY_PREFIX: new keys are `<prefix>_live_…`. */
  apiKeyPrefix: string;
}

const NO_USER = { 'No user with this id': 'No user with id "0190b7a4-3c2e-7f00-8000-000000000000"' };
const NO_KEY = { 'No key with this id': 'No key with id "0190b7a4-3c2e-7f00-8000-000000000001"' };
const TAGS = ['keys'];

/** API keys: make one for a user, list a user's keys, rotate one, revoke one. */
export async function adminKeyRoutes(app: FastifyInstance, { store, apiKeyPrefix }: AdminKeyRoutesOptions): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/users/:id/keys',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createKey',
        summary: 'Make an API key for a user',
        description: [
          'Makes a key and answers with it: `key` is in this answer only, and only its hash is stored. Send an',
          '`Idempotency-Key` so that a retry after a lost answer gets the same key back instead of making a second one.',
          'A key of a user not on the `pro` plan is made, and gets 403 on the public API until the user is on `pro`.',
        ].join('\n'),
        tags: TAGS,
        security: ADMIN_SECURITY,
        headers: IDEMPOTENCY_KEY_REQUEST_HEADER,
        params: UserKeysParamsSchema,
        body: NewKeySchema,
        response: {
          ...adminErrorResponses({
            post: true,
            notFound: NO_USER,
            badRequest: {
              'An expiry in the past': 'expires_at must be a time in the future; got "2020-01-01T00:00:00Z"',
              'An unknown scope': 'scopes.0 must be one of: contacts:read',
            },
          }),
          201: { ...CreatedKeySchema, description: 'The new key, with its secret: shown this once.', headers: IDEMPOTENT_SUCCESS_HEADERS },
        },
      },
    },
    async (request, reply) => {
      const { label, scopes = [CONTACTS_READ], expires_at: expiresAt } = request.body;
      const created = await createKey(store, apiKeyPrefix, {
        user: { id: request.params.id },
        label,
        scopes,
        expires: expiresAt == null ? null : { at: expiresAt },
      });
      noteTargets(request, { userId: created.record.owner_id, keyId: created.record.id });
      reply.code(201);
      return createdKeyJson(created);
    },
  );

  api.get(
    '/users/:id/keys',
    {
      schema: {
        operationId: 'listKeys',
        summary: 'List a user’s keys',
        description: 'Every key of the user, oldest first, with its status; never a secret nor its hash.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: UserKeysParamsSchema,
        response: {
          ...adminErrorResponses({ notFound: NO_USER }),
          200: { ...KeyListSchema, description: 'The user’s keys.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request) => ({ data: (await listKeys(store, { id: request.params.id })).map(listedKeyJson) }),
  );

  api.post(
    '/keys/:keyId/rotate',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'rotateKey',
        summary: 'Rotate a key',
        description: [
          'Makes the key’s successor, with the same owner, label, scopes and expiry time and a new secret (in this answer',
          `only), and lets the old key work \`overlap_seconds\` more (0 to ${MAX_ROTATION_OVERLAP_SECONDS}, default 0), never`,
          'longer than it already would. A revoked or expired key cannot be rotated.',
        ].join('\n'),
        tags: TAGS,
        security: ADMIN_SECURITY,
        headers: IDEMPOTENCY_KEY_REQUEST_HEADER,
        params: KeyParamsSchema,
        body: RotationSchema,
        response: {
          ...adminErrorResponses({
            post: true,
            notFound: NO_KEY,
            badRequest: { 'An overlap over a week': `overlap_seconds must be <= ${MAX_ROTATION_OVERLAP_SECONDS}` },
            conflict: {
              'A revoked key': 'Key 0190b7a4-3c2e-7f00-8000-000000000001 is revoked and cannot be rotated',
              'An expired key': 'Key 0190b7a4-3c2e-7f00-8000-000000000001 has expired and cannot be rotated',
            },
          }),
          201: { ...RotatedKeySchema, description: 'The new key, with its secret: shown this once.', headers: IDEMPOTENT_SUCCESS_HEADERS },
        },
      },
    },
    async (request, reply) => {
      const rotated = await rotateKey(store, apiKeyPrefix, {
        keyId: request.params.keyId,
        overlapSeconds: request.body.overlap_seconds ?? 0,
      });
      noteTargets(request, { userId: rotated.record.owner_id, newKeyId: rotated.record.id });
      reply.code(201);
      return rotatedKeyJson(rotated);
    },
  );

  api.delete(
    '/keys/:keyId',
    {
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke a key',
        description:
          'Revokes the key, and every OAuth grant made with it: every worker refuses them (401) within a second. Revoking a revoked key changes nothing.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: KeyParamsSchema,
        response: {
          ...adminErrorResponses({ notFound: NO_KEY }),
          204: { type: 'null', description: 'The key is revoked. No body.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request, reply) => {
      const revoked = await revokeKey(store, request.params.keyId);
      noteTargets(request, { userId: revoked.owner_id });
      return reply.code(204).send(null);
    },
  );
}
