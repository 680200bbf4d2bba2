"""Repositories on S3: the real fdl binary against a real S3-compatible server
(moto, with SigV4 signatures checked) and stock DuckDB with httpfs."""
import json
import os
import pathlib
import pty
import subprocess
import time

import pytest

from conftest import FDL, EXT, S3Repo, connect, fdl, host_stops, rows
from s3server import Proxy, S3Server

SAN = "/san/" in FDL


def write(repo, work, *statements, fresh=True, setup=False):
    """Check out (fresh) and run statements in stock DuckDB through the ATTACH fdl printed
    (with setup, the release build's checkout: the test's scene, not what it tests)."""
    run = repo.setup if setup else repo.fdl
    con = repo.checkout(work, setup=setup) if fresh else repo.connect(run("checkout", repo.root, work).stdout)
    for s in statements:
        con.execute(s)
    con.close()


def scene(repo, work, message, *statements):
    """A version of the test's scene: checked out, written and committed by
    the release build (fdl_setup); returns its id."""
    write(repo, work, *statements, setup=True)
    return repo.setup("commit", work, "-m", message, "-q").stdout.strip()


def bucket(server, tmp, endpoint=None):
    """An S3Repo whose init is the test's scene (the release build): for
    tests about what follows it. Init on a bucket runs FDL_BIN in
    test_round_trip_init_commit_log_query and the tests that check init."""
    r = S3Repo(server, tmp, endpoint=endpoint, init=False)
    r.setup("init", r.root)
    return r


@pytest.fixture
def s3scene(s3_server, tmp_path):
    """s3repo, initialized by the release build (bucket above)."""
    return bucket(s3_server, tmp_path)


def query(repo, target, sql):
    p = repo.fdl("query", target, sql, "--format", "csv")
    return p.stdout.strip().splitlines()[1:]


def test_round_trip_init_commit_log_query(s3repo, tmp_path):
    r = s3repo
    assert sorted(k.split("/", 2)[2] for k in r.keys()) == ["HEAD", "fdl.json"]
    assert r.get("datasets/pop/HEAD") == b"ref: refs/heads/main\n"
    steps = [
        ("CREATE TABLE lake.pop (town VARCHAR, people INTEGER)",
         "INSERT INTO lake.pop VALUES ('Ashby', 100), ('Brill', 250)"),
        ("INSERT INTO lake.pop VALUES ('Crewe', 75)", "DELETE FROM lake.pop WHERE town = 'Ashby'"),
        ("ALTER TABLE lake.pop ADD COLUMN area DOUBLE", "UPDATE lake.pop SET area = people / 10"),
    ]
    expected = [
        [("Ashby", 100), ("Brill", 250)],
        [("Brill", 250), ("Crewe", 75)],
        [("Brill", 250, 25.0), ("Crewe", 75, 7.5)],  # DuckDB: / divides as DOUBLE
    ]
    for i, stmts in enumerate(steps):
        work = tmp_path / f"work{i}"
        write(r, work, *stmts)
        r.fdl("commit", work, "-m", f"step {i + 1}")
    # data files went straight to the bucket through httpfs, beside the versions
    keys = r.keys()
    assert any(k.startswith("datasets/pop/data/main/pop/ducklake-") and k.endswith(".parquet") for k in keys)
    assert not any(".fdl-probe" in k for k in keys)
    versions = {k.split("/")[3] for k in keys if k.startswith("datasets/pop/versions/")}
    assert len(versions) == 3
    for v in versions:
        for f in ("version.json", "ducklake.duckdb", "dataset.json", "files.json"):
            assert f"datasets/pop/versions/{v}/{f}" in keys
    log = r.fdl("log", r.root).stdout
    assert [f"step {i}" in log for i in (1, 2, 3)] == [True] * 3
    assert log.index("step 3") < log.index("step 1")
    for seq, want in enumerate(expected, 1):
        got = query(r, f"{r.root}@main:{seq}", "SELECT * FROM pop ORDER BY town")
        assert got == [",".join(str(c) for c in row) for row in want]
    show = r.fdl("show", r.root, "--json").stdout
    assert '"seq": 3' in show
    assert r.fdl("verify", r.root, "--all").returncode == 0


