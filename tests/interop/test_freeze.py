"""The incremental freeze equals the full one (issue 39).

Each commit here is made twice from the same working catalog: once as fdl
commits (incremental from the base version's frozen catalog, FDL_TRACE
saying so) and once with FDL_FREEZE=full, the branch and the working
catalog's record put back in between. The two frozen catalogs must hold the
same rows in every metadata table, and files.json and dataset.json must be
the same bytes, after inserts, schema changes, deletes, renames, views and
comments, partitioning, compaction (files merged) and snapshot expiry, at
several sizes. The incremental one is the base of the next step, so a
difference would build up and be seen.
"""
import os
import shutil

import duckdb
import pytest

from conftest import Repo, connect, fdl, read_json

STATE = ("refs", "history")


def save(repo, work):
    saved = {p: repo.root / p for p in STATE}
    return {"record": (work / "fdl-work.json").read_text(),
            "dirs": {p: (shutil.copytree(d, repo.root.parent / f"saved-{p}", dirs_exist_ok=True) and
                         {f.relative_to(d): f.read_bytes() for f in d.rglob("*") if f.is_file()})
                     for p, d in saved.items() if d.exists()}}


def restore(repo, work, state):
    (work / "fdl-work.json").write_text(state["record"])
    for p in STATE:
        shutil.rmtree(repo.root / p, ignore_errors=True)
    for p, files in state["dirs"].items():
        for rel, data in files.items():
            f = repo.root / p / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(data)


def metadata(path):
    """Every table of a frozen catalog: its columns and its rows, sorted."""
    con = duckdb.connect(config={"threads": 1})  # small queries: a second thread only spins
    con.execute(f"ATTACH '{path}' AS c (READ_ONLY)")
    out = {}
    for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'c' ORDER BY 1").fetchall():
        cols = con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = 'c' AND "
                           "table_name = ? ORDER BY column_index", [t]).fetchall()
        # as text: Python has no time zone database for TIMESTAMPTZ here
        text = ", ".join(f'CAST("{c}" AS VARCHAR)' for c, _ in cols)
        out[t] = (cols, con.execute(f"SELECT {text} FROM c.{t} ORDER BY ALL").fetchall())
    cons = con.execute("SELECT table_name, constraint_text FROM duckdb_constraints() WHERE database_name = 'c' "
                       "ORDER BY ALL").fetchall()
    tags = con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = 'c'").fetchall()
    con.close()
    return out, cons, tags


