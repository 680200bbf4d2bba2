"""What a new user hits first: bad arguments to every command, one ref syntax
everywhere, verify's foreign entries, and where a commit's message and author
come from (issue 15). Run against the sanitizer build in `make interop`, so a
crash or a memory error fails here even where the exit code looks right."""
import json
import os
import pathlib
import stat
import shutil
import subprocess

import pytest

from conftest import EXT, FDL, commits, connect, fdl, fdl_setup, read_json, rows

SANITIZER_MARKS = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "UndefinedBehaviorSanitizer")


@pytest.fixture
def two(repo, tmp_path):
    """A repository with two versions of one table, and its working catalog:
    the scene of the tests below, made by the release build (setup)."""
    commits(repo, tmp_path / "w", ("one", ["CREATE TABLE lake.t (a INTEGER)", "INSERT INTO lake.t VALUES (1)"]),
            ("two", ["INSERT INTO lake.t VALUES (2)"]), setup=True)
    return repo


def bad_cases(root, work, tmp):
    """(command and arguments, expected exit code): every command with each
    argument missing, empty, unresolvable and malformed. The codes were
    checked by hand against README's table: 2 usage, 3 not found, 5 invalid,
    9 exists."""
    R, W, nope = str(root), str(work), str(tmp / "nope")
    return [
        (["init"], 2), (["init", ""], 5), (["init", R], 9), (["init", "s3://"], 5), (["init", "htp://x/y"], 5),
        (["checkout"], 2), (["checkout", R], 2), (["checkout", "", W + "2"], 5), (["checkout", nope, W + "3"], 3),
        (["checkout", R, W + "4", "--ref", "bad..name"], 5), (["checkout", R, ""], 5),
        (["commit"], 2), (["commit", W], 2), (["commit", "", "-m", "x"], 5), (["commit", nope, "-m", "x"], 3),
        (["commit", str(tmp), "-m", "x"], 3), (["commit", W, "-m", "x", "-F", "/dev/null"], 2),
        (["commit", W, "-F", nope], 1),
        (["rebase"], 2), (["rebase", ""], 5), (["rebase", nope], 3), (["rebase", W, "x"], 2),
        (["rebase", W, "--onto", "bogus"], 3), (["rebase", W, "--onto", ""], 5), (["rebase", W, "--onto", "7"], 3),
        (["log"], 2), (["log", ""], 5), (["log", nope], 3), (["log", R, "bogus"], 3), (["log", R, "7"], 3),
        (["log", R, "main:x"], 5), (["log", R, ""], 5), (["log", R, "--limit", "x"], 2),
        (["show"], 2), (["show", R, "bogus"], 3), (["show", R, "7"], 3), (["show", R, ""], 5),
        (["show", R, "a..b"], 5), (["show", R, "main:9"], 3), (["show", R, "nobranch:1"], 3),
        (["attach"], 2), (["attach", R, "bogus"], 3), (["attach", R + "@bogus"], 3), (["attach", R + "@"], 5),
        (["attach", R, ""], 5), (["attach", nope], 3),
        (["iceberg"], 2), (["iceberg", R + "@bogus"], 3), (["iceberg", nope], 3), (["iceberg", R, "x"], 2),
        (["iceberg", R, "--location", "ftp://x/y"], 5), (["iceberg", R, "--location", "s3://b/a/../c"], 5),
        (["query"], 2), (["query", R], 2), (["query", R + "@bogus", "SELECT 1"], 3), (["query", R, ""], 5),
        (["query", R, "SELECT 1", "--format", "x"], 2), (["query", R + "@7", "SELECT 1"], 3),
        (["export"], 2), (["export", R, "nope", "--to", str(tmp / "x.parquet")], 3),
        (["export", R + "@bogus", "t", "--to", str(tmp / "y")], 3), (["export", R, "t"], 2),
        (["serve", nope], 3), (["serve", R, "--port", "abc"], 2), (["serve", R, "--port", "99999"], 2),
        (["serve", R, "--bind", "nope"], 5), (["serve"], 2),
        (["verify"], 2), (["verify", ""], 5), (["verify", nope], 3),
        (["sign"], 2), (["sign", R, "bogus", "--key", nope], 3), (["sign", R, "main"], 2),
        (["sign", R, "main", "--key", nope], 3),
        (["expire"], 2), (["expire", ""], 5), (["expire", nope], 3),
        (["config"], 2), (["config", nope], 3), (["config", R, "nosuch"], 5), (["config", R, "retention.days", "x"], 5),
        (["config", R, "retention.days", "1", "--unset", "retention.keep"], 2), (["config", R, "a", "b", "c"], 2),
        (["config", R, "public_url", "ftp://x/y"], 5), (["config", R, "public_url", "https://x/'y"], 5),
        (["preview"], 2), (["preview", nope], 3), (["preview", R, "bogus"], 3),
        (["site"], 2), (["site", nope], 3), (["site", R, "bogus"], 3), (["site", R, ""], 5), (["site", R, "7"], 3),
        (["withdraw"], 2), (["withdraw", R, "bogus", "--reason", "x"], 3), (["withdraw", R, "main"], 5),
        (["withdraw", R, "", "--reason", "x"], 5),
        (["gc"], 2), (["gc", R, "--grace", "bogus"], 2), (["gc", nope], 3),
        (["clone"], 2), (["clone", R], 2), (["clone", nope, str(tmp / "c")], 3), (["clone", "", str(tmp / "c2")], 5),
        (["catalogs"], 2), (["catalogs", "add"], 2), (["catalogs", "add", R, "bogus", "1.0"], 3),
        (["catalogs", "add", R, "main", "9.9"], 5), (["catalogs", "rm", R], 2),
        (["describe"], 2), (["describe", ""], 5), (["describe", nope], 3),
        (["add"], 2), (["add", nope], 2), (["add", nope, "t"], 2), (["add", nope, "t", "f"], 3),
        (["add", "--folder", nope], 2), (["add", "", "t", "f"], 5),
        (["add", nope, "t", "f", "--iceberg", "m"], 2), (["add", nope, "t", "--iceberg", "m", "--create"], 2),
        (["add", nope, "t", "--iceberg", "m"], 3),
        (["branch"], 2), (["branch", R, "new", "bogus"], 3), (["branch", R, "bad..name"], 5),
        (["branch", R, "--delete", "bogus"], 3), (["branch", R, "x", ""], 5),
        (["tag"], 2), (["tag", R, "v", "bogus"], 3), (["tag", R, "bad..name"], 5),
        (["tag", R, "--delete", "bogus"], 3), (["tag", R, "x", ""], 5), (["tag", R, "a", "b", "c"], 2),
        (["diff"], 2), (["diff", R, "1", "7"], 3), (["diff", R, "bogus", "main"], 3), (["diff", R, "main", "bogus"], 3),
        (["diff", R, "", "main"], 5), (["diff", R, "main:7", "main"], 3), (["diff", R, "7", "1"], 3),
        (["run"], 2), (["run", R], 2), (["run", nope, "--", "true"], 3), (["run", R, "--ref", "bad..", "--", "true"], 5),
        (["nosuchcommand"], 2), (["log", R, "--nosuchoption"], 2),
    ]


