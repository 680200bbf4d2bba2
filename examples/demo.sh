#!/usr/bin/env bash
# The main job on a small example: init a repository in a temp folder, build
# a working catalog from a CSV with stock DuckDB, commit two versions, show
# the log, and query version 1 and version 2 with stock DuckDB through
# `fdl attach`. Run from anywhere after `make setup`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
fdl="${FDL_BIN:-$here/build/fdl}"
py="$here/deps/venv/bin/python"
export FDL_EXTENSION_DIR="${FDL_EXTENSION_DIR:-$here/deps/extensions}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdl-demo-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
repo="$tmp/population" work="$tmp/work"

# Run SQL in stock DuckDB (Python's duckdb 1.5.5), loading the pinned
# extensions offline. $1: SQL to run first (an ATTACH), $2: the query.
duck() {
  "$py" - "$1" "$2" <<'PY'
import os, sys, duckdb
con = duckdb.connect(config={"extension_directory": os.environ["FDL_EXTENSION_DIR"],
                             "autoinstall_known_extensions": False})
con.execute(sys.argv[1])
for q in filter(None, (s.strip() for s in sys.argv[2].split(";"))):
    res = con.execute(q)
    if res.description:
        print(" | ".join(d[0] for d in res.description))
        for row in res.fetchall():
            print(" | ".join(str(v) for v in row))
PY
}

echo "== fdl init"
"$fdl" init "$repo"
echo "== fdl checkout (prints the ATTACH for DuckDB)"
attach=$("$fdl" checkout "$repo" "$work" 2>/dev/null)
echo "$attach"

echo "== version 1: the 2024 census from a CSV"
duck "$attach" "CREATE TABLE lake.population AS SELECT * FROM read_csv('$here/examples/population-2024.csv', types={'town_code': 'VARCHAR'})"
"$fdl" commit "$work" -m "Census 2024" --author "Example City <data@example.org>"
echo "== version 2: add the 2025 towns"
duck "$attach" "INSERT INTO lake.population SELECT * FROM read_csv('$here/examples/population-2025.csv', types={'town_code': 'VARCHAR'})"
"$fdl" commit "$work" -m "Add Sakura (2025)" --author "Example City <data@example.org>"

echo "== fdl log"
"$fdl" log "$repo"

v1=$("$fdl" log "$repo" --json | tail -n 1 | "$py" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo "== version 1 in stock DuckDB (fdl attach $repo $v1)"
duck "$("$fdl" attach "$repo" "$v1")" "SELECT count(*) AS rows, sum(people) AS people FROM lake.population; SELECT DISTINCT town FROM lake.population ORDER BY town"
echo "== version 2 (HEAD) in stock DuckDB (fdl attach $repo)"
duck "$("$fdl" attach "$repo")" "SELECT count(*) AS rows, sum(people) AS people FROM lake.population; SELECT DISTINCT town FROM lake.population ORDER BY town"
echo "== demo finished: 2 versions, both readable"
