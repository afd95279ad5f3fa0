/** LinkedIn URLs and the key an import compares each by: the rule's unit test, and what each database must agree with. */
export const LINKEDIN_URL_KEYS: readonly [string, string][] = [
  ['https://www.linkedin.com/in/Ada-L/?trk=x', 'linkedin.com/in/ada-l'],
  ['http://linkedin.com/in/ada-l', 'linkedin.com/in/ada-l'],
  ['HTTPS://WWW.LINKEDIN.COM/IN/ADA-L', 'linkedin.com/in/ada-l'],
  ['linkedin.com/in/ada-l/', 'linkedin.com/in/ada-l'],
  ['www.linkedin.com/in/ada-l#about', 'linkedin.com/in/ada-l'],
  ['https://www.linkedin.com/in/ada-l//?a=1#b', 'linkedin.com/in/ada-l'],
  ['https://www.linkedin.com/in/ada-l#x?y', 'linkedin.com/in/ada-l'],
  // Only ASCII letters fold, as SQLite's lower() and PostgreSQL's under COLLATE "C" do.
  ['https://www.linkedin.com/in/ÉMILE-Zola', 'linkedin.com/in/Émile-zola'],
  // Country hosts and other schemes are other URLs; so is www. anywhere but before the host.
  ['https://uk.linkedin.com/in/ada-l', 'uk.linkedin.com/in/ada-l'],
  ['ftp://www.linkedin.com/in/ada-l', 'ftp://www.linkedin.com/in/ada-l'],
  ['https://linkedin.com/in/www.ada', 'linkedin.com/in/www.ada'],
  ['https://https://www.x', 'https://www.x'],
  ['https://www.?www.x', ''],
  ['https://', ''],
  ['/', ''],
];