def test_every_command_with_bad_arguments(two, tmp_path):
    # every command appears in the table
    listed = fdl("--help").stdout
    commands = {l.split()[0] for l in listed.split("commands:")[1].splitlines() if l.startswith("  ")}
    cases = bad_cases(two.root, tmp_path / "w", tmp_path)
    assert commands <= {args[0] for args, _ in cases}, commands - {args[0] for args, _ in cases}
    wrong = []
    for args, want in cases:
        p = fdl(*args, check=False)
        if any(m in p.stderr for m in SANITIZER_MARKS):
            wrong.append(f"fdl {args}: sanitizer report\n{p.stderr}")
        elif p.returncode != want:
            wrong.append(f"fdl {args}: exit {p.returncode}, expected {want}: {p.stderr.strip()[:300]}")
        elif not p.stderr.startswith("fdl: ") and not p.stderr.startswith("usage: "):
            wrong.append(f"fdl {args}: no message on stderr saying what went wrong: {p.stderr!r}")
    assert not wrong, "\n".join(wrong)


def test_help_everywhere_names_the_ref_syntax_once(two):
    listed = fdl("--help").stdout
    commands = [l.split()[0] for l in listed.split("commands:")[1].splitlines() if l.startswith("  ")]
    with_refs = []
    for c in commands:
        p = fdl(c, "--help")
        assert p.returncode == 0 and p.stdout.startswith("usage: fdl " + c), c
        if "REF" in p.stdout.split("\n")[0] or "VERSION" in p.stdout.split("\n")[0]:
            with_refs.append(c)
            assert p.stdout.count("a unique start of one") == 1, c
    assert {"show", "log", "diff", "attach", "query", "export", "withdraw", "sign", "branch"} <= set(with_refs)


