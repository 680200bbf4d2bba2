"""changes, inputs, per-snapshot messages, branches, diff and run."""
import functools
import hashlib
import http.server
import json
import os
import sys
import threading
import textwrap

import pytest

from conftest import EXT, FDL, connect, fdl, fdl_setup, read_json, rows


def commit(work, msg, *extra):
    return fdl("commit", work, "-m", msg, *extra)


def scene(work, msg):
    """A commit of the test's scene: the release build (fdl_setup), for the
    versions a test starts from and asserts nothing about (tests/README.md,
    "Shared setups")."""
    return fdl_setup("commit", work, "-m", msg)


def test_changes_and_breaking(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER, b VARCHAR, c INTEGER)")
    con.execute("CREATE TABLE lake.gone (x INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1, 'x', 1)")
    commit(tmp_path / "w", "one")
    assert "changes" not in repo.version(repo.head())  # a first version has no parent
    con.execute("ALTER TABLE lake.t ADD COLUMN note VARCHAR")
    commit(tmp_path / "w", "add")
    assert repo.version(repo.head())["changes"] == [
        {"table": "main.t", "kind": "add_column", "column": "note", "type": "varchar", "breaking": False}]
    con.execute("ALTER TABLE lake.t RENAME COLUMN b TO bee")
    con.execute("ALTER TABLE lake.t DROP COLUMN c")
    con.execute("ALTER TABLE lake.t ADD COLUMN c BIGINT")  # recreated
    con.execute("DROP TABLE lake.gone")
    con.execute("ALTER TABLE lake.t RENAME TO t2")
    con.execute("CREATE TABLE lake.fresh (y INTEGER)")
    commit(tmp_path / "w", "breaking")
    v = repo.version(repo.head())
    kinds = {(c["kind"], c.get("column")): c for c in v["changes"]}
    assert kinds[("rename_table", None)]["from"] == "main.t" and kinds[("rename_table", None)]["breaking"]
    assert kinds[("rename_column", "bee")]["from"] == "b" and kinds[("rename_column", "bee")]["breaking"]
    assert kinds[("recreate_column", "c")]["breaking"]
    assert kinds[("drop_table", None)]["table"] == "main.gone" and kinds[("drop_table", None)]["breaking"]
    assert kinds[("add_table", None)]["table"] == "main.fresh" and not kinds[("add_table", None)]["breaking"]
    files = read_json(repo.root / "versions" / repo.head() / "files.json")
    assert files["tables"]["main.t2"]["renamed_columns"] is True
    assert files["tables"]["main.fresh"]["renamed_columns"] is False
    # no schema change: an empty list
    con.execute("INSERT INTO lake.fresh VALUES (1)")
    commit(tmp_path / "w", "data only")
    assert repo.version(repo.head())["changes"] == []
    log = fdl("log", repo.root).stdout
    assert "rename_column" in log and "BREAKING" in log