def test_stock_duckdb_attaches_straight_from_the_bucket(s3scene, tmp_path):
    r = s3scene
    scene(r, tmp_path / "w1", "ten", "CREATE TABLE lake.t AS SELECT range AS i FROM range(10)")
    scene(r, tmp_path / "w2", "fifteen", "INSERT INTO lake.t SELECT range + 10 FROM range(5)")
    sql = r.fdl("attach", r.root).stdout
    # DuckDB reads the catalog itself from the bucket, not from fdl's cache
    assert f"ATTACH 'ducklake:{r.root}/versions/" in sql
    assert "CREATE OR REPLACE SECRET" in sql and "TYPE s3" in sql
    con = connect()
    con.execute(sql)
    assert con.execute("SELECT count(*), sum(i) FROM lake.t").fetchone() == (15, 105)
    old = connect()
    old.execute(r.fdl("attach", r.root, "main:1", "--as", "v1").stdout)
    assert old.execute("SELECT count(*), sum(i) FROM v1.t").fetchone() == (10, 45)


def test_checkout_prints_a_secret_and_writes_data_to_the_bucket(s3scene, tmp_path):
    r = s3scene
    out = r.fdl("checkout", r.root, tmp_path / "w").stdout
    assert "LOAD httpfs;" in out and "CREATE OR REPLACE SECRET" in out
    # DuckDB writes into the working catalog's own folder in the bucket, work/<id>/
    wid = json.loads((tmp_path / "w" / "fdl-work.json").read_text())["id"]
    assert f"DATA_PATH '{r.root}/work/{wid}/'" in out
    assert f"datasets/pop/work/{wid}.json" in r.keys()
    # the working catalog folder holds no credentials
    for f in (tmp_path / "w").iterdir():
        if f.is_file():
            assert r.server.secret.encode() not in f.read_bytes(), f


