"""fdl rebase and fdl commit --rebase: two (or four) publishers check out one
branch in their own working folders; the loser of the commit race replays
its changes on the winner's version instead of redoing them. What stock
DuckDB reads from the result is compared with a reference lake in which the
same statements ran one after the other; conflicts leave WORK unchanged;
a rebase killed at every write point leaves WORK usable."""
import hashlib
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import EXT, FDL, Repo, connect, fdl, fdl_setup, read_json, rows

BASE = ["CREATE TABLE lake.s (a INTEGER, b VARCHAR)",
        "INSERT INTO lake.s SELECT i, 'x' || i FROM range(100) t(i)",
        "CREATE TABLE lake.one (k INTEGER)", "INSERT INTO lake.one SELECT range FROM range(10)",
        "CREATE TABLE lake.two (k INTEGER)", "INSERT INTO lake.two SELECT range FROM range(20)"]
# the winner: appends to the shared table and to its own, creates a table
WINNER = ["INSERT INTO lake.s VALUES (1000, 'winner')",
          "INSERT INTO lake.one VALUES (100), (101)",
          "CREATE TABLE lake.made_by_winner AS SELECT 1 AS z"]
# the loser: appends to the shared table (with a commit message), to
# another table, deletes rows from the shared table and from that one
LOSER = ["BEGIN",
         "CALL lake.set_commit_message('Loser', 'append 2000', extra_info => '{\"run\": 7}')",
         "INSERT INTO lake.s VALUES (2000, 'loser')", "COMMIT",
         "INSERT INTO lake.two VALUES (200)",
         "DELETE FROM lake.s WHERE a < 5",
         "DELETE FROM lake.s WHERE a = 50",
         "DELETE FROM lake.two WHERE k % 2 = 1",
         "CREATE TABLE lake.made_by_loser AS SELECT 2 AS z"]
TABLES = ["s", "one", "two", "made_by_winner", "made_by_loser"]


def run_sql(con, statements):
    for s in statements:
        con.execute(s)


def reference(tmp_path, *steps):
    """A DuckLake where the statements ran one after the other."""
    con = connect()
    con.execute(f"ATTACH 'ducklake:{tmp_path}/ref.ducklake' AS lake (DATA_PATH '{tmp_path}/ref-data/')")
    for statements in steps:
        run_sql(con, statements)
    return con


def table_rows(con, names):
    have = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()}
    return {t: rows(con, f"lake.{t}") for t in names if t in have}


def checkout(repo, work):
    """A working folder and the ATTACH that checkout printed for it (by the
    release build: the working folder a refused rebase must leave usable,
    or the one a loser redoes its change in, is the scene)."""
    sql = fdl_setup("checkout", repo.root, work).stdout
    con = connect()
    con.execute(sql)
    return con, sql


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot_of(work):
    """What a rebase must leave alone: the catalog, the record, the description."""
    return {f.name: digest(f) for f in work.iterdir()
            if f.is_file() and f.name in ("ducklake.sqlite", "fdl-work.json", "dataset.yml")}


def parents(repo):
    ids = [repo.head()]
    while repo.version(ids[-1])["parents"]:
        ids.append(repo.version(ids[-1])["parents"][0])
    return ids[::-1]


def two_publishers(repo, tmp_path):
    """The base version, the winner committed on it, the loser's changes in
    its working folder (closed), refused by commit."""
    loser = tip_and_here(repo, tmp_path, BASE, WINNER, LOSER, names=("winner", "loser"), message="the winner")
    lost = fdl("commit", loser, "-m", "the loser", check=False)
    assert lost.returncode == 4 and "fdl rebase" in lost.stderr, lost.stderr
    return loser


def tip_and_here(repo, tmp_path, base, tip, here, names=("a", "b"), message="a"):
    """The setup of every race here: the first version published from
    `base` (when given); two working folders checked out of it; `tip` run
    in the first and committed (the branch's new tip), `here` run in the
    second and left there (its connection closed). Returns the second
    working folder. Works on a folder (Repo) and a bucket (S3Repo).
    All of it is the scene, built by the release build (fdl_setup); what
    the test then does in the second folder runs the build under test."""
    if base is not None:
        published(repo, tmp_path, base)
    a, b = repo.checkout(tmp_path / names[0], setup=True), repo.checkout(tmp_path / names[1], setup=True)
    run_sql(a, tip)
    run_sql(b, here)
    a.close()
    b.close()
    fdl_setup("commit", tmp_path / names[0], "-m", message, env=repo.env)
    return tmp_path / names[1]


