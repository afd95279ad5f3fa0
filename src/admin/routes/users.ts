import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parseEmailAddress } from '../../domain/email.js';
import { createUser, deleteUser, findUserByEmail, requireUser, updateUser } from '../../operations/users.js';
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
  NewUserSchema,
  UserChangesSchema,
  UserEmailQuerySchema,
  UserListSchema,
  UserParamsSchema,
  UserSchema,
  userJson,
} from '../schemas/users.js';

export interface AdminUserRoutesOptions {
  store: Pick<Store, 'users'>;
}

const EMAIL_TAKEN = { 'Another user has the email, in any case': 'A user with email ada@example.com already exists' };
const NOT_AN_EMAIL = { 'Not an email address': 'email must be an email address; got "ada"' };
const TAGS = ['users'];

/** Users: create, find by id or email, change (email, name, plan), delete. */
export async function adminUserRoutes(app: FastifyInstance, { store }: AdminUserRoutesOptions): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();

  api.post(
    '/users',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'createUser',
        summary: 'Create a user',
        description:
          'Creates the user, on the plan given, and the user’s own self contact. Give `id` to share your own id for the user (a UUID).',
        tags: TAGS,
        security: ADMIN_SECURITY,
        headers: IDEMPOTENCY_KEY_REQUEST_HEADER,
        body: NewUserSchema,
        response: {
          ...adminErrorResponses({
            post: true,
            badRequest: { ...NOT_AN_EMAIL, 'An id that is not a UUID': 'id must be a UUID', 'A field missing': 'plan is required' },
            conflict: { 'The id is taken': 'A user with id 0190b7a4-3c2e-7f00-8000-000000000000 already exists', ...EMAIL_TAKEN },
          }),
          201: { ...UserSchema, description: 'The user.', headers: IDEMPOTENT_SUCCESS_HEADERS },
        },
      },
    },
    async (request, reply) => {
      const { id, name, plan } = request.body;
      const user = await createUser(store, {
        ...(id === undefined ? {} : { id }),
        email: parseEmailAddress(request.body.email, 'email'),
        name,
        plan,
      });
      noteTargets(request, { userId: user.id });
      reply.code(201);
      return userJson(user);
    },
  );

  api.get(
    '/users',
    {
      schema: {
        operationId: 'findUsersByEmail',
        summary: 'Find the user holding an email',
        description: 'The user whose email is this one, ignoring case, in a list of one; an empty list when there is none.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        querystring: UserEmailQuerySchema,
        response: {
          ...adminErrorResponses({ badRequest: { ...NOT_AN_EMAIL, 'No email parameter': 'email is required' } }),
          200: { ...UserListSchema, description: 'The user holding the email, or none.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request) => {
      const user = await findUserByEmail(store, parseEmailAddress(request.query.email, 'email'));
      return { data: user === null ? [] : [userJson(user)] };
    },
  );

  api.get(
    '/users/:id',
    {
      schema: {
        operationId: 'getUser',
        summary: 'Get a user',
        description: 'The user with this id (a UUID, in any case); 404 when there is none.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: UserParamsSchema,
        response: {
          ...adminErrorResponses({ notFound: NO_SUCH_USER }),
          200: { ...UserSchema, description: 'The user.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request) => userJson(await requireUser(store, { id: request.params.id })),
  );

  api.patch(
    '/users/:id',
    {
      schema: {
        operationId: 'updateUser',
        summary: 'Change a user’s email, name or plan',
        description:
          'Changes the fields given. A plan change reaches every worker within a second: on `free` the user’s keys and OAuth tokens get 403 on the public API, on `pro` they work again.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: UserParamsSchema,
        body: UserChangesSchema,
        response: {
          ...adminErrorResponses({
            notFound: NO_SUCH_USER,
            badRequest: {
              ...NOT_AN_EMAIL,
              'An unknown plan': 'plan must be one of: free, pro',
              'An unknown field': 'unknown field "nmae"',
            },
            conflict: EMAIL_TAKEN,
          }),
          200: { ...UserSchema, description: 'The user, changed.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request) => {
      const { email, ...changes } = request.body;
      const user = await updateUser(store, request.params.id, {
        ...changes,
        ...(email === undefined ? {} : { email: parseEmailAddress(email, 'email') }),
      });
      return userJson(user);
    },
  );

  api.delete(
    '/users/:id',
    {
      schema: {
        operationId: 'deleteUser',
        summary: 'Delete a user and everything that is theirs',
        description:
          'Deletes the user, their keys, their OAuth grants, their contacts, their webhook endpoints and the answers kept for their `Idempotency-Key`s, at once. Their keys get 401 on every worker within a second; a retry of a request about them runs anew (404).',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: UserParamsSchema,
        response: {
          ...adminErrorResponses({ notFound: NO_SUCH_USER }),
          204: noContentResponse('The user is gone.'),
        },
      },
    },
    async (request, reply) => {
      await deleteUser(store, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
