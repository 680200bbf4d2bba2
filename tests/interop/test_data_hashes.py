"""Data files hashed (issue 43): files.json records the sha256 of every data
and delete file (fdl's field), computed once when a file first enters a
version and carried over after; verify, verify --signatures and clone
check it, so a same-size change to a data file is caught."""
import hashlib
import json
import shutil
import subprocess

from conftest import S3Repo, fdl, fdl_setup, read_json, rows
from s3server import Proxy


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hashes(repo, vid):
    return read_json(repo.root / "versions" / vid / "files.json").get("sha256")


def amounts(repo, tmp_path, setup=False):
    """v1 adds a file of AMOUNT:000100-like values; v2 adds one and deletes a row.
    With setup, by the release build: for a test whose assertions are about
    what runs after them (the hashes these commits record are
    test_files_json_records_each_data_file_once_and_carries_it_over's)."""
    run = fdl_setup if setup else fdl
    con = repo.checkout(tmp_path / "w", setup=setup)
    con.execute("CREATE TABLE lake.pay (id INTEGER, amount VARCHAR)")
    con.execute("INSERT INTO lake.pay SELECT i, printf('AMOUNT:%06d', i * 100) FROM range(1, 6) r(i)")
    run("commit", tmp_path / "w", "-m", "v1")
    v1 = repo.head()
    con.execute("INSERT INTO lake.pay VALUES (6, 'AMOUNT:000600')")
    con.execute("DELETE FROM lake.pay WHERE id = 5")
    run("commit", tmp_path / "w", "-m", "v2")
    return con, v1, repo.head()


def first_file(repo, vid):
    return repo.root / "data" / read_json(repo.root / "versions" / vid / "files.json")["tables"]["main.pay"]["files"][0]["path"]


def change_in_place(path, old, new):
    """The same bytes but `old` -> `new` (same length): the same size."""
    data = path.read_bytes()
    assert old in data and len(old) == len(new)
    path.write_bytes(data.replace(old, new))


def test_files_json_records_each_data_file_once_and_carries_it_over(repo, tmp_path, ledger):
    con, v1, v2 = amounts(repo, tmp_path)
    h1, h2 = hashes(repo, v1), hashes(repo, v2)
    data = {str(p.relative_to(repo.root / "data")): sha(p) for p in (repo.root / "data").rglob("*.parquet")}
    assert h1 == {k: v for k, v in data.items() if k in h1} and len(h1) == 1
    assert h2 == data and len(h2) == 3  # v1's file, v2's file and its delete file
    assert all(h2[k] == v for k, v in h1.items())
    # carried over, not read again: v3 records v1's hash even after the file changed
    ledger.waive(repo.root, "the test changes a data file in place on purpose")
    change_in_place(first_file(repo, v1), b"AMOUNT:000100", b"AMOUNT:999900")
    con.execute("INSERT INTO lake.pay VALUES (7, 'AMOUNT:000700')")
    fdl("commit", tmp_path / "w", "-m", "v3")
    v3 = repo.head()
    assert all(hashes(repo, v3)[k] == v for k, v in h2.items())
    p = fdl("verify", repo.root, "--all", "--json", check=False)
    changed = [x for x in json.loads(p.stdout)["problems"] if "changed after it was written" in x["problem"]]
    assert p.returncode == 5 and len(changed) == 3  # each version that references it says so
    assert {x["where"] for x in changed} == {"data/" + next(iter(h1))}


