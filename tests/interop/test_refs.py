"""Refs that cannot lie (issue 43): a branch and a tag never share a name, no
ref is created on an expired or withdrawn version, and a tag racing an expiry
never ends on an expired version (the race forced with a pause point of the
sanitizer build, which `make interop` runs, not timing)."""
import json
import os
import subprocess
import time

import pytest

from conftest import EXT, FDL, fdl, fdl_setup, rows
from test_lifecycle import history, set_retention


@pytest.mark.quick
def test_a_branch_and_a_tag_never_share_a_name(repo, tmp_path):
    con, (v1, v2, v3) = history(repo, tmp_path)
    fdl_setup("tag", repo.root, "t5", v2)  # the scene (the release build's), as history is
    for args in (["branch", repo.root, "t5", "main:2"], ["branch", repo.root, "refs/heads/t5", v1]):
        p = fdl(*args, check=False)
        assert p.returncode == 9, p.stderr
        assert "a tag t5 exists (refs/tags/t5, version " + v2 in p.stderr
    assert not (repo.root / "refs/heads/t5").exists()
    # a working catalog on a new branch named like the tag (--ref of a tag
    # is refused before: it names no branch, issue 36)
    for extra in (["--new-branch", "t5"], ["--orphan", "t5"]):
        p = fdl("checkout", repo.root, tmp_path / "w2", *extra, check=False)
        assert p.returncode == 9 and "refs/tags/t5" in p.stderr
        assert not (tmp_path / "w2" / "ducklake.sqlite").exists()
    p = fdl("checkout", repo.root, tmp_path / "w2", "--ref", "t5", check=False)
    assert p.returncode == 5 and "t5 is a tag" in p.stderr
    assert not (tmp_path / "w2" / "ducklake.sqlite").exists()
    # the other way: a tag named like a branch
    fdl_setup("branch", repo.root, "dev", v1)
    p = fdl("tag", repo.root, "dev", v3, check=False)
    assert p.returncode == 9 and "a branch dev exists (refs/heads/dev, version " + v1 in p.stderr
    assert not (repo.root / "refs/tags/dev").exists()
    # a tag that takes a new branch's name between its checkout and its first commit
    w3 = repo.checkout(tmp_path / "w3", "--orphan", "feature", setup=True)
    w3.execute("CREATE TABLE lake.f (x INTEGER)")
    fdl_setup("tag", repo.root, "feature", v1)
    before = sorted(os.listdir(repo.root / "versions"))
    p = fdl("commit", tmp_path / "w3", "-m", "first on feature", check=False)
    assert p.returncode == 9 and "a tag feature exists" in p.stderr
    assert not (repo.root / "refs/heads/feature").exists()
    assert sorted(os.listdir(repo.root / "versions")) == before  # nothing written
    # the tag still reads as the version it names
    assert rows(repo.open_version("t5"), "lake.t") == [(1,), (2,)]
    assert fdl("verify", repo.root, "--all").returncode == 0


def test_a_ref_is_never_the_folder_of_another(repo, tmp_path):
    """Issue 53.9: `fdl branch R main/geo main` beside a branch main failed
    with an I/O error (exit 6, "cannot create the lock .../main/geo.lock:
    Not a directory"). It is a name conflict: refused, naming the ref, exit
    9 as a name a tag holds, either way round, for branches and tags, before
    anything is written."""
    con, (v1, v2) = history(repo, tmp_path, n=2)
    fdl_setup("branch", repo.root, "dev/x", v1)  # the scene; the refused refs and those beside run FDL_BIN
    fdl_setup("tag", repo.root, "v2025", v1)
    before = {str(p): p.stat().st_mtime_ns for p in repo.root.rglob("*")}
    for args, taken in ((["branch", repo.root, "main/geo", "main"], "branch main exists (refs/heads/main, version " + v2),
                        (["branch", repo.root, "main/geo/x", v1, "--force"], "branch main exists (refs/heads/main"),
                        (["branch", repo.root, "dev", v1], "branch dev/x exists (refs/heads/dev/x, version " + v1),
                        (["tag", repo.root, "v2025/q1", v1], "tag v2025 exists (refs/tags/v2025, version " + v1),
                        (["checkout", repo.root, tmp_path / "w2", "--new-branch", "dev"], "refs/heads/dev/x"),
                        (["checkout", repo.root, tmp_path / "w2", "--orphan", "main/geo"], "refs/heads/main,")):
        p = fdl(*args, check=False)
        assert p.returncode == 9 and taken in p.stderr and "pick another name" in p.stderr, (args, p.stderr)
    assert {str(p): p.stat().st_mtime_ns for p in repo.root.rglob("*")} == before
    assert not (tmp_path / "w2").exists()
    # a name beside them, not inside, is free
    fdl("branch", repo.root, "main-geo", "main")
    fdl("tag", repo.root, "v2025-q1", v1)


