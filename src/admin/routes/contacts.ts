import type { Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { canonicalId } from '../../domain/ids.js';
import { InputError, PublicError } from '../../domain/errors.js';
import { parseImportMatch, type ImportMatchField } from '../../domain/import-matching.js';
import { mediaTypeOf } from '../../domain/media-type.js';
import { bodyTooLargeMessage, bytesWithin, LINGER_MS, lingerThenClose } from '../../web/body-size.js';
import { errorResponse } from '../../web/schemas/common.js';
import { IMPORT_BATCH, IMPORT_MEDIA_TYPES, importFormatOf, readContacts, tooManyRecords } from '../../import/read-contacts.js';
import { orList } from '../../import/or-list.js';
import { deleteContacts, importContacts, mergeContacts } from '../../operations/contacts.js';
import { fingerprintHasher, parseIdempotencyKey } from '../../operations/idempotency.js';
import type { Store } from '../../store/store.js';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency-headers.js';
import { noteTargets } from '../plugins/call-log.js';
import { requestHead } from '../plugins/idempotency.js';
import {
  ContactParamsSchema,
  IMPORT_BODY,
  ImportQuerySchema,
  ImportSummarySchema,
  MergeContactSchema,
  MergedContactSchema,
} from '../schemas/contacts.js';
import {
  ADMIN_SECURITY,
  adminErrorResponses,
  IDEMPOTENCY_KEY_REQUEST_HEADER,
  IDEMPOTENT_SUCCESS_HEADERS,
  SUCCESS_HEADERS,
} from '../schemas/common.js';
import { UserParamsSchema } from '../schemas/users.js';

export interface AdminContactRoutesOptions {
  store: Pick<Store, 'users' | 'contacts'>;
  /** ADMIN_BODY_LIMIT_MB in bytes: the largest body an import reads. */
  bodyLimitBytes: number;
  /** ADMIN_IMPORT_MAX_RECORDS: the most records an import takes. */
  maxRecords: number;
}

export const UNSUPPORTED_IMPORT_TYPE_MESSAGE = `Content-Type must be ${orList(IMPORT_MEDIA_TYPES)}`;

const MIB = 1024 * 1024;
/**
 * How long reading an import's body may take per MiB it may hold: the slowest format to read (CSV) was measured at
 * about 3 MiB/s on a loaded 2-core machine; the rest is room for a slow client.
 */
const IMPORT_MS_PER_MIB = 4_000;
const IMPORT_MIN_MS = 60_000;

/**
 * The import's time bound, instead of REQUEST_TIMEOUT_MS (Fastify's handler timeout, which ends once the body is
 * read): a body as large as the limit must have time to be read as it arrives.
 */
export function importTimeoutMs(bodyLimitBytes: number): number {
  return Math.max(IMPORT_MIN_MS, Math.ceil(bodyLimitBytes / MIB) * IMPORT_MS_PER_MIB);
}

const TAGS = ['contacts'];
const NO_USER = { 'No user with this id': 'No user with id "0190b7a4-3c2e-7f00-8000-000000000000"' };
const NO_CONTACT = { 'No such contact of the user': "Contact 0190b7a4-3c2e-7f00-8000-00000000c0de is not one of this user's contacts" };

/**
 * Contacts, as the CLI's `contacts import`, `merge` and `delete` change them (src/operations/contacts.ts): the same
 * rules, the same change-feed records.
 */
export async function adminContactRoutes(app: FastifyInstance, options: AdminContactRoutesOptions): Promise<void> {
  const { store } = options;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  await api.register(importRoute, options);

  api.post(
    '/users/:id/contacts/:contactId/merge',
    {
      config: { idempotent: true },
      schema: {
        operationId: 'mergeContact',
        summary: 'Merge a duplicate contact into another',
        description:
          'Soft-merges the contact into `into`, another contact of the same user: it leaves listings and search, its id leads to `into`, and the change feed records a `merge`.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        headers: IDEMPOTENCY_KEY_REQUEST_HEADER,
        params: ContactParamsSchema,
        body: MergeContactSchema,
        response: {
          ...adminErrorResponses({
            post: true,
            notFound: { ...NO_USER, ...NO_CONTACT },
            badRequest: {
              'The same contact': 'A contact cannot be merged into itself',
              'A contact merged already': `Contact 0190b7a4-3c2e-7f00-8000-00000000c0de is already merged into 0190b7a4-3c2e-7f00-8000-00000000beef and cannot be merged`,
              'No `into`': 'into is required',
            },
          }),
          200: { ...MergedContactSchema, description: 'The contact is merged.', headers: IDEMPOTENT_SUCCESS_HEADERS },
        },
      },
    },
    async (request) => {
      const { id, contactId } = request.params;
      const { into } = request.body;
      await mergeContacts(store, { user: { id }, duplicateId: contactId, survivorId: into });
      noteTargets(request, { survivorId: canonicalId(into)! });
      // Both ids were found, so both are UUIDs.
      return { merged: canonicalId(contactId)!, into: canonicalId(into)! };
    },
  );

  api.delete(
    '/users/:id/contacts/:contactId',
    {
      schema: {
        operationId: 'deleteContact',
        summary: 'Delete a contact',
        description:
          'Deletes the contact, with the duplicates merged into it; the change feed records a `delete` for each. Its id no longer leads anywhere.',
        tags: TAGS,
        security: ADMIN_SECURITY,
        params: ContactParamsSchema,
        response: {
          ...adminErrorResponses({ notFound: { ...NO_USER, ...NO_CONTACT } }),
          204: { type: 'null', description: 'The contact is gone. No body.', headers: SUCCESS_HEADERS },
        },
      },
    },
    async (request, reply) => {
      const { id, contactId } = request.params;
      await deleteContacts(store, { user: { id }, ids: [contactId] });
      return reply.code(204).send(null);
    },
  );
}

/** The import, in a scope of its own: it takes its body as it arrives, whatever its type, which no other route does. */
async function importRoute(app: FastifyInstance, { store, bodyLimitBytes, maxRecords }: AdminContactRoutesOptions): Promise<void> {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  app.addHook('onError', async (request) => lingerThenClose(request.raw));

  api.post(
    '/users/:id/contacts/import',
    {
      bodyLimit: bodyLimitBytes,
      handlerTimeout: importTimeoutMs(bodyLimitBytes),
      schema: {
        operationId: 'importContacts',
        summary: 'Import contacts',
        description: [
          'Imports the body’s contacts for the user, as the CLI’s `contacts import` does a file: all or nothing, in one',
          'transaction. A record with an `id` of the user’s creates or updates that contact; without one it becomes a new',
          'contact, or updates the contact with the same value of a field `match` names (by default a LinkedIn export’s',
          '`linkedin_url`). A contact it creates from another product’s export gets its `source` (`linkedin`, `google`,',
          '`outlook`, `vcard`). The body is set aside on disk as it arrives,',
          `up to ADMIN_BODY_LIMIT_MB (${bodyLimitBytes} bytes here), then imported ${IMPORT_BATCH} records at a time,`,
          `at most ADMIN_IMPORT_MAX_RECORDS (${maxRecords} here), and refused naming the first record that is not a contact.`,
          `Reading and importing it may take ${importTimeoutMs(bodyLimitBytes) / 1000} s (4 s per MiB of the limit, at least a minute), not REQUEST_TIMEOUT_MS.`,
          'With an `Idempotency-Key`, the fingerprint covers the whole body.',
        ].join('\n'),
        tags: TAGS,
        security: ADMIN_SECURITY,
        headers: IDEMPOTENCY_KEY_REQUEST_HEADER,
        params: UserParamsSchema,
        querystring: ImportQuerySchema,
        body: IMPORT_BODY,
        response: {
          ...adminErrorResponses({
            post: true,
            notFound: NO_USER,
            badRequest: {
              'A field the contact rules refuse': 'line 3: field "email" must be a string or null',
              'A CSV without a header row': 'line 1: unknown column "Ada Lovelace"; a header row names contact fields (…) …',
              'Not UTF-8': 'cannot read the body: it is not UTF-8 text',
            },
          }),
          413: errorResponse(
            `The body is larger than ADMIN_BODY_LIMIT_MB, or has more records than ADMIN_IMPORT_MAX_RECORDS, and nothing is imported. A body that declares its length is refused before it is read, and the connection closed; else reading stops as soon as the body passes the limit, and the rest is discarded for ${LINGER_MS / 1000} s at most before the connection is closed.`,
            {},
            { 'A body over the limit': bodyTooLargeMessage(bodyLimitBytes), 'Too many records': tooManyRecords('the body', maxRecords) },
          ),
          415: errorResponse(
            'The body is in none of the formats an import reads (or has no Content-Type); it is not read.',
            {},
            { 'Another content type': UNSUPPORTED_IMPORT_TYPE_MESSAGE },
          ),
          200: {
            ...ImportSummarySchema,
            description: 'Every record is imported: what became of them.',
            headers: IDEMPOTENT_SUCCESS_HEADERS,
          },
        },
      },
    },
    async (request, reply) => {
      const format = importFormatOf(mediaTypeOf(request.headers['content-type']));
      if (format === undefined) throw new PublicError(415, UNSUPPORTED_IMPORT_TYPE_MESSAGE);
      const match = importMatchOf(request.query);
      const key = parseIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER]);
      const fingerprint = fingerprintHasher(requestHead(request));
      const body = request.body instanceof Readable ? request.body : Readable.from([]);
      // The body is set aside on disk as it arrives, then read back a batch at a time as the import writes: its upload
      // is over at the client's pace (BODY_READ_TIMEOUT_MS bounds its stalls, not the import), a key's answer is looked up by the
      // whole body's fingerprint before anything is imported, and an upload cut short imports nothing.
      const spool = await spooled(hashed(bytesWithin(body, bodyLimitBytes), fingerprint));
      try {
        const file = readContacts(spool.bytes, format, 'the body', { maxRecords });
        const user = { id: request.params.id };
        // ImportSummary has every field the schema declares; test/admin/contacts.test.ts, that it has no other.
        const summary = (): Promise<Static<typeof ImportSummarySchema>> => importContacts(store, { user, file, match });
        const idempotency = { key, fingerprint: () => fingerprint.digest('hex'), runsForMs: importTimeoutMs(bodyLimitBytes) };
        return await app.answerIdempotently(request, reply, idempotency, summary);
      } finally {
        await spool.close();
      }
    },
  );
}

/** The fields `match` names (`match_email=true`: email); undefined, the body's format decides. */
function importMatchOf({ match, match_email: matchEmail }: Static<typeof ImportQuerySchema>): ImportMatchField[] | undefined {
  if (match !== undefined && matchEmail !== undefined) throw new InputError('give match or match_email, not both');
  if (match !== undefined) return parseImportMatch(match, 'match');
  return matchEmail === 'true' ? ['email'] : undefined;
}

async function* hashed(bytes: AsyncIterable<Buffer>, hash: Hash): AsyncGenerator<Buffer> {
  for await (const chunk of bytes) {
    hash.update(chunk);
    yield chunk;
  }
}

/** The bytes written to a file that has no name once open (its folder is removed), to be read back once. */
async function spooled(bytes: AsyncIterable<Buffer>): Promise<{ bytes: AsyncIterable<Buffer>; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'contacts-import-'));
  try {
    const path = join(dir, 'body');
    await pipeline(Readable.from(bytes), createWriteStream(path));
    const handle = await open(path);
    return { bytes: handle.createReadStream({ autoClose: false }), close: () => handle.close() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
