"""fdl skips DuckDB's signature check only for its own extension files that
no one else can write (docs/decisions.md, "DuckDB extension signatures").
A copy of sqlite_scanner with a flipped signature byte shows which loads
were checked: DuckDB refuses it whenever it checks."""
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import EXT, FDL, fdl


@pytest.fixture
def tampered(tmp_path):
    src = next(pathlib.Path(EXT).glob("v*/*/ducklake.duckdb_extension")).parent
    rel = src.relative_to(EXT)
    dst = tmp_path / "ext" / rel
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.name in ("ducklake.duckdb_extension", "sqlite_scanner.duckdb_extension"):
            shutil.copyfile(f, dst / f.name)
            os.chmod(dst / f.name, 0o644)
    with open(dst / "sqlite_scanner.duckdb_extension", "r+b") as f:
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last[0] ^ 0xFF]))
    for d in [tmp_path / "ext", *(tmp_path / "ext").rglob("*")]:
        if d.is_dir():
            os.chmod(d, 0o755)
    return tmp_path / "ext", dst / "sqlite_scanner.duckdb_extension"


def test_own_extension_loads_unchecked(repo, tmp_path, tampered):
    ext, _ = tampered
    p = fdl("checkout", repo.root, tmp_path / "w1", env={"FDL_EXTENSION_DIR": str(ext)})
    assert "ATTACH" in p.stdout


def test_writable_by_others_is_checked(repo, tmp_path, tampered):
    ext, bad = tampered
    os.chmod(bad, 0o664)
    p = fdl("checkout", repo.root, tmp_path / "w2", check=False, env={"FDL_EXTENSION_DIR": str(ext)})
    assert p.returncode != 0
    assert "signature" in p.stderr and str(bad) in p.stderr
    assert not (tmp_path / "w2").exists() or not any((tmp_path / "w2").iterdir())


def test_folder_writable_by_others_is_checked(repo, tmp_path, tampered):
    ext, bad = tampered
    os.chmod(bad.parent, 0o777)
    p = fdl("checkout", repo.root, tmp_path / "w3", check=False, env={"FDL_EXTENSION_DIR": str(ext)})
    assert p.returncode != 0 and "signature" in p.stderr


def test_verify_extensions_keeps_duckdb_check(repo, tmp_path, tampered):
    ext, _ = tampered
    p = fdl("checkout", repo.root, tmp_path / "w4", check=False,
            env={"FDL_EXTENSION_DIR": str(ext), "FDL_VERIFY_EXTENSIONS": "1"})
    assert p.returncode != 0 and "signature" in p.stderr


def test_user_sql_cannot_load_unsigned(repo, tmp_path):
    con = repo.checkout(tmp_path / "work")
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    fdl("commit", tmp_path / "work", "-m", "one")
    p = fdl("query", repo.root, "SELECT current_setting('allow_unsigned_extensions') AS u")
    assert p.stdout.split()[-1] == "false"


PLAIN = pathlib.Path(__file__).resolve().parents[2] / "build" / "fdl"


def commit_traced(binary, work, msg):
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Test", FDL_AUTHOR_EMAIL="t@example.org",
               FDL_TRACE="1")
    p = subprocess.run([str(binary), "commit", str(work), "-m", msg], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return p


def test_libduckdb_binds_itself_first_unless_malloc_is_interposed(repo, tmp_path, ledger):
    """The release build loads libduckdb with RTLD_DEEPBIND, its own symbols
    bound first (docs/decisions.md); a build whose malloc is not libc's (the
    sanitizer build's is AddressSanitizer's, which refuses the flag) loads
    it in the process's order. Either way the commit publishes what stock
    DuckDB reads."""
    assert PLAIN.exists(), "make interop builds build/fdl beside the sanitizer build"
    work = tmp_path / "w"
    con = repo.checkout(work)
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    p = commit_traced(PLAIN, work, "release build")
    ledger.published(p.stdout)
    assert "libduckdb: its own symbols bound first (RTLD_DEEPBIND)" in p.stderr, p.stderr
    con = repo.checkout(tmp_path / "w2")
    con.execute("INSERT INTO lake.t VALUES (2)")
    con.close()
    sanitized = b"__asan_init" in pathlib.Path(FDL).read_bytes()
    p = commit_traced(FDL, tmp_path / "w2", "this build")
    ledger.published(p.stdout)
    want = "bound in the process's order (malloc is not libc's)" if sanitized else "RTLD_DEEPBIND"
    assert "libduckdb: " in p.stderr and want in p.stderr, p.stderr
    con = repo.open_version("main")
    assert sorted(r[0] for r in con.execute("SELECT a FROM lake.t").fetchall()) == [1, 2]
    con.close()
