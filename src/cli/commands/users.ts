import type { Command } from 'commander';
import { parseBillingPlan } from '../../domain/billing-plan.js';
import { parseEmailAddress } from '../../domain/email.js';
import { InputError } from '../../domain/errors.js';
import { OFFSET_MAX } from '../../domain/pagination.js';
import { createUser, listUsers, setUserPlan, type User, type UserWithKeyCount } from '../../operations/users.js';
import { withStore } from '../context.js';
import { plural, print, type CliIo } from '../io.js';

export function registerUserCommands(program: Command, io: CliIo): void {
  const users = program.command('users').description('manage users');

  users
    .command('create')
    .description('create a user (and the user’s own self contact)')
    .requiredOption('--email <email>', 'the user’s email address, unique')
    .option('--name <name>', 'display name')
    .option('--plan <plan>', 'free or pro (API keys work only on pro)', 'free')
    .option('--json', 'print one JSON object')
    .action(async (options: { email: string; name?: string; plan: string; json?: boolean }) => {
      const email = parseEmailAddress(options.email, '--email');
      const plan = parseBillingPlan(options.plan);
      const user = await withStore(io, (store) => createUser(store, { email, name: options.name, plan }));
      print(io, options, userJson(user), `Created user ${user.email} (${user.id}) on the ${user.plan} plan`);
    });

  users
    .command('set-plan')
    .description('change a user’s plan; keys of a free user get 403 until upgraded')
    .requiredOption('--user <email|id>', 'the user')
    .requiredOption('--plan <plan>', 'free or pro')
    .option('--json', 'print one JSON object')
    .action(async (options: { user: string; plan: string; json?: boolean }) => {
      const plan = parseBillingPlan(options.plan);
      const user = await withStore(io, (store) => setUserPlan(store, { user: options.user, plan }));
      print(io, options, userJson(user), `User ${user.email} is now on the ${user.plan} plan`);
    });

  users
    .command('list')
    .description('list users, oldest first, with how many keys each has been given')
    .option('--limit <n>', `users to show, 1 to ${MAX_LISTED_USERS}`, String(DEFAULT_LISTED_USERS))
    .option('--offset <n>', 'users to skip', '0')
    .option('--json', 'print one JSON object')
    .action(async (options: { limit: string; offset: string; json?: boolean }) => {
      const page = {
        limit: parseCount(options.limit, '--limit', 1, MAX_LISTED_USERS),
        offset: parseCount(options.offset, '--offset', 0, OFFSET_MAX),
      };
      const { users: listed, total } = await withStore(io, (store) => listUsers(store, page));
      const rows = listed.map(listedUserJson);
      print(io, options, { users: rows, total }, describeUsers(rows, page.offset, total));
    });
}

const DEFAULT_LISTED_USERS = 100;
const MAX_LISTED_USERS = 10_000;

function parseCount(text: string, name: string, min: number, max: number): number {
  const value = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) throw new InputError(`${name} must be an integer from ${min} to ${max}; got "${text}"`);
  return value;
}

function describeUsers(rows: ReturnType<typeof listedUserJson>[], offset: number, total: number): string {
  if (rows.length === 0) return total === 0 ? 'No users' : `No users past ${offset} (there are ${total})`;
  const lines = rows.map((user) =>
    [user.id, user.email, user.name ?? '-', user.plan, `created=${user.created_at}`, plural(user.keys, 'key')].join('  '),
  );
  const end = offset + rows.length;
  const summary =
    rows.length === total
      ? plural(total, 'user')
      : `Users ${offset + 1}-${end} of ${total}${end < total ? ` (--offset ${end} for more)` : ''}`;
  return [...lines, summary].join('\n');
}

function userJson(user: User) {
  return { id: user.id, email: user.email, name: user.name, plan: user.plan };
}

function listedUserJson(user: UserWithKeyCount) {
  return { ...userJson(user), created_at: user.created_at, keys: user.keys };
}
