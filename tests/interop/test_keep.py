"""Nothing published and nothing not yet committed is deleted behind a
publisher's back (issue 42): working catalogs are roots for fdl gc, and
DuckLake's own maintenance run in a working catalog, on a folder and on a
bucket, leaves every published version reading what it read."""
import json
import os
import time

import pytest

from conftest import S3Repo, connect, fdl, fdl_setup, read_json, rows

DAY = 86400


def staged_keys(repo):
    """Keys under the repository's work/ folder (records and uncommitted files)."""
    if isinstance(repo, S3Repo):
        return sorted(k.split("/", 2)[2] for k in repo.keys() if k.startswith("datasets/pop/work/"))
    return sorted(str(p.relative_to(repo.root)) for p in (repo.root / "work").rglob("*") if p.is_file())


def test_uncommitted_files_survive_gc_whatever_their_age(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)  # the scene: v1 and a working catalog on it
    con.execute("CREATE TABLE lake.t AS SELECT range AS i FROM range(10)")
    fdl_setup("commit", tmp_path / "w", "-m", "v1")
    v1 = repo.head()
    # a month of work, not committed yet, written 40 days ago
    con.execute("INSERT INTO lake.t SELECT range + 100 FROM range(5)")
    con.execute("DELETE FROM lake.t WHERE i = 3")
    [record] = (repo.root / "work").glob("*.json")
    uncommitted = [p for p in (repo.root / "work" / record.stem).rglob("*.parquet")]
    assert len(uncommitted) == 2  # the new rows and the delete file
    old = time.time() - 40 * DAY
    for p in uncommitted:
        os.utime(p, (old, old))
    rep = json.loads(fdl("gc", repo.root, "--dry-run", "--json").stdout)
    assert rep["deleted"] == []
    [w] = rep["working_catalogs"]
    assert w["id"] == record.stem and w["state"] == "kept" and w["branch"] == "main"
    assert w["uncommitted_files"] == sorted(str(p.relative_to(repo.root)) for p in uncommitted)
    assert w["where"].endswith(str(tmp_path / "w"))
    text = fdl("gc", repo.root, "--dry-run").stdout
    assert f"working catalog {record.stem}" in text and "2 uncommitted files kept" in text
    for grace in ("14d", "0s"):
        fdl("gc", repo.root, "--grace", grace)
        assert all(p.exists() for p in uncommitted)
    fdl("commit", tmp_path / "w", "-m", "a month of work")
    got = repo.open_version("main").execute("SELECT count(*), sum(i) FROM lake.t").fetchall()
    assert got == [(14, 45 - 3 + sum(range(100, 105)))]
    assert repo.open_version(v1).execute("SELECT count(*) FROM lake.t").fetchall() == [(10,)]
    assert fdl("verify", repo.root, "--deep", "--all").returncode == 0
    # published: in the data folder, and out of the working catalog's own folder
    assert not any(p.exists() for p in uncommitted)
    assert not list((repo.root / "work" / record.stem).rglob("*.parquet"))