def test_four_committers_one_branch_one_winner_per_round(s3scene, tmp_path):
    r = s3scene
    scene(r, tmp_path / "base", "base", "CREATE TABLE lake.t (writer INTEGER, round INTEGER)")
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="T", **r.env)
    winners = []
    for rnd in range(3):
        works = []
        for w in range(4):
            work = tmp_path / f"r{rnd}w{w}"
            write(r, work, f"INSERT INTO lake.t VALUES ({w}, {rnd})", setup=True)  # scene: the commits race
            works.append(work)
        procs = [subprocess.Popen([FDL, "commit", str(work), "-m", f"round {rnd} writer {w}", "-q"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for w, work in enumerate(works)]
        results = [(p.wait(), p.stdout.read(), p.stderr.read()) for p in procs]
        codes = sorted(code for code, _, _ in results)
        assert codes == [0, 4, 4, 4], results
        for w, (code, out, errtext) in enumerate(results):
            if code == 0:
                winners.append((w, rnd, out.strip()))
            else:
                assert "conflict" in errtext.lower() or "moved" in errtext.lower(), errtext
    # the branch holds every winner, in order, with no version lost
    head = r.head()
    assert head == winners[-1][2]
    got = query(r, r.root, "SELECT writer, round FROM t ORDER BY round")
    assert got == [f"{w},{rnd}" for w, rnd, _ in winners]
    for i, (w, rnd, vid) in enumerate(winners):
        v = r.fdl("show", r.root, vid, "--json").stdout
        assert f'"seq": {i + 2}' in v
    assert r.fdl("verify", r.root).returncode == 0
    # the history index follows the last winner, and gives the same log
    assert json.loads(r.get("datasets/pop/history/heads/main.json"))["tip"] == head
    ids = [json.loads(line)["id"] for line in r.fdl("log", r.root, "--json").stdout.splitlines()]
    assert ids[:len(winners)] == [vid for _, _, vid in reversed(winners)] and len(ids) == len(winners) + 1


def test_multipart_upload_round_trip(s3scene, tmp_path):
    r = s3scene
    write(r, tmp_path / "w", "CREATE TABLE lake.t AS SELECT range AS i FROM range(100)", setup=True)
    small = {"FDL_S3_MULTIPART_THRESHOLD": "65536", "FDL_S3_PART_SIZE": "65536"}
    vid = r.fdl("commit", tmp_path / "w", "-m", "in parts", "-q", env=small).stdout.strip()
    size = len(r.get(f"datasets/pop/versions/{vid}/ducklake.duckdb"))
    assert size > 4 * 65536  # it really went up in several parts
    etag = r.server.client().head_object(Bucket=r.bucket, Key=f"datasets/pop/versions/{vid}/ducklake.duckdb")["ETag"]
    assert "-" in etag  # S3 marks a multipart object's ETag with its part count
    con = connect()
    con.execute(r.fdl("attach", r.root).stdout)
    assert con.execute("SELECT sum(i) FROM lake.t").fetchone() == (4950,)


@pytest.mark.skipif(not SAN, reason="crash points exist only in the test build (make interop)")
def test_interrupted_multipart_upload_leaves_no_visible_version(s3scene, tmp_path):
    r = s3scene
    first = scene(r, tmp_path / "w1", "one", "CREATE TABLE lake.t AS SELECT 1 AS i")
    write(r, tmp_path / "w2", "INSERT INTO lake.t VALUES (2)", setup=True)
    small = {"FDL_S3_MULTIPART_THRESHOLD": "65536", "FDL_S3_PART_SIZE": "65536"}
    # write 1 starts the catalog upload, 2 and 3 are its first parts: die before the third part
    p = r.fdl("commit", tmp_path / "w2", "-m", "two", check=False, env=dict(small, FDL_CRASH_AT="4"))
    assert p.returncode != 0 and "crash point 4" in p.stderr
    uploads = r.server.client().list_multipart_uploads(Bucket=r.bucket).get("Uploads", [])
    assert len(uploads) == 1 and uploads[0]["Key"].endswith("/ducklake.duckdb")
    new = uploads[0]["Key"].split("/")[3]
    assert new != first
    assert not [k for k in r.keys() if f"/{new}/" in k]  # not even a partial object
    assert r.head() == first
    assert query(r, r.root, "SELECT i FROM t") == ["1"]
    assert r.fdl("verify", r.root, "--all").returncode == 0
    # the same commit, run again, finishes
    second = r.fdl("commit", tmp_path / "w2", "-m", "two", "-q", env=small).stdout.strip()
    assert r.head() == second
    assert query(r, r.root, "SELECT i FROM t ORDER BY i") == ["1", "2"]


def test_a_server_that_ignores_preconditions_is_refused(tmp_path):
    # the conditional headers are signed: strip them in front of a server that
    # does not check signatures
    server = S3Server(tmp_path / "moto.log", check_signatures=False)
    proxy = Proxy(server.port)
    try:
        proxy.rules.append((lambda m, path, h, n: m == "PUT", "strip-conditions"))
        r = S3Repo(server, tmp_path, endpoint=proxy.endpoint, init=False)
        p = r.fdl("init", r.root, check=False)
        assert p.returncode == 5, p.stderr
        assert "ignores If-None-Match" in p.stderr and "refuses to write" in p.stderr
        assert r.keys() == []  # nothing written, the probe cleaned up
        # honest again: the same init works; a session token goes with every request
        proxy.rules.clear()
        proxy.headers.clear()
        r.fdl("init", r.root, env={"AWS_SESSION_TOKEN": "token-123"})
        assert sorted(k.split("/", 2)[2] for k in r.keys()) == ["HEAD", "fdl.json"]
        assert proxy.headers and all(h.get("x-amz-security-token") == "token-123" for h in proxy.headers)
        assert all("x-amz-security-token" in h.get("Authorization", "") for h in proxy.headers)  # and is signed
    finally:
        proxy.stop()
        server.stop()


def test_transient_errors_are_retried_and_a_lost_answer_is_not_a_conflict(s3_server, tmp_path):
    proxy = Proxy(s3_server.port)
    try:
        r = bucket(s3_server, tmp_path, endpoint=proxy.endpoint)
        write(r, tmp_path / "w", "CREATE TABLE lake.t AS SELECT 42 AS answer", setup=True)
        # every third request fails with 503; the first create of version.json and the
        # ref update are applied by the server but their answers are lost
        lost = set()

        def lose_once(m, path, h, n):
            for what in ("version.json", "refs/heads/main"):
                if m == "PUT" and path.endswith(what) and what not in lost:
                    lost.add(what)
                    return True
            return False
        proxy.rules += [(lose_once, "lose"), (lambda m, p, h, n: n % 3 == 2, "503")]
        fast = {"FDL_S3_RETRY_BASE_MS": "5"}
        vid = r.fdl("commit", tmp_path / "w", "-m", "through a bad network", "-q", env=fast).stdout.strip()
        assert lost == {"version.json", "refs/heads/main"}
        assert r.head() == vid
        assert query(r, r.root, "SELECT answer FROM t") == ["42"]
        assert sum(1 for m, p in proxy.seen if m == "PUT" and p.endswith("version.json")) >= 2
        # a server that keeps failing: the error names the object and the attempts
        host_stops(proxy.endpoint)  # the ledger reads through the proxy while it still answers
        proxy.rules[:] = [(lambda m, p, h, n: True, "503")]
        p = r.fdl("log", r.root, check=False, env=dict(fast, FDL_S3_RETRIES="2"))
        assert p.returncode == 6, p.stderr
        assert f"{r.root}/" in p.stderr and "503" in p.stderr and "3 attempts" in p.stderr
    finally:
        proxy.stop()


def test_profile_files_and_virtual_hosted_addressing(s3_server, tmp_path):
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(
        f"[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n"
        f"[pub]\naws_access_key_id = {s3_server.key_id}\naws_secret_access_key = {s3_server.secret}\n")
    # localhost: curl and DuckDB resolve <bucket>.localhost to 127.0.0.1 themselves
    (home / ".aws" / "config").write_text(
        f"[default]\nregion = eu-west-1\n\n[profile pub]\nregion = us-east-1\n"
        f"endpoint_url = http://localhost:{s3_server.port}\ns3 =\n  addressing_style = virtual\n")
    r = S3Repo(s3_server, tmp_path, init=False)
    r.env = {"HOME": str(home), "AWS_PROFILE": "pub", "FDL_CACHE_DIR": str(tmp_path / "cache"),
             "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_ENDPOINT_URL": "", "AWS_REGION": "",
             "AWS_CONFIG_FILE": "", "AWS_SHARED_CREDENTIALS_FILE": ""}
    r.fdl("init", r.root)
    assert "datasets/pop/fdl.json" in r.keys()
    sql = r.fdl("checkout", r.root, tmp_path / "w").stdout
    assert "URL_STYLE 'vhost'" in sql and f"ENDPOINT 'localhost:{s3_server.port}'" in sql
    r.connect(sql).execute("CREATE TABLE lake.t AS SELECT 7 AS n")
    r.fdl("commit", tmp_path / "w", "-m", "by profile")
    assert query(r, r.root, "SELECT n FROM t") == ["7"]
    # the default profile's key is refused by the server, and fdl says where it came from
    p = r.fdl("log", r.root, check=False, env={"AWS_PROFILE": "default", "AWS_ENDPOINT_URL": s3_server.endpoint})
    assert p.returncode == 6
    assert "403" in p.stderr and "profile 'default'" in p.stderr


def test_upload_progress_on_a_terminal_only(s3scene, tmp_path):
    r = s3scene
    write(r, tmp_path / "w1", "CREATE TABLE lake.t AS SELECT 1 AS i")
    p = r.fdl("commit", tmp_path / "w1", "-m", "quiet pipe")
    assert "upload" not in p.stderr  # not a terminal: no progress
    write(r, tmp_path / "w2", "INSERT INTO lake.t VALUES (2)", setup=True)
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="T", **r.env)
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(FDL, [FDL, "commit", str(tmp_path / "w2"), "-m", "on a terminal"], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out
    text = out.decode(errors="replace")
    assert "upload versions/" in text and "ducklake.duckdb" in text and "/s" in text and "took" in text


def test_s3_errors_are_clear(s3_server, tmp_path):
    r = S3Repo(s3_server, tmp_path, init=False)
    p = r.fdl("init", "s3://No_Such/x", check=False)
    assert p.returncode == 5 and "not a valid bucket name" in p.stderr
    p = r.fdl("log", f"s3://{r.bucket}/nothing-here", check=False)
    assert p.returncode == 3 and f"s3://{r.bucket}/nothing-here is not an fdl repository (no fdl.json)" in p.stderr
    p = r.fdl("init", r.root, check=False, env={"AWS_SECRET_ACCESS_KEY": ""})
    assert p.returncode == 5 and "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together" in p.stderr
    r.fdl("init", r.root)
    p = r.fdl("init", r.root, check=False)
    assert p.returncode == 9 and "already an fdl repository" in p.stderr


def test_withdraw_and_gc_on_a_bucket(s3scene, tmp_path):
    r = s3scene
    keep = scene(r, tmp_path / "w1", "keep", "CREATE TABLE lake.t AS SELECT 1 AS i")
    bad = scene(r, tmp_path / "w2", "oops", "INSERT INTO lake.t VALUES (666)")
    before = [k for k in r.keys("datasets/pop/data/") if k.endswith(".parquet")]
    assert len(before) == 2
    r.fdl("withdraw", r.root, bad, "--reason", "published by mistake", "--force")
    after = [k for k in r.keys("datasets/pop/data/") if k.endswith(".parquet")]
    assert len(after) == 1  # the data file the bad version added is gone
    p = r.fdl("query", f"{r.root}@{bad}", "SELECT 1", check=False)
    assert p.returncode == 7 and "withdrawn" in p.stderr
    assert query(r, f"{r.root}@{keep}", "SELECT i FROM t") == ["1"]
    # an orphan in the data folder goes with gc; what a live version needs stays, and so
    # does a file DuckLake would not have named
    orphan = "datasets/pop/data/main/t/ducklake-019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c.parquet"
    r.server.client().put_object(Bucket=r.bucket, Key=orphan, Body=b"x")
    r.server.client().put_object(Bucket=r.bucket, Key="datasets/pop/data/main/t/mine.parquet", Body=b"x")
    r.fdl("gc", r.root, "--grace", "0s")
    assert [k for k in r.keys("datasets/pop/data/") if k.endswith(".parquet") and "mine" not in k] == after
    assert "datasets/pop/data/main/t/mine.parquet" in r.keys()
    assert query(r, f"{r.root}@{keep}", "SELECT i FROM t") == ["1"]


def test_reading_costs_few_requests_and_a_warm_open_two(s3scene, tmp_path):
    r = s3scene
    scene(r, tmp_path / "w", "one", "CREATE TABLE lake.t AS SELECT 5 AS v")
    cache = {"FDL_CACHE_DIR": str(tmp_path / "reader-cache")}
    cold = r.fdl("query", f"{r.root}@main", "SELECT v FROM t", "--requests", env=cache)
    # fdl.json, the ref, version.json, the catalog (then DuckDB reads the data itself)
    assert "took 4 requests" in cold.stderr and cold.stdout.split()[-1] == "5"
    warm = r.fdl("query", f"{r.root}@main", "SELECT v FROM t", "--requests", env=cache)
    # the ref, and expired.json (404): a cached catalog is read only while its version is live
    assert "took 2 requests" in warm.stderr and warm.stdout.split()[-1] == "5"


def test_a_commit_checks_only_the_data_files_it_adds(s3_server, tmp_path):
    proxy = Proxy(s3_server.port)
    try:
        r = bucket(s3_server, tmp_path, endpoint=proxy.endpoint)
        con = r.checkout(tmp_path / "w", setup=True)
        con.execute("CREATE TABLE lake.t (i INTEGER)")
        for i in range(12):  # twelve data files
            con.execute(f"INSERT INTO lake.t VALUES ({i})")
        r.setup("commit", tmp_path / "w", "-m", "twelve files")  # scene: the next commit is checked
        con.execute("INSERT INTO lake.t VALUES (12)")  # one more
        con.close()
        proxy.seen.clear()
        proxy.headers.clear()
        r.fdl("commit", tmp_path / "w", "-m", "one more file")
        # the new file is looked at once, in the working catalog's folder, and copied into
        # the data folder inside the bucket; no file of the dataset is asked for
        data_heads = [p for m, p in proxy.seen if m == "HEAD" and ("/data/" in p or "/work/" in p)]
        assert len(data_heads) == 1 and "/work/" in data_heads[0], data_heads
        copies = [h for (m, p), h in zip(proxy.seen, proxy.headers) if "x-amz-copy-source" in {k.lower() for k in h}]
        assert len(copies) == 1
        assert query(r, r.root, "SELECT count(*) FROM t") == ["13"]
    finally:
        proxy.stop()


def test_a_public_bucket_is_read_without_credentials(tmp_path):
    server = S3Server(tmp_path / "moto.log", check_signatures=False)
    proxy = Proxy(server.port)
    try:
        r = bucket(server, tmp_path, endpoint=proxy.endpoint)
        scene(r, tmp_path / "w", "public", "CREATE TABLE lake.t AS SELECT 3 AS n")
        r.server.client().put_bucket_policy(Bucket=r.bucket, Policy=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*",
            "Action": ["s3:GetObject", "s3:ListBucket"],
            "Resource": [f"arn:aws:s3:::{r.bucket}", f"arn:aws:s3:::{r.bucket}/*"]}]}))
        proxy.headers.clear()
        anonymous = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
                     "FDL_CACHE_DIR": str(tmp_path / "anon-cache")}
        p = r.fdl("query", r.root, "SELECT n FROM t", "--format", "csv", env=anonymous)
        assert p.stdout.split() == ["n", "3"]
        assert proxy.headers and not any("Authorization" in h for h in proxy.headers)  # unsigned
        sql = r.fdl("attach", r.root, env=anonymous).stdout
        assert "KEY_ID" not in sql and "TYPE s3" in sql
    finally:
        proxy.stop()
        server.stop()


