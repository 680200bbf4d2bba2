"""Mistakes a publisher or a mirror can make, seen coming and undone (issue
36): each test replays one finding as a new user met it and checks what fdl
says and does now. Expected rows come from stock DuckDB."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import EXT, FDL, connect, fdl, read_json, rows


def commit(work, msg, *extra, check=True):
    return fdl("commit", work, "-m", msg, *extra, check=check)


def test_serve_on_a_taken_port_says_it_once(repo):
    """Finding: `fdl serve` on a taken port printed libmicrohttpd's
    "Failed to bind to port 0" before fdl's own message."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        p = fdl("serve", repo.root, "--port", port, check=False, timeout=60)
    assert p.returncode == 6
    assert p.stderr.strip().splitlines() == [f"fdl: cannot listen on 127.0.0.1:{port}: Address already in use"]


def test_dry_runs_with_nothing_to_do_say_so(repo, tmp_path):
    """Finding: `expire --dry-run` and `gc --dry-run` with nothing to do
    printed nothing at all."""
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    commit(tmp_path / "w", "one")
    for args in (["expire", "--dry-run"], ["expire"]):
        out = fdl(*args[:1], repo.root, *args[1:]).stdout
        assert out.startswith("Nothing") and "retention" in out, out
    for args in (["gc", "--dry-run"], ["gc", "--grace", "0s"]):
        out = fdl(*args[:1], repo.root, *args[1:]).stdout
        assert out.startswith("Nothing") and "grace period" in out, out
