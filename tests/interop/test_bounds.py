"""Resource bounds: huge metadata, long histories and slow servers neither
exhaust memory nor hang."""
import http.server
import json
import threading
import time

from conftest import fdl


def fake_version(vid, seq, parent):
    return {"fdl": "0.1", "id": vid, "seq": seq, "parents": [parent] if parent else [],
            "created_at": "2026-10-30T09:00:00Z", "author": {"name": "a"}, "message": f"v{seq}",
            "catalog": {"path": "ducklake.duckdb", "storage": "duckdb-v1.5.0", "bytes": 1, "sha256": "0" * 64},
            "ducklake": {"format": "1.0", "snapshot_id": seq, "snapshots": [seq, seq]}}


def vid(i):
    return f"019a3c4e-7b21-7f3a-9c55-{i:012x}"


def test_ten_thousand_versions_in_a_chain(repo, ledger):
    ledger.waive(repo.root, "the versions are forged by hand, not published")
    n = 10000
    for i in range(1, n + 1):
        d = repo.root / "versions" / vid(i)
        d.mkdir(parents=True)
        (d / "version.json").write_text(json.dumps(fake_version(vid(i), i, vid(i - 1) if i > 1 else None)))
    (repo.root / "refs" / "heads" / "main").write_text(vid(n) + "\n")
    out = fdl("log", repo.root, "--json", timeout=600).stdout.splitlines()  # the timeout is a safety net
    assert len(out) == n and json.loads(out[-1])["seq"] == 1
    assert fdl("log", repo.root, "--limit", "3").stdout.count("version ") == 3


def test_parent_cycle_is_caught(repo, ledger):
    ledger.waive(repo.root, "the versions are forged by hand, not published")
    # a -> b -> a: seq must fall by one at every step, so the walk stops
    a, b = vid(1), vid(2)
    for me, parent, seq in ((a, b, 2), (b, a, 3)):
        d = repo.root / "versions" / me
        d.mkdir(parents=True)
        (d / "version.json").write_text(json.dumps(fake_version(me, seq, parent)))
    (repo.root / "refs" / "heads" / "main").write_text(b + "\n")
    p = fdl("log", repo.root, check=False)
    assert p.returncode == 5 and "seq" in p.stderr


def test_huge_version_json_is_refused(repo, ledger):
    ledger.waive(repo.root, "the versions are forged by hand, not published")
    d = repo.root / "versions" / vid(1)
    d.mkdir(parents=True)
    doc = fake_version(vid(1), 1, None)
    doc["message"] = "x" * (3 * 1024 * 1024)
    (d / "version.json").write_text(json.dumps(doc))
    (repo.root / "refs" / "heads" / "main").write_text(vid(1) + "\n")
    p = fdl("show", repo.root, env={"FDL_MAX_METADATA_BYTES": str(1024 * 1024)}, check=False)
    assert p.returncode == 5 and "larger than the 1048576 bytes allowed" in p.stderr
    assert fdl("show", repo.root).returncode == 0  # the default bound (64 MiB) takes it


def test_trickling_server_is_given_up(repo, tmp_path):
    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"{")
                    self.wfile.flush()
                    time.sleep(1.5)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    # the server would trickle for 150 s; fdl gives up on it by itself (the
    # subprocess timeout is only a safety net, far above FDL_HTTP_TIMEOUT)
    p = fdl("query", url, "SELECT 1", env={"FDL_HTTP_TIMEOUT": "3", "FDL_CACHE_DIR": str(tmp_path / "c")},
            check=False, timeout=120)
    httpd.shutdown()
    assert p.returncode == 6 and "fdl.json" in p.stderr
