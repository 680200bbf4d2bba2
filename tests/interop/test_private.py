"""Private repositories (issue 57): `fdl serve` with a token file and TLS (a
CA the test makes with openssl), fdl reading through FDL_TOKEN, the
credentials file and netrc, stock DuckDB after the printed secret, a hostile
host's redirect, and the token in no output and no file."""
import hashlib
import http.client
import json
import http.server
import os
import pathlib
import re
import secrets
import signal
import ssl
import subprocess
import threading
import time

import pytest

from conftest import EXT, Repo, Serving, connect, fdl, fdl_setup, host_serves, host_stops
from test_reader import published  # noqa: F401 (the fixture)


# --- a CA, a certificate for 127.0.0.1 and a token file -------------------------

@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")

    def ssl_(*args):
        subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)

    ssl_("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d / "ca.key", "-out", d / "ca.pem",
         "-days", "2", "-subj", "/CN=fdl test CA")
    ssl_("req", "-newkey", "rsa:2048", "-nodes", "-keyout", d / "host.key", "-out", d / "host.csr",
         "-subj", "/CN=127.0.0.1")
    (d / "ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    ssl_("x509", "-req", "-in", d / "host.csr", "-CA", d / "ca.pem", "-CAkey", d / "ca.key", "-CAcreateserial",
         "-out", d / "host.pem", "-days", "2", "-extfile", d / "ext")
    (d / "host.key").chmod(0o600)
    return d


def token_file(path, **tokens):
    path.write_text("# name token\n" + "".join(f"{n} {t}\n" for n, t in tokens.items()))
    path.chmod(0o600)
    return path


class Private(Serving):
    """fdl serve ROOT with a token file (and TLS unless plain)."""

    def __init__(self, root, tmp, pki, tokens, plain=False, extra=()):
        self.tokens_path = token_file(tmp / f"tokens-{time.monotonic_ns()}", **tokens)
        tls = [] if plain else ["--tls-cert", pki / "host.pem", "--tls-key", pki / "host.key"]
        line = self.start(root, tmp, "--token-file", self.tokens_path, *tls, *extra)
        m = re.search(r"(https?)://[0-9.]+:(\d+)/", line)
        assert m, line + self.log_path.read_text()
        self.port = int(m.group(2))
        self.url = f"{m.group(1)}://127.0.0.1:{self.port}"
        self.ctx = None if plain else ssl.create_default_context(cafile=str(pki / "ca.pem"))

    def request(self, path, headers=None, method="GET", conn=None):
        c = conn or self.connection()
        c.request(method, "/" + path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        if conn is None:
            c.close()
        return r.status, dict(r.getheaders()), body

    def connection(self):
        if self.url.startswith("https"):
            return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=60)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)


@pytest.fixture
def repo(tmp_path):
    """conftest's repo without its init: every test here makes it a copy of
    a published history (published, build_repo), which replaces the folder
    (an init there was thrown away; init runs FDL_BIN in the tests about it)."""
    r = Repo.__new__(Repo)
    r.root = tmp_path / "repo"
    return r


@pytest.fixture
def secret():
    return secrets.token_hex(24)


@pytest.fixture
def private(published, tmp_path, pki, secret):  # noqa: F811
    fdl_setup("iceberg", published.root, "--catalog")  # the Iceberg views and REST catalog are private too
    s = Private(published.root, tmp_path, pki, {"alice": secret, "bob": secrets.token_hex(24)})
    yield s
    s.stop()


def repository_paths(root):
    """One path of each kind the repository serves."""
    root = pathlib.Path(root)
    head = (root / "refs" / "heads" / "main").read_text().strip()
    rel = lambda p: str(p.relative_to(root))  # noqa: E731
    data = next(p for p in (root / "data").rglob("*.parquet"))
    hist = next(p for p in (root / "history").rglob("*") if p.is_file())
    meta = next(p for p in (root / "iceberg").rglob("*.metadata.json"))
    config = next(p for p in (root / "iceberg").rglob("v1/config"))
    return ["fdl.json", "HEAD", "refs/heads/main", f"versions/{head}/version.json",
            f"versions/{head}/ducklake.duckdb", rel(data), rel(hist), rel(meta), rel(config)]


# --- the server ---------------------------------------------------------------