def test_branch_diff_clone_catalogs_and_run_on_a_bucket(s3scene, tmp_path):
    r = s3scene
    v1 = scene(r, tmp_path / "w1", "three", "CREATE TABLE lake.t AS SELECT range AS i FROM range(3)")
    # branches: create, list, delete (each a conditional write or delete on the bucket)
    r.fdl("branch", r.root, "fixes")
    assert "fixes" in r.fdl("branch", r.root).stdout and r.head("fixes") == v1
    r.fdl("branch", r.root, "--delete", "fixes")
    assert "fixes" not in r.fdl("branch", r.root).stdout
    # fdl run: a pipeline step writing through FDL_ATTACH into the bucket
    script = tmp_path / "step.py"
    script.write_text(
        "import os, duckdb\n"
        f"con = duckdb.connect(config={{'extension_directory': {EXT!r}, 'autoinstall_known_extensions': False,"
        " 'autoload_known_extensions': True})\n"
        "con.execute(os.environ['FDL_ATTACH'])\n"
        "con.execute('INSERT INTO lake.t VALUES (100)')\n")
    import sys
    r.fdl("run", r.root, "-m", "pipeline", "--", sys.executable, script)
    v2 = r.head()
    assert v2 != v1 and query(r, r.root, "SELECT max(i) FROM t") == ["100"]
    diff = r.fdl("diff", r.root, v1, v2, "--rows", "--json").stdout
    assert json.loads(diff)["rows"]["main.t"]["added"] == [{"i": 100}]
    r.fdl("catalogs", "add", r.root, "main", "1.0")
    assert f"datasets/pop/versions/{v2}/catalogs/1.0.duckdb" in r.keys()
    # clone the bucket to a folder, and that folder to another prefix of the bucket
    folder = tmp_path / "mirror"
    r.fdl("clone", r.root, folder)
    assert fdl("verify", folder, "--all").returncode == 0
    back = f"s3://{r.bucket}/copy"
    r.fdl("clone", folder, back)
    assert r.fdl("verify", back, "--all").returncode == 0
    assert query(r, f"{back}@main", "SELECT count(*) FROM t") == ["4"]


