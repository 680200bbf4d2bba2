"""Locks that cannot strand a branch or a working catalog: a writer killed
while holding a lock does not block the next one; a lock somebody else
holds is reported as a lock (file, holder, what clears it), before any
version is written; two commits of one working folder never write its
record backwards. Interleavings are forced (a crash point that aborts
while the lock is held, a lock the test itself holds), never timed."""
import fcntl
import os
import socket
import subprocess

import pytest

from conftest import EXT, FDL, fdl, read_json, rows

NO_WAIT = {"FDL_LOCK_WAIT_MS": "0"}


def needs_crash_points():
    if b"FDL_CRASH_HOLDING_LOCK" not in open(FDL, "rb").read():
        pytest.fail("these tests need the sanitizer build (FDL_BIN=build/san/fdl), which has crash points")


def versions(repo):
    return sorted(p.name for p in (repo.root / "versions").iterdir())


def test_a_commit_killed_holding_the_branch_lock_blocks_nothing(repo, tmp_path):
    needs_crash_points()
    work = tmp_path / "w"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    fdl("commit", work, "-m", "base")
    for i in range(3):  # repeated: each time the next commit heals it by itself
        con.execute(f"INSERT INTO lake.t VALUES ({i})")
        p = fdl("commit", work, "-m", f"dies {i}", check=False, env={"FDL_CRASH_HOLDING_LOCK": "refs/heads/main"})
        assert p.returncode < 0 or p.returncode > 128 or "crash point" in p.stderr, p.stderr
        assert (repo.root / "refs/heads/main.lock").exists()  # the dead writer's lock is there
        v = fdl("commit", work, "-m", f"after {i}", "-q").stdout.strip()
        assert repo.head() == v and not (repo.root / "refs/heads/main.lock").exists()
    assert rows(repo.open_version("main"), "lake.t") == [(0,), (1,), (2,)]
    assert fdl("verify", repo.root, "--all").returncode == 0


def hold(path, record=True):
    """Hold a lock as a live fdl would (flock held, holder recorded)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    if record:
        os.write(fd, f"fdl-lock 1\npid {os.getpid()}\nhost {socket.gethostname()}\n"
                     f"since 2026-12-03T10:00:00Z\ncommand the test\n".encode())
    return fd


def test_a_held_branch_lock_is_reported_as_a_lock_and_nothing_is_written(repo, tmp_path):
    work = tmp_path / "w"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    base = fdl("commit", work, "-m", "base", "-q").stdout.strip()
    con.execute("INSERT INTO lake.t VALUES (1)")
    before = versions(repo)
    lock = repo.root / "refs/heads/main.lock"
    fd = hold(lock)
    try:
        p = fdl("commit", work, "-m", "blocked", check=False, env=NO_WAIT)
    finally:
        os.close(fd)
    assert p.returncode == 4, p.stderr
    assert "locked" in p.stderr and str(lock) in p.stderr and f"pid {os.getpid()}" in p.stderr, p.stderr
    assert "moved" not in p.stderr and "nothing was written" in p.stderr
    assert versions(repo) == before  # checked before freezing: no unreferenced version
    assert read_json(work / "fdl-work.json")["base"] == base
    # the test let go of its flock without removing the file, as a killed
    # process would: the next commit breaks it and publishes
    fdl("commit", work, "-m", "now")
    assert rows(repo.open_version("main"), "lake.t") == [(1,)]


def test_a_lock_without_a_holder_record_is_reported_with_the_fix(repo, tmp_path):
    """The issue's reproduction: a lock another tool left (a copy of the
    ref). fdl cannot prove it dead, so it says what to remove."""
    work = tmp_path / "w"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    fdl("commit", work, "-m", "base")
    lock = repo.root / "refs/heads/main.lock"
    lock.write_text((repo.root / "refs/heads/main").read_text())
    con.execute("INSERT INTO lake.t VALUES (1)")
    before = versions(repo)
    p = fdl("commit", work, "-m", "blocked", check=False, env=NO_WAIT)
    assert p.returncode == 4 and "locked" in p.stderr and str(lock) in p.stderr and "remove" in p.stderr, p.stderr
    assert "moved" not in p.stderr
    assert versions(repo) == before
    lock.unlink()
    fdl("commit", work, "-m", "after the fix")
    assert rows(repo.open_version("main"), "lake.t") == [(1,)]


def test_a_second_commit_of_one_working_folder_waits_its_turn(repo, tmp_path):
    """Forced: the test holds the working folder's lock as a running commit
    would; a commit then fails cleanly (exit 4, the lock named) and the
    record stays as it was."""
    work = tmp_path / "w"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    base = fdl("commit", work, "-m", "base", "-q").stdout.strip()
    con.execute("INSERT INTO lake.t VALUES (1)")
    record = (work / "fdl-work.json").read_text()
    fd = hold(work / "fdl-work.lock")
    try:
        p = fdl("commit", work, "-m", "second", check=False, env=NO_WAIT)
    finally:
        os.close(fd)
        (work / "fdl-work.lock").unlink()
    assert p.returncode == 4 and "working catalog" in p.stderr and "fdl-work.lock" in p.stderr, p.stderr
    assert (work / "fdl-work.json").read_text() == record and repo.head() == base
    fdl("commit", work, "-m", "then")


def test_two_commits_of_one_working_folder_race_and_the_record_never_goes_back(repo, tmp_path, ledger):
    work = tmp_path / "w"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    fdl("commit", work, "-m", "base")
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="x")
    tries = int(os.environ.get("FDL_RACE_TRIES", "20"))
    for i in range(tries):
        con.execute(f"INSERT INTO lake.t VALUES ({i})")
        procs = [subprocess.Popen([FDL, "commit", str(work), "-m", f"{i}-{k}", "-q"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(2)]
        results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
        codes = sorted(r[0] for r in results)
        # one publishes; the other finds nothing new, or the lock (it waited
        # 2 s and the first one was still freezing)
        assert codes[0] == 0 and codes[1] in (0, 4, 8), results
        for code, out, _ in results:
            if code == 0:
                ledger.published(out)
        assert read_json(work / "fdl-work.json")["base"] == repo.head(), (i, results)
    con.close()
    assert rows(repo.open_version("main"), "lake.t") == [(i,) for i in range(tries)]


def test_two_checkouts_into_one_folder_one_wins_and_nothing_is_mixed(repo, tmp_path):
    con = repo.checkout(tmp_path / "base")
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    fdl("commit", tmp_path / "base", "-m", "one")
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT)
    for i in range(5):
        work = tmp_path / f"w{i}"
        if i % 2:
            work.mkdir()  # an empty folder is as good as none
        procs = [subprocess.Popen([FDL, "checkout", str(repo.root), str(work)], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
        assert sorted(r[0] for r in results) == [0, 9], results
        loser = next(r for r in results if r[0] == 9)
        assert "not empty" in loser[2] and "Failed to initialize" not in loser[2], loser
        assert sorted(p.name for p in work.iterdir()) == ["dataset.yml", "ducklake.sqlite", "fdl-template.duckdb",
                                                        "fdl-work.json"]
        assert not [p for p in tmp_path.iterdir() if ".fdl-checkout-" in p.name]
        from conftest import connect
        c = connect()
        c.execute(next(r for r in results if r[0] == 0)[1])
        assert rows(c, "lake.t") == [(1,)]
        c.close()