def test_one_ref_syntax_everywhere(two, tmp_path):
    root = two.root
    v2 = two.head()
    v1 = two.version(v2)["parents"][0]
    fdl_setup("branch", root, "side", v1)  # the scene: a branch to name v1 by
    (root / "refs" / "tags").mkdir(exist_ok=True)
    (root / "refs" / "tags" / "first").write_text(v1 + "\n")
    forms = {v1: ["1", "main:1", "HEAD:1", "side", "side:1", "first", "refs/tags/first", "first:1", v1, v1[:-4],
                  "main~1", "HEAD^", "main~", "2~1", "main:2^1", v2 + "~1"],  # Git's suffixes (issue 62)
             v2: ["2", "main:2", "main", "HEAD", "refs/heads/main", v2, v2[-36:-6], "main~0", "main^0"]}
    # the shortest prefix that tells the two apart (UUIDv7 ids start with the time)
    common = os.path.commonprefix([v1, v2])
    forms[v1].append(v1[:len(common) + 1])
    forms[v2].append(v2[:len(common) + 1].upper())
    for want, specs in forms.items():
        for spec in specs:
            if spec == v2[-36:-6]:
                continue  # the middle of an id is not a prefix
            show = json.loads(fdl("show", root, spec, "--json").stdout)
            assert show["id"] == want, spec
            assert json.loads(fdl("log", root, spec, "--json", "--limit", "1").stdout.splitlines()[0])["id"] == want
            assert fdl("attach", root, spec).stdout == fdl("attach", root, want).stdout, spec
            assert fdl("query", f"{root}@{spec}", "SELECT count(*) FROM t", "--format", "csv").stdout.split() == \
                ["count_star()", "1" if want == v1 else "2"], spec
    diff = json.loads(fdl("diff", root, "1", "main:2", "--json").stdout)
    assert (diff["from"], diff["to"]) == (v1, v2)
    fdl("branch", root, "from-seq", "1")
    assert (root / "refs" / "heads" / "from-seq").read_text().strip() == v1
    # an ambiguous prefix is refused with both candidates and its own exit code
    if len(common) >= 4:
        p = fdl("show", root, common, check=False)
        assert p.returncode == 11 and v1 in p.stderr and v2 in p.stderr, p.stderr
    p = fdl("show", root, "ffff", check=False)
    assert p.returncode == 3 and "ffff" in p.stderr
    # a branch named like a seq is refused (it would hide the seq, issue 36) ...
    p = fdl("branch", root, "1", v2, check=False)
    assert p.returncode == 5 and "seq 1" in p.stderr
    assert json.loads(fdl("show", root, "1", "--json").stdout)["id"] == v1
    # ... and one another tool made wins, as refs win over abbreviations in Git
    (pathlib.Path(root) / "refs" / "heads" / "1").write_text(v2 + "\n")
    assert json.loads(fdl("show", root, "1", "--json").stdout)["id"] == v2
    assert json.loads(fdl("show", root, "main:1", "--json").stdout)["id"] == v1