def test_a_lease_ends_only_when_said_and_is_reported_before(repo, tmp_path):
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t (i INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    [record] = (repo.root / "work").glob("*.json")
    rec = read_json(record)
    assert rec["lease_days"] == 90 and rec["base"] is None and rec["catalog"] == "sqlite"
    # 80 days without a command on it: still kept, reported as ending soon
    def age(days):
        r = read_json(record)
        r["used_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days * DAY))
        record.write_text(json.dumps(r))
    age(80)
    [w] = json.loads(fdl("gc", repo.root, "--grace", "0s", "--json").stdout)["working_catalogs"]
    assert w["state"] == "expiring" and len(w["uncommitted_files"]) == 1
    assert "soon" in fdl("gc", repo.root, "--dry-run").stdout
    # a command on it renews it
    fdl("describe", tmp_path / "w")
    [w] = json.loads(fdl("gc", repo.root, "--dry-run", "--json").stdout)["working_catalogs"]
    assert w["state"] == "kept"
    # past the lease: the dry run says what goes, gc removes it, the commit says why it cannot
    age(91)
    [w] = json.loads(fdl("gc", repo.root, "--dry-run", "--json").stdout)["working_catalogs"]
    assert w["state"] == "ended" and len(w["uncommitted_files"]) == 1 and record.exists()
    fdl("gc", repo.root)
    assert not record.exists() and staged_keys(repo) == []
    p = fdl("commit", tmp_path / "w", "-m", "too late", check=False)
    assert p.returncode == 3 and "abandoned" in p.stderr and "lease ended" in p.stderr
    assert not (repo.root / "refs" / "heads" / "main").exists()


def test_a_working_folder_inside_the_data_folder_is_refused(repo, tmp_path):
    for inside in (repo.root / "data" / "work", repo.root / "work" / "mine"):
        p = fdl("checkout", repo.root, inside, check=False)
        assert p.returncode == 5 and "inside the repository's" in p.stderr, p.stderr
        assert not inside.exists()
    (tmp_path / "link").symlink_to(repo.root / "data")
    p = fdl("checkout", repo.root, tmp_path / "link" / "w", check=False)
    assert p.returncode == 5 and "inside the repository's data folder" in p.stderr


MAINTENANCE = [
    "CALL ducklake_merge_adjacent_files('lake')",
    "CALL ducklake_rewrite_data_files('lake', 't', delete_threshold => 0)",
    "CALL ducklake_expire_snapshots('lake', older_than => now())",
    "CALL ducklake_cleanup_old_files('lake', cleanup_all => true)",
    "CALL ducklake_delete_orphaned_files('lake', cleanup_all => true)",
    # CHECKPOINT with DuckLake's expiry options: expire, merge, rewrite, clean up, orphans
    "CALL lake.set_option('expire_older_than', '1 millisecond')",
    "CALL lake.set_option('delete_older_than', '1 millisecond')",
    "CALL lake.set_option('rewrite_delete_threshold', 0)",
    "INSERT INTO lake.t VALUES (7000)",
    "DELETE FROM lake.t WHERE i = 7000",
    "CHECKPOINT lake",
]


def maintenance_keeps_every_version(repo, tmp_path, ledger):
    """Versions on two branches and a teammate's uncommitted work, then every
    clean-up DuckLake has, run in a working catalog of main, then a commit.
    The ledger took each version's checksums with stock DuckDB when it was
    published, and compares them after each step. The versions before the
    clean-up are the scene (the release build publishes them: setup)."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT range AS i FROM range(100)")
    setup(repo, "commit", tmp_path / "w", "-m", "v1")
    for k in range(3):  # small files DuckLake's merge would join
        con.execute(f"INSERT INTO lake.t SELECT range + {1000 * (k + 1)} FROM range(10)")
        setup(repo, "commit", tmp_path / "w", "-m", f"v{k + 2}")
    # another branch, with a schema and a table main does not have
    setup(repo, "branch", repo.root, "side", "main:2")
    side = repo.checkout(tmp_path / "s", "--ref", "side", setup=True)
    side.execute("CREATE SCHEMA lake.side")
    side.execute("CREATE TABLE lake.side.s AS SELECT 'x' || range AS v FROM range(5)")
    setup(repo, "commit", tmp_path / "s", "-m", "side work")
    # a teammate's work on side, not committed yet
    side.execute("INSERT INTO lake.side.s VALUES ('teammate')")
    teammate = [k for k in staged_keys(repo) if k.endswith(".parquet")]
    assert len(teammate) == 1
    con.execute("DELETE FROM lake.t WHERE i % 7 = 0")
    for sql in MAINTENANCE:
        con.execute(sql)
    run(repo, "commit", tmp_path / "w", "-m", "after DuckLake's clean-up")
    assert len(ledger.entries) == 6 and not ledger.problems()
    assert run(repo, "verify", repo.root, "--deep", "--all").returncode == 0
    # the teammate's uncommitted file is still there, and commits
    assert set(teammate) <= set(staged_keys(repo))
    run(repo, "commit", tmp_path / "s", "-m", "teammate")
    got = repo.open_version("side").execute("SELECT count(*) FROM lake.side.s").fetchall()
    assert got == [(6,)]
    # the working catalog of main, still attached, reads its rows and goes on
    want = rows(repo.open_version("main"), "lake.t")
    assert con.execute("SELECT * FROM lake.t ORDER BY ALL").fetchall() == want
    for sql in MAINTENANCE:
        con.execute(sql)
    con.execute("INSERT INTO lake.t VALUES (-1)")
    run(repo, "commit", tmp_path / "w", "-m", "and on")
    con.close()
    side.close()
    assert len(ledger.entries) == 8 and not ledger.problems()
    assert run(repo, "verify", repo.root, "--deep", "--all").returncode == 0


def run(repo, *args, **kw):
    return repo.fdl(*args, **kw) if isinstance(repo, S3Repo) else fdl(*args, **kw)


def setup(repo, *args, **kw):
    """run() with the release build, for a test's scene (fdl_setup)."""
    return repo.setup(*args, **kw) if isinstance(repo, S3Repo) else fdl_setup(*args, **kw)


def test_duckdb_maintenance_in_a_working_catalog_on_a_folder(repo, tmp_path, ledger):
    maintenance_keeps_every_version(repo, tmp_path, ledger)
    # nothing was deleted behind the publisher's back, and nothing is left to
    # collect but what the clean-up let go of
    rep = json.loads(fdl("gc", repo.root, "--grace", "0s", "--json").stdout)
    assert all(k.startswith("data/main/t/ducklake-") for k in rep["deleted"])
    assert fdl("verify", repo.root, "--deep", "--all").returncode == 0


def test_duckdb_maintenance_in_a_working_catalog_on_a_bucket(s3repo, tmp_path, ledger):
    maintenance_keeps_every_version(s3repo, tmp_path, ledger)
    assert s3repo.fdl("verify", s3repo.root, "--deep", "--all").returncode == 0


def test_a_working_catalog_from_before_is_never_silent(repo, tmp_path, ledger):
    """A working catalog whose DuckLake deleted a published file (one made
    before fdl kept DuckLake off them): the next commit names the file and
    the version that needs it, and publishes nothing. v1 and the working
    catalog are the scene (the release build's); the commit after is the step."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT range AS i FROM range(10)")
    fdl_setup("commit", tmp_path / "w", "-m", "v1")
    v1 = repo.head()
    [published] = (repo.root / "data").rglob("*.parquet")
    con.execute("DELETE FROM lake.t WHERE i < 3")
    con.execute("CALL ducklake_rewrite_data_files('lake', 't', delete_threshold => 0)")
    con.execute("CALL ducklake_expire_snapshots('lake', older_than => now())")
    published.unlink()  # what ducklake_cleanup_old_files did before
    ledger.waive(v1, "the test deletes its data file, as DuckLake's clean-up did before fdl kept it off")
    p = fdl("commit", tmp_path / "w", "-m", "v2", check=False)
    assert p.returncode == 5 and published.name in p.stderr and v1 in p.stderr, p.stderr
    assert "ducklake_cleanup_old_files" in p.stderr and "Nothing was published" in p.stderr
    assert repo.head() == v1


def scheduled(con):
    """What the working catalog attached as `lake` has scheduled for DuckLake's clean-up."""
    return con.execute("SELECT path, path_is_relative FROM __ducklake_metadata_lake."
                       "ducklake_files_scheduled_for_deletion").fetchall()


def published_delete_file_survives(repo, tmp_path, keys):
    """A version's delete file, replaced in a working catalog by a later
    delete from the same data file, is scheduled by DuckLake for deletion:
    the trigger keeps it out, and ducklake_cleanup_old_files leaves it."""
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t AS SELECT range AS i FROM range(100)")
    run(repo, "commit", tmp_path / "w", "-m", "v1")
    con.execute("DELETE FROM lake.t WHERE i < 10")
    run(repo, "commit", tmp_path / "w", "-m", "v2: a delete file")
    [d1] = [k for k in keys() if k.startswith("data/") and k.endswith("-delete.parquet")]
    con.execute("DELETE FROM lake.t WHERE i < 20")  # the same data file: DuckLake replaces d1
    assert scheduled(con) == []  # d1 is published: DuckLake's row for it was dropped
    con.execute("CALL ducklake_cleanup_old_files('lake', cleanup_all => true)")
    con.execute("CALL ducklake_delete_orphaned_files('lake', cleanup_all => true)")
    assert d1 in keys()
    run(repo, "commit", tmp_path / "w", "-m", "v3: another delete file")
    assert d1 in keys() and len([k for k in keys() if k.endswith("-delete.parquet")]) == 2
    # a delete file the working catalog wrote and never published is its own to clean up
    con.execute("DELETE FROM lake.t WHERE i < 30")
    con.execute("DELETE FROM lake.t WHERE i < 40")
    assert [r for r in scheduled(con) if r[1]] and not [r for r in scheduled(con) if not r[1]]
    con.execute("CALL ducklake_cleanup_old_files('lake', cleanup_all => true)")
    run(repo, "commit", tmp_path / "w", "-m", "v4")
    con.close()
    assert repo.open_version("main").execute("SELECT count(*) FROM lake.t").fetchall() == [(60,)]
    assert run(repo, "verify", repo.root, "--deep", "--all").returncode == 0
    return d1


def test_a_published_delete_file_survives_a_later_delete_on_a_folder(repo, tmp_path, ledger):
    published_delete_file_survives(repo, tmp_path, lambda: staged_keys_all(repo))
    assert not ledger.problems() and len(ledger.entries) == 4


def test_a_published_delete_file_survives_a_later_delete_on_a_bucket(s3repo, tmp_path, ledger):
    published_delete_file_survives(s3repo, tmp_path, lambda: staged_keys_all(s3repo))
    assert not ledger.problems() and len(ledger.entries) == 4


def staged_keys_all(repo):
    """Every key of the repository, relative to its root."""
    if isinstance(repo, S3Repo):
        return sorted(k.split("/", 2)[2] for k in repo.keys())
    return sorted(str(p.relative_to(repo.root)) for p in repo.root.rglob("*") if p.is_file())


def test_a_rebased_working_catalog_keeps_its_folder_its_record_and_its_protection(repo, tmp_path, ledger):
    """fdl rebase builds a new catalog from the branch's new tip: it keeps
    WORK's id (its folder work/<id>/ and the repository's record, renewed
    with the new base), its new files are published by the next commit, and
    the tip's files, a delete file among them, are out of DuckLake's reach.
    The scene (v1..v3 by a, b's checkout) is the release build's; b's
    refused commit, the rebase and what follows run FDL_BIN."""
    a = repo.checkout(tmp_path / "a", setup=True)
    a.execute("CREATE TABLE lake.t AS SELECT range AS i FROM range(100)")
    fdl_setup("commit", tmp_path / "a", "-m", "v1")
    a.execute("DELETE FROM lake.t WHERE i < 10")
    fdl_setup("commit", tmp_path / "a", "-m", "v2: a delete file")
    attach_b = fdl_setup("checkout", repo.root, tmp_path / "b").stdout
    b = connect()
    b.execute(attach_b)
    wid = read_json(tmp_path / "b" / "fdl-work.json")["id"]
    record = repo.root / "work" / f"{wid}.json"
    # b deletes from the same data file (replacing v2's delete file) and adds rows
    b.execute("DELETE FROM lake.t WHERE i < 20")
    b.execute("INSERT INTO lake.t SELECT range + 1000 FROM range(5)")
    b.close()
    own = sorted((repo.root / "work" / wid).rglob("*.parquet"))
    assert len(own) == 2
    # a publishes first
    a.execute("INSERT INTO lake.t VALUES (-1)")
    fdl_setup("commit", tmp_path / "a", "-m", "v3")
    v3 = repo.head()
    p = fdl("commit", tmp_path / "b", "-m", "b", check=False)
    assert p.returncode == 4 and "fdl rebase" in p.stderr
    fdl("rebase", tmp_path / "b")
    assert read_json(tmp_path / "b" / "fdl-work.json")["id"] == wid
    assert read_json(record)["base"] == v3
    # the delete file written again replaced b's own: nothing is kept twice
    now = sorted((repo.root / "work" / wid).rglob("*.parquet"))
    assert len(now) == 2 and [p for p in own if p in now] == [p for p in own if "-delete" not in p.name]
    # DuckLake's whole clean-up in the rebased catalog, through the ATTACH
    # checkout printed: every published file stays
    published = sorted((repo.root / "data").rglob("*.parquet"))
    b = connect()
    b.execute(attach_b)
    want = [(86, sum(range(20, 100)) + sum(range(1000, 1005)) - 1)]
    assert b.execute("SELECT count(*), sum(i) FROM lake.t").fetchall() == want  # reads every file
    for sql in MAINTENANCE[:5]:
        b.execute(sql)
    assert all(p.exists() for p in published)
    assert b.execute("SELECT count(*), sum(i) FROM lake.t").fetchall() == want
    b.close()
    fdl("commit", tmp_path / "b", "-m", "b, rebased")
    assert read_json(record)["base"] == repo.head()
    assert not list((repo.root / "work" / wid).rglob("*.parquet"))  # published, and no copy kept
    got = repo.open_version("main").execute("SELECT count(*), min(i), max(i) FROM lake.t").fetchall()
    assert got == [(86, -1, 1004)]
    assert all(p.exists() for p in published)
    assert fdl("verify", repo.root, "--deep", "--all").returncode == 0
    assert not ledger.problems() and len(ledger.entries) == 4
