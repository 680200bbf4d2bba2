"""The history index (docs/format.md, "The history index"): a branch's whole
history in a few requests from a plain static host, derived and never the
truth. Absent, stale after a crash at each write point, edited by hand,
raced by four writers, and stripped away: the history read is the one the
version.json files give."""
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading

import pytest

from conftest import FDL, EXT, connect, fdl, fdl_setup, host_serves, host_stops, read_json


class Versions:
    """A repository with `n` versions of one table, one row each: a copy of
    the session's history of that length (histories.py; commit k inserted
    row k, "row k\n\nline two of k"). `add` commits more through a working
    catalog checked out of the copy when first needed (by the release
    build: the checkout is the scene; with setup, the commits too)."""

    def __init__(self, repo, tmp_path, n, histories):
        histories.copy(n, repo.root)
        self.repo = repo
        self.work = tmp_path / "w"
        self.n = n
        self._con = None

    @property
    def con(self):
        if self._con is None:
            self._con = self.repo.checkout(self.work, setup=True)
        return self._con

    def add(self, n, setup=False):
        for _ in range(n):
            self.n += 1
            self.con.execute(f"INSERT INTO lake.t VALUES ({self.n})")
            (fdl_setup if setup else fdl)("commit", self.work, "-m", f"row {self.n}\n\nline two of {self.n}")


def walk(root, branch="main"):
    """The truth: ids from the ref down the first parents, by version.json."""
    out = []
    vid = (root / "refs" / "heads" / branch).read_text().strip()
    while vid:
        v = read_json(root / "versions" / vid / "version.json")
        out.append(vid)
        vid = v["parents"][0] if v["parents"] else None
    return out


def log_ids(target, *extra, env=None):
    """The ids `fdl log --json` lists (each version whole), checked to be
    the ones plain `fdl log` lists (brief: only the index's heads)."""
    p = fdl("log", target, "--json", *extra, env=env)
    ids = [json.loads(line)["id"] for line in p.stdout.splitlines()]
    text = fdl("log", target, *extra, env=env).stdout
    assert re.findall(r"^version ([0-9a-f-]{36}) \(seq \d+\)$", text, re.M) == ids
    return ids


def pack_lines(pack):
    """A pack's lines as [head, sha256, version.json] (docs/format.md)."""
    out = []
    for line in pack.read_text().splitlines():
        head, sha, version = line.split("\t")
        out.append([json.loads(head), sha, json.loads(version)])
    return out


def write_pack(pack, lines):
    pack.write_text("".join("\t".join([json.dumps(h, separators=(",", ":")), sha,
                                        json.dumps(v, separators=(",", ":"))]) + "\n"
                            for h, sha, v in lines))


def without_index(root, tmp_path):
    """A copy of the repository with only the format's own files."""
    copy = tmp_path / "stripped"
    shutil.copytree(root, copy, symlinks=True)
    shutil.rmtree(copy / "history", ignore_errors=True)
    return copy


class CountingHost:
    """A plain static HTTP host (Python's http.server) that counts requests."""

    def __init__(self, root):
        self.requests = []
        host = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def send_head(self):
                host.requests.append(self.path)
                return super().send_head()

        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        host_serves(self.url, root)  # the ledger may map its URLs to the folder's files
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        host_stops(self.url)
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def host_of():
    hosts = []

    def start(root):
        h = CountingHost(root)
        hosts.append(h)
        return h
    yield start
    for h in hosts:
        h.close()


def cold(tmp_path, name):
    """An empty read cache: every request goes to the host."""
    d = tmp_path / f"cache-{name}"
    d.mkdir()
    return {"FDL_CACHE_DIR": str(d)}


def test_the_index_gives_the_same_history_in_a_few_requests(repo, tmp_path, host_of, histories):
    vs = Versions(repo, tmp_path, 40, histories)
    root = repo.root
    pointer = read_json(root / "history" / "heads" / "main.json")
    assert pointer["tip"] == repo.head() and pointer["seq"] == 40
    assert pointer["packs"] and 16 <= len(pointer["tail"]) <= 32
    truth = walk(root)
    assert len(truth) == 40
    # local: the same log, text and JSON, with the index and without it
    stripped = without_index(root, tmp_path)
    for args in ([], ["--json"], ["-n", "5"], ["main:30"]):
        assert fdl("log", root, *args).stdout == fdl("log", stripped, *args).stdout
    assert log_ids(root) == truth

    # a plain static host: the whole log in a few requests, cold cache
    host = host_of(root)
    for k, args in enumerate((["--json"], [])):  # whole, then brief (plain log reads only the heads)
        out = fdl("log", f"{host.url}@main", *args, env=cold(tmp_path, f"a{k}")).stdout
        assert out == fdl("log", root, *args).stdout
        assert len(host.requests) <= 5, host.requests
        assert not [r for r in host.requests if r.endswith("/version.json")]
        host.requests.clear()
    # main:1 resolves through the index, checked against its version.json
    shown = fdl("show", f"{host.url}@main:1", "--json", env=cold(tmp_path, "b")).stdout
    assert json.loads(shown)["id"] == truth[-1]
    resolved = [r for r in host.requests if r.endswith("/version.json")]
    assert resolved == [f"/versions/{truth[-1]}/version.json"], host.requests
    # without the index: one version.json per version
    plain = host_of(stripped)
    assert log_ids(f"{plain.url}@main", env=cold(tmp_path, "c")) == truth
    assert len([r for r in plain.requests if r.endswith("/version.json")]) == 40


