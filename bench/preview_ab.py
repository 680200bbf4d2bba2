"""Issue 58: two builds of fdl side by side on the one-row commit with a
preview, for a change too small for bench/run.py's pairs to see on a shared
machine. Each build commits in a repository of its own that keeps previews
(10 tables at 10 snapshots, `fdl preview` run: the shape of bench/run.py's
preview row), the peer is the first build in a clone without previews; one
row into t0, then a commit, the three in turn each round. Prints each side's
median wall time and CPU (user + sys, by rusage) and the paired difference
of the two builds. With --trace the commits run with FDL_TRACE, each line
stamped as it arrives, and the medians of where the preview started and
ended and where the process ended, in ms after the frozen catalog's detach
(`DETACH fdl_new`), are printed too.

usage: deps/venv/bin/python bench/preview_ab.py FDL_A FDL_B [ROUNDS] [--trace]
"""
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXT = os.environ.get("FDL_EXTENSION_DIR", str(ROOT / "deps" / "extensions"))
ENV = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="bench", FDL_AUTHOR_EMAIL="bench@example.org")
ENV.pop("FDL_PREVIEW_AT_COMMIT", None)  # each repository decides, as in use


def run(fdl, *args):
    p = subprocess.run([fdl, *map(str, args)], capture_output=True, text=True, env=ENV)
    if p.returncode != 0:
        raise RuntimeError(f"{fdl} {' '.join(map(str, args))}: {p.stderr}")
    return p.stdout


def connect(attach):
    con = duckdb.connect(config={"extension_directory": EXT, "allow_unsigned_extensions": True})
    con.execute(attach)
    return con


def side(fdl, root, work):
    """A repository of 10 tables at 10 snapshots that keeps previews."""
    run(fdl, "init", root)
    con = connect(run(fdl, "checkout", root, work))
    for t in range(10):
        con.execute(f"CREATE TABLE lake.t{t} (k BIGINT, v VARCHAR)")
    for s in range(10):
        con.execute(f"INSERT INTO lake.t{s % 10} VALUES ({s}, 'row {s}')")
    run(fdl, "commit", work, "-m", "ten snapshots", "-q")
    run(fdl, "preview", root)
    return con


def marks(lines, end):
    """From a traced commit's stamped lines: the preview's start (its ATTACH,
    or since the tenth pass its reading of the tables' states before the
    detach, less its duration) and end, and the process's end, after (or,
    negative, before) DETACH fdl_new ends."""
    detach = next(t for t, line in lines if "DETACH fdl_new" in line)
    start = next(t - float(re.search(r"trace:\s+([0-9.]+) ms", line).group(1))
                 for t, line in lines if " AS fdl_pv " in line or " AS text, NULL::BIGINT AS bytes " in line)
    stop = next(t for t, line in lines if "of its thread's CPU" in line)
    return start - detach, stop - detach, end - detach


def commit(fdl, work, trace):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen([fdl, "commit", str(work), "-m", "one row", "-q"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=dict(ENV, FDL_TRACE="1") if trace else ENV)
    lines = [(1000 * (time.perf_counter() - t0), line) for line in p.stderr]
    if p.wait() != 0:
        raise RuntimeError(f"{fdl} commit: {''.join(line for _, line in lines)}")
    wall = 1000 * (time.perf_counter() - t0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = 1000 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return wall, cpu, marks(lines, wall) if trace and any("of its thread's CPU" in line for _, line in lines) else None


def main():
    args = [a for a in sys.argv[1:] if a != "--trace"]
    trace = "--trace" in sys.argv
    a, b = args[0], args[1]
    rounds = int(args[2]) if len(args) > 2 else 30
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="fdl-preview-ab-"))
    try:
        sides = {"A": (a, tmp / "a-work", side(a, tmp / "a", tmp / "a-work")),
                 "B": (b, tmp / "b-work", side(b, tmp / "b", tmp / "b-work"))}
        run(a, "clone", tmp / "a", tmp / "peer")
        shutil.rmtree(tmp / "peer" / "previews")  # a repository that never ran fdl preview
        sides["peer"] = (a, tmp / "peer-work", connect(run(a, "checkout", tmp / "peer", tmp / "peer-work")))
        got = {name: [] for name in sides}
        k = 10**9
        for _ in range(rounds):
            for name, (fdl, work, con) in sides.items():
                k += 1
                con.execute(f"INSERT INTO lake.t0 (k) VALUES ({k})")
                got[name].append(commit(fdl, work, trace and name != "peer"))
        kept = {name: len(list((tmp / r / "previews").glob("*.json"))) for name, r in (("A", "a"), ("B", "b"))}
        if min(kept.values()) < rounds + 2 or (tmp / "peer" / "previews").exists():
            raise RuntimeError(f"not one preview a commit on A and B and none on the peer: {kept}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {name: statistics.median(w for w, _, _ in got[name]) for name in got}
    for name, fdl in (("A", a), ("B", b), ("peer", f"{a}, in a clone without previews")):
        print(f"{name}: {fdl}: wall {med[name]:.1f} ms, CPU {statistics.median(c for _, c, _ in got[name]):.1f} ms"
              f" (medians of {rounds})")
        found = [m for _, _, m in got[name] if m]
        if found:
            print("   after DETACH fdl_new: preview from %.1f to %.1f ms, process ended at %.1f ms (medians)"
                  % tuple(statistics.median(col) for col in zip(*found)))
    paired = statistics.median(x[0] - y[0] for x, y in zip(got["A"], got["B"]))
    print(f"A / peer {med['A'] / med['peer']:.3f}, B / peer {med['B'] / med['peer']:.3f};"
          f" A - B, paired by round: median {paired:+.1f} ms")
    print("load average:", " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