def test_without_a_valid_token_every_repository_path_is_401_and_says_nothing(private, published, secret):  # noqa: F811
    paths = repository_paths(published.root)
    nope = ["versions/not-there/version.json", "no/such/file", "../etc/passwd", "refs/heads/nope"]
    first = None
    for path in paths + nope:
        for headers in ({}, {"Authorization": "Bearer " + "0" * 48}, {"Authorization": f"Bearer {secret}x"},
                        {"Authorization": "Basic dXNlcjp3cm9uZw=="}, {"Authorization": secret}):
            for method in ("GET", "HEAD"):
                status, h, body = private.request(path, headers, method)
                assert status == 401, (path, headers, method, status)
                assert h.get("WWW-Authenticate", "").startswith("Bearer")
                if method == "GET":
                    # the same bytes whatever the path: nothing of the repository, no hint of what exists
                    first = first or body
                    assert body == first, (path, body)
    content = b"".join((pathlib.Path(published.root) / p).read_bytes() for p in paths)
    assert first not in content and b"versions" not in first and len(first) < 80
    # with the token, each path is there (the 401s above hid real files)
    for path in paths:
        status, h, body = private.request(path, {"Authorization": f"Bearer {secret}"})
        assert status == 200, path
        assert body == (pathlib.Path(published.root) / path).read_bytes()
        assert "public" not in h.get("Cache-Control", "")  # never kept by a shared cache
    # the token as a Basic password (netrc-style clients)
    import base64
    basic = base64.b64encode(f"anyone:{secret}".encode()).decode()
    assert private.request("HEAD", {"Authorization": f"Basic {basic}"})[0] == 200
    # a preflight needs no token and says Authorization may be sent
    status, h, _ = private.request("fdl.json", {"Origin": "https://x", "Access-Control-Request-Method": "GET",
                                                "Access-Control-Request-Headers": "authorization"}, "OPTIONS")
    assert status == 204 and "Authorization" in h["Access-Control-Allow-Headers"]
    # one log line a request, naming the token, never holding it
    lines = private.lines()
    assert any(l.endswith(" 200 " + str(len(b"ref: refs/heads/main\n")) + " alice") for l in lines), lines[-5:]
    assert any(re.search(r" 401 \d+ -$", l) for l in lines)
    assert secret not in private.log_path.read_text()


def test_a_token_file_others_can_read_is_refused(published, tmp_path, secret):  # noqa: F811
    f = token_file(tmp_path / "tokens", alice=secret)
    f.chmod(0o640)
    p = fdl("serve", published.root, "--port", "0", "--token-file", f, check=False, timeout=60)
    assert p.returncode != 0 and "chmod 600" in p.stderr and secret not in p.stderr + p.stdout
    f.chmod(0o600)
    f.write_text(f"alice {secret}\nbob tiny9\n")
    p = fdl("serve", published.root, "--port", "0", "--token-file", f, check=False, timeout=60)
    assert p.returncode != 0 and ":2:" in p.stderr and "tiny9" not in p.stderr


def test_tokens_over_plain_http_beyond_loopback_need_insecure(published, tmp_path, secret):  # noqa: F811
    f = token_file(tmp_path / "tokens", alice=secret)
    p = fdl("serve", published.root, "--port", "0", "--bind", "0.0.0.0", "--token-file", f, check=False,
            timeout=60)
    assert p.returncode != 0 and "--insecure" in p.stderr and "--tls-cert" in p.stderr
    # told --insecure, it serves (and still wants the token)
    s = Private(published.root, tmp_path, None, {"alice": secret}, plain=True,
                extra=["--bind", "0.0.0.0", "--insecure"])
    try:
        assert s.request("HEAD")[0] == 401
        assert s.request("HEAD", {"Authorization": f"Bearer {secret}"})[0] == 200
    finally:
        s.p.terminate()
        s.p.wait(timeout=10)
        s.log.close()


