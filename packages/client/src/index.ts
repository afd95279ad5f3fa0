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
  AuthenticationError,
  BadRequestError,
  ContactsApiError,
  NetworkError,
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
