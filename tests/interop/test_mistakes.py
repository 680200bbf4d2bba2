"""Mistakes a publisher or a mirror can make, seen coming and undone (issue
36): each test replays one finding as a new user met it and checks what fdl
says and does now. Expected rows come from stock DuckDB."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import EXT, FDL, connect, fdl, fdl_setup, read_json, rows, tables


def commit(work, msg, *extra, check=True):
    return fdl("commit", work, "-m", msg, *extra, check=check)


def scene(work, msg):
    """A commit of the test's scene: the release build (fdl_setup), for the
    versions a test starts from and asserts nothing about (tests/README.md,
    "Shared setups")."""
    return fdl_setup("commit", work, "-m", msg)


def test_serve_on_a_taken_port_says_it_once(repo):
    """Finding: `fdl serve` on a taken port printed libmicrohttpd's
    "Failed to bind to port 0" before fdl's own message."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        p = fdl("serve", repo.root, "--port", port, check=False, timeout=60)
    assert p.returncode == 6
    assert p.stderr.strip().splitlines() == [f"fdl: cannot listen on 127.0.0.1:{port}: Address already in use"]


def test_dry_runs_with_nothing_to_do_say_so(repo, tmp_path):
    """Finding: `expire --dry-run` and `gc --dry-run` with nothing to do
    printed nothing at all."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    scene(tmp_path / "w", "one")
    for args in (["expire", "--dry-run"], ["expire"]):
        out = fdl(*args[:1], repo.root, *args[1:]).stdout
        assert out.startswith("Nothing") and "retention" in out, out
    for args in (["gc", "--dry-run"], ["gc", "--grace", "0s"]):
        out = fdl(*args[:1], repo.root, *args[1:]).stdout
        assert out.startswith("Nothing") and "grace period" in out, out


def history(repo, tmp_path, n, work="w"):
    """n versions on main, each replacing t with one row (i); the ids.
    The tests' scene: checked out and committed by the release build."""
    con = repo.checkout(tmp_path / work, setup=True)
    ids = []
    for i in range(1, n + 1):
        con.execute(f"CREATE OR REPLACE TABLE lake.t AS SELECT {i} AS a")
        scene(tmp_path / work, f"v{i}")
        ids.append(repo.head())
    return con, ids


def test_branch_force_moves_a_branch_back_and_prints_the_way_forward(repo, tmp_path):
    """Finding: no way to move a branch back (no `branch -f`, no reset)."""
    con, ids = history(repo, tmp_path, 3)
    p = fdl("branch", repo.root, "main", "main:2", check=False)
    assert p.returncode == 9 and "--force" in p.stderr and repo.head() == ids[2]
    out = fdl("branch", repo.root, "main", "main:2", "--force").stdout
    assert repo.head() == ids[1]
    assert f"from {ids[2]} to {ids[1]}" in out
    assert f"fdl branch {repo.root} main {ids[2]} --force" in out  # the way back, printed
    assert rows(repo.open_version("main"), "lake.t") == [(2,)]
    # the working catalog based on the old tip conflicts, writing nothing
    con.execute("INSERT INTO lake.t VALUES (9)")
    p = commit(tmp_path / "w", "on the old tip", check=False)
    assert p.returncode == 4 and ids[2] in p.stderr
    assert repo.head() == ids[1]
    # history, the ref list and a new commit on the moved branch all hold
    assert [json.loads(l)["id"] for l in fdl("log", repo.root, "--json").stdout.splitlines()] == ids[1::-1]
    w2 = repo.checkout(tmp_path / "w2")
    w2.execute("INSERT INTO lake.t VALUES (3)")
    commit(tmp_path / "w2", "after the move")
    assert repo.version(repo.head())["parents"] == [ids[1]] and repo.version(repo.head())["seq"] == 3
    assert read_json(repo.root / "history" / "refs.json")["refs"]["refs/heads/main"] == repo.head()
    fdl("verify", repo.root)
    # and back again with the printed command
    fdl("branch", repo.root, "main", ids[2], "--force")
    assert repo.head() == ids[2]
    assert rows(repo.open_version("main"), "lake.t") == [(3,)]


