"""The ledger: a version answers forever what it held.

Every interop test has one (the autouse fixture `ledger` in conftest.py). When
a test publishes a version through `conftest.fdl` (`fdl commit`, `fdl run`),
the ledger takes each of the version's tables' checksums with stock DuckDB
right then (through `fdl attach`: row count, the sum of the rows' hashes, and
min/max of every column as DuckDB answers them, statistics included). At the
end of the test it reads every recorded version again, through every reader
the test touched, and compares, the way SQLite runs `PRAGMA integrity_check`
after each injected fault. `fdl attach` runs for every read of a version
(on a folder, unless it ran for that version in this test and nothing it
reads changed since: the version's folder and fdl.json by lstat, each data
file still a plain file at its path; FDL_LEDGER_MEMO=0 runs it each time,
test_ledger.py shows a withdrawn version and a symlinked data file seen);
stock DuckDB is spared a read only when the same ATTACH would read the same bytes it
already read in this test (every file it read: the catalog, each table's
data and delete files, by sha256): the same bytes answer the same
(FDL_LEDGER_MEMO=0 reads them all again; test_ledger.py shows a changed
file read again and reported). Through a plain static host serving a folder
of this machine (`host_serves`), each URL DuckDB read is mapped to the file
behind it, and a read answers for every later test of the process (the same
history served by hosts in many tests is read through a host once).

What a test must tell the ledger, because it cannot see it:
- `ledger.published(stdout)` or `ledger.record(root, vid, env=None)`: a
  version published by a process the test started itself (Popen, a worker
  script). Folder repositories are swept
  at the end: a version on a branch's history that was never recorded fails
  the test, so none is forgotten.
- `host_serves(url, folder)`: a plain static host the test started serves
  a folder of this machine (the test hosts call it; never fdl serve).
- `ledger.reader(root, env=None)`: another place the same versions are read
  from (an `http://` host, a bucket under another endpoint). Clone
  destinations and every `http(s)://` root given to attach/query/export/
  verify/clone are added by themselves (log and show read no table, so a
  host they alone touched is not re-read). A reader that a fixture stops (a server)
  must be checked before it stops: `ledger.check()` in its teardown.
- `ledger.gone(*vids)`: the test expired or withdrew these on purpose; they
  must then answer "expired or withdrawn" (exit 7), not other rows.
- `with ledger.deferred():` around a publish whose requests the test counts
  (the ledger's own reads come after the block).
- `ledger.adopt(root, sums)`: versions copied in with their checksums
  (the session's histories, histories.py); read again like the others.
- `ledger.forget(*vids)`: the test took these away on purpose (restored a
  repository from a copy made before them).
- `ledger.waive(root_or_vid, reason)`: the test damages a repository or a
  version on purpose (verify's and the hostile tests); the reason is kept.

Roots come from `fdl init` and `fdl clone` (with the env of that call); a
commit's new version is found in whichever known root holds it.
"""
import concurrent.futures
import contextlib
import functools
import hashlib
import json
import os
import pathlib
import re
import stat
import subprocess
import threading
import time
import urllib.parse

import duckdb

