#!/usr/bin/env bash
# Runs the contract, HTTP and MCP suites again on Node 24, the current LTS line, fetched from the npm registry
# (the binary `npx -p node@24` runs): users on a supported Node are tested, while this machine's Node 20 builds and runs the rest.
#
# better-sqlite3 is a native addon built for the installing Node's ABI. Its Node 24 build is compiled once, against
# the headers the registry's node package ships (no other download), and kept in node_modules/.cache (npm ci
# starts it over). The suites run in a copy of the project whose node_modules links every package to this one's
# except better-sqlite3, which links to that build: the Node 20 build is never touched.
#
# Without network (or a compiler) it says what it skipped and exits 0; under CI=true it fails instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
suites=(test/contract test/http test/mcp)

unavailable() {
  if [ "${CI:-}" = "true" ]; then
    echo "test:node24: $1; CI must run the Node 24 pass" >&2
    exit 1
  fi
  echo "*** test:node24: $1: SKIPPING the Node 24 run of ${suites[*]} (Node $(node --version) ran everything). ***" >&2
  exit 0
}

# The registry's node package (what `npx -p node@24` runs) takes its binary and headers from this platform package.
platform_package=$(node -p '`${process.platform === "darwin" && process.arch === "arm64" ? "node-bin" : "node"}-${process.platform}-${process.arch}`')
versions=$(npm view "$platform_package@24" version --json --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000 2>/dev/null) || unavailable "the npm registry did not answer for $platform_package@24"
version=$(node -p 'const all = [JSON.parse(process.argv[1])].flat(); all.sort((a, b) => a.localeCompare(b, "en", { numeric: true })).at(-1)' "$versions")
cache="$root/node_modules/.cache/node24"
runtime="$cache/node-v$version"
if [ ! -x "$runtime/bin/node" ]; then
  echo "test:node24: fetching $platform_package@$version from the npm registry"
  download=$(mktemp -d)
  if ! npm pack "$platform_package@$version" --pack-destination "$download" >/dev/null 2>&1; then
    rm -rf "$download"
    unavailable "$platform_package@$version could not be fetched from the npm registry"
  fi
  mkdir -p "$runtime.partial"
  tar -xzf "$download"/*.tgz -C "$runtime.partial" --strip-components=1 package/bin/node package/include
  rm -rf "$download" && mv "$runtime.partial" "$runtime"
fi
node24="$runtime/bin/node"
abi=$("$node24" -p process.versions.modules)

sqlite_version=$(node -p 'require("./node_modules/better-sqlite3/package.json").version')
build="$root/node_modules/.cache/node24/better-sqlite3-$sqlite_version-abi$abi"
if [ ! -f "$build/build/Release/better_sqlite3.node" ]; then
  echo "test:node24: building better-sqlite3 $sqlite_version for Node $version (ABI $abi), once"
  rm -rf "$build" && mkdir -p "$build"
  cp -R node_modules/better-sqlite3/. "$build/"
  rm -rf "$build/build"
  # npm run names its own node-gyp; run by hand, the one bundled beside npm.
  gyp="${npm_config_node_gyp:-$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")/node_modules/node-gyp/bin/node-gyp.js}"
  # Under `npm run`, npm hands its own config to node-gyp as npm_config_* variables, and a machine's nodedir (the
  # headers of the Node that runs npm) would win over --nodedir: the addon would be built for the wrong ABI.
  if ! (cd "$build" && env -u npm_config_nodedir -u NPM_CONFIG_NODEDIR "$node24" "$gyp" rebuild --release --nodedir="$runtime" -j 2 \
    >"$build.log" 2>&1); then
    rm -rf "$build"
    unavailable "better-sqlite3 did not build for Node $version (see $build.log)"
  fi
  if ! "$node24" -e 'new (require(process.argv[1]))(":memory:").close()' "$build" >>"$build.log" 2>&1; then
    rm -rf "$build"
    echo "test:node24: the better-sqlite3 built for Node $version does not load in it (see $build.log)" >&2
    exit 1
  fi
  # The objects are 20 MB; only the addon is loaded.
  find "$build/build" -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} +
  find "$build/build/Release" -mindepth 1 ! -name better_sqlite3.node -exec rm -rf {} +
fi

copy=$(mktemp -d "${TMPDIR:-/tmp}/contacts-node24-XXXXXX")
trap 'rm -rf "$copy"' EXIT
tar --exclude=./node_modules --exclude=./.git --exclude=./data --exclude=./.bench --exclude=./.scratch -cf - . | tar -xf - -C "$copy"
mkdir "$copy/node_modules"
for entry in node_modules/* node_modules/.bin; do
  name=$(basename "$entry")
  [ "$name" = better-sqlite3 ] || ln -s "$root/$entry" "$copy/node_modules/$name"
done
ln -s "$build" "$copy/node_modules/better-sqlite3"

# Their PostgreSQL runs, direct and through PgBouncer, are left to the Node 20 pass: pg is plain JavaScript, while what
# differs between Node versions is the native addon SQLite runs on (and the pass stays short: the full one took 500 s
# here, twice this one).
echo "test:node24: ${suites[*]} on Node $version, except their [postgres] and [postgres-pgbouncer] runs"
cd "$copy"
start=$SECONDS
PATH="$(dirname "$node24"):$PATH" "$node24" node_modules/vitest/vitest.mjs run "${suites[@]}" --testNamePattern '^(?!.*\[postgres(-pgbouncer)?\])'
echo "test:node24: passed on Node $version in $((SECONDS - start)) s"
