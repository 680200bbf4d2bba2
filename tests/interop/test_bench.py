"""The benchmark still runs: bench/run.py --smoke runs its cheapest rows
once each at the smallest sizes, so a bench that no longer runs on a fresh
clone (as when the time-travel peer attached the working catalog with the
wrong DATA_PATH, issue 54) fails the suite. Nothing is timed here: the
figures are the bench's business (bench/RESULTS.md)."""
import json
import os
import pathlib
import subprocess
import sys

from conftest import EXT, FDL

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_bench_smoke_rows_run(tmp_path):
    sqlrun = ROOT / "build" / "bench" / "sqlrun"
    assert sqlrun.exists(), "build/bench/sqlrun is missing (make interop builds it)"
    env = dict(os.environ, FDL_BIN=FDL, FDL_EXTENSION_DIR=EXT)
    p = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--out", str(tmp_path),
                        "--only", "start,one-row,query,verify"], capture_output=True, text=True, env=env,
                       timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    rows = json.loads((tmp_path / "smoke.json").read_text())
    ops = {r["op"]: r for r in rows}
    for op in ("start-up (fdl --version)", "one-row commit", "open + query an old version (folder)",
               "open + query an old version (fdl serve, cold)", "verify a whole repository",
               "verify --deep (every catalog derived again)",
               "one-row commit floor: DuckDB's start with the two extensions",
               "one-row commit floor: the catalog copied by hand"):
        assert op in ops, (op, sorted(ops))
        assert ops[op]["fdl_s"] > 0 and ops[op]["peer_s"] > 0, ops[op]