@pytest.fixture
def repo(tmp_path, histories):
    """A folder repository whose first version, when a race starts from
    one, is a copy of the session's (`published` below)."""
    r = Repo(tmp_path)
    r.histories = histories
    return r


def published(repo, tmp_path, statements):
    """The first version of the branch, made from `statements`: on a folder
    a copy of the session's made from the same statements
    (histories.published; the base is the fixture, the race on it runs the
    build under test), on a bucket published here by the release build."""
    if getattr(repo, "histories", None) is not None:
        repo.histories.published([("base", statements)], repo.root)
        return
    con = repo.checkout(tmp_path / "base", setup=True)
    run_sql(con, statements)
    con.close()
    fdl_setup("commit", tmp_path / "base", "-m", "base", env=repo.env)


def data_files(repo):
    return {str(p.relative_to(repo.root / "data")) for p in (repo.root / "data").rglob("*.parquet")}


def scheduled(work):
    """The names of the files the working catalog scheduled for DuckLake's
    clean-up (ducklake_cleanup_old_files deletes them; fdl leaves them)."""
    con = connect()
    con.execute(f"ATTACH '{work}/ducklake.sqlite' AS w (TYPE sqlite, READ_ONLY)")
    return {p.rsplit("/", 1)[-1] for (p,) in con.execute("SELECT path FROM w.ducklake_files_scheduled_for_deletion"
                                                          " WHERE path_is_relative").fetchall()}


def own_files(repo, work):
    """The files a working catalog wrote and has not published: in its own
    folder of the repository, work/<id>/ (relative to it)."""
    own = repo.root / "work" / read_json(work / "fdl-work.json")["id"]
    return {str(p.relative_to(own)) for p in own.rglob("*.parquet")}


@pytest.mark.quick
def test_the_loser_rebases_and_commits_both_changes(repo, tmp_path):
    work = two_publishers(repo, tmp_path)
    winner = repo.head()
    before, own = data_files(repo), own_files(repo, work)
    loser_snapshots = connect().execute(
        f"ATTACH '{work}/ducklake.sqlite' AS w (TYPE sqlite, READ_ONLY);"
        "SELECT commit_message, commit_extra_info, author FROM w.ducklake_snapshot_changes"
        " WHERE commit_message IS NOT NULL").fetchall()
    p = fdl("rebase", work, "--json")
    report = json.loads(p.stdout)
    assert report["from"] == repo.version(winner)["parents"][0] and report["onto"] == winner
    assert report["snapshots"] == 6 and report["conflicts"] == []
    # no data file copied: the new files are the delete files written again,
    # in the working catalog's own folder, where they replace the old ones
    assert data_files(repo) == before
    added, replaced = own_files(repo, work) - own, own - own_files(repo, work)
    assert added and all(f.endswith("-delete.parquet") for f in added)
    assert len(added) == len(replaced) == report["delete_files"]
    assert read_json(work / "fdl-work.json")["base"] == winner
    fdl("commit", work, "-m", "the loser")
    # a linear history: base, winner, loser
    ids = parents(repo)
    assert len(ids) == 3 and ids[1] == winner
    assert [repo.version(i)["seq"] for i in ids] == [1, 2, 3]
    got = table_rows(repo.open_version("main"), TABLES)
    want = table_rows(reference(tmp_path, BASE, WINNER, LOSER), TABLES)
    assert got == want and set(got) == set(TABLES)
    # the winner's version reads as it did
    (tmp_path / "w").mkdir()
    assert table_rows(repo.open_version(winner), TABLES) == table_rows(reference(tmp_path / "w", BASE, WINNER), TABLES)
    # the replayed snapshots keep their commit message and extra info
    con = repo.open_version("main")
    # row lineage: the loser's row gets the row id after the winner's
    assert con.execute("SELECT rowid, a FROM lake.s WHERE a >= 1000 ORDER BY a").fetchall() == [(100, 1000), (101, 2000)]
    kept = con.execute("SELECT commit_message, commit_extra_info, author FROM ducklake_snapshots('lake')"
                       " WHERE commit_message IS NOT NULL").fetchall()
    assert kept == loser_snapshots == [("append 2000", '{"run": 7}', "Loser")]
    # the loser's data files are the same files, published under data/
    files = read_json(repo.root / "versions" / repo.head() / "files.json")["tables"]
    loser_files = {f["path"] for f in files["main.made_by_loser"]["files"]}
    assert loser_files <= own and loser_files <= data_files(repo)
    # what stays in its folder is only what DuckLake itself let go of (a
    # delete file replaced by a later delete from the same data file)
    left = own_files(repo, work)
    assert {f.rsplit("/", 1)[-1] for f in left} <= scheduled(work) and len(left) == 1
    # time travel through the replayed snapshots: each one holds the
    # winner's rows and what the loser had at the same step
    snaps = [r[0] for r in con.execute("SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY 1").fetchall()]
    counts = [con.execute(f"SELECT count(*) FROM lake.s AT (VERSION => {s})").fetchone()[0] for s in snaps[-6:]]
    assert counts == [102, 102, 97, 96, 96, 96]
    assert json.loads(fdl("verify", repo.root, "--deep", "--json").stdout)["problems"] == []


