#!/usr/bin/env bash
# scripts/fuzz.sh TARGET SECONDS: run build/fuzz/fuzz-TARGET (libFuzzer) for
# SECONDS from the inputs in tests/corpus/TARGET/, then merge into that
# folder only what it found that reaches new coverage (-merge=1), so the
# corpus stays small. Prints the runs, coverage and time; exits 1 at a
# crash, leak, timeout or sanitizer report, whose input it keeps in
# build/fuzz/crash-TARGET-* (run it with build/san/fuzz-TARGET FILE).
#
# scripts/fuzz.sh TARGET min (make fuzz-min): shrink tests/corpus/TARGET/ to
# its named seeds (seed*, real-*, hostile-*: kept whatever they reach) and
# the fewest other inputs that reach the same edges (-merge=1, hit counts
# not counted: -use_counters=0).
set -uo pipefail
t=$1 secs=$2
bin=build/fuzz/fuzz-$t corpus=tests/corpus/$t new=build/fuzz/new/$t log=build/fuzz/log/$t.txt
[ -x "$bin" ] || { echo "fuzz: $bin is not built (make fuzz-build)" >&2; exit 1; }
mkdir -p "$corpus" "$new" "$(dirname "$log")"
# inputs up to 8 KiB, or the largest seed (a real pointer or metadata.json is larger)
max_len=$(find "$corpus" -type f -printf '%s\n' | sort -n | tail -1)
[ "${max_len:-0}" -gt 8192 ] || max_len=8192
if [ "$secs" = min ]; then
  min=build/fuzz/min/$t
  rm -rf "$min" && mkdir -p "$min"
  find "$corpus" -maxdepth 1 -type f \( -name 'seed*' -o -name 'real-*' -o -name 'hostile-*' \) -exec cp {} "$min/" \;
  before=$(ls "$corpus" | wc -l)
  "$bin" -merge=1 -use_counters=0 -max_len="$max_len" -timeout=10 "$min" "$corpus" > "$log.min" 2>&1 || {
    echo "fuzz $t: minimising failed; see $log.min" >&2; exit 1; }
  rm -rf "$corpus" && mv "$min" "$corpus"
  echo "fuzz $t: corpus $before -> $(ls "$corpus" | wc -l) files"
  exit 0
fi
start=$(date +%s)
"$bin" -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="build/fuzz/crash-$t-" "$new" "$corpus" > "$log" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)
cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p' <<< "$done_line")
if [ $rc -ne 0 ] || grep -qE '^(==[0-9]+==ERROR|SUMMARY: )' "$log"; then
  echo "fuzz $t: FAILED after ${took} s (exit $rc); see $log" >&2
  grep -E 'ERROR|SUMMARY|Test unit written' "$log" >&2
  exit 1
fi
before=$(ls "$corpus" | wc -l)
"$bin" -merge=1 -max_len="$max_len" -timeout=10 "$corpus" "$new" > "$log.merge" 2>&1 || {
  echo "fuzz $t: merging into $corpus failed; see $log.merge" >&2; exit 1; }
rm -rf "$new"
echo "fuzz $t: ${runs:-?} runs in ${took} s, ${cov:-coverage ?}, corpus $before -> $(ls "$corpus" | wc -l) files"
