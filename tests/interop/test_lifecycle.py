"""The life of a version: retention, withdrawal, gc, other-format catalogs."""
import json
import os
import time

from conftest import connect, fdl, read_json, rows


def history(repo, tmp_path, n=3):
    """n versions on main, version i inserting row i into its own data file."""
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    ids = []
    for i in range(1, n + 1):
        con.execute(f"INSERT INTO lake.t VALUES ({i})")
        fdl("commit", tmp_path / "w", "-m", f"v{i}")
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
    assert fdl("verify", repo.root).returncode == 0
    assert json.loads(fdl("expire", repo.root, "--json").stdout)["expired"] == []  # idempotent
    # days: nothing is older than a day
    set_retention(repo, 1, 0)
    os.remove(repo.root / "refs" / "tags" / "release")
    assert json.loads(fdl("expire", repo.root, "--json").stdout)["expired"] == []


def test_withdraw(repo, tmp_path):
    con, (v1, v2, v3) = history(repo, tmp_path)
    f1, f2, f3 = [read_json(repo.root / "versions" / v / "files.json")["tables"]["main.t"]["files"][-1]["path"]
                  for v in (v1, v2, v3)]
    dry = json.loads(fdl("withdraw", repo.root, v2, "--reason", "personal data", "--dry-run", "--json").stdout)
    assert [v["id"] for v in dry["versions"]] == [v2, v3] and dry["data_files"] == [f2]
    assert (repo.root / "data" / f2).exists()
    fdl("withdraw", repo.root, v2, "--reason", "personal data", "--remove-version-json")
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
    again = json.loads(fdl("withdraw", repo.root, v2, "--reason", "personal data", "--json").stdout)
    assert again["data_files"] == [f2]
    assert fdl("withdraw", repo.root, v1, check=False).returncode == 5  # needs a reason


def test_gc(repo, tmp_path):
    con, (v1, v2) = history(repo, tmp_path, n=2)
    # a writer's files that were never committed
    con.execute("INSERT INTO lake.t VALUES (99)")
    # another writer publishes meanwhile: its files are referenced and stay
    other = repo.checkout(tmp_path / "o", "--ref", "main")
    other.execute("INSERT INTO lake.t VALUES (7)")
    fdl("commit", tmp_path / "o", "-m", "side work")
    before = data_files(repo)
    # within the grace period nothing goes
    assert json.loads(fdl("gc", repo.root, "--json").stdout)["deleted"] == []
    rep = json.loads(fdl("gc", repo.root, "--grace", "0s", "--dry-run", "--json").stdout)
    assert len(rep["deleted"]) == 1  # only the uncommitted file
    assert data_files(repo) == before
    fdl("gc", repo.root, "--grace", "0s")
    after = data_files(repo)
    assert len(after) == len(before) - 1
    for v in (v1, v2, repo.head()):
        for f in read_json(repo.root / "versions" / v / "files.json")["tables"]["main.t"]["files"]:
            assert f"data/{f['path']}" in after
    assert fdl("verify", repo.root, "--all").returncode == 0
    assert rows(repo.open_version("main"), "lake.t") == [(1,), (2,), (7,)]
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
    fdl("branch", repo.root, "exp", v1)
    e = repo.checkout(tmp_path / "e", "--ref", "exp")
    e.execute("INSERT INTO lake.t VALUES (50)")
    fdl("commit", tmp_path / "e", "-m", "experiment")
    exp_id = repo.head("exp")
    [added] = [f["path"] for f in read_json(repo.root / "versions" / exp_id / "files.json")["tables"]["main.t"]["files"]
               if f["rows"] == 1 and f["path"] not in str(read_json(repo.root / "versions" / v1 / "files.json"))]
    fdl("branch", repo.root, "--delete", "exp")
    set_retention(repo, 0, 1)
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
    assert fdl("verify", repo.root).returncode == 0