UUID = re.compile(r"\b([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\b")
PUBLISH = {"commit", "run"}
READS = {"attach", "query", "export", "verify"}  # commands that read tables (log and show read none)
CURRENT = [None]  # the ledger of the test running in this process (set by the fixture)
# the reads of a check of at least PARALLEL_FROM reads go READERS at once:
# each is mostly waiting on `fdl attach`, on DuckDB opening the version's
# catalog and, through a host, on the host's answers, so four overlap, each
# DuckDB with one thread (THREADS; issue 55). Each reading thread has a
# DuckDB of its own (DuckLake attached in two cursors of one database at
# once loses track of its metadata catalog: "Catalog
# __ducklake_metadata_... does not exist").
READERS = int(os.environ.get("FDL_LEDGER_READERS", "4"))
PARALLEL_FROM = 6
# FDL_LEDGER_MEMO=0: stock DuckDB reads every time, even over unchanged files
# (to measure what the memo saves; the checks are the same)
MEMO = os.environ.get("FDL_LEDGER_MEMO", "1") != "0"
ROOT = "\0root"  # a root's own path (a host's URL) in the memo's keys and file names
# reads through a host serving a folder of this machine (host_serves): ATTACH
# printed (the host's URL as ROOT) -> as Ledger.memo, for every test of this
# process (a module's tests serve copies of the same histories)
SHARED = {}
# stock DuckDB's threads for a read of a folder root and of a host (issue 55,
# FDL_LEDGER_THREADS=LOCAL,HOST): one. With two, a scan's second thread spins
# on a lock while the first opens the next file (a quarter of the tests'
# Python CPU); more READERS overlap a check's reads instead.
THREADS = dict(zip((False, True), map(int, os.environ.get("FDL_LEDGER_THREADS", "1,1").split(","))))
# stock DuckDB's wait before retrying an HTTP request, in ms, for the ledger's
# reads through a plain static host the test started (host_serves, Python's
# http.server), and DuckDB's own default (100) for every other read. That host
# ignores Range and answers 200 with the whole file; DuckDB takes that for a
# failure, tries the ranged GET again 100 ms later and again 400 ms after
# that, then GETs the whole file: half a second a file, 36 of test_iceberg's
# static-host test's 52 s in CI (issue 55). The same three tries, the same
# whole-file GET, the same bytes compared; only the waits between are short.
# FDL_LEDGER_HOST_RETRY_MS=100 measures the old wait.
HOST_RETRY_MS = int(os.environ.get("FDL_LEDGER_HOST_RETRY_MS", "5"))