def test_a_rotated_token_file_takes_effect_on_sighup_without_dropping_a_request(published, tmp_path, pki):  # noqa: F811
    # a data file large enough that its answer is still being sent while the tokens change
    con = published.checkout(tmp_path / "w2", setup=True)
    con.execute("CREATE TABLE lake.big AS SELECT i, md5(i::VARCHAR) AS h FROM range(400000) t(i)")
    fdl_setup("commit", tmp_path / "w2", "-m", "big")
    con.close()
    big = max((pathlib.Path(published.root) / "data").rglob("*.parquet"), key=lambda p: p.stat().st_size)
    old, new = secrets.token_hex(24), secrets.token_hex(24)
    s = Private(published.root, tmp_path, pki, {"old": old})
    try:
        rel = str(big.relative_to(published.root))
        c = s.connection()
        c.request("GET", "/" + rel, headers={"Authorization": f"Bearer {old}"})
        r = c.getresponse()
        assert r.status == 200
        got = r.read(1)
        token_file(s.tokens_path, new=new)
        s.p.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60  # a safety net: the log line is the event waited for
        while not any("read " in l and "again" in l for l in s.lines()):
            assert time.monotonic() < deadline, s.lines()
            time.sleep(0.05)
        got += r.read()
        c.close()
        assert hashlib.sha256(got).hexdigest() == hashlib.sha256(big.read_bytes()).hexdigest()
        assert s.request("HEAD", {"Authorization": f"Bearer {old}"})[0] == 401
        assert s.request("HEAD", {"Authorization": f"Bearer {new}"})[0] == 200
        # a broken file keeps the tokens there were
        s.tokens_path.write_text("new\n")
        s.p.send_signal(signal.SIGHUP)
        while not any("were not changed" in l for l in s.lines()):
            assert time.monotonic() < deadline, s.lines()
            time.sleep(0.05)
        assert s.request("HEAD", {"Authorization": f"Bearer {new}"})[0] == 200
    finally:
        s.stop()


# --- fdl as a client ----------------------------------------------------------