def same_version(repo, a, b, msg):
    """Two versions' frozen catalogs hold the same rows in every table, and
    their files.json and dataset.json are the same bytes."""
    a, b = repo.root / "versions" / a, repo.root / "versions" / b
    ma, mb = metadata(a / "ducklake.duckdb"), metadata(b / "ducklake.duckdb")
    for t in ma[0]:
        assert ma[0][t] == mb[0][t], (msg, t)
    assert ma == mb, msg
    for name in ("files.json", "dataset.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), (msg, name)


def full_commit(repo, work, msg, lake=False):
    """A full freeze: from the working folder's template (fdl-template.duckdb,
    written by checkout: DuckLake is not loaded), or, with `lake`, the
    template moved away, from the catalog DuckLake creates. Its trace line."""
    tmpl, hidden = work / "fdl-template.duckdb", work.parent / "template-aside"
    if lake:
        tmpl.rename(hidden)
    try:
        p = fdl("commit", work, "-m", msg, env={"FDL_FREEZE": "full", "FDL_TRACE": "1"})
    finally:
        if lake:
            hidden.rename(tmpl)
    loads = [l for l in p.stderr.splitlines() if "LOAD" in l and "ducklake.duckdb_extension" in l]
    assert len(loads) == (1 if lake else 0), (msg, lake, loads)
    return repo.head()


def both_ways(repo, work, msg, expect="incremental", lake=False):
    """Commit the working catalog incrementally and in full (with `lake`,
    also in full from DuckLake's own new catalog); compare; leave the
    incremental version as the branch's tip."""
    before = save(repo, work)
    p = fdl("commit", work, "-m", msg, env={"FDL_TRACE": "1"})
    line = [l for l in p.stderr.splitlines() if "fdl trace: freeze:" in l]
    assert len(line) == 1 and f"freeze: {expect}" in line[0], line
    inc = repo.head()
    after = save(repo, work)
    restore(repo, work, before)
    full = full_commit(repo, work, msg)
    assert full != inc
    same_version(repo, inc, full, msg)
    if lake:
        restore(repo, work, before)
        same_version(repo, full, full_commit(repo, work, msg, lake=True), msg + " (DuckLake's new catalog)")
    restore(repo, work, after)
    return line[0]


def steps(con, n):
    """The history the two freezes are compared on; n sets its size."""
    yield "tables", ["CREATE TABLE lake.t (k BIGINT, s VARCHAR)", "CREATE TABLE lake.u (a INTEGER, d DATE)",
                     "INSERT INTO lake.t VALUES (0, 'zero')", "INSERT INTO lake.u VALUES (1, DATE '2024-01-01')"]
    yield "inserts", [f"INSERT INTO lake.t SELECT {i} * 10 + range, 'r' || range FROM range(3)" for i in range(n)]
    yield "a column added", ["ALTER TABLE lake.t ADD COLUMN c DOUBLE DEFAULT 1.5",
                             "INSERT INTO lake.t VALUES (-1, 'new', 2.5)"]
    yield "deletes and an update", ["DELETE FROM lake.t WHERE k % 7 = 0", "UPDATE lake.u SET a = a + 1",
                                    "DELETE FROM lake.t WHERE k = 11"]
    yield "renames", ["ALTER TABLE lake.t RENAME COLUMN s TO label", "ALTER TABLE lake.u RENAME TO u2",
                      "ALTER TABLE lake.t ALTER COLUMN k SET DATA TYPE BIGINT"]
    yield "views, comments, a dropped table", [
        "CREATE VIEW lake.v AS SELECT k FROM lake.t WHERE k > 3", "COMMENT ON TABLE lake.t IS 'the table'",
        "COMMENT ON COLUMN lake.t.k IS 'the key'", "CREATE TABLE lake.gone (x INTEGER)",
        "INSERT INTO lake.gone VALUES (1)", "DROP TABLE lake.gone", "CREATE SCHEMA lake.other",
        "CREATE TABLE lake.other.w (x VARCHAR)", "INSERT INTO lake.other.w VALUES ('w')"]
    yield "partitioned", ["CREATE TABLE lake.p (y INTEGER, v VARCHAR)", "ALTER TABLE lake.p SET PARTITIONED BY (y)",
                          "INSERT INTO lake.p VALUES (2020, 'a'), (2021, 'b')", "INSERT INTO lake.p VALUES (2020, 'c')"]
    yield "files merged", ["CALL ducklake_merge_adjacent_files('lake')"]
    yield "more after the merge", [f"INSERT INTO lake.t VALUES ({1000 + i}, 'after', 0.5)" for i in range(3)]
    # snapshots no version froze (the ones between two commits) may be
    # expired; those a version froze may not (docs/format.md)
    yield "snapshots expired", ["INSERT INTO lake.t VALUES (2000, 'x', 1)", "INSERT INTO lake.t VALUES (2001, 'y', 1)",
                                "INSERT INTO lake.t VALUES (2002, 'z', 1)", "EXPIRE"]
    yield "rewritten", ["CALL ducklake_rewrite_data_files('lake', delete_threshold => 0)",
                        "INSERT INTO lake.t VALUES (3000, 'last', 3)"]


@pytest.mark.parametrize("n", [1, 40, 1100])
def test_incremental_equals_full(tmp_path, n):
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)
    # one thread: the same snapshots and files, half the CPU of DuckDB's
    # default (each of the 1,100 small commits woke a second thread)
    con.execute("SET threads = 1")
    first = True
    frozen = set()
    for name, sqls in steps(con, n):
        for sql in sqls:
            if sql == "EXPIRE":
                # every snapshot no version froze, but the latest: rows only
                # those saw go from the working catalog, before the base too
                snaps = [r[0] for r in con.execute("SELECT snapshot_id FROM lake.snapshots()").fetchall()]
                ids = [i for i in snaps if i not in frozen and i != max(snaps)]
                con.execute(f"CALL ducklake_expire_snapshots('lake', versions => {ids})")
            else:
                con.execute(sql)
        frozen.add(con.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0])
        line = both_ways(repo, work, name, "full (a first version)" if first else "incremental", lake=n == 40)
        if name == "snapshots expired":  # rows of the base's past went: those tables are copied whole
            assert "copied whole" in line and "ducklake_snapshot" in line, line
        first = False
    # a new description alone: no snapshot since the base
    (work / "dataset.yml").write_text("name: eq\ntitle: Equal both ways\n")
    assert "no snapshot since" in both_ways(repo, work, "description")
    # the last version read by stock DuckDB, through fdl attach
    v = repo.open_version("main", setup=True)
    assert v.execute("SELECT count(*) FROM lake.t WHERE label = 'last'").fetchone() == (1,)
    assert fdl("verify", repo.root, "--deep", check=False).returncode == 0


