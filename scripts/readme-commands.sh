#!/usr/bin/env bash
# README's command reference is made from the binary: every command's
# --help=markdown (its cli_doc in src/cli/cmd_<name>.c), between the markers.
#   scripts/readme-commands.sh FDL README.md          rewrite the section
#   scripts/readme-commands.sh FDL README.md --check  fail if it is stale
set -euo pipefail
fdl=$1 readme=$2 mode=${3:-write}
begin='<!-- commands: made by `make readme` from src/cli/cmd_*.c; edit those, not this -->'
end='<!-- end of commands -->'
grep -qxF "$begin" "$readme" && grep -qxF "$end" "$readme" || {
	echo "readme-commands: $readme has no command markers" >&2; exit 1; }
section=$(mktemp)
trap 'rm -f "$section" "$section.new"' EXIT
for c in $("$fdl" help --commands); do
	"$fdl" "$c" --help=markdown
done > "$section"
awk -v b="$begin" -v e="$end" -v f="$section" '
	$0 == b { print; while ((getline l < f) > 0) print l; skip = 1; next }
	$0 == e { skip = 0 }
	!skip' "$readme" > "$section.new"
if [ "$mode" = --check ]; then
	diff -u "$readme" "$section.new" >&2 || {
		echo "readme-commands: README's command section is stale: run 'make readme'" >&2; exit 1; }
else
	cp "$section.new" "$readme"
fi