def test_schema_work_on_one_side_goes_through(repo, tmp_path):
    """Columns added, a table renamed, dropped and created in a new schema,
    partitioned, a view and a comment, here; appends to the same tables on
    the tip."""
    tip = ["INSERT INTO lake.s VALUES (1000, 'winner')", "INSERT INTO lake.one VALUES (100)"]
    here = ["ALTER TABLE lake.s ADD COLUMN c INTEGER", "INSERT INTO lake.s VALUES (2000, 'loser', 7)",
            "ALTER TABLE lake.one RENAME TO uno", "COMMENT ON TABLE lake.uno IS 'renamed'",
            "DROP TABLE lake.two", "CREATE SCHEMA lake.extra",
            "CREATE TABLE lake.extra.p (y INTEGER, v INTEGER)", "ALTER TABLE lake.extra.p SET PARTITIONED BY (y)",
            "INSERT INTO lake.extra.p VALUES (2024, 1), (2025, 2)",
            "CREATE VIEW lake.v AS SELECT a, c FROM lake.s WHERE a >= 1000"]
    tip_and_here(repo, tmp_path, BASE, tip, here)
    fdl("rebase", tmp_path / "b")
    fdl("commit", tmp_path / "b", "-m", "b")
    names = ["s", "uno", "one", "two", "extra.p", "v"]
    got = table_rows(repo.open_version("main"), names)
    want = table_rows(reference(tmp_path, BASE, tip, here), names)
    assert got == want and "two" not in got and "one" not in got
    con = repo.open_version("main")
    assert rows(con, "lake.v") == [(1000, None), (2000, 7)]
    assert con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'uno'").fetchall() == [("renamed",)]
    # the version's changes are against the winner's: this side's alone
    changes = {(c["table"], c["kind"]) for c in repo.version(repo.head())["changes"]}
    assert changes == {("main.s", "add_column"), ("main.uno", "rename_table"), ("main.two", "drop_table"),
                       ("extra.p", "add_table")}, changes  # views are not in `changes`
    assert json.loads(fdl("verify", repo.root, "--deep", "--json").stdout)["problems"] == []


