"""Hostile repositories: a reader of someone else's published dataset never
fetches a URL, reads a local file or follows a symlink that the repository
planted. Each case is a real repository whose frozen catalog (or files) was
edited afterwards, with version.json's sha256 fixed so that only fdl's own
guard stands in the way."""
import hashlib
import http.server
import json
import os
import threading

import duckdb
import pytest

from conftest import EXT, commits, fdl, read_json


def published(repo, tmp_path):
    (vid,), _ = commits(repo, tmp_path / "w", ("one", ["CREATE TABLE lake.t AS SELECT 1 AS a"]))
    return vid


def reseal(repo, vid):
    """Make version.json record the catalog as it now is."""
    vdir = repo.root / "versions" / vid
    doc = read_json(vdir / "version.json")
    data = (vdir / "ducklake.duckdb").read_bytes()
    doc["catalog"]["bytes"] = len(data)
    doc["catalog"]["sha256"] = hashlib.sha256(data).hexdigest()
    (vdir / "version.json").write_text(json.dumps(doc))


def edit_catalog(repo, vid, *statements):
    path = repo.root / "versions" / vid / "ducklake.duckdb"
    con = duckdb.connect()
    con.execute(f"ATTACH '{path}' AS c")
    for s in statements:
        con.execute(s)
    con.close()
    for leftover in path.parent.glob("ducklake.duckdb.wal"):
        leftover.unlink()
    reseal(repo, vid)


@pytest.fixture
def secret(tmp_path):
    """A local file a hostile repository would like to read: a Parquet
    file with the same column, and a CSV."""
    s = tmp_path / "secret"
    s.mkdir()
    duckdb.connect().execute(f"COPY (SELECT 42 AS a) TO '{s / 'secret.parquet'}' (FORMAT parquet)")
    (s / "secret.csv").write_text("a\n4242\n")
    return s


# every command that reads a version's rows or hands them on (issue 53.7/8:
# the Iceberg view and catalog, and a working catalog, took them)
READERS = [("query", "SELECT * FROM t"), ("attach",), ("export", "t", "--to", "out.parquet"), ("iceberg",),
           ("iceberg", "--catalog"), ("checkout", "co"), ("checkout", "co", "--new-branch", "b", "--from", "main")]


def run_readers(repo, tmp_path, expect_in_stderr):
    for cmd, *args in READERS:
        args = [str(tmp_path / a) if a in ("out.parquet", "co") else a for a in args]
        p = fdl(cmd, repo.root, *args, check=False)
        assert p.returncode == 5, (cmd, p.returncode, p.stdout, p.stderr)
        assert expect_in_stderr in p.stderr, (cmd, p.stderr)
        assert "42" not in p.stdout and "ATTACH" not in p.stdout, (cmd, p.stdout)
    # a refusal makes nothing: no file, no view, no working catalog, no branch
    assert not (tmp_path / "out.parquet").exists() and not (tmp_path / "co").exists()
    assert not (repo.root / "iceberg").exists() and not (repo.root / "refs" / "heads" / "b").exists()


def test_an_absolute_data_file_path_is_refused_by_every_reader(repo, tmp_path, secret, ledger):
    ledger.waive(repo.root, "the test plants a hostile catalog in its own repository")
    vid = published(repo, tmp_path)
    edit_catalog(repo, vid, f"UPDATE c.ducklake_data_file SET path = '{secret / 'secret.parquet'}', "
                            "path_is_relative = false")
    run_readers(repo, tmp_path, "absolute path")
    p = fdl("diff", repo.root, vid, vid, "--rows", check=False)
    assert p.returncode == 5 and "absolute path" in p.stderr, p.stderr
    # the catalog resealed with its hash: the default depth sees version.json
    # differ from the history index; --deep names the file, its table and the
    # table's schema
    assert fdl("verify", repo.root, check=False).returncode == 5
    p = fdl("verify", repo.root, "--deep", check=False)
    assert p.returncode != 0 and "absolute path" in p.stdout + p.stderr, (p.stdout, p.stderr)
    assert "data file 0 of table main.t:" in p.stdout + p.stderr, (p.stdout, p.stderr)


def test_a_data_file_path_that_climbs_out_is_refused(repo, tmp_path, secret, ledger):
    ledger.waive(repo.root, "the test plants a hostile catalog in its own repository")
    vid = published(repo, tmp_path)
    climb = "../" * 12 + str(secret / "secret.parquet").lstrip("/")
    edit_catalog(repo, vid, f"UPDATE c.ducklake_data_file SET path = '{climb}'")
    run_readers(repo, tmp_path, f"{climb}' has a '.' or '..' segment")


def test_a_table_path_that_climbs_out_is_refused(repo, tmp_path, secret, ledger):
    ledger.waive(repo.root, "the test plants a hostile catalog in its own repository")
    vid = published(repo, tmp_path)
    edit_catalog(repo, vid, "UPDATE c.ducklake_table SET path = '../../../../../../../../../../tmp/'")
    run_readers(repo, tmp_path, "'..'")


