"""The writer core on a folder: every step a publisher takes in stock DuckDB,
committed with fdl, must read back through `fdl attach` with exactly the rows
DuckDB returned at that step."""
import subprocess

import pytest

from conftest import FDL, EXT, connect, fdl, fdl_setup, read_json, rows, tables

STEPS = [
    ("create and insert", [
        "CREATE TABLE lake.population (town VARCHAR, year INTEGER, people BIGINT)",
        "INSERT INTO lake.population VALUES ('Aoba', 2024, 1200), ('Midori', 2024, 830), ('Sakura', 2024, 2010)",
    ]),
    ("insert more", ["INSERT INTO lake.population VALUES ('Aoba', 2025, 1230), ('Midori', 2025, 790)"]),
    ("update", ["UPDATE lake.population SET people = people + 1 WHERE town = 'Midori'"]),
    ("delete", ["DELETE FROM lake.population WHERE town = 'Sakura'"]),
    ("add column", [
        "ALTER TABLE lake.population ADD COLUMN note VARCHAR",
        "INSERT INTO lake.population VALUES ('Kawa', 2025, 55, 'new town')",
    ]),
    ("rename column", ["ALTER TABLE lake.population RENAME COLUMN people TO residents"]),
    ("drop column", ["ALTER TABLE lake.population DROP COLUMN note"]),
    ("second table", [
        "CREATE TABLE lake.towns AS SELECT DISTINCT town FROM lake.population",
        "CREATE VIEW lake.recent AS SELECT * FROM lake.population WHERE year = 2025",
    ]),
    ("drop table", ["DROP TABLE lake.towns"]),
]


def snapshot_of(con):
    return {t: rows(con, "lake." + t.split(".", 1)[1]) for t in tables(con)}


@pytest.mark.quick
def test_every_step_reads_back(repo, tmp_path):
    con = repo.checkout(tmp_path / "work")
    history = []
    for name, sqls in STEPS:
        for sql in sqls:
            con.execute(sql)
        expected = snapshot_of(con)
        snap = con.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0]
        fdl("commit", tmp_path / "work", "-m", name)
        history.append((repo.head(), name, expected, snap))

    # version.json: seq, parents, snapshots, the message
    prev = None
    for i, (vid, name, _, snap) in enumerate(history):
        v = repo.version(vid)
        assert v["id"] == vid and v["seq"] == i + 1 and v["message"] == name
        assert v["parents"] == ([prev[0]] if prev else [])
        assert v["ducklake"]["snapshot_id"] == snap
        assert v["ducklake"]["snapshots"][1] == snap
        assert v["ducklake"]["snapshots"][0] == (prev[3] + 1 if prev else 0)
        assert v["ducklake"]["format"] == "1.0"
        assert v["author"] == {"name": "Test", "email": "t@example.org"}
        prev = (vid, name, None, snap)

    # every version, opened by stock DuckDB, returns that step's rows
    for vid, name, expected, _ in history:
        reader = repo.open_version(vid)
        assert snapshot_of(reader) == expected, name
        reader.close()
    # HEAD is the last version
    reader = repo.open_version("main")
    assert snapshot_of(reader) == history[-1][2]


def test_frozen_catalog_stops_at_its_snapshot(repo, tmp_path):
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1), (2)")
    fdl("commit", tmp_path / "work", "-m", "one")
    first = repo.head()
    con.execute("DELETE FROM lake.t WHERE a = 1")
    con.execute("ALTER TABLE lake.t ADD COLUMN b INTEGER")
    fdl("commit", tmp_path / "work", "-m", "two")

    v = repo.version(first)
    n = v["ducklake"]["snapshot_id"]
    raw = connect()
    raw.execute(f"ATTACH '{repo.root}/versions/{first}/ducklake.duckdb' AS f (READ_ONLY)")
    assert raw.execute("SELECT max(snapshot_id) FROM f.ducklake_snapshot").fetchone()[0] == n
    for table in ["ducklake_schema", "ducklake_table", "ducklake_column", "ducklake_data_file",
                  "ducklake_delete_file"]:
        assert raw.execute(f"SELECT count(*) FROM f.{table} WHERE begin_snapshot > {n} "
                           f"OR end_snapshot > {n}").fetchone()[0] == 0, table
    # no inlined data, data_path is the published data folder
    assert raw.execute("SELECT count(*) FROM f.ducklake_inlined_data_tables").fetchone()[0] == 0
    data_path = raw.execute("SELECT value FROM f.ducklake_metadata WHERE key = 'data_path'").fetchone()[0]
    assert data_path == f"{repo.root}/data/"
    # every referenced file is relative and exists under data/
    for path, rel in raw.execute("SELECT path, path_is_relative FROM f.ducklake_data_file").fetchall():
        assert rel and (repo.root / "data" / "main" / "t" / path).exists()
    # the first version still reads as it was
    assert rows(repo.open_version(first), "lake.t") == [(1,), (2,)]
    assert rows(repo.open_version("main"), "lake.t") == [(2, None)]


