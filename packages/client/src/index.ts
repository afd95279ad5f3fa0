export { ContactsClient, type ContactsClientOptions, type ContactsWalkOptions, type ListContactsParams } from './contacts-client.js';
export {
  AuthenticationError,
  BadRequestError,
  ContactsApiError,
  NetworkError,
  PermissionError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  type PermissionReason,
} from './errors.js';
export type { Contact, ContactListResponse, ErrorBody, Pagination } from './types.js';
export type { components, operations, paths } from './openapi-types.js';