def test_a_url_data_file_is_never_requested(repo, tmp_path, ledger):
    ledger.waive(repo.root, "the test plants a hostile catalog in its own repository")
    seen = []

    class Count(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.path)
            self.send_response(404)
            self.end_headers()

        do_HEAD = do_GET

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Count)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        vid = published(repo, tmp_path)
        url = f"http://127.0.0.1:{httpd.server_address[1]}/x.parquet"
        edit_catalog(repo, vid, f"UPDATE c.ducklake_data_file SET path = '{url}', path_is_relative = false")
        run_readers(repo, tmp_path, "refusing this catalog")
        p = fdl("diff", repo.root, vid, vid, "--rows", check=False)
        assert p.returncode == 5, p.stderr
    finally:
        httpd.shutdown()
    assert seen == []  # no request reached the planted URL


def test_a_view_that_reads_a_local_file_reads_nothing(repo, tmp_path, secret):
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.execute(f"CREATE VIEW lake.v AS SELECT * FROM read_csv('{secret / 'secret.csv'}')")
    con.close()
    fdl("commit", tmp_path / "w", "-m", "a view that reads a local file")
    p = fdl("query", repo.root, "SELECT * FROM v", check=False)
    assert p.returncode == 5 and "4242" not in p.stdout, (p.returncode, p.stdout, p.stderr)
    assert "outside the repository" in p.stderr, p.stderr
    # the user's own SQL is confined the same way
    p = fdl("query", repo.root, f"SELECT * FROM read_csv('{secret / 'secret.csv'}')", check=False)
    assert p.returncode == 5 and "4242" not in p.stdout
    # the tables still read
    assert fdl("query", repo.root, "SELECT a FROM t", "-f", "csv").stdout == "a\n1\n"
    # and the printed SQL says how a stock DuckDB user confines it
    sql = fdl("attach", repo.root).stdout
    assert "enable_external_access = false" in sql
    setup = [l[3:] for l in sql.splitlines() if l.startswith("-- SET")]
    stock = duckdb.connect(config={"extension_directory": EXT, "autoinstall_known_extensions": False})
    stock.execute("LOAD ducklake")
    stock.execute(setup[0])
    stock.execute("\n".join(l for l in sql.splitlines() if not l.startswith("--")))
    assert stock.execute("SELECT a FROM lake.t").fetchall() == [(1,)]
    with pytest.raises(duckdb.Error, match="disabled by configuration"):
        stock.execute("SELECT * FROM lake.v").fetchall()


def test_a_symlinked_data_file_is_not_followed(repo, tmp_path, secret, ledger):
    ledger.waive(repo.root, "the test plants a hostile catalog in its own repository")
    vid = published(repo, tmp_path)
    data = next((repo.root / "data").rglob("*.parquet"))
    kept = data.rename(tmp_path / "kept.parquet")
    # the same size as the catalog records, so only the symlink gives it away
    os.symlink(secret / "secret.parquet", data)
    run_readers(repo, tmp_path, f"{data} leads out of the repository (to {secret / 'secret.parquet'}")
    # a catalog whose views were written before the file was swapped
    data.unlink()
    kept.rename(data)
    fdl("iceberg", repo.root, "--catalog")
    data.rename(kept)
    os.symlink(secret / "secret.parquet", data)
    p = fdl("iceberg", repo.root, "--catalog", check=False)
    assert p.returncode == 5 and f"{data} leads out of the repository" in p.stderr, p.stderr
    p = fdl("verify", repo.root, "--all", check=False)
    assert p.returncode != 0 and "symlink" in p.stdout + p.stderr, p.stdout + p.stderr
    p = fdl("clone", repo.root, tmp_path / "copy", check=False)
    assert p.returncode != 0 and "symlink" in p.stderr, p.stderr
    copied = list((tmp_path / "copy").rglob("*.parquet")) if (tmp_path / "copy").exists() else []
    assert all(f.read_bytes() != (secret / "secret.parquet").read_bytes() for f in copied)


def test_a_symlinked_catalog_is_not_followed(repo, tmp_path, secret, ledger):
    ledger.waive(repo.root, "the test plants a hostile catalog in its own repository")
    vid = published(repo, tmp_path)
    cat = repo.root / "versions" / vid / "ducklake.duckdb"
    moved = secret / "ducklake.duckdb"
    cat.rename(moved)
    os.symlink(moved, cat)
    run_readers(repo, tmp_path, "symlink")
    p = fdl("clone", repo.root, tmp_path / "copy", check=False)
    assert p.returncode != 0 and "symlink" in p.stderr, p.stderr


def test_clone_of_a_source_verify_rejects_fails_and_leaves_no_refs(repo, tmp_path):
    vid = published(repo, tmp_path)
    vdir = repo.root / "versions" / vid
    doc = read_json(vdir / "version.json")
    doc["ducklake"]["snapshot_id"] = 99  # the catalog holds fewer snapshots than it says
    doc["ducklake"]["snapshots"] = [doc["ducklake"]["snapshots"][0], 99]
    (vdir / "version.json").write_text(json.dumps(doc))
    assert fdl("verify", repo.root, check=False).returncode == 5
    for attempt in range(2):  # a rerun does not make it look complete either
        p = fdl("clone", repo.root, tmp_path / "copy", check=False)
        assert p.returncode == 5 and "does not verify" in p.stderr and "snapshot" in p.stderr, p.stderr
        assert not (tmp_path / "copy" / "refs" / "heads" / "main").exists()