def test_set_head_names_another_branch(repo, tmp_path):
    """Finding: no way to make HEAD name another branch, so the default
    branch could never be deleted."""
    history(repo, tmp_path, 1)
    fdl("branch", repo.root, "fixes")
    assert fdl("branch", repo.root, "--set-head", "nope", check=False).returncode == 3
    out = fdl("branch", repo.root, "--set-head", "fixes").stdout
    assert "HEAD now names branch fixes (it named main)" in out
    assert (repo.root / "HEAD").read_text() == "ref: refs/heads/fixes\n"
    fdl("branch", repo.root, "--delete", "main")
    assert fdl("branch", repo.root).stdout.startswith("* fixes")
    fdl("verify", repo.root)


def test_a_ref_named_like_a_seq_is_refused(repo, tmp_path):
    """Finding: a tag named `3` silently won over seq 3."""
    _, ids = history(repo, tmp_path, 3)
    for cmd in ("tag", "branch"):
        p = fdl(cmd, repo.root, "3", "main:1", check=False)
        assert p.returncode == 5 and "seq 3" in p.stderr and "v3" in p.stderr
        assert fdl(cmd, repo.root, ids[0], check=False).returncode == 5
    assert not list((repo.root / "refs" / "tags").iterdir())
    assert json.loads(fdl("show", repo.root, "3", "--json").stdout)["id"] == ids[2]


def test_checkout_of_a_missing_branch_is_refused(repo, tmp_path):
    """Finding: `checkout --ref corection` exited 0 with an empty catalog and
    the next commit published `corection` as an unrelated seq 1."""
    _, ids = history(repo, tmp_path, 2)
    fdl_setup("branch", repo.root, "correction")  # scene: the checkouts are checked
    fdl_setup("tag", repo.root, "v2025", "main:1")
    before = sorted(p.relative_to(repo.root) for p in repo.root.rglob("*"))
    p = fdl("checkout", repo.root, tmp_path / "c", "--ref", "corection", check=False)
    assert p.returncode == 3
    assert "did you mean 'correction'?" in p.stderr and "--new-branch corection" in p.stderr
    assert not (tmp_path / "c").exists()
    p = fdl("checkout", repo.root, tmp_path / "c", "--ref", "v2025", check=False)
    assert p.returncode == 5 and "--new-branch NAME --from v2025" in p.stderr
    assert sorted(p.relative_to(repo.root) for p in repo.root.rglob("*")) == before
    # a ref mistyped anywhere else gets the same help
    p = fdl("show", repo.root, "corection", check=False)
    assert p.returncode == 3 and "did you mean 'correction'?" in p.stderr
    # asked for explicitly: from a named version (git checkout -b) ...
    c = repo.checkout(tmp_path / "c", "--new-branch", "fix-2025", "--from", "v2025")
    assert repo.head("fix-2025") == ids[0]
    assert rows(c, "lake.t") == [(1,)]
    c.execute("INSERT INTO lake.t VALUES (10)")
    commit(tmp_path / "c", "a fix on 2025")
    assert repo.version(repo.head("fix-2025"))["parents"] == [ids[0]]
    assert fdl("checkout", repo.root, tmp_path / "c2", "-b", "main", check=False).returncode == 9
    # ... or empty (git checkout --orphan): no version until its first commit
    o = repo.checkout(tmp_path / "o", "--orphan", "scratch")
    assert tables(o) == [] and not (repo.root / "refs" / "heads" / "scratch").exists()
    o.execute("CREATE TABLE lake.s AS SELECT 1 AS x")
    commit(tmp_path / "o", "scratch")
    assert repo.version(repo.head("scratch"))["parents"] == []
    fdl("verify", repo.root)


