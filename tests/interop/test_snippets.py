"""Every snippet a user copies runs as written (issue 62), as Rust's doctests
and Python's doctest run theirs.

Each fenced block of README.md, docs/*.md and bindings/python/README.md
whose language a user runs (`sh`, `python`, `sql`) is run (PAGE_TESTS
names the test of each page), page by page, in order, as a reader would: the `sh` blocks in one shell (what a block
exports, and where it cds, carries to the next), the `python` blocks in one
Python (the blocks share their names, as in a notebook; one JVM for every
PySpark block of a page), the `sql` blocks in one stock DuckDB connection of
that Python, which loads nothing but what the SQL says (no
extension_directory: a snippet that needs DuckDB's extension repository
fails, since this machine has none). A block fails on a non-zero exit (`set
-eo pipefail`) or an exception. What `fdl iceberg` and `fdl iceberg
--catalog` print for a user to paste is cut into its PySpark, pyiceberg and
DuckDB blocks and run as printed too; `fdl checkout` and `fdl attach` print
what the `sh` blocks run.

The convention (tests/README.md): every fence names its language. A
block a user would run but this suite cannot says why in its info string,
```sh {no-run: needs a real AWS account}```; one that prints nothing when
all is well (greps that find no line, exit 1) says so, ```sh {prints:
nothing}```, and passes when it prints nothing; `text`, `json` and `yaml`
are an output, a listing or a file, shown and not run; a block after
`<!-- file: PATH -->` is that file (test_pipelines.py compares them).
test_every_page_covered fails on a fence in no language or another one,
and on a page with a block that runs and no test here that runs it.

The environment is the one `make demo` leaves and README's tour sets up: fdl and deps/venv/bin (Python with stock
DuckDB, the `duckdb` command, PySpark) on PATH, FDL_EXTENSION_DIR, an
author as `git config` would give one, a fresh HOME (no ~/.duckdb), the
working folder a copy of the fdl folder's layout (build/, deps/, src/,
examples/ linked). What a reader substitutes is substituted, and nothing else:
`/srv/` and `/tmp/` are folders of the test's own, the example hosts
(`https://data.example.org`, `http://host`, port 4001) are an `fdl serve`
of the page's repository on a free port, the buckets are the S3 test
server's, and each `<placeholder>` gets the value a reader would look up
(the page's FILL)."""
import inspect
import json
import os
import pathlib
import pickle
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

import ledger as ledger_mod
from conftest import EXT, FDL, LEDGER_FDL, ROOT

# The test's own set-up (the histories a page assumes) runs
# the optimised build where there is one, as the ledger does: the blocks,
# what is tested, run FDL (the sanitizer build in make test).
SETUP_FDL = LEDGER_FDL

RUN_LANGS = {"sh", "python", "sql"}
SHOWN_LANGS = {"text", "json", "yaml"}  # output, a listing or a file: shown, never run
VENV = ROOT / "deps" / "venv"
FENCE = re.compile(r"^( *)```(.*)$")


class Block:
    def __init__(self, page, line, lang, attrs, code, heading, file):
        self.page, self.line, self.lang, self.attrs, self.code = page, line, lang, attrs, code
        self.heading, self.file = heading, file

    @property
    def where(self):
        return f"{self.page}:{self.line}"

    @property
    def no_run(self):
        return self.attrs.get("no-run")

    @property
    def runs(self):
        return self.lang in RUN_LANGS and self.no_run is None and not self.file


def blocks(page):
    """The fenced blocks of a page: language, {attributes} of the info
    string, code (the fence's indentation removed), the heading above."""
    out, lines = [], (ROOT / page).read_text().splitlines()
    heading, file, i = "", None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#") and not line.startswith("#!"):
            heading = line.lstrip("#").strip()
        m = re.match(r"<!-- file: (\S+) -->", line)
        if m:
            file = m.group(1)
        f = FENCE.match(line)
        if not f:
            if line.strip() and not m:
                file = None if not line.startswith("<!--") else file
            i += 1
            continue
        indent, info = len(f.group(1)), f.group(2).strip()
        lang, _, rest = info.partition(" ")
        attrs = {}
        am = re.fullmatch(r"\{(.*)\}", rest.strip())
        if rest.strip():
            assert am, f"{page}:{i + 1}: info string '{info}': attributes go in braces, {{no-run: why}}"
            k, _, v = am.group(1).partition(":")
            attrs[k.strip()] = v.strip()
        code, j = [], i + 1
        while j < len(lines) and not re.match(r"^ *```\s*$", lines[j]):
            code.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        out.append(Block(page, i + 1, lang, attrs, "\n".join(code) + "\n", heading, file))
        file = None
        i = j + 1
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


