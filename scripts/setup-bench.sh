#!/usr/bin/env bash
# What the benchmark needs beyond make setup: git (a peer) and gnuplot (the
# plot) and GNU time (peak RSS), from Debian's packages.
set -euo pipefail
missing=()
for p in git gnuplot-nox time; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "setup-bench: installing ${missing[*]}"
	$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The peer frozen-ducklake 0.11.0 (its CLI is also called `fdl`: bench/run.py
# calls it by its venv path, deps/peer-venv/bin/fdl). Pinned with hashes in
# scripts/requirements-peer.txt, downloads cached with make setup's. Its
# DuckDB runs `INSTALL ducklake`, which looks in $HOME/.duckdb/extensions:
# the bench gives it HOME=deps/peer-home, holding a copy of the pinned
# extensions that make setup unpacked, so it never reaches the network and
# never writes to the user's home.
here=$(cd "$(dirname "$0")/.." && pwd)
deps="$here/deps"
cache="${FDL_DOWNLOAD_CACHE:-${FDL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fdl}}"
peer="$deps/peer-venv"
req="$here/scripts/requirements-peer.txt"
req_sum=$(sha256sum "$req" | cut -c1-64)
if [ ! -x "$peer/bin/fdl" ] || [ "$(cat "$peer/.requirements" 2>/dev/null)" != "$req_sum" ]; then
	echo "setup-bench: installing frozen-ducklake 0.11.0 into deps/peer-venv"
	mkdir -p "$cache"
	pip_dl=(python3 -m pip download --quiet --require-hashes --no-deps --ignore-requires-python
		--only-binary :all: -d "$cache" -r "$req")
	"${pip_dl[@]}" || { echo "setup-bench: pip download -r scripts/requirements-peer.txt failed" >&2; exit 1; }
	rm -rf "$peer"
	python3 -m venv "$peer"
	"$peer/bin/pip" install --quiet --no-index --find-links "$cache" --require-hashes --ignore-requires-python \
		-r "$req" || { echo "setup-bench: pip install into deps/peer-venv failed" >&2; exit 1; }
	echo "$req_sum" > "$peer/.requirements"
fi
exts="$deps/peer-home/.duckdb/extensions/v1.5.5/linux_amd64"
mkdir -p "$exts"
for ext in ducklake sqlite_scanner httpfs; do
	src="$deps/extensions/v1.5.5/linux_amd64/$ext.duckdb_extension"
	[ -f "$src" ] || { echo "setup-bench: $src is missing: run make setup first" >&2; exit 1; }
	cmp -s "$src" "$exts/$ext.duckdb_extension" || cp "$src" "$exts/$ext.duckdb_extension"
done