def test_many_small_files_warned_and_compacted(tmp_path):
    """A table of mostly small files is named at commit with the call that
    merges them; --compact merges them first (a new snapshot of the working
    catalog), the rows stay the same, and the older version still reads
    the files it had."""
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)
    con.execute("CREATE TABLE lake.t (k INTEGER)")
    con.execute("CREATE TABLE lake.few (k INTEGER)")
    for i in range(60):
        con.execute(f"INSERT INTO lake.t VALUES ({i})")
    for i in range(40):  # under the threshold: no warning for it
        con.execute(f"INSERT INTO lake.few VALUES ({i})")
    p = fdl("commit", work, "-m", "small files")
    warned = [line for line in p.stderr.splitlines() if line.startswith("fdl: warning:")]
    assert len(warned) == 1, p.stderr
    assert "table main.t: 60 of its 60 data files are under 1 MiB" in warned[0]
    assert "ducklake_merge_adjacent_files" in warned[0] and "--compact" in warned[0]
    before = repo.head()
    con.execute("INSERT INTO lake.t VALUES (60)")
    p = fdl("commit", work, "-m", "compacted", "--compact", env={"FDL_TRACE": "1"})
    assert "fdl: warning" not in p.stderr, p.stderr
    assert "compact: " in p.stderr and "data files merged" in p.stderr
    files = read_json(repo.root / "versions" / repo.head() / "files.json")
    assert len(files["tables"]["main.t"]["files"]) < 5, files["tables"]["main.t"]
    v = repo.open_version("main", setup=True)
    assert v.execute("SELECT count(*), sum(k) FROM lake.t").fetchone() == (61, sum(range(61)))
    assert v.execute("SELECT count(*) FROM lake.few").fetchone() == (40,)
    old = repo.open_version(before, setup=True)
    assert old.execute("SELECT count(*), sum(k) FROM lake.t").fetchone() == (60, sum(range(60)))
    assert fdl("verify", repo.root, "--deep", "--all", check=False).returncode == 0


