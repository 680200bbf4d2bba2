"""One reading of a table without DuckLake (docs/format.md, files.json's
`columns`, `schema_changed` and `unreadable`): what fdl export writes into
one Parquet file equals what stock DuckDB returns through DuckLake, for
columns added with a default, dropped and re-added under the same name,
renamed, retyped, deleted rows and hive-style partition folders; what no
plain reader can read right is refused with the reason. The page's half of
the same reading is tested in test_web.py."""
from conftest import connect, fdl, read_json


def through_ducklake(repo, table, ref="main"):
    con = connect()
    con.execute(fdl("attach", repo.root, ref).stdout)
    con.execute("SET TimeZone = 'UTC'")
    cols = con.execute(f"DESCRIBE lake.{table}").fetchall()
    return [c[:2] for c in cols], con.execute(f"SELECT * FROM lake.{table} ORDER BY ALL").fetchall()


def exported(path):
    con = connect()
    con.execute("SET TimeZone = 'UTC'")
    cols = con.execute(f"DESCRIBE SELECT * FROM '{path}'").fetchall()
    return [c[:2] for c in cols], con.execute(f"SELECT * FROM '{path}' ORDER BY ALL").fetchall()


def files_entry(repo, table):
    return read_json(repo.root / "versions" / repo.head() / "files.json")["tables"][table]


def test_export_reads_defaults_and_readded_columns_as_ducklake(repo, tmp_path):
    work = tmp_path / "w"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t (i INTEGER, j INTEGER, f FLOAT)")
    con.execute("INSERT INTO lake.t VALUES (0, 0, 0.1), (1, 10, 1.1), (2, 20, 2.5)")
    fdl("commit", work, "-m", "first")
    con.execute("ALTER TABLE lake.t ADD COLUMN k INTEGER DEFAULT 42")
    con.execute("ALTER TABLE lake.t DROP COLUMN j")
    con.execute("ALTER TABLE lake.t ADD COLUMN j VARCHAR DEFAULT 'dflt'")
    con.execute("ALTER TABLE lake.t ADD COLUMN d DECIMAL(10,3) DEFAULT 1.5")
    con.execute("ALTER TABLE lake.t ALTER COLUMN f TYPE DOUBLE")
    con.execute("ALTER TABLE lake.t RENAME COLUMN i TO id")
    con.execute("INSERT INTO lake.t (id, f) VALUES (3, 3.5)")
    con.execute("ALTER TABLE lake.t ALTER COLUMN k SET DEFAULT 7")
    con.execute("INSERT INTO lake.t (id, f) VALUES (4, 4.5)")
    con.execute("DELETE FROM lake.t WHERE id = 1")
    fdl("commit", work, "-m", "defaults, a re-added column, a rename, a retype, a delete")
    con.close()

    cols, rows = through_ducklake(repo, "t")
    # what DuckLake says: the old rows have k = 42 and the new j's default, never the dropped j
    assert [(r[0], r[2], r[3]) for r in rows] == [(0, 42, "dflt"), (2, 42, "dflt"), (3, 42, "dflt"), (4, 7, "dflt")]

    entry = files_entry(repo, "main.t")
    assert entry["schema_changed"] is True and "unreadable" not in entry
    assert [(c["name"], c["type"], c.get("initial_default")) for c in entry["columns"]] == [
        ("id", "INTEGER", None), ("f", "DOUBLE", None), ("k", "INTEGER", "42"), ("j", "VARCHAR", "dflt"),
        ("d", "DECIMAL(10,3)", "1.500")]
    assert len({c["field_id"] for c in entry["columns"]}) == 5

    # into one file: the rows DuckLake returns, with its column names and types
    fdl("export", repo.root, "t", "--to", tmp_path / "t.parquet")
    assert exported(tmp_path / "t.parquet") == (cols, rows)
    # the data files as published are not the table: refused, with the reason
    p = fdl("export", repo.root, "t", "--to", tmp_path / "folder", check=False)
    assert p.returncode == 5 and "deleted" in p.stderr
    # and the earlier version, exported the same way, is what DuckLake says it was
    fdl("export", f"{repo.root}@main:1", "t", "--to", tmp_path / "t1.parquet")
    assert exported(tmp_path / "t1.parquet") == through_ducklake(repo, "t", "main:1")
    assert files_entry(repo, "main.t")["columns"][0]["field_id"] == 1


def test_export_ignores_hive_folders_and_refuses_what_it_cannot_read(repo, tmp_path):
    work = tmp_path / "w"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.h (ts TIMESTAMP, year INTEGER, v INTEGER)")
    con.execute("ALTER TABLE lake.h SET PARTITIONED BY (year(ts))")
    con.execute("INSERT INTO lake.h VALUES (TIMESTAMP '2024-05-01 10:00:00', 1999, 1), "
                "(TIMESTAMP '2023-01-01 00:00:00', NULL, 2)")
    con.execute("CREATE TABLE lake.p (k INTEGER, region VARCHAR)")
    con.execute("ALTER TABLE lake.p SET PARTITIONED BY (region)")
    con.execute("INSERT INTO lake.p VALUES (1, 'NULL'), (2, 'north'), (3, NULL)")
    con.execute("CREATE TABLE lake.s (i INTEGER, st STRUCT(a INTEGER, b VARCHAR))")
    con.execute("INSERT INTO lake.s VALUES (1, {'a': 1, 'b': 'x'})")
    fdl("commit", work, "-m", "partitioned")
    con.execute("ALTER TABLE lake.s ADD COLUMN st.c INTEGER")
    con.execute("INSERT INTO lake.s VALUES (2, {'a': 2, 'b': 'y', 'c': 3})")
    fdl("commit", work, "-m", "a field added to a struct")
    con.close()
    assert any("year=" in f["path"] for f in files_entry(repo, "main.h")["files"])
    for table in ("h", "p"):
        fdl("export", repo.root, table, "--to", tmp_path / f"{table}.parquet")
        assert exported(tmp_path / f"{table}.parquet") == through_ducklake(repo, table)
    assert sorted(r[1] for r in through_ducklake(repo, "h")[1] if r[1] is not None) == [1999]
    assert ("NULL",) in [(r[1],) for r in through_ducklake(repo, "p")[1]]
    # a struct that gained a field after a file was written: no plain reader gets it right
    entry = files_entry(repo, "main.s")
    assert "the field c of a nested column" in entry["unreadable"]
    for to in ("s.parquet", "s-folder"):
        p = fdl("export", repo.root, "s", "--to", tmp_path / to, check=False)
        assert p.returncode == 5 and "the field c of a nested column" in p.stderr, p.stderr
        assert not (tmp_path / to).exists()
    fdl("export", repo.root, "s", "--to", tmp_path / "s.parquet", "--apply")
    assert exported(tmp_path / "s.parquet") == through_ducklake(repo, "s")
    # the earlier version, before the field was added, reads plainly
    fdl("export", f"{repo.root}@main:1", "s", "--to", tmp_path / "s1.parquet")
    assert exported(tmp_path / "s1.parquet") == through_ducklake(repo, "s", "main:1")
