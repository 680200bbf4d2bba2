"""Statistics of a frozen catalog describe its snapshot (issue 43).

DuckLake answers min() and max() from ducklake_table_column_stats without
reading a file while no row was deleted, and that table only holds the
working catalog's latest state. A commit freezes the snapshot it read first;
a writer that goes on inserting before the rows are copied must not leak its
bounds into the version. The interleaving is forced, never timed: the commit
waits at its pause point (FDL_PAUSE_AT, the sanitizer build) between reading
the snapshot and copying it, the test's writer inserts, then lets it go.
"""
import os
import subprocess
import time

import pytest

from conftest import EXT, FDL, Repo, connect, fdl, fdl_setup
from test_postgres import new_db, postgres  # noqa: F401  (the module's PostgreSQL server)


def held_commit(work, tmp, during, msg, ledger):
    """fdl commit paused between its snapshot read and the copy
    (FDL_PAUSE_AT) while `during()` runs; fails unless it really waited
    there."""
    gate = tmp / f"pause-{msg}"
    gate.mkdir()
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Test", FDL_AUTHOR_EMAIL="t@example.org",
               FDL_PAUSE_AT="freeze-snapshot", FDL_PAUSE_DIR=str(gate))
    p = subprocess.Popen([FDL, "commit", str(work), "-m", msg], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300  # a safety net, never the outcome
        while not (gate / "freeze-snapshot.reached").exists():
            assert p.poll() is None, f"the commit ended before its pause point: {p.communicate()}"
            assert time.monotonic() < deadline, "the commit never reached its pause point"
            time.sleep(0.005)
        try:
            during()
        finally:
            (gate / "freeze-snapshot.go").touch()
        out, err = p.communicate(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert "pause point freeze-snapshot reached" in err, "this fdl has no pause points: run the sanitizer build (FDL_BIN)"
    ledger.published(out)  # published by a process the test started itself
    return out.strip()


def versions_answer_their_rows(repo, expected):
    """Each version's min()/max() (which DuckLake answers from the statistics)
    equal the bounds of the rows it holds (read row by row). One stock
    DuckDB reads them all, each version attached in turn with the ATTACH
    the release build's `fdl attach` prints (fdl_setup: the reader here is
    stock DuckDB, the subject is what each held commit wrote; `fdl attach`
    runs the build under test in the tests about it, test_cli, test_reader)."""
    con = connect()
    for vid, want in expected.items():
        con.execute(fdl_setup("attach", repo.root, vid).stdout)
        got = con.execute("SELECT min(k), max(k), count(*) FROM lake.t").fetchone()
        held = sorted(r[0] for r in con.execute("SELECT k FROM lake.t").fetchall())
        con.execute("DETACH lake")
        assert held == sorted(want), vid
        assert got == (min(want), max(want), len(want)), (vid, got, min(want), max(want))
    con.close()


def commits_beside_a_writer(repo, work, con, tmp, ledger, n=30):
    """n commits, each with a writer inserting a greater and a smaller k
    while the commit is held; returns each version's rows."""
    con.execute("CREATE TABLE lake.t (k BIGINT)")
    con.execute("INSERT INTO lake.t VALUES (0)")
    have = [0]
    expected = {}
    for i in range(1, n + 1):
        con.execute(f"INSERT INTO lake.t VALUES ({i})")
        have.append(i)
        snapshot = list(have)
        late = [10_000 + i, -10_000 - i]

        def writer(rows=late):
            for k in rows:
                con.execute(f"INSERT INTO lake.t VALUES ({k})")
        held_commit(work, tmp, writer, f"v{i}", ledger)
        expected[repo.head()] = snapshot
        have += late
    return expected


def test_commits_beside_a_writer_sqlite(tmp_path, ledger):
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)
    expected = commits_beside_a_writer(repo, work, con, tmp_path, ledger)
    assert len(expected) == 30
    versions_answer_their_rows(repo, expected)
    p = fdl("verify", repo.root, "--all", "--deep", check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_commits_beside_a_writer_postgres(postgres, tmp_path, ledger):  # noqa: F811
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = new_db(postgres, "stats")
    con = connect()
    con.execute(fdl_setup("checkout", repo.root, work).stdout)
    expected = commits_beside_a_writer(repo, work, con, tmp_path, ledger)
    assert len(expected) == 30
    versions_answer_their_rows(repo, expected)
    p = fdl("verify", repo.root, "--all", "--deep", check=False)
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.mark.parametrize("column", ["k BIGINT", "k VARCHAR", "k DATE", "k DECIMAL(9,2)", "k DOUBLE"])
def test_recomputed_bounds_order_by_type(tmp_path, column, ledger):
    """The bounds recomputed at the cut order values as their type does
    ('10' after '9' as numbers, before it as text), as DuckLake does."""
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)
    typ = column.split(" ", 1)[1]
    con.execute(f"CREATE TABLE lake.t ({column})")
    values, late = {"BIGINT": (["9", "10", "-3"], "100"), "VARCHAR": (["9", "10", "b"], "c"),
                    "DATE": (["2024-01-09", "2023-12-31", "2024-01-10"], "2025-01-01"),
                    "DECIMAL(9,2)": (["9.5", "10.25", "-0.75"], "100.5"),
                    "DOUBLE": (["9.5", "10.25", "-1e3"], "1e9")}[typ]
    for v in values:
        con.execute(f"INSERT INTO lake.t VALUES (CAST('{v}' AS {typ}))")
    # the writer's value is past every bound: the version must not answer it
    held_commit(work, tmp_path, lambda: con.execute(f"INSERT INTO lake.t VALUES (CAST('{late}' AS {typ}))"),
                "typed", ledger)
    v = repo.open_version("main", setup=True)  # stock DuckDB reads what the held commit wrote
    got = v.execute("SELECT min(k), max(k) FROM lake.t").fetchone()
    rows = [r[0] for r in v.execute("SELECT k FROM lake.t").fetchall()]
    assert got == (min(rows), max(rows))
    assert len(rows) == len(values)


def test_verify_names_a_version_whose_bounds_no_file_holds(tmp_path, ledger):
    """A version whose column statistics claim a bound none of its files
    holds (what a commit beside a writer made before the fix) is named by
    fdl verify, with the table, the column and the value; the others pass."""
    import sqlite3
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)
    con.execute("CREATE TABLE lake.t (k BIGINT, s VARCHAR)")
    con.execute("INSERT INTO lake.t VALUES (1, 'a'), (2, 'b')")
    fdl_setup("commit", work, "-m", "good")  # the scene: the versions verify reads
    good = repo.head()
    con.execute("INSERT INTO lake.t VALUES (3, 'c')")
    con.close()
    # the statistics a writer past the snapshot left before the fix
    db = sqlite3.connect(work / "ducklake.sqlite")
    db.execute("UPDATE ducklake_table_column_stats SET max_value = '238' WHERE column_id = 1")
    db.commit()
    db.close()
    ledger.waive(repo.root, "the statistics are forged for verify to find: they answer other than the rows")
    fdl_setup("commit", work, "-m", "bad")
    bad = repo.head()
    v = repo.open_version(bad, setup=True)
    assert v.execute("SELECT max(k) FROM lake.t").fetchone() == (238,)  # what stock DuckDB answers
    p = fdl("verify", repo.root, "--all", "--deep", check=False)
    assert p.returncode != 0
    named = [line for line in (p.stdout + p.stderr).splitlines() if "none of its data files holds" in line]
    assert len(named) == 1, p.stdout + p.stderr
    assert f"versions/{bad}/" in named[0] and "table main.t, column k" in named[0] and "max is 238" in named[0]
    assert good not in p.stdout + p.stderr
    # written wrong, with matching hashes: only deriving the statistics
    # from the catalog can tell (verify's default depth reads bytes and hashes)
    assert fdl("verify", repo.root).returncode == 0


