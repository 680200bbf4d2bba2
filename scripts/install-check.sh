#!/usr/bin/env bash
# make install-check: install into a fresh prefix and use only what is
# installed there. The examples are built with nothing but pkg-config and
# run (one commits a version, the other lists, describes and verifies);
# the Python binding, pip installed, is tested against the installed libfdl;
# the dbt project and the dlt pipeline run through the installed fdl run; every
# manual page renders; the bash completion loads and completes; then make
# uninstall must leave the prefix empty. The DuckDB extensions are the
# installed ones (FDL_EXTENSION_DIR unset).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
py="$here/deps/venv/bin/python"
prefix=$(mktemp -d "${TMPDIR:-/tmp}/fdl-prefix-XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/fdl-install-check-XXXXXX")
trap 'rm -rf "$prefix" "$work"' EXIT
unset FDL_EXTENSION_DIR
# its own make install and uninstall, not jobs of the make that runs it
# (make test runs it beside others, -j2: no "jobserver unavailable" warning)
unset MAKEFLAGS MFLAGS
say() { printf 'install-check: %s\n' "$*"; }

make -s -C "$here" install PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
fdl="$prefix/bin/fdl"
say "installed $("$fdl" --version) and libfdl $(pkg-config --modversion fdl) into $prefix"

for ex in embed embed_commit; do
	cc -std=c17 -Wall -Wextra -Werror -o "$work/$ex" "$here/examples/$ex.c" $(pkg-config --cflags --libs fdl)
done
say "built examples/embed.c and examples/embed_commit.c with: cc \$(pkg-config --cflags --libs fdl)"
! ldd "$work/embed" | grep -q "$here/build" || { echo "install-check: embed links the build tree" >&2; exit 1; }

# a repository and a working catalog from the installed CLI; DuckDB writes
"$fdl" init "$work/repo" >/dev/null
attach=$("$fdl" checkout "$work/repo" "$work/w" 2>/dev/null)
"$py" - "$attach" "$prefix/lib/fdl/extensions" <<'PY'
import sys, duckdb
con = duckdb.connect(config={"extension_directory": sys.argv[2], "autoinstall_known_extensions": False})
con.execute(sys.argv[1])
con.execute("CREATE TABLE lake.towns AS SELECT 'town' || i AS town, i AS people FROM range(3) r(i)")
PY
"$work/embed_commit" "$work/w" "three towns" "Embedder" embed@example.org | tee "$work/commit.out"
grep -q '^committed ' "$work/commit.out"
printf 'name: towns\ntitle: Towns\n' > "$work/w/dataset.yml"
"$work/embed_commit" "$work/w" "a title" "Embedder" | grep -q '^committed '
"$work/embed" "$work/repo" main:1 | tee "$work/embed.out"
grep -q '^version 2 .* by Embedder: a title' "$work/embed.out"
grep -q '^version 1 .* by Embedder: three towns' "$work/embed.out"
grep -q '"title": "repo"' "$work/embed.out"  # main:1, before its description
grep -q '^verify: 2 versions checked, 0 problems' "$work/embed.out"
say "embed_commit committed two versions; embed listed, described and verified them"

# the Python binding as a user installs it from a clone (pip builds the
# wheel with flit_core, writing nothing into bindings/python), then finds
# the installed libfdl beside the fdl command on PATH
tree() { (cd "$here/bindings/python" && find . -not -name __pycache__ -not -path '*/__pycache__/*' | LC_ALL=C sort); }
before=$(tree)
"$py" -m pip install --quiet --no-index --no-build-isolation --no-deps --target "$work/py" "$here/bindings/python"
test "$(tree)" = "$before" || { echo "install-check: pip install left files in bindings/python" >&2; exit 1; }
test -f "$work/py/pyfdl/py.typed" || { echo "install-check: the installed pyfdl has no py.typed" >&2; exit 1; }
say "pip installed pyfdl from bindings/python (type hints included), leaving the tree as it was"
(unset FDL_LIBRARY; PATH="$prefix/bin:$PATH" PYTHONPATH="$work/py" PYTHONDONTWRITEBYTECODE=1 FDL_BIN="$fdl" \
	FDL_EXTENSION_DIR="$prefix/lib/fdl/extensions" "$py" -m pytest -q -p no:cacheprovider "$here/bindings/python/tests")

