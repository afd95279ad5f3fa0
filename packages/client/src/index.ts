export {
  ContactsClient,
  SINCE_BEGINNING,
  type ChangeFeed,
  type ContactsClientOptions,
  type ContactsWalkOptions,
  type ListChangesParams,
  type ListContactsParams,
} from './contacts-client.js';
export {
  ContactsAdminClient,
  type CallOptions,
  type ContactsAdminClientOptions,
  type DeliveriesOptions,
  type ImportOptions,
  type PostOptions,
  type RotateKeyOptions,
} from './contacts-admin-client.js';
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ContactsApiError,
  IdempotencyKeyReusedError,
  NetworkError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
  SyncExpiredError,
  TimeoutError,
  UnexpectedResponseError,
  type PermissionReason,
} from './errors.js';
export type { Change, ChangesResponse, Contact, ContactListResponse, ErrorBody, Pagination } from './types.js';
export type { components, operations, paths } from './openapi-types.js';
export type {
  AdminUser,
  CreatedKey,
  CreatedWebhook,
  ImportContentType,
  ImportSummary,
  ListedKey,
  MergedContact,
  NewKey,
  NewUser,
  NewWebhook,
  RotatedKey,
  RotatedWebhookSecret,
  UserChanges,
  Webhook,
  WebhookChanges,
  WebhookDelivery,
} from './admin-types.js';
export type { operations as adminOperations, paths as adminPaths } from './admin-openapi-types.js';
