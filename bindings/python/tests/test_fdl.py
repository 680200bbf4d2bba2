"""The Python binding, as pip installed it, against the installed libfdl and
CLI, and stock DuckDB: a repository made with the CLI is read back through
the C API, and one is written through it.

Environment: PYTHONPATH (where `pip install ./bindings/python` put pyfdl),
FDL_BIN (the installed fdl; pyfdl finds libfdl.so.2 beside it, or
FDL_LIBRARY names it), FDL_EXTENSION_DIR (optional; the installed tree
carries its own)."""
import json
import os
import subprocess
import sys

import duckdb
import pytest

import pyfdl as fdl  # noqa: E402

FDL = os.environ.get("FDL_BIN", "fdl")


def run(*args):
    env = dict(os.environ, FDL_AUTHOR_NAME="Binding", FDL_AUTHOR_EMAIL="b@example.org")
    p = subprocess.run([FDL, *map(str, args)], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout


def connect():
    cfg = {"autoinstall_known_extensions": False}
    if os.environ.get("FDL_EXTENSION_DIR"):
        cfg["extension_directory"] = os.environ["FDL_EXTENSION_DIR"]
    return duckdb.connect(config=cfg)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("binding")
    root = tmp / "repo"
    run("init", root)
    con = connect()
    con.execute(run("checkout", root, tmp / "work"))
    con.execute("CREATE TABLE lake.t AS SELECT i AS n FROM range(5) r(i)")
    run("commit", tmp / "work", "-m", "five rows")
    con.execute("INSERT INTO lake.t VALUES (5), (6)")
    con.execute("ALTER TABLE lake.t ADD COLUMN note VARCHAR")
    run("commit", tmp / "work", "-m", "seven rows and a note")
    con.close()
    return root


def test_versions_match_the_cli(repo):
    with fdl.Repository(str(repo)) as r:
        vs = r.versions()
        assert [v.seq for v in vs] == [2, 1]
        assert [v.message for v in vs] == ["seven rows and a note", "five rows"]
        cli = [json.loads(l)["id"] for l in run("log", repo, "--json").splitlines()]
        assert [v.id for v in vs] == cli
        assert vs[0].author == ("Binding", "b@example.org") and str(vs[0].author) == "Binding <b@example.org>"
        assert vs[0].parents == [vs[1].id]
        assert vs[0].created_at.tzinfo is not None and vs[0].created_at >= vs[1].created_at
        assert [c["kind"] for c in vs[0].changes] == ["add_column"]
        assert r.resolve("main:1") == vs[1].id == r.resolve(vs[1].id[:-6])
        assert [v.id for v in r.versions("main", limit=1)] == [vs[0].id]


def test_attach_sql_opens_each_version_in_stock_duckdb(repo):
    r = fdl.Repository(str(repo))
    for ref, want in [("1", 5), ("main", 7)]:
        con = connect()
        con.execute(r.attach_sql(ref))
        assert con.execute("SELECT count(*) FROM lake.t").fetchone()[0] == want
        con.close()
    assert "AS pop" in r.attach_sql(alias="pop")
    r.close()


def test_dataset_and_errors(repo):
    r = fdl.Repository(str(repo))
    ds = r.dataset("main")
    assert ds["tables"][0]["name"] == "t" and ds["tables"][0]["rows"] == 7
    with pytest.raises(fdl.NotFoundError) as e:
        r.resolve("no-such-branch")
    assert e.value.code == 3 and "no-such-branch" in str(e.value)
    assert isinstance(e.value, fdl.Error) and isinstance(e.value, LookupError)
    with pytest.raises(fdl.NotFoundError) as e:
        fdl.Repository(repo / "missing")  # any os.PathLike
    assert e.value.code == 3
    with pytest.raises(fdl.InvalidError):
        r.resolve("main:x")
    assert fdl.library_version().count(".") == 2


def test_connect_opens_a_version_read_only(repo):
    with fdl.Repository(repo) as r:
        con = r.connect("main:1")
        assert con.execute("SELECT count(*) FROM t").fetchone() == (5,)  # `lake` is the default catalog
        with pytest.raises(Exception):
            con.execute("INSERT INTO lake.t VALUES (9)")
        con.close()


def test_checkout_write_and_commit_from_python(tmp_path):
    """The whole publishing loop without the CLI: checkout, DuckDB, commit;
    a stale working catalog is a ConflictError, and nothing to commit is
    code 8."""
    root = tmp_path / "repo"
    run("init", root)
    with fdl.Repository(root) as r:
        sql = r.checkout(tmp_path / "w")
        stale = r.checkout(tmp_path / "stale")
        con = connect()
        con.execute(sql)
        con.execute("CREATE TABLE lake.towns AS SELECT 'town' || i AS town FROM range(4) r(i)")
        con.close()
        vid = r.commit(tmp_path / "w", "four towns", "Py Thon <py@example.org>")
        v = r.version("main")
        assert v.id == vid and v.message == "four towns" and v.author == ("Py Thon", "py@example.org")
        assert r.connect().execute("SELECT count(*) FROM towns").fetchone() == (4,)
        con = connect()
        con.execute(stale)
        con.execute("CREATE TABLE lake.other AS SELECT 1 AS x")
        con.close()
        with pytest.raises(fdl.ConflictError) as e:
            fdl.commit(tmp_path / "stale", "late", fdl.Author("Late", None))
        assert e.value.code == 4
        with pytest.raises(fdl.Error) as e:
            fdl.commit(tmp_path / "w", "again", "Py Thon <py@example.org>")
        assert e.value.code == 8
