"""Crash points: the test build aborts just before the Nth store write of a
command (FDL_CRASH_AT=N). For every N: the repository still verifies, the
ref is at the old or the new version, the working catalog lost nothing, and
running the command again completes the job with the same end state."""
import hashlib
import json
import os
import shutil
import subprocess

import pytest

from conftest import EXT, FDL, connect, fdl, read_json, rows

COVERED = {}


@pytest.fixture(scope="module", autouse=True)
def crash_build():
    if b"FDL_CRASH_AT" not in open(FDL, "rb").read():
        pytest.fail(f"{FDL} is not a crash-point build (make test uses build/san/fdl)")
    yield
    if COVERED:
        print("\ncrash points covered: " + ", ".join(f"{k} {v}" for k, v in sorted(COVERED.items()))
              + f", total {sum(COVERED.values())}")


def run(args, crash_at=None):
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Test")
    if crash_at:
        env["FDL_CRASH_AT"] = str(crash_at)
    return subprocess.run([FDL, *map(str, args)], capture_output=True, text=True, env=env)


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def crash_loop(name, golden, live, args, check):
    """Restore `golden` into `live` before each run; crash at 1, 2, ...
    until the command completes without reaching a crash point."""
    def restore():
        for g, l in zip(golden, live):
            shutil.rmtree(l, ignore_errors=True)
            shutil.copytree(g, l, symlinks=True)
    restore()
    clean = run(args)
    assert clean.returncode == 0, clean.stderr
    want = [tree(l) for l in live]
    n = 1
    while True:
        restore()
        p = run(args, crash_at=n)
        if p.returncode == 0:
            break
        assert "crash point" in p.stderr, (n, p.stderr)
        check(n, crashed=True)
        again = run(args)
        assert again.returncode == 0, (n, again.stderr)
        check(n, crashed=False)
        if name != "commit":  # a commit makes a new id each time; the rest must end identical
            assert [tree(l) for l in live] == want, n
        n += 1
    COVERED[name] = n - 1
    assert n > 1


def verify_ok(root, n):
    v = run(["verify", root, "--all"])
    assert v.returncode == 0, (n, v.stdout)


def test_commit(repo, tmp_path, ledger):
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    fdl("commit", tmp_path / "work", "-m", "one")
    old = repo.head()
    con.execute("INSERT INTO lake.t VALUES (2)")
    con.close()
    golden = [tmp_path / "g-repo", tmp_path / "g-work"]
    shutil.copytree(repo.root, golden[0])
    shutil.copytree(tmp_path / "work", golden[1])
    catalog_sha = digest(golden[1] / "ducklake.sqlite")

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(), n  # version one answers as it did, after every crash
        head = repo.head()
        assert head == old or repo.version(head)["parents"] == [old], n
        assert digest(tmp_path / "work" / "ducklake.sqlite") == catalog_sha  # commit never writes it
        if not crashed:
            v = repo.version(repo.head())
            assert v["parents"] == [old] and v["seq"] == 2
            assert rows(repo.open_version("main"), "lake.t") == [(1,), (2,)]
            assert read_json(tmp_path / "work" / "fdl-work.json")["base"] == repo.head()
    crash_loop("commit", golden, [repo.root, tmp_path / "work"], ["commit", tmp_path / "work", "-m", "two"], check)
    ledger.record(repo.root, repo.head())  # the last run's version two is the one left published


def three_versions(repo, tmp_path):
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    for i in range(3):
        con.execute(f"INSERT INTO lake.t VALUES ({i})")
        fdl("commit", tmp_path / "work", "-m", f"v{i}")
    con.close()
    ids = [repo.head()]
    while repo.version(ids[-1])["parents"]:
        ids.append(repo.version(ids[-1])["parents"][0])
    return ids[::-1]


def test_expire(repo, tmp_path, ledger):
    v0, v1, v2 = three_versions(repo, tmp_path)
    ledger.gone(v0, v1)  # retention keeps one
    cfg = read_json(repo.root / "fdl.json")
    cfg["retention"] = {"days": 0, "keep": 1}
    (repo.root / "fdl.json").write_text(json.dumps(cfg))
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(vids=[v2]), n
        assert rows(repo.open_version("main"), "lake.t") == [(0,), (1,), (2,)]
    crash_loop("expire", [golden], [repo.root], ["expire", repo.root], check)


def test_withdraw(repo, tmp_path, ledger):
    v0, v1, v2 = three_versions(repo, tmp_path)
    ledger.gone(v1, v2)
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(vids=[v0]), n
        assert rows(repo.open_version(v0), "lake.t") == [(0,)]
        if not crashed:
            for v in (v1, v2):
                assert read_json(repo.root / "versions" / v / "expired.json")["reason"] == "withdrawn"
    crash_loop("withdraw", [golden], [repo.root], ["withdraw", repo.root, v1, "--reason", "mistake"], check)


def test_gc(repo, tmp_path, ledger):
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    fdl("commit", tmp_path / "work", "-m", "one")
    for i in range(3):  # files never committed
        con.execute(f"INSERT INTO lake.t VALUES ({10 + i})")
    con.close()
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(), n
        assert rows(repo.open_version("main"), "lake.t") == [(1,)]
    crash_loop("gc", [golden], [repo.root], ["gc", repo.root, "--grace", "0s"], check)


def test_branch(repo, tmp_path, ledger):
    v0, v1, v2 = three_versions(repo, tmp_path)
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(), n
        ref = repo.root / "refs" / "heads" / "dev"
        assert not ref.exists() or ref.read_text().strip() == v1
    crash_loop("branch", [golden], [repo.root], ["branch", repo.root, "dev", v1], check)
    fdl("branch", repo.root, "gone", v0)
    golden2 = tmp_path / "g2"
    shutil.copytree(repo.root, golden2)

    def check_delete(n, crashed):
        verify_ok(repo.root, n)
    crash_loop("branch --delete", [golden2], [repo.root], ["branch", repo.root, "--delete", "gone"], check_delete)
