"""The ledger itself (ledger.py): its end-of-test check still sees a version
that answers otherwise when stock DuckDB is spared a read over files that
did not change (the memo of reads, issue 55). A data file or a catalog
changed after the version was read makes DuckDB read it again, and the
difference is reported; unchanged files are answered from the first read.
`fdl attach`'s answer is kept for a version whose folder, fdl.json and data
files (each still a plain file) did not change: a withdrawn version and a
data file made a symlink run it again, and its refusal is reported."""
import os
import shutil

from conftest import commits, fdl


def two_versions(repo, tmp_path):
    (v1, v2), _ = commits(repo, tmp_path / "w",
                          ("one", ["CREATE TABLE lake.t (k INTEGER, s VARCHAR)", "INSERT INTO lake.t VALUES (1, 'a')"]),
                          ("two", ["INSERT INTO lake.t VALUES (2, 'b')"]))
    files = sorted((repo.root / "data").rglob("*.parquet"), key=lambda f: f.stat().st_mtime_ns)
    assert len(files) == 2, files
    return v1, v2, files


def test_unchanged_files_are_not_read_again(repo, tmp_path, ledger):
    v1, v2, _ = two_versions(repo, tmp_path)
    assert ledger.problems() == []
    assert ledger.unread == 2  # both answered from the reads at publish time
    assert ledger.attach_kept == 2  # and from fdl attach's answers then: nothing it reads changed


def test_a_withdrawn_version_runs_fdl_attach_again(repo, tmp_path, ledger):
    v1, v2, _ = two_versions(repo, tmp_path)
    fdl("withdraw", repo.root, v2, "--reason", "a test", "--force")  # expired.json in its folder, its catalog gone
    ledger.gone(v2)
    assert ledger.problems() == []  # v2 answers exit 7, as a withdrawn version must (a kept answer would not)
    assert ledger.attach_kept == 1  # v1's answer kept; v2's folder changed
    assert "fdl attach exited 7" in ledger._sums(str(repo.root), v2, {})


def test_a_data_file_made_a_symlink_runs_fdl_attach_again(repo, tmp_path, ledger):
    v1, v2, (first, second) = two_versions(repo, tmp_path)
    assert ledger.problems() == [] and ledger.attach_kept == 2
    moved = tmp_path / "elsewhere.parquet"
    os.replace(first, moved)
    os.symlink(moved, first)  # the same bytes, behind a symlink: fdl refuses to read it
    try:
        problems = ledger.problems()
    finally:
        os.remove(first)
        os.replace(moved, first)
    assert sorted(v for v in (v1, v2) if any(v in p and "fdl attach exited" in p for p in problems)) == \
        sorted([v1, v2]), problems
    assert len(problems) == 2 and ledger.attach_kept == 2  # none kept this time


def changed(problem):
    """A problem saying a version's rows changed: the rows' sums differ from
    those recorded, or the rows no longer agree with the catalog's
    statistics (which the ledger checks first, issue 59's follow-up)."""
    return "answers other than it did" in problem or "statistics answer other than the rows" in problem


def test_a_data_file_changed_after_the_read_is_seen(repo, tmp_path, ledger):
    v1, v2, (first, second) = two_versions(repo, tmp_path)
    kept = tmp_path / "kept.parquet"
    shutil.copyfile(first, kept)
    shutil.copyfile(second, first)  # the file of row (1, 'a') now holds (2, 'b'): both versions read it
    try:
        problems = ledger.problems()
    finally:
        shutil.copyfile(kept, first)  # put back: the fixture's own check passes
    assert [v for v in (v1, v2) if any(v in p and changed(p) for p in problems)] == [v1, v2], problems
    assert len(problems) == 2 and ledger.unread == 0


def test_a_catalog_changed_after_the_read_is_seen(repo, tmp_path, ledger):
    v1, v2, _ = two_versions(repo, tmp_path)
    catalog = repo.root / "versions" / v1 / "ducklake.duckdb"
    kept = tmp_path / "kept.duckdb"
    shutil.copyfile(catalog, kept)
    with open(catalog, "r+b") as f:  # one byte of the catalog: fdl attach checks its sha256 first
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 1]))
    try:
        problems = ledger.problems()
    finally:
        shutil.copyfile(kept, catalog)
    assert len(problems) == 1 and v1 in problems[0] and "no longer reads" in problems[0], problems
    assert ledger.problems() == [] and fdl("verify", repo.root).returncode == 0


def test_a_host_is_read_once_over_unchanged_files_and_again_when_one_changes(repo, tmp_path, ledger):
    """Through a plain static host serving the repository's folder
    (host_serves), stock DuckDB reads each version once; a later check over
    the same files is answered from that read (fdl attach still run through
    the host), in this test or another of this process; a file changed
    behind the host is read again through it, and the difference reported."""
    from test_hindex import CountingHost
    v1, v2, (first, second) = two_versions(repo, tmp_path)
    host = CountingHost(repo.root)
    kept = tmp_path / "kept.parquet"
    try:
        ledger.reader(host.url)
        assert ledger.problems() == [] and ledger.unread == 2  # the folder's reads from publish time; the host read
        assert any(r.startswith("/data/") for r in host.requests), host.requests
        seen = len(host.requests)
        assert ledger.problems() == [] and ledger.unread == 2 + 4  # both roots answered from the reads
        assert host.requests[seen:] and not [r for r in host.requests[seen:] if r.startswith("/data/")]
        shutil.copyfile(first, kept)
        shutil.copyfile(second, first)
        seen = len(host.requests)
        problems = ledger.problems()
        shutil.copyfile(kept, first)
        assert sorted(p.split(": version")[0] for p in problems if changed(p)) == \
            sorted([str(repo.root)] * 2 + [host.url] * 2), problems
        assert len(problems) == 4 and ledger.unread == 6
        assert [r for r in host.requests[seen:] if r.startswith("/data/")]  # read through the host again
    finally:
        if kept.exists():
            shutil.copyfile(kept, first)
        host.close()