def test_a_whole_history_of_150_versions_in_five_requests(repo, tmp_path, host_of, histories):
    """One pack at rest, whatever the length: a whole `fdl log URL`, by
    HEAD (fdl.json, HEAD, the ref, the pointer, the pack) or by branch,
    takes at most five requests from a plain static host with a cold cache,
    and lists what the version.json files give."""
    Versions(repo, tmp_path, 150, histories)
    root = repo.root
    pointer = read_json(root / "history" / "heads" / "main.json")
    assert pointer["seq"] == 150 and len(pointer["packs"]) == 1
    assert 16 <= len(pointer["tail"]) <= 32
    truth = walk(root)
    host = host_of(root)
    for k, (target, args) in enumerate(((host.url, ["--json"]), (host.url, []), (f"{host.url}@main", ["--json"]))):
        host.requests.clear()
        out = fdl("log", target, *args, env=cold(tmp_path, f"w{k}")).stdout
        assert out == fdl("log", root, *args).stdout
        assert len(host.requests) <= 5, host.requests
        assert not [r for r in host.requests if r.endswith("/version.json")]
    assert log_ids(f"{host.url}@main", env=cold(tmp_path, "ids")) == truth


def test_an_index_behind_its_branch_is_completed_never_shown(repo, tmp_path, histories):
    vs = Versions(repo, tmp_path, 20, histories)
    root = repo.root
    old = (root / "history" / "heads" / "main.json").read_bytes()
    vs.add(3, setup=True)
    (root / "history" / "heads" / "main.json").write_bytes(old)  # as if its writer died
    assert log_ids(root) == walk(root)
    assert fdl("log", root, "-n", "1").stdout.startswith(f"version {repo.head()} (seq 23)")
    rep = json.loads(fdl("verify", root, "--json").stdout)
    assert rep["problems"] == []
    assert any("history/heads/main.json" == w["where"] and
               "brings it up to date" in w["warning"] for w in rep["warnings"]), rep["warnings"]
    vs.add(1)  # the next commit brings it up to date
    assert read_json(root / "history" / "heads" / "main.json")["tip"] == repo.head()
    assert json.loads(fdl("verify", root, "--json").stdout)["warnings"] == []