def test_rebase_with_nothing_new_on_the_tip_changes_nothing(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    run_sql(con, BASE[:2])
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    before = snapshot_of(tmp_path / "w")
    p = fdl("rebase", tmp_path / "w")
    assert "already based on" in p.stdout and snapshot_of(tmp_path / "w") == before


def test_conflicting_schema_changes_are_refused_and_work_is_unchanged(repo, tmp_path):
    published(repo, tmp_path, BASE)
    a = repo.checkout(tmp_path / "a", setup=True)
    b, b_sql = checkout(repo, tmp_path / "b")
    a.execute("ALTER TABLE lake.s ADD COLUMN c INTEGER")
    b.execute("ALTER TABLE lake.s RENAME COLUMN b TO label")
    b.execute("INSERT INTO lake.one VALUES (7)")
    a.close()
    b.close()
    fdl_setup("commit", tmp_path / "a", "-m", "a")
    before = snapshot_of(tmp_path / "b")
    p = fdl("rebase", tmp_path / "b", check=False)
    assert p.returncode == 4, p.stderr
    assert "main.s: its schema changed here and on the tip (schema)" in p.stderr
    assert "Nothing in the working catalog changed" in p.stderr
    assert snapshot_of(tmp_path / "b") == before
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".b.fdl-rebase-")]
    report = json.loads(fdl("rebase", tmp_path / "b", "--json", check=False).stdout)
    assert report["conflicts"] == [{"table": "main.s", "kind": "schema",
                                    "detail": "its schema changed here and on the tip"}]
    # still refused by commit, and still a working catalog DuckDB writes to
    assert fdl("commit", tmp_path / "b", "-m", "b", check=False).returncode == 4
    con = connect()
    con.execute(b_sql)
    con.execute("INSERT INTO lake.one VALUES (8)")
    assert rows(con, "lake.one") == sorted([(k,) for k in range(10)] + [(7,), (8,)])


CONFLICTS = {
    "dropped": (["DROP TABLE lake.one"], ["INSERT INTO lake.one VALUES (5)"], "main.one",
                "dropped on the tip, changed here"),
    "delete": (["DELETE FROM lake.s WHERE a = 1"], ["DELETE FROM lake.s WHERE a = 2"], "main.s",
               "which the tip also deleted from, rewrote or compacted"),
    "name": (["CREATE TABLE lake.n AS SELECT 1 AS x"], ["CREATE VIEW lake.n AS SELECT 2 AS y"], "main.n",
             "two tables or views would have this name"),
    "columns": (["ALTER TABLE lake.s DROP COLUMN b"], ["INSERT INTO lake.s VALUES (3000, 'late')"], "main.s",
                "with the columns the tip has since changed"),
}


@pytest.mark.parametrize("kind", sorted(CONFLICTS))
def test_each_conflict_is_named(repo, tmp_path, kind):
    tip, here, table, detail = CONFLICTS[kind]
    tip_and_here(repo, tmp_path, BASE, tip, here)
    before = snapshot_of(tmp_path / "b")
    p = fdl("rebase", tmp_path / "b", "--json", check=False)
    assert p.returncode == 4, p.stderr
    (c,) = json.loads(p.stdout)["conflicts"]
    assert c["table"] == table and c["kind"] == kind and detail in c["detail"], c
    assert snapshot_of(tmp_path / "b") == before


def test_a_table_the_tip_dropped_and_expired_conflicts(repo, tmp_path):
    """ducklake_expire_snapshots removes a dropped table's (and schema's)
    rows once no snapshot left sees them: the tip that expired its base's
    snapshots holds no trace of the drop. Rows appended here were replayed
    into a table the published version does not have (exit 0, the rows
    gone); redone by hand, the INSERT fails."""
    x = ["CREATE SCHEMA lake.x", "CREATE TABLE lake.x.q (k INTEGER)", "INSERT INTO lake.x.q VALUES (1)"]
    tip_and_here(repo, tmp_path, BASE + x,
                 ["DROP TABLE lake.one", "DROP SCHEMA lake.x CASCADE",
                  "CALL ducklake_expire_snapshots('lake', older_than => now())"],
                 ["INSERT INTO lake.one VALUES (5)", "INSERT INTO lake.x.q VALUES (5)"])
    tip, before = repo.head(), snapshot_of(tmp_path / "b")
    p = fdl("commit", tmp_path / "b", "--rebase", "-m", "b", check=False)
    assert p.returncode == 4, (p.stdout, p.stderr)
    assert "main.one: dropped on the tip, changed here (dropped)" in p.stderr, p.stderr
    assert "x.q: dropped on the tip, changed here (dropped)" in p.stderr, p.stderr
    assert snapshot_of(tmp_path / "b") == before and repo.head() == tip


