import Type from 'typebox';
import { ContactSchema } from '../../domain/contact.js';
import { CHANGES_LIMIT_DEFAULT, CHANGES_LIMIT_MAX, CHANGES_LIMIT_MIN } from '../../domain/changes.js';

const Id = Type.String({ format: 'uuid', description: 'The contact’s id.' });
const ChangedAt = Type.String({ format: 'date-time', description: 'When the change was recorded: ISO 8601 UTC with milliseconds.' });

export const ListChangesQuerySchema = Type.Object(
  {
    since: Type.Optional(
      Type.String({
        description: [
          '`0` to start from nothing: every contact as an `upsert`, then the changes made meanwhile. Or a `next_since`',
          'this API returned, exactly as returned (tokens are signed). Without it, the answer is the current position and no changes.',
        ].join(' '),
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: CHANGES_LIMIT_MIN,
        maximum: CHANGES_LIMIT_MAX,
        default: CHANGES_LIMIT_DEFAULT,
        description: `Most changes to return, ${CHANGES_LIMIT_MIN} to ${CHANGES_LIMIT_MAX}.`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const ChangeSchema = Type.Union([
  Type.Object(
    { type: Type.Literal('upsert'), id: Id, changed_at: ChangedAt, contact: ContactSchema },
    {
      additionalProperties: false,
      description:
        'The contact became listable or changed, or (from `since=0`) is one of your contacts; `contact` is its state now. In that walk, `changed_at` is the contact’s `updated_at`.',
    },
  ),
  Type.Object(
    { type: Type.Literal('merge'), id: Id, changed_at: ChangedAt, merged_into: Type.String({ format: 'uuid' }) },
    { additionalProperties: false, description: 'The contact was soft-merged into `merged_into`, which survives.' },
  ),
  Type.Object(
    { type: Type.Literal('delete'), id: Id, changed_at: ChangedAt },
    { additionalProperties: false, description: 'The contact is gone: deleted, or no longer listable for another reason.' },
  ),
]);

export const ChangesResponseSchema = Type.Object(
  {
    data: Type.Array(ChangeSchema, {
      maxItems: CHANGES_LIMIT_MAX,
      description: 'Changes after `since`, oldest first. From `since=0`, every contact in list order first, then the changes.',
    }),
    next_since: Type.String({ description: 'Pass it as `since` to get what changed after this answer.' }),
    has_more: Type.Boolean({ description: 'True when more changes wait: ask again with `next_since` at once.' }),
  },
  { additionalProperties: false },
);