KERNEL = r'''
import json, os, sys, traceback
ns = {"__name__": "__main__"}
con = [None]
inp, out = os.fdopen(int(sys.argv[1]), "r"), os.fdopen(int(sys.argv[2]), "w")
for line in inp:
    msg = json.loads(line)
    print(f"==== {msg['name']}", flush=True)
    print(f"==== {msg['name']}", file=sys.stderr, flush=True)
    try:
        if msg["lang"] == "sql":
            if con[0] is None or msg.get("fresh"):
                import duckdb
                con[0] = duckdb.connect()
            res = con[0].execute(msg["code"])
            if res.description:
                for row in res.fetchall():
                    print(row)
        else:
            exec(compile(msg["code"], msg["name"], "exec"), ns)
        result = {"ok": True}
    except BaseException:
        result = {"ok": False, "error": traceback.format_exc()}
    sys.stdout.flush()
    sys.stderr.flush()
    out.write(json.dumps(result) + "\n")
    out.flush()
'''


class Session:
    """One reader at one page: a shell's state carried between `sh` blocks,
    one Python for the `python` and `sql` blocks, background processes
    ended at the end."""

    def __init__(self, sandbox, env, fill):
        self.sandbox, self.env, self.fill = sandbox, env, fill
        self.cwd = sandbox / "fdl"
        self.state = sandbox / "shell-state"
        self.state.write_text(f"cd {shlex.quote(str(self.cwd))}\n")
        self.groups, self.kernel, self.count = [], None, 0
        self.log = sandbox / "log"
        self.log.mkdir(exist_ok=True)

    def text(self, block):
        return self.fill_text(block.code)

    def fill_text(self, code):
        keys = sorted(self.fill, key=len, reverse=True)  # one pass: a value is never substituted again
        return re.sub("|".join(map(re.escape, keys)), lambda m: self.fill[m.group(0)], code) if keys else code

    def run(self, block, code=None, fresh=False):
        """Run a block; fresh: a DuckDB session of its own (what fdl printed,
        pasted into a new session)."""
        code = self.text(block) if code is None else code
        self.count += 1
        if block.lang == "sh":
            return self.sh(code, block.where, block.attrs.get("prints") == "nothing")
        return self.py(code, block.lang, block.where, fresh)

    def sh(self, code, where, silent=False):
        """silent: a block a page says prints nothing (greps that find no
        line, and so exit 1): it passes when it prints nothing at all."""
        n = self.count
        script = self.sandbox / f"block-{n}.sh"
        script.write_text(f"{'' if silent else 'set -eo pipefail'}\nsource {shlex.quote(str(self.state))}\n{code}\n"
                          f"export -p > {shlex.quote(str(self.state))}.new\n"
                          f"echo \"cd $(printf %q \"$PWD\")\" >> {shlex.quote(str(self.state))}.new\n")
        out, err = self.log / f"{n}.out", self.log / f"{n}.err"
        with open(out, "w") as o, open(err, "w") as e:
            p = subprocess.Popen(["bash", str(script)], stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                 env=self.env, cwd=self.cwd, start_new_session=True)
            self.groups.append(p.pid)
            try:
                rc = p.wait(timeout=600)  # a safety net: a block that hangs fails
            except subprocess.TimeoutExpired:
                rc = "hung (600 s)"
        if silent and (out.stat().st_size or err.stat().st_size):
            return f"{where}: printed what the page says it does not\n--- block as run:\n{code}--- stdout:\n" \
                   f"{tail(out)}--- stderr:\n{tail(err)}"
        if rc != 0 and not silent:
            return f"{where}: exited {rc}\n--- block as run:\n{code}--- stdout:\n{tail(out)}--- stderr:\n{tail(err)}"
        os.replace(f"{self.state}.new", self.state)
        return None

    def py(self, code, lang, where, fresh=False):
        if self.kernel is None:
            rin, win = os.pipe()
            rout, wout = os.pipe()
            env = self.shell_env()
            self.klog = open(self.log / "python.log", "w")
            self.kernel = subprocess.Popen([str(VENV / "bin" / "python"), "-c", KERNEL, str(rin), str(wout)],
                                           pass_fds=(rin, wout), stdin=subprocess.DEVNULL, stdout=self.klog,
                                           stderr=subprocess.STDOUT, env=env, cwd=env.pop("FDL_SNIPPET_PWD"),
                                           start_new_session=True)
            os.close(rin)
            os.close(wout)
            self.kin, self.kout = os.fdopen(win, "w"), os.fdopen(rout, "r")
            self.groups.append(self.kernel.pid)
        self.kin.write(json.dumps({"lang": lang, "code": code, "name": where, "fresh": fresh}) + "\n")
        self.kin.flush()
        line = self.kout.readline()
        res = json.loads(line) if line else {"ok": False, "error": "the Python session died"}
        if not res["ok"]:
            self.klog.flush()
            return f"{where}: {res['error']}\n--- block as run:\n{code}--- output:\n{tail(self.log / 'python.log')}"
        return None

    def export(self, **values):
        """The reader's shell has these (from the next block on)."""
        with open(self.state, "a") as f:
            f.write("".join(f"export {k}={shlex.quote(v)}\n" for k, v in values.items()))

    def unset(self, *names):
        """The reader's shell has none of these (from the next block on)."""
        with open(self.state, "a") as f:
            f.write(f"unset {' '.join(names)}\n")

    def save(self, name, code):
        """A file the page shows and the reader saves (README's build.py),
        into the folder the shell is in."""
        pathlib.Path(self.shell_env()["FDL_SNIPPET_PWD"], name).write_text(self.fill_text(code))

    def shell_env(self):
        """The environment the shell has reached (exports of earlier blocks)."""
        p = subprocess.run(["bash", "-c", f"source {shlex.quote(str(self.state))}; env -0; printf '\\0%s' \"$PWD\""],
                           capture_output=True, env=self.env, cwd=self.cwd, check=True)
        parts = p.stdout.decode().split("\0")
        env = dict(x.split("=", 1) for x in parts[:-2] if "=" in x)
        env["FDL_SNIPPET_PWD"] = parts[-1]
        return env

    def close(self):
        if self.kernel:
            self.kin.close()
            try:
                self.kernel.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass
            self.klog.close()
        for g in self.groups:
            try:
                os.killpg(g, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass


def tail(path, n=4000):
    t = pathlib.Path(path).read_text(errors="replace")
    return (t[-n:] if len(t) > n else t) + ("\n" if t and not t.endswith("\n") else "")


def sandbox_for(tmp_path):
    """The reader's folders: the fdl folder's layout (build/fdl is the fdl
    under test), a fresh HOME, /srv and /tmp of its own."""
    sb = tmp_path
    fdl_dir = sb / "fdl"
    (fdl_dir / "build").mkdir(parents=True)
    os.symlink(FDL, fdl_dir / "build" / "fdl")
    if (ROOT / "build" / "web").exists():
        os.symlink(ROOT / "build" / "web", fdl_dir / "build" / "web")
    for name in ("deps", "bindings", "src"):
        os.symlink(ROOT / name, fdl_dir / name)
    shutil.copytree(ROOT / "examples", fdl_dir / "examples")  # dbt writes target/ and logs/ into its project
    for d in ("home", "srv", "tmp"):
        (sb / d).mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "FDL_")) and k != "HOME"}
    env.update(HOME=str(sb / "home"), TMPDIR=str(sb / "tmp"),
               PATH=f"{fdl_dir / 'build'}:{VENV / 'bin'}:{os.environ['PATH']}",
               FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Example City", FDL_AUTHOR_EMAIL="data@example.org",
               FDL_CACHE_DIR=str(sb / "home" / ".cache" / "fdl"))
    fill = {"/srv/": f"{sb}/srv/", "/tmp/": f"{sb}/tmp/"}
    return sb, env, fill


