#!/usr/bin/env bash
# Every options struct of the public API (`typedef struct fdl_*_options` in
# include/fdl.h) has `unsigned int version` as its first field, its
# FDL_<NAME>_OPTIONS_VERSION and FDL_<NAME>_OPTIONS_INIT, and the library
# checks it (fdl_options_check with that version, in src/). `make
# abi-check` runs this; `scripts/options-check.sh HEADER` checks another
# header (its self-test).
set -u
cd "$(dirname "$0")/.."
header=${1:-include/fdl.h}
fail=0
names=$(sed -n 's/^typedef struct fdl_\([a-z0-9_]*\)_options {$/\1/p' "$header")
for n in $names; do
	N=$(printf '%s' "$n" | tr a-z A-Z)
	first=$(awk -v s="typedef struct fdl_${n}_options {" '$0 == s {getline; print; exit}' "$header")
	case $first in
	*'unsigned int version;'*) ;;
	*) echo "options-check: fdl_${n}_options: the first field is not 'unsigned int version' ($first)" >&2; fail=1 ;;
	esac
	grep -q "^#define FDL_${N}_OPTIONS_VERSION [1-9]" "$header" ||
		{ echo "options-check: fdl_${n}_options: no #define FDL_${N}_OPTIONS_VERSION" >&2; fail=1; }
	grep -q "^#define FDL_${N}_OPTIONS_INIT {.version = FDL_${N}_OPTIONS_VERSION" "$header" ||
		{ echo "options-check: fdl_${n}_options: no #define FDL_${N}_OPTIONS_INIT {.version = ...}" >&2; fail=1; }
	grep -rqzE "fdl_options_check\([^;]*FDL_${N}_OPTIONS_VERSION" src ||
		{ echo "options-check: fdl_${n}_options: no fdl_options_check(..., FDL_${N}_OPTIONS_VERSION, ...) in src/" >&2; fail=1; }
done
[ -n "$names" ] || { echo "options-check: no options struct found in $header" >&2; fail=1; }
if [ $# = 0 ] && [ $fail = 0 ]; then # the check can fail: a struct without its version, and one unchecked
	scratch=$(mktemp)
	sed '/FDL_COMMIT_OPTIONS_VERSION \*\//d' "$header" > "$scratch"
	"$0" "$scratch" 2>/dev/null && { echo "options-check: missed a struct without its version field" >&2; fail=1; }
	sed 's/FDL_GC_OPTIONS_/FDL_GC2_OPTIONS_/g; s/struct fdl_gc_options {/struct fdl_gc2_options {/' "$header" > "$scratch"
	"$0" "$scratch" 2>/dev/null && { echo "options-check: missed a struct the library does not check" >&2; fail=1; }
	rm -f "$scratch"
fi
[ $fail = 0 ] && [ $# = 0 ] && echo "options-check: $(echo $names | wc -w) options structs, each with its version, _INIT and check"
exit $fail