def test_diff_of_unresolvable_refs_is_not_found(two):
    for a, b in [("1", "7"), ("bogus", "main"), ("main", "bogus"), ("main:9", "main")]:
        p = fdl("diff", two.root, a, b, check=False)
        assert p.returncode == 3 and p.stderr.startswith("fdl: ") and "no " in p.stderr, (a, b, p.stderr)


def test_verify_reports_foreign_entries_once(two, tmp_path, ledger):
    ledger.waive(two.root, "the test plants foreign entries for verify to find")
    root = two.root
    assert fdl("verify", root).returncode == 0
    os.symlink("/etc", root / "versions" / "evil")
    (root / "versions" / "notes.txt").write_text("stray")
    os.mkfifo(root / "versions" / "pipe")
    os.symlink(str(root / "refs" / "heads" / "main"), root / "refs" / "heads" / "alias")
    p = fdl("verify", root, "--json", check=False)
    assert p.returncode == 5
    problems = {x["where"]: x["problem"] for x in json.loads(p.stdout)["problems"]}
    assert "symbolic link" in problems["versions/evil"]
    assert "symbolic link" in problems["versions/pipe"]
    assert "version directory" in problems["versions/notes.txt"]
    assert "symbolic link" in problems["refs/heads/alias"]
    assert not any(k.startswith("versions/evil/") for k in problems)  # never followed into /etc
    # a broken version.json is named once per line, not "X: X: ..."
    for name in ("evil", "notes.txt", "pipe"):
        os.remove(root / "versions" / name)
    os.remove(root / "refs" / "heads" / "alias")
    v = two.head()
    vj = root / "versions" / v / "version.json"
    os.chmod(vj, stat.S_IWUSR | stat.S_IRUSR)
    vj.write_text("{}")
    text = fdl("verify", root, check=False).stderr + fdl("verify", root, check=False).stdout
    key = f"versions/{v}/version.json"
    lines = [l for l in text.splitlines() if key in l]
    assert lines and all(l.count(key) == 1 for l in lines), lines


def test_broken_description_beats_nothing_to_commit(two, tmp_path):
    work = tmp_path / "w"
    p = fdl("commit", work, "-m", "again", check=False)
    assert p.returncode == 8 and "description is unchanged" in p.stderr
    (work / "dataset.yml").write_text("name: t\ntitle: [unclosed\n")
    p = fdl("commit", work, "-m", "broken", check=False)
    assert p.returncode == 5 and "dataset.yml" in p.stderr, p.stderr
    head = two.head()
    # a description change alone is a version: same snapshot, new dataset.json
    (work / "dataset.yml").write_text("name: t\ntitle: Numbers\ntables:\n  - name: t\n    title: The numbers\n")
    out = fdl("commit", work, "-m", "describe it", "-q").stdout.strip()
    v, parent = two.version(out), two.version(head)
    assert v["parents"] == [head] and v["seq"] == parent["seq"] + 1
    assert v["ducklake"]["snapshot_id"] == parent["ducklake"]["snapshot_id"]
    assert v["ducklake"]["snapshots"] == [v["ducklake"]["snapshot_id"]] * 2
    assert v["changes"] == []
    ds = read_json(two.root / "versions" / out / "dataset.json")
    assert ds["title"] == "Numbers" and ds["tables"][0]["title"] == "The numbers"
    con = two.open_version(out)
    assert rows(con, "lake.t") == [(1,), (2,)]
    # it added no snapshot, so log --snapshots lists none under it, and
    # withdrawing it would remove no data file
    log = fdl("log", two.root, "--snapshots", "--limit", "1").stdout
    assert "snapshot" not in log.split("describe it", 1)[1]
    dry = fdl("withdraw", two.root, out, "--reason", "test", "--dry-run", "--json").stdout
    assert json.loads(dry)["data_files"] == []
    assert fdl("commit", work, "-m", "again", check=False).returncode == 8
    assert fdl("verify", two.root).returncode == 0


