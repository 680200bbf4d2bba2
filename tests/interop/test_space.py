"""A full disk is reported as one (exit 6, "no space left", the place),
never as DuckDB's "disk I/O error"; nothing is published, and once there
is room again the same commit goes through. A small tmpfs is the full
disk (the tests run as root, as make test and CI do)."""
import os
import subprocess

import pytest

from conftest import fdl, rows


@pytest.fixture
def full_tmp(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.fail(f"this test needs to mount a tmpfs (root): {p.stderr}")
    try:
        filler = mnt / "filler"
        with open(filler, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
            except OSError:
                pass
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_full_tmpdir_is_exit_6_with_the_place(repo, tmp_path, full_tmp):
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(1000)")
    con.close()
    p = fdl("commit", tmp_path / "w", "-m", "no room", check=False, env={"TMPDIR": str(full_tmp)})
    assert p.returncode == 6, (p.returncode, p.stderr)
    assert "no space left" in p.stderr.lower() and str(full_tmp) in p.stderr, p.stderr
    assert list((repo.root / "versions").iterdir()) == []
    (full_tmp / "filler").unlink()
    fdl("commit", tmp_path / "w", "-m", "room again", env={"TMPDIR": str(full_tmp)})
    assert len(rows(repo.open_version("main"), "lake.t")) == 1000
    assert not [p for p in full_tmp.iterdir() if p.name.startswith("fdl-")]  # no temp folder left


def test_the_temp_folders_of_a_killed_commit_are_swept(repo, tmp_path):
    """A commit killed mid-way (kill -9: no clean-up) leaves its
    fdl-commit-* folder; the next commit removes it, and leaves the folders
    of live processes alone."""
    tmp = tmp_path / "t"
    tmp.mkdir()
    dead = subprocess.Popen(["sleep", "0"])
    dead.wait()
    stale = tmp / f"fdl-commit-{dead.pid}-1-abcdef"
    stale.mkdir()
    (stale / "frozen.duckdb").write_bytes(b"x" * 100)
    live = tmp / f"fdl-commit-{os.getpid()}-1-ghijkl"  # pid alive, start time other: also dead
    live.mkdir()
    mine = tmp / f"fdl-commit-1-{open('/proc/1/stat').read().rsplit(')', 1)[1].split()[19]}-mnopqr"
    mine.mkdir()  # pid 1 with its real start time: alive, kept
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    fdl("commit", tmp_path / "w", "-m", "sweeps", env={"TMPDIR": str(tmp)})
    assert not stale.exists() and not live.exists() and mine.exists()
