#!/usr/bin/env bash
# The walls docs/architecture.md draws, checked by grep (`make docs-check`
# runs this): each check lists the lines that cross its wall, and the
# script fails when any check lists one.
set -u
cd "$(dirname "$0")/.."
fail=0

check() { # a description, then the command whose output must be empty
	local what=$1 out
	shift
	out=$("$@")
	if [ -n "$out" ]; then
		printf 'walls-check: %s:\n%s\n' "$what" "$out" >&2
		fail=1
	fi
}

# only src/catalog/ writes SQL or includes duckdb.h (the S3 backend's HTTP
# DELETE is a method name, not SQL)
sql() {
	grep -rnE '"(SELECT|INSERT|UPDATE|DELETE|CREATE|COPY|SET|USE|ATTACH|LOAD|PRAGMA)\b|duckdb\.h' src |
		grep -v '^src/catalog/\|^src/cli/' | grep -v '\.method = "DELETE"'
}
# only src/layout/ spells the repository's key space (src/layout/keys.h)
keys() {
	grep -rnE '"[^"]*(refs/heads/|refs/tags/|versions/|catalogs/|history/)|"ducklake\.duckdb"' src --include=*.c |
		grep -v '^src/layout/\|^src/cli/'
}
# ... and the names of a version's files (FDL_VERSION_JSON etc. in layout.h)
files() {
	grep -rnE '"[^"]*(version|expired|files|dataset)\.json' src --include=*.c | grep -v '^src/layout/\|^src/cli/'
}

check "SQL or duckdb.h outside src/catalog/" sql
check "the key space spelled outside src/layout/ (build keys with src/layout/keys.h)" keys
check "a version's file named outside src/layout/ (use the FDL_* names in src/layout/layout.h)" files
[ $fail = 0 ] && echo "walls-check: no SQL outside src/catalog/, no key of the repository spelled outside src/layout/"
exit $fail
