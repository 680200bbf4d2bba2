"""Teams: a working catalog in PostgreSQL (a real server started here with
Debian's initdb), many writers at once through stock DuckDB, fdl commit
freezing consistent snapshots meanwhile."""
import hashlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from conftest import EXT, Repo, connect, fdl, fdl_setup, read_json, rows

PGBIN = pathlib.Path("/usr/lib/postgresql/15/bin")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    if not (PGBIN / "initdb").exists():
        pytest.fail("PostgreSQL 15 server binaries are missing: make setup installs postgresql-15")
    # the server runs as the postgres user, who cannot enter pytest's root-only folders
    base = pathlib.Path(tempfile.mkdtemp(prefix="fdl-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    as_pg = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
    if as_pg:
        shutil.chown(base, "postgres")
        shutil.chown(sock, "postgres")
    subprocess.run(as_pg + [str(PGBIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"],
                   check=True, capture_output=True)
    port = free_port()
    subprocess.run(as_pg + [str(PGBIN / "pg_ctl"), "-D", str(data), "-w", "-l", str(base / "log"), "-o",
                            f"-p {port} -k {sock} -c listen_addresses=127.0.0.1", "start"],
                   check=True, capture_output=True)
    yield {"port": port, "as_pg": as_pg}
    subprocess.run(as_pg + [str(PGBIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
    shutil.rmtree(base, ignore_errors=True)


def new_db(postgres, name):
    subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(postgres["port"]), "-U", "postgres", "-q", "-c",
                    f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return f"postgres:host=127.0.0.1 port={postgres['port']} user=postgres dbname={name}"


def test_checkout_commit_adopt(postgres, tmp_path):
    repo = Repo(tmp_path)
    work = new_db(postgres, "one")
    sql = fdl("checkout", repo.root, work).stdout
    assert "postgres_scanner" in sql and "ducklake:postgres:" in sql
    con = connect()
    con.execute(sql)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1), (2)")
    fdl("commit", work, "-m", "from postgres")
    assert rows(repo.open_version("main"), "lake.t") == [(1,), (2,)]
    assert fdl("commit", work, "-m", "again", check=False).returncode == 8
    assert fdl("checkout", repo.root, work).stdout == sql  # adopting it again changes nothing
    other = Repo(tmp_path / "other")
    p = fdl("checkout", other.root, work, check=False)
    assert p.returncode == 9 and "already the working catalog" in p.stderr
    # --meta postgres reads the PG* variables
    env = {"PGHOST": "127.0.0.1", "PGPORT": str(postgres["port"]), "PGUSER": "postgres", "PGDATABASE": "one"}
    assert fdl("checkout", repo.root, "--meta", "postgres", env=env).returncode == 0


def test_rebase_says_a_shared_catalog_needs_none(postgres, tmp_path):
    repo = Repo(tmp_path)
    work = new_db(postgres, "rebased")
    fdl_setup("checkout", repo.root, work)  # the scene (test_checkout_commit_adopt's checkout runs FDL_BIN)
    p = fdl("rebase", work, check=False)
    assert p.returncode == 5, p.stderr
    assert "needs no rebase" in p.stderr and "run fdl commit again" in p.stderr


WRITER = textwrap.dedent("""
    import os, sys, time, duckdb
    ext, sql, wid, rounds, per = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    gate = os.path.dirname(sys.argv[2])
    con = duckdb.connect(config={"extension_directory": ext, "autoinstall_known_extensions": False})
    con.execute(sql)

    def wait_for(name):  # the test opens each round; the deadline is only a safety net
        end = time.monotonic() + 300
        while not os.path.exists(os.path.join(gate, name)):
            if time.monotonic() > end:
                raise SystemExit(f"writer {wid}: {name} never came")
            time.sleep(0.01)

    k = 0
    for r in range(rounds):
        wait_for(f"go-{r}")
        for j in range(per):
            if j == per - 1:
                wait_for(f"last-{r}")  # the round's last row comes after the test's commit
            for attempt in range(200):
                try:
                    con.execute("INSERT INTO lake.t VALUES (?, ?)", [wid, k])
                    print(f"ok {wid} {k}", flush=True)
                    break
                except duckdb.Error as e:
                    if "onflict" not in str(e) and "retry" not in str(e).lower():
                        raise
                    time.sleep(0.01)
            else:
                raise SystemExit(f"writer {wid}: gave up on row {k}")
            k += 1
        open(os.path.join(gate, f"done-{r}-{wid}"), "w").close()
""")


def test_writers_and_commits_at_once(postgres, tmp_path):
    """Four writers insert through stock DuckDB in rounds the test opens;
    fdl commit runs while a round is being written and again once it is
    done. Every version must hold exactly its snapshot's rows. The rounds
    force the interleaving: at least one version per round, whatever the
    machine's speed."""
    repo = Repo(tmp_path)
    work = new_db(postgres, "team")
    sql = fdl("checkout", repo.root, work).stdout
    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "attach.sql").write_text(sql)
    con = connect()
    con.execute(sql)
    con.execute("CREATE TABLE lake.t (w INTEGER, k INTEGER)")
    con.close()
    fdl("commit", work, "-m", "schema")
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writers, rounds, per = 4, 3, 5
    procs = [subprocess.Popen([sys.executable, str(script), EXT, str(gate / "attach.sql"), str(i), str(rounds),
                               str(per)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(writers)]
    published = 1
    try:
        for r in range(rounds):
            (gate / f"go-{r}").touch()
            # a commit while the round is being written: it freezes whatever
            # snapshot is latest, or finds nothing new yet
            p = fdl("commit", work, "-m", f"during round {r}", check=False)
            assert p.returncode in (0, 8), p.stderr
            published += p.returncode == 0
            (gate / f"last-{r}").touch()
            for i in range(writers):
                f = gate / f"done-{r}-{i}"
                while not f.exists():
                    assert procs[i].poll() is None, procs[i].communicate()
                    time.sleep(0.01)
            # the round's last rows were written after the commit above
            # ended: this one must find them new and publish
            p = fdl("commit", work, "-m", f"after round {r}", check=False)
            assert p.returncode == 0, p.stderr
            published += 1
    except BaseException:
        for p in procs:
            p.kill()
        raise
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    written = {tuple(map(int, l.split()[1:])) for o, _ in outs for l in o.splitlines() if l.startswith("ok ")}
    assert len(written) == writers * rounds * per
    # every version holds exactly what its snapshot held in the working catalog
    live = connect()
    live.execute(sql)
    v = repo.head()
    checked = 0
    while v:
        doc = repo.version(v)
        n = doc["ducklake"]["snapshot_id"]
        want = live.execute(f"SELECT * FROM lake.t AT (VERSION => {n}) ORDER BY ALL").fetchall()
        assert rows(repo.open_version(v), "lake.t") == want, (v, n)
        ds = read_json(repo.root / "versions" / v / "dataset.json")
        assert ds["tables"][0]["rows"] == len(want)
        checked += 1
        v = doc["parents"][0] if doc["parents"] else None
    assert checked == published and checked >= rounds + 1
    # nothing written is lost
    assert set(rows(live, "lake.t")) == written
    assert set(rows(repo.open_version("main"), "lake.t")) == written
    assert fdl("verify", repo.root).returncode == 0


def test_same_history_same_version_as_sqlite(postgres, tmp_path):
    steps = ["CREATE TABLE lake.t (a INTEGER, b VARCHAR)",
             "INSERT INTO lake.t VALUES (1, 'x'), (2, 'y')",
             "DELETE FROM lake.t WHERE a = 1",
             "ALTER TABLE lake.t ADD COLUMN c DOUBLE",
             "INSERT INTO lake.t VALUES (3, 'z', 0.5)"]
    results = []
    for kind in ("sqlite", "postgres"):
        repo = Repo(tmp_path / kind)
        work = new_db(postgres, "same") if kind == "postgres" else tmp_path / f"{kind}-work"
        con = connect()
        con.execute(fdl("checkout", repo.root, work).stdout)
        for s in steps:
            con.execute(s)
        fdl("commit", work, "-m", "same")
        vdir = repo.root / "versions" / repo.head()
        v = read_json(vdir / "version.json")
        files = read_json(vdir / "files.json")
        # the data files' sha256 are keyed by their (per-run) names: each is
        # its file's, and both sides hash as many
        hashes = files.pop("sha256")
        assert all(hashlib.sha256((repo.root / "data" / k).read_bytes()).hexdigest() == h for k, h in hashes.items())
        files["hashed"] = len(hashes)
        for t in files["tables"].values():
            for f in t["files"]:
                f.pop("path")
                f.pop("bytes")
                f.pop("footer_bytes", None)
                if "deletes" in f:
                    f["deletes"] = {"rows": f["deletes"]["rows"]}
        ds = read_json(vdir / "dataset.json")
        ds.pop("name"), ds.pop("title")
        results.append((v["ducklake"], files, ds, rows(repo.open_version("main"), "lake.t")))
    assert results[0] == results[1]


def test_two_committers_share_one_catalog(postgres, tmp_path, ledger):
    """Two fdl commit of the same PostgreSQL working catalog at once: one
    publishes, the other gets a clean conflict or nothing to commit, and the
    shared record never goes back (the next commit just works)."""
    repo = Repo(tmp_path)
    work = new_db(postgres, "shared")
    con = connect()
    # the checkout and the base version are the scene (the release build's); the racing commits run FDL_BIN
    con.execute(fdl_setup("checkout", repo.root, work).stdout)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    fdl_setup("commit", work, "-m", "base")
    from conftest import FDL
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="x")
    for round_ in range(3):
        con.execute(f"INSERT INTO lake.t VALUES ({round_})")
        procs = [subprocess.Popen([FDL, "commit", work, "-m", f"r{round_}-{i}"], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for i in range(2)]
        codes = sorted(p.wait() for p in procs)
        assert codes[0] == 0 and codes[1] in (0, 4, 8), [p.stderr.read() for p in procs]
        ledger.published("".join(p.stdout.read() for p in procs))
        rec = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(postgres["port"]), "-U", "postgres", "-d",
                              "shared", "-tAc", "SELECT value FROM public.fdl_work WHERE key = 'record'"],
                             capture_output=True, text=True, check=True).stdout
        assert json.loads(rec)["base"] == repo.head()
    assert rows(repo.open_version("main"), "lake.t") == [(0,), (1,), (2,)]


def test_commit_rebase_of_a_shared_catalog_commits_again(postgres, tmp_path, ledger):
    """fdl commit --rebase on a PostgreSQL working catalog: the loser of the
    race (ordered by the pause point `commit`) commits again, with no rebase, and
    its version holds what was written meanwhile."""
    repo = Repo(tmp_path)
    work = new_db(postgres, "again")
    con = connect()
    # the checkout and the base version are the scene (the release build's); the racing commits run FDL_BIN
    con.execute(fdl_setup("checkout", repo.root, work).stdout)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    fdl_setup("commit", work, "-m", "base")
    con.execute("INSERT INTO lake.t VALUES (1)")
    from conftest import FDL
    gate = tmp_path / "gate"
    gate.mkdir()
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="x", FDL_PAUSE_AT="commit", FDL_PAUSE_DIR=str(gate))
    procs = [subprocess.Popen([FDL, "commit", work, "--rebase", "-m", f"c{i}"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]

    def at_gate(p):
        deadline = time.monotonic() + 600  # a safety net only
        while not (gate / f"commit.{p.pid}.reached").exists():
            assert p.poll() is None, p.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        (gate / f"commit.{p.pid}.reached").unlink()
        (gate / f"commit.{p.pid}.go").touch()
    for p in procs:  # both froze the same snapshot
        while not (gate / f"commit.{p.pid}.reached").exists():
            assert p.poll() is None, p.stderr.read()
            time.sleep(0.01)
    at_gate(procs[0])
    assert procs[0].wait() == 0, procs[0].stderr.read()
    ledger.published(procs[0].stdout.read())
    con.execute("INSERT INTO lake.t VALUES (2)")
    at_gate(procs[1])  # loses, commits again, and stops here once more
    at_gate(procs[1])
    assert procs[1].wait() == 0, procs[1].stderr.read()
    out = procs[1].stdout.read()
    ledger.published(out)
    assert "rebased" not in out
    assert rows(repo.open_version("main"), "lake.t") == [(1,), (2,)]
    assert rows(repo.open_version("main:2"), "lake.t") == [(1,)]


def test_a_team_catalog_keeps_the_description(postgres, tmp_path):
    """A PostgreSQL working catalog has no folder for dataset.yml: the base
    version's description carries over to every commit from it."""
    repo = Repo(tmp_path)
    # the described base version is the scene (the release build's); the team's checkout and commits run FDL_BIN
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    (tmp_path / "w" / "dataset.yml").write_text("name: pop\ntitle: Population\nlicenses: [CC-BY-4.0]\n"
                                                "tables:\n  - name: t\n    description: towns\n")
    fdl_setup("commit", tmp_path / "w", "-m", "described")
    work = new_db(postgres, "keeps")
    pg = connect()
    pg.execute(fdl("checkout", repo.root, work).stdout)
    pg.execute("INSERT INTO lake.t VALUES (2)")
    pg.close()
    fdl("commit", work, "-m", "from the team")
    ds = read_json(repo.root / "versions" / repo.head() / "dataset.json")
    assert ds["title"] == "Population" and ds["licenses"] == ["CC-BY-4.0"]
    assert ds["tables"][0]["description"] == "towns" and ds["tables"][0]["rows"] == 2
    assert fdl("commit", work, "-m", "nothing new", check=False).returncode == 8
    # a team's commit moves the history index with the branch
    assert read_json(repo.root / "history" / "heads" / "main.json")["tip"] == repo.head()


def test_a_teammates_uncommitted_files_survive_gc_and_duckdb_clean_up(postgres, tmp_path):
    """Issue 42: a team's PostgreSQL working catalog. One member's rows,
    written (not committed to a version) 40 days ago, survive fdl gc; the
    other member runs DuckLake's whole clean-up in the same catalog; then a
    commit, and every version reads as before."""
    repo = Repo(tmp_path)
    work = new_db(postgres, "keep")
    sql = fdl("checkout", repo.root, work).stdout
    a, b = connect(), connect()
    a.execute(sql)
    b.execute(sql)
    a.execute("CREATE TABLE lake.t AS SELECT range AS i FROM range(20)")
    fdl("commit", work, "-m", "v1")
    v1 = repo.head()
    before = rows(repo.open_version(v1), "lake.t")
    b.execute("INSERT INTO lake.t SELECT range + 100 FROM range(3)")  # the teammate's month of work
    [rec] = (repo.root / "work").glob("*.json")
    assert read_json(rec)["catalog"] == "postgres" and "password" not in read_json(rec)["where"]
    staged = list((repo.root / "work" / rec.stem).rglob("*.parquet"))
    assert len(staged) == 1
    old = time.time() - 40 * 86400
    os.utime(staged[0], (old, old))
    rep = json.loads(fdl("gc", repo.root, "--grace", "0s", "--json").stdout)
    assert rep["deleted"] == [] and staged[0].exists()
    assert rep["working_catalogs"][0]["uncommitted_files"] == [str(staged[0].relative_to(repo.root))]
    a.execute("DELETE FROM lake.t WHERE i < 5")
    for s in ("CALL ducklake_merge_adjacent_files('lake')",
              "CALL ducklake_rewrite_data_files('lake', 't', delete_threshold => 0)",
              "CALL ducklake_expire_snapshots('lake', older_than => now())",
              "CALL ducklake_cleanup_old_files('lake', cleanup_all => true)",
              "CALL ducklake_delete_orphaned_files('lake', cleanup_all => true)"):
        a.execute(s)
    fdl("commit", work, "-m", "v2")
    assert rows(repo.open_version(v1), "lake.t") == before
    got = rows(repo.open_version("main"), "lake.t")
    assert got == [(i,) for i in range(5, 20)] + [(100,), (101,), (102,)]
    assert rows(b, "lake.t") == got  # the team's catalog reads on, from the published files
    assert fdl("verify", repo.root, "--all").returncode == 0
    # abandoning it: the database is no working catalog any more, its tables stay
    fdl("checkout", "--abandon", work)
    assert not rec.exists() and rows(b, "lake.t") == got
    p = fdl("commit", work, "-m", "after", check=False)
    assert p.returncode == 3 and "fdl checkout" in p.stderr
