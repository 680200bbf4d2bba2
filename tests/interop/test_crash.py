"""Crash points: the test build aborts just before the Nth store write of a
command (FDL_CRASH_AT=N). For every N: the repository still verifies, the
ref is at the old or the new version, the working catalog lost nothing, and
running the command again completes the job with the same end state."""
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time

import pytest

from conftest import EXT, FDL, connect, fdl, fdl_setup, read_json, rows

COVERED = {}


@pytest.fixture(scope="module", autouse=True)
def crash_build():
    if b"FDL_CRASH_AT" not in open(FDL, "rb").read():
        pytest.fail(f"{FDL} is not a crash-point build (make test uses build/san/fdl)")
    yield
    if COVERED:
        print("\ncrash points covered: " + ", ".join(f"{k} {v}" for k, v in sorted(COVERED.items()))
              + f", total {sum(COVERED.values())}")


def run(args, crash_at=None):
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Test")
    if crash_at:
        env["FDL_CRASH_AT"] = str(crash_at)
    return subprocess.run([FDL, *map(str, args)], capture_output=True, text=True, env=env)


def tree(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def crash_loop(name, golden, live, args, check):
    """Restore `golden` into `live` before each run; crash at 1, 2, ...
    until the command completes without reaching a crash point. That last
    run, from `golden` untouched by a crash, is the clean run: each rerun
    after a crash must have ended with the files it leaves (commit and
    checkout aside: they make a new id each time)."""
    def restore():
        for g, l in zip(golden, live):
            shutil.rmtree(l, ignore_errors=True)
            shutil.copytree(g, l, symlinks=True)
    ends = {}  # crash point -> the files its rerun left
    n = 1
    while True:
        restore()
        p = run(args, crash_at=n)
        if p.returncode == 0:
            break
        assert "crash point" in p.stderr, (n, p.stderr)
        check(n, crashed=True)
        again = run(args)
        assert again.returncode == 0, (n, again.stderr)
        check(n, crashed=False)
        if name not in ("commit", "checkout"):
            ends[n] = [tree(l) for l in live]
        n += 1
    want = [tree(l) for l in live]  # the clean run's
    assert [k for k, end in ends.items() if end != want] == [], "reruns that ended otherwise than a clean run"
    COVERED[name] = n - 1
    assert n > 1


def verify_ok(root, n):
    v = run(["verify", root, "--all"])
    assert v.returncode == 0, (n, v.stdout)


def work_rows(work, *tables):
    """The rows a working folder's catalog holds, read through DuckLake, read
    only: of the table, or a list, one per table, of several (one DuckDB)."""
    rec = read_json(work / "fdl-work.json")
    con = connect()
    con.execute(f"ATTACH 'ducklake:{work}/ducklake.sqlite' AS w (READ_ONLY, DATA_PATH '{rec['data_path']}', "
                "OVERRIDE_DATA_PATH true, META_TYPE 'sqlite')")
    found = [rows(con, f"w.{t}") for t in tables]
    con.close()
    return found[0] if len(tables) == 1 else found


def test_commit(repo, tmp_path, ledger):
    """A commit's writes: the record's renewal, the new data files published
    from the working catalog's folder (two tables, two files), the version's
    files, the ref, then the working catalog's copies removed and the record
    renewed with the new base."""
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("CREATE TABLE lake.u (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    fdl("commit", tmp_path / "work", "-m", "one")
    old = repo.head()
    con.execute("INSERT INTO lake.t VALUES (2)")
    con.execute("INSERT INTO lake.u VALUES (3)")
    con.close()
    golden = [tmp_path / "g-repo", tmp_path / "g-work"]
    shutil.copytree(repo.root, golden[0])
    shutil.copytree(tmp_path / "work", golden[1])
    catalog_sha = digest(golden[1] / "ducklake.sqlite")
    [record] = (repo.root / "work").glob("*.json")

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(), n  # version one answers as it did, after every crash
        head = repo.head()
        assert head == old or repo.version(head)["parents"] == [old], n
        if head == old:  # nothing published: the working catalog is as it was
            assert digest(tmp_path / "work" / "ducklake.sqlite") == catalog_sha, n
        # whatever happened, the working catalog lost nothing
        assert work_rows(tmp_path / "work", "t", "u") == [[(1,), (2,)], [(3,)]], n
        if not crashed:
            v = repo.version(repo.head())
            assert v["parents"] == [old] and v["seq"] == 2
            main = repo.open_version("main")
            assert rows(main, "lake.t") == [(1,), (2,)] and rows(main, "lake.u") == [(3,)]
            main.close()
            assert read_json(tmp_path / "work" / "fdl-work.json")["base"] == repo.head()
            assert read_json(record)["base"] == repo.head()
            assert not list((repo.root / "work").rglob("*.parquet")), n  # published, not kept twice
    crash_loop("commit", golden, [repo.root, tmp_path / "work"], ["commit", tmp_path / "work", "-m", "two"], check)
    ledger.record(repo.root, repo.head())  # the last run's version two is the one left published


def held_commit(args, gate, crash_at):
    """fdl commit killed at its crash_at-th write (FDL_CRASH_AT), held before
    the first write of its version (pause point commit-frozen, after its
    preview started) until the preview is computed (preview-held, let go at
    once: nothing holds the preview but the commit's own gate). Returns its
    exit code, its stderr and whether both points were reached (the preview
    was ready to write before any file of the version was)."""
    gate.mkdir()
    (gate / "preview-held.go").touch()  # kept: every pass goes through
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Test", FDL_CRASH_AT=str(crash_at),
               FDL_PAUSE_AT="commit-frozen,preview-held", FDL_PAUSE_DIR=str(gate))
    p = subprocess.Popen([FDL, *map(str, args)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    points = [gate / "commit-frozen.reached", gate / "preview-held.reached"]
    try:
        deadline = time.monotonic() + 300  # a safety net, never the outcome
        while not all(x.exists() for x in points) and p.poll() is None:
            assert time.monotonic() < deadline, "the commit never reached its pause points"
            time.sleep(0.005)
        held = all(x.exists() for x in points)
        (gate / "commit-frozen.go").touch()
        _, err = p.communicate(timeout=600)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, err, held


def previews_held(root):
    """Every file under previews/ with its sha256."""
    return {str(p.relative_to(root)): digest(p) for p in (root / "previews").rglob("*") if p.is_file()}


def test_commit_writes_no_preview_before_its_version(repo, tmp_path, ledger, monkeypatch):
    """A commit's preview is computed beside its version's writes, from what
    the commit holds (the frozen catalog, files.json's tables, the base), and
    its table files and preview are written only once version.json is: held
    until its preview is computed, then killed at each write up to the ref
    update and past it, no preview or table file of a version never written
    is left; a version written (taken by the ref or not) may have its
    preview; the rerun ends with the new tip's preview."""
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    work = tmp_path / "work"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t AS SELECT i AS a, 'x' || i AS b FROM range(100) r(i)")
    con.execute("CREATE TABLE lake.u (a INTEGER)")
    con.execute("INSERT INTO lake.u VALUES (1)")
    fdl("commit", work, "-m", "one")
    old = repo.head()
    con.execute("INSERT INTO lake.t VALUES (-1, 'new')")
    con.close()
    golden = [tmp_path / "g-repo", tmp_path / "g-work"]
    shutil.copytree(repo.root, golden[0])
    shutil.copytree(work, golden[1])
    before = previews_held(repo.root)
    versions = {p.name for p in (repo.root / "versions").iterdir()}
    assert f"previews/{old}.json" in before
    unwritten = 0  # kills after the preview was computed, before its version was written
    n = 1
    while True:
        for g, live in zip(golden, [repo.root, work]):
            shutil.rmtree(live)
            shutil.copytree(g, live, symlinks=True)
        code, err, held = held_commit(["commit", work, "-m", "two"], tmp_path / f"gate-{n}", n)
        if code == 0:
            break
        assert "crash point" in err, (n, err)
        verify_ok(repo.root, n)
        assert previews_of_live_only(repo.root, unnamed=True), n
        new = {d.name for d in (repo.root / "versions").iterdir()} - versions
        if not any((repo.root / "versions" / v / "version.json").exists() for v in new):
            assert previews_held(repo.root) == before, n  # nothing of the preview of a version never written
            unwritten += held
        again = run(["commit", work, "-m", "two"])
        assert again.returncode == 0, (n, again.stderr)
        assert repo.version(repo.head())["parents"] == [old], n
        assert (repo.root / "previews" / f"{repo.head()}.json").exists(), n
        assert previews_of_live_only(repo.root), n  # a table file left unnamed is the rerun's again
        verify_ok(repo.root, n)
        n += 1
    assert unwritten == 4, unwritten  # killed at the catalog, dataset.json, files.json and version.json
    assert (repo.root / "previews" / f"{repo.head()}.json").exists() and previews_of_live_only(repo.root)
    COVERED["commit (preview held)"] = n - 1
    ledger.record(repo.root, repo.head())


def commit_held_until(work, gate, point, says, while_held):
    """fdl commit of `work` (traced) with its preview held at pause point
    `point` until its trace says `says` (the commit waiting for it); then
    while_held(lines so far) runs, the preview is let go and the commit must
    end well. Returns its whole trace. Without the wait the commit would end
    at its join, held by the preview: the deadline is a safety net, never
    the outcome."""
    gate.mkdir()
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Test", FDL_TRACE="1",
               FDL_PAUSE_AT=point, FDL_PAUSE_DIR=str(gate))
    p = subprocess.Popen([FDL, "commit", work, "-m", "two"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    err, waits = [], threading.Event()

    def read():  # the commit's trace, as it comes
        for line in p.stderr:
            err.append(line)
            if says in line:
                waits.set()
    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert waits.wait(timeout=300), f"no {says!r}:\n" + "".join(err[-20:])
        assert (gate / f"{point}.reached").exists()
        while_held(list(err))
        (gate / f"{point}.go").touch()
        assert p.wait(timeout=600) == 0, "".join(err)
    finally:
        if p.poll() is None:
            p.kill()
        reader.join()
    return "".join(err)


def preview_is_fdl_previews(repo):
    """Every file under previews/ (the tip's among them) is byte for byte
    what fdl preview computes once previews/ is removed."""
    previews = repo.root / "previews"

    def held():
        return {str(q.relative_to(previews)): q.read_bytes() for q in previews.rglob("*") if q.is_file()}
    at_commit = held()
    assert f"{repo.head()}.json" in at_commit
    shutil.rmtree(previews)
    fdl("preview", repo.root)
    assert held() == at_commit


def test_a_commit_keeps_its_new_files_until_its_preview_read_them(repo, tmp_path, ledger, monkeypatch):
    """The preview beside a commit reads a table's new data files where the
    freeze found them (the working catalog's own folder: they are published
    later); the commit waits for those reads before its copies there go.
    Held before its first read (pause point preview-reading) while the
    commit goes on, the commit stops and waits, its copy of the new file
    still there; let go, the preview reads the table from its data files,
    and it is byte for byte the one fdl preview computes from the version."""
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    work = tmp_path / "work"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t AS SELECT i AS a, 'x' || i AS b FROM range(100) r(i)")
    fdl("commit", work, "-m", "one")
    con.execute("INSERT INTO lake.t VALUES (-1, 'new')")
    con.close()
    staged = lambda: sorted((repo.root / "work").rglob("*.parquet"))  # noqa: E731
    assert len(staged()) == 1
    def copy_kept(_):
        assert len(staged()) == 1  # its copy of the new file is still there
    trace = commit_held_until(work, tmp_path / "gate", "preview-reading", "waiting for the preview's reads", copy_kept)
    assert "preview: main.t read from its data files" in trace, trace
    assert "through DuckLake" not in trace, trace
    assert staged() == []  # published, then gone from the working catalog's folder
    preview_is_fdl_previews(repo)
    ledger.record(repo.root, repo.head())


def test_the_freeze_detaches_its_catalog_once_the_preview_read_it(repo, tmp_path, ledger, monkeypatch):
    """The preview beside a commit starts while the freeze still has the new
    catalog attached and reads the tables' states from it on its own
    thread; the freeze waits for that read before the detach that writes the
    catalog's file. Held before it (pause point preview-started), the freeze
    stops and waits; let go, the commit ends with the version's preview,
    byte for byte the one fdl preview computes."""
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    work = tmp_path / "work"
    con = repo.checkout(work, setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT i AS a, 'x' || i AS b FROM range(100) r(i)")
    fdl_setup("commit", work, "-m", "one")
    con.execute("INSERT INTO lake.t VALUES (-1, 'new')")
    con.close()
    def not_detached(lines):
        assert not any("DETACH fdl_new" in line for line in lines), "".join(lines)
    trace = commit_held_until(work, tmp_path / "gate", "preview-started",
                              "waiting for the preview to read the tables' states", not_detached)
    assert "preview: main.t read from its data files" in trace, trace
    preview_is_fdl_previews(repo)
    ledger.record(repo.root, repo.head())


def test_checkout_and_abandon(repo, tmp_path):
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    fdl("commit", tmp_path / "w", "-m", "one")
    con.close()
    spot = tmp_path / "spot"
    spot.mkdir()
    golden = [tmp_path / "g-repo", tmp_path / "g-spot"]
    shutil.copytree(repo.root, golden[0])
    shutil.copytree(spot, golden[1])

    def check(n, crashed):
        verify_ok(repo.root, n)
        if not crashed:
            assert work_rows(spot / "work", "t") == [(1,)]
            rec = read_json(spot / "work" / "fdl-work.json")
            assert (repo.root / "work" / f"{rec['id']}.json").exists()
    crash_loop("checkout", golden, [repo.root, spot], ["checkout", repo.root, spot / "work"], check)
    # abandoning: the record, then each uncommitted file, then the folder
    con = connect()
    con.execute(fdl("checkout", repo.root, tmp_path / "a").stdout)
    for i in range(3):
        con.execute(f"INSERT INTO lake.t VALUES ({10 + i})")
    con.close()
    golden = [tmp_path / "g2-repo", tmp_path / "g2-a"]
    shutil.copytree(repo.root, golden[0])
    shutil.copytree(tmp_path / "a", golden[1])

    def check_abandon(n, crashed):
        verify_ok(repo.root, n)
        assert rows(repo.open_version("main"), "lake.t") == [(1,)]
    crash_loop("checkout --abandon", golden, [repo.root, tmp_path / "a"], ["checkout", "--abandon", tmp_path / "a"],
               check_abandon)


THREE = [("v0", ["CREATE TABLE lake.t (a INTEGER)", "INSERT INTO lake.t VALUES (0)"]),
         ("v1", ["INSERT INTO lake.t VALUES (1)"]), ("v2", ["INSERT INTO lake.t VALUES (2)"])]


def three_versions(repo, histories):
    """Three versions of t, one row more each, from one working catalog: a
    copy of the session's (histories.published: the scene, not the
    subject; the command each test kills runs the build under test).
    Their ids, oldest first."""
    return histories.published(THREE, repo.root)


@pytest.mark.quick
def test_expire(repo, tmp_path, ledger, histories):
    v0, v1, v2 = three_versions(repo, histories)
    ledger.gone(v0, v1)  # retention keeps one
    cfg = read_json(repo.root / "fdl.json")
    cfg["retention"] = {"days": 0, "keep": 1}
    (repo.root / "fdl.json").write_text(json.dumps(cfg))
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(vids=[v2]), n
        assert rows(repo.open_version("main"), "lake.t") == [(0,), (1,), (2,)]
    crash_loop("expire", [golden], [repo.root], ["expire", repo.root], check)


def test_withdraw(repo, tmp_path, ledger, histories):
    v0, v1, v2 = three_versions(repo, histories)
    ledger.gone(v1, v2)
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(vids=[v0]), n
        assert rows(repo.open_version(v0), "lake.t") == [(0,)]
        if not crashed:
            for v in (v1, v2):
                assert read_json(repo.root / "versions" / v / "expired.json")["reason"] == "withdrawn"
    crash_loop("withdraw", [golden], [repo.root], ["withdraw", repo.root, v1, "--reason", "mistake", "--force"], check)


SECRET = [("version 0", ["CREATE TABLE lake.t (s VARCHAR)", "CREATE TABLE lake.u (a INTEGER)",
                         "INSERT INTO lake.u VALUES (7)", "INSERT INTO lake.t VALUES ('open-v0')"]),
          ("version 1", ["INSERT INTO lake.t VALUES ('secret-v1')"]),
          ("version 2", ["INSERT INTO lake.t VALUES ('secret-v2')"])]


def secret_versions(repo, histories):
    """Three versions with previews and pages (FDL_PREVIEW_AT_COMMIT=1, set
    by the test before, when the session's copy is made; fdl site): t gets
    'open-v0', then 'secret-v1', then 'secret-v2'; u, left as it was, shares
    one preview file between all three. The versions are a copy of the
    session's (histories.published: the scene, made once by the release
    build; the site and the command each test kills run the build under
    test); a message a gone version's page keeps."""
    ids = histories.published(SECRET, repo.root)
    assert all((repo.root / "previews" / f"{v}.json").exists() for v in ids), "built without FDL_PREVIEW_AT_COMMIT"
    fdl("site", repo.root)
    return ids


def derived_showing(root, text):
    """The files under previews/ and site/, and index.html, holding `text`."""
    files = [p for d in ("previews", "site") for p in (root / d).rglob("*") if p.is_file()] + [root / "index.html"]
    return sorted(str(p.relative_to(root)) for p in files if p.exists() and text.encode() in p.read_bytes())


def previews_of_live_only(root, unnamed=False):
    """No preview of a gone version, no table file that no preview names
    (with unnamed, some may be left: a kill between a preview's table files
    and the preview, which verify warns of and the rerun names), and no
    landing card (previews/HEAD.json) of a gone version."""
    live = {p.parent.name for p in (root / "versions").glob("*/version.json")
            if not (p.parent / "expired.json").exists()}
    docs = {p.stem: read_json(p) for p in (root / "previews").glob("*.json") if p.name != "HEAD.json"}
    named = {t["key"] for d in docs.values() for t in d["tables"]}
    tables = {str(p.relative_to(root)) for p in (root / "previews" / "tables").glob("*.json")}
    card = root / "previews" / "HEAD.json"
    return set(docs) <= live and (unnamed or tables <= named) and (not card.exists() or read_json(card)["tip"] in live)


def test_withdraw_leaves_no_preview_of_the_withdrawn_rows_at_any_point(repo, tmp_path, ledger, monkeypatch, histories):
    """A withdrawal deletes the previews and pages of the versions it takes
    before their expired.json: killed at any write, no file under previews/
    or site/ (nor index.html) holds their rows once one of them is marked
    withdrawn, and the rerun ends as a clean run does."""
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    v0, v1, v2 = secret_versions(repo, histories)
    ledger.gone(v1, v2)
    assert derived_showing(repo.root, "secret-v1")  # the test can fail: the rows are there to begin with
    assert "secret-v2" in (repo.root / "previews" / "HEAD.json").read_text()  # and in the landing card
    shared = read_json(repo.root / "previews" / f"{v0}.json")["tables"]
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(vids=[v0]), n
        marked = [v for v in (v1, v2) if (repo.root / "versions" / v / "expired.json").exists()]
        if marked:
            assert derived_showing(repo.root, "secret-v") == [], (n, marked)
            assert previews_of_live_only(repo.root), n
        if not crashed:
            assert not (repo.root / "previews" / "HEAD.json").exists()  # HEAD's tip (v2) withdrawn: no card
            assert read_json(repo.root / "previews" / f"{v0}.json")["tables"] == shared
            assert all((repo.root / t["key"]).exists() for t in shared)  # u's file, named by v0, stays
            assert not (repo.root / "previews" / f"{v1}.json").exists()
            assert derived_showing(repo.root, "open-v0")  # v0's page and preview keep their rows
    crash_loop("withdraw (previews)", [golden], [repo.root],
               ["withdraw", repo.root, v1, "--reason", "personal data", "--force"], check)


def test_expire_leaves_no_preview_of_an_expired_version_at_any_point(repo, tmp_path, ledger, monkeypatch, histories):
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    v0, v1, v2 = secret_versions(repo, histories)
    ledger.gone(v0, v1)
    cfg = read_json(repo.root / "fdl.json")
    cfg["retention"] = {"days": 0, "keep": 1}
    (repo.root / "fdl.json").write_text(json.dumps(cfg))
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        marked = [v for v in (v0, v1) if (repo.root / "versions" / v / "expired.json").exists()]
        if marked:
            assert previews_of_live_only(repo.root), (n, marked)
            assert not any((repo.root / "site" / v / "croissant.json").exists() for v in marked), n
        if not crashed:
            assert {p.stem for p in (repo.root / "previews").glob("*.json")} == {v2, "HEAD"}
            assert read_json(repo.root / "previews" / "HEAD.json")["tip"] == v2  # the card stays, HEAD's tip live
    crash_loop("expire (previews)", [golden], [repo.root], ["expire", repo.root], check)


def test_gc_deletes_a_gone_versions_preview_first(repo, tmp_path, ledger, monkeypatch, histories):
    """A preview a withdrawal of an older fdl left behind (killed between
    expired.json and its sweep) goes at gc's first write."""
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    v0, v1, v2 = secret_versions(repo, histories)
    before = tmp_path / "before"
    shutil.copytree(repo.root / "previews", before)
    fdl("withdraw", repo.root, v1, "--reason", "personal data", "--force")
    ledger.gone(v1, v2)
    assert derived_showing(repo.root, "secret-v") == []
    shutil.copytree(before, repo.root / "previews", dirs_exist_ok=True)  # the state the old order could leave
    assert derived_showing(repo.root, "secret-v")
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def rest(root):  # every file outside previews/, with its bytes
        return {str(p.relative_to(root)): digest(p) for p in root.rglob("*")
                if p.is_file() and p.relative_to(root).parts[0] != "previews"}
    untouched = rest(golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        left = derived_showing(repo.root, "secret-v")
        # the sweep is gc's first work: nothing else has changed while any is left
        assert not left or rest(repo.root) == untouched, (n, left)
        if not crashed:
            assert left == [] and previews_of_live_only(repo.root)
    crash_loop("gc (previews)", [golden], [repo.root], ["gc", repo.root, "--grace", "0s"], check)


def test_gc(repo, tmp_path, ledger):
    """gc's deletions: a data file no version references, the files of a
    working catalog whose record is gone, and one whose lease ended (record
    first, then its files); a live working catalog's files are kept."""
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    fdl("commit", tmp_path / "work", "-m", "one")
    for i in range(2):  # files never committed, of a live working catalog
        con.execute(f"INSERT INTO lake.t VALUES ({10 + i})")
    con.close()
    records = {}
    for name in ("gone", "ended"):
        c = repo.checkout(tmp_path / name)
        c.execute("INSERT INTO lake.t VALUES (20)")
        c.close()
        records[name] = read_json(tmp_path / name / "fdl-work.json")["id"]
    (repo.root / "work" / f"{records['gone']}.json").unlink()  # a checkout that left no record
    ended = repo.root / "work" / f"{records['ended']}.json"
    rec = read_json(ended)
    rec["used_at"] = "2020-01-01T00:00:00Z"
    ended.write_text(json.dumps(rec))
    stray = repo.root / "data" / "main" / "t" / "ducklake-019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c.parquet"
    stray.write_bytes(b"PAR1")
    live = sorted((repo.root / "work" / read_json(tmp_path / "work" / "fdl-work.json")["id"]).rglob("*.parquet"))
    assert len(live) == 2
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(), n
        assert rows(repo.open_version("main"), "lake.t") == [(1,)]
        assert all(p.exists() for p in live), n
        if not crashed:
            assert not stray.exists() and not ended.exists()
            assert not list((repo.root / "work" / records["gone"]).rglob("*.parquet"))
            assert not list((repo.root / "work" / records["ended"]).rglob("*.parquet"))
    crash_loop("gc", [golden], [repo.root], ["gc", repo.root, "--grace", "0s"], check)


def test_branch(repo, tmp_path, ledger, histories):
    v0, v1, v2 = three_versions(repo, histories)
    golden = tmp_path / "g"
    shutil.copytree(repo.root, golden)

    def check(n, crashed):
        verify_ok(repo.root, n)
        assert not ledger.problems(), n
        ref = repo.root / "refs" / "heads" / "dev"
        assert not ref.exists() or ref.read_text().strip() == v1
    crash_loop("branch", [golden], [repo.root], ["branch", repo.root, "dev", v1], check)
    fdl("branch", repo.root, "gone", v0)
    golden2 = tmp_path / "g2"
    shutil.copytree(repo.root, golden2)

    def check_delete(n, crashed):
        verify_ok(repo.root, n)
    crash_loop("branch --delete", [golden2], [repo.root], ["branch", repo.root, "--delete", "gone"], check_delete)
