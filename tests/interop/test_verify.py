"""fdl verify names every problem, and fdl serve --verify refuses a broken repository."""
import json
import subprocess

import pytest

from conftest import EXT, FDL, commits, fdl, read_json

# The default depth (bytes and hashes) and --deep (every catalog derived
# again): a tamper that changes a byte is caught by both.
DEPTHS = pytest.mark.parametrize("depth", [(), ("--deep",)], ids=["default", "deep"])


def two_versions(repo, tmp_path):
    (first, head), _ = commits(repo, tmp_path / "w",
                               ("one", ["CREATE TABLE lake.t (a INTEGER)", "INSERT INTO lake.t VALUES (1), (2)"]),
                               ("two", ["DELETE FROM lake.t WHERE a = 1"]))
    return head, first


def publish_files(repo, vdir, text):
    """Put `text` as vdir's files.json and record its size and sha256 in
    version.json, as another writer would have written it."""
    import hashlib
    import shutil
    (vdir / "files.json").write_bytes(text)
    v = read_json(vdir / "version.json")
    v["files"]["bytes"] = len(text)
    v["files"]["sha256"] = hashlib.sha256(text).hexdigest()
    (vdir / "version.json").write_text(json.dumps(v, indent=2) + "\n")
    shutil.rmtree(repo.root / "history", ignore_errors=True)  # derived; it records the old version.json


def verify(root, *args):
    p = fdl("verify", root, "--json", *args, check=False)
    return p.returncode, json.loads(p.stdout)


def test_clean_repository(repo, tmp_path):
    two_versions(repo, tmp_path)
    rc, rep = verify(repo.root)
    assert rc == 0 and rep["ok"] and rep["versions_checked"] == 2 and rep["problems"] == []
    assert "2 versions checked, 0 problems" in fdl("verify", repo.root).stdout


