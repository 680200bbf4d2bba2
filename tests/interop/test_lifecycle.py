"""The life of a version: retention, withdrawal, gc, other-format catalogs."""
import json
import os
import time

import duckdb

import pytest

from conftest import connect, fdl, fdl_setup, read_json, rows


def history(repo, tmp_path, n=3):
    """n versions on main, version i inserting row i into its own data file:
    the scene every test here starts from, so checked out and committed by
    the release build (tests/README.md, "Shared setups": Scenes); the
    expiry, withdrawal or gc after it runs the build under test."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    ids = []
    for i in range(1, n + 1):
        con.execute(f"INSERT INTO lake.t VALUES ({i})")
        fdl_setup("commit", tmp_path / "w", "-m", f"v{i}")
        ids.append(repo.head())
    return con, ids


def set_retention(repo, days, keep):
    cfg = read_json(repo.root / "fdl.json")
    cfg["retention"] = {"days": days, "keep": keep}
    (repo.root / "fdl.json").write_text(json.dumps(cfg))


def data_files(repo):
    return sorted(str(p.relative_to(repo.root)) for p in (repo.root / "data").rglob("*.parquet"))


def test_expire(repo, tmp_path):
    con, (v1, v2, v3) = history(repo, tmp_path)
    assert json.loads(fdl("expire", repo.root, "--json").stdout)["expired"] == []  # retention null: forever
    set_retention(repo, 0, 1)
    (repo.root / "refs" / "tags" / "release").write_text(v1 + "\n")  # a tag tip is kept
    dry = json.loads(fdl("expire", repo.root, "--dry-run", "--json").stdout)
    assert [e["id"] for e in dry["expired"]] == [v2] and not (repo.root / "versions" / v2 / "expired.json").exists()
    out = fdl("expire", repo.root).stdout
    assert v2 in out and "ducklake.duckdb" in out
    vdir = repo.root / "versions" / v2
    assert sorted(p.name for p in vdir.iterdir()) == ["dataset.json", "expired.json", "version.json"]
    exp = read_json(vdir / "expired.json")
    assert exp["reason"] == "retention" and exp["removed"] == ["ducklake.duckdb", "files.json"]
    p = fdl("query", f"{repo.root}@{v2}", "SELECT 1", check=False)
    assert p.returncode == 7 and exp["expired_at"] in p.stderr
    assert rows(repo.open_version(v1), "lake.t") == [(1,)]
    assert "v2" in fdl("log", repo.root).stdout  # history stays readable
    assert fdl("verify", repo.root, "--deep").returncode == 0
    assert json.loads(fdl("expire", repo.root, "--json").stdout)["expired"] == []  # idempotent
    # days: nothing is older than a day
    set_retention(repo, 1, 0)
    os.remove(repo.root / "refs" / "tags" / "release")
    assert json.loads(fdl("expire", repo.root, "--json").stdout)["expired"] == []


@pytest.mark.quick
def test_withdraw(repo, tmp_path):
    con, (v1, v2, v3) = history(repo, tmp_path)
    f1, f2, f3 = [read_json(repo.root / "versions" / v / "files.json")["tables"]["main.t"]["files"][-1]["path"]
                  for v in (v1, v2, v3)]
    dry = json.loads(fdl("withdraw", repo.root, v2, "--reason", "personal data", "--dry-run", "--json").stdout)
    assert [v["id"] for v in dry["versions"]] == [v2, v3] and dry["data_files"] == [f2]
    assert (repo.root / "data" / f2).exists()
    # main's tip goes with it: refused without --force, and nothing changes
    assert dry["refs"] == ["refs/heads/main"] and "--force" in dry["refused"]
    before = sorted(str(p) for p in repo.root.rglob("*"))
    p = fdl("withdraw", repo.root, v2, "--reason", "personal data", "--remove-version-json", check=False)
    assert p.returncode == 5 and "refs/heads/main" in p.stderr and "--force" in p.stderr
    assert f"would withdraw {v3}" in p.stdout and f"data file would remove: {f2}" in p.stdout
    assert sorted(str(p) for p in repo.root.rglob("*")) == before
    fdl("withdraw", repo.root, v2, "--reason", "personal data", "--remove-version-json", "--force")
    assert not (repo.root / "data" / f2).exists()
    assert (repo.root / "data" / f1).exists() and (repo.root / "data" / f3).exists()
    exp = read_json(repo.root / "versions" / v2 / "expired.json")
    assert exp["reason"] == "withdrawn" and exp["message"] == "personal data" and exp["data_files"] == [f2]
    assert not (repo.root / "versions" / v2 / "version.json").exists()
    assert read_json(repo.root / "versions" / v3 / "expired.json")["reason"] == "withdrawn"
    assert (repo.root / "versions" / v3 / "version.json").exists()
    p = fdl("query", f"{repo.root}@{v3}", "SELECT 1", check=False)
    assert p.returncode == 7 and "withdrawn" in p.stderr
    assert rows(repo.open_version(v1), "lake.t") == [(1,)]
    # rerun: nothing more to do, no error
    again = json.loads(fdl("withdraw", repo.root, v2, "--reason", "personal data", "--json", "--force").stdout)
    assert again["data_files"] == [f2]
    assert fdl("withdraw", repo.root, v1, check=False).returncode == 5  # needs a reason


def test_gc(repo, tmp_path):
    con, (v1, v2) = history(repo, tmp_path, n=2)
    # a writer's files that were never committed: in its own folder, work/<id>/
    con.execute("INSERT INTO lake.t VALUES (99)")
    [work] = [p.stem for p in (repo.root / "work").glob("*.json")]
    uncommitted = sorted(str(p.relative_to(repo.root)) for p in (repo.root / "work" / work).rglob("*.parquet"))
    assert len(uncommitted) == 1
    # another writer publishes meanwhile: its files are referenced and stay
    other = repo.checkout(tmp_path / "o", "--ref", "main", setup=True)
    other.execute("INSERT INTO lake.t VALUES (7)")
    fdl_setup("commit", tmp_path / "o", "-m", "side work")
    # what an interrupted writer left in the data folder, and what someone put there
    stray = repo.root / "data" / "main" / "t" / "ducklake-019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c.parquet"
    stray.write_bytes(b"PAR1")
    (repo.root / "data" / "README.md").write_text("the data of this dataset\n")
    gone = str(stray.relative_to(repo.root))
    before = data_files(repo)
    # within the grace period nothing goes
    assert json.loads(fdl("gc", repo.root, "--json").stdout)["deleted"] == []
    rep = json.loads(fdl("gc", repo.root, "--grace", "0s", "--dry-run", "--json").stdout)
    assert rep["deleted"] == [gone]  # not the uncommitted file, not the README
    assert rep["left_alone"] == ["data/README.md"]
    kept = {w["id"]: w for w in rep["working_catalogs"]}
    assert kept[work]["state"] == "kept" and kept[work]["uncommitted_files"] == uncommitted
    assert data_files(repo) == before
    fdl("gc", repo.root, "--grace", "0s")
    after = data_files(repo)
    assert after == [f for f in before if f != gone] and (repo.root / "data" / "README.md").exists()
    for v in (v1, v2, repo.head()):
        for f in read_json(repo.root / "versions" / v / "files.json")["tables"]["main.t"]["files"]:
            assert f"data/{f['path']}" in after
    assert (repo.root / uncommitted[0]).exists()
    assert fdl("verify", repo.root, "--deep", "--all").returncode == 0
    assert rows(repo.open_version("main"), "lake.t") == [(1,), (2,), (7,)]
    # the working catalog still commits its row
    fdl("checkout", "--abandon", tmp_path / "o")
    p = fdl("commit", tmp_path / "w", "-m", "late", check=False)
    assert p.returncode == 4  # main moved: its own conflict, not a missing file
    # abandoned: its record and uncommitted files go at once, and gc knows nothing of it
    fdl("checkout", "--abandon", tmp_path / "w")
    assert not (tmp_path / "w").exists() and not (repo.root / uncommitted[0]).exists()
    assert not (repo.root / "work" / f"{work}.json").exists()
    # an incomplete version folder goes too
    inc = repo.root / "versions" / "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"
    inc.mkdir()
    (inc / "dataset.json").write_text("{}")
    rep = json.loads(fdl("gc", repo.root, "--grace", "0s", "--json").stdout)
    assert rep["incomplete_versions"] == [inc.name] and not (inc / "dataset.json").exists()
    assert fdl("gc", repo.root, "--grace", "soon", check=False).returncode == 2


def test_gc_after_expire_frees_only_unreferenced(repo, tmp_path):
    con, (v1, v2) = history(repo, tmp_path, n=2)
    # a version on a branch that is then deleted: after it expires, its own file is unreferenced
    fdl_setup("branch", repo.root, "exp", v1)
    e = repo.checkout(tmp_path / "e", "--ref", "exp", setup=True)
    e.execute("INSERT INTO lake.t VALUES (50)")
    fdl_setup("commit", tmp_path / "e", "-m", "experiment")
    exp_id = repo.head("exp")
    [added] = [f["path"] for f in read_json(repo.root / "versions" / exp_id / "files.json")["tables"]["main.t"]["files"]
               if f["rows"] == 1 and f["path"] not in str(read_json(repo.root / "versions" / v1 / "files.json"))]
    fdl_setup("branch", repo.root, "--delete", "exp")
    set_retention(repo, 0, 1)
    # the working catalog still based on it keeps it (its next commit reads it)
    assert exp_id not in [x["id"] for x in json.loads(fdl("expire", repo.root, "--dry-run", "--json").stdout)["expired"]]
    fdl("checkout", "--abandon", tmp_path / "e")
    fdl("expire", repo.root)
    rep = json.loads(fdl("gc", repo.root, "--grace", "0s", "--json").stdout)
    assert rep["deleted"] == [f"data/{added}"]
    assert rows(repo.open_version("main"), "lake.t") == [(1,), (2,)]


def test_catalogs_add(repo, tmp_path):
    con, (v1,) = history(repo, tmp_path, n=1)
    fdl("catalogs", "add", repo.root, v1, "1.0")
    extra = repo.root / "versions" / v1 / "catalogs" / "1.0.duckdb"
    assert extra.exists()
    duck = connect()
    duck.execute(f"ATTACH 'ducklake:{extra}' AS c (READ_ONLY, DATA_PATH '{repo.root}/data/', OVERRIDE_DATA_PATH true)")
    assert rows(duck, "c.t") == rows(repo.open_version(v1), "lake.t")
    p = fdl("catalogs", "add", repo.root, v1, "1.0", check=False)
    assert p.returncode == 9 and "never change" in p.stderr
    p = fdl("catalogs", "add", repo.root, v1, "0.3", check=False)
    assert p.returncode == 5 and "cannot write format 0.3" in p.stderr
    assert fdl("verify", repo.root, "--deep").returncode == 0


def test_withdrawal_refused_while_a_merged_file_still_returns_the_rows(repo, tmp_path):
    """Issue 43: v2 adds a row with an SSN; the publisher merges files and
    commits v3, whose merged file holds the row. Withdrawing v2 alone would
    print "removed" while main still returns the SSN: refused, naming v3,
    whatever --force says, and nothing is written. --clean, a commit, and
    the withdrawal of both then leaves no copy of the row anywhere."""
    con = repo.checkout(tmp_path / "w", setup=True)  # v1..v3 are the scene
    con.execute("CREATE TABLE lake.t (id INTEGER, ssn VARCHAR)")
    con.execute("INSERT INTO lake.t VALUES (1, NULL), (2, NULL)")
    fdl_setup("commit", tmp_path / "w", "-m", "v1")
    v1 = repo.head()
    con.execute("INSERT INTO lake.t VALUES (3, '123-45-6789')")
    fdl_setup("commit", tmp_path / "w", "-m", "v2")
    v2 = repo.head()
    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    fdl_setup("commit", tmp_path / "w", "-m", "v3: files merged")
    v3 = repo.head()
    assert rows(repo.open_version(v3), "lake.t")[-1] == (3, "123-45-6789")
    before = {str(p): p.stat().st_mtime_ns for p in repo.root.rglob("*")}
    for force in ([], ["--force"]):
        p = fdl("withdraw", repo.root, v2, "--reason", "personal data", *force, check=False)
        assert p.returncode == 5 and "refused" in p.stderr and v3 in p.stderr and "removed" not in p.stdout
        assert f"still returns 1 row of main.t that {v2} added: live version {v3}" in p.stdout
    assert {str(p): p.stat().st_mtime_ns for p in repo.root.rglob("*")} == before
    dry = json.loads(fdl("withdraw", repo.root, v2, "--reason", "pii", "--dry-run", "--json").stdout)
    assert dry["still_returned"] == [{"id": v3, "from": v2, "table": "main.t", "rows": 1}]
    assert [v["id"] for v in dry["versions"]] == [v2] and dry["refused"] and "DELETE FROM lake" in dry["cleanup"]
    # the way out: a version without the row, then both withdrawn
    work = tmp_path / "fix"
    fdl_setup("checkout", repo.root, work)  # the working catalog --clean works on
    fdl("withdraw", repo.root, v2, "--reason", "pii", "--clean", work)
    fdl("commit", work, "-m", "v4: without the SSN")
    assert rows(repo.open_version("main"), "lake.t") == [(1, None), (2, None)]
    p = fdl("withdraw", repo.root, v2, "--reason", "pii", check=False)
    assert p.returncode == 5 and v3 in p.stderr  # v3 still returns it, though it is no tip now
    out = fdl("withdraw", repo.root, v2, v3, "--reason", "pii").stdout
    assert f"withdrew {v2}" in out and f"withdrew {v3}" in out
    # no data file anywhere holds the SSN, and what stays reads as before
    for f in (repo.root / "data").rglob("*.parquet"):
        assert b"123-45-6789" not in f.read_bytes(), f
    assert rows(repo.open_version(v1), "lake.t") == [(1, None), (2, None)]
    assert rows(repo.open_version("main"), "lake.t") == [(1, None), (2, None)]
    assert fdl("verify", repo.root, "--deep", "--all").returncode == 0


def test_withdrawing_a_tip_or_a_tag_is_refused_and_a_clean_version_keeps_the_branch(repo, tmp_path):
    """Issue 36: withdrawing July (v2) would take main's tip (v3 shares
    July's file) and the tag on it offline: refused, listing them, nothing
    changed. Publishing a version without July's rows first, with the DuckDB
    statements the refusal prints run as printed in stock DuckDB, keeps main
    readable."""
    con, (v1, v2, v3) = history(repo, tmp_path)
    fdl_setup("tag", repo.root, "v2025", v2)
    [f2] = [f["path"] for f in read_json(repo.root / "versions" / v2 / "files.json")["tables"]["main.t"]["files"]
            if f["rows"] == 1 and f["path"] not in str(read_json(repo.root / "versions" / v1 / "files.json"))]
    before = {str(p): p.stat().st_mtime_ns for p in repo.root.rglob("*")}
    p = fdl("withdraw", repo.root, v2, "--reason", "personal data", check=False)
    assert p.returncode == 5 and "--force" in p.stderr
    assert f"would withdraw {v2}" in p.stdout and f"would withdraw {v3}" in p.stdout
    assert "would name a withdrawn version: refs/heads/main" in p.stdout
    assert "would name a withdrawn version: refs/tags/v2025" in p.stdout
    assert f"data file would remove: {f2}" in p.stdout
    assert {str(p): p.stat().st_mtime_ns for p in repo.root.rglob("*")} == before
    dry = json.loads(fdl("withdraw", repo.root, v2, "--reason", "x", "--dry-run", "--json").stdout)
    assert dry["refs"] == ["refs/heads/main", "refs/tags/v2025"] and dry["data_files"] == [f2]
    # the clean version, by hand: the statements printed, in stock DuckDB
    attach = {v: fdl("attach", repo.root, v, "--as", alias).stdout
              for v, alias in ((v2, "fdl_withdrawn"), (v1, "fdl_parent"))}
    for sql in attach.values():
        con.execute(sql)
    con.execute(dry["cleanup"])
    fdl("commit", tmp_path / "w", "-m", "July without the personal data")
    clean = repo.head()
    assert rows(repo.open_version(clean), "lake.t") == [(1,), (3,)]
    # the tag still names July: it goes first (tags never move), then the withdrawal
    p = fdl("withdraw", repo.root, v2, "--reason", "personal data", check=False)
    assert p.returncode == 5 and "refs/tags/v2025" in p.stderr and "refs/heads/main" not in p.stderr
    fdl("tag", repo.root, "--delete", "v2025")
    fdl("withdraw", repo.root, v2, "--reason", "personal data")
    assert not (repo.root / "data" / f2).exists()
    assert rows(repo.open_version("main"), "lake.t") == [(1,), (3,)]
    assert read_json(repo.root / "versions" / v3 / "expired.json")["reason"] == "withdrawn"
    assert fdl("verify", repo.root, "--deep", "--all").returncode == 0


def test_a_forced_withdrawal_of_a_tip_says_so_on_checkout_and_query(repo, tmp_path):
    con, (v1, v2) = history(repo, tmp_path, n=2)
    fdl("withdraw", repo.root, v2, "--reason", "personal data in a column", "--force")
    for args in (("query", repo.root, "SELECT 1"), ("checkout", repo.root, tmp_path / "again")):
        p = fdl(*args, check=False)
        assert p.returncode == 7, p.stderr
        assert f"{v2} was withdrawn on" in p.stderr and '"personal data in a column"' in p.stderr, p.stderr
    assert "main" in fdl("checkout", repo.root, tmp_path / "again2", check=False).stderr
    assert not (tmp_path / "again").exists()


def test_clean_deletes_the_withdrawn_rows_by_where_they_are_not_by_value(repo, tmp_path):
    """Issue 53.2: v1 = A 10, B 20; v2 adds A 10 again and SECRET 1 and
    changes B; v3 adds C 30 and merges the files. --clean deleted by value,
    so v1's A 10 went too. Now the rows v2 wrote go, by their DuckLake row
    ids (through the merge; B as v2 changed it, whole): v1's A 10 stays, a
    later equal row stays, and
    --dry-run counts exactly those rows per table, in the report and in
    WORK, without changing it."""
    con = repo.checkout(tmp_path / "w", setup=True)  # v1..v3 are the scene
    con.execute("CREATE TABLE lake.t (k VARCHAR, v INTEGER)")
    con.execute("CREATE TABLE lake.u (x INTEGER)")
    con.execute("INSERT INTO lake.t VALUES ('A', 10), ('B', 20)")
    con.execute("INSERT INTO lake.u VALUES (1)")
    fdl_setup("commit", tmp_path / "w", "-m", "v1")
    con.execute("INSERT INTO lake.t VALUES ('A', 10), ('SECRET', 1)")
    con.execute("UPDATE lake.t SET v = 21 WHERE k = 'B'")
    con.execute("INSERT INTO lake.u VALUES (1), (2)")
    fdl_setup("commit", tmp_path / "w", "-m", "v2: a secret")
    v2 = repo.head()
    con.execute("INSERT INTO lake.t VALUES ('C', 30), ('A', 10)")
    con.execute("CHECKPOINT lake")  # v2's rows move into merged files
    fdl_setup("commit", tmp_path / "w", "-m", "v3")
    v3 = repo.head()
    con.close()
    dry = json.loads(fdl("withdraw", repo.root, "main:2", "--reason", "pii", "--dry-run", "--json").stdout)
    assert dry["added"] == [{"from": v2, "table": "main.t", "rows": 3}, {"from": v2, "table": "main.u", "rows": 2}]
    assert "IS NOT DISTINCT FROM" not in dry["cleanup"] and "EXCEPT ALL" not in dry["cleanup"]
    work = tmp_path / "fix"
    fdl_setup("checkout", repo.root, work)  # the working catalog --clean works on
    before = {str(p): p.stat().st_mtime_ns for p in work.rglob("*")}
    out = fdl("withdraw", repo.root, "main:2", "--reason", "pii", "--clean", work, "--dry-run").stdout
    assert out == f"would delete 3 rows of main.t that {v2} added\nwould delete 2 rows of main.u that {v2} added\n"
    assert {str(p): p.stat().st_mtime_ns for p in work.rglob("*")} == before
    out = fdl("withdraw", repo.root, "main:2", "--reason", "pii", "--clean", work).stdout
    assert out == f"deleted 3 rows of main.t that {v2} added\ndeleted 2 rows of main.u that {v2} added\n"
    fdl("commit", work, "-m", "v4: without v2's rows")
    main = repo.open_version("main")
    assert sorted(rows(main, "lake.t")) == [("A", 10), ("A", 10), ("C", 30)]  # v1's and v3's A 10 stay
    assert rows(main, "lake.u") == [(1,)]
    # the withdrawal then goes ahead, with v3, whose merged files hold v2's rows
    fdl("withdraw", repo.root, v2, v3, "--reason", "pii")
    for f in (repo.root / "data").rglob("*.parquet"):
        assert b"SECRET" not in f.read_bytes(), f


def test_clean_finds_the_table_by_its_id_after_a_rename_and_a_new_table_of_its_name(repo, tmp_path):
    """v2 adds SECRET to t; v3 renames t to t_old and creates a new t. --clean
    deleted by v2's names, so the new t lost the row whose row id was
    SECRET's (('N2', 2), a row v3 added) and t_old kept SECRET. It finds the
    table by its DuckLake id now; the statements printed for a publisher
    stop with an error rather than delete in another table."""
    con = repo.checkout(tmp_path / "w", setup=True)  # v1..v3 are the scene
    con.execute("CREATE TABLE lake.t (k VARCHAR, v INTEGER)")
    con.execute("INSERT INTO lake.t VALUES ('A', 10), ('B', 20)")
    fdl_setup("commit", tmp_path / "w", "-m", "v1")
    v1 = repo.head()
    con.execute("INSERT INTO lake.t VALUES ('SECRET', 1)")
    fdl_setup("commit", tmp_path / "w", "-m", "v2: a secret")
    v2 = repo.head()
    con.execute("ALTER TABLE lake.t RENAME TO t_old")
    con.execute("CREATE TABLE lake.t (k VARCHAR, v INTEGER)")
    con.execute("INSERT INTO lake.t VALUES ('N0', 0), ('N1', 1), ('N2', 2), ('N3', 3)")
    fdl_setup("commit", tmp_path / "w", "-m", "v3")
    v3 = repo.head()
    # the statements printed, run as printed in stock DuckDB: refused, nothing deleted
    dry = json.loads(fdl("withdraw", repo.root, v2, "--reason", "pii", "--dry-run", "--json").stdout)
    for v, alias in ((v2, "fdl_withdrawn"), (v1, "fdl_parent")):
        con.execute(fdl("attach", repo.root, v, "--as", alias).stdout)
    try:
        con.execute(dry["cleanup"])
        raise AssertionError("the printed clean-up ran on another table")
    except duckdb.Error as e:
        assert "lake.main.t is not the table the withdrawn version added rows to" in str(e), e
    assert len(rows(con, "lake.t")) == 4 and len(rows(con, "lake.t_old")) == 3
    con.close()
    work = tmp_path / "fix"
    fdl_setup("checkout", repo.root, work)  # the working catalog --clean works on
    out = fdl("withdraw", repo.root, v2, "--reason", "pii", "--clean", work, "--dry-run").stdout
    assert out == f"would delete 1 row of main.t that {v2} added\n"
    fdl("withdraw", repo.root, v2, "--reason", "pii", "--clean", work)
    fdl("commit", work, "-m", "v4: without v2's row")
    main = repo.open_version("main")
    assert rows(main, "lake.t") == [("N0", 0), ("N1", 1), ("N2", 2), ("N3", 3)]
    assert rows(main, "lake.t_old") == [("A", 10), ("B", 20)]
    # v3 shares v2's file (t_old): it goes with it; v4 stays, and no file holds SECRET
    out = fdl("withdraw", repo.root, v2, "--reason", "pii").stdout
    assert f"withdrew {v2}" in out and f"withdrew {v3}" in out and repo.head() not in out
    for f in (repo.root / "data").rglob("*.parquet"):
        assert b"SECRET" not in f.read_bytes(), f
    assert rows(repo.open_version("main"), "lake.t") == [("N0", 0), ("N1", 1), ("N2", 2), ("N3", 3)]


def test_a_row_changed_by_the_version_is_found_after_a_merge_and_a_rewrite(repo, tmp_path):
    """v2 writes SECRET into a row of v1 (UPDATE); v3 only does routine
    maintenance: ducklake_merge_adjacent_files gives the updated row the
    row id DuckLake allotted to v2's file (5, where v2 knew it as 1), and
    ducklake_rewrite_data_files then gives it the rewrite's snapshot; the
    snapshots before are expired. By row id (1) and by snapshot (v2's) the
    row was v2's no more: --clean found nothing, and withdrawing v2 went
    ahead while main returned SECRET. The row ids DuckLake allotted to v2's own files find it."""
    con = repo.checkout(tmp_path / "w", setup=True)  # v1..v3 are the scene
    con.execute("CREATE TABLE lake.t (k VARCHAR, v VARCHAR)")
    con.execute("INSERT INTO lake.t SELECT 'r' || i, 'ok' FROM range(5) t(i)")
    fdl_setup("commit", tmp_path / "w", "-m", "v1")
    con.execute("UPDATE lake.t SET v = 'SECRET' WHERE k = 'r1'")
    fdl_setup("commit", tmp_path / "w", "-m", "v2: a secret")
    v2 = repo.head()
    con.execute("INSERT INTO lake.t VALUES ('x', 'ok')")
    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    con.execute("DELETE FROM lake.t WHERE k = 'x'")
    con.execute("CALL ducklake_rewrite_data_files('lake', delete_threshold => 0)")
    con.execute("CALL ducklake_expire_snapshots('lake', older_than => now())")  # v3 shares no file of v2's
    fdl_setup("commit", tmp_path / "w", "-m", "v3: maintenance")
    v3 = repo.head()
    con.close()
    assert repo.open_version("main").execute("SELECT rowid, snapshot_id FROM lake.t WHERE v = 'SECRET'").fetchall() \
        not in ([(1, 3)], [])  # neither v2's row id nor v2's snapshot
    p = fdl("withdraw", repo.root, v2, "--reason", "pii", "--dry-run", check=False)
    assert f"still returns 1 row of main.t that {v2} added: live version {v3}" in p.stdout, p.stdout
    work = tmp_path / "fix"
    fdl_setup("checkout", repo.root, work)  # the working catalog --clean works on
    out = fdl("withdraw", repo.root, v2, "--reason", "pii", "--clean", work).stdout
    assert out == f"deleted 1 row of main.t that {v2} added\n"
    fdl("commit", work, "-m", "v4: without v2's row")
    assert rows(repo.open_version("main"), "lake.t") == [("r0", "ok"), ("r2", "ok"), ("r3", "ok"), ("r4", "ok")]
    fdl("withdraw", repo.root, v2, v3, "--reason", "pii")
    for f in (repo.root / "data").rglob("*.parquet"):
        assert b"SECRET" not in f.read_bytes(), f