def test_a_same_size_change_to_a_data_file_fails_verify_signatures_and_clone(repo, tmp_path):
    # the versions and their signatures are the scene (the release build's);
    # every verify and clone after them runs the build under test
    con, v1, v2 = amounts(repo, tmp_path, setup=True)
    key = tmp_path / "key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ann", "-f", str(key)], check=True)
    pub = (tmp_path / "key.pub").read_text().split()
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'ann@example.org namespaces="fdl" {pub[0]} {pub[1]}\n')
    for v in (v1, v2):
        fdl_setup("sign", repo.root, v, "--key", key)
    sigs = ["--signatures", "--allowed-signers", allowed]
    assert fdl("verify", repo.root, "--all", *sigs).returncode == 0
    f = first_file(repo, v1)
    size = f.stat().st_size
    change_in_place(f, b"AMOUNT:000100", b"AMOUNT:999900")
    assert f.stat().st_size == size
    # the change is real: DuckDB reads it
    got = fdl("query", repo.root, "SELECT amount FROM pay WHERE id = 1", "-f", "csv").stdout.splitlines()[1]
    assert got == "AMOUNT:999900"
    where = str(f.relative_to(repo.root))
    for args in (["--all"], ["--all", *sigs], sigs):
        p = fdl("verify", repo.root, *args, check=False)
        assert p.returncode == 5, (args, p.stdout)
        assert f"problem: {where}: has sha256 {sha(f)}; versions/{v1}/files.json records" in p.stdout
        assert "the file changed after it was written" in p.stdout
    # the signatures themselves are good: what fails is the data they cover
    rep = json.loads(fdl("verify", repo.root, *sigs, "--json", check=False).stdout)
    assert sorted(s["id"] for s in rep["signatures"]) == sorted([v1, v2]) and not rep["ok"]
    # clone refuses it: no ref, and the changed file is not in the copy
    p = fdl("clone", repo.root, tmp_path / "mirror", check=False)
    assert p.returncode == 5 and "the file changed after it was written" in p.stderr and where in p.stderr
    assert not (tmp_path / "mirror" / "refs" / "heads" / "main").exists()
    assert not (tmp_path / "mirror" / where).exists()
    # put back, the clone finishes and the copy verifies
    change_in_place(f, b"AMOUNT:999900", b"AMOUNT:000100")
    fdl("clone", repo.root, tmp_path / "mirror")
    assert fdl("verify", tmp_path / "mirror", "--all", *sigs).returncode == 0
    assert hashes(repo, v2) == {k: sha(tmp_path / "mirror" / "data" / k) for k in hashes(repo, v2)}


def strip_hashes(repo, vid):
    """Make `vid` a version written before fdl recorded data hashes: its
    files.json without them, version.json recording that files.json (the
    history index, derived, is dropped with it)."""
    fj = repo.root / "versions" / vid / "files.json"
    doc = read_json(fj)
    del doc["sha256"]
    fj.write_text(json.dumps(doc, separators=(",", ":")))
    vj = repo.root / "versions" / vid / "version.json"
    v = read_json(vj)
    v["files"].update(bytes=fj.stat().st_size, sha256=sha(fj))
    vj.write_text(json.dumps(v, indent=2))
    shutil.rmtree(repo.root / "history", ignore_errors=True)


def test_versions_written_before_have_no_hash_and_say_so(repo, tmp_path, ledger):
    # the old version is the scene (made by the release build, then its
    # hashes stripped); the commit of the new one runs the build under test
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.pay (id INTEGER, amount VARCHAR)")
    con.execute("INSERT INTO lake.pay VALUES (1, 'AMOUNT:000100')")
    fdl_setup("commit", tmp_path / "w", "-m", "old")
    old = repo.head()
    strip_hashes(repo, old)
    p = fdl("verify", repo.root, "--all")
    assert f"warning: versions/{old}: records no sha256 of its data files" in p.stdout
    assert rows(repo.open_version(old), "lake.pay") == [(1, "AMOUNT:000100")]  # readers never need it
    # the next version hashes what its base did not, once
    con.execute("INSERT INTO lake.pay VALUES (2, 'AMOUNT:000200')")
    fdl("commit", tmp_path / "w", "-m", "new")
    new = repo.head()
    data = {str(p.relative_to(repo.root / "data")): sha(p) for p in (repo.root / "data").rglob("*.parquet")}
    assert hashes(repo, new) == data and len(data) == 2
    # a change to the old file: the old version cannot tell, the new one can,
    # and clone refuses it though the old version, which records no hash,
    # plans the file first
    f = first_file(repo, old)
    ledger.waive(repo.root, "the test changes a data file in place on purpose")
    change_in_place(f, b"AMOUNT:000100", b"AMOUNT:999900")
    p = fdl("verify", repo.root, "--all", check=False)
    assert p.returncode == 5 and f"versions/{new}/files.json records" in p.stdout
    assert f"versions/{old}/files.json records" not in p.stdout
    for jobs in ("1", "4"):
        mirror = tmp_path / f"mirror{jobs}"
        p = fdl("clone", repo.root, mirror, "--jobs", jobs, check=False)
        assert p.returncode == 5 and f"versions/{new}/files.json records" in p.stderr, p.stderr
        assert not (mirror / "refs" / "heads" / "main").exists()
        assert not (mirror / f.relative_to(repo.root)).exists()  # removed if it was copied before the check