def aws(env):
    """What the ledger needs of a page's environment to read its versions."""
    return {k: v for k, v in env.items() if k.startswith("AWS_")}


def fdl_in(env, *args, cwd=None):
    p = subprocess.run([SETUP_FDL, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd)
    assert p.returncode == 0, f"set-up: fdl {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}"
    return p.stdout


def publish(env, root, work, sql, message, *args, full=False):
    """One version through stock DuckDB (the set-up a page assumes): its id
    (full: what fdl commit printed)."""
    if not (pathlib.Path(work) / "ducklake.sqlite").exists():
        attach = fdl_in(env, "checkout", root, work, *args)
        (pathlib.Path(work) / "attach.sql").write_text(attach)
    import duckdb
    con = duckdb.connect(config={"extension_directory": EXT})
    con.execute((pathlib.Path(work) / "attach.sql").read_text())
    con.execute(sql)
    con.close()
    out = fdl_in(env, "commit", work, "-m", message)
    return out if full else out.split()[-1]


def serve(env, root, port):
    p = subprocess.Popen([FDL, "serve", str(root), "--port", str(port), "-q"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300  # a safety net, never the outcome: a slow machine only waits longer
    while p.poll() is None and time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return p
        time.sleep(0.05)
    p.kill()
    raise AssertionError(f"set-up: fdl serve {root} did not listen on {port} (exit {p.poll()})")


def run_page(page, session, ledger=None, before=None, saves=None):
    """Run every runnable block of a page, in order; the first failure ends
    the page (what follows depends on it, as for a reader). saves: {heading
    prefix: file name}, a `text` block under that heading is a file the
    reader saves where the shell is (README's build.py for fdl run)."""
    ran = []
    for b in blocks(page):
        for prefix, name in (saves or {}).items():
            if b.lang == "text" and b.heading.startswith(prefix) and b.code.startswith("import "):
                session.save(name, b.code)
        if not b.runs:
            continue
        t0 = time.monotonic()
        if before:
            before(b)
        t1 = time.monotonic()
        err = session.run(b)
        with open(os.environ.get("SNIPPET_TIMES", os.devnull), "a") as f:
            f.write(f"{b.where} set-up {t1 - t0:.1f} s, block {time.monotonic() - t1:.1f} s\n")
        ran.append(b)
        if ledger is not None and b.lang == "sh":
            record(ledger, session, session.count)
        assert err is None, err
    return ran


def record(ledger, session, n):
    """Tell the ledger what the block published: the folder repositories
    the reader made (a folder holding fdl.json under /srv or /tmp), then the
    versions its commits printed."""
    out = session.log / f"{n}.out"
    if out.exists() and "Committed version" in out.read_text():
        for top in ("srv", "tmp"):
            for cfg in (session.sandbox / top).glob("**/fdl.json"):
                if str(cfg.parent) not in ledger.roots and "/versions/" not in str(cfg):
                    ledger.root(str(cfg.parent), aws(session.env))
        ledger.published(out.read_text(), aws(session.env))


class Postgres:
    """A PostgreSQL 15 server of the test's own (as test_postgres.py starts
    one): the server runs as the postgres user, trust authentication on
    127.0.0.1."""

    BIN = pathlib.Path("/usr/lib/postgresql/15/bin")

    def __init__(self):
        assert (self.BIN / "initdb").exists(), "PostgreSQL 15 is missing: make test's setup installs postgresql-15"
        self.base = pathlib.Path(tempfile.mkdtemp(prefix="fdl-pg-"))  # postgres cannot enter pytest's folders
        self.as_pg = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        if self.as_pg:
            shutil.chown(self.base, "postgres")
        self.port = free_port()
        data = self.base / "data"
        subprocess.run(self.as_pg + [str(self.BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"],
                       check=True, capture_output=True)
        subprocess.run(self.as_pg + [str(self.BIN / "pg_ctl"), "-D", str(data), "-w", "-l", str(self.base / "log"),
                                     "-o", f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1", "start"],
                       check=True, capture_output=True)

    def sql(self, sql):
        subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-q", "-c", sql],
                       check=True, capture_output=True)

    def stop(self):
        subprocess.run(self.as_pg + [str(self.BIN / "pg_ctl"), "-D", str(self.base / "data"), "-m", "immediate",
                                     "stop"], capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)


# ---- the pages ---------------------------------------------------------------------------------------

CENSUS = "CREATE OR REPLACE TABLE lake.population AS SELECT * FROM read_csv('{csv}', types={{'town_code': 'VARCHAR'}})"


class Censuses:
    """/srv/population as the pages assume it: n versions on main of the
    population table (`Census, version k`, a year a version), with a schema
    geo or not, published from stock DuckDB through the ATTACH `fdl checkout`
    printed, by the optimised build (the history is the set-up, the blocks
    are what is tested). Built once per session (per worker) as one chain of
    commits kept at every length on its way (README's eight versions, web.md's
    one, pyfdl's and private.md's two), each version from a checkout of its
    own (abandoned after its commit: no working catalog stays registered),
    and copied into each test, whose ledger adopts the versions with the
    checksums stock DuckDB took when the chain published them (histories.py
    does the same for the other modules)."""

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "FDL_"))}
        self.env.update(HOME=str(self.folder / "home"), FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Example City",
                        FDL_AUTHOR_EMAIL="data@example.org", FDL_CACHE_DIR=str(self.folder / "home" / "cache"))
        self.chains = {}  # geo -> (root, ids, sums, ledger)

    def copy(self, root, n, tag_at=None, geo=False):
        """root a copy of the history of n versions (whatever was there
        goes), a tag v2025 at seq tag_at; returns the versions' ids."""
        kept = self.folder / f"{'geo' if geo else 'plain'}-{n}"
        if not kept.is_dir():
            self._extend(geo, n)
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(kept / "repo", root, symlinks=True)
        ids, sums, memo = pickle.loads((kept / "sums.pickle").read_bytes())
        if tag_at:
            fdl_in(self.env, "tag", root, "v2025", ids[tag_at - 1])
        ledger_mod.CURRENT[0].adopt(root, sums, memo)
        return ids

    def _extend(self, geo, n):
        if geo not in self.chains:
            root = self.folder / f"{'geo' if geo else 'plain'}-chain"
            fdl_in(self.env, "init", root)
            led = ledger_mod.Ledger(LEDGER_FDL, EXT)
            led.root(str(root))
            self.chains[geo] = (root, [], {}, led)
        root, ids, sums, led = self.chains[geo]
        while len(ids) < n:
            i = len(ids)
            csv = ROOT / "examples" / ("population-2024.csv" if i % 2 == 0 else "population-2025.csv")
            sql = CENSUS.format(csv=csv) if i == 0 else \
                f"DELETE FROM lake.population; INSERT INTO lake.population SELECT * FROM read_csv('{csv}', types={{'town_code': 'VARCHAR'}})"
            if geo and i == 0:
                sql += "; CREATE SCHEMA lake.geo; CREATE TABLE lake.geo.towns AS SELECT DISTINCT town_code, town FROM lake.population"
            work = self.folder / "work"
            out = publish(self.env, root, work, sql, f"Census, version {i + 1}", full=True)
            fdl_in(self.env, "checkout", "--abandon", work)
            for vid in led.published(out):
                ids.append(vid)
                sums[vid] = led.entries[vid][1]
            kept = self.folder / f"{'geo' if geo else 'plain'}-{len(ids)}"
            shutil.copytree(root, kept / "repo", symlinks=True)
            (kept / "sums.pickle").write_bytes(pickle.dumps((list(ids), dict(sums), dict(led.memo))))

    def close(self):
        for _, _, _, led in self.chains.values():
            led.close()


@pytest.fixture(scope="session")
def censuses(tmp_path_factory):
    c = Censuses(tmp_path_factory.mktemp("censuses"))
    yield c
    c.close()


def history(censuses, root, n, tag_at=None, geo=False):
    """/srv/population with n versions on main, a tag v2025 at seq tag_at,
    a schema geo or not: a copy of the session's (Censuses), its versions
    adopted by the running test's ledger."""
    return censuses.copy(root, n, tag_at, geo)


@pytest.fixture
def reader(tmp_path, ledger):
    sb, env, fill = sandbox_for(tmp_path)
    s = Session(sb, env, fill)
    yield s
    s.close()


def test_readme(reader, ledger, s3_server, censuses):
    """README.md: the tour, every command's examples (made from
    src/cli/cmd_*.c), S3, teams."""
    s = reader
    env, sb = s.env, s.sandbox
    s3 = s3_server
    env.update(s3.env())
    client = s3.client()
    for bucket in ("open-data", "data"):
        s3.empty(bucket)  # the session's server: another test of this file may have used it
        client.create_bucket(Bucket=bucket)
    port = free_port()
    s.fill.update({"127.0.0.1:4001": f"127.0.0.1:{port}", "--port 4001": f"--port {port}"})
    root = sb / "srv" / "population"
    state = {}

    def before(b):
        h = b.heading
        if h.startswith("`fdl checkout") and "history" not in state:
            # the command section works on /srv/population with a history:
            # eight versions of main (main:8 is withdrawn below), v2025 at main:3
            shutil.rmtree(root)
            ids = history(censuses, root, 8, tag_at=3)
            state["history"] = ids
            host = free_port()
            s.groups.append(serve(env, root, host).pid)
            s.fill["https://data.example.org/population"] = f"http://127.0.0.1:{host}"
        if h.startswith("`fdl rebase") and "rebase" not in state:
            # someone else commits, so there is something to rebase onto
            state["rebase"] = publish(env, root, sb / "tmp" / "other", "INSERT INTO lake.population "
                                      "FROM 'examples/population-2024.csv' LIMIT 1", "someone else")
            ledger.record(str(root), state["rebase"], aws(env))
        if h.startswith("`fdl show"):
            s.fill["019a3c4e-7b21-7f3a-9c55-2f0d8e1a4b6c"] = state["history"][1]  # a version id of the reader's
        if h.startswith("`fdl tag") and "tag" not in state:
            # the examples make v2025 and v2024 themselves; main goes back
            # where branch's example moved it from, by the command fdl
            # printed for that, run as printed
            state["tag"] = True
            fdl_in(env, "tag", root, "--delete", "v2025")
            fdl_in(env, "branch", root, "--set-head", "main")
            printed = (s.log / f"{s.count}.out").read_text()
            back = re.search(r"^To move it back: (fdl branch .*)$", printed, re.M)
            assert back, f"fdl branch --force printed no command that moves the branch back:\n{printed}"
            p = subprocess.run(["bash", "-c", back.group(1)], capture_output=True, text=True, env=env,
                               cwd=s.shell_env()["FDL_SNIPPET_PWD"])
            assert p.returncode == 0, f"{back.group(1)}: what fdl printed, run as printed, exited {p.returncode}: " \
                                      f"{p.stderr}"
            assert (root / "refs" / "heads" / "main").read_text() == (root / "refs" / "heads" / "fixes").read_text()
        if h.startswith("`fdl attach") and "s3" not in state:
            # the bucket holds a copy of /srv/population
            state["s3"] = fdl_in(env, "clone", root, "s3://open-data/population", "-q")
        if h.startswith("`fdl withdraw") and "withdraw" not in state:
            # main:8 is the version published by mistake, and main alone
            # holds it: the refs the sections above made on later versions
            # (which hold main:8's rows too) go, as the refusal tells a reader
            state["withdraw"] = True
            fdl_in(env, "branch", root, "--delete", "fixes")
            fdl_in(env, "tag", root, "--delete", "v2025")
        if h.startswith("`fdl sign") and "sign" not in state:
            # main is the one ref: verify --signatures wants a good signature
            # on what every branch and tag names, and the checkout example's
            # branch correction names an unsigned version (a problem, exit 5)
            state["sign"] = True
            fdl_in(env, "branch", root, "--delete", "correction")
        if h.startswith("`fdl sign"):
            s.fill["<id>"] = json.loads(fdl_in(env, "show", root, "main", "--json"))["id"]  # the one signed
        if h.startswith("`fdl clone") and "clone" not in state:
            # the clone's destination is an empty bucket (the copy above
            # holds the fdl.json of before the config examples)
            state["clone"] = True
            s3.empty("open-data")
            client.create_bucket(Bucket="open-data")
        if h.startswith("`fdl run") and "run" not in state:
            state["run"] = True  # the reader's census.csv, beside the build.py the section shows
            shutil.copy(ROOT / "examples" / "population-2025.csv", pathlib.Path(s.shell_env()["FDL_SNIPPET_PWD"],
                                                                               "census.csv"))
        if h == "Repositories on S3" and "r2" not in state:
            # the reader's publisher profile in ~/.aws (the S3 test server's
            # key), none in the shell; <account>'s endpoint is the server;
            # the bucket empty again (the clone above filled it) and the
            # working folder of the command section abandoned
            state["r2"] = True
            aws_dir = sb / "home" / ".aws"
            aws_dir.mkdir(exist_ok=True)
            (aws_dir / "credentials").write_text(f"[publisher]\naws_access_key_id = {s3.key_id}\n"
                                                 f"aws_secret_access_key = {s3.secret}\n")
            (aws_dir / "config").write_text("[profile publisher]\nregion = us-east-1\n")
            s.unset("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_CONFIG_FILE",
                    "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL", "AWS_REGION")
            s.fill["https://<account>.r2.cloudflarestorage.com"] = s3.endpoint
            s3.empty("open-data")
            client.create_bucket(Bucket="open-data")
            ledger.root("s3://open-data/population", aws(env))
            work = pathlib.Path(s.shell_env()["FDL_SNIPPET_PWD"], "work")
            if work.exists():
                fdl_in(env, "checkout", "--abandon", work)
        if h == "Teams" and "pg" not in state:
            # db.example.org is a PostgreSQL 15 of the test's own, where the
            # role pipeline may create databases; the reader's shell names
            # it the libpq way (createdb reads PGHOST, PGPORT, PGUSER)
            state["pg"] = pg = Postgres()
            pg.sql("CREATE ROLE pipeline LOGIN CREATEDB")
            s.export(PGHOST="127.0.0.1", PGPORT=str(pg.port), PGUSER="pipeline")
            s.fill["host=db.example.org"] = f"host=127.0.0.1 port={pg.port}"

    try:
        run_page("README.md", s, ledger, before, saves={"`fdl run": "build.py"})
    finally:
        ledger.gone(*withdrawn(root))
        if "pg" in state:
            state["pg"].stop()
    assert withdrawn(root), "README's withdraw example withdrew nothing"


def withdrawn(root):
    return [d.name for d in (root / "versions").iterdir() if (d / "expired.json").exists()
            and json.loads((d / "expired.json").read_text()).get("reason") == "withdrawn"]



def printed_blocks(text, start):
    """What fdl printed after `start` ("Read ... with:", "Attach it with:"),
    cut at each "# engine" / "-- engine" line into (engine, code)."""
    lines = text.split(start, 1)[1].splitlines()
    out, cur = [], None
    for line in lines:
        if not line.startswith("  "):
            break
        body = line[2:]
        m = re.match(r"(#|--) (\w+)", body)
        if m and not body.startswith(("#  ", "# org.", "  ")) and (cur is None or m.group(2) != cur[0]) \
                and m.group(2) in ("PySpark", "pyiceberg", "DuckDB", "Trino", "Snowflake"):
            cur = (m.group(2), [])
            out.append(cur)
        elif cur:
            cur[1].append(body)
    return [(engine, "\n".join(code) + "\n") for engine, code in out]


def test_iceberg(reader, ledger, s3_server, censuses):
    """docs/iceberg.md, then what fdl iceberg and fdl iceberg --catalog
    print, in the same Python (one JVM)."""
    s = reader
    env, sb = s.env, s.sandbox
    env.update(s3_server.env())
    s3_server.empty("open-data")  # test_readme may have published there on this server
    s3_server.client().create_bucket(Bucket="open-data")
    root = sb / "srv" / "population"
    history(censuses, root, 4, tag_at=3, geo=True)
    fdl_in(env, "init", "s3://open-data/population")
    ledger.root("s3://open-data/population", aws(env))
    for v in [publish(env, "s3://open-data/population", sb / "tmp" / "setup-s3", CENSUS.format(
            csv=ROOT / "examples" / "population-2024.csv"), "Census 2024")]:
        ledger.record("s3://open-data/population", v, aws(env))
    view = json.loads(fdl_in(env, "iceberg", root, "--json"))
    port = free_port()
    s.groups.append(serve(env, root, port).pid)
    lid = view["main.population"].split("/iceberg/")[1].split("/")[0]
    meta = view["main.population"]
    meta = json.loads(pathlib.Path(meta[len("file://"):] if meta.startswith("file://") else meta).read_text())
    s.fill.update({"<metadata.json URI>": view["main.population"], "<lid>": lid,
                   "<snapshot id>": str(meta["current-snapshot-id"]),
                   "<fdl's extension folder>": EXT, "http://host/population": f"http://127.0.0.1:{port}"})
    run_page("docs/iceberg.md", s, ledger)
    # what fdl prints for a user to paste, run as printed
    for args, start in (([root], "with:\n"), ([root, "--catalog"], "Attach it with:\n")):
        out = fdl_in(env, "iceberg", *args).replace("127.0.0.1:4001", f"127.0.0.1:{port}")
        cut = printed_blocks(out, start)
        assert [e for e, _ in cut][:3] == ["PySpark", "pyiceberg", "DuckDB"], out
        for engine, code in cut[:3]:
            b = Block(f"fdl iceberg {' '.join(map(str, args[1:]))} ({engine})", 0,
                      "sql" if engine == "DuckDB" else "python", {}, code, "", None)
            err = s.run(b, code, fresh=True)
            assert err is None, err


def test_integrations(reader, ledger):
    """docs/integrations.md: dbt and dlt through fdl run (deps/pipelines-venv),
    and main~1."""
    run_page("docs/integrations.md", reader, ledger)


def test_teams(reader, ledger, s3_server):
    """docs/teams.md: two publishers on one bucket, the loser's rebase."""
    s = reader
    env, sb = s.env, s.sandbox
    env.update(s3_server.env())
    s3_server.empty("data")  # test_readme may have published there on this server
    s3_server.client().create_bucket(Bucket="data")
    fdl_in(env, "init", "s3://data/pop")
    ledger.root("s3://data/pop", aws(env))
    v = publish(env, "s3://data/pop", sb / "tmp" / "setup", CENSUS.format(csv=ROOT / "examples" / "population-2024.csv"),
                "Census 2024")
    ledger.record("s3://data/pop", v, aws(env))
    run_page("docs/teams.md", s, ledger)


def test_web(reader, ledger, censuses):
    """docs/web.md: the page copied beside a repository; fdl still finds
    nothing amiss there (verify, which looks only at the layout's files)."""
    s = reader
    root = s.sandbox / "srv" / "population"
    history(censuses, root, 1)
    run_page("docs/web.md", s, ledger)
    assert (root / "index.html").is_file()
    fdl_in(s.env, "verify", root)


def test_architecture(reader):
    """docs/architecture.md: the greps that check the walls, run in the
    fdl folder, print nothing."""
    assert len(run_page("docs/architecture.md", reader)) == 3


def test_pyfdl(reader, ledger, censuses):
    """bindings/python/README.md: pyfdl as pip installs it (the package from
    bindings/python over this build's libfdl.so.2), on /srv/population with
    two versions, and the reader's census-2026.csv."""
    s = reader
    lib = ROOT / "build" / "libfdl.so.2"
    assert lib.exists(), f"{lib}: make build/libfdl.so first (make snippets does)"
    s.env.update(PYTHONPATH=str(ROOT / "bindings" / "python"), FDL_LIBRARY=str(lib))
    root = s.sandbox / "srv" / "population"
    history(censuses, root, 2)
    shutil.copy(ROOT / "examples" / "population-2025.csv", s.cwd / "census-2026.csv")
    run_page("bindings/python/README.md", s, ledger)
    log = fdl_in(s.env, "log", root, "--json").splitlines()
    assert len(log) == 3 and json.loads(log[0])["message"] == "census 2026", log
    ledger.record(str(root), json.loads(log[0])["id"])


def test_private(reader, ledger, censuses):
    """docs/private.md (issue 57): fdl serve with a token file and TLS (a CA
    the page makes), then what each reader types: fdl with FDL_TOKEN and the
    credentials file, DuckDB's command line after fdl attach, pyfdl with a
    token, curl through netrc, pyiceberg, Spark and DuckDB's iceberg through
    the catalog. The page's port 4443 is a free one."""
    s = reader
    env, sb = s.env, s.sandbox
    port = free_port()
    env["FDL_LIBRARY"] = str(ROOT / "build" / "libfdl.so.2")  # pyfdl as pip installs it beside its libfdl
    env["PYTHONPATH"] = str(ROOT / "bindings" / "python")
    s.fill.update({"127.0.0.1:4443": f"127.0.0.1:{port}", "--port 4443": f"--port {port}",
                   "<fdl's extension folder>": EXT})
    root = sb / "srv" / "population"
    history(censuses, root, 2)
    cat = json.loads(fdl_in(env, "iceberg", root, "--catalog", "--json"))
    s.fill["<lid>"] = cat["path"].split("/")[1]
    run_page("docs/private.md", s, ledger)


# ---- every page is covered ---------------------------------------------------------------------------

# The test that runs each page holding a block that runs.
PAGE_TESTS = {"README.md": test_readme, "docs/iceberg.md": test_iceberg, "docs/integrations.md": test_integrations,
              "docs/teams.md": test_teams, "docs/web.md": test_web, "docs/architecture.md": test_architecture,
              "bindings/python/README.md": test_pyfdl, "docs/private.md": test_private}


def doc_pages():
    return ["README.md", "bindings/python/README.md"] + sorted(str(p.relative_to(ROOT)) for p in
                                                                (ROOT / "docs").glob("*.md"))


def test_every_page_covered():
    """A page added with a block that runs, and no test here running it,
    fails: so does a fence that names no language (is it a command or an
    output?), one in a language this file neither runs nor shows, and a
    no-run without its reason."""
    problems = []
    for page in doc_pages():
        bs = blocks(page)
        for b in bs:
            if b.lang not in RUN_LANGS | SHOWN_LANGS:
                problems.append(f"{b.where}: ```{b.lang}: a fence names its language: sh, python or sql (run), "
                                f"text, json or yaml (shown)")
            for k, v in b.attrs.items():
                if k not in ("no-run", "prints") or not v or (k == "prints" and v != "nothing"):
                    problems.append(f"{b.where}: {{{k}: {v}}}: the attributes are {{no-run: why}} and "
                                    f"{{prints: nothing}}")
        runs = [b for b in bs if b.runs]
        if runs and page not in PAGE_TESTS:
            problems.append(f"{page}: {len(runs)} blocks run (the first at line {runs[0].line}) and no test "
                            f"of test_snippets.py runs the page: add one and name it in PAGE_TESTS")
    for page, test in PAGE_TESTS.items():
        if f'"{page}"' not in inspect.getsource(test):
            problems.append(f"PAGE_TESTS: {test.__name__} does not run {page}")
    assert not problems, "\n".join(problems)