def test_no_ref_on_an_expired_or_withdrawn_version(repo, tmp_path):
    con, (v1, v2, v3) = history(repo, tmp_path)
    set_retention(repo, 0, 1)
    fdl_setup("expire", repo.root)  # the scene (test_lifecycle's expiries run FDL_BIN)
    assert (repo.root / "versions" / v1 / "expired.json").exists()
    for kind in ("tag", "branch"):
        p = fdl(kind, repo.root, "old", v1, check=False)
        assert p.returncode == 7, p.stderr
        assert f"{kind} old not created: version {v1} left retention" in p.stderr
        assert not (repo.root / "refs" / ("tags" if kind == "tag" else "heads") / "old").exists()
    fdl_setup("withdraw", repo.root, v3, "--reason", "wrong numbers", "--force")  # main's tip: --force; the scene
    for kind in ("tag", "branch"):
        p = fdl(kind, repo.root, "bad", v3, check=False)
        assert p.returncode == 7 and f"version {v3} was withdrawn" in p.stderr, p.stderr


def pause_env(tmp_path, point):
    d = tmp_path / "pause"
    d.mkdir(exist_ok=True)
    return d, {"FDL_PAUSE_AT": point, "FDL_PAUSE_DIR": str(d)}


def start(args, env):
    e = dict(os.environ, FDL_EXTENSION_DIR=EXT, **env)
    return subprocess.Popen([FDL, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)


def wait_for(path, proc):
    """Until `path` exists (the paused process reached its point); the
    deadline is a safety net against a hang, nothing is timed."""
    deadline = time.monotonic() + 120
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the pause point was never reached"
        time.sleep(0.01)


def test_a_tag_racing_an_expiry_never_names_an_expired_version(repo, tmp_path, ledger):
    con, (v1, v2, v3) = history(repo, tmp_path)
    ledger.gone(v1, v2)  # the expiry the test starts itself
    set_retention(repo, 0, 1)  # v1 and v2 are due
    d, env = pause_env(tmp_path, "expire-checked")
    exp = start(["expire", repo.root, "--json"], env)
    wait_for(d / "expire-checked.reached", exp)
    # the expiry has read the refs and is about to write: a tag on v1 now
    # cannot land (the refs lock is held), and says who holds it
    p = fdl("tag", repo.root, "keep", v1, check=False, env={"FDL_LOCK_WAIT_MS": "0"})
    assert p.returncode == 4 and "fdl expire" in p.stderr and "refs.lock" in p.stderr, p.stderr
    assert not (repo.root / "refs/tags/keep").exists()
    # one that waits for the lock lands after the expiry, on an expired version: refused
    tag = start(["tag", repo.root, "keep", v1], {"FDL_LOCK_WAIT_MS": "600000"})
    (d / "expire-checked.go").touch()
    out, errs = exp.communicate(timeout=300)
    assert exp.returncode == 0, errs
    assert sorted(e["id"] for e in json.loads(out)["expired"]) == sorted([v1, v2])
    tout, terr = tag.communicate(timeout=300)
    assert tag.returncode == 7 and f"tag keep not created: version {v1} left retention" in terr, terr
    assert not (repo.root / "refs/tags/keep").exists()
    assert not (repo.root / "refs.lock").exists()
    assert fdl("verify", repo.root, "--all").returncode == 0


def test_a_tag_before_the_expiry_reads_the_refs_protects_its_version(repo, tmp_path, ledger):
    """The tag lands while the expiry lists versions, before it takes the refs
    lock: the refs it reads under the lock hold the tag."""
    con, (v1, v2, v3) = history(repo, tmp_path)
    ledger.gone(v2)  # the expiry the test starts itself
    set_retention(repo, 0, 1)
    d, env = pause_env(tmp_path, "expire-listed")
    exp = start(["expire", repo.root, "--json"], env)
    wait_for(d / "expire-listed.reached", exp)
    fdl("tag", repo.root, "keep", v1)
    (d / "expire-listed.go").touch()
    out, errs = exp.communicate(timeout=300)
    assert exp.returncode == 0, errs
    assert [e["id"] for e in json.loads(out)["expired"]] == [v2]
    assert not (repo.root / "versions" / v1 / "expired.json").exists()
    assert rows(repo.open_version("keep"), "lake.t") == [(1,)]


def test_refs_on_a_bucket(s3repo, tmp_path):
    """The same rules on S3, where the refs lock is an object created only if
    absent: a holder that was killed is broken by the next one on this host,
    a live one is reported."""
    r = s3repo
    # the version and the refs each refusal meets are the scene: the release build's
    con = r.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS i")
    con.close()
    v1 = r.setup("commit", tmp_path / "w", "-m", "one", "-q").stdout.strip()
    r.setup("tag", r.root, "t5", v1)
    p = r.fdl("branch", r.root, "t5", check=False)
    assert p.returncode == 9 and "refs/tags/t5" in p.stderr
    # a bucket has no folders, but a ref is never another's folder there either
    p = r.fdl("branch", r.root, "main/geo", check=False)
    assert p.returncode == 9 and "refs/heads/main" in p.stderr and "folder" in p.stderr, p.stderr
    r.setup("branch", r.root, "dev/x")
    p = r.fdl("branch", r.root, "dev", check=False)
    assert p.returncode == 9 and "refs/heads/dev/x" in p.stderr, p.stderr
    assert not any(k.endswith(("refs/heads/main/geo", "refs/heads/dev")) for k in r.keys())
    lock = "datasets/pop/refs.lock"
    for n in range(1, 10):  # killed at each write until one leaves the lock behind
        p = r.fdl("tag", r.root, "t6", v1, check=False, env={"FDL_CRASH_AT": str(n)})
        assert p.returncode != 0 and "crash point" in p.stderr, p.stderr
        if lock in r.keys():
            break
    assert lock in r.keys()
    r.fdl("tag", r.root, "t6", v1)  # its holder is gone: broken
    assert lock not in r.keys() and r.get("datasets/pop/refs/tags/t6").decode().strip() == v1
    # a live holder: an expiry paused holding the lock
    d, env = pause_env(tmp_path, "expire-checked")
    cfg = json.loads(r.get("datasets/pop/fdl.json"))
    cfg["retention"] = {"days": 0, "keep": 1}
    r.server.client().put_object(Bucket=r.bucket, Key="datasets/pop/fdl.json", Body=json.dumps(cfg).encode())
    exp = start(["expire", r.root], dict(r.env, FDL_CACHE_DIR=str(tmp_path / "fresh-cache"), **env))
    wait_for(d / "expire-checked.reached", exp)
    p = r.fdl("tag", r.root, "t7", v1, check=False, env={"FDL_LOCK_WAIT_MS": "0"})
    assert p.returncode == 4 and "fdl expire" in p.stderr and lock in p.stderr, p.stderr
    (d / "expire-checked.go").touch()
    assert exp.wait(timeout=300) == 0
    assert lock not in r.keys()
    r.fdl("tag", r.root, "t7", v1)
