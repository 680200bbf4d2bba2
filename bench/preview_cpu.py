"""Issue 58: the CPU time (user + sys, by rusage) of a one-row commit with
the preview (FDL_PREVIEW_AT_COMMIT=1) against the same commit without it
(=0), alternating on one working catalog of 10 tables at 10 snapshots (the
shape of bench/run.py's preview row). Wall time on a shared machine is
noisier than the effect; CPU time is not. The first pair (the first preview
of all 10 tables) is left out of the medians. Both sides run with FDL_TRACE,
which also gives the preview thread's own CPU time and page faults (the
cost itself, without the commit's noise) and each statement's.

usage: deps/venv/bin/python bench/preview_cpu.py [PAIRS] [FDL]
"""
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import tempfile

import duckdb

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXT = os.environ.get("FDL_EXTENSION_DIR", str(ROOT / "deps" / "extensions"))


def main():
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    fdl = sys.argv[2] if len(sys.argv) > 2 else str(ROOT / "build" / "fdl")
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="bench", FDL_AUTHOR_EMAIL="bench@example.org")

    def run(*args, **extra):
        p = subprocess.run([fdl, *map(str, args)], capture_output=True, text=True, env=dict(env, **extra))
        if p.returncode != 0:
            raise RuntimeError(f"fdl {' '.join(map(str, args))}: {p.stderr}")
        return p

    with tempfile.TemporaryDirectory(prefix="fdl-preview-cpu-") as tmp:
        root, work = pathlib.Path(tmp) / "r", pathlib.Path(tmp) / "w"
        run("init", root)
        con = duckdb.connect(config={"extension_directory": EXT, "allow_unsigned_extensions": True})
        con.execute(run("checkout", root, work).stdout)
        for t in range(10):
            con.execute(f"CREATE TABLE lake.t{t} (k BIGINT, v VARCHAR)")
        for s in range(10):
            con.execute(f"INSERT INTO lake.t{s % 10} VALUES ({s}, 'row {s}')")
        run("commit", work, "-m", "ten snapshots", "-q")
        cpu = {"1": [], "0": []}
        thread, faults = [], []
        k = 1000
        for _ in range(pairs):
            for which in ("1", "0"):
                k += 1
                con.execute(f"INSERT INTO lake.t0 (k) VALUES ({k})")
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                p = run("commit", work, "-m", "one row", "-q", FDL_PREVIEW_AT_COMMIT=which, FDL_TRACE="1")
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[which].append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
                own = re.search(r"preview: ([0-9.]+) ms of its thread's CPU, ([0-9]+) page faults", p.stderr)
                if which == "1" and own:
                    thread.append(float(own.group(1)))
                    faults.append(int(own.group(2)))
        con.close()
        if not any((root / "previews").glob("*.json")):
            raise RuntimeError("no preview written by the commits measured with one")
    for which, name in (("1", "with preview"), ("0", "without")):
        print(f"{name}: {[round(x) for x in cpu[which]]} ms CPU, median of pairs 2-{pairs}:"
              f" {statistics.median(cpu[which][1:]):.0f} ms")
    if len(thread) > 1:
        print(f"the preview thread's own CPU: {[round(x) for x in thread]} ms, median of pairs 2-{pairs}:"
              f" {statistics.median(thread[1:]):.1f} ms; page faults, median: {statistics.median(faults[1:]):.0f}")
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
