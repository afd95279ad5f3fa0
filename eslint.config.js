import js from '@eslint/js';
import globals from 'globals';
import prettier from 'eslint-config-prettier';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * Small utilities that import nothing of ours, which src/domain/ and src/store/ use today (the read replica's warning).
 * Their own zone below keeps them free of imports, so allowing them opens no way around the layers. (Packages such as
 * `lru-cache` are no file of ours: any layer may import them.)
 */
const LEAF_UTILITIES = ['./throttled-warning.ts'];

/** The ContactStore's reads, which only src/operations/ calls (a regex for an ESLint selector). */
const CONTACT_READS =
  '/^(listPage|listPageJson|listingVersion|get|getMany|search|changeLog|readChanges|readListed|countChangesAfter|positionAt)$/';
const READS_MESSAGE = 'Read contacts and the change log through src/operations/ (contacts.ts, change-feed.ts), not the ContactStore.';

/** The arrows between the layers (docs/architecture.md): each zone names files (`target`) and what they may not import (`from`). */
const LAYER_ZONES = [
  {
    target: './src/domain',
    from: './src',
    except: ['./domain', ...LEAF_UTILITIES],
    message: 'src/domain/ holds the rules alone: it imports nothing else of ours.',
  },
  {
    target: './src/store',
    from: './src',
    except: ['./store', './domain', ...LEAF_UTILITIES],
    message: 'src/store/ imports only src/domain/.',
  },
  {
    target: LEAF_UTILITIES.map((path) => `./src/${path.slice(2)}`),
    from: './src',
    message: 'A utility that src/domain/ and src/store/ may import imports nothing of ours.',
  },
  {
    target: ['./src/cli/!(context).ts', './src/cli/!(commands)/**', './src/cli/commands/!(serve|demo).ts'],
    from: './src/store',
    message:
      "Only the CLI's composition imports src/store/ (context.ts opens the database, serve.ts watches it, demo.ts prints its URL); commands reach the stores through the operations layer.",
  },
  {
    target: ['./src/*.ts', './src/!(cli|cluster)/**', './src/cli/*.ts', './src/cli/!(commands)/**', './src/cli/commands/!(serve).ts'],
    from: './src/cluster',
    message: 'Only src/cli/commands/serve.ts wires in src/cluster/; the rest has its pieces injected.',
  },
];

/**
 * The files that may import values of src/store/ besides src/store/ and src/operations/: the composition that opens the
 * database (src/server.ts, the CLI's). Everything else reaches the stores through src/operations/ and may name the
 * contracts' types only.
 */
const STORE_OPENERS = ['src/server.ts', 'src/cli/context.ts', 'src/cli/commands/serve.ts', 'src/cli/commands/demo.ts'];

/** The doors: each serves the world one way, registers itself as one plugin, and stands on src/web/ and src/metrics/. */
const DOORS = ['http', 'admin', 'carddav', 'webhooks', 'mcp', 'oauth', 'cluster', 'cli'];

/** The arrows allowed between doors, each with its reason: `from` may import `to`. */
const DOOR_ARROWS = [
  // /mcp's authorization hook takes the embedded authorization server's access tokens and external issuers' JWTs.
  { from: 'mcp', to: 'oauth' },
  // The composition roots: `mcp` runs the MCP server over stdio, and `serve` a cluster.
  { from: 'cli', to: 'mcp' },
  { from: 'cli', to: 'cluster' },
];

const DOOR_ZONES = [
  {
    target: ['admin', 'carddav', 'webhooks', 'mcp', 'oauth', 'cluster'].map((door) => `./src/${door}`),
    from: './src/http',
    message: 'src/http/ is the REST door: what another door needs of it belongs in src/web/ (or src/metrics/).',
  },
  {
    target: ['./src/web', './src/metrics'],
    from: DOORS.map((door) => `./src/${door}`),
    message: 'src/web/ and src/metrics/ are the floor every door stands on: they import no door.',
  },
  ...DOORS.map((door) => ({
    target: `./src/${door}`,
    from: DOORS.filter((other) => other !== door && !DOOR_ARROWS.some((arrow) => arrow.from === door && arrow.to === other)).map(
      (other) => `./src/${other}`,
    ),
    message: `Doors do not import each other: move what src/${door}/ shares to src/web/, or name the arrow in DOOR_ARROWS.`,
  })),
  ...DOORS.map((door) => ({
    target: [`./src/!(${DOORS.join('|')})/**`, './src/!(app|server).ts'],
    from: `./src/${door}`,
    message: 'Only the composition roots (src/app.ts, src/server.ts, src/cli/) import a door.',
  })),
];

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '.bench/**',
      'data/**',
      'coverage/**',
      '.scratch/**',
      'packages/client/src/openapi-types.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ['eslint.config.js', 'test/failure/fixtures/*.mjs', 'scripts/*.mjs', 'test/mcp/cards-host/*.mjs'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A promise nobody awaits loses its failure: every one is awaited, returned, or marked `void` on purpose.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // A switch over a union names every case, so a new member cannot fall through unnoticed.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver({ extensionAlias: { '.js': ['.ts', '.js'] } })] },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: [...LAYER_ZONES, ...DOOR_ZONES] }],
    },
  },
  {
    // No circle of imports anywhere in src/. no-cycle follows only the extensions listed and passes over type-only
    // imports: test/unit/store-import-cycles.test.ts counts those too in src/store/, and the export formats are kept from
    // importing the files beside their folder (below), whose table imports them.
    files: ['src/**/*.ts'],
    settings: { 'import-x/extensions': ['.ts'] },
    rules: { 'import-x/no-cycle': 'error' },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/store/**', 'src/operations/**', ...STORE_OPENERS],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/store/*', '**/store/**'],
              allowTypeImports: true,
              message:
                'Only src/operations/ and the composition (STORE_OPENERS) use src/store/; elsewhere import its contracts’ types only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Reads of contacts and of the change log go through src/operations/ (contacts.ts, change-feed.ts: the one walk of
    // the log with its one token and retention check), not from a door to the ContactStore.
    files: ['src/**/*.ts'],
    ignores: ['src/store/**', 'src/operations/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: `CallExpression[callee.object.property.name='contacts'][callee.property.name=${CONTACT_READS}]`,
          message: READS_MESSAGE,
        },
        { selector: `CallExpression[callee.object.name='contacts'][callee.property.name=${CONTACT_READS}]`, message: READS_MESSAGE },
      ],
    },
  },
  {
    // A file that needs more is two concerns: split it.
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 350 }] },
  },
  {
    files: ['src/export/formats/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\.\\./[^.]', message: 'An export format imports nothing of src/export/ outside formats/.' }] },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // The contact cards test's host page runs in Chromium.
    files: ['test/mcp/cards-host/*.mjs'],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ['test/**', 'bench/**', 'packages/*/test/**'],
    rules: {
      // Tests read untyped JSON responses and reach into library internals on purpose.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  prettier,
);
