"""Long histories built once per session and copied into each test that
reads one (the `histories` fixture of conftest.py).

A history of N versions is one table, t (i INTEGER), and N commits on
main, commit k inserting row k with the message "row k\\n\\nline two of k".
The history index (test_hindex.py) and the page's history (test_web.py) are
what the tests read and check, so one chain of commits is made for the
whole session, by the release build (build/fdl: the history is the
fixture; every step a test then runs on its copy, and every commit it adds,
runs the build under test, the sanitizer build in `make test`), and the
repository is kept at each length in SIZES on the way. A test gets its own
copy of the repository at its length, and its ledger gets the checksums
stock DuckDB took of each version when the chain published it, so the
ledger reads every version of the copy again at the end of the test, as
it does for versions the test published itself (`fdl attach` for each, and
stock DuckDB where a file it read for the chain is not the same bytes in
the copy: ledger.py's memo, handed over with the checksums).

`published(steps, root)` does the same for the short setups many tests
start from (test_reader's `published`, test_rebase's base version,
test_web's three described versions): a repository in which each step
(message, SQL statements, files written into the working folder) was
published as one version from one working catalog, made once per session
by the release build for each list of steps and copied into each test that
asks, its ledger adopting the versions (their history is the fixture; what
the test does with them runs the build under test).

The cache is one folder for all pytest-xdist workers (beside their base
temporary folders), built under a file lock: a worker that needs a length
another worker is building waits for it.
"""
import fcntl
import hashlib
import json
import os
import pathlib
import pickle
import shutil
import subprocess

import duckdb

import ledger as ledger_mod

# every length a test asks for; the chain is kept at each on its way up
SIZES = (5, 17, 18, 20, 40, 60, 150)


class Histories:
    def __init__(self, folder, fdl_bin, ledger_bin, ext):
        self.folder = pathlib.Path(folder)
        self.fdl_bin, self.ledger_bin, self.ext = fdl_bin, ledger_bin, ext
        self.folder.mkdir(parents=True, exist_ok=True)

    def copy(self, n, root):
        """Make `root` a copy of the history of n versions (whatever was
        there goes) and give the versions to the running test's ledger."""
        assert n in SIZES, f"histories: add {n} to SIZES in histories.py"
        return self._copy(self._kept(n), root)

    def published(self, steps, root):
        """Make `root` a copy of a repository in which each of `steps`,
        (message, [SQL...]) or (message, [SQL...], {file name: text}), was
        run in stock DuckDB through the ATTACH `fdl checkout` printed (the
        files written into the working folder first) and published by `fdl
        commit -m message`: built once per session for these steps. The
        running test's ledger adopts the versions. Returns their ids, oldest
        first."""
        steps = [[m, list(sqls), dict(*files)] for m, sqls, *files in steps]
        kept = self.folder / ("p-" + hashlib.sha256(json.dumps(steps).encode()).hexdigest()[:20])
        if not (kept / "sums.pickle").is_file():
            with open(self.folder / "lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not (kept / "sums.pickle").is_file():
                    self._build(kept, steps)
        self._copy(kept, root)
        return pickle.loads((kept / "ids.pickle").read_bytes())

    def _copy(self, kept, root):
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(kept / "repo", root, symlinks=True)
        sums, memo = pickle.loads((kept / "sums.pickle").read_bytes())
        if ledger_mod.CURRENT[0] is not None:
            ledger_mod.CURRENT[0].adopt(root, sums, memo)
        return root

    # --- the chain -----------------------------------------------------------
    def _kept(self, n):
        kept = self.folder / f"n{n}"
        if (kept / "sums.pickle").is_file():
            return kept
        with open(self.folder / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (kept / "sums.pickle").is_file():
                self._extend_to(n)
        return kept

    def _env(self):
        return dict(os.environ, FDL_EXTENSION_DIR=self.ext, FDL_AUTHOR_NAME="Test",
                    FDL_AUTHOR_EMAIL="t@example.org")

    def _run(self, *args):
        p = subprocess.run([self.fdl_bin, *map(str, args)], capture_output=True, text=True, env=self._env())
        assert p.returncode == 0, f"histories: fdl {' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}"
        return p

    def _extend_to(self, n):
        chain = self.folder / "chain"
        root, work = chain / "repo", chain / "w"
        state = chain / "state.pickle"
        if state.is_file():
            built, sums, memo = pickle.loads(state.read_bytes())
        else:
            shutil.rmtree(chain, ignore_errors=True)
            chain.mkdir()
            self._run("init", root)
            built, sums, memo = 0, {}, {}
        assert built < n, f"histories: the chain is at {built} versions and {n} was never kept"
        con = duckdb.connect(config=ledger_mod.stock_config(self.ext))
        led = ledger_mod.Ledger(self.ledger_bin, self.ext)
        led.root(root)
        led.memo = memo  # what stock DuckDB read for each version, so a copy's ledger need not read it again
        try:
            if built == 0:
                sql = self._run("checkout", root, work).stdout
                (chain / "attach.sql").write_text(sql)
                con.execute(sql)
                con.execute("CREATE TABLE lake.t (i INTEGER)")
            else:
                con.execute((chain / "attach.sql").read_text())
            while built < n:
                built += 1
                con.execute(f"INSERT INTO lake.t VALUES ({built})")
                p = self._run("commit", work, "-m", f"row {built}\n\nline two of {built}")
                for vid in led.published(p.stdout):
                    sums[vid] = led.entries[vid][1]
                if built in SIZES:
                    self._keep(self.folder / f"n{built}", root, sums, memo)
            state.write_bytes(pickle.dumps((built, sums, memo)))
        finally:
            con.close()
            led.close()

    def _build(self, kept, steps):
        made = kept.with_name(kept.name + ".made")
        shutil.rmtree(made, ignore_errors=True)
        root, work = made / "repo", made / "w"
        self._run("init", root)
        con = duckdb.connect(config=ledger_mod.stock_config(self.ext))
        led = ledger_mod.Ledger(self.ledger_bin, self.ext)
        led.root(root)
        ids, sums = [], {}
        try:
            con.execute(self._run("checkout", root, work).stdout)
            for message, statements, files in steps:
                for name, text in files.items():
                    (work / name).write_text(text)
                for sql in statements:
                    con.execute(sql)
                for vid in led.published(self._run("commit", work, "-m", message).stdout):
                    ids.append(vid)
                    sums[vid] = led.entries[vid][1]
        finally:
            con.close()
            led.close()
        self._keep(kept, root, sums, led.memo, ids)
        shutil.rmtree(made, ignore_errors=True)

    def _keep(self, kept, root, sums, memo, ids=()):
        """sums.pickle last, whole or not at all: a worker that finds it
        without the lock finds the rest complete."""
        shutil.rmtree(kept, ignore_errors=True)
        kept.mkdir()
        shutil.copytree(root, kept / "repo", symlinks=True)
        (kept / "ids.pickle").write_bytes(pickle.dumps(list(ids)))
        (kept / "sums.tmp").write_bytes(pickle.dumps((dict(sums), dict(memo))))
        (kept / "sums.tmp").rename(kept / "sums.pickle")