class Ledger:
    def __init__(self, fdl_bin, ext):
        self.fdl_bin, self.ext = fdl_bin, ext
        self.roots = {}     # root -> env, in the order they were learnt
        self.entries = {}   # vid -> (root, sums)
        self.gone_ids = set()
        self.lifecycle = False  # the test ran expire or withdraw
        self.waived = {}    # root or vid -> reason
        self.local = threading.local()  # each thread's DuckDB (the test's, and READERS)
        self.cons = []
        self.pool = None    # READERS threads, made for the first check of PARALLEL_FROM reads or more
        self.queue = None   # publishes waiting for the end of a deferred() block
        self.seconds = 0.0  # wall time spent reading (at publish and in checks), for the test-time report
        self.reads = 0      # versions read (fdl attach and stock DuckDB)
        # ATTACH printed -> (sums, files read, their sizes and sha256): a read
        # of the same ATTACH over the same bytes answers the same (_sums)
        self.memo = {}
        self.unread = 0     # reads so answered (fdl attach ran, DuckDB did not)
        # (real root, vid, env) -> (attach_state, fdl attach's answer): _attach_once
        self.attached = {}
        self.attach_kept = 0  # reads whose fdl attach answer was kept (_attach_once)
        self.serving = {}   # URL of a host the test started -> the folder it serves (host_serves)
        self.count_lock = threading.Lock()

    # --- what tests and conftest.fdl tell the ledger --------------------------
    def root(self, root, env=None):
        self.roots.setdefault(str(root), dict(env or {}))

    def reader(self, root, env=None):
        self.root(root, env)

    def gone(self, *vids):
        self.gone_ids.update(vids)

    def adopt(self, root, sums, memo=None):
        """Versions the test did not publish but copied in (a session's
        history, histories.py), with the checksums stock DuckDB took when
        they were published: read again through `root` at the end, stock
        DuckDB sparing the read where every file it read then (`memo`, the
        publishing ledger's) has the same bytes in the copy."""
        self.root(root)
        self.memo.update(memo or {})
        for vid, s in sums.items():
            self.entries[vid] = (str(root), s)

    def forget(self, *vids):
        """The test took these versions away on purpose (it restores a
        repository from a copy made before they were published)."""
        for vid in vids:
            self.entries.pop(vid, None)

    @contextlib.contextmanager
    def deferred(self):
        """Publishes inside the block are recorded when it ends, so that the
        ledger's own reads do not count among requests the test counts."""
        self.queue = []
        try:
            yield
        finally:
            queue, self.queue = self.queue, None
            for stdout, env in queue:
                self.published(stdout, env)

    def waive(self, what, reason):
        assert reason, "say why the ledger is waived"
        self.waived[str(what)] = reason

    def record(self, root, vid, env=None):
        root = str(root)
        self.root(root, env)
        if vid not in self.entries:
            start = time.monotonic()
            sums = self._sums(root, vid, dict(self.roots[root], **(env or {})))
            self.seconds += time.monotonic() - start
            self.reads += 1
            if isinstance(sums, str) and (root in self.waived or vid in self.waived):
                return  # forged on purpose (verify's tests): nothing to compare later
            if isinstance(sums, str):
                raise AssertionError(f"ledger: {root}: version {vid} cannot be read as it is published: {sums}")
            self.entries[vid] = (root, sums)

    def published(self, stdout, env=None):
        """Record the versions a publish printed (a commit the test ran
        itself, not through conftest.fdl)."""
        ids = published_ids(stdout)
        assert ids, f"ledger: no published version id in {stdout!r}"
        for vid in ids:
            self.record(self._holder(vid, env), vid, env)
        return ids

    def after(self, args, env, proc):
        """Called by conftest.fdl after each command: learn roots and readers,
        record what a successful publish printed."""
        if not args or proc.returncode != 0:
            return
        cmd, rest = args[0], [a for a in args[1:] if not a.startswith("-")]
        if cmd == "init" and rest:
            self.root(rest[0], env)
        elif cmd == "clone" and len(rest) >= 2:
            self.root(rest[0].split("@")[0], env)
            self.root(rest[1], env)
        elif cmd in READS and rest and re.match(r"https?://", rest[0]):
            self.root(rest[0].split("@")[0], env)
        elif cmd in ("expire", "withdraw") and "--dry-run" not in args:
            self.lifecycle = True
        elif cmd in PUBLISH and "--dry-run" not in args:
            if cmd == "run" and rest:
                self.root(rest[0], env)
            if published_ids(proc.stdout) and self.queue is not None:
                self.queue.append((proc.stdout, env))
            elif published_ids(proc.stdout):
                self.published(proc.stdout, env)

    def _holder(self, vid, env):
        for root, renv in self.roots.items():
            if re.match(r"[a-z0-9]+://", root):
                if root.startswith("s3://") and self._attach(root, vid, dict(renv, **(env or {}))).returncode == 0:
                    return root
            elif (pathlib.Path(root) / "versions" / vid / "version.json").is_file():
                return root
        raise AssertionError(f"ledger: version {vid} was published, but no known root holds it "
                             f"(known: {list(self.roots)}); call ledger.record(root, vid)")

    # --- checksums with stock DuckDB ------------------------------------------
    def _attach(self, root, vid, env):
        e = dict(os.environ, FDL_EXTENSION_DIR=self.ext, **env)
        # --show-token: a private host's token in the SQL this process runs (not getenv, which only
        # DuckDB's command line has)
        return subprocess.run([self.fdl_bin, "attach", root, vid, "--as", "ledger", "--show-token"], capture_output=True,
                              text=True, env=e)

    def _attach_once(self, root, vid, env):
        """`fdl attach` for the version, or, for a folder root, its answer
        when it last ran in this test with the same env, if nothing it reads
        changed since: the version's folder and fdl.json (attach_state), and
        each data and delete file stock DuckDB read through that answer
        still a file of that path, no symlink on the way (fdl's check of
        what a catalog names; their bytes are the memo of reads' to check).
        FDL_LEDGER_MEMO=0 runs it every time."""
        if re.match(r"[a-z0-9]+://", root) or not MEMO:
            return self._attach(root, vid, env)
        here = os.path.realpath(root)
        key = (here, vid, tuple(sorted((env or {}).items())))
        had = self.attached.get(key)
        if had is not None and attach_state(here, vid) == had[0] and self._files_plain(had[1], here):
            with self.count_lock:
                self.attach_kept += 1
            return had[1]
        before = attach_state(here, vid)
        p = self._attach(root, vid, env)
        if p.returncode == 0 and attach_state(here, vid) == before:  # nothing moved while it ran
            self.attached[key] = (before, p)
        return p

    def _files_plain(self, p, here):
        """Each file stock DuckDB read through the ATTACH `p` printed (the
        memo of reads; none before it read) is a regular file whose path
        has no symlink."""
        memo = self.memo.get(p.stdout.replace(here, ROOT))
        for f in (f.replace(ROOT, here) for f in memo[1]) if memo else ():
            if f.endswith(".wal") and not os.path.lexists(f):
                continue  # the WAL the memo lists in case one appears
            try:
                if not stat.S_ISREG(os.lstat(f).st_mode) or os.path.realpath(f) != f:
                    return False
            except OSError:
                return False
        return True

    def _connect(self):
        con = duckdb.connect(config=stock_config(self.ext))
        con.execute("SET enable_external_file_cache = false")  # every read goes to the store
        return con

    def _connection(self):
        """This thread's DuckDB, made when first needed."""
        con = getattr(self.local, "con", None)
        if con is None:
            con = self.local.con = self._connect()
            self.cons.append(con)
        return con

    def _sums(self, root, vid, env, known=None):
        """The version's table sums, or a string saying why it cannot be read.
        `fdl attach` runs every time; stock DuckDB reads unless `known` (the
        sums recorded) is what it answered to the same ATTACH over the same
        bytes of every file it read (ledger.files_read), in this test or,
        for adopted versions, when the session's history published them
        (the root's own path aside: a copy's ATTACH names its own), or, for
        a host serving a folder of this machine (host_serves), in any test
        of this process (SHARED: the host's URL aside)."""
        p = self._attach_once(root, vid, env)
        if p.returncode != 0:
            return f"fdl attach exited {p.returncode}: {p.stderr.strip()}"
        host = re.match(r"[a-z0-9]+://", root) is not None
        here = root.rstrip("/") if host else os.path.realpath(root)
        local = self._served(here) if host else (lambda f: f if os.path.isabs(f) else None)
        key = p.stdout.replace(here, ROOT) if local else p.stdout
        memos = (self.memo, SHARED) if host else (self.memo,)
        memo = next((m[key] for m in memos if key in m), None)
        if (MEMO and known is not None and local and memo and memo[0] == known and
                fingerprint(local(f.replace(ROOT, here)) for f in memo[1]) == memo[2]):
            with self.count_lock:
                self.unread += 1
            return memo[0]
        con = self._connection()
        try:
            con.execute(f"SET threads = {THREADS[host]}")
            con.execute(f"SET http_retry_wait_ms = {HOST_RETRY_MS if host and local else 100}")
            con.execute(p.stdout)
            # one read-only transaction: DuckLake reads the version's
            # metadata once for all the statements below, not once each
            # (the same answers: the catalog does not change under it)
            con.execute("BEGIN TRANSACTION")
            files = files_read(con, "ledger", local) if local else None
            before = fingerprint(local(f) for f in files) if files else None
            sums = table_sums(con, "ledger")
            if files and fingerprint(local(f) for f in files) == before:  # no file changed while DuckDB read
                memos[-1][key] = (sums, tuple(f.replace(here, ROOT) for f in files), before)
            return sums
        except duckdb.Error as e:
            return f"stock DuckDB: {e}"
        except StatsDisagree as e:
            return f"stock DuckDB's statistics answer other than the rows: {e}"
        finally:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass  # no transaction open (the ATTACH failed)
            try:
                con.execute("DETACH DATABASE IF EXISTS ledger")
            except duckdb.Error:
                pass

    def _served(self, url):
        """For a host serving a folder of this machine (host_serves): the
        file behind each of its URLs (None for one outside the folder)."""
        url, folder = next(((u, f) for u, f in self.serving.items() if url == u or url.startswith(u + "/")),
                           (None, None))
        if folder is None:
            return None

        def local(name):
            if not name.startswith(url + "/"):
                return None
            rel = urllib.parse.unquote(name[len(url) + 1:].split("?")[0])
            path = os.path.realpath(os.path.join(folder, rel))
            return path if path.startswith(folder + os.sep) else None
        return local

    # --- the check --------------------------------------------------------------
    def closing(self, where):
        """A host or proxy the test started stops: read every recorded version
        through each root it serves (its URL starts the root, or it is the
        root's endpoint) now, then forget those roots."""
        where = str(where).rstrip("/")
        served = [r for r, env in self.roots.items() if r.startswith(where) or where in env.values()]
        problems = self.problems(only=served)
        for r in served:
            del self.roots[r]
        for url in [u for u in self.serving if u.startswith(where)]:
            del self.serving[url]
        assert not problems, "the ledger, before " + where + " stops:\n" + "\n".join(problems)

    def problems(self, only=None, vids=None):
        """What differs now (roots: `only`, default all; versions: `vids`,
        default every recorded one), as a list of sentences, in the order
        of the versions and roots (READERS read at once)."""
        checks = []
        for vid, (home, sums) in self.entries.items():
            if vid in self.waived or home in self.waived or (vids is not None and vid not in vids):
                continue
            for root, env in list(self.roots.items()):
                if root in self.waived or (only is not None and root not in only):
                    continue
                checks.append((root, env, vid, sums, root == home))
        start = time.monotonic()
        self.reads += len(checks)
        if len(checks) < PARALLEL_FROM:
            found = [self._check_one(*c) for c in checks]
        else:
            if self.pool is None:
                self.pool = concurrent.futures.ThreadPoolExecutor(READERS, thread_name_prefix="ledger")
            found = list(self.pool.map(lambda c: self._check_one(*c), checks))
        self.seconds += time.monotonic() - start
        return [line for lines in found for line in lines]

    def _check_one(self, root, env, vid, sums, must_have):
        now = self._sums(root, vid, env, known=sums)
        where = f"{root}: version {vid}"
        if isinstance(now, str) and "exited 7" in now and (vid in self.gone_ids or self.lifecycle):
            return []
        if vid in self.gone_ids and not isinstance(now, str):
            return [f"{where} was expired or withdrawn on purpose but still opens"]
        if isinstance(now, str) and "exited 3" in now and not must_have:
            return []  # a reader that never had this version (another repository, one branch cloned)
        if isinstance(now, str) and re.match(r"[a-z0-9]+://", root):
            return [f"{where} no longer reads: {now} (a host or proxy the test stops must call "
                    f"host_stops(url) first)"]
        if isinstance(now, str):
            return [f"{where} no longer reads: {now}"]
        if now != sums:
            diff = {t: (sums.get(t), now.get(t)) for t in set(sums) | set(now) if sums.get(t) != now.get(t)}
            return [f"{where} answers other than it did when published: {diff}"]
        return []

    def sweep(self):
        """Folder roots: every version on a branch's history was recorded."""
        missing = []
        for root in self.roots:
            refs = pathlib.Path(root) / "refs" / "heads"
            if root in self.waived or re.match(r"[a-z0-9]+://", root) or not refs.is_dir():
                continue
            for ref in refs.rglob("*"):
                if ref.is_file() and not ref.name.endswith(".lock"):
                    missing += self._unrecorded(pathlib.Path(root), ref.read_text().strip(),
                                                ref.relative_to(refs))
        return missing

    def _unrecorded(self, root, vid, branch):
        missing, seen = [], set()
        while vid and vid not in seen:
            seen.add(vid)
            if vid not in self.entries and vid not in self.waived and vid not in self.gone_ids:
                missing.append(f"{root}: version {vid} (on {branch}) was never recorded; "
                               f"call ledger.record(root, vid) after publishing it")
            try:
                parents = json.loads((root / "versions" / vid / "version.json").read_text()).get("parents")
            except (OSError, ValueError):
                break
            vid = parents[0] if parents else None
        return missing

    def close(self):
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        for con in self.cons:
            con.close()
        self.cons = []
        self.local = threading.local()


