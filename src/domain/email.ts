import { InputError } from './errors.js';

/** A user's email address as parseEmailAddress accepts it: trimmed, one `@` with no whitespace on either side. */
export type EmailAddress = string & { readonly __brand: 'EmailAddress' };

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export function isEmailAddress(text: string): boolean {
  return EMAIL.test(text);
}

/** The trimmed address; throws InputError naming the input (`name`, such as a flag) when it is not one. */
export function parseEmailAddress(text: string, name: string): EmailAddress {
  const email = text.trim();
  if (!isEmailAddress(email)) throw new InputError(`${name} must be an email address; got "${text}"`);
  return email as EmailAddress;
}