def test_nothing_to_commit_on_an_empty_repository(repo, tmp_path):
    """Finding: committing an untouched checkout of an empty repository, or
    `fdl run` of a command that writes nothing, published an empty version."""
    repo.checkout(tmp_path / "w", setup=True).close()
    p = commit(tmp_path / "w", "nothing", check=False)
    assert p.returncode == 8 and "nothing to commit" in p.stderr
    p = fdl("run", repo.root, "--", "true")
    assert "nothing to commit" in p.stdout
    assert not (repo.root / "refs" / "heads" / "main").exists()
    assert not [v for v in (repo.root / "versions").iterdir()]
    # a description alone is something to commit, even on an empty repository
    (tmp_path / "w" / "dataset.yml").write_text("name: stats\ntitle: Monthly statistics\n")
    commit(tmp_path / "w", "the description first")
    assert json.loads(fdl("show", repo.root, "--json").stdout)["seq"] == 1


DESCRIBED = """name: stats
title: Monthly statistics
tables:
  - name: monthly_indicators
    description: one row a month
    fields:
      - name: month
        description: the month
      - name: obs_status
        description: whether the value is provisional
"""


def test_a_renamed_column_keeps_its_description(repo, tmp_path):
    """Finding: a renamed column lost its description silently, and the
    commit after it failed naming the table's line for the column."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.monthly_indicators (month INTEGER, obs_status VARCHAR)")
    con.execute("INSERT INTO lake.monthly_indicators VALUES (1, 'A')")
    (tmp_path / "w" / "dataset.yml").write_text(DESCRIBED)
    scene(tmp_path / "w", "one")
    con.execute("ALTER TABLE lake.monthly_indicators RENAME COLUMN obs_status TO status")

    def described(ref="main"):
        vid = json.loads(fdl("show", repo.root, ref, "--json").stdout)["id"]
        ds = read_json(repo.root / "versions" / vid / "dataset.json")
        return {f["name"]: f.get("description") for f in ds["tables"][0]["fields"]}

    p = commit(tmp_path / "w", "rename")
    assert described() == {"month": "the month", "status": "whether the value is provisional"}
    # the warning names the file and the column's own line (9), not the table's (4)
    assert f"{tmp_path / 'w' / 'dataset.yml'}, line 9: describes column 'obs_status'" in p.stderr
    assert "renamed to 'status'" in p.stderr
    # the next two commits keep working, each saying it again, until the publisher edits the file
    for i in (2, 3):
        con.execute(f"INSERT INTO lake.monthly_indicators VALUES ({i}, 'B')")
        p = commit(tmp_path / "w", f"month {i}")
        assert "line 9: describes column 'obs_status'" in p.stderr
        assert described()["status"] == "whether the value is provisional"
    (tmp_path / "w" / "dataset.yml").write_text(DESCRIBED.replace("obs_status", "status"))
    con.execute("INSERT INTO lake.monthly_indicators VALUES (4, 'C')")
    p = commit(tmp_path / "w", "edited")
    assert "warning" not in p.stderr
    assert described()["status"] == "whether the value is provisional"
    # a fresh checkout's dataset.yml names the new name; a table rename is followed too
    con.close()
    con = repo.checkout(tmp_path / "w2")
    assert "name: status" in (tmp_path / "w2" / "dataset.yml").read_text()
    con.execute("ALTER TABLE lake.monthly_indicators RENAME TO indicators")
    p = commit(tmp_path / "w2", "table renamed")
    assert "describes table main.monthly_indicators, renamed to main.indicators" in p.stderr
    ds = read_json(repo.root / "versions" / repo.head() / "dataset.json")
    assert ds["tables"][0]["name"] == "indicators" and ds["tables"][0]["description"] == "one row a month"
    fdl("verify", repo.root)


def test_a_catalog_migrated_to_ducklake_1_1_is_refused_at_commit(repo, tmp_path):
    """DuckDB 2.0 ships DuckLake 1.1, which migrates a working catalog when
    asked to; versions must stay format 1.0 for readers on DuckDB 1.5."""
    import sqlite3
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    db = sqlite3.connect(tmp_path / "w" / "ducklake.sqlite")
    with db:
        db.execute("UPDATE ducklake_metadata SET value = '1.1' WHERE key = 'version' AND scope IS NULL")
    db.close()
    p = commit(tmp_path / "w", "migrated", check=False)
    assert p.returncode == 5
    assert "DuckLake format 1.1" in p.stderr and "Nothing was published" in p.stderr
    assert "AUTOMATIC_MIGRATION" in p.stderr and "ducklake_default_version" in p.stderr
    assert not [v for v in (repo.root / "versions").iterdir()]
    assert "DUCKLAKE_VERSION" not in fdl("checkout", repo.root, tmp_path / "w2").stdout


def test_an_interrupted_commit_says_so_and_leaves_no_temporary_folder(repo, tmp_path):
    """Finding: Ctrl-C during a commit exited without a word. Forced: the
    working folder's dataset.yml is a FIFO, so the commit waits in it, after
    its temporary folder is made, until the test (its writer) lets go."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    fifo = tmp_path / "w" / "dataset.yml"
    os.mkfifo(fifo)
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="T", TMPDIR=str(tmp))
    p = subprocess.Popen([FDL, "commit", str(tmp_path / "w"), "-m", "interrupted"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = os.open(fifo, os.O_WRONLY)  # returns once the commit has opened it: it is inside the freeze
    assert [d.name for d in tmp.iterdir() if d.name.startswith(f"fdl-commit-{p.pid}-")]
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    os.close(w)
    assert p.returncode == 128 + signal.SIGINT
    assert "fdl: commit interrupted (Interrupt)" in err and "run the same fdl commit again" in err
    assert list(tmp.iterdir()) == []
    assert not (repo.root / "refs" / "heads" / "main").exists()
    fifo.unlink()
    fdl("commit", tmp_path / "w", "-m", "again", env={"TMPDIR": str(tmp)})
    assert rows(repo.open_version("main"), "lake.t") == [(1,)]
    fdl("verify", repo.root)


def test_an_interrupted_run_removes_its_folder_and_says_so(repo, tmp_path):
    """Finding: `fdl run` interrupted left its fdl-run-* folder for good.
    Forced: COMMAND tells the test (through a FIFO) where it works, then
    sleeps; the signal goes to fdl alone, which passes it on."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="T", TMPDIR=str(tmp))
    script = f'echo "$FDL_WORK" > {ready}; exec sleep 600'
    # Ctrl-C at a terminal: SIGINT not ignored. A suite started in the
    # background by a non-interactive shell ignores it, and fdl run's
    # COMMAND inherits that as it would without fdl (it then never ends):
    # fdl starts with SIGINT's default action, as from a terminal.
    terminal = [sys.executable, "-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                "os.execv(sys.argv[1], sys.argv[1:])"]
    p = subprocess.Popen(terminal + [FDL, "run", str(repo.root), "--", "sh", "-c", script], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(ready) as f:
        work = f.readline().strip()
    assert os.path.isdir(work)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 128 + signal.SIGINT
    assert "fdl: run interrupted (Interrupt) while sh ran. Nothing was committed" in err
    assert not os.path.exists(os.path.dirname(work)) and list(tmp.iterdir()) == []
    assert not (repo.root / "refs" / "heads" / "main").exists()


def test_log_shows_refs_and_states(repo, tmp_path, ledger):
    """Finding: `fdl log` showed no tags and did not mark expired or
    withdrawn versions."""
    _, ids = history(repo, tmp_path, 4)
    fdl("tag", repo.root, "v2025", "main:3")
    fdl("branch", repo.root, "fixes", "main:2")
    # a version on its own branch adds a data file no other version's
    # catalog references: withdrawing it takes nothing on main with it
    con = repo.checkout(tmp_path / "o", "--new-branch", "oops")
    con.execute("CREATE OR REPLACE TABLE lake.t AS SELECT 99 AS a")
    commit(tmp_path / "o", "oops")
    oops = repo.head("oops")
    fdl("withdraw", repo.root, "oops", "--reason", "personal data", "--force")  # oops's tip: on purpose
    ledger.gone(oops)
    headers = [l for l in fdl("log", repo.root, "--decorate").stdout.splitlines() if l.startswith(("version ", "State:"))]
    assert headers == [f"version {ids[3]} (seq 4) (HEAD -> main)", f"version {ids[2]} (seq 3) (tag: v2025)",
                       f"version {ids[1]} (seq 2) (fixes)", f"version {ids[0]} (seq 1)"]
    headers = [l for l in fdl("log", repo.root, "oops", "--decorate").stdout.splitlines() if l.startswith(("version ", "State:"))]
    assert headers[0] == f"version {oops} (seq 5) (oops)"
    assert headers[1].startswith("State:  withdrawn on 20")
    assert headers[2] == f"version {ids[3]} (seq 4) (HEAD -> main)"
    assert "State:" not in fdl("log", repo.root, "oops", "--no-decorate").stdout
    # as git log: marks on a terminal or asked for, not into a pipe
    assert "(HEAD -> main)" not in fdl("log", repo.root).stdout
    # the ref list says the same to a static host, which cannot be listed
    refs = read_json(repo.root / "history" / "refs.json")
    assert refs["refs"] == {"refs/heads/main": ids[3], "refs/heads/fixes": ids[1], "refs/tags/v2025": ids[2],
                            "refs/heads/oops": oops}
    assert refs["head"] == "main" and list(refs["gone"]) == [oops] and refs["gone"][oops]["reason"] == "withdrawn"
    assert json.loads(fdl("verify", repo.root, "--json", check=False).stdout)["warnings"] == []


def test_show_and_diff_name_what_the_description_changed(repo, tmp_path):
    """Finding: `show` and `diff` said "no schema changes" for a version
    that changed only its description and licence."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    (tmp_path / "w" / "dataset.yml").write_text(
        "name: s\ntitle: Stats\nlicenses: [CC0-1.0]\ntables:\n  - name: t\n    fields:\n"
        "      - name: a\n        description: A\n")
    scene(tmp_path / "w", "one")  # the two versions are the scene: show and diff compare them
    (tmp_path / "w" / "dataset.yml").write_text(
        "name: s\ntitle: Monthly stats\nlicenses: [CC-BY-4.0]\ntables:\n  - name: t\n    description: the t\n"
        "    fields:\n      - name: a\n        description: the a\n")
    scene(tmp_path / "w", "description only")
    show = fdl("show", repo.root).stdout
    section = show.split("description changes\n")[1].split("\n\n")[0].splitlines()
    assert section == ["  title changed", "  licenses changed", "  main.t: description added",
                       "  main.t.a: description changed"]
    diff = fdl("diff", repo.root, "main:1", "main").stdout
    assert "no schema changes" in diff and "  licenses changed" in diff
    dj = json.loads(fdl("diff", repo.root, "main:1", "main", "--json").stdout)
    assert {"field": "licenses", "kind": "changed"} in dj["description_changes"]
    assert {"field": "description", "kind": "changed", "table": "main.t", "column": "a"} in dj["description_changes"]
    assert "description changes" not in fdl("show", repo.root, "main:1").stdout


def refs_of(root):
    base = root / "refs"
    return {str(p.relative_to(root)): p.read_text().strip() for p in base.rglob("*") if p.is_file()}


def branched(repo, tmp_path):
    """main with three versions, `fixes` one version beyond main:2, tag v1 on main:1."""
    _, ids = history(repo, tmp_path, 3)  # the clone tests' scene: all by the release build
    fdl_setup("branch", repo.root, "fixes", "main:2")
    con = repo.checkout(tmp_path / "f", "--ref", "fixes", setup=True)
    con.execute("INSERT INTO lake.t VALUES (20)")
    scene(tmp_path / "f", "fix")
    fdl_setup("tag", repo.root, "v1", "main:1")
    return ids, repo.head("fixes")


@pytest.mark.parametrize("host", ["serve", "static"])
def test_clone_of_a_host_copies_every_branch_and_tag(repo, tmp_path, host):
    """Finding: `fdl clone http://...` copied HEAD's branch only and no
    tags; `fdl clone URL@corrections` was refused (exit 2)."""
    from test_hindex import CountingHost
    from test_reader import Server
    ids, fix = branched(repo, tmp_path)
    s = Server(repo.root, tmp_path) if host == "serve" else CountingHost(repo.root)
    env = {"FDL_CACHE_DIR": str(tmp_path / "cache")}
    try:
        fdl("clone", s.url, tmp_path / "all", env=env)
        fdl("clone", s.url + "@fixes", tmp_path / "one", env=env)
        p = fdl("clone", s.url + "@fixs", tmp_path / "typo", env=env, check=False)
    finally:
        s.stop() if host == "serve" else s.close()
    assert refs_of(tmp_path / "all") == refs_of(repo.root) == {
        "refs/heads/main": ids[2], "refs/heads/fixes": fix, "refs/tags/v1": ids[0]}
    assert sorted(os.listdir(tmp_path / "all" / "versions")) == sorted(os.listdir(repo.root / "versions"))
    assert fdl("verify", tmp_path / "all").returncode == 0
    con = connect()
    con.execute(fdl("attach", tmp_path / "all", "fixes").stdout)
    assert sorted(rows(con, "lake.t")) == [(2,), (20,)]
    # one branch: its chain alone, and the copy's HEAD names it
    assert refs_of(tmp_path / "one") == {"refs/heads/fixes": fix}
    assert (tmp_path / "one" / "HEAD").read_text() == "ref: refs/heads/fixes\n"
    assert sorted(os.listdir(tmp_path / "one" / "versions")) == sorted([ids[0], ids[1], fix])
    assert fdl("verify", tmp_path / "one").returncode == 0
    assert p.returncode == 3 and "did you mean 'fixes'?" in p.stderr
    assert not (tmp_path / "typo" / "refs" / "heads").exists()
    # the copy's own ref list: a static host of the copy lists them too
    assert read_json(tmp_path / "all" / "history" / "refs.json")["refs"] == refs_of(repo.root)


def test_clone_into_another_repository_is_refused(repo, tmp_path):
    """Issue 43: `fdl clone A M; fdl clone B M` with unrelated A and B
    replaced M's main with B's, and A's versions were left unreferenced."""
    history(repo, tmp_path, 2)
    other = tmp_path / "other"  # the scene (other, the mirror): the release build
    fdl_setup("init", other)
    con = connect()
    con.execute(fdl_setup("checkout", other, tmp_path / "ow").stdout)
    con.execute("CREATE TABLE lake.t AS SELECT 7 AS a")
    con.close()
    scene(tmp_path / "ow", "unrelated")
    mirror = tmp_path / "m"
    fdl_setup("clone", repo.root, mirror)
    before = refs_of(mirror)
    p = fdl("clone", other, mirror, check=False)
    assert p.returncode == 4 and "another repository" in p.stderr and "--force" in p.stderr, p.stderr
    assert refs_of(mirror) == before
    assert not (mirror / "versions" / refs_of(other)["refs/heads/main"]).exists()  # nothing copied
    fdl("clone", other, mirror, "--force")
    assert refs_of(mirror)["refs/heads/main"] == refs_of(other)["refs/heads/main"]


def test_a_mirror_says_when_the_source_moved_a_branch_back(repo, tmp_path):
    """A branch moved back at the source (branch --force) is followed by the
    mirror, with a line that says so rather than silently."""
    _, ids = history(repo, tmp_path, 3)
    mirror = tmp_path / "m"
    fdl_setup("clone", repo.root, mirror)  # scene: the next clone is checked
    fdl_setup("branch", repo.root, "main", "main:1", "--force")
    out = fdl("clone", repo.root, mirror).stdout
    assert f"warning: refs/heads/main moved from {ids[2]} to {ids[0]}, which does not descend from it" in out
    assert refs_of(mirror)["refs/heads/main"] == ids[0]
    out = fdl("clone", repo.root, mirror).stdout
    assert "warning" not in out


def test_a_clone_racing_a_commit_copies_the_refs_it_planned(repo, tmp_path, ledger):
    """Issue 43: a commit at the source during a clone left the copy's
    branch at a version the copy did not have. The clone is held at its
    first data file (a host that waits), the source commits, then the clone
    goes on: the copy's main is the version it planned, and verifies."""
    from test_clone import HoldingHost
    con, ids = history(repo, tmp_path, 2)
    host = HoldingHost(repo.root)
    host.hold_path = "/data/"
    env = {"FDL_CACHE_DIR": str(tmp_path / "cache")}
    try:
        p = subprocess.Popen([FDL, "clone", host.url, str(tmp_path / "copy"), "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, FDL_EXTENSION_DIR=EXT, **env))
        assert host.held.wait(60)
        con.execute("CREATE OR REPLACE TABLE lake.t AS SELECT 3 AS a")
        commit(tmp_path / "w", "during the clone")
        host.release.set()
        out, errs = p.communicate(timeout=120)
        assert p.returncode == 0, errs
    finally:
        host.close()
    assert refs_of(tmp_path / "copy")["refs/heads/main"] == ids[1]
    assert repo.head() != ids[1]
    assert fdl("verify", tmp_path / "copy").returncode == 0
    ledger.reader(tmp_path / "copy")


def test_verify_reaches_a_version_no_ref_reaches(repo, tmp_path, ledger):
    """Finding: `fdl verify` said "3 versions checked" and found nothing
    wrong with a damaged older version that only `--all` reached."""
    _, ids = history(repo, tmp_path, 3)
    fdl_setup("branch", repo.root, "main", "main:2", "--force")  # scene: v3 is now reached by no ref
    with open(repo.root / "versions" / ids[2] / "ducklake.duckdb", "ab") as f:
        f.write(b"x")
    ledger.waive(ids[2], "its catalog is damaged on purpose")
    p = fdl("verify", repo.root, check=False)
    assert p.returncode == 5 and ids[2] in p.stdout and "3 versions checked" in p.stdout, p.stdout
    p = fdl("verify", repo.root, "--reachable", check=False)
    assert p.returncode == 0 and "2 versions checked" in p.stdout
    assert "1 version no ref reaches was not checked" in p.stdout
    assert json.loads(fdl("verify", repo.root, "--reachable", "--json").stdout)["versions_unchecked"] == 1


def test_retention_is_set_with_fdl_config(repo, tmp_path, ledger):
    """Finding: retention was set only by editing fdl.json by hand."""
    _, ids = history(repo, tmp_path, 3)
    before = read_json(repo.root / "fdl.json")
    assert fdl("config", repo.root).stdout == "retention.days = none (forever)\nretention.keep = none (forever)\n"
    fdl("config", repo.root, "retention.keep", "1")
    fdl("config", repo.root, "retention.days", "0")
    assert fdl("config", repo.root, "retention.keep").stdout == "1\n"
    after = read_json(repo.root / "fdl.json")
    assert after["retention"] == {"days": 0, "keep": 1}
    assert {k: v for k, v in after.items() if k != "retention"} == {k: v for k, v in before.items() if k != "retention"}
    p = fdl("config", repo.root, "retention.days", "a year", check=False)
    assert p.returncode == 5 and "whole number" in p.stderr
    assert fdl("config", repo.root, "retention.dyas", check=False).returncode == 5
    fdl("expire", repo.root)
    ledger.gone(ids[0], ids[1])
    assert [(repo.root / "versions" / v / "expired.json").exists() for v in ids] == [True, True, False]
    fdl("config", repo.root, "--unset", "retention.days")
    assert read_json(repo.root / "fdl.json")["retention"] == {"days": None, "keep": 1}