def host_stops(url):
    """A host or proxy the test started is about to stop: the ledger reads
    every recorded version through it first."""
    if CURRENT[0] is not None:
        CURRENT[0].closing(url)


def host_serves(url, folder):
    """A plain static host the test started serves `folder` at `url`, each
    URL under it the file of that name: the ledger may then spare stock
    DuckDB a read through it over files unchanged since it read them
    (Ledger._sums). Only for hosts that are not the subject (Python's
    http.server): fdl serve's answers are always read."""
    if CURRENT[0] is not None:
        CURRENT[0].serving[str(url).rstrip("/")] = os.path.realpath(folder)


def published_ids(stdout):
    """The ids a publish printed: 'Committed version <id>', or the bare id of -q."""
    ids = re.findall(r"Committed version (\S+)", stdout)
    if not ids:
        lines = [l.strip() for l in stdout.splitlines() if l.strip()]
        if len(lines) == 1 and UUID.fullmatch(lines[0]):
            ids = lines
    return ids


def stock_config(ext):
    """The configuration of the tests' own stock DuckDB (the ledger's, the
    histories', conftest.connect): extensions from the pinned folder, never
    downloaded, loaded without DuckDB's signature check when every file there
    is one fdl itself trusts (docs/decisions.md, "DuckDB extension
    signatures": a regular file owned by root or us and writable by no one
    else, in such a folder), as fdl loads them. The check hashes the whole
    file, 35 MB for ducklake, at each new DuckDB's first LOAD: a third of a
    second and more on a loaded machine, thousands of times a run. Loading
    with the check is tested where it is the subject: test_extensions.py,
    and the snippets and packages, run in a user's unchanged DuckDB."""
    return {"extension_directory": ext, "autoinstall_known_extensions": False, "autoload_known_extensions": True,
            "allow_unsigned_extensions": _trusted_tree(ext)}


