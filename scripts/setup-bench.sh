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