def test_message_from_file_stdin_and_editor(two, tmp_path, ledger):
    con = connect()
    work = tmp_path / "w2"
    con.execute(fdl_setup("checkout", two.root, work).stdout)  # the scene; the commits are the step
    msg = tmp_path / "msg.txt"
    msg.write_text("\n\nLong title\n\nA body   \nwith # no comment stripping\n\n\n")
    con.execute("INSERT INTO lake.t VALUES (3)")
    v = fdl("commit", work, "-F", msg, "-q").stdout.strip()
    assert two.version(v)["message"] == "Long title\n\nA body\nwith # no comment stripping"
    con.execute("INSERT INTO lake.t VALUES (4)")
    e = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="T")
    p = subprocess.run([FDL, "commit", str(work), "-F", "-", "-q"], input="from stdin\n", capture_output=True,
                       text=True, env=e)
    assert p.returncode == 0, p.stderr
    ledger.published(p.stdout)
    assert two.version(p.stdout.strip())["message"] == "from stdin"
    con.execute("INSERT INTO lake.t VALUES (5)")
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\ncat \"$1\" > \"$1.seen\"\nprintf 'Edited\\n# a comment\\n' > \"$1\"\n")
    editor.chmod(0o755)
    v = fdl("commit", work, "-q", env={"EDITOR": str(editor), "FDL_EDITOR": "", "GIT_EDITOR": "", "VISUAL": ""}).stdout.strip()
    assert two.version(v)["message"] == "Edited"
    con.execute("INSERT INTO lake.t VALUES (6)")
    failing = tmp_path / "fail.sh"
    failing.write_text("#!/bin/sh\nexit 1\n")
    failing.chmod(0o755)
    p = fdl("commit", work, env={"EDITOR": str(failing), "FDL_EDITOR": "", "GIT_EDITOR": "", "VISUAL": ""}, check=False)
    assert p.returncode == 2 and "editor" in p.stderr
    empty = tmp_path / "empty.sh"
    empty.write_text("#!/bin/sh\nprintf '# only a comment\\n' > \"$1\"\n")
    empty.chmod(0o755)
    p = fdl("commit", work, env={"EDITOR": str(empty), "FDL_EDITOR": "", "GIT_EDITOR": "", "VISUAL": ""}, check=False)
    assert p.returncode == 2 and "empty" in p.stderr
    con.close()