def test_clone_into_a_bucket_does_not_read_the_copy_back(s3_server, repo, tmp_path, histories):
    """Into a bucket, each file is one PUT and the copy is never fetched
    back: fdl verify's checks run on the bytes the clone fetched and checked
    for its plan, and the copy's history index is made from them. Requests
    are counted from the S3 server's own log. The source is a copy of the
    session's (histories.published: the scene, not what is tested)."""
    histories.published([(f"v{i}", (["CREATE TABLE lake.t (a INTEGER)"] if i == 0 else [])
                          + [f"INSERT INTO lake.t VALUES ({i})"]) for i in range(6)], repo.root)
    dst = S3Repo(s3_server, tmp_path, init=False)
    log = pathlib.Path(s3_server.log.name)
    s3_server.log.flush()
    before = len(log.read_text(errors="replace"))
    dst.fdl("clone", repo.root, dst.root)
    s3_server.log.flush()
    lines = [ln for ln in log.read_text(errors="replace")[before:].splitlines() if f"/{dst.bucket}" in ln]
    reqs = [ln.split('"')[1].split(" ")[:2] for ln in lines if ln.count('"') >= 2]
    files = [p for p in repo.root.rglob("*") if p.is_file() and "history" not in p.parts]
    assert len(reqs) <= len(files) + 2 * 6 + 10, reqs
    read_back = [path for method, path in reqs if method in ("GET", "HEAD") and "/versions/" in path]
    assert read_back == [], read_back
    puts = [path for method, path in reqs if method == "PUT" and "/versions/" in path]
    assert len(puts) == len(set(puts)) == len([p for p in files if "versions" in p.parts]), puts
    assert dst.fdl("verify", dst.root, "--all").returncode == 0
    assert [json.loads(line)["id"] for line in dst.fdl("log", dst.root, "--json").stdout.splitlines()] == \
        [json.loads(line)["id"] for line in fdl("log", repo.root, "--json").stdout.splitlines()]
    assert dst.keys("datasets/pop/history/heads/")  # the copy's own history index