# two data files of 100 rows each, for a compaction to merge
SMALL = ["CREATE TABLE lake.t (id INTEGER, v VARCHAR)",
         "INSERT INTO lake.t SELECT i, 'a' || i FROM range(100) t(i)",
         "INSERT INTO lake.t SELECT i, 'b' || i FROM range(100, 200) t(i)"]
COMPACTIONS = {"merge": ["CALL ducklake_merge_adjacent_files('lake')"], "checkpoint": ["CHECKPOINT lake"]}
ROW_CHANGES = {"delete": ["DELETE FROM lake.t WHERE id = 150"],
               "update": ["UPDATE lake.t SET v = 'changed' WHERE id = 150"]}


def lost_rebase(work, how):
    """The loser's way onto the tip: commit --rebase, or rebase then commit
    (the commit only when the rebase went through)."""
    if how == "commit --rebase":
        return fdl("commit", work, "--rebase", "-m", "b", check=False)
    p = fdl("rebase", work, check=False)
    return fdl("commit", work, "-m", "b", check=False) if p.returncode == 0 else p


def redo_by_hand(repo, tmp_path, statements, ref_steps, names):
    """What the loser does after a conflict: check the tip out again, redo
    its statements there in stock DuckDB, commit; the version then holds
    what the same statements give after the tip's in a reference lake."""
    tmp_path.mkdir()
    con, _ = checkout(repo, tmp_path / "redo")
    run_sql(con, statements)
    con.close()
    fdl("commit", tmp_path / "redo", "-m", "redone")
    assert table_rows(repo.open_version("main"), names) == table_rows(reference(tmp_path, *ref_steps), names)


# (compaction on the tip, change here, how the loser gets onto the tip):
# each compaction and each change meet both ways
COMPACTED = [("merge", "delete", "commit --rebase"), ("merge", "update", "rebase"),
             ("checkpoint", "delete", "rebase"), ("checkpoint", "update", "commit --rebase")]


@pytest.mark.parametrize("compaction,change,how", COMPACTED)
def test_a_change_in_files_the_tip_compacted_conflicts(repo, tmp_path, compaction, change, how):
    """ducklake_merge_adjacent_files (CHECKPOINT runs it) removes the merged
    files' rows from the catalog rather than ending them; a delete here in
    one of them used to be replayed into a file the tip no longer reads:
    the row stayed (a delete) or stood twice (an update). DuckLake refuses
    such a delete after a concurrent compaction, and so does the rebase."""
    tip_and_here(repo, tmp_path, SMALL, COMPACTIONS[compaction], ROW_CHANGES[change])
    tip = repo.head()
    files = read_json(repo.root / "versions" / tip / "files.json")["tables"]["main.t"]["files"]
    assert len(files) == 1  # the tip's two files are one now
    before = snapshot_of(tmp_path / "b")
    p = lost_rebase(tmp_path / "b", how)
    assert p.returncode == 4, (p.stdout, p.stderr)
    assert "main.t: rows deleted here from " in p.stderr and "rewrote or compacted (delete)" in p.stderr, p.stderr
    assert "Nothing in the working catalog changed" in p.stderr
    assert snapshot_of(tmp_path / "b") == before and repo.head() == tip
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".b.fdl-rebase-")]
    # nothing of it published; redone on the tip, it lands once
    (tmp_path / "r1").mkdir()
    want = table_rows(reference(tmp_path / "r1", SMALL, COMPACTIONS[compaction]), ["t"])
    assert table_rows(repo.open_version("main"), ["t"]) == want
    redo_by_hand(repo, tmp_path / "r2", ROW_CHANGES[change], [SMALL, COMPACTIONS[compaction], ROW_CHANGES[change]],
                 ["t"])
    got = repo.open_version("main").execute("SELECT count(*), count(*) FILTER (id = 150),"
                                            " count(*) FILTER (v = 'changed') FROM lake.t").fetchall()
    assert got == ([(199, 0, 0)] if change == "delete" else [(200, 1, 1)])


