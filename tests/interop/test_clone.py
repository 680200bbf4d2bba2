"""fdl clone: identical copies, resumable after a crash at any write."""
import filecmp
import json
import os
import subprocess

import pytest

from conftest import EXT, FDL, fdl, fdl_setup, host_serves, host_stops, read_json, rows
from test_reader import Server


def files_of(root):
    """A repository's files; not work/, its working catalogs' (never cloned: a
    copy holds versions, not someone's work in progress). previews/ are
    compared as every other file: a clone copies them."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p.relative_to(root).parts[0] != "work")


def same_tree(a, b):
    fa, fb = files_of(a), files_of(b)
    assert fa == fb
    for f in fa:
        assert filecmp.cmp(a / f, b / f, shallow=False), f


def steps(n, *create, insert=("INSERT INTO lake.t VALUES ({i})",)):
    """n versions v0, v1...: version i runs each `insert` with i, the
    first runs `create` first. The sources here are copies of the
    session's repository of these steps (histories.published: the release
    build made them; they are the scene, the clones are the test)."""
    return [(f"v{i}", (list(create) if i == 0 else []) + [sql.format(i=i) for sql in insert]) for i in range(n)]


@pytest.fixture
def source(repo, histories):
    histories.published(steps(3, "CREATE TABLE lake.t (a INTEGER)"), repo.root)
    fdl_setup("branch", repo.root, "old", repo.version(repo.head())["parents"][0])
    fdl_setup("preview", repo.root)  # the repository keeps previews: a clone copies them
    assert len([p for p in (repo.root / "previews").glob("*.json") if p.name != "HEAD.json"]) == 3
    assert (repo.root / "previews" / "HEAD.json").exists()  # the landing card: each copy writes its own
    return repo


@pytest.mark.quick
def test_clone_is_identical(source, tmp_path):
    fdl_setup("checkout", source.root, tmp_path / "w")  # a working folder: not empty, not a clone
    dst = tmp_path / "copy"
    out = fdl("clone", source.root, dst).stdout
    assert "3 versions" in out
    same_tree(source.root, dst)
    assert fdl("verify", dst).returncode == 0
    again = fdl("clone", source.root, dst).stdout
    assert " 0 files copied" in again
    p = fdl("clone", source.root, tmp_path / "w", check=False)  # not empty, not a clone
    assert p.returncode == 9


def test_a_copy_follows_the_sources_fdl_config(source, tmp_path):
    """A copy made before the source ran `fdl config` takes the source's
    fdl.json on the next clone (retention is the source's word, as
    expired.json is); a copy whose fdl.json lays the repository out
    otherwise (another data_dir) is not a clone of it (exit 9), untouched."""
    dst = tmp_path / "copy"
    fdl("clone", source.root, dst)
    fdl("config", source.root, "retention.keep", "5")
    out = fdl("clone", source.root, dst).stdout
    assert " 1 files copied" in out or " 1 file copied" in out, out
    assert (dst / "fdl.json").read_bytes() == (source.root / "fdl.json").read_bytes()
    assert read_json(dst / "fdl.json")["retention"]["keep"] == 5
    assert fdl("verify", dst).returncode == 0
    other = tmp_path / "other"
    fdl("clone", source.root, other)
    good = (other / "fdl.json").read_bytes()
    cfg = read_json(other / "fdl.json")
    cfg["data_dir"] = "elsewhere"
    (other / "fdl.json").write_text(json.dumps(cfg))
    before = (other / "fdl.json").read_bytes()
    p = fdl("clone", source.root, other, check=False)
    assert p.returncode == 9 and "not a clone of it" in p.stderr and "data_dir" in p.stderr, p.stderr
    assert (other / "fdl.json").read_bytes() == before
    (other / "fdl.json").write_bytes(good)  # the ledger reads every copy again at the end


def test_clone_resumes_after_a_crash_at_every_write(source, tmp_path):
    """The san build aborts at the Nth store write (FDL_CRASH_AT); after each
    crash the copy verifies, and rerunning clone makes it identical."""
    n = 1
    while True:
        dst = tmp_path / f"c{n}"
        p = subprocess.run([FDL, "clone", str(source.root), str(dst)], capture_output=True, text=True,
                           env=dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_CRASH_AT=str(n)))
        if p.returncode == 0:
            break
        assert "crash point" in p.stderr, p.stderr
        if (dst / "fdl.json").exists():
            v = fdl("verify", dst, "--all", check=False)
            assert v.returncode == 0, (n, v.stdout)
        fdl("clone", source.root, dst)
        same_tree(source.root, dst)
        n += 1
    if "FDL_CRASH" not in open(FDL, "rb").read().decode("latin-1"):
        pytest.skip("not a crash-point build")  # pragma: no cover
    print(f"clone: {n - 1} crash points covered")
    assert n > 10, n  # every version file, data file and ref was a crash point


def test_clone_over_http(source, tmp_path):
    s = Server(source.root, tmp_path)
    try:
        dst = tmp_path / "from-http"
        fdl("clone", s.url, dst, env={"FDL_CACHE_DIR": str(tmp_path / "cache")})
    finally:
        s.stop()
    # what HEAD's branch reaches: all three versions; the 'old' branch cannot be listed over HTTP
    assert sorted(os.listdir(dst / "versions")) == sorted(os.listdir(source.root / "versions"))
    # and their previews, byte for byte (a host cannot be listed: HEAD's tip had one, so each was asked for)
    assert files_of(dst / "previews") == files_of(source.root / "previews")
    for f in files_of(source.root / "previews"):
        assert (dst / "previews" / f).read_bytes() == (source.root / "previews" / f).read_bytes(), f
    assert (dst / "refs" / "heads" / "main").read_text() == (source.root / "refs" / "heads" / "main").read_text()
    assert fdl("verify", dst).returncode == 0
    assert rows(source.open_version("main"), "lake.t") == [(0,), (1,), (2,)]
    con = __import__("conftest").connect()
    con.execute(fdl("attach", dst).stdout)
    assert rows(con, "lake.t") == [(0,), (1,), (2,)]


def test_clone_asks_for_each_file_once(repo, tmp_path, histories):
    """Over a plain static host (counted, not timed): the plan comes first,
    so each data file is one GET and no HEAD (its size is in the catalog),
    each catalog one GET, used for the plan and the copy. A second clone
    into the copy after one new version asks for that version's files, the
    two probes per version (expired.json, a signature) and a few more."""
    from test_hindex import CountingHost
    histories.published(steps(6, "CREATE TABLE lake.t (a INTEGER)"), repo.root)
    host = CountingHost(repo.root)
    dst = tmp_path / "copy"
    env = {"FDL_CACHE_DIR": str(tmp_path / "cache")}
    try:
        fdl("clone", host.url, dst, env=env)
        first = host.requests[:]
        data = [r for r in first if r.startswith("/data/")]
        assert len(data) == len(set(data)) == 6, first
        catalogs = [r for r in first if r.endswith("/ducklake.duckdb")]
        assert len(catalogs) == len(set(catalogs)) == 6, first
        files = [p for p in files_of(repo.root) if not p.startswith("history/")]
        assert len(first) <= len(files) + 2 * 6 + 10, first
        # a source without previews: one request for HEAD's tip's, none for the others
        assert [r for r in first if r.startswith("/previews/")] == [f"/previews/{repo.head()}.json"], first
        # one more version, then the same clone again
        con = repo.checkout(tmp_path / "w", setup=True)
        con.execute("INSERT INTO lake.t VALUES (99)")
        fdl_setup("commit", tmp_path / "w", "-m", "v7")
        host.requests.clear()
        fdl("clone", host.url, dst, env=env)
        again = host.requests[:]
        new = repo.head()
        assert len(again) <= 10 + 5 + 2 * 7, again  # its 4 version files and its data file
        assert not any(r.startswith("/versions/") and new not in r and not r.endswith((".sig", "expired.json"))
                       for r in again), again
    finally:
        host.close()
    assert fdl("verify", dst, "--all").returncode == 0
    con2 = __import__("conftest").connect()
    con2.execute(fdl("attach", dst).stdout)
    assert sorted(rows(con2, "lake.t")) == [(0,), (1,), (2,), (3,), (4,), (5,), (99,)]


def test_a_bad_file_stops_the_pool_and_no_ref_is_copied(repo, tmp_path, histories):
    """Eight transfers at once (a host source): a data file of another size
    fails its check on one thread, the others stop, the error names the
    file, and the copy gets no ref; mended, the same command finishes."""
    from test_hindex import CountingHost
    histories.published(steps(12, "CREATE TABLE lake.t (a INTEGER)"), repo.root)
    bad = sorted((repo.root / "data").rglob("*.parquet"))[5]
    good = bad.read_bytes()
    bad.write_bytes(good + b"x")
    host = CountingHost(repo.root)
    dst = tmp_path / "copy"
    env = {"FDL_CACHE_DIR": str(tmp_path / "cache")}
    try:
        p = fdl("clone", host.url, dst, "--jobs", "8", env=env, check=False)
        assert p.returncode == 5 and bad.name in p.stderr and "bytes" in p.stderr, p.stderr
        assert not (dst / "refs" / "heads" / "main").exists()
        bad.write_bytes(good)
        fdl("clone", host.url, dst, "-j", "3", env=env)
    finally:
        host.close()
    assert fdl("verify", dst, "--all").returncode == 0
    assert (dst / "refs" / "heads" / "main").read_text() == (repo.root / "refs" / "heads" / "main").read_text()


def expired_data(root):
    """Every data file some expired.json records as withdrawn."""
    out = set()
    for p in (root / "versions").glob("*/expired.json"):
        out.update(read_json(p).get("data_files", []))
    return out


def test_a_mirror_follows_what_the_source_withdrew_since(repo, tmp_path, histories):
    """Two mirrors, one cloned from the folder (listed) and one from a
    static host (HEAD's chain): after the source withdraws version 3 with
    its version.json (which withdraws 4 and 5, whose catalogs reference its
    data), cloning again deletes from each copy what the source deleted: no
    copy keeps withdrawn data, and both still verify."""
    from test_hindex import CountingHost
    ids = histories.published(steps(5, "CREATE TABLE lake.t (a INTEGER)"), repo.root)
    fdl_setup("preview", repo.root)  # each copy gets them, and must lose those of the versions withdrawn
    host = CountingHost(repo.root)
    a, b = tmp_path / "a", tmp_path / "b"
    env = {"FDL_CACHE_DIR": str(tmp_path / "cache")}
    try:
        fdl("clone", repo.root, a)
        fdl("clone", host.url, b, env=env)
        for copy in (a, b):
            assert {p.name for p in (copy / "previews").glob("*.json")} == {f"{v}.json" for v in ids} | {"HEAD.json"}, copy
        before = set(files_of(repo.root)) - {"history/heads/main.json"}
        fdl("withdraw", repo.root, ids[2], "--reason", "personal data", "--remove-version-json", "--force")
        gone = before - set(files_of(repo.root))
        withdrawn = expired_data(repo.root)
        assert withdrawn and f"versions/{ids[2]}/version.json" in gone, gone
        out_a = fdl("clone", repo.root, a).stdout
        out_b = fdl("clone", host.url, b, env=env).stdout
    finally:
        host.close()
    for copy, out in ((a, out_a), (b, out_b)):
        # the count is of layout files; the previews of the versions withdrawn go through the seam
        assert f"{len([f for f in gone if not f.startswith('previews/')])} removed" in out, out
        assert any(f.startswith("previews/") for f in gone) and not any((copy / "previews" / f"{v}.json").exists()
                                                                       for v in ids[2:]), copy
        have = set(files_of(copy))
        assert not have & gone, (copy, have & gone)
        assert not any(f"data/{f}" in have for f in withdrawn)
        for vid in ids[2:]:
            assert (copy / "versions" / vid / "expired.json").read_bytes() == \
                (repo.root / "versions" / vid / "expired.json").read_bytes()
        assert fdl("verify", copy, "--all").returncode == 0
        assert set(files_of(copy)) - {"history/heads/main.json"} == \
            set(files_of(repo.root)) - {"history/heads/main.json"}
    # log reaches the withdrawn version and says the history ends there, on both sides
    for root in (repo.root, a, b):
        out = fdl("log", root).stdout
        assert out.count("\nversion ") + out.startswith("version ") == 2, out  # versions 5 and 4
        assert f"The history ends here: version {ids[2]}" in out, out
    # the copy's readers see what the source's see
    p = fdl("attach", a, check=False)
    assert p.returncode != 0 and "withdrawn" in p.stderr, p.stderr
    con2 = __import__("conftest").connect()
    con2.execute(fdl("attach", f"{a}@{ids[1]}").stdout)
    assert sorted(rows(con2, "lake.t")) == [(0,), (1,)]


def test_a_planted_expired_json_deletes_nothing_outside_its_version(repo, tmp_path, ledger, histories):
    """expired.json is the source's word, so a hostile source could list
    anything in it: a mirror deletes only a version's own catalog files and
    data files that no live catalog references, never a path that climbs
    out (../fdl.json, /etc/...), never live data."""
    histories.published(steps(3, "CREATE TABLE lake.t (a INTEGER)"), repo.root)
    copy = tmp_path / "copy"
    fdl("clone", repo.root, copy)
    tip = repo.head()
    first = repo.version(tip)["parents"][0]
    live = sorted(str(p.relative_to(repo.root / "data")) for p in (repo.root / "data").rglob("*.parquet"))
    (copy / "outside.txt").write_text("keep me")
    planted = {
        "reason": "withdrawn", "expired_at": "2026-12-04T00:00:00Z", "message": "x",
        "removed": ["ducklake.duckdb", "../../fdl.json", "../../outside.txt", "/etc/hostname", "catalogs/../x.duckdb"],
        "data_files": ["../fdl.json", "../../outside.txt", "/etc/hostname", "./x", live[0], "main/t/../../../fdl.json"],
        "withdrawn_with": first,
    }
    vdir = repo.root / "versions" / first
    ledger.waive(first, "a hostile expired.json is planted in it")
    (vdir / "expired.json").write_text(json.dumps(planted))
    (vdir / "ducklake.duckdb").unlink()
    out = fdl("clone", repo.root, copy, check=False)
    assert (copy / "fdl.json").exists() and (copy / "outside.txt").read_text() == "keep me"
    assert (copy / "data" / live[0]).exists()  # the tip's catalog still references it
    assert not (copy / "versions" / first / "ducklake.duckdb").exists()
    assert (copy / "versions" / tip / "ducklake.duckdb").exists()
    assert "1 removed" in out.stdout, (out.stdout, out.stderr)


def test_the_progress_line_counts_files_and_bytes(source, tmp_path):
    """On a terminal, one line of files and bytes done of the plan's
    total, the rate and the time left; its last state is all files."""
    import pty
    dst = tmp_path / "copy"
    main, sub = pty.openpty()
    p = subprocess.Popen([FDL, "clone", str(source.root), str(dst)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=sub, env=dict(os.environ, FDL_EXTENSION_DIR=EXT))
    os.close(sub)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    p.wait()
    os.close(main)
    assert p.returncode == 0, seen
    lines = [s for s in seen.decode().replace("\r", "\n").splitlines() if s.startswith("clone: ")]
    n = len([f for f in files_of(source.root) if f.startswith(("data/", "versions/"))])  # the plan
    assert lines and lines[-1].startswith(f"clone: {n}/{n} files, ") and " took " in lines[-1], lines
    assert fdl("clone", source.root, dst, "-q").returncode == 0


class HoldingHost:
    """A plain static host (Python's http.server) that records every request
    (method and path) and can hold one: the Nth request is answered with
    half its body (a HEAD with nothing), then waits until released, so a
    test kills the client while that transfer is open: where the kill
    lands is chosen, not timed. With `hold_path`, the first request whose
    path starts with it waits instead, and is then answered whole."""

    def __init__(self, root):
        import functools
        import http.server
        import threading
        self.requests, self.hold_at, self.hold_path = [], None, None
        self.held, self.release = threading.Event(), threading.Event()
        self.lock = threading.Lock()
        host = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def send_head(self):
                with host.lock:
                    host.requests.append((self.command, self.path))
                    self.hold = len(host.requests) == host.hold_at
                    wait = bool(host.hold_path) and self.path.startswith(host.hold_path) and not host.held.is_set()
                    if wait:
                        host.held.set()
                if wait:
                    host.release.wait(60)
                if self.hold and self.command == "HEAD":
                    host.held.set()
                    host.release.wait(60)
                return super().send_head()

            def copyfile(self, src, dst):
                if not getattr(self, "hold", False):
                    return super().copyfile(src, dst)
                data = src.read()
                dst.write(data[: len(data) // 2])
                dst.flush()
                host.held.set()
                host.release.wait(60)

        class Quiet(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a killed client's broken pipe is the point

        self.server = Quiet(("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        host_serves(self.url, root)  # the ledger may map its URLs to the folder's files
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        host_stops(self.url)
        self.server.shutdown()
        self.server.server_close()


def test_killed_at_twenty_points_a_rerun_finishes_and_fetches_nothing_twice(repo, tmp_path, histories):
    """A clone from a static host, 8 transfers at once, killed (SIGKILL)
    while its Nth request is open, for 20 values of N drawn at random (a
    fixed seed, printed) from all its requests: each time what is left
    verifies (when it is a repository yet), the rerun finishes with a copy
    that `fdl verify --all` accepts and that holds the source's files, and
    the rerun asks for no data or version file the killed run had already
    completed, and leaves no temporary folder behind."""
    import random
    histories.published(steps(6, "CREATE TABLE lake.t (a INTEGER)", "CREATE TABLE lake.u (b VARCHAR)",
                              insert=("INSERT INTO lake.t VALUES ({i})", "INSERT INTO lake.u VALUES ('{i}')")),
                        repo.root)
    host = HoldingHost(repo.root)
    try:
        # the whole clone, what each killed one is compared with: the scene (release build)
        fdl_setup("clone", host.url, tmp_path / "whole", env={"FDL_CACHE_DIR": str(tmp_path / "cache-whole")})
        total = len(host.requests)
        seed = 25
        points = sorted(random.Random(seed).sample(range(1, total + 1), min(20, total)))
        print(f"{total} requests; seed {seed}; killed at {points}")
        assert len(points) == 20, total
        for k in points:
            dst, tmp = tmp_path / f"k{k}", tmp_path / f"tmp{k}"
            tmp.mkdir()
            env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_CACHE_DIR=str(tmp_path / f"cache{k}"), TMPDIR=str(tmp))
            host.requests.clear()
            host.held.clear()
            host.release.clear()
            host.hold_at = k
            p = subprocess.Popen([FDL, "clone", host.url, str(dst), "--jobs", "8"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            assert host.held.wait(120), (k, p.poll())
            p.kill()
            p.wait()
            host.hold_at = None
            host.release.set()
            if (dst / "fdl.json").exists():
                v = fdl("verify", dst, "--all", check=False)
                assert v.returncode == 0, (k, v.stdout, v.stderr)
            complete = {f for f in files_of(dst) if f.startswith(("data/", "versions/"))} if dst.exists() else set()
            host.requests.clear()
            r = subprocess.run([FDL, "clone", host.url, str(dst)], env=env, capture_output=True, text=True)
            assert r.returncode == 0, (k, r.stderr)
            again = {path.lstrip("/") for method, path in host.requests if method == "GET"}
            assert not again & complete, (k, again & complete)
            assert fdl("verify", dst, "--all").returncode == 0
            assert set(files_of(dst)) == set(files_of(tmp_path / "whole")), k
            assert not os.listdir(tmp), (k, os.listdir(tmp))
    finally:
        host.close()
