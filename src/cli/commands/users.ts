import type { Command } from 'commander';
import { InputError } from '../../domain/errors.js';
import { parseBillingPlan } from '../../domain/billing-plan.js';
import type { User } from '../../store/store.js';
import { requireUser, withStore } from '../context.js';
import { print, type CliIo } from '../io.js';

const EMAIL = /^[^\s@]+@[^\s@]+$/;

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
      const email = options.email.trim();
      if (!EMAIL.test(email)) throw new InputError(`--email must be an email address; got "${options.email}"`);
      const plan = parseBillingPlan(options.plan);
      const user = await withStore(io, (store) => store.users.create({ email, name: options.name?.trim() || null, plan }));
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
      const user = await withStore(io, async (store) => store.users.setPlan((await requireUser(store, options.user)).id, plan));
      print(io, options, userJson(user), `User ${user.email} is now on the ${user.plan} plan`);
    });
}

function userJson(user: User) {
  return { id: user.id, email: user.email, name: user.name, plan: user.plan };
}