RENAMES = {
    # its name now holds another table: which one the change meant is
    # ambiguous, a conflict naming it
    "recreated": ["ALTER TABLE lake.t RENAME TO t_old", "CREATE TABLE lake.t (id INTEGER, v VARCHAR)"],
    # renamed only: the change follows the table, as in DuckLake and Git
    "renamed": ["ALTER TABLE lake.t RENAME TO t_old"],
}
HERE = ["INSERT INTO lake.t VALUES (1000, 'b')", "DELETE FROM lake.t WHERE id = 7"]


@pytest.mark.parametrize("kind", sorted(RENAMES))
def test_a_table_the_tip_renamed(repo, tmp_path, kind):
    tip_and_here(repo, tmp_path, SMALL[:2], RENAMES[kind], HERE)
    tip = repo.head()
    before = snapshot_of(tmp_path / "b")
    p = fdl("commit", tmp_path / "b", "--rebase", "-m", "b", check=False)
    names = ["t", "t_old"]
    if kind == "renamed":
        assert p.returncode == 0, p.stderr
        # as redone by hand under the table's new name
        want = table_rows(reference(tmp_path, SMALL[:2], RENAMES[kind], [s.replace("lake.t ", "lake.t_old ")
                                                                         for s in HERE]), names)
        got = table_rows(repo.open_version("main"), names)
        assert got == want and "t" not in got and (1000, "b") in got["t_old"] and (7, "a7") not in got["t_old"]
        return
    assert p.returncode == 4, (p.stdout, p.stderr)
    assert ("main.t: changed here; the tip renamed it to main.t_old and gave its name to another table or view"
            " (renamed)") in p.stderr, p.stderr
    assert snapshot_of(tmp_path / "b") == before and repo.head() == tip
    report = json.loads(fdl("rebase", tmp_path / "b", "--json", check=False).stdout)
    assert [(c["table"], c["kind"]) for c in report["conflicts"]] == [("main.t", "renamed")]
    assert snapshot_of(tmp_path / "b") == before
    # redone by hand, the row goes to the new t (where the delete finds nothing)
    redo_by_hand(repo, tmp_path / "r", HERE, [SMALL[:2], RENAMES[kind], HERE], names)
    con = repo.open_version("main")
    assert rows(con, "lake.t") == [(1000, "b")] and len(rows(con, "lake.t_old")) == 100


def test_an_edited_description_conflicts_with_a_changed_one(repo, tmp_path):
    con = repo.checkout(tmp_path / "base", setup=True)
    run_sql(con, BASE[:2])
    con.close()
    (tmp_path / "base" / "dataset.yml").write_text("name: pop\ntitle: Population\n")
    fdl_setup("commit", tmp_path / "base", "-m", "base")
    for w in ("a", "b", "c"):
        repo.checkout(tmp_path / w, setup=True).close()
    (tmp_path / "a" / "dataset.yml").write_text("name: pop\ntitle: Population, corrected\n")
    fdl_setup("commit", tmp_path / "a", "-m", "a")
    # b edited the description too: a conflict
    (tmp_path / "b" / "dataset.yml").write_text("name: pop\ntitle: Population (b)\n")
    p = fdl("rebase", tmp_path / "b", "--json", check=False)
    assert p.returncode == 4
    assert [c["kind"] for c in json.loads(p.stdout)["conflicts"]] == ["description"]
    # c left it as checkout wrote it: it follows the tip's
    con = repo.checkout(tmp_path / "c2")  # noqa: F841 (a checkout of the tip, to compare)
    con.close()
    fdl("rebase", tmp_path / "c")
    assert (tmp_path / "c" / "dataset.yml").read_text() == (tmp_path / "c2" / "dataset.yml").read_text()
    assert "corrected" in (tmp_path / "c" / "dataset.yml").read_text()


def test_rows_updated_after_being_added_here_conflict_with_appends(repo, tmp_path):
    tip_and_here(repo, tmp_path, BASE[:2], ["INSERT INTO lake.s VALUES (1000, 'a')"],
                 ["INSERT INTO lake.s VALUES (2000, 'b')", "UPDATE lake.s SET b = 'b2' WHERE a = 2000"])
    p = fdl("rebase", tmp_path / "b", "--json", check=False)
    assert p.returncode == 4
    assert [c["kind"] for c in json.loads(p.stdout)["conflicts"]] == ["row_ids"]