def test_an_edited_index_never_opens_the_wrong_version(repo, tmp_path, histories):
    vs = Versions(repo, tmp_path, 40, histories)
    root = repo.root
    truth = walk(root)
    key = root / "history" / "heads" / "main.json"
    pointer = read_json(key)
    # the newest inline entry says another message: verify names the file
    pointer["tail"][-1]["version"]["message"] = "forged"
    key.write_text(json.dumps(pointer))
    rep = json.loads(fdl("verify", root, "--json", check=False).stdout)
    assert any(p["where"] == "history/heads/main.json" and truth[0] in p["problem"] for p in rep["problems"])
    assert fdl("verify", root, check=False).returncode != 0
    # a pack entry moved to another seq: the pack no longer holds together,
    # so readers read version.json files and seq refs stay right
    pack = root / "history" / "packs" / pointer["packs"][0]["name"]
    lines = pack_lines(pack)
    a, b = lines[0], lines[1]
    a[0][1], b[0][1] = b[0][1], a[0][1]  # the heads' ids
    a[2]["id"], b[2]["id"] = b[2]["id"], a[2]["id"]  # and their version.json's
    write_pack(pack, lines)
    for seq in (1, 2, 3):
        shown = json.loads(fdl("show", root, f"main:{seq}", "--json").stdout)
        assert shown["id"] == truth[-seq] and shown["seq"] == seq
    assert log_ids(root) == truth
    rep = json.loads(fdl("verify", root, "--json", check=False).stdout)
    assert any(pointer["packs"][0]["name"] in p["problem"] or pointer["packs"][0]["name"] in p["where"]
               for p in rep["problems"]), rep["problems"]
    # an entry whose recorded sha256 is not its version.json's: what
    # main:N opens is checked against the real file, and verify says so
    shutil.rmtree(root / "history")
    vs.add(1)
    truth = walk(root)
    pointer = read_json(key)
    pack = root / "history" / "packs" / pointer["packs"][0]["name"]
    lines = pack_lines(pack)
    lines[2][1] = "0" * 64
    write_pack(pack, lines)
    shown = json.loads(fdl("show", root, "main:3", "--json").stdout)
    assert shown["id"] == truth[-3]
    rep = json.loads(fdl("verify", root, "--json", check=False).stdout)
    assert any(truth[-3] in p["problem"] for p in rep["problems"]), rep["problems"]
    # a head that says another message than its version.json: plain `fdl
    # log` reads only heads, so it may show it (a listing, as the format
    # allows), but whatever reads the whole version is right and verify
    # names the pack
    lines = pack_lines(pack)
    lines[4][0][6] = "forged in the head"  # [seq, id, parents, created_at, name, email, message, changes]
    write_pack(pack, lines)
    pointer["packs"][0]["bytes"] = pack.stat().st_size
    key.write_text(json.dumps(pointer))
    shown = fdl("log", root).stdout
    assert "forged in the head" in shown
    assert all(json.loads(line)["message"] != "forged in the head"
               for line in fdl("log", root, "--json").stdout.splitlines())
    assert json.loads(fdl("show", root, "main:5", "--json").stdout)["message"] != "forged in the head"
    rep = json.loads(fdl("verify", root, "--json", check=False).stdout)
    assert any("differs from its version.json" in p["problem"] for p in rep["problems"]), rep["problems"]
    # a pointer that says a wrong seq is not used at all
    pointer["seq"] += 5
    key.write_text(json.dumps(pointer))
    assert log_ids(root) == truth
    assert json.loads(fdl("show", root, "main:3", "--json").stdout)["id"] == truth[-3]


def test_a_crash_at_each_write_point_leaves_a_history_that_reads_right(repo, tmp_path, ledger, histories):
    if b"FDL_CRASH_AT" not in open(FDL, "rb").read():
        pytest.fail(f"{FDL} is not a crash-point build (make test uses build/san/fdl)")
    vs = Versions(repo, tmp_path, 18, histories)
    root = repo.root
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="T", FDL_AUTHOR_EMAIL="t@e.org")
    crashed = 0
    for at in range(1, 60):
        vs.n += 1
        vs.con.execute(f"INSERT INTO lake.t VALUES ({vs.n})")
        before = repo.head()
        p = subprocess.run([FDL, "commit", vs.work, "-m", f"crash at {at}"], capture_output=True, text=True,
                           env=dict(env, FDL_CRASH_AT=str(at)))
        if repo.head() != before:  # published, whether or not the commit lived to say so
            ledger.record(root, repo.head())
        if p.returncode == 0:
            break
        crashed += 1
        assert log_ids(root) == walk(root), at
        rep = json.loads(fdl("verify", root, "--json", check=False).stdout)
        assert rep["problems"] == [], (at, rep["problems"])
    # the version's files, the ref, then the index's pack and pointer
    assert crashed >= 6
    assert log_ids(root) == walk(root)
    assert read_json(root / "history" / "heads" / "main.json")["tip"] == repo.head()
    assert json.loads(fdl("verify", root, "--json").stdout)["problems"] == []


def test_four_writers_racing_keep_one_history(repo, tmp_path, ledger, histories):
    vs = Versions(repo, tmp_path, 17, histories)
    root = repo.root
    works = []
    for k in range(4):
        w = tmp_path / f"w{k}"
        con = repo.checkout(w)
        works.append((w, con))
    wins = 0
    for rnd in range(3):
        for k, (w, con) in enumerate(works):
            con.execute(f"INSERT INTO lake.t VALUES ({1000 * rnd + k})")
        procs = [subprocess.Popen([FDL, "commit", w, "-m", f"r{rnd} w{k}"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True,
                                  env=dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="T"))
                 for k, (w, _) in enumerate(works)]
        codes = [p.wait(timeout=300) for p in procs]
        assert set(codes) <= {0, 4}, [p.stderr.read() for p in procs]
        ledger.published("".join(p.stdout.read() for p in procs))
        wins += codes.count(0)
        assert codes.count(0) >= 1
        for k, (w, con) in enumerate(works):  # losers start again from the new tip
            if codes[k] == 4:
                con.close()
                shutil.rmtree(w)
                works[k] = (w, repo.checkout(w))
        assert log_ids(root) == walk(root)
        rep = json.loads(fdl("verify", root, "--json").stdout)
        assert rep["problems"] == []
    assert len(walk(root)) == 17 + wins