def test_clone_copies_previews_from_and_into_a_bucket(s3scene, tmp_path):
    """A repository with previews on a bucket (a store that lists previews/):
    a clone to a folder, that folder's clone into another prefix of the
    bucket and a clone from bucket to bucket each hold the source's
    previews/ (each version's file, its table files and the landing card,
    which each copy writes from its own HEAD and tip) byte for byte, and
    verify (which checks each preview as a reader parses it) passes."""
    r = s3scene
    v1 = scene(r, tmp_path / "w1", "two tables", "CREATE TABLE lake.t AS SELECT range AS i FROM range(3)",
               "CREATE TABLE lake.u AS SELECT 'x' || range AS s FROM range(5)")
    scene(r, tmp_path / "w2", "one more row", "INSERT INTO lake.t VALUES (100)")  # u unchanged: its table file is shared
    r.setup("branch", r.root, "old", v1)  # scene: the clones are checked
    r.setup("preview", r.root)  # (fdl preview on a bucket: the next test's last step)

    def previews_on_bucket(prefix):
        return {k[len(prefix):]: r.get(k) for k in r.keys(prefix)}

    want = previews_on_bucket("datasets/pop/previews/")
    assert len([k for k in want if k.endswith(".json") and "/" not in k and k != "HEAD.json"]) == 2, sorted(want)
    assert "HEAD.json" in want, sorted(want)  # the landing card: HEAD's tip has a preview (each copy writes its own)
    assert any(k.startswith("tables/") for k in want), sorted(want)
    folder = tmp_path / "mirror"
    r.fdl("clone", r.root, folder)
    got = {str(p.relative_to(folder / "previews")): p.read_bytes()
           for p in (folder / "previews").rglob("*") if p.is_file()}
    assert got == want
    assert fdl("verify", folder, "--all").returncode == 0
    for root, prefix in ((folder, "copy"), (r.root, "again")):
        r.fdl("clone", root, f"s3://{r.bucket}/{prefix}")
        assert previews_on_bucket(f"{prefix}/previews/") == want, prefix
        assert r.fdl("verify", f"s3://{r.bucket}/{prefix}", "--all").returncode == 0