def test_author_from_git_config_or_refused(two, tmp_path, ledger):
    con = connect()
    work = tmp_path / "w3"
    con.execute(fdl_setup("checkout", two.root, work).stdout)  # the scene; the commits are the step
    home = tmp_path / "home"
    home.mkdir()
    base = {"PATH": os.environ["PATH"], "HOME": str(home), "FDL_EXTENSION_DIR": EXT,
            "GIT_CONFIG_NOSYSTEM": "1", "USER": "someone"}
    con.execute("INSERT INTO lake.t VALUES (7)")
    p = subprocess.run([FDL, "commit", str(work), "-m", "who?"], capture_output=True, text=True, env=base)
    assert p.returncode == 2 and "author" in p.stderr and "git config" in p.stderr, p.stderr
    assert two.version(two.head())["message"] == "two"  # nothing written
    subprocess.run(["git", "config", "--global", "user.name", "Ada Lovelace"], env=base, check=True)
    subprocess.run(["git", "config", "--global", "user.email", "ada@example.org"], env=base, check=True)
    p = subprocess.run([FDL, "commit", str(work), "-m", "from git", "-q"], capture_output=True, text=True, env=base)
    assert p.returncode == 0, p.stderr
    ledger.published(p.stdout)
    assert two.version(p.stdout.strip())["author"] == {"name": "Ada Lovelace", "email": "ada@example.org"}
    # a Git repository's own config, read after the global one, wins (as in Git)
    subprocess.run(["git", "init", "-q", str(work)], env=base, check=True)
    subprocess.run(["git", "-C", str(work), "config", "user.name", "Ada (this repository)"], env=base, check=True)
    con.execute("INSERT INTO lake.t VALUES (75)")
    p = subprocess.run([FDL, "commit", str(work), "-m", "local", "-q"], capture_output=True, text=True, env=base)
    assert p.returncode == 0, p.stderr
    ledger.published(p.stdout)
    assert two.version(p.stdout.strip())["author"] == {"name": "Ada (this repository)", "email": "ada@example.org"}
    shutil.rmtree(work / ".git")
    con.execute("INSERT INTO lake.t VALUES (8)")
    p = subprocess.run([FDL, "commit", str(work), "-m", "env wins", "-q"], capture_output=True, text=True,
                       env=dict(base, GIT_AUTHOR_NAME="Grace", GIT_AUTHOR_EMAIL="grace@example.org"))
    ledger.published(p.stdout)
    assert two.version(p.stdout.strip())["author"] == {"name": "Grace", "email": "grace@example.org"}
    con.close()


def test_diff_rows_limit_totals_and_streamed_json(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)  # the two versions are the scene; the diffs are the step
    con.execute("CREATE TABLE lake.big (i INTEGER, s VARCHAR)")
    con.execute("INSERT INTO lake.big SELECT i, 'old' || i FROM range(50) t(i)")
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    a = repo.head()
    con.execute("DELETE FROM lake.big WHERE i < 7")
    con.execute("INSERT INTO lake.big SELECT i, 'new' || i FROM range(1000, 1250) t(i)")
    fdl_setup("commit", tmp_path / "w", "-m", "two")
    b = repo.head()
    con.close()
    text = fdl("diff", repo.root, a, b, "--rows").stdout
    assert "rows of main.big: +250 -7" in text
    assert text.count("\n  + ") == 100 and text.count("\n  - ") == 7  # the default, like git log -n
    assert "... 150 more rows" in text
    text = fdl("diff", repo.root, a, b, "--rows", "big", "--limit", "3").stdout
    assert text.count("\n  + ") == 3 and text.count("\n  - ") == 3 and "+250 -7" in text
    first = [l for l in text.splitlines() if l.startswith("  + ")][0]
    assert json.loads(first[4:]) == {"i": 1000, "s": "new1000"}  # ORDER BY ALL
    d = json.loads(fdl("diff", repo.root, a, b, "--rows", "--json", "--limit", "all").stdout)
    t = d["rows"]["main.big"]
    assert (t["added_total"], t["removed_total"]) == (250, 7)
    assert len(t["added"]) == 250 and len(t["removed"]) == 7
    assert sorted(r["i"] for r in t["removed"]) == list(range(7))
    d = json.loads(fdl("diff", repo.root, a, b, "--rows", "--json", "--limit", "0").stdout)
    assert d["rows"]["main.big"] == {"added_total": 250, "removed_total": 7, "added": [], "removed": []}
    d = json.loads(fdl("diff", repo.root, a, b, "--json").stdout)
    assert "rows" not in d and d["changes"] == []
    assert fdl("diff", repo.root, a, b, "--rows", "--limit", "-1", check=False).returncode == 2


def test_checkout_takes_work_or_meta_postgres_not_both(repo, tmp_path):
    """`fdl checkout R W --meta postgres` made a SQLite catalog in W and
    said nothing of --meta; the two name the catalog each their own way."""
    p = fdl("checkout", repo.root, tmp_path / "w", "--meta", "postgres", check=False)
    assert p.returncode == 2 and "not both" in p.stderr, p.stderr
    assert not (tmp_path / "w").exists()