def test_a_commit_on_a_bucket_reads_only_its_new_data_files(s3_server, tmp_path, ledger):
    proxy = Proxy(s3_server.port)
    try:
        r = S3Repo(s3_server, tmp_path, endpoint=proxy.endpoint)
        con = r.checkout(tmp_path / "w", setup=True)  # the scene; the commits run the build under test
        con.execute("CREATE TABLE lake.t (i INTEGER)")
        for i in range(3):
            con.execute(f"INSERT INTO lake.t VALUES ({i})")
        proxy.seen.clear()
        with ledger.deferred():
            r.fdl("commit", tmp_path / "w", "-m", "three files")
            gets = sorted(p for m, p in proxy.seen if m == "GET" and p.endswith(".parquet"))
        # each new file read once, where it is before the commit publishes it:
        # the working catalog's own folder (work/<id>/)
        assert len(gets) == 3 and all("/datasets/pop/work/" in p for p in gets), gets
        con.execute("INSERT INTO lake.t VALUES (3)")
        con.close()
        proxy.seen.clear()
        with ledger.deferred():
            r.fdl("commit", tmp_path / "w", "-m", "one more")
            gets = [p for m, p in proxy.seen if m == "GET" and p.endswith(".parquet")]
        assert len(gets) == 1 and "/datasets/pop/work/" in gets[0], gets  # the new file; the others are carried over
        doc = json.loads(r.get(f"datasets/pop/versions/{r.head()}/files.json"))
        assert len(doc["sha256"]) == 4
        for path, h in doc["sha256"].items():
            assert hashlib.sha256(r.get(f"datasets/pop/data/{path}")).hexdigest() == h
        assert r.fdl("verify", r.root, "--all").returncode == 0
    finally:
        proxy.stop()


def traced_map(p):
    return [l.split("commit: ", 1)[1] for l in p.stderr.splitlines() if "the base's sha256 map" in l]