def test_inputs_file_and_url(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    big = tmp_path / "source.bin"
    with open(big, "wb") as f:  # bigger than any buffer: hashed streaming
        for i in range(300):
            f.write(os.urandom(64 * 1024))
    served = tmp_path / "site"
    served.mkdir()
    (served / "data.csv").write_bytes(b"a\n1\n2\n")
    agents = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            agents.append(self.headers.get("User-Agent"))
            super().do_GET()

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(served)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/data.csv"
    try:
        con.execute("INSERT INTO lake.t VALUES (0)")
        gone = url.replace("data.csv", "gone.csv")
        p = fdl("commit", tmp_path / "w", "-m", "x", "--input", f"web:gone={gone}", check=False)
        assert p.returncode == 6 and f"input: {gone}: " in p.stderr and "404" in p.stderr, p.stderr
        commit(tmp_path / "w", "with inputs", "--input", f"local:big={big}", "--input", f"web:csv={url}")
    finally:
        httpd.shutdown()
    version = fdl("--version").stdout.split()[1]
    assert agents == [f"fdl/{version}"] * 2  # the same user agent as every request of the stores
    inputs = repo.version(repo.head())["inputs"]
    assert inputs[0]["source_id"] == "local:big" and inputs[0]["url"] == f"file://{big}"
    assert inputs[0]["sha256"] == hashlib.sha256(big.read_bytes()).hexdigest()
    assert inputs[1] == {"source_id": "web:csv", "sha256": hashlib.sha256(b"a\n1\n2\n").hexdigest(),
                         "retrieved_at": inputs[1]["retrieved_at"], "url": url}
    p = fdl("commit", tmp_path / "w", "-m", "x", "--input", "nosep", check=False)
    assert p.returncode == 5 and "SOURCE_ID=FILE_OR_URL" in p.stderr
    con.execute("INSERT INTO lake.t VALUES (1)")
    p = fdl("commit", tmp_path / "w", "-m", "x", "--input", f"a={tmp_path}/missing.csv", check=False)
    assert p.returncode == 3 and "missing.csv" in p.stderr


def test_snapshot_messages_stay_in_the_catalog(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("BEGIN")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("CALL lake.set_commit_message('builder', 'create t', extra_info => '{\"step\": 1}')")
    con.execute("COMMIT")
    con.execute("BEGIN")
    con.execute("INSERT INTO lake.t VALUES (1)")
    con.execute("CALL lake.set_commit_message('builder', 'load t')")
    con.execute("COMMIT")
    commit(tmp_path / "w", "one")
    v = repo.version(repo.head())
    assert "create t" not in json.dumps(v)  # not copied into version.json
    out = fdl("log", repo.root, "--snapshots").stdout
    assert "builder: create t" in out and "builder: load t" in out and '{"step": 1}' in out


def test_branches(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    scene(tmp_path / "w", "one")
    first = repo.head()
    fdl("branch", repo.root, "dev")
    p = fdl("branch", repo.root, "dev", check=False)
    assert p.returncode == 9 and "already exists" in p.stderr
    assert fdl("branch", repo.root, "bad..name", check=False).returncode == 5
    dev = repo.checkout(tmp_path / "dev", "--ref", "dev")
    dev.execute("INSERT INTO lake.t VALUES (2)")
    commit(tmp_path / "dev", "on dev")
    assert repo.head() == first  # main did not move
    assert repo.version(repo.head("dev"))["parents"] == [first]
    assert rows(repo.open_version("dev"), "lake.t") == [(1,), (2,)]
    assert rows(repo.open_version("main"), "lake.t") == [(1,)]
    listing = fdl("branch", repo.root).stdout.splitlines()
    assert listing[0].startswith("  dev") and listing[1].startswith("* main")
    log = fdl("log", repo.root, "dev", "--json").stdout.splitlines()
    assert [json.loads(x)["seq"] for x in log] == [2, 1]
    assert fdl("branch", repo.root, "--delete", "main", check=False).returncode == 5
    fdl("branch", repo.root, "--delete", "dev")
    assert not (repo.root / "refs" / "heads" / "dev").exists()
    assert fdl("branch", repo.root, "--delete", "dev", check=False).returncode == 3
    # a branch from an old version by id
    fdl("branch", repo.root, "old", first)
    assert repo.head("old") == first


def test_a_dbt_rebuild_is_not_a_breaking_change(repo, tmp_path):
    """dbt's `table` materialisation: x__dbt_tmp is built, x dropped and the
    new table renamed to x. Within one version that is the same table."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.x AS SELECT 1 AS a, 'p' AS b")
    con.execute("CREATE TABLE lake.y (k INTEGER)")
    scene(tmp_path / "w", "one")

    def rebuild(select):
        con.execute(f"CREATE TABLE lake.x__dbt_tmp AS {select}")
        con.execute("DROP TABLE lake.x")
        con.execute("ALTER TABLE lake.x__dbt_tmp RENAME TO x")

    rebuild("SELECT 2 AS a, 'q' AS b")
    commit(tmp_path / "w", "rebuilt, same columns")
    assert repo.version(repo.head()).get("changes", []) == []
    rebuild("SELECT 3 AS a, 4.5 AS c")
    commit(tmp_path / "w", "rebuilt, other columns")
    changes = {(c["kind"], c.get("column"), c["breaking"]) for c in repo.version(repo.head())["changes"]}
    assert changes == {("add_column", "c", False), ("drop_column", "b", True)}
    # a real drop is still one, and a rename still a rename
    con.execute("ALTER TABLE lake.y RENAME TO z")
    commit(tmp_path / "w", "renamed")
    assert [c["kind"] for c in repo.version(repo.head())["changes"]] == ["rename_table"]
    con.execute("DROP TABLE lake.z")
    commit(tmp_path / "w", "dropped")
    assert [(c["kind"], c["breaking"]) for c in repo.version(repo.head())["changes"]] == [("drop_table", True)]
    assert rows(repo.open_version("main"), "lake.x") == [(3, 4.5)]


def test_tags(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    scene(tmp_path / "w", "one")
    first = repo.head()
    assert fdl("tag", repo.root, "v1").stdout == "Created tag v1\n"
    assert (repo.root / "refs/tags/v1").read_text() == first + "\n"
    p = fdl("tag", repo.root, "v1", check=False)
    assert p.returncode == 9 and "tag v1 already exists" in p.stderr
    assert fdl("tag", repo.root, "bad..name", check=False).returncode == 5
    assert fdl("tag", repo.root, "v0", "nosuchref", check=False).returncode == 3
    con.execute("INSERT INTO lake.t VALUES (2)")
    commit(tmp_path / "w", "two")
    assert (repo.root / "refs/tags/v1").read_text() == first + "\n"  # commits never move a tag
    fdl("tag", repo.root, "v2", "main:2")
    listing = fdl("tag", repo.root).stdout.splitlines()
    assert listing[0].split()[:2] == ["v1", first] and "(seq 1) one" in listing[0]
    assert listing[1].split()[0] == "v2" and "(seq 2) two" in listing[1]
    # every reader takes it, as NAME and as ROOT@NAME
    assert rows(repo.open_version("v1"), "lake.t") == [(1,)]
    assert fdl("query", f"{repo.root}@v1", "SELECT count(*) FROM t", "-f", "csv").stdout.splitlines()[1] == "1"
    fdl("tag", repo.root, "--delete", "v1")
    assert not (repo.root / "refs/tags/v1").exists()
    assert fdl("tag", repo.root, "--delete", "v1", check=False).returncode == 3
    assert fdl("tag", repo.root, "v1", "v2", "extra", check=False).returncode == 2


def test_show_says_what_a_version_holds_and_changed(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER, b VARCHAR)")
    con.execute("INSERT INTO lake.t SELECT i, 'x' FROM range(5) r(i)")
    con.execute("CREATE SCHEMA lake.s")
    con.execute("CREATE TABLE lake.s.u AS SELECT 1 AS k")
    scene(tmp_path / "w", "one")
    con.execute("ALTER TABLE lake.t ADD COLUMN c DOUBLE")
    con.execute("DELETE FROM lake.t WHERE a < 2")
    scene(tmp_path / "w", "two")
    out = fdl("show", repo.root).stdout
    assert "changes\n" in out and "add_column" in out and "c" in out
    lines = {l.split()[0]: l.split() for l in out.splitlines()[out.splitlines().index(
        next(l for l in out.splitlines() if l.startswith("table "))) + 1:]}
    live = repo.open_version("main")
    want_t = live.execute("SELECT count(*) FROM lake.t").fetchone()[0]
    assert lines["main.t"][1:3] == [str(want_t), "3"]  # rows as stock DuckDB counts them, 3 columns
    assert lines["s.u"][1:3] == ["1", "1"]
    files = read_json(repo.root / "versions" / repo.head() / "files.json")["tables"]["main.t"]["files"]
    size = sum(f["bytes"] + f.get("deletes", {}).get("bytes", 0) for f in files)
    assert lines["main.t"][3:5] == [str(len(files)), str(size)]
    first = [l.split() for l in fdl("show", repo.root, "main:1").stdout.splitlines()]
    assert ["main.t", "5", "2"] in [l[:3] for l in first]  # the version as it was: 5 rows, 2 columns


def test_diff_rows_match_except(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER, b VARCHAR)")
    con.execute("INSERT INTO lake.t VALUES (1, 'x'), (2, 'y'), (2, 'y'), (3, 'z')")
    scene(tmp_path / "w", "one")
    a = repo.head()
    con.execute("DELETE FROM lake.t WHERE a = 1")
    con.execute("UPDATE lake.t SET b = 'Z' WHERE a = 3")
    con.execute("INSERT INTO lake.t VALUES (4, 'w'), (2, 'y')")
    con.execute("ALTER TABLE lake.t ADD COLUMN c INTEGER")
    scene(tmp_path / "w", "two")
    b = repo.head()
    d = json.loads(fdl("diff", repo.root, a, b, "--rows", "--json").stdout)
    assert d["from"] == a and d["to"] == b
    assert [c["kind"] for c in d["changes"]] == ["add_column"]
    # the same difference computed directly in stock DuckDB
    va, vb = repo.open_version(a), repo.open_version(b)
    old = va.execute("SELECT a, b FROM lake.t").fetchall()
    new = vb.execute("SELECT a, b FROM lake.t").fetchall()
    duck = connect()
    duck.execute("CREATE TABLE o (a INTEGER, b VARCHAR)")
    duck.execute("CREATE TABLE n (a INTEGER, b VARCHAR)")
    duck.executemany("INSERT INTO o VALUES (?, ?)", old)
    duck.executemany("INSERT INTO n VALUES (?, ?)", new)
    added = duck.execute("SELECT * FROM (SELECT * FROM n EXCEPT ALL SELECT * FROM o) ORDER BY ALL").fetchall()
    removed = duck.execute("SELECT * FROM (SELECT * FROM o EXCEPT ALL SELECT * FROM n) ORDER BY ALL").fetchall()
    t = d["rows"]["main.t"]
    assert [(r["a"], r["b"]) for r in t["added"]] == added == [(2, "y"), (3, "Z"), (4, "w")]
    assert [(r["a"], r["b"]) for r in t["removed"]] == removed == [(1, "x"), (3, "z")]
    text = fdl("diff", repo.root, a, b, "--rows", "t").stdout
    assert "rows of main.t: +3 -2" in text and "add_column" in text
    assert fdl("diff", repo.root, a, b, "--rows", "nosuch", check=False).returncode == 3
    assert "no schema changes" in fdl("diff", repo.root, a, a).stdout


def test_diff_rows_skips_unchanged_tables_and_compares_variants(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    for i in range(20):
        con.execute(f"CREATE TABLE lake.same{i} AS SELECT range AS a FROM range({i + 1})")
    con.execute("CREATE TABLE lake.v (k INTEGER, x VARIANT)")
    con.execute("INSERT INTO lake.v VALUES (1, 1::VARIANT), (2, 'two'::VARIANT), (3, [1, 2]::VARIANT)")
    scene(tmp_path / "w", "one")
    a = repo.head()
    con.execute("DELETE FROM lake.v WHERE k = 2")
    con.execute("INSERT INTO lake.v VALUES (4, {'p': 1}::VARIANT)")
    scene(tmp_path / "w", "two")
    b = repo.head()
    p = fdl("diff", repo.root, a, b, "--rows", "--json", env={"FDL_TRACE": "1"})
    d = json.loads(p.stdout)
    for i in range(20):
        assert d["rows"][f"main.same{i}"]["added"] == [] and d["rows"][f"main.same{i}"]["removed"] == []
    # the unchanged tables were never compared row by row: the two counts
    # (added, removed) ran for main.v alone
    excepts = [l for l in p.stderr.splitlines() if "SELECT count(*) FROM (SELECT" in l or "SELECT to_json(fdl_row)" in l]
    assert len(excepts) == 2 and all('"main"."v"' in l for l in excepts), excepts
    v = d["rows"]["main.v"]
    assert [r["k"] for r in v["added"]] == [4] and [r["k"] for r in v["removed"]] == [2]
    text = fdl("diff", repo.root, a, b, "--rows", "v").stdout
    assert "rows of main.v: +1 -1" in text


BUILD = textwrap.dedent("""
    import os, sys, duckdb
    con = duckdb.connect(config={"extension_directory": os.environ["EXT"], "autoinstall_known_extensions": False})
    con.execute(os.environ["FDL_ATTACH"])
    assert os.path.exists(os.environ["FDL_CATALOG"]) and "/work/" in os.environ["FDL_DATA_PATH"]
    assert os.environ["FDL_REPOSITORY"] and os.environ["FDL_BRANCH"] == "main"
    open(os.path.join(os.environ["FDL_WORK"], "base.txt"), "w").write(os.environ["FDL_BASE"])
    mode = sys.argv[1]
    if mode == "fail":
        con.execute("CREATE TABLE lake.partial (a INTEGER)")
        sys.exit(3)
    if mode == "build":
        con.execute("CREATE TABLE IF NOT EXISTS lake.t (a INTEGER)")
        con.execute("INSERT INTO lake.t SELECT count(*) + 1 FROM lake.t")
""")


def test_run_pipeline(repo, tmp_path):
    script = tmp_path / "build.py"
    script.write_text(BUILD)
    env = {"EXT": EXT}
    py = sys.executable
    p = fdl("run", repo.root, "-m", "nightly", "--", py, script, "build", env=env)
    assert "Committed version" in p.stdout
    first = repo.head()
    assert repo.version(first)["message"] == "nightly"
    fdl("run", repo.root, "--", py, script, "build", env=env)
    assert repo.version(repo.head())["parents"] == [first]
    assert repo.version(repo.head())["message"].startswith("fdl run: ")
    assert rows(repo.open_version("main"), "lake.t") == [(1,), (2,)]
    # a failing build: its exit code, nothing committed
    before = repo.head()
    p = fdl("run", repo.root, "--", py, script, "fail", env=env, check=False)
    assert p.returncode == 3 and "nothing committed" in p.stderr and repo.head() == before
    # a build that writes nothing: no version, exit 0
    p = fdl("run", repo.root, "--", py, script, "noop", env=env)
    assert "nothing to commit" in p.stdout and repo.head() == before
    # a command that cannot start
    assert fdl("run", repo.root, "--", "/nonexistent/cmd", check=False).returncode == 127
    assert fdl("run", repo.root, check=False).returncode == 2
    # each run's working catalog is abandoned: the repository keeps no record of it
    assert not list((repo.root / "work").glob("*.json"))


def test_run_reports_conflict(repo, tmp_path, ledger):
    """A publish that lands while the build runs makes the run's commit a conflict."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    scene(tmp_path / "w", "base")
    # a second working catalog on the same base, whose commit lands mid-build
    (tmp_path / "other.sql").write_text(fdl_setup("checkout", repo.root, tmp_path / "other").stdout)
    script = tmp_path / "racy.py"
    script.write_text(textwrap.dedent(f"""
        import os, subprocess, duckdb
        con = duckdb.connect(config={{"extension_directory": os.environ["EXT"]}})
        con.execute(os.environ["FDL_ATTACH"])
        con.execute("INSERT INTO lake.t VALUES (1)")
        other = duckdb.connect(config={{"extension_directory": os.environ["EXT"]}})
        other.execute(open("{tmp_path}/other.sql").read())
        other.execute("INSERT INTO lake.t VALUES (2)")
        subprocess.run(["{FDL}", "commit", "{tmp_path}/other", "-m", "won"], check=True)
    """))
    p = fdl("run", repo.root, "--", sys.executable, script, env={"EXT": EXT}, check=False)
    assert p.returncode == 4 and "moved" in p.stderr
    ledger.record(repo.root, repo.head())  # the commit the build script made
    assert repo.version(repo.head())["message"] == "won"
