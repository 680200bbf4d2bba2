"""Reading any version from anywhere: fdl query/export/attach on folders and
over HTTP from `fdl serve`, checked against stock DuckDB with httpfs."""
import hashlib
import json
import os
import re
import socket
import subprocess
import urllib.request

import pytest

from conftest import EXT, FDL, Serving, connect, fdl, fdl_setup, read_json, rows


class Server(Serving):
    def __init__(self, root, tmp_path):
        line = self.start(root, tmp_path)
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        self.port = int(m.group(1))
        self.url = f"http://127.0.0.1:{self.port}"


TWO = [("one", ["CREATE TABLE lake.pop (town VARCHAR, people BIGINT)",
                 "INSERT INTO lake.pop SELECT 'town' || i, i * 10 FROM range(1000) t(i)",
                 "CREATE TABLE lake.other (x INTEGER)", "INSERT INTO lake.other VALUES (1), (2)"]),
       ("two", ["DELETE FROM lake.pop WHERE people < 100"])]


@pytest.fixture
def published(repo, histories):
    """A repository with two versions: v1 plain, v2 with a delete (a copy
    of the session's, histories.published)."""
    histories.published(TWO, repo.root)
    return repo


@pytest.fixture
def server(published, tmp_path):
    s = Server(published.root, tmp_path)
    yield s
    s.stop()


