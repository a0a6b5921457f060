#!/usr/bin/env bash
# Rewrites what is generated from the options table (shim/core/options/option_table.cpp): the
# table in config/README.md (between its two markers) and config/pygraph.json (every option at
# its default). Run it after changing the table; config_test fails until then.
# Usage: scripts/update-config-docs.sh [BUILD_DIR]   (default build/, configured)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target pygraph-launcher >/dev/null
# No PYGRAPH_* variable and no file: the defaults.
env -i "$build/pygraph" config --json >config/pygraph.json
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$build/pygraph" config --markdown >"$table"
awk -v table="$table" '
  /^<!-- options table: generated/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
  /^<!-- end of options table -->/ { skip = 0 }
  !skip { print }
' config/README.md >config/README.md.new
mv config/README.md.new config/README.md
echo "updated config/README.md and config/pygraph.json"