@functools.lru_cache(maxsize=None)
def _trusted_tree(ext):
    def trusted(path):
        st = os.stat(path)
        return st.st_uid in (0, os.geteuid()) and not st.st_mode & 0o022
    files = list(pathlib.Path(ext).rglob("*.duckdb_extension"))
    return bool(files) and all(f.is_file() and not f.is_symlink() and trusted(f) and trusted(f.parent) for f in files)


def files_read(con, catalog, local):
    """Every file stock DuckDB reads for the tables of the attached version,
    as DuckDB names them: its catalog (and a WAL beside it, if one appears),
    each table's data and delete files as its catalog names them. None when
    one has no file of this machine behind it (`local`: its path, or None;
    a bucket, PostgreSQL, a host that is not a folder here): those are
    always read."""
    meta = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = ?", [catalog]).fetchone()
    if not meta or not meta[0] or local(meta[0]) is None:
        return None
    files = [meta[0], meta[0] + ".wal"]
    tables = _tables(con, catalog)
    if tables:  # one statement for every table (a statement each costs DuckLake's metadata reads each)
        sql = " UNION ALL ".join(["SELECT data_file, delete_file FROM ducklake_list_files(?, ?, schema => ?)"] *
                                 len(tables))
        for data, delete in con.execute(sql, [a for s, t in tables for a in (catalog, t, s)]).fetchall():
            files += [f for f in (data, delete) if f is not None]
    return tuple(files) if all(local(f) is not None for f in files) else None


