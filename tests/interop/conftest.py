"""Interop tests: the real fdl binary against stock DuckDB 1.5.5 + ducklake.

Environment (set by `make interop`):
  FDL_BIN            the fdl binary under test (default: build/fdl)
  FDL_EXTENSION_DIR  where the pinned DuckDB extensions live (deps/extensions)
"""
import collections
import json
import os
import pathlib
import resource
import subprocess
import time

import duckdb
import pytest

import ledger as ledger_mod
from ledger import host_serves, host_stops  # noqa: F401 (for the test files)

ROOT = pathlib.Path(__file__).resolve().parents[2]
FDL = os.environ.get("FDL_BIN", str(ROOT / "build" / "fdl"))
EXT = os.environ.get("FDL_EXTENSION_DIR", str(ROOT / "deps" / "extensions"))
# the ledger prints its ATTACH with the release build when there is one (it
# starts faster than the sanitizer build; the SQL is the same)
LEDGER_FDL = str(ROOT / "build" / "fdl") if (ROOT / "build" / "fdl").exists() else FDL
# The sanitizer build's checks, at less cost (docs/decisions.md, "The interop
# tests' ASAN_OPTIONS"): leaks are checked at every exit, as by default; a
# freed block stays poisoned until 16 MiB more are freed (256 by default; a
# checkout frees about 42 MiB in all), and a report shows 10 frames of where
# a block was allocated and freed (30 by default). Every process a test
# starts inherits it; one set outside the tests wins.
os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=1:quarantine_size_mb=16:malloc_context_size=10")


def release_bin():
    """The release build that builds scenes (fdl_setup): FDL_RELEASE_BIN, or
    build/fdl beside FDL_BIN's build/san/fdl, or this tree's build/fdl. A
    test that needs it and finds none fails saying so (`make` builds it)."""
    named, fdl_bin = os.environ.get("FDL_RELEASE_BIN"), pathlib.Path(FDL)
    if named:
        found = pathlib.Path(named)
    elif fdl_bin.parent.name == "san" and (fdl_bin.parent.parent / "fdl").is_file():
        found = fdl_bin.parent.parent / "fdl"
    else:
        found = ROOT / "build" / "fdl"
    if not (found.is_file() and os.access(found, os.X_OK)):
        pytest.fail(f"no release build of fdl for the tests' set-up at {found} (run `make`, or set FDL_RELEASE_BIN)")
    return str(found)


def fdl(*args, check=True, env=None, timeout=None):
    """Run fdl (FDL_BIN, the build under test); with check, a non-zero exit
    fails the test with its stderr. timeout (seconds) is a safety net for
    tests of things that must not hang: running past it fails the test,
    nothing else is timed."""
    return _run(FDL, args, check, env, timeout)


def fdl_setup(*args, check=True, env=None, timeout=None):
    """fdl() with the release build (release_bin): for building a test's
    scene (the versions, branches, checkouts it starts from), never for the
    step the test is about, which runs FDL_BIN (tests/README.md, "Shared setups": Scenes).
    What it publishes is recorded by the ledger as fdl() does."""
    return _run(release_bin(), args, check, env, timeout)