@DEPTHS
def test_every_problem_is_named(repo, tmp_path, ledger, depth):
    ledger.waive(repo.root, "the test damages versions for verify to find")
    head, first = two_versions(repo, tmp_path)
    vdir = repo.root / "versions" / head
    # a changed byte in the catalog of one version
    cat = bytearray((vdir / "ducklake.duckdb").read_bytes())
    cat[len(cat) // 2] ^= 0xFF
    (vdir / "ducklake.duckdb").write_bytes(bytes(cat))
    # a file no version may hold
    (repo.root / "versions" / first / "notes.txt").write_text("x")
    # a data file gone
    data = read_json(repo.root / "versions" / first / "files.json")["tables"]["main.t"]["files"][0]["path"]
    (repo.root / "data" / data).unlink()
    # a ref to nowhere
    (repo.root / "refs" / "heads" / "ghost").write_text("019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c\n")
    rc, rep = verify(repo.root, *depth)
    assert rc == 5 and not rep["ok"]
    where = {p["where"]: p["problem"] for p in rep["problems"]}
    assert "sha256" in where[f"versions/{head}/ducklake.duckdb"]
    assert "not a file a version may hold" in where[f"versions/{first}/notes.txt"]
    assert "missing" in where[f"data/{data}"]
    assert "not a readable version" in where["refs/heads/ghost"]
    text = fdl("verify", repo.root, *depth, check=False)
    assert text.returncode == 5 and "problems" in text.stdout


@DEPTHS
def test_threads_give_the_same_report(repo, tmp_path, ledger, depth):
    """Versions are checked in parallel; the report is the same, in the same
    order, on one thread and on many, and a data file shared by versions is
    reported missing for each of them."""
    ledger.waive(repo.root, "the test damages versions for verify to find")
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    for i in range(6):
        con.execute(f"INSERT INTO lake.t VALUES ({i})")
        fdl("commit", tmp_path / "w", "-m", f"v{i}")
    first = repo.version(repo.head())
    while first["parents"]:
        first = repo.version(first["parents"][0])
    shared = read_json(repo.root / "versions" / first["id"] / "files.json")["tables"]["main.t"]["files"][0]["path"]
    (repo.root / "data" / shared).unlink()
    (repo.root / "versions" / first["id"] / "stray.txt").write_text("x")
    reports = []
    for threads in ("1", "2", "5"):
        p = fdl("verify", repo.root, "--json", *depth, check=False, env={"FDL_VERIFY_THREADS": threads})
        assert p.returncode == 5, p.stderr
        reports.append(json.loads(p.stdout))
    assert reports[0] == reports[1] == reports[2]
    assert reports[0]["versions_checked"] == 6
    missing = [p for p in reports[0]["problems"] if p["where"] == f"data/{shared}"]
    assert len(missing) == 6  # every version references the first file


def test_seq_chain_and_files_json(repo, tmp_path):
    head, first = two_versions(repo, tmp_path)
    vj = repo.root / "versions" / head / "version.json"
    doc = json.loads(vj.read_text())
    doc["seq"] = 7
    vj.write_text(json.dumps(doc))
    rc, rep = verify(repo.root)
    assert rc == 5 and any("seq is 7" in p["problem"] for p in rep["problems"])


def test_incomplete_version_is_a_warning(repo, tmp_path):
    two_versions(repo, tmp_path)
    inc = repo.root / "versions" / "019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"
    inc.mkdir()
    (inc / "dataset.json").write_text("{}")
    rc, rep = verify(repo.root, "--all")
    assert rc == 0 and any("incomplete" in w["warning"] for w in rep["warnings"])


def test_serve_verify(repo, tmp_path):
    head, first = two_versions(repo, tmp_path)
    (repo.root / "versions" / first / "notes.txt").write_text("x")
    p = subprocess.run([FDL, "serve", str(repo.root), "--port", "0", "--verify"], capture_output=True, text=True,
                       env={"FDL_EXTENSION_DIR": EXT, "PATH": "/usr/bin:/bin"}, timeout=60)
    assert p.returncode == 5 and "fails fdl verify" in p.stderr and "notes.txt" in p.stderr
    (repo.root / "versions" / first / "notes.txt").unlink()
    s = subprocess.Popen([FDL, "serve", str(repo.root), "--port", "0", "--verify"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env={"FDL_EXTENSION_DIR": EXT, "PATH": "/usr/bin:/bin"})
    try:
        assert "Serving" in s.stdout.readline()
    finally:
        s.terminate()
        s.wait(timeout=10)


@DEPTHS
def test_files_json_is_compared_with_the_catalog(repo, tmp_path, depth):
    """A files.json laid out by another writer (same JSON, other bytes, its
    hash in version.json) agrees; one that says something else, with a
    matching hash, is named: by --deep against the catalog, by the default
    depth against the data file whose size it misstates."""
    head, _ = two_versions(repo, tmp_path)
    vdir = repo.root / "versions" / head
    files = read_json(vdir / "files.json")
    publish_files(repo, vdir, (json.dumps(files, indent=4) + "\n").encode())
    rc, rep = verify(repo.root, *depth)
    assert rc == 0 and rep["problems"] == [], rep
    data = files["tables"]["main.t"]["files"][0]
    data["bytes"] += 1
    publish_files(repo, vdir, (json.dumps(files) + "\n").encode())
    rc, rep = verify(repo.root, *depth)
    if depth:
        assert rc == 5 and any("files.json" in str(p) and "does not agree with the catalog" in str(p)
                               for p in rep["problems"]), rep
    else:
        assert rc == 5 and {"where": f"data/{data['path']}", "problem": f"is {data['bytes'] - 1} bytes; "
                            f"versions/{head}/files.json records {data['bytes']}"} in rep["problems"], rep


@DEPTHS
def test_field_ids_are_optional_but_checked(repo, tmp_path, depth):
    """files.json's field_ids (fdl's addition, for a table with a renamed
    column) is what the catalog says; a files.json without it (an older or
    another writer) agrees, a wrong one is named by --deep. Written wrong
    with its hash recorded, only deriving it from the catalog can tell: the
    default depth passes it (docs/decisions.md, fdl verify)."""
    con = repo.checkout(tmp_path / "w")
    con.execute("CREATE TABLE lake.t (a INTEGER, b VARCHAR)")
    con.execute("INSERT INTO lake.t VALUES (1, 'x')")
    con.execute("ALTER TABLE lake.t RENAME COLUMN b TO c")
    fdl("commit", tmp_path / "w", "-m", "renamed")
    vdir = repo.root / "versions" / repo.head()
    files = read_json(vdir / "files.json")
    assert files["tables"]["main.t"]["renamed_columns"] is True
    assert files["tables"]["main.t"]["field_ids"] == {"a": 1, "c": 2}

    without = json.loads(json.dumps(files))
    del without["tables"]["main.t"]["field_ids"]
    publish_files(repo, vdir, json.dumps(without).encode())
    rc, rep = verify(repo.root, *depth)
    assert rc == 0 and rep["problems"] == [], rep
    files["tables"]["main.t"]["field_ids"]["c"] = 7
    publish_files(repo, vdir, json.dumps(files).encode())
    rc, rep = verify(repo.root, *depth)
    if depth:
        assert rc == 5 and any("does not agree with the catalog" in str(p) for p in rep["problems"]), rep
    else:
        assert rc == 0 and rep["problems"] == [], rep


@DEPTHS
def test_a_broken_expired_json_is_named(repo, tmp_path, ledger, depth):
    """expired.json, added after a version was written (no hash records it),
    is read and checked field by field at both depths."""
    ledger.waive(repo.root, "the test damages a version for verify to find")
    head, first = two_versions(repo, tmp_path)
    (repo.root / "versions" / first / "expired.json").write_text(
        '{"reason": "tired", "expired_at": "2026-01-01T00:00:00Z"}')
    rc, rep = verify(repo.root, *depth)
    assert rc == 5 and any(p["where"] == f"versions/{first}/expired.json" and "reason" in p["problem"]
                           for p in rep["problems"]), rep