def test_catalog_storage_is_what_duckdb_reads(repo, tmp_path):
    """version.json's catalog.storage names the storage version stock DuckDB
    finds in the frozen file (it once recorded the empty file's v1.0.0)."""
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    fdl("commit", tmp_path / "w", "-m", "one")
    vid = repo.head()
    doc = repo.version(vid)
    raw = connect()
    raw.execute(f"ATTACH '{repo.root / 'versions' / vid / 'ducklake.duckdb'}' AS f (READ_ONLY)")
    tag = raw.execute("SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'f'").fetchone()[0]
    assert doc["catalog"]["storage"] == "duckdb-" + tag.rstrip("+")


def test_files_json_and_dataset_json(repo, tmp_path):
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER NOT NULL, b VARCHAR)")
    con.execute("INSERT INTO lake.t VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    con.execute("CREATE TABLE lake.empty (x DOUBLE)")
    con.execute("COMMENT ON TABLE lake.t IS 'the t table'")
    fdl("commit", tmp_path / "work", "-m", "one")
    vdir = repo.root / "versions" / repo.head()
    files = read_json(vdir / "files.json")
    assert set(files["tables"]) == {"main.t", "main.empty"}
    assert files["tables"]["main.empty"]["files"] == []
    [f] = files["tables"]["main.t"]["files"]
    assert f["rows"] == 3 and "deletes" not in f
    assert (repo.root / "data" / f["path"]).stat().st_size == f["bytes"]
    assert files["tables"]["main.t"]["renamed_columns"] is False

    ds = read_json(vdir / "dataset.json")
    assert ds["name"] and ds["title"]
    t = next(x for x in ds["tables"] if x["name"] == "t")
    assert t["rows"] == 3 and t["description"] == "the t table"
    assert t["fields"] == [{"name": "a", "type": "int32", "nullable": False},
                           {"name": "b", "type": "varchar", "nullable": True}]

    con.execute("DELETE FROM lake.t WHERE a = 2")
    con.execute("ALTER TABLE lake.t RENAME COLUMN b TO bee")
    fdl("commit", tmp_path / "work", "-m", "two")
    vdir = repo.root / "versions" / repo.head()
    files = read_json(vdir / "files.json")
    [f] = files["tables"]["main.t"]["files"]
    assert f["deletes"]["rows"] == 1
    assert (repo.root / "data" / f["deletes"]["path"]).exists()
    assert files["tables"]["main.t"]["renamed_columns"] is True
    t = next(x for x in read_json(vdir / "dataset.json")["tables"] if x["name"] == "t")
    assert t["rows"] == 2 and [x["name"] for x in t["fields"]] == ["a", "bee"]
    # version.json records sizes and hashes of what it lists
    v = repo.version(repo.head())
    import hashlib
    for key in ["catalog", "dataset", "files"]:
        data = (vdir / v[key]["path"]).read_bytes()
        assert len(data) == v[key]["bytes"]
        assert hashlib.sha256(data).hexdigest() == v[key]["sha256"]


def test_nothing_to_commit(repo, tmp_path):
    # the first version is the scene (the release build's); the commit with nothing new runs FDL_BIN
    con = repo.checkout(tmp_path / "work", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    fdl_setup("commit", tmp_path / "work", "-m", "one")
    before = sorted(p.name for p in (repo.root / "versions").iterdir())
    p = fdl("commit", tmp_path / "work", "-m", "again", check=False)
    assert p.returncode == 8 and "nothing to commit" in p.stderr
    assert sorted(p.name for p in (repo.root / "versions").iterdir()) == before


def test_concurrent_commits_one_wins(repo, tmp_path, ledger):
    # the base version and the two working catalogs are the scene (the
    # release build's); the racing commits and the retry run FDL_BIN
    con = repo.checkout(tmp_path / "base", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    fdl_setup("commit", tmp_path / "base", "-m", "base")
    base = repo.head()
    a = repo.checkout(tmp_path / "a", setup=True)
    b = repo.checkout(tmp_path / "b", setup=True)
    a.execute("INSERT INTO lake.t VALUES (1)")
    b.execute("INSERT INTO lake.t VALUES (2)")
    env = dict(FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="x", PATH="/usr/bin:/bin")
    procs = [subprocess.Popen([FDL, "commit", str(tmp_path / w), "-m", w], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in "ab"]
    results = [(p.wait(), p.stderr.read()) for p in procs]
    codes = sorted(r[0] for r in results)
    assert codes == [0, 4], results
    ledger.published("".join(p.stdout.read() for p in procs))
    loser = "ab"[[r[0] for r in results].index(4)]
    message = results["ab".index(loser)][1]
    assert "moved" in message and base in message and repo.head() in message
    winner_v = repo.version(repo.head())
    assert winner_v["parents"] == [base] and winner_v["seq"] == 2
    # the loser's working catalog still records the old base: nothing lost
    assert read_json(tmp_path / loser / "fdl-work.json")["base"] == base
    expected = [(1,)] if loser == "b" else [(2,)]
    assert rows(repo.open_version("main"), "lake.t") == expected
    # the loser checks out again and publishes on top
    c = repo.checkout(tmp_path / "again")
    c.execute("INSERT INTO lake.t VALUES (3)")
    fdl("commit", tmp_path / "again", "-m", "retry")
    assert repo.version(repo.head())["seq"] == 3


def test_inlined_rows_are_refused_until_flushed(repo, tmp_path):
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("CALL lake.set_option('data_inlining_row_limit', 100)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    p = fdl("commit", tmp_path / "work", "-m", "inlined", check=False)
    assert p.returncode == 5 and "inline" in p.stderr and "ducklake_flush_inlined_data" in p.stderr
    assert not (repo.root / "refs" / "heads" / "main").exists()
    con.execute("CALL ducklake_flush_inlined_data('lake')")
    fdl("commit", tmp_path / "work", "-m", "flushed")
    assert rows(repo.open_version("main"), "lake.t") == [(1,)]


def test_missing_data_file_is_refused(repo, tmp_path):
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    # not committed yet: in the working catalog's own folder, work/<id>/
    assert list((repo.root / "data").rglob("*.parquet")) == []
    [parquet] = list((repo.root / "work").rglob("*.parquet"))
    parquet.unlink()
    p = fdl("commit", tmp_path / "work", "-m", "broken", check=False)
    assert p.returncode == 5 and parquet.name in p.stderr
    assert list((repo.root / "versions").iterdir()) == []


def test_commit_on_a_base_withdrawn_since_checkout_is_refused(repo, tmp_path):
    # the base, the checkout on it and its withdrawal are the scene (the
    # release build's; test_lifecycle's withdrawals run FDL_BIN); the commit runs FDL_BIN
    con = repo.checkout(tmp_path / "w1", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    con.close()
    fdl_setup("commit", tmp_path / "w1", "-m", "one")
    base = repo.head()
    con = repo.checkout(tmp_path / "w2", setup=True)
    con.execute("INSERT INTO lake.t VALUES (2)")
    con.close()
    fdl_setup("withdraw", repo.root, base, "--reason", "published by mistake", "--force")
    p = fdl("commit", tmp_path / "w2", "-m", "two", check=False)
    assert p.returncode == 7, p.stderr
    assert base in p.stderr and "check out again" in p.stderr
    assert repo.head() == base  # nothing published


def test_a_new_data_file_that_is_a_symlink_or_of_another_size_is_refused(repo, tmp_path):
    """The data files a commit adds are each looked at (a folder at a time):
    a symlink is never followed, a size must be the catalog's, and a file
    missing from a second version (one with a base) is caught too. The
    first version is the scene (the release build's); every commit of the
    second runs FDL_BIN."""
    con = repo.checkout(tmp_path / "work", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("CREATE TABLE lake.u (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    fdl_setup("commit", tmp_path / "work", "-m", "one")
    base = repo.head()
    before = set((repo.root / "work").rglob("*.parquet"))
    con.execute("INSERT INTO lake.t VALUES (2)")
    con.execute("INSERT INTO lake.u VALUES (3)")
    new = sorted(set((repo.root / "work").rglob("*.parquet")) - before)
    assert len(new) == 2
    target, saved = new[1], new[1].read_bytes()
    elsewhere = tmp_path / "elsewhere.parquet"
    elsewhere.write_bytes(saved)  # the same bytes: only the symlink gives it away
    target.unlink()
    target.symlink_to(elsewhere)
    p = fdl("commit", tmp_path / "work", "-m", "two", check=False)
    assert p.returncode == 5 and "symlink" in p.stderr and target.name in p.stderr, p.stderr
    target.unlink()
    target.write_bytes(saved[:-1])
    p = fdl("commit", tmp_path / "work", "-m", "two", check=False)
    assert p.returncode == 5 and f"is {len(saved) - 1} bytes; the catalog records {len(saved)}" in p.stderr, p.stderr
    target.unlink()
    p = fdl("commit", tmp_path / "work", "-m", "two", check=False)
    assert p.returncode == 5 and target.name in p.stderr and "nor in the repository's data folder" in p.stderr
    assert repo.head() == base and len(list((repo.root / "versions").iterdir())) == 1
    target.write_bytes(saved)
    fdl("commit", tmp_path / "work", "-m", "two")
    assert sorted(rows(repo.open_version("main"), "lake.t")) == [(1,), (2,)]
    assert rows(repo.open_version("main"), "lake.u") == [(3,)]