def test_verify_checks_each_table_and_column_of_a_wide_catalog(tmp_path, ledger):
    """Among several tables of several columns, verify names exactly the
    bound no live file holds (table t2, column c3, min), and not a wrong
    bound of a table with a deleted row: DuckLake reads the files of such
    a table for min() and max(), so its statistics answer nothing."""
    import sqlite3
    repo = Repo(tmp_path, setup=True)  # the scene: the release build (tests/README.md)
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)
    cols = ", ".join(f"c{j} BIGINT" for j in range(6))
    for t in range(4):
        con.execute(f"CREATE TABLE lake.t{t} ({cols})")
        for i in range(3):
            con.execute(f"INSERT INTO lake.t{t} VALUES ({', '.join(str(100 * t + 10 * i + j) for j in range(6))})")
    con.execute("DELETE FROM lake.t1 WHERE c0 = 110")
    con.close()
    db = sqlite3.connect(work / "ducklake.sqlite")
    table_id = {name: tid for name, tid in db.execute("SELECT table_name, table_id FROM ducklake_table")}
    col_id = {name: cid for name, cid in db.execute(
        f"SELECT column_name, column_id FROM ducklake_column WHERE table_id = {table_id['t2']}")}
    db.execute(f"UPDATE ducklake_table_column_stats SET min_value = '-7' WHERE table_id = {table_id['t2']}"
               f" AND column_id = {col_id['c3']}")
    db.execute(f"UPDATE ducklake_table_column_stats SET max_value = '999' WHERE table_id = {table_id['t1']}")
    db.commit()
    db.close()
    ledger.waive(repo.root, "the statistics are forged for verify to find: they answer other than the rows")
    fdl_setup("commit", work, "-m", "wide")  # the scene: the version verify reads
    v = repo.open_version("main", setup=True)
    assert v.execute("SELECT min(c3) FROM lake.t2").fetchone() == (-7,)  # what stock DuckDB answers
    assert v.execute("SELECT max(c2) FROM lake.t1").fetchone() == (122,)  # read from the files
    p = fdl("verify", repo.root, "--all", "--deep", check=False)
    assert p.returncode != 0
    named = [line for line in (p.stdout + p.stderr).splitlines() if "none of its data files holds" in line]
    assert len(named) == 1, p.stdout + p.stderr
    assert "table main.t2, column c3" in named[0] and "the min is -7" in named[0], named[0]