def test_rows_updated_from_the_base_go_through(repo, tmp_path):
    upd = ["UPDATE lake.s SET b = 'changed' WHERE a = 42"]
    tip_and_here(repo, tmp_path, BASE[:2], ["INSERT INTO lake.s VALUES (1000, 'a')"], upd)
    fdl("rebase", tmp_path / "b")
    fdl("commit", tmp_path / "b", "-m", "b")
    got = repo.open_version("main")
    want = reference(tmp_path, BASE[:2], ["INSERT INTO lake.s VALUES (1000, 'a')"], upd)
    assert rows(got, "lake.s") == rows(want, "lake.s")
    # row lineage: the updated row keeps its row id, the appended one gets the next
    assert got.execute("SELECT rowid FROM lake.s WHERE a IN (42, 1000) ORDER BY a").fetchall() == [(42,), (100,)]


def test_two_publishers_on_an_empty_branch(repo, tmp_path):
    tip_and_here(repo, tmp_path, None, ["CREATE TABLE lake.x AS SELECT 1 AS v"],
                 ["CREATE TABLE lake.y AS SELECT 2 AS v"])
    assert fdl("commit", tmp_path / "b", "-m", "b", check=False).returncode == 4
    fdl("rebase", tmp_path / "b")
    fdl("commit", tmp_path / "b", "-m", "b")
    con = repo.open_version("main")
    assert rows(con, "lake.x") == [(1,)] and rows(con, "lake.y") == [(2,)]
    assert len(parents(repo)) == 2


def test_onto_must_descend_from_the_base(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    run_sql(con, BASE[:2])
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    first = repo.head()
    con.execute("INSERT INTO lake.s VALUES (5000, 'two')")
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "two")
    p = fdl("rebase", tmp_path / "w", "--onto", first, check=False)
    assert p.returncode == 5 and "does not descend from" in p.stderr


def barrier_files(folder, pids):
    return {pid for pid in pids if (folder / f"commit.{pid}.reached").exists()}


