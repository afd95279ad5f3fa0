import { IsCodec, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ConfigError } from './config-error.js';
import { RULES } from './rules.js';
import { ENVIRONMENT, type Environment } from './schema.js';

/** A variable's schema with the keywords reading its text looks at (src/config/schema.ts). */
type Variable = TSchema & { type?: string; default?: unknown; format?: string; verbatim?: boolean; minimum?: number; maximum?: number };

/**
 * Reads every variable of ENVIRONMENT from `env` in schema order, and checks each rule as soon as the variables it
 * reads are read: the first bad value throws ConfigError naming its variable. `given` holds values that command-line
 * options set, whose variables are not read.
 */
export function readEnvironment(env: NodeJS.ProcessEnv, given: Partial<Environment> = {}): Environment {
  const values: Partial<Record<keyof Environment, unknown>> = {};
  for (const [name, schema] of Object.entries(ENVIRONMENT.properties) as [keyof Environment, Variable][]) {
    values[name] = name in given && given[name] !== undefined ? given[name] : readVariable(name, schema, env[name]);
    for (const rule of RULES) {
      const message = rule.after === name ? rule.broken(values as Partial<Environment>) : null;
      if (message !== null) throw new ConfigError(message);
    }
  }
  return values as Environment;
}

/** One variable's value: unset or blank gives the schema's default (undefined if it has none). */
export function readVariable(name: string, schema: Variable, text: string | undefined): unknown {
  const fallback = schema.default;
  if (text === undefined || text.trim() === '') return fallback === undefined ? undefined : decode(name, schema, fallback);
  const value = valueOf(schema, text);
  const [error] = Value.Errors(schema, value);
  if (error !== undefined) throw new ConfigError(`${name} ${messageOf(schema, text, error.message)}`);
  return decode(name, schema, value);
}

/** `parse()`, its error named after the variable `name` (that the error may name itself). */
function named<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${name} ${(error as Error).message.replace(new RegExp(`^${name} `), '')}`);
  }
}

/**
 * The value the config holds: what the schema's Decode makes of the checked text, else the value itself. The callback
 * is called directly: Value.Decode would clone, convert and check the value again, 0.3–0.6 ms a variable.
 */
function decode(name: string, schema: Variable, value: unknown): unknown {
  return IsCodec(schema) ? named(name, () => schema['~codec'].decode(value)) : value;
}

/** What a variable's text stands for, left as text when it is not of the schema's type (so that the check fails). */
function valueOf(schema: Variable, text: string): unknown {
  if (schema.type === 'integer') return new RegExp(`^\\d{1,${schema.format === 'port' ? 5 : 10}}$`).test(text.trim()) ? Number(text) : text;
  if (schema.type === 'boolean') {
    const word = text.trim().toLowerCase();
    return word === 'true' || word === 'false' ? word === 'true' : text;
  }
  return schema.verbatim === true ? text : text.trim();
}

function messageOf(schema: Variable, text: string, refinement: string): string {
  if (schema.type === 'integer') {
    const kind = schema.format === 'port' ? 'a port number' : 'an integer';
    return `must be ${kind} from ${schema.minimum} to ${schema.maximum}; got "${text}"`;
  }
  if (schema.type === 'boolean') return `must be true or false; got "${text}"`;
  return refinement;
}