def test_template_changed_or_a_symlink_is_not_used(tmp_path):
    """A full freeze copies the working folder's template (fdl-template.duckdb,
    DuckLake's empty catalog written by checkout, its sha256 in
    fdl-work.json) instead of loading DuckLake. A template changed since
    (here: a table and a view planted in it, which the copy would publish),
    or one that is a symlink, is not used: DuckLake creates the catalog, as
    it does for a working folder checked out before templates were written."""
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = tmp_path / "w"
    con = repo.checkout(work)  # its template and template_sha256 are checked: the build under test
    con.execute("CREATE TABLE lake.t AS SELECT range AS k FROM range(5)")
    tmpl = work / "fdl-template.duckdb"
    assert len(read_json(work / "fdl-work.json")["template_sha256"]) == 64
    t = duckdb.connect()
    t.execute(f"ATTACH '{tmpl}' AS t")
    t.execute("CREATE TABLE t.evil AS SELECT 1 AS x")
    t.execute("CREATE VIEW t.ducklake_v AS SELECT 2 AS y")
    t.close()
    p = fdl("commit", work, "-m", "first", env={"FDL_TRACE": "1"})
    assert "freeze: the template is not used (it changed since checkout wrote it)" in p.stderr, p.stderr
    assert "ducklake.duckdb_extension" in p.stderr  # DuckLake made the catalog
    f = duckdb.connect()
    f.execute(f"ATTACH '{repo.root / 'versions' / repo.head() / 'ducklake.duckdb'}' AS f (READ_ONLY)")
    assert f.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'f' AND table_name = 'evil'"
                     ).fetchone() == (0,)
    assert f.execute("SELECT count(*) FROM duckdb_views() WHERE database_name = 'f' AND NOT internal").fetchone() == (0,)
    f.close()
    v = repo.open_version("main", setup=True)
    assert v.execute("SELECT count(*), sum(k) FROM lake.t").fetchone() == (5, 10)
    # a symlink to an untouched template (another checkout's) is not followed
    good = tmp_path / "other"
    repo.checkout(good, setup=True).close()
    con.execute("INSERT INTO lake.t VALUES (5)")
    (good / "fdl-template.duckdb").rename(tmp_path / "good.duckdb")
    tmpl.unlink()
    tmpl.symlink_to(tmp_path / "good.duckdb")
    p = fdl("commit", work, "-m", "full again", env={"FDL_TRACE": "1", "FDL_FREEZE": "full"})
    assert "the template is not used (fdl-template.duckdb is not a regular file)" in p.stderr, p.stderr
    assert "fdl_template" not in p.stderr and "ducklake.duckdb_extension" in p.stderr, p.stderr
    v = repo.open_version("main", setup=True)
    assert v.execute("SELECT count(*), sum(k) FROM lake.t").fetchone() == (6, 15)
    assert fdl("verify", repo.root, "--deep", check=False).returncode == 0


def test_row_added_by_absolute_path_is_frozen_relative(tmp_path):
    """A data file added since the base version and recorded by an absolute
    path under the repository's data folder (DuckLake's
    ducklake_add_data_files of a file written there) is recorded relative to
    the data path in the new frozen catalog, by the incremental freeze as by
    the full one, and read back by stock DuckDB."""
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)
    con.execute("CREATE TABLE lake.t (k BIGINT, s VARCHAR)")
    con.execute("INSERT INTO lake.t VALUES (1, 'one')")
    both_ways(repo, work, "first", "full (a first version)")
    extra = repo.root / "data" / "main" / "t" / "added-by-hand.parquet"
    con.execute(f"COPY (SELECT range + 100 AS k, 'added' AS s FROM range(3)) TO '{extra}' (FORMAT parquet)")
    con.execute(f"CALL ducklake_add_data_files('lake', 't', '{extra}')")
    w = connect()
    w.execute(f"ATTACH '{work / 'ducklake.sqlite'}' AS w (TYPE sqlite, READ_ONLY)")
    assert w.execute("SELECT path, path_is_relative FROM w.ducklake_data_file WHERE path LIKE '%added-by-hand%'"
                     ).fetchall() == [(str(extra), 0)]
    w.close()
    both_ways(repo, work, "a file added by its absolute path")
    frozen = duckdb.connect()
    frozen.execute(f"ATTACH '{repo.root / 'versions' / repo.head() / 'ducklake.duckdb'}' AS f (READ_ONLY)")
    assert frozen.execute("SELECT path, path_is_relative FROM f.ducklake_data_file WHERE path LIKE '%added-by-hand%'"
                          ).fetchall() == [("added-by-hand.parquet", True)]
    assert frozen.execute("SELECT count(*) FROM f.ducklake_data_file WHERE NOT path_is_relative OR path LIKE '/%'"
                          ).fetchone() == (0,)
    frozen.close()
    files = read_json(repo.root / "versions" / repo.head() / "files.json")
    assert "main/t/added-by-hand.parquet" in files["sha256"], files["sha256"]
    v = repo.open_version("main", setup=True)
    assert v.execute("SELECT count(*), sum(k) FROM lake.t").fetchone() == (4, 1 + 100 + 101 + 102)
    assert fdl("verify", repo.root, "--deep", check=False).returncode == 0