def _run(binary, args, check, env, timeout):
    e = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Test", FDL_AUTHOR_EMAIL="t@example.org")
    named = {"FDL_CACHE_DIR", "XDG_CACHE_HOME"} & (set(os.environ) | set(env or {})) or "HOME" in (env or {})
    if READ_CACHE[0] and not named:
        e["FDL_CACHE_DIR"] = READ_CACHE[0]  # the test's own read cache (read_cache below)
    if env:
        e.update(env)
    p = subprocess.run([binary, *map(str, args)], capture_output=True, text=True, env=e, timeout=timeout)
    if ledger_mod.CURRENT[0] is not None:
        ledger_mod.CURRENT[0].after([str(a) for a in args], env, p)
    if check and p.returncode != 0:
        raise AssertionError(f"fdl {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
    return p


class Serving:
    """An `fdl serve ROOT --port 0 ARGS...` a test runs (test_reader's
    Server, test_private's Private): start() returns the line it prints
    first; its stderr goes to a log file of its own, whose request lines
    lines() reads back; stop() ends it, telling the ledger the host is gone
    (host_stops) first."""

    def start(self, root, tmp, *args):
        self.log_path = tmp / f"serve-{time.monotonic_ns()}.log"
        self.log = open(self.log_path, "w")
        self.p = subprocess.Popen([FDL, "serve", str(root), "--port", "0", *map(str, args)], stdout=subprocess.PIPE,
                                  stderr=self.log, text=True, env=dict(os.environ, FDL_EXTENSION_DIR=EXT))
        return self.p.stdout.readline()

    def lines(self):
        self.log.flush()
        return [l for l in self.log_path.read_text().splitlines() if l.startswith("fdl serve:")]

    def stop(self):
        host_stops(self.url)
        self.p.terminate()
        self.p.wait(timeout=10)
        self.log.close()


def connect():
    """A stock DuckDB connection that loads the pinned extensions offline
    (ledger.stock_config: as fdl loads them, without hashing each again)."""
    return duckdb.connect(config=ledger_mod.stock_config(EXT))


def rows(con, table):
    return con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()


def tables(con, catalog="lake"):
    return sorted(r[0] for r in con.execute(
        "SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE database_name = ?",
        [catalog]).fetchall())


def read_json(path):
    return json.loads(pathlib.Path(path).read_text())


class Repo:
    """A repository in a temp folder plus helpers to work on it."""

    env = {}  # what fdl needs beyond the defaults (S3Repo: the AWS variables)

    def __init__(self, tmp, setup=False):
        """With setup, the release build's init (fdl_setup): the repository
        is the test's scene, its init not what the test checks."""
        self.root = tmp / "repo"
        (fdl_setup if setup else fdl)("init", self.root)

    def checkout(self, work, *extra, setup=False):
        """Check out and return a DuckDB connection writing to the working catalog,
        using exactly the ATTACH that `fdl checkout` printed (with setup, the
        release build's: the checkout is the scene, not what is tested)."""
        p = (fdl_setup if setup else fdl)("checkout", self.root, work, *extra)
        con = connect()
        con.execute(p.stdout)
        return con

    def head(self, branch="main"):
        return (self.root / "refs" / "heads" / branch).read_text().strip()

    def version(self, vid):
        return read_json(self.root / "versions" / vid / "version.json")

    def open_version(self, ref, setup=False):
        """Attach a version in a fresh stock DuckDB through `fdl attach` (with
        setup, the release build's: the reader is stock DuckDB, an oracle of
        a test about something else; `fdl attach` is the subject elsewhere)."""
        con = connect()
        con.execute((fdl_setup if setup else fdl)("attach", self.root, ref).stdout)
        return con


def commits(repo, work, *steps, close=True, setup=False):
    """The setup most modules start from: check `work` out of `repo` and
    publish one version per step, a step being (message, SQL statements run
    in stock DuckDB through the ATTACH checkout printed). Returns the ids of
    the new versions, oldest first, and the connection to the working
    catalog (closed unless close=False). Works on Repo and S3Repo. With
    setup, checkout and commits run the release build (fdl_setup): the
    versions are the test's scene, not what it tests."""
    con = repo.checkout(work, setup=setup)
    ids = []
    for message, statements in steps:
        for sql in statements:
            con.execute(sql)
        (fdl_setup if setup else fdl)("commit", work, "-m", message, env=repo.env)
        ids.append(repo.head())
    if close:
        con.close()
    return ids, con


READ_CACHE = [None]


@pytest.fixture(autouse=True)
def read_cache(tmp_path_factory):
    """Each test's own read cache for the fdl it runs (unless the test names
    one, or a HOME or XDG_CACHE_HOME of its own): the session's histories
    and published setups are copies, the same catalogs and files in many
    tests, and one test's cached catalog must not answer for another's host."""
    READ_CACHE[0] = str(tmp_path_factory.mktemp("read-cache"))
    yield READ_CACHE[0]
    READ_CACHE[0] = None


@pytest.fixture(autouse=True)
def ledger(request):
    """Every test's ledger (tests/interop/ledger.py says what it does and
    what a test must tell it): the checksums of every version the test
    published, taken at publish time and compared again at its end. Its
    reading time goes into the test-time report (user property ledger)."""
    led = ledger_mod.Ledger(LEDGER_FDL, EXT)
    ledger_mod.CURRENT[0] = led
    yield led
    ledger_mod.CURRENT[0] = None
    try:
        problems = led.problems() + led.sweep()
    finally:
        led.close()
        request.node.user_properties.append(("ledger", (led.seconds, led.reads, led.unread, led.attach_kept)))
    assert not problems, "the ledger:\n" + "\n".join(problems)


@pytest.fixture
def repo(tmp_path):
    return Repo(tmp_path)


@pytest.fixture(scope="session")
def histories(tmp_path_factory):
    """Histories of N versions of one table, built once for the session
    (all workers) and copied into each test: histories.copy(n, root)."""
    from histories import Histories
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # one cache for every worker of the run
    return Histories(shared / "histories", LEDGER_FDL, LEDGER_FDL, EXT)  # the release build, when there is one


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the whole session on this worker
    (web/test/browser.mjs), started when a test first asks for it: the
    page's tests (e2e.mjs, nojs.mjs) connect to it (FDL_TEST_BROWSER) and
    each run opens its own browser context (no cookies, storage or cache
    shared with another run)."""
    proc = subprocess.Popen(["node", str(ROOT / "web" / "test" / "browser.mjs")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT / "web")
    endpoint = proc.stdout.readline().strip()
    assert endpoint.startswith("ws://"), f"web/test/browser.mjs printed {endpoint!r} (exit {proc.poll()})"
    try:
        yield endpoint
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.fixture
def browser(chromium, monkeypatch):
    """The session's Chromium for what this test runs: FDL_TEST_BROWSER set."""
    monkeypatch.setenv("FDL_TEST_BROWSER", chromium)
    return chromium


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """One S3 server (moto, signatures checked) for the whole session."""
    from s3server import S3Server
    server = S3Server(tmp_path_factory.mktemp("s3") / "moto.log")
    yield server
    server.stop()


class S3Repo:
    """A repository in a fresh bucket of the test S3 server."""

    counter = 0

    def __init__(self, server, tmp, endpoint=None, init=True):
        S3Repo.counter += 1
        self.server = server
        self.bucket = f"fdl-test-{os.getpid()}-{S3Repo.counter}"
        server.client().create_bucket(Bucket=self.bucket)
        self.root = f"s3://{self.bucket}/datasets/pop"
        self.tmp = tmp
        self.env = dict(server.env(endpoint), FDL_CACHE_DIR=str(tmp / "cache"))
        if init:
            self.fdl("init", self.root)

    def fdl(self, *args, check=True, env=None):
        return fdl(*args, check=check, env=dict(self.env, **(env or {})))

    def setup(self, *args, check=True, env=None):
        """self.fdl with the release build (fdl_setup): scene building."""
        return fdl_setup(*args, check=check, env=dict(self.env, **(env or {})))

    def connect(self, sql):
        """Stock DuckDB running SQL that fdl printed (it carries the secret)."""
        con = connect()
        con.execute(sql)
        return con

    def checkout(self, work, *extra, setup=False):
        return self.connect((self.setup if setup else self.fdl)("checkout", self.root, work, *extra).stdout)

    def keys(self, prefix="datasets/pop/"):
        return self.server.keys(self.bucket, prefix)

    def get(self, key):
        return self.server.client().get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def head(self, branch="main"):
        return self.get(f"datasets/pop/refs/heads/{branch}").decode().strip()

    def version(self, vid):
        return json.loads(self.get(f"datasets/pop/versions/{vid}/version.json"))

    def open_version(self, ref):
        return self.connect(self.fdl("attach", self.root, ref).stdout)


@pytest.fixture
def s3repo(s3_server, tmp_path):
    return S3Repo(s3_server, tmp_path)


JARS = ROOT / "deps" / "jars"
# every jar a module's Spark needs, given at the JVM's start (jars given to a
# later session in the same JVM are not seen by Hadoop's file systems)
SPARK_JARS = ["iceberg-spark-runtime-4.0_2.13-1.10.0.jar", "iceberg-aws-bundle-1.10.0.jar", "sqlite-jdbc-3.54.1.0.jar",
              # s3a:// (test_add): Hadoop's S3A on the Iceberg bundle's AWS SDK v2
              "hadoop-aws-3.4.1.jar", "s3-transfer-manager-2.33.0.jar"]


@pytest.fixture(scope="session")
def spark(s3_server, tmp_path_factory):
    """One PySpark 4.0.1 session (local[1], Iceberg 1.10.0) and so one JVM per
    worker for the whole run, shared by every module that reads or writes
    with Spark (its start costs 20-40 s; PySpark keeps one JVM a process).
    Catalog `cat`: a JdbcCatalog on SQLite whose files resolve by scheme
    (file:// through Hadoop, s3:// to the S3 test server); s3a:// (Hadoop's
    S3A) reaches the same server. A module needing another catalog sets it
    under a name of its own with spark.conf.set (test_iceberg's
    CatalogClients)."""
    from pyspark.sql import SparkSession
    for j in SPARK_JARS:
        assert (JARS / j).is_file(), f"{JARS / j} missing: run scripts/setup.sh"
    tmp = tmp_path_factory.mktemp("spark")
    env = s3_server.env()
    cat = {"": "org.apache.iceberg.spark.SparkCatalog", ".catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
           ".uri": f"jdbc:sqlite:{tmp / 'catalog.sqlite'}", ".warehouse": f"file://{tmp / 'warehouse'}",
           ".io-impl": "org.apache.iceberg.io.ResolvingFileIO", ".s3.endpoint": env["AWS_ENDPOINT_URL"],
           ".s3.path-style-access": "true", ".s3.access-key-id": env["AWS_ACCESS_KEY_ID"],
           ".s3.secret-access-key": env["AWS_SECRET_ACCESS_KEY"], ".client.region": "us-east-1"}
    builder = (SparkSession.builder.master("local[1]").appName("fdl-interop")
               .config("spark.jars", ",".join(str(JARS / j) for j in SPARK_JARS))
               .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "1")
               .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC"))
    for k, v in cat.items():
        builder = builder.config(f"spark.sql.catalog.cat{k}", v)
    s = builder.getOrCreate()
    for k, v in {"endpoint": env["AWS_ENDPOINT_URL"], "path.style.access": "true",
                 "access.key": env["AWS_ACCESS_KEY_ID"], "secret.key": env["AWS_SECRET_ACCESS_KEY"],
                 "endpoint.region": "us-east-1", "connection.ssl.enabled": "false"}.items():
        s._jsc.hadoopConfiguration().set(f"fs.s3a.{k}", v)
    s.sql("CREATE NAMESPACE IF NOT EXISTS cat.fdl")
    yield s
    s.stop()


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: -p no:xdist runs without it
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, longest file first (schedule.py)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from schedule import LongestFileFirst
    return LongestFileFirst(config, log)


def pytest_configure(config):
    config.addinivalue_line("markers", "quick: one test of a behaviour family, run by `make check` (tests/README.md)")


def cpu_seconds():
    """CPU time of this process and of every child it has waited for (and
    theirs), user and system: what a test costs the machine, whatever ran
    beside it. A child never reaped (a browser's renderer) is not in it."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[CPU_AT_SETUP] = cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """The last test of a worker also tears down the session's fixtures (an
    S3 server that served every test before it): that CPU is counted apart."""
    before = cpu_seconds()
    yield
    if nextitem is None:
        item.stash[CPU_OF_SESSION] = cpu_seconds() - before


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "teardown" and CPU_AT_SETUP in item.stash:
        session = item.stash.get(CPU_OF_SESSION, 0.0)
        outcome.get_result().user_properties.append(("cpu", (cpu_seconds() - item.stash[CPU_AT_SETUP] - session,
                                                             session)))


CPU_AT_SETUP, CPU_OF_SESSION = pytest.StashKey[float](), pytest.StashKey[float]()


def pytest_terminal_summary(terminalreporter):
    """The test-time report after every run: the slowest 10 files and tests
    (setup, call and teardown together; a module's shared fixtures count in
    the test that set them up), so a slow test shows itself when it lands."""
    per_test, ledger_secs, ledger_reads = collections.Counter(), collections.Counter(), [0, 0, 0]
    cpu, session_cpu = collections.Counter(), 0.0
    for reports in terminalreporter.stats.values():
        for r in reports:
            if isinstance(r, pytest.TestReport):
                per_test[r.nodeid] += r.duration
                for name, value in r.user_properties if r.when == "teardown" else ():
                    if name == "cpu":
                        cpu[r.nodeid.split("::")[0]] += value[0]
                        session_cpu += value[1]
                    if name == "ledger":
                        ledger_secs[r.nodeid.split("::")[0]] += value[0]
                        ledger_reads[0] += value[1]
                        ledger_reads[1] += value[2]
                        ledger_reads[2] += value[3] if len(value) > 3 else 0
    if not per_test:
        return
    per_file, count = collections.Counter(), collections.Counter()
    for nodeid, secs in per_test.items():
        per_file[nodeid.split("::")[0]] += secs
        count[nodeid.split("::")[0]] += 1
    write = terminalreporter.write_line
    terminalreporter.section("test times (workers together)")
    write(f"slowest files of {len(per_file)} (wall time; CPU time of the worker and the processes it waited for):")
    for f, secs in per_file.most_common(10):
        write(f"{secs:8.1f} s {cpu[f]:8.1f} s CPU {count[f]:4d} tests  {f}")
    write(f"slowest tests of {len(per_test)}:")
    for t, secs in per_test.most_common(10):
        write(f"{secs:8.1f} s  {t}")
    write(f"{sum(per_test.values()):8.1f} s  in all ({sum(cpu.values()):.1f} s of CPU, and {session_cpu:.1f} s in the "
          "session's shared fixtures as each worker tore them down: its S3 server, its Spark)")
    write(f"{sum(ledger_secs.values()):8.1f} s  of it the ledger's ({ledger_reads[0]} versions read, {ledger_reads[1]} "
          f"of them over files unchanged since DuckDB read them, {ledger_reads[2]} with fdl attach's "
          f"answer kept); most in:")
    for f, secs in ledger_secs.most_common(5):
        write(f"{secs:8.1f} s  {f}")
    write("files by CPU time:")
    for f, secs in cpu.most_common(10):
        write(f"{secs:8.1f} s CPU {per_file[f]:8.1f} s  {f}")