def attach_state(root, vid):
    """What `fdl attach ROOT VID` reads of a folder repository besides the
    data files, by lstat (type, size, mtime, inode): every entry of the
    version's folder (version.json, its catalog, dataset.json, files.json,
    an expired.json) and the repository's fdl.json."""
    def st(path):
        try:
            s = os.lstat(path)
            return (s.st_mode, s.st_size, s.st_mtime_ns, s.st_ino)
        except OSError:
            return None
    folder = os.path.join(root, "versions", vid)
    entries = []
    for at, dirs, names in os.walk(folder):
        dirs.sort()
        entries += [(os.path.relpath(os.path.join(at, n), folder), st(os.path.join(at, n))) for n in sorted(names + dirs)]
    return (st(folder), tuple(entries), st(os.path.join(root, "fdl.json")))


def fingerprint(files):
    """Each file's sha256 (None when it is not there or not named)."""
    out = []
    for f in files:
        h = hashlib.sha256()
        try:
            if f is None:
                raise OSError("no file of this machine")
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            out.append(h.hexdigest())
        except OSError:
            out.append(None)
    return tuple(out)


def table_sums(con, catalog):
    """Each table's row count, sum of row hashes and per-column min/max, as
    stock DuckDB answers them (min/max may come from statistics: that is the
    point, a version's statistics must answer what its rows hold).

    A column whose min/max DuckDB answers from statistics (its plan has no
    scan) is asked alone, as stock DuckDB answers a column alone, and again
    in the one scan that counts and hashes the rows (a scan statistics cannot
    answer): the two must agree, else StatsDisagree (issue 59: test_add's
    events, a TIMESTAMP column Spark wrote with no statistics in three files
    and DuckDB with some in a fourth answered max 12:03 alone, 12:05 in the
    scan). Every other column's min/max is asked in that scan only, not in a
    scan of its own (through a host each scan opens every file again); a
    column DuckDB will not order is asked alone, and its error's name is
    what is compared."""
    out, columns = {}, {}
    for schema, table, c in con.execute("SELECT schema_name, table_name, column_name FROM duckdb_columns() "
                                        "WHERE database_name = ? ORDER BY schema_name, table_name, column_index",
                                        [catalog]).fetchall():
        columns.setdefault((schema, table), []).append('"' + c.replace('"', '""') + '"')
    for schema, table in _tables(con, catalog):
        q = f'"{catalog}"."{schema}"."{table}"'
        cols = columns.get((schema, table), [])
        mm, scanned = {}, []
        for qc in cols:
            if _scans(con, q, qc):
                scanned.append(qc)
            else:  # answered from statistics, or refused (a type with no order)
                mm[qc] = _min_max(con, q, qc)
        answered = [qc for qc in cols if qc not in scanned and len(mm[qc]) == 2]
        sql = "".join(f", min({qc})::VARCHAR, max({qc})::VARCHAR" for qc in scanned + answered)
        row = con.execute(f"SELECT count(*), sum(hash(x))::VARCHAR{sql} FROM {q} x").fetchone()
        rows = {qc: tuple(row[2 + 2 * i:4 + 2 * i]) for i, qc in enumerate(scanned + answered)}
        wrong = {qc: (mm[qc], rows[qc]) for qc in answered if mm[qc] != rows[qc]}
        if wrong:  # issue 59: statistics that do not cover every row
            raise StatsDisagree(f"{schema}.{table}: min/max from statistics, then from the rows: {wrong}")
        mm.update({qc: rows[qc] for qc in scanned})
        out[f"{schema}.{table}"] = (row[0], row[1], tuple(mm[qc] for qc in cols))
    return out


class StatsDisagree(Exception):
    """Stock DuckDB answers a column's min/max from the version's statistics
    other than the version's rows hold."""


def _scans(con, q, qc):
    """Whether DuckDB's plan of the column's min/max reads the table (False:
    statistics answer it, or DuckDB refuses it)."""
    try:
        plan = con.execute(f"EXPLAIN SELECT min({qc})::VARCHAR, max({qc})::VARCHAR FROM {q}").fetchall()
    except duckdb.Error:
        _again(con)
        return False
    return "UNGROUPED_AGGREGATE" in plan[0][1]


def _tables(con, catalog):
    return con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? "
                       "ORDER BY ALL", [catalog]).fetchall()


def _min_max(con, q, qc):
    try:
        return con.execute(f"SELECT min({qc})::VARCHAR, max({qc})::VARCHAR FROM {q}").fetchone()
    except duckdb.Error as e:  # a type with no order: note it, compare the note
        _again(con)
        return (type(e).__name__,)


def _again(con):
    """After a refused statement: DuckDB ends the transaction it was in; a
    new one for the statements after it (none open: nothing to do)."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        return
    con.execute("BEGIN TRANSACTION")