def test_branches_share_packs_and_a_deleted_branch_takes_its_index(repo, tmp_path, histories):
    vs = Versions(repo, tmp_path, 40, histories)
    root = repo.root
    fdl("branch", root, "feature", "main:25")
    feature = read_json(root / "history" / "heads" / "feature.json")
    assert feature["seq"] == 25
    assert log_ids(root, "feature") == walk(root, "feature")
    fdl("branch", root, "--delete", "feature")
    assert not (root / "history" / "heads" / "feature.json").exists()
    names = {p["name"] for p in read_json(root / "history" / "heads" / "main.json")["packs"]}
    assert {p.name for p in (root / "history" / "packs").iterdir()} == names
    assert json.loads(fdl("verify", root, "--json").stdout)["warnings"] == []


def test_a_clone_has_its_own_index(repo, tmp_path, host_of, histories):
    Versions(repo, tmp_path, 20, histories)
    host = host_of(repo.root)
    dst = tmp_path / "copy"
    fdl("clone", host.url, dst)
    assert read_json(dst / "history" / "heads" / "main.json")["tip"] == repo.head()
    assert log_ids(dst) == walk(repo.root)


def test_a_withdrawn_version_json_leaves_no_copy_in_the_index(repo, tmp_path, histories):
    Versions(repo, tmp_path, 20, histories)
    root = repo.root
    victim = walk(root)[5]
    fdl("withdraw", root, victim, "--reason", "a secret in the message", "--remove-version-json", "--force")
    assert not (root / "versions" / victim / "version.json").exists()
    left = [f for f in root.rglob("*") if f.is_file() and "history" in f.parts and victim in f.read_text()]
    assert left == []


def test_gc_removes_packs_no_index_names(repo, tmp_path, histories):
    Versions(repo, tmp_path, 40, histories)
    root = repo.root
    packs = root / "history" / "packs"
    named = {p.name for p in packs.iterdir()}
    stray = packs / ("ab" * 32 + ".jsonl")
    stray.write_text("{}\n")  # as an interrupted writer leaves one
    rep = json.loads(fdl("verify", root, "--json").stdout)
    assert [w["where"] for w in rep["warnings"]] == [f"history/packs/{stray.name}"]
    kept = json.loads(fdl("gc", root, "--json").stdout)  # within the grace period
    assert stray.exists() and f"history/packs/{stray.name}" not in kept["deleted"]
    done = json.loads(fdl("gc", root, "--grace", "0s", "--json").stdout)
    assert f"history/packs/{stray.name}" in done["deleted"]
    assert {p.name for p in packs.iterdir()} == named
    assert json.loads(fdl("verify", root, "--json").stdout)["warnings"] == []
    # anything else under history/ is reported
    (root / "history" / "notes.txt").write_text("hello")
    rep = json.loads(fdl("verify", root, "--json", check=False).stdout)
    assert [p["where"] for p in rep["problems"]] == ["history/notes.txt"]


def test_a_hostile_index_is_ignored(repo, tmp_path, histories):
    """Someone else's repository: an index that names files outside
    history/packs, claims huge packs or points at a URL is not used, and the
    history read is still the one version.json files give."""
    Versions(repo, tmp_path, 5, histories)
    root = repo.root
    truth = walk(root)
    key = root / "history" / "heads" / "main.json"
    good = read_json(key)
    secret = tmp_path / "secret.jsonl"
    secret.write_text("{}\n")
    for packs in ([{"name": "../../../" + str(secret), "first_seq": 1, "last_seq": 1, "bytes": 3}],
                  [{"name": "a" * 64 + ".jsonl", "first_seq": 1, "last_seq": 10 ** 12, "bytes": 10 ** 15}],
                  [{"name": "http://127.0.0.1:9/x.jsonl", "first_seq": 1, "last_seq": 1, "bytes": 3}]):
        bad = dict(good, packs=packs, tail=good["tail"][1:])
        key.write_text(json.dumps(bad))
        assert log_ids(root) == truth
        assert json.loads(fdl("show", root, "main:1", "--json").stdout)["id"] == truth[-1]
        rep = json.loads(fdl("verify", root, "--json", check=False).stdout)
        assert [p["where"] for p in rep["problems"]] == ["history/heads/main.json"], rep["problems"]