def wait_for(cond, what, procs):
    deadline = time.monotonic() + 600  # a safety net: nothing here is timed
    while not cond():
        for p in procs:
            if p.poll() not in (None, 0):
                raise AssertionError(f"a writer failed while {what}: {p.stderr.read()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


def test_commit_rebase_four_racing_writers_lose_nothing(repo, tmp_path, ledger):
    published(repo, tmp_path, ["CREATE TABLE lake.t (writer INTEGER, n INTEGER)"])
    works = []
    for k in range(4):
        w = tmp_path / f"w{k}"
        con = repo.checkout(w, setup=True)
        con.execute(f"INSERT INTO lake.t SELECT {k}, range FROM range({10 * (k + 1)})")
        con.execute(f"CREATE TABLE lake.own{k} AS SELECT {k} AS writer")
        if k == 3:
            con.execute("DELETE FROM lake.t WHERE n >= 35")
        con.close()
        works.append(w)
    gate = tmp_path / "gate"
    gate.mkdir()
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="T", FDL_PAUSE_AT="commit", FDL_PAUSE_DIR=str(gate))
    procs = [subprocess.Popen([FDL, "commit", str(w), "--rebase", "-m", f"writer {k}"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k, w in enumerate(works)]
    pids = [p.pid for p in procs]

    def release(k):
        (gate / f"commit.{pids[k]}.reached").unlink()
        (gate / f"commit.{pids[k]}.go").touch()

    # every writer has frozen its catalog before any moves the branch; then
    # writer k wins round k, and each later one loses it, rebases, and
    # freezes again
    waiting = list(range(4))
    wait_for(lambda: barrier_files(gate, pids) == set(pids), "all four to freeze", procs)
    for k in range(4):
        release(k)
        assert procs[k].wait(timeout=600) == 0, procs[k].stderr.read()
        out = procs[k].stdout.read()
        ledger.published(out)
        assert (f"rebased {k} time" in out) if k else ("rebased" not in out), out
        waiting.remove(k)
        for j in waiting:
            release(j)
        wait_for(lambda: barrier_files(gate, [pids[j] for j in waiting]) == {pids[j] for j in waiting},
                 "the losers to rebase and freeze again", procs)
    ids = parents(repo)
    assert len(ids) == 5
    assert [repo.version(i)["message"] for i in ids[1:]] == [f"writer {k}" for k in range(4)]
    con = repo.open_version("main")
    want = sorted((k, n) for k in range(4) for n in range(10 * (k + 1)) if not (k == 3 and n >= 35))
    assert rows(con, "lake.t") == want
    for k in range(4):
        assert rows(con, f"lake.own{k}") == [(k,)]
    assert json.loads(fdl("verify", repo.root, "--deep", "--json").stdout)["problems"] == []


def test_rebase_crash_at_every_write_point_leaves_work_usable(repo, tmp_path, ledger):
    if b"FDL_CRASH_AT" not in open(FDL, "rb").read():
        pytest.fail(f"{FDL} is not a crash-point build (make test uses build/san/fdl)")
    work = two_publishers(repo, tmp_path)
    winner, old = repo.head(), read_json(work / "fdl-work.json")["base"]
    golden = [tmp_path / "g-repo", tmp_path / "g-work"]
    shutil.copytree(repo.root, golden[0])
    shutil.copytree(work, golden[1])
    old_state = snapshot_of(golden[1])
    want = table_rows(reference(tmp_path, BASE, WINNER, LOSER), TABLES)

    def restore():
        for g, live in zip(golden, [repo.root, work]):
            shutil.rmtree(live)
            shutil.copytree(g, live)

    n = 1
    while True:
        restore()
        p = fdl("rebase", work, check=False, env={"FDL_CRASH_AT": str(n)})
        if p.returncode == 0:
            break
        assert "crash point" in p.stderr, (n, p.stderr)
        base = read_json(work / "fdl-work.json")["base"]
        assert base in (old, winner), n
        if base == old:  # as it was, byte for byte
            assert snapshot_of(work) == old_state, n
        again = fdl("rebase", work, check=False)
        assert again.returncode == 0, (n, again.stderr)
        assert not [f for f in work.parent.iterdir() if f.name.startswith(".loser.fdl-rebase-")], n
        fdl("commit", work, "-m", "the loser")
        assert table_rows(repo.open_version("main"), TABLES) == want, n
        assert json.loads(fdl("verify", repo.root, "--deep", "--json").stdout)["problems"] == [], n
        assert not ledger.problems(), n
        ledger.forget(repo.head())  # the next round restores the repository from before it
        n += 1
    # the sibling folder, each delete file, the link, the swap, the cleanup
    print(f"rebase crash points: {n - 1}")
    assert n >= 6, n


def test_two_publishers_sharing_a_bucket(s3repo, tmp_path):
    r = s3repo
    tip_and_here(r, tmp_path, BASE, WINNER, LOSER, names=("winner", "loser"), message="the winner")
    before = set(r.keys())
    own = f"datasets/pop/work/{read_json(tmp_path / 'loser' / 'fdl-work.json')['id']}/"
    mine = {k[len(own):] for k in before if k.startswith(own)}
    # the loser commits with --rebase: one lost race, one rebase, then its version
    p = r.fdl("commit", tmp_path / "loser", "--rebase", "-m", "the loser")
    assert "rebased 1 time" in p.stdout, p.stdout
    # what it publishes are its own files (the same names), and the delete
    # files the rebase wrote again in the bucket; nothing stays in its folder
    new_data = {k.split("/data/", 1)[1] for k in set(r.keys()) - before if "/data/" in k}
    assert {f for f in mine if not f.endswith("-delete.parquet")} <= new_data
    again = new_data - mine
    assert again and all(f.endswith("-delete.parquet") for f in again)
    left = {k.rsplit("/", 1)[-1] for k in r.keys() if k.startswith(own)}
    assert left <= scheduled(tmp_path / "loser") and len(left) == 1
    got = table_rows(r.open_version("main"), TABLES)
    assert got == table_rows(reference(tmp_path, BASE, WINNER, LOSER), TABLES)
    assert r.fdl("verify", r.root, "--deep").returncode == 0