def test_a_commit_on_a_bucket_writes_the_preview_fdl_preview_computes(s3scene, tmp_path):
    """A commit on a bucket computes its preview before its version is
    written, from the catalog it froze in its own folder and the data files
    it has just published to the bucket: byte for byte what `fdl preview`
    computes from the version once written (a delete and a new row in one
    table, the other reused)."""
    r = s3scene
    v1 = scene(r, tmp_path / "w1", "two tables", "CREATE TABLE lake.t AS SELECT range AS i FROM range(30)",
               "CREATE TABLE lake.u AS SELECT 'x' || range AS s FROM range(5)")
    r.setup("preview", r.root)  # the repository keeps previews from now on (scene)
    write(r, tmp_path / "w2", "DELETE FROM lake.t WHERE i < 3", "INSERT INTO lake.t VALUES (100)", setup=True)
    r.fdl("commit", tmp_path / "w2", "-m", "a delete and a row")
    v2 = r.head()
    prefix = "datasets/pop/"

    def named(vid):
        return {t["key"] for t in json.loads(r.get(f"{prefix}previews/{vid}.json"))["tables"]}
    own = sorted(named(v2) - named(v1))  # t's file: u's is v1's
    assert len(own) == 1 and len(named(v2)) == 2, (own, named(v2))
    at_commit = {k: r.get(prefix + k) for k in [f"previews/{v2}.json", *own]}
    client = r.server.client()
    for k in at_commit:
        client.delete_object(Bucket=r.bucket, Key=prefix + k)
    r.fdl("preview", r.root, v2)
    assert {k: r.get(prefix + k) for k in at_commit} == at_commit


def test_curl_verbose_shows_no_credential(s3scene, tmp_path):
    """FDL_CURL_VERBOSE prints libcurl's account of each exchange, but the
    signed Authorization header (the key id, the signature) never."""
    r = s3scene
    p = r.fdl("log", r.root, env={"FDL_CURL_VERBOSE": "1"}, check=False)  # no version yet: exit 3
    assert "> GET " in p.stderr and "Authorization: <not shown>" in p.stderr, p.stderr[-2000:]
    assert r.server.key_id not in p.stderr + p.stdout and "Signature=" not in p.stderr