# the dbt project and the dlt pipeline of docs/integrations.md through the
# installed fdl run: the tools load DuckDB's extensions from the installed
# tree ($FDL_EXTENSION_DIR as fdl run exports it), and stock DuckDB reads
# what was published
pbin="$here/deps/pipelines-venv/bin"
cp -r "$here/examples/dbt" "$work/dbt"
"$fdl" init "$work/by-dbt" >/dev/null
"$fdl" init "$work/by-dlt" >/dev/null
export FDL_AUTHOR_NAME="Install Check" FDL_AUTHOR_EMAIL="ic@example.org"
PATH="$pbin:$PATH" DBT_SEND_ANONYMOUS_USAGE_STATS=false "$fdl" run "$work/by-dbt" -m "dbt build" -- \
	dbt build --project-dir "$work/dbt" --profiles-dir "$work/dbt" --target-path "$work/dbt/target" \
	--log-path "$work/dbt/logs" >"$work/dbt.out" 2>&1 || { tail -20 "$work/dbt.out" >&2; exit 1; }
PATH="$pbin:$PATH" RUNTIME__LOG_LEVEL=WARNING "$fdl" run "$work/by-dlt" -m "dlt" -- \
	python "$here/examples/dlt/pipeline.py" >"$work/dlt.out" 2>&1 || { tail -20 "$work/dlt.out" >&2; exit 1; }
"$py" - "$("$fdl" attach "$work/by-dbt")" "$("$fdl" attach "$work/by-dlt" --as w)" "$prefix/lib/fdl/extensions" <<'PY'
import sys, duckdb
con = duckdb.connect(config={"extension_directory": sys.argv[3], "autoinstall_known_extensions": False})
con.execute(sys.argv[1])
con.execute(sys.argv[2])
assert con.execute("SELECT count(*) FROM lake.population_growth").fetchone() == (3,)
assert con.execute("SELECT count(*) FROM w.weather.stations").fetchone() == (3,)
PY
say "the dbt project and the dlt pipeline published through the installed fdl run; stock DuckDB reads both"

n=0
for page in "$prefix"/share/man/man1/*.1; do
	MANWIDTH=80 man -l "$page" > /dev/null 2> "$work/man.err"
	test ! -s "$work/man.err" || { echo "install-check: $page: $(cat "$work/man.err")" >&2; exit 1; }
	n=$((n + 1))
done
test "$n" -eq $(( $("$fdl" help --commands | wc -l) + 1 ))
say "$n manual pages render with man -l"

got=$(PATH="$prefix/bin:$PATH" bash -c '
	source "$1/share/bash-completion/completions/fdl"
	COMP_WORDS=(fdl com); COMP_CWORD=1; _fdl; echo "${COMPREPLY[*]}"
	COMP_WORDS=(fdl commit --au); COMP_CWORD=2; _fdl; echo "${COMPREPLY[*]}"
	COMP_WORDS=(fdl log "$2" ma); COMP_CWORD=3; _fdl; echo "${COMPREPLY[*]}"
	COMP_WORDS=(fdl attach "$2@m"); COMP_CWORD=2; _fdl; echo "${COMPREPLY[*]}"' _ "$prefix" "$work/repo")
test "$got" = $'commit\n--author\nmain\n'"$work/repo@main" || { echo "install-check: completion gave: $got" >&2; exit 1; }
say "bash completion completes commands, options, branch names and ROOT@REF"

make -s -C "$here" uninstall PREFIX="$prefix" >/dev/null
left=$(find "$prefix" -type f -o -type l)
test -z "$left" || { echo "install-check: make uninstall left: $left" >&2; exit 1; }
say "make uninstall removed everything it installed"