def test_the_working_folders_copy_of_the_map_serves_only_the_files_json_it_copies(repo, tmp_path, ledger):
    """Each commit leaves WORK/fdl-hashes.txt, the new files.json's sha256
    map; the next commit carries the hashes over from it instead of parsing
    files.json, but only while it copies that very files.json (named by its
    sha256) and its lines are as written. A symlink, another version's copy,
    a changed line or a malformed file: files.json is read, and the hashes
    published are the files' own."""
    con, v1, v2 = amounts(repo, tmp_path)
    work = tmp_path / "w"
    cache = work / "fdl-hashes.txt"
    files_sha = read_json(repo.root / "versions" / v2 / "version.json")["files"]["sha256"]
    head, *lines = cache.read_text().splitlines()
    assert head.split()[:3] == ["fdl-hashes", "1", files_sha]
    assert hashlib.sha256("".join(l + "\n" for l in lines).encode()).hexdigest() == head.split()[3]
    assert dict(reversed(l.split(" ", 1)) for l in lines) == hashes(repo, v2)

    def commit(k):
        con.execute(f"INSERT INTO lake.pay VALUES ({k}, 'AMOUNT:{k:06d}')")
        p = fdl("commit", work, "-m", f"v{k}", env={"FDL_TRACE": "1"})
        data = {str(f.relative_to(repo.root / "data")): sha(f) for f in (repo.root / "data").rglob("*.parquet")}
        assert hashes(repo, repo.head()) == data
        return traced_map(p)

    assert commit(10) == ["the base's sha256 map from fdl-hashes.txt"]
    text = cache.read_text()
    k = text.index("\n") + 1
    cache.write_text(text[:k] + ("0" if text[k] != "0" else "1") + text[k + 1:])  # one hash changed
    assert commit(11) == ["the base's sha256 map from its files.json (fdl-hashes.txt changed since a commit wrote it)"]
    old = cache.read_text()
    assert commit(12) == ["the base's sha256 map from fdl-hashes.txt"]
    cache.write_text(old)  # the copy of an earlier version's files.json
    assert commit(13) == ["the base's sha256 map from its files.json (fdl-hashes.txt copies another files.json)"]
    real = tmp_path / "elsewhere.txt"
    cache.rename(real)
    cache.symlink_to(real)
    assert commit(14) == ["the base's sha256 map from its files.json (fdl-hashes.txt is not a regular file)"]
    assert not cache.is_symlink()  # replaced by the commit's own copy
    head = cache.read_text().split("\n", 1)[0].split()
    body = "0" * 63 + "x main/pay/a.parquet\n"  # well sealed, but no hash
    cache.write_text(f"fdl-hashes 1 {head[2]} {hashlib.sha256(body.encode()).hexdigest()}\n{body}")
    assert commit(15) == ["the base's sha256 map from its files.json (fdl-hashes.txt is malformed)"]
    cache.write_text(cache.read_text()[:100])
    assert commit(16) == ["the base's sha256 map from its files.json (fdl-hashes.txt is malformed)"]
    assert commit(17) == ["the base's sha256 map from fdl-hashes.txt"]
    # a well-sealed copy naming a file this commit publishes: hashed anyway
    con.execute("INSERT INTO lake.pay VALUES (18, 'AMOUNT:000018')")
    wid = read_json(work / "fdl-work.json")["id"]
    staged = [str(f.relative_to(repo.root / "work" / wid)) for f in (repo.root / "work" / wid).rglob("*.parquet")]
    assert len(staged) == 1
    head, *lines = cache.read_text().splitlines()
    body = "".join(l + "\n" for l in lines) + "0" * 64 + " " + staged[0] + "\n"
    fsha = head.split()[2]
    cache.write_text(f"fdl-hashes 1 {fsha} {hashlib.sha256(body.encode()).hexdigest()}\n{body}")
    p = fdl("commit", work, "-m", "v18", env={"FDL_TRACE": "1"})
    assert traced_map(p) == ["the base's sha256 map from fdl-hashes.txt"]
    assert hashes(repo, repo.head())[staged[0]] == sha(repo.root / "data" / staged[0])
    p = fdl("verify", repo.root, "--all")
    assert p.returncode == 0, p.stdout + p.stderr


def test_nothing_to_commit_hashes_nothing(repo, tmp_path, ledger):
    """A commit that ends with "nothing to commit" publishes nothing, so it
    reads no map and hashes no file (the freeze's hashing is skipped when
    the snapshot and the description are the base's): a second commit
    with no change says so without touching files.json or the data.
    The two versions before are the release build's (the scene)."""
    con, v1, v2 = amounts(repo, tmp_path, setup=True)
    con.close()
    p = fdl("commit", tmp_path / "w", "-m", "again", check=False, env={"FDL_TRACE": "1"})
    assert p.returncode == 8 and "nothing to commit" in p.stderr, (p.returncode, p.stderr)
    assert "sha256 map" not in p.stderr, p.stderr
    assert repo.head() == v2
    # a description alone is something to publish: hashed as any version
    (tmp_path / "w" / "dataset.yml").write_text("name: pay\ntitle: Payments\n")
    p = fdl("commit", tmp_path / "w", "-m", "described", env={"FDL_TRACE": "1"})
    assert "commit: the base's sha256 map from" in p.stderr, p.stderr
    assert hashes(repo, repo.head()) == hashes(repo, v2)