def reader_env(tmp_path, pki, **more):
    """A reader's own HOME, config and cache (every file fdl writes lands in tmp_path), the test's CA."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
           "NETRC": "", "FDL_CA_FILE": str(pki / "ca.pem"), "FDL_TRACE": "1"}
    env.update(more)
    return env


def give_token(how, env, url, secret):
    """The token where a reader keeps it: FDL_TOKEN, the credentials file or ~/.netrc."""
    home = pathlib.Path(env["HOME"])
    host, port = re.match(r"https?://([^:/]+):(\d+)", url).groups()
    if how == "env":
        env["FDL_TOKEN"] = secret
    elif how == "credentials":
        f = home / ".config" / "fdl" / "credentials"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"# HOST[:PORT] TOKEN\nexample.org {'0' * 32}\n{host}:{port} {secret}\n")
        f.chmod(0o600)
    else:
        f = home / ".netrc"
        f.write_text(f"machine example.org login x password {'0' * 32}\nmachine {host} login reader password {secret}\n")
        f.chmod(0o600)


def files_holding(folder, needle):
    return [str(p) for p in pathlib.Path(folder).rglob("*")
            if p.is_file() and not p.is_symlink() and needle.encode() in p.read_bytes()]


@pytest.mark.parametrize("how", ["env", "credentials", "netrc"])
def test_fdl_reads_a_private_host_with_the_token_and_never_shows_it(private, published, tmp_path, pki, secret,
                                                                     how):  # noqa: F811
    env = reader_env(tmp_path, pki)
    # without a token: a 401 that says where a token goes
    p = fdl("log", private.url, env=env, check=False)
    assert p.returncode != 0 and "HTTP 401" in p.stderr and "FDL_TOKEN" in p.stderr
    give_token(how, env, private.url, secret)
    outputs = []
    log = fdl("log", private.url, env=env)
    assert "two" in log.stdout and "one" in log.stdout
    show = fdl("show", private.url, env=env)
    dest = tmp_path / "clone"
    fdl("clone", private.url, dest, env=env)
    assert (dest / "refs" / "heads" / "main").read_text() == (published.root / "refs" / "heads" / "main").read_text()
    fdl("verify", dest, env=env)  # what was cloned is whole
    q = fdl("query", private.url, "SELECT count(*) AS n FROM pop", "--format", "csv", env=env)
    assert q.stdout.split() == ["n", "990"]
    q1 = fdl("query", f"{private.url}@main~1", "SELECT count(*) AS n FROM pop", "--format", "csv", env=env)
    assert q1.stdout.split() == ["n", "1000"]
    att = fdl("attach", private.url, env=env)
    outputs += [log, show, q, q1, att]
    assert "getenv('FDL_TOKEN')" in att.stdout
    for p in outputs:
        assert secret not in p.stdout + p.stderr, p.args
    assert any("values not shown" in p.stderr for p in outputs)  # FDL_TRACE=1 was on
    # no file fdl wrote holds it, beyond the one the reader wrote
    written = files_holding(tmp_path, secret)
    assert all(w.endswith(("credentials", ".netrc")) or "tokens-" in w for w in written), written
    # what the private host answered is cached for this user alone
    assert (pathlib.Path(env["XDG_CACHE_HOME"]) / "fdl" / "read").stat().st_mode & 0o077 == 0
    # every request fdl made carried the token
    assert not any(re.search(r" 401 \d+ -$", l) for l in private.lines()[-20:])


def test_a_credentials_file_others_can_read_is_refused(private, tmp_path, pki, secret):
    env = reader_env(tmp_path, pki)
    give_token("credentials", env, private.url, secret)
    f = pathlib.Path(env["XDG_CONFIG_HOME"]) / "fdl" / "credentials"
    f.chmod(0o644)
    p = fdl("log", private.url, env=env, check=False)
    assert p.returncode != 0 and "chmod 600" in p.stderr and secret not in p.stdout + p.stderr


def test_stock_duckdb_reads_a_version_after_the_printed_secret(private, published, tmp_path, pki, secret):  # noqa: F811
    env = reader_env(tmp_path, pki, FDL_TOKEN=secret)
    env.pop("FDL_TRACE")
    sql = fdl("attach", private.url, "--show-token", env=env).stdout
    secret_at = sql.index("CREATE OR REPLACE SECRET fdl_http (TYPE http, BEARER_TOKEN")
    assert secret_at < sql.index("ATTACH 'ducklake:")
    con = connect()
    con.execute(sql)
    assert con.execute("SELECT count(*) FROM lake.pop").fetchone() == (990,)
    # the same SQL without a token is refused by the host
    con2 = connect()
    with pytest.raises(Exception):
        con2.execute(sql.replace(secret, "0" * 48))
        con2.execute("SELECT count(*) FROM lake.pop").fetchone()


# --- fdl verify of a host that cannot list --------------------------------------

def static_host(root):
    """A plain static host (Python's http.server): no listing fdl can use, no token."""
    import functools
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    host_serves(f"http://127.0.0.1:{srv.server_address[1]}", root)  # the ledger may map its URLs to root's files
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def orphan(published, tmp_path):
    """A version no ref reaches: committed on a branch, which is then
    deleted (the scene: the release build, fdl_setup)."""
    fdl_setup("branch", published.root, "side")
    con = published.checkout(tmp_path / "side", "--ref", "side", setup=True)
    con.execute("INSERT INTO lake.other VALUES (3)")
    fdl_setup("commit", tmp_path / "side", "-m", "side")
    con.close()
    vid = published.head("side")
    fdl_setup("branch", published.root, "--delete", "side")
    return vid


def test_verify_of_a_private_host_walks_each_refs_chain_and_says_what_it_cannot_see(private, published, tmp_path,
                                                                                     pki, secret):  # noqa: F811
    lost = orphan(published, tmp_path)
    here = fdl("verify", published.root)  # the folder: every version directory, the orphan too
    assert "3 versions checked, 0 problems" in here.stdout, here.stdout
    env = reader_env(tmp_path, pki)
    p = fdl("verify", private.url, env=env, check=False)
    assert p.returncode != 0 and "HTTP 401" in p.stderr and "FDL_TOKEN" in p.stderr
    env["FDL_TOKEN"] = secret
    runs = [fdl("verify", private.url, env=env), fdl("verify", private.url, "--deep", env=env),
            fdl("verify", private.url, "--json", env=env)]
    for r in runs[:2]:
        # the chain of each ref: both versions of main, not the orphan, and a warning that says so
        assert "2 versions checked, 0 problems" in r.stdout, r.stdout
        assert re.search(r"warning: versions/: not listed: .*orphan", r.stdout), r.stdout
        assert lost not in r.stdout
    report = json.loads(runs[2].stdout)
    assert report["ok"] and report["versions_checked"] == 2
    assert [w for w in report["warnings"] if w["where"] == "versions/" and "orphan" in w["warning"]]
    for r in runs:
        assert secret not in r.stdout + r.stderr
    assert "fdl_verify" in runs[1].stderr, runs[1].stderr[-2000:]  # FDL_TRACE=1 traced --deep's DuckDB
    written = files_holding(tmp_path, secret)
    assert all("tokens-" in w for w in written), written
    assert not any(re.search(r" 401 \d+ -$", l) for l in private.lines()[-40:])  # every request carried it
    # what verify reads is what the host holds: a data file changed on it is found
    data = max((pathlib.Path(published.root) / "data").rglob("*.parquet"), key=lambda f: f.stat().st_size)
    good = data.read_bytes()
    try:
        data.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
        bad = fdl("verify", private.url, env=env, check=False)
        rel = str(data.relative_to(published.root))
        assert bad.returncode == 5 and f"problem: {rel}: has sha256" in bad.stdout, bad.stdout + bad.stderr
    finally:
        data.write_bytes(good)


def test_verify_of_a_static_host_finds_a_file_gone_from_it(published, tmp_path):  # noqa: F811
    srv, url = static_host(published.root)
    root = pathlib.Path(published.root)
    try:
        ok = fdl("verify", url)
        assert "2 versions checked, 0 problems" in ok.stdout and "not listed" in ok.stdout, ok.stdout
        # a file version.json lists, gone from the host
        head = published.head()
        files = root / "versions" / head / "files.json"
        kept = files.read_bytes()
        files.unlink()
        try:
            bad = fdl("verify", url, check=False)
        finally:
            files.write_bytes(kept)
        assert bad.returncode == 5, bad.stdout + bad.stderr
        assert f"problem: versions/{head}/files.json" in bad.stdout, bad.stdout
        # the first version's version.json gone: the chain breaks there, and the branch's history index,
        # which copies it, is checked against the host (not this machine's read cache, which holds it)
        first = published.version(head)["parents"][0]
        vj = root / "versions" / first / "version.json"
        kept = vj.read_bytes()
        vj.unlink()
        try:
            bad = fdl("verify", url, check=False)
        finally:
            vj.write_bytes(kept)
        assert bad.returncode == 5, bad.stdout + bad.stderr
        assert f"problem: versions/{head}/version.json: its first parent {first} is not a readable" in bad.stdout
        assert re.search(rf"problem: history/heads/main.json: names version {first} .* cannot be read", bad.stdout)
        assert "1 version checked, 2 problems" in bad.stdout, bad.stdout
    finally:
        host_stops(url)
        srv.shutdown()
        srv.server_close()


# --- a hostile host -----------------------------------------------------------

class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every request with `answer(handler)`, recording its headers."""
    seen = None
    answer = None

    def do_GET(self):
        type(self).seen.append((self.path, dict(self.headers)))
        self.answer()

    do_HEAD = do_GET

    def log_message(self, *a):
        pass


def recorder(answer):
    seen = []
    cls = type("R", (Recorder,), {"seen": seen, "answer": answer})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), cls)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, seen


def test_a_redirect_to_another_host_drops_the_token(published, tmp_path, pki, secret):  # noqa: F811
    # the second server: records what it is sent, and serves the repository so the reads go on
    def serve_file(h):
        f = pathlib.Path(published.root) / h.path.lstrip("/")
        if f.is_file():
            body = f.read_bytes()
            h.send_response(200)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            if h.command == "GET":
                h.wfile.write(body)
        else:
            h.send_response(404)
            h.send_header("Content-Length", "0")
            h.end_headers()
    second, seen2 = recorder(serve_file)
    # the hostile host: every path is a 302 to the second server (another host name, another port)
    to = f"http://localhost:{second.server_address[1]}"

    def redirect(h):
        h.send_response(302)
        h.send_header("Location", to + h.path)
        h.send_header("Content-Length", "0")
        h.end_headers()
    hostile, seen1 = recorder(redirect)
    url = f"http://127.0.0.1:{hostile.server_address[1]}"
    try:
        for how in ("env", "credentials", "netrc"):
            env = reader_env(tmp_path / how, pki)
            give_token(how, env, url, secret)
            p = fdl("log", url, env=env, check=False)
            assert secret not in p.stdout + p.stderr
            fdl("clone", url, tmp_path / how / "clone", env=env, check=False)
            # DuckDB's reads of the data (its http secret scoped to the hostile host) follow the same redirect
            q = fdl("query", url, "SELECT count(*) AS n FROM pop", "--format", "csv", env=env, check=False)
            assert secret not in q.stdout + q.stderr
        assert seen1 and all(h.get("Authorization") == f"Bearer {secret}" for _, h in seen1)  # it was sent there
        assert seen2, "the redirect was followed"
        assert any("/data/" in p for p, _ in seen2), "DuckDB followed it to the data"
        assert not [(p, h) for p, h in seen2 if "Authorization" in h or secret in str(h)]
    finally:
        host_stops(url)
        hostile.shutdown()
        second.shutdown()


def test_duckdbs_command_line_reads_the_printed_sql_with_its_own_fdl_token(private, tmp_path, pki, secret):
    """As printed (no --show-token): the secret reads getenv('FDL_TOKEN') where DuckDB runs."""
    env = reader_env(tmp_path, pki, FDL_TOKEN=secret)
    env.pop("FDL_TRACE")
    sql = fdl("attach", private.url, env=env).stdout
    assert secret not in sql and "getenv('FDL_TOKEN')" in sql
    cli = pathlib.Path(os.sys.executable).parent / "duckdb"
    run = lambda e: subprocess.run([str(cli), "-csv", "-noheader"], input=sql + "SELECT count(*) FROM lake.pop;\n",  # noqa: E731
                                   capture_output=True, text=True, env=dict(os.environ, **e), timeout=300)
    p = run({"FDL_TOKEN": secret})
    assert p.stdout.strip().splitlines()[-1] == "990", p.stderr
    p = run({"FDL_TOKEN": "0" * 48})
    assert "990" not in p.stdout


def test_pyfdl_repository_with_a_token_connects(private, tmp_path, pki, secret):
    from conftest import ROOT
    env = dict(os.environ, **reader_env(tmp_path, pki), FDL_LIBRARY=str(ROOT / "build" / "libfdl.so.2"),
               PYTHONPATH=str(ROOT / "bindings" / "python"), FDL_EXTENSION_DIR=EXT)
    env.pop("FDL_TRACE")
    code = ("import sys, pyfdl\n"
            "url, token = sys.argv[1], sys.stdin.read().strip()\n"
            "try:\n    pyfdl.Repository(url).versions()\nexcept pyfdl.Error as e:\n    print('refused', 'HTTP 401' in str(e))\n"
            "repo = pyfdl.Repository(url, token=token)\n"
            "print(len(repo.versions()), repr(repo))\n"
            "con = repo.connect()\n"
            "print(con.execute('SELECT count(*) FROM pop').fetchone()[0])\n")
    p = subprocess.run([os.sys.executable, "-c", code, private.url], input=secret, capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[:3] == ["refused True", f"2 Repository('{private.url}')", "990"], p.stdout
    assert secret not in p.stdout + p.stderr


# --- the Iceberg REST catalog -------------------------------------------------

def test_iceberg_clients_read_the_catalog_of_a_private_host_with_the_token(published, tmp_path, secret):  # noqa: F811
    """pyiceberg (token=) and DuckDB's iceberg (a secret's TOKEN), as fdl
    iceberg --catalog prints them, through fdl serve with a token file (plain
    HTTP on loopback; Spark's test below goes through TLS, with a trust store
    of the test's CA)."""
    import json
    printed = fdl("iceberg", published.root, "--catalog").stdout
    assert '# spark.conf.set("spark.sql.catalog.fdl.token", os.environ["FDL_TOKEN"])' in printed
    assert 'token=os.environ["FDL_TOKEN"]' in printed
    assert "CREATE SECRET fdl_iceberg (TYPE iceberg, TOKEN getenv('FDL_TOKEN'))" in printed
    path = json.loads(fdl_setup("iceberg", published.root, "--catalog", "--json").stdout)["path"]  # written above
    s = Private(published.root, tmp_path, None, {"alice": secret}, plain=True)
    try:
        uri = f"{s.url}/{path}"
        from pyiceberg.catalog import load_catalog
        from pyiceberg.exceptions import UnauthorizedError
        with pytest.raises(UnauthorizedError):
            load_catalog("nope", type="rest", uri=uri).list_namespaces()
        t = load_catalog("fdl", type="rest", uri=uri, token=secret).load_table(("main", "pop"))
        assert t.scan().to_arrow().num_rows == 990
        con = connect()
        con.execute("LOAD iceberg")
        con.execute(f"CREATE SECRET fdl_iceberg (TYPE iceberg, TOKEN '{secret}')")
        con.execute(f"ATTACH '' AS fdl (TYPE iceberg, ENDPOINT '{uri}', SECRET fdl_iceberg, DEFAULT_SCHEMA 'main')")
        assert con.execute("SELECT count(*) FROM fdl.main.pop").fetchone() == (990,)
        lines = s.lines()
        assert not [l for l in lines if " 401 " in l and not l.endswith(" -")]  # every 401 was a request without one
        assert sum(l.endswith(" alice") for l in lines) >= 4 and secret not in s.log_path.read_text()
    finally:
        s.p.terminate()
        s.p.wait(timeout=10)
        s.log.close()


def test_duckdb_reads_a_private_http_location_with_a_secret_scoped_to_it(published, tmp_path, secret):  # noqa: F811
    """`fdl iceberg --catalog --location URL` of the host itself: the tables'
    metadata and data files are fetched by the reader's own file IO, which the
    catalog's token does not reach. DuckDB's can carry one (an http secret
    scoped to the location, as printed); pyiceberg and Spark read no http(s)
    files at all (docs/private.md)."""
    import duckdb
    s = Private(published.root, tmp_path, None, {"alice": secret}, plain=True)
    try:
        printed = fdl("iceberg", published.root, "--catalog", "--location", s.url).stdout
        assert f"BEARER_TOKEN getenv('FDL_TOKEN'),\n  --   SCOPE '{s.url}/'" in printed, printed
        assert "read no\n  # http(s):// files" in printed
        path = json.loads(fdl_setup("iceberg", published.root, "--catalog", "--location", s.url,
                                    "--json").stdout)["path"]  # written above
        uri = f"{s.url}/{path}"

        def count(files_secret):
            con = connect()
            con.execute("LOAD iceberg")
            con.execute(f"CREATE SECRET fdl_iceberg (TYPE iceberg, TOKEN '{secret}')")
            if files_secret:
                con.execute(f"CREATE SECRET fdl_files (TYPE http, BEARER_TOKEN '{secret}', SCOPE '{s.url}/')")
            con.execute(f"ATTACH '' AS fdl (TYPE iceberg, ENDPOINT '{uri}', SECRET fdl_iceberg, "
                        "DEFAULT_SCHEMA 'main')")
            return con.execute("SELECT count(*) FROM fdl.main.pop").fetchone()
        with pytest.raises(duckdb.Error, match="401"):
            count(False)  # the catalog answers, the files do not: the catalog's token is the catalog's
        before = len(s.lines())
        assert count(True) == (990,)
        lines = s.lines()[before:]
        assert [l for l in lines if " /data/" in l], lines
        assert [l for l in lines if ".metadata.json" in l or "/manifests/" in l], lines
        assert all(l.endswith(" alice") for l in lines), [l for l in lines if not l.endswith(" alice")]
        # pyiceberg: the catalog with its token, then no file IO for the location
        from pyiceberg.catalog import load_catalog
        t = load_catalog("fdl", type="rest", uri=uri, token=secret).load_table(("main", "pop"))
        with pytest.raises(ValueError, match="http"):
            t.scan().to_arrow()
        assert secret not in s.log_path.read_text()
    finally:
        s.p.terminate()
        s.p.wait(timeout=10)
        s.log.close()


SPARK_TLS = """
import sys
from pyspark.sql import SparkSession
uri, store, jars = sys.argv[1:4]
token = sys.stdin.read().strip()
spark = (SparkSession.builder.master("local[1]").appName("fdl-tls")
         .config("spark.jars", jars)
         .config("spark.driver.extraJavaOptions",
                 f"-Djavax.net.ssl.trustStore={store} -Djavax.net.ssl.trustStorePassword=changeit")
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1")
         .getOrCreate())
# the token after the JVM started: builder settings are spark-submit's arguments, which ps shows
for k, v in {"": "org.apache.iceberg.spark.SparkCatalog", ".type": "rest", ".uri": uri, ".token": token,
             ".cache-enabled": "false"}.items():
    spark.conf.set(f"spark.sql.catalog.priv{k}", v)
print("rows", spark.sql("SELECT count(*) AS n FROM priv.main.pop").collect()[0]["n"])
spark.stop()
"""


def test_spark_reads_the_catalog_over_tls_with_a_trust_store_of_the_tests_ca(published, tmp_path, pki,
                                                                              secret):  # noqa: F811
    """Spark through fdl serve's HTTPS, the test's CA in a Java trust store
    made with keytool (its own JVM: the trust store is read when it starts)."""
    from test_iceberg import JARS, SPARK_JARS
    store = tmp_path / "truststore.jks"
    subprocess.run(["keytool", "-importcert", "-noprompt", "-alias", "fdl", "-file", str(pki / "ca.pem"),
                    "-keystore", str(store), "-storepass", "changeit"], check=True, capture_output=True)
    printed = fdl("iceberg", published.root, "--catalog").stdout
    assert '# spark.conf.set("spark.sql.catalog.fdl.token", os.environ["FDL_TOKEN"])' in printed
    path = json.loads(fdl_setup("iceberg", published.root, "--catalog", "--json").stdout)["path"]  # written above
    s = Private(published.root, tmp_path, pki, {"alice": secret})
    try:
        assert s.url.startswith("https://")
        jars = ",".join(str(JARS / j) for j in SPARK_JARS)
        p = subprocess.run([os.sys.executable, "-c", SPARK_TLS, f"{s.url}/{path}", str(store), jars], input=secret,
                           capture_output=True, text=True, timeout=900)
        assert p.returncode == 0 and "rows 990" in p.stdout, p.stderr[-4000:]
        assert secret not in p.stdout + p.stderr
        lines = s.lines()
        assert [l for l in lines if "/v1/" in l and l.endswith(" alice")], lines[-5:]
        assert secret not in s.log_path.read_text()
    finally:
        s.stop()


# --- the page -----------------------------------------------------------------

# what web/index.html asks for before the page's script runs (window.fdlEarly)
EARLY = {"/_fdl/refs.json", "/history/refs.json", "/HEAD", "/fdl.json", "/previews/HEAD.json", "/refs/heads/main"}


def test_the_page_asks_for_the_token_once_then_shows_the_card_and_answers_a_query(repo, tmp_path, secret, histories):
    # e2e.mjs starts a Chromium of its own here (not conftest.chromium): it
    # saves a download, which a browser it connects to cannot hand it
    import json
    from conftest import ROOT
    from test_web import ARTIFACTS, NODE_SCRIPT, build_repo
    build_repo(repo, histories)
    s = Private(repo.root, tmp_path, None, {"reader": secret}, plain=True)
    try:
        # the page's own files are public, the repository's are not
        assert s.request("")[0] == 200 and s.request("_fdl/app.js", method="HEAD")[0] == 200
        assert s.request("_fdl/refs.json")[0] == 401 and s.request("fdl.json")[0] == 401
        plan = {"queries": [{"seq": 1, "sql": "SELECT count(*) AS n FROM population"}],
                "downloads": [{"seq": 1, "table": "main.towns"}],
                "cardQueries": ["SELECT count(*) AS n, sum(people) AS people FROM population"]}
        before = len(s.lines())
        p = subprocess.run(["node", str(NODE_SCRIPT), s.url + "/", str(ARTIFACTS / "private"), json.dumps(plan)],
                           capture_output=True, text=True, timeout=600, cwd=ROOT / "web",
                           env=dict(os.environ, FDL_PAGE_TOKEN=secret))
        assert p.returncode == 0, p.stderr[-4000:]
        seen = json.loads(p.stdout.strip().splitlines()[-1])
        lines = s.lines()[before:]
    finally:
        s.p.terminate()
        s.p.wait(timeout=10)
        s.log.close()
    assert "A private repository" in seen["askedForToken"]
    # the browser logs the 401s of the files index.html asks for at once, before
    # the script runs (one of them made the page ask); nothing else
    assert 1 <= len(seen["consoleErrors"]) <= len(EARLY), seen["consoleErrors"]
    assert all("status of 401" in e for e in seen["consoleErrors"]), seen["consoleErrors"]
    assert seen["title"] == "Population by town"
    con = connect()
    con.execute(fdl_setup("attach", repo.root).stdout)  # the oracle
    n, people = con.execute("SELECT count(*), sum(people) FROM lake.population").fetchone()
    assert seen["cardQueries"][0]["rows"] == [[str(n), str(people)]]
    assert seen["queries"][0]["rows"] == [["250"]]
    # asked once: every later request carried it, DuckDB-Wasm's range reads of the data included
    data = [l for l in lines if " /data/" in l]
    assert data and all(l.endswith(" reader") for l in data), data[:3]
    # refused: only those first requests, each once, all before the token was typed
    refused = [l for l in lines if " 401 " in l]
    assert 1 <= len(refused) <= len(EARLY), refused
    assert sorted(l.split()[3] for l in refused) == sorted(set(l.split()[3] for l in refused)), refused
    assert all(l.split()[3] in EARLY for l in refused), refused
    assert max(lines.index(l) for l in refused) < min(i for i, l in enumerate(lines) if l.endswith(" reader"))
    # kept for the tab only, never in the URL
    assert seen["storage"]["session"] == ["fdl-token"] and seen["storage"]["local"] == []
    assert secret not in seen["storage"]["url"] and "ATTACH" in seen["card"]["duckdb"]
    assert secret not in json.dumps(seen)
    # a data file's link saves the file itself, fetched with the token
    [d] = seen["downloads"]
    assert d["bytes"] == (repo.root / "data" / d["path"]).stat().st_size > 0, d