def get(url, headers=None, method="GET"):
    req = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def raw(port, path, method="GET"):
    """A request sent as written (no client-side normalisation of the path)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


@pytest.mark.quick
def test_query_formats_and_refs(published):
    root = published.root
    out = fdl("query", root, "SELECT count(*) AS n, sum(people) AS s FROM pop", "--format", "csv").stdout
    assert out == "n,s\n990,4994550\n"
    out = fdl("query", f"{root}@1", "SELECT count(*) AS n FROM pop", "-f", "json").stdout
    assert json.loads(out) == {"n": 1000}
    assert json.loads(fdl("query", f"{root}@main:2", "SELECT count(*) AS n FROM pop", "-f", "json").stdout) == {"n": 990}
    assert json.loads(fdl("query", f"file://{root}@1", "SELECT count(*) AS n FROM pop", "-f", "json").stdout) == {"n": 1000}
    assert f"ducklake:{root}/versions/" in fdl("attach", f"file://{root}").stdout
    table = fdl("query", root, "SELECT town, people FROM pop ORDER BY people DESC LIMIT 2").stdout.splitlines()
    assert table[0].split("|")[0].strip() == "town" and "town999" in table[2]
    lines = fdl("query", root, "SELECT * FROM pop ORDER BY people", "-f", "json").stdout.splitlines()
    assert len(lines) == 990 and json.loads(lines[0]) == {"town": "town10", "people": 100}
    p = fdl("query", root, "SELECT * FROM nosuch", check=False)
    assert p.returncode == 10 and "nosuch" in p.stderr
    assert fdl("query", f"{root}@99", "SELECT 1", check=False).returncode == 3
    assert fdl("query", root, "SELECT 1", "-f", "xml", check=False).returncode == 2


def test_stock_duckdb_reads_through_serve(published, server):
    sql = fdl("attach", server.url, "main").stdout
    assert "LOAD httpfs" in sql and f"'{server.url}/data/'" in sql
    con = connect()
    con.execute(sql)
    over_http = rows(con, "lake.pop")
    local = rows(published.open_version("main"), "lake.pop")
    assert over_http == local and len(local) == 990
    # the data files really were read over HTTP with ranges
    assert any(".parquet" in l and " 206 " in l for l in server.lines())
    first = published.version(published.head())["parents"][0]
    con2 = connect()
    con2.execute(fdl("attach", server.url, first).stdout)
    assert len(rows(con2, "lake.pop")) == 1000


def test_request_counts(published, server, tmp_path):
    env = {"FDL_CACHE_DIR": str(tmp_path / "cache")}
    before = len(server.lines())
    p = fdl("query", f"{server.url}@main", "SELECT count(*) FROM other", "--requests", env=env)
    cold = server.lines()[before:]
    catalog_at = next(i for i, l in enumerate(cold) if "ducklake.duckdb" in l)
    assert catalog_at <= 3, cold  # fdl.json, the ref, version.json, then the catalog
    assert "took 4 requests" in p.stderr
    before = len(server.lines())
    p = fdl("query", f"{server.url}@main", "SELECT count(*) FROM other", "--requests", env=env)
    warm = [l for l in server.lines()[before:] if ".parquet" not in l]
    v = published.head()
    assert warm == ["fdl serve: GET /refs/heads/main 200 37",  # the ref, and whether its version is still live
                    f"fdl serve: GET /versions/{v}/expired.json 404 0"], warm
    assert "took 2 requests" in p.stderr
    # the cache holds the catalog under its sha256
    sha = published.version(published.head())["catalog"]["sha256"]
    assert (tmp_path / "cache" / "objects" / sha).exists()


def test_ranges_byte_by_byte(published, server):
    v = published.head()
    path = f"versions/{v}/ducklake.duckdb"
    data = (published.root / path).read_bytes()
    url = f"{server.url}/{path}"
    n = len(data)
    for header, want in [("bytes=0-99", data[:100]), ("bytes=100-", data[100:]), ("bytes=-37", data[-37:]),
                         (f"bytes={n - 5}-{n + 100}", data[-5:]), ("bytes=7-7", data[7:8])]:
        status, h, body = get(url, {"Range": header})
        assert status == 206 and body == want, header
        assert h["Content-Range"].endswith(f"/{n}")
    status, h, body = get(url, {"Range": f"bytes={n}-"})
    assert status == 416 and h["Content-Range"] == f"bytes */{n}"
    status, h, body = get(url, {"Range": "bytes=0-9,20-29,-5"})
    assert status == 206 and h["Content-Type"].startswith("multipart/byteranges; boundary=")
    boundary = h["Content-Type"].split("boundary=")[1].encode()
    parts = [p for p in body.split(b"--" + boundary) if p.strip(b"\r\n-")]
    got = [p.split(b"\r\n\r\n", 1)[1][:-2] if p.endswith(b"\r\n") else p.split(b"\r\n\r\n", 1)[1] for p in parts]
    assert got == [data[0:10], data[20:30], data[-5:]]
    # the boundary is fresh for every response, so no served file can carry it
    boundaries = {boundary} | {get(url, {"Range": "bytes=0-1,5-6"})[1]["Content-Type"].split("boundary=")[1].encode()
                               for _ in range(3)}
    assert len(boundaries) == 4 and all(len(b) >= 32 for b in boundaries)
    status, h, body = get(url, {"Range": "bytes=oops"})  # malformed: ignored
    assert status == 200 and body == data
    status, h, body = get(url, method="HEAD")
    assert status == 200 and int(h["Content-Length"]) == n and body == b""


def test_headers_etag_cache_cors(published, server):
    v = published.head()
    vj = published.version(v)
    status, h, body = get(f"{server.url}/versions/{v}/ducklake.duckdb")
    assert h["ETag"] == f'"{vj["catalog"]["sha256"]}"'
    assert "immutable" in h["Cache-Control"] and h["Access-Control-Allow-Origin"] == "*"
    assert h["Content-Type"] == "application/octet-stream" and h["Accept-Ranges"] == "bytes"
    status, h2, body = get(f"{server.url}/versions/{v}/ducklake.duckdb", {"If-None-Match": h["ETag"]})
    assert status == 304 and body == b""
    status, h, body = get(f"{server.url}/versions/{v}/version.json")
    assert h["ETag"] == f'"{hashlib.sha256(body).hexdigest()}"' and h["Content-Type"] == "application/json"
    status, h, body = get(f"{server.url}/refs/heads/main")
    assert body.decode().strip() == v and "max-age=5" in h["Cache-Control"]
    assert h["Content-Type"].startswith("text/plain")
    status, h, body = get(f"{server.url}/HEAD")
    assert body == b"ref: refs/heads/main\n" and "immutable" not in h["Cache-Control"]
    [parquet] = list((published.root / "data" / "main" / "other").glob("*.parquet"))
    status, h, body = get(f"{server.url}/data/main/other/{parquet.name}")
    assert status == 200 and h["Content-Type"] == "application/vnd.apache.parquet" and "immutable" in h["Cache-Control"]
    status, h, body = get(f"{server.url}/fdl.json", method="OPTIONS")
    assert status == 204 and "Range" in h["Access-Control-Allow-Headers"]


def test_nothing_outside_the_repository(published, server, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (published.root / "stray.txt").write_text("not part of the layout")
    (published.root / "data" / "link.parquet").symlink_to(secret)
    os.symlink(tmp_path, published.root / "versions" / "escape")
    (published.root / "refs" / "heads" / "main.lock").write_text("x")
    for path in ["/../secret.txt", "/data/../../secret.txt", "/%2e%2e/secret.txt", "/data/%2e%2e/%2e%2e/secret.txt",
                 "/versions/..%2f..%2fsecret.txt", "/data%2f..%2f..%2fsecret.txt", "/data\\..\\fdl.json",
                 "/_fdl/../../secret.txt", "/_fdl/%2e%2e/%2e%2e/secret.txt", "/_fdl/..%2f..%2fsecret.txt"]:
        assert raw(server.port, path) in (403, 404), path
    for path in ["/stray.txt", "/data/link.parquet", "/versions/escape/secret.txt", "/versions/", "/data",
                 "/refs/heads/main.lock", "/nosuch", "/_fdl/", "/_fdl/nosuch.js"]:
        assert raw(server.port, path) == 404, path
    assert raw(server.port, "/") == 200  # the page
    # a decoded NUL, an invalid escape, a control character or a path that is
    # not UTF-8 is a bad request, never a truncated path served
    v = published.head()
    for path in ["/fdl.json%00.txt", "/HEAD%00/../../../../etc/passwd", f"/versions/{v}/version.json%00",
                 "/fdl.json%zz", "/fdl.json%0", "/fdl.json%", "/fdl.json%0a", "/fdl.json%7f", "/data/%c3%28",
                 "/data/%ed%a0%80", "/data/%c0%af", "/fdl.json?x=%00", "/_fdl/app.js%00", "/%00"]:
        assert raw(server.port, path) == 400, path
    assert raw(server.port, f"/versions/{v}/version.json") == 200
    assert raw(server.port, "/data/%e2%82%ac.parquet") == 404  # valid UTF-8, just not there
    assert raw(server.port, "/fdl.json%3Fx") == 404  # an escaped '?' is part of the name
    assert raw(server.port, "/fdl.json", "POST") == 405
    assert raw(server.port, "/fdl.json", "PUT") == 405
    assert raw(server.port, "/fdl.json") == 200


def test_expired_version_refused(published, tmp_path, ledger):
    first = published.version(published.head())["parents"][0]
    ledger.gone(first)  # expired by hand below
    vdir = published.root / "versions" / first
    (vdir / "expired.json").write_text(json.dumps(
        {"reason": "retention", "expired_at": "2026-11-30T00:00:00Z", "message": "old", "removed": ["ducklake.duckdb"]}))
    (vdir / "ducklake.duckdb").unlink()
    p = fdl("query", f"{published.root}@{first}", "SELECT 1", check=False)
    assert p.returncode == 7 and "left retention" in p.stderr and "2026-11-30" in p.stderr
    assert fdl("attach", published.root, first, check=False).returncode == 7
    s = Server(published.root, tmp_path)
    try:
        p = fdl("query", f"{s.url}@{first}", "SELECT 1", check=False, env={"FDL_CACHE_DIR": str(tmp_path / "c")})
        assert p.returncode == 7 and "left retention" in p.stderr
    finally:
        s.stop()


def test_an_expired_version_is_not_read_from_the_cache(published, tmp_path, ledger):
    """The read cache keeps a catalog by its sha256 for good; a version
    expired or withdrawn since it was cached is refused all the same (found
    by the ledger: `fdl attach URL VID` printed an ATTACH of a withdrawn
    version whose catalog was in the cache)."""
    first = published.version(published.head())["parents"][0]
    env = {"FDL_CACHE_DIR": str(tmp_path / "c")}
    s = Server(published.root, tmp_path)
    try:
        assert fdl("query", f"{s.url}@{first}", "SELECT count(*) FROM pop", "-f", "csv", env=env).stdout \
            == "count_star()\n1000\n"
        cfg = read_json(published.root / "fdl.json")
        cfg["retention"] = {"days": 0, "keep": 1}
        (published.root / "fdl.json").write_text(json.dumps(cfg))
        fdl_setup("expire", published.root)  # the scene (test_lifecycle's expiries run FDL_BIN)
        assert (published.root / "versions" / first / "expired.json").exists()
        for cmd in (["query", f"{s.url}@{first}", "SELECT count(*) FROM pop"], ["attach", s.url, first]):
            p = fdl(*cmd, check=False, env=env)
            assert p.returncode == 7 and "left retention" in p.stderr, (cmd, p.returncode, p.stdout, p.stderr)
    finally:
        s.stop()


def test_export_plain_parquet(published, tmp_path):
    root = published.root
    # a table without deletes: from files.json alone
    listing = json.loads(fdl("export", root, "other", "--list").stdout)
    assert listing["source"] == "files.json" and len(listing["files"]) == 1
    fdl("export", root, "other", "--to", tmp_path / "out")
    con = connect()
    assert con.execute(f"SELECT * FROM '{tmp_path}/out/*.parquet' ORDER BY ALL").fetchall() == [(1,), (2,)]
    fdl("export", root, "main.other", "--to", tmp_path / "other.parquet")
    assert con.execute(f"SELECT count(*) FROM '{tmp_path}/other.parquet'").fetchone()[0] == 2
    # a table with deletes: its data files as published are refused with the reason, nothing written
    p = fdl("export", root, "pop", "--to", tmp_path / "pop", check=False)
    assert p.returncode == 5 and "deleted" in p.stderr and "-delete.parquet" in p.stderr
    assert not (tmp_path / "pop").exists()
    # into one file the deletes are applied, from the data files alone: what DuckLake returns
    fdl("export", root, "pop", "--to", tmp_path / "pop.parquet")
    lake = published.open_version("main")
    assert con.execute(f"SELECT * FROM '{tmp_path}/pop.parquet' ORDER BY ALL").fetchall() == \
        lake.execute("SELECT * FROM lake.pop ORDER BY ALL").fetchall()
    # applied through DuckLake it is the same
    fdl("export", root, "pop", "--to", tmp_path / "pop-applied.parquet", "--apply")
    assert con.execute(f"SELECT count(*) FROM '{tmp_path}/pop-applied.parquet'").fetchone()[0] == 990
    assert fdl("export", root, "nosuch", "--to", tmp_path / "x", check=False).returncode == 3
    # README's two examples in turn, each over the other's file, from a relative path (issue 62: the
    # confined --apply exited 10 on DuckDB's own tmp_pop.parquet); nothing else is left in the folder
    out = tmp_path / "again"
    out.mkdir()
    for apply in ([], ["--apply"], ["--apply"], []):
        subprocess.run([FDL, "export", str(root), "pop", "--to", "pop.parquet", *apply], cwd=out, check=True,
                       capture_output=True)
        assert con.execute(f"SELECT count(*) FROM '{out}/pop.parquet'").fetchone()[0] == 990
    assert sorted(os.listdir(out)) == ["pop.parquet"]


def test_export_after_compaction_and_rename(published, tmp_path):
    # the refusal names the call that compacts the table; run as printed, it does
    p = fdl("export", published.root, "pop", "--to", tmp_path / "pop", check=False)
    assert p.returncode == 5 and "CALL ducklake_rewrite_data_files(" in p.stderr, p.stderr
    call = p.stderr[p.stderr.index("CALL "):].strip()
    # the compacted and the renamed versions are the scene of each export
    # (checked out and committed by the release build); every export runs FDL_BIN
    con = published.checkout(tmp_path / "w2", setup=True)
    con.execute(call)
    fdl_setup("commit", tmp_path / "w2", "-m", "compacted")
    files = read_json(published.root / "versions" / published.head() / "files.json")["tables"]["main.pop"]["files"]
    assert files and not any("deletes" in f for f in files)
    fdl("export", published.root, "pop", "--to", tmp_path / "pop.parquet")
    duck = connect()
    assert duck.execute(f"SELECT count(*), min(people) FROM '{tmp_path}/pop.parquet'").fetchone() == (990, 100)
    con.execute("ALTER TABLE lake.other RENAME COLUMN x TO y")
    fdl_setup("commit", tmp_path / "w2", "-m", "renamed")
    p = fdl("export", published.root, "other", "--to", tmp_path / "o", check=False)
    assert p.returncode == 5 and "renamed" in p.stderr
    # into one file the old files' column is read by its field id under the new name
    fdl("export", published.root, "other", "--to", tmp_path / "o.parquet")
    lake = published.open_version("main")
    assert duck.execute(f"SELECT * FROM '{tmp_path}/o.parquet' ORDER BY ALL").fetchall() == \
        lake.execute("SELECT * FROM lake.other ORDER BY ALL").fetchall()
    assert [c[0] for c in duck.execute(f"DESCRIBE SELECT * FROM '{tmp_path}/o.parquet'").fetchall()] == ["y"]


def test_export_without_files_json(published, tmp_path):
    v = published.head()
    vdir = published.root / "versions" / v
    vj = read_json(vdir / "version.json")
    del vj["files"]
    (vdir / "version.json").write_text(json.dumps(vj))
    (vdir / "files.json").unlink()
    listing = json.loads(fdl("export", published.root, "other", "--list").stdout)
    assert listing["source"] == "catalog" and len(listing["files"]) == 1
    p = fdl("export", published.root, "pop", "--to", tmp_path / "p", check=False)
    assert p.returncode == 5 and "deleted" in p.stderr
    fdl("export", published.root, "pop", "--to", tmp_path / "p.parquet")
    assert connect().execute(f"SELECT count(*) FROM '{tmp_path}/p.parquet'").fetchone()[0] == 990


def test_slow_clients_do_not_stop_the_server(published, tmp_path):
    """Slowloris: 500 sockets from 127.0.0.2 to 127.0.0.9 each send a
    request one byte at a time. fdl serve shuts down a connection that has
    not finished its headers within FDL_SERVE_HEADER_TIMEOUT, and near its
    limit the oldest such one, so an honest client on 127.0.0.1 is answered
    while they dribble. Socket timeouts are safety nets only."""
    import threading
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_SERVE_HEADER_TIMEOUT="3")
    log = open(tmp_path / "slow.log", "w")
    p = subprocess.Popen([FDL, "serve", str(published.root), "--port", "0"], stdout=subprocess.PIPE,
                         stderr=log, text=True, env=env)
    try:
        port = int(re.search(r":(\d+)/", p.stdout.readline()).group(1))
        socks, closed_by_server = [], []
        for i in range(500):
            s = socket.socket()
            s.settimeout(30)
            s.bind((f"127.0.0.{2 + i % 8}", 0))
            try:
                s.connect(("127.0.0.1", port))
                s.sendall(b"G")
                socks.append(s)
            except OSError:
                s.close()
        assert len(socks) >= 400  # the server took them (per address: at most 64)
        stop = threading.Event()

        def dribble():
            while not stop.is_set():
                for s in list(socks):
                    try:
                        s.send(b"E")
                    except OSError:
                        socks.remove(s)
                        closed_by_server.append(s)
                stop.wait(1)

        t = threading.Thread(target=dribble, daemon=True)
        t.start()
        # an honest client, several times while they dribble
        for _ in range(5):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/fdl.json", timeout=30) as r:
                assert r.status == 200 and json.loads(r.read())["fdl"] == "0.1"
        # one that dribbles alone is cut off at the deadline (3 s), however
        # steadily it sends: read until the server ends it
        lone = socket.create_connection(("127.0.0.1", port), timeout=60, source_address=("127.0.0.10", 0))
        lone.sendall(b"GET /fdl.json HTTP/1.1\r\n")
        ended = False
        for _ in range(60):
            try:
                lone.send(b"X")
                lone.settimeout(1)
                if lone.recv(1024) == b"":
                    ended = True
                    break
            except socket.timeout:
                continue
            except OSError:
                ended = True
                break
        assert ended, "the server never ended a connection that kept its headers unfinished"
        stop.set()
        t.join()
        for s in socks:
            s.close()
    finally:
        p.terminate()
        p.wait(timeout=30)
        log.close()


def test_root_at_ref_in_every_command(published, server, tmp_path):
    """ROOT@REF is split the same way by every command, also for a root
    without a path (http://host:port@main), never read as user@host."""
    repo = published
    url = server.url
    first = fdl_setup("log", repo.root, "--json").stdout.splitlines()[-1]  # the scene: v1 and its tag
    v1 = json.loads(first)["id"]
    fdl_setup("tag", repo.root, "v1", v1)
    for root in (url, str(repo.root)):
        env = {"FDL_CACHE_DIR": str(tmp_path / "cache")}
        log = fdl("log", f"{root}@main", "--json", env=env).stdout.splitlines()
        assert [json.loads(l)["seq"] for l in log] == [2, 1]
        assert fdl("log", f"{root}@v1", "--json", env=env).stdout.count("\n") == 1
        assert json.loads(fdl("show", f"{root}@main:1", "--json", env=env).stdout)["id"] == v1
        assert json.loads(fdl("show", f"{root}@v1", "--json", env=env).stdout)["id"] == v1
        assert v1 in fdl("attach", f"{root}@main:1", env=env).stdout
        assert fdl("query", f"{root}@v1", "SELECT count(*) FROM other", "-f", "csv", env=env).stdout == \
            "count_star()\n2\n"
        # a ref in both places, or where the command takes none: usage errors
        for args in (["show", f"{root}@main", "1"], ["log", f"{root}@main", "main"],
                     ["diff", f"{root}@main", "1", "2"], ["branch", f"{root}@main"]):
            p = fdl(*args, check=False, env=env)
            assert p.returncode == 2 and "Could not resolve" not in p.stderr, (args, p.stderr)
        # clone takes ROOT@BRANCH: that branch alone is mirrored
        one = tmp_path / f"one-{'http' if root == url else 'folder'}"
        fdl("clone", f"{root}@main", one, env=env)
        assert [json.loads(l)["seq"] for l in fdl("log", one, "--json").stdout.splitlines()] == [2, 1]
        assert fdl("verify", one).returncode == 0
    # the whole repository over HTTP, by its root alone
    fdl("clone", url, tmp_path / "copy", env={"FDL_CACHE_DIR": str(tmp_path / "cache")})
    assert fdl("verify", tmp_path / "copy").returncode == 0
