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
# ... and the refs' own spellings: HEAD, a symbolic ref's "ref: ", the refs
# folder, a ref key put together by hand, a lock file told by its suffix
# (FDL_HEAD_KEY, fdl_head_content, FDL_REFS_DIR, fdl_ref_key and
# fdl_key_classify in src/layout/keys.h say each); not an HTTP method HEAD,
# nor a comment, nor the media types a host gives (util/mime.c, which the
# store below layout uses)
refnames() {
	grep -rnE '"HEAD"|"ref: |"refs/|fdl_store_[a-z_]*\([^;]*"refs"|strstr\([^)]*"\.lock"' src --include=*.c |
		grep -v '^src/layout/\|^src/cli/\|^src/util/mime\.c:' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*/?\*' |
		grep -v 'method'
}
# ... and the Iceberg views' tree (src/layout/iceberg.h): its manifests,
# deletes and catalog folders, a table's metadata file (fdl_iceberg_*_key,
# fdl_iceberg_manifests_uri, fdl_iceberg_rel_in); not the media types
# util/mime.c gives (below layout), nor a comment
icebergkeys() {
	grep -rnE '"[^"]*(/manifests|manifests/|/deletes|deletes/|catalog/v1|/metadata/|\.metadata\.json)' src --include=*.c |
		grep -v '^src/layout/\|^src/cli/\|^src/util/mime\.c:' | grep -vE '^[^:]+:[0-9]+:[[:space:]]*/?\*'
}
# the checks above find what they look for: each literal planted in a file
# of src/ops/ is found (a check that cannot fail is no wall)
planted() {
	local tmp plant
	tmp=$(mktemp -d)
	mkdir -p "$tmp/src/ops"
	for plant in 'x = "HEAD";' 'line = fdl_asprintf("ref: %s\n", key);' 'fdl_store_list(s, "refs", &l, e);' \
		'k = fdl_asprintf("refs/%s/%s", kind, name);' 'if (strstr(k, ".lock"))' 'k = "refs/heads/main";' \
		'k = "versions/x";' 'k = "x/version.json";' 'm = fdl_asprintf("%s/manifests", tree);' \
		'p = fdl_asprintf("%s/" FDL_ICEBERG_DIR "/%s/manifests/", loc, lid);' \
		'k = fdl_asprintf("%s/metadata/%05lld-%s.metadata.json", dir, seq, id);' 'if (!strncmp(rel, "deletes/", 8))' \
		'k = "catalog/v1/namespaces";'; do
		printf '%s\n' "$plant" >"$tmp/src/ops/probe.c"
		[ "$(cd "$tmp" && { refnames; keys; files; icebergkeys; } | wc -l)" -ge 1 ] || echo "not found when planted: $plant"
	done
	rm -rf "$tmp"
}
# ... and the names of a version's files (FDL_VERSION_JSON etc. in layout.h)
files() {
	grep -rnE '"[^"]*(version|expired|files|dataset)\.json' src --include=*.c | grep -v '^src/layout/\|^src/cli/'
}

# what derives from the refs (history index, ref list, Iceberg views and
# catalog, previews) is brought up to date through one seam, src/ops/derived.c
# (fdl_ref_moved), which every ref-moving operation calls
seam() {
	grep -rnE '\b(fdl_history_(update|prepare|remove|drop)|fdl_reflist_(note|note_gone|set|rebuild)|fdl_iceberg_after_[a-z_]*|fdl_site_(after|before)_[a-z_]*|fdl_ice_catalog_sync[a-z_]*)\(' src --include=*.c |
		grep -v '^src/layout/\|^src/iceberg/\|^src/site/\|^src/ops/derived\.c:'
	grep -rnE '\bfdl__preview_(make|start|start_held|release|join|sweep|drop|clone)\(' src --include=*.c |
		grep -v '^src/ops/preview\.c:\|^src/ops/preview_clone\.c:\|^src/ops/preview_repo\.c:\|^src/ops/derived\.c:'
}

# libyaml only behind util/yaml.c, libcurl only under src/store/
libs() {
	grep -rln '<yaml.h>' src | grep -v '^src/util/yaml.c$'
	grep -rln '<curl/curl.h>' src | grep -v '^src/store/'
}
# threads only from the one pool and the server (and the CLI's signal
# waiter: a process's Ctrl-C is the program's business, not the library's)
threads() {
	grep -rln pthread_create src | grep -v '^src/util/\|^src/serve/\|^src/cli/interrupt.c$'
}
# a room a newcomer can hold in one look: no .c file over 800 lines, no
# function over 120 (ctags' end lines; skipped where ctags is missing)
sizes() {
	wc -l src/*/*.c | awk '$2 != "total" && $1 > 800 {print $2 ": " $1 " lines"}'
	command -v ctags >/dev/null || return 0
	ctags --fields=+ne --c-kinds=f -o - src/*/*.c | awk -F'\t' '{l = ""; e = ""
		for (i = 4; i <= NF; i++) { if ($i ~ /^line:/) l = substr($i, 6); if ($i ~ /^end:/) e = substr($i, 5) }
		if (e != "" && e - l > 120) print $2 ": " $1 " is " e - l " lines"}'
}

check "SQL or duckdb.h outside src/catalog/" sql
check "libyaml or libcurl outside its one door" libs
check "a thread started outside src/util/pool.c and src/serve/" threads
check "a file over 800 lines or a function over 120" sizes
check "the key space spelled outside src/layout/ (build keys with src/layout/keys.h)" keys
check "a derived file brought up to date outside the seam (call fdl_ref_moved, src/ops/derived.h)" seam
check "a ref, HEAD or a lock file spelled outside src/layout/ (use src/layout/keys.h)" refnames
check "the walls check itself (a planted literal it did not find)" planted
check "a version's file named outside src/layout/ (use the FDL_* names in src/layout/layout.h)" files
check "the Iceberg views' tree spelled outside src/layout/ (use src/layout/iceberg.h)" icebergkeys
[ $fail = 0 ] && echo "walls-check: no SQL outside src/catalog/, no key of the repository, ref, HEAD, lock or Iceberg view spelled outside src/layout/ (each planted spelling found), libyaml and libcurl behind their doors, threads from the pool, rooms in size, derived files behind one seam"
exit $fail
