"""fdl's benchmark: each operation run with fdl and with the peer that does
the same job, alternating, in one run on one machine; medians, the ratio
peer / fdl, and peak RSS of each.

  python bench/run.py --quick          (make bench-quick: small sizes, a few minutes)
  python bench/run.py                  (make bench: every size of issue 14)

Peers: stock DuckDB doing the job by hand (bench/sqlrun, the same libduckdb
fdl links, with no Python in between), DuckLake's own time travel, git,
frozen-ducklake 0.11.0 (the format author's earlier CLI, from
scripts/setup-bench.sh, in its own venv) and the cp + sha256sum floors. With FDL_BASELINE_BIN set
(an fdl built from before issue 42), a commit against that build: what
keeping published files out of DuckLake's reach costs. Nothing is hard-coded: every figure printed is
measured here, now. Results go to build/bench/<mode>.json and .md, and a plot
of cost against size to build/bench/<mode>.png (gnuplot, when installed).
"""
import argparse
import json
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[1]
FDL = os.environ.get("FDL_BIN", str(ROOT / "build" / "fdl"))
SQLRUN = str(ROOT / "build" / "bench" / "sqlrun")
EXT = os.environ.get("FDL_EXTENSION_DIR", str(ROOT / "deps" / "extensions"))
OUT = ROOT / "build" / "bench"

import duckdb  # noqa: E402  (stock DuckDB 1.5.5 from deps/venv)


def ext_path(name):
    return next(pathlib.Path(EXT).glob(f"v*/*/{name}.duckdb_extension"))


LOADS = f"LOAD '{ext_path('ducklake')}'; LOAD '{ext_path('sqlite_scanner')}';\n"


def env():
    return dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="bench", FDL_AUTHOR_EMAIL="b@example.org")


def run(cmd):
    """Run a command for its output (building inputs, not measured)."""
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env())
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {p.returncode}: {p.stderr[-2000:]}")
    return p.stdout


def measure(cmd):
    """(seconds, peak RSS in MiB) of one run, output to /dev/null; the RSS
    from GNU time (-f %M), which forks from its own small process, so it is
    the command's own."""
    with tempfile.NamedTemporaryFile("r") as stat:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", stat.name, *[str(c) for c in cmd]],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env())
        secs = time.perf_counter() - start
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, cmd))} exited {p.returncode}: {p.stderr.decode()[-1500:]}")
        kib = [l for l in stat.read().split() if l.isdigit()]
    return secs, int(kib[-1]) / 1024 if kib else 0.0


def drop_caches():
    """Cold file cache, where the machine lets us (root, /proc writable):
    the page cache, dentries and inodes, so the next command reads its
    program, libraries, extensions and the repository from the disk."""
    try:
        subprocess.run(["sync"], check=True)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


class Row:
    def __init__(self, op, size, target):
        self.op, self.size, self.target = op, size, target
        self.fdl, self.peer, self.fdl_rss, self.peer_rss = [], [], [], []
        self.peer_name = ""
        self.extra = {}

    def as_dict(self):
        f = statistics.median(self.fdl) if self.fdl else None
        p = statistics.median(self.peer) if self.peer else None
        return {"op": self.op, "size": self.size, "peer": self.peer_name, "target": self.target,
                "fdl_s": f, "peer_s": p, "ratio": (p / f) if f and p else None,
                "fdl_rss_mib": max(self.fdl_rss) if self.fdl_rss else None,
                "peer_rss_mib": max(self.peer_rss) if self.peer_rss else None,
                "runs": len(self.fdl), **self.extra}


CAN_DROP = [None]  # filled once: whether this machine lets us drop caches
COLD_OFF = [None]  # why cold rows were left out on purpose (--smoke, BENCH_NO_COLD=1)


def cold_row(rows, warm, reps, fdl_cmd, peer_cmd, peer_name, prepare=None):
    """The same operation with the file cache dropped before every run of
    either side (page cache, dentries, inodes): reported as its own row."""
    if CAN_DROP[0] is None:
        CAN_DROP[0] = drop_caches()
    if not CAN_DROP[0]:
        return
    row = Row(warm.op + " (cold cache)", warm.size, warm.target)

    def before(which):
        if prepare:
            prepare(which)
        drop_caches()
    alternate(row, reps, fdl_cmd, peer_cmd, before, peer_name)
    rows.append(row)


def alternate(row, reps, fdl_cmd, peer_cmd, before=None, peer_name=""):
    """Run fdl and the peer in turn, reps times each."""
    row.peer_name = peer_name
    for i in range(reps):
        for which, cmd in (("fdl", fdl_cmd), ("peer", peer_cmd)):
            if cmd is None:
                continue
            if before:
                before(which)
            secs, rss = measure(cmd() if callable(cmd) else cmd)
            getattr(row, which).append(secs)
            getattr(row, which + "_rss").append(rss)
    return row


# ---- building inputs ----------------------------------------------------------------

def new_repo(tmp, name):
    root = tmp / name
    run([FDL, "init", root])
    return root


CHECKOUTS = {}  # working folder -> the ATTACH `fdl checkout` printed for it


def checkout(root, work):
    attach = run([FDL, "checkout", root, work])
    CHECKOUTS[str(work)] = attach
    return attach


def read_only(attach):
    """The ATTACH `fdl checkout` printed, read-only: how a peer reads the
    working catalog (its DATA_PATH is the working folder's, under work/<id>/,
    which DuckLake checks against what the catalog recorded)."""
    head, sep, rest = attach.partition(" AS lake (")
    if not sep:
        raise RuntimeError(f"fdl checkout printed no ATTACH ... AS lake (...): {attach!r}")
    return f"{head} AS lake (READ_ONLY, {rest}"


def connect(attach):
    con = duckdb.connect(config={"extension_directory": EXT, "autoinstall_known_extensions": False})
    con.execute(attach)
    return con


def fill_snapshots(con, snapshots, tables=10, payload=0):
    """tables tables, then `snapshots` snapshots, each inserting into one
    table (one data file each); payload bytes of random text per row."""
    for t in range(tables):
        con.execute(f"CREATE TABLE IF NOT EXISTS lake.t{t} (k BIGINT, v VARCHAR)")
    for s in range(snapshots):
        t = s % tables
        if payload:
            con.execute(f"INSERT INTO lake.t{t} SELECT {s}, repeat(md5(random()::VARCHAR), {payload // 32})")
        else:
            con.execute(f"INSERT INTO lake.t{t} VALUES ({s}, 'row {s}')")


def hand_freeze_sql(work_sqlite, frozen, data_path, snapshot):
    """What a user would run in stock DuckDB to freeze by hand: a new DuckLake
    catalog file, then every metadata table copied up to the snapshot, ended
    rows reopened, the data path rewritten (the seed's rules)."""
    tables = [r[0] for r in duckdb.connect().execute(
        f"{LOADS} ATTACH '{work_sqlite}' AS w (TYPE sqlite, READ_ONLY); "
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'w' AND table_name LIKE 'ducklake_%' "
        "AND table_name NOT LIKE 'ducklake_inlined%' AND table_name <> 'ducklake_files_scheduled_for_deletion'"
    ).fetchall()]
    cols = {}
    c2 = duckdb.connect()
    c2.execute(f"{LOADS} ATTACH '{work_sqlite}' AS w (TYPE sqlite, READ_ONLY)")
    for t in tables:
        cols[t] = [r[0] for r in c2.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = 'w' AND table_name = ?", [t]).fetchall()]
    sql = [LOADS, f"ATTACH 'ducklake:{frozen}' AS f0 (DATA_PATH '{data_path}'); DETACH f0;",
           f"ATTACH '{work_sqlite}' AS w (TYPE sqlite, READ_ONLY); ATTACH '{frozen}' AS f;"]
    for t in tables:
        where = ""
        if "begin_snapshot" in cols[t]:
            where = f" WHERE begin_snapshot <= {snapshot}"
        elif t in ("ducklake_snapshot", "ducklake_snapshot_changes"):
            where = f" WHERE snapshot_id <= {snapshot}"
        sql.append(f"DELETE FROM f.{t}; INSERT INTO f.{t} BY NAME SELECT * FROM w.{t}{where};")
        if "end_snapshot" in cols[t]:
            sql.append(f"UPDATE f.{t} SET end_snapshot = NULL WHERE end_snapshot > {snapshot};")
    sql.append(f"UPDATE f.ducklake_metadata SET value = '{data_path}' WHERE key = 'data_path' AND scope IS NULL;")
    sql.append("DETACH f;")
    return "\n".join(sql)


def last_snapshot(work_sqlite):
    c = duckdb.connect()
    c.execute(f"{LOADS} ATTACH '{work_sqlite}' AS w (TYPE sqlite, READ_ONLY)")
    return c.execute("SELECT max(snapshot_id) FROM w.ducklake_snapshot").fetchone()[0]


def save_work(root, work, saved):
    """Keep what a commit changes besides the version: the working folder
    (its catalog records the files it publishes by their new place) and the
    repository's work/ (the files the commit moves into data/)."""
    shutil.copytree(work, saved / "folder")
    shutil.copytree(root / "work", saved / "staged")


def reset_commit(root, work, saved):
    """Undo a commit: the version directories, the ref and the data files it
    published go, the working folder and the repository's work/ are put
    back, so the next commit does the same work."""
    for d in ("versions", "data", "history"):
        shutil.rmtree(root / d, ignore_errors=True)
    (root / "versions").mkdir()
    (root / "data").mkdir()
    ref = root / "refs" / "heads" / "main"
    if ref.exists():
        ref.unlink()
    restore_work(root, work, saved)


def restore_work(root, work, saved):
    """Put back what save_work kept."""
    for src, dst in ((saved / "folder", work), (saved / "staged", root / "work")):
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)


def write_version(root, i, prev, ms):
    """versions/<id>/version.json of seq i on top of `prev`, as fdl log reads
    it (valid fields; no catalog behind it). Returns the id."""
    vid = str(uuid.UUID(int=(ms << 80) | (0x7 << 76) | (0x8 << 60) | i))
    doc = {"fdl": "0.1", "id": vid, "seq": i, "parents": [prev] if prev else [],
           "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000)),
           "author": {"name": "bench", "email": "b@example.org"}, "message": f"version {i}",
           "catalog": {"path": "ducklake.duckdb", "storage": "duckdb-v1.5.0", "bytes": 1, "sha256": "0" * 64},
           "dataset": {"path": "dataset.json", "bytes": 1, "sha256": "0" * 64},
           "ducklake": {"format": "1.0", "snapshot_id": i, "snapshots": [i, i]},
           "changes": []}
    d = root / "versions" / vid
    d.mkdir(parents=True)
    (d / "version.json").write_text(json.dumps(doc, indent=2) + "\n")
    return vid


def synthetic_history(root, n):
    """n versions on main as fdl log reads them: valid version.json files in a
    first-parent chain (log never opens a catalog). Returns the tip."""
    prev = None
    base = time.time_ns() // 1_000_000 - n
    for i in range(1, n + 1):
        prev = write_version(root, i, prev, base + i)
    (root / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (root / "refs" / "heads" / "main").write_text(prev + "\n")
    return prev


def git_history(path, n):
    """A Git repository with n commits on main, made by git fast-import."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    lines = []
    for i in range(1, n + 1):
        msg = f"version {i}".encode()
        data = f"{i}\n".encode()
        lines.append(b"commit refs/heads/main\n")
        lines.append(f"committer bench <b@example.org> {1700000000 + i} +0000\n".encode())
        lines.append(b"data %d\n%s\n" % (len(msg), msg))
        lines.append(b"M 644 inline v\ndata %d\n%s\n" % (len(data), data))
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(lines), check=True)


def files_bytes(paths):
    return sum(p.stat().st_size for p in paths if p.is_file())


# ---- the operations -------------------------------------------------------------------

def bench_freeze(tmp, sizes, reps, rows):
    """commit (freeze) of a working catalog with 10 tables and N snapshots;
    returns the largest (root, work, n), committed once, for checkout."""
    kept = None
    for n in sizes:
        root = new_repo(tmp, f"freeze-{n}")
        work = tmp / f"freeze-{n}-work"
        con = connect(checkout(root, work))
        fill_snapshots(con, n)
        con.close()
        record = tmp / f"freeze-{n}-saved"
        save_work(root, work, record)
        snap = last_snapshot(work / "ducklake.sqlite")
        hand = tmp / f"freeze-{n}.sql"
        frozen = tmp / f"freeze-{n}-hand.duckdb"
        hand.write_text(hand_freeze_sql(work / "ducklake.sqlite", frozen, f"{root}/data/", snap))

        def before(which):
            if which == "fdl":
                reset_commit(root, work, record)
            elif frozen.exists():
                frozen.unlink()

        row = Row("commit (freeze)", f"{n} snapshots, {n} files", "faster than the hand freeze")
        alternate(row, reps, [FDL, "commit", work, "-m", "bench", "-q"], [SQLRUN, hand], before,
                  "stock DuckDB by hand")
        rows.append(row)
        if n == max(sizes):
            cold_row(rows, row, reps, [FDL, "commit", work, "-m", "bench", "-q"], [SQLRUN, hand],
                     "stock DuckDB by hand", before)
        # the floor: cp + sha256sum of what the commit wrote
        reset_commit(root, work, record)
        run([FDL, "commit", work, "-m", "bench", "-q"])
        [vdir] = list((root / "versions").iterdir())
        written = sorted(vdir.iterdir())
        floor = Row("commit (freeze) floor", f"{n} snapshots", "<= 1.5x cp + sha256sum of what is written")
        script = "; ".join(f"cp '{p}' '{tmp}/floor-copy' && sha256sum '{tmp}/floor-copy' >/dev/null" for p in written)
        for _ in range(reps):
            s, r = measure(["sh", "-c", script])
            floor.peer.append(s)
            floor.peer_rss.append(r)
        floor.fdl = row.fdl[:]
        floor.fdl_rss = row.fdl_rss[:]
        floor.peer_name = "cp + sha256sum"
        floor.extra["bytes_written"] = files_bytes(written)
        floor.extra["catalog_bytes"] = (vdir / "ducklake.duckdb").stat().st_size
        floor.extra["files_json_bytes"] = (vdir / "files.json").stat().st_size
        rows.append(floor)
        if n == max(sizes):
            kept = (root, work, n)
        else:
            shutil.rmtree(root)
            shutil.rmtree(work)
    return kept


def bench_hash_commit(tmp, mb, reps, rows):
    """A commit adding `mb` MB of Parquet on top of a version: each new data
    file is read once for its sha256 (issue 43). The peer is the same
    binary committing the same snapshot with those hashes already known (the
    base's files.json given them, so no file is read): the difference is the
    hashing; its floor, sha256sum of the new files."""
    import hashlib
    root = new_repo(tmp, "hash")
    work = tmp / "hash-work"
    con = connect(checkout(root, work))
    con.execute("CREATE TABLE lake.t (a DOUBLE, b DOUBLE, c DOUBLE, d DOUBLE)")
    con.execute("INSERT INTO lake.t VALUES (0, 0, 0, 0)")
    run([FDL, "commit", work, "-m", "base", "-q"])
    base = (root / "refs" / "heads" / "main").read_text().strip()
    old = {p for p in (root / "data").rglob("*") if p.is_file()}
    rows_n = mb * (1 << 20) // 32  # four random doubles a row: incompressible
    con.execute(f"INSERT INTO lake.t SELECT random(), random(), random(), random() FROM range({rows_n})")
    con.close()
    # the new files are in the working catalog's folder work/<id>/ until the commit publishes them
    [staged] = [d for d in (root / "work").iterdir() if d.is_dir()]
    new = sorted(p for p in staged.rglob("*") if p.is_file())
    saved = tmp / "hash-saved"
    save_work(root, work, saved)
    # the base as written, and the same base knowing the new files' hashes
    vdir = root / "versions" / base
    plain = {n: (vdir / n).read_bytes() for n in ("files.json", "version.json")}
    fj = json.loads(plain["files.json"])
    fj["sha256"].update({str(p.relative_to(staged)): hashlib.sha256(p.read_bytes()).hexdigest() for p in new})
    known_fj = json.dumps(fj, separators=(",", ":")).encode()
    vj = json.loads(plain["version.json"])
    vj["files"].update(bytes=len(known_fj), sha256=hashlib.sha256(known_fj).hexdigest())
    known = {"files.json": known_fj, "version.json": (json.dumps(vj, indent=2) + "\n").encode()}
    shutil.rmtree(root / "history", ignore_errors=True)  # derived; it holds the base's version.json

    def before(which):
        for d in (root / "versions").iterdir():
            if d.name != base:
                shutil.rmtree(d)
        for p in [p for p in (root / "data").rglob("*") if p.is_file() and p not in old]:
            p.unlink()  # what the last commit published; put back in work/<id>/ below
        for n, b in (plain if which == "fdl" else known).items():
            (vdir / n).write_bytes(b)
        (root / "refs" / "heads" / "main").write_text(base + "\n")
        restore_work(root, work, saved)
        shutil.rmtree(root / "history", ignore_errors=True)

    size = f"{files_bytes(new) / (1 << 20):.0f} MB in {len(new)} files"
    cmd = [FDL, "commit", work, "-m", "bench", "-q"]
    row = Row("commit adding Parquet, new files hashed", size, "the hashing costs at most sha256sum of the new files")
    alternate(row, reps, cmd, cmd, before, "the same commit, hashes known")
    rows.append(row)
    floor = Row("commit: hashing the new files", size, "<= sha256sum of the new files")
    before("fdl")  # the new files back in work/<id>/
    for _ in range(reps):
        s, r = measure(["sha256sum", *new])
        floor.peer.append(s)
        floor.peer_rss.append(r)
    floor.fdl = [max(statistics.median(row.fdl) - statistics.median(row.peer), 0.0)]
    floor.peer_name = "sha256sum"
    floor.extra["commit_hashed_s"] = round(statistics.median(row.fdl), 3)
    floor.extra["commit_hashes_known_s"] = round(statistics.median(row.peer), 3)
    rows.append(floor)


def bench_one_row(tmp, histories, reps, rows, payload=0):
    """a one-row commit on top of H versions of history; returns the repos
    (root, work) by H for the later rows."""
    made = {}
    for h in histories:
        root = new_repo(tmp, f"hist-{h}")
        work = tmp / f"hist-{h}-work"
        con = connect(checkout(root, work))
        con.execute("CREATE TABLE lake.t (k BIGINT, v VARCHAR)")
        for i in range(h):
            if payload:
                con.execute(f"INSERT INTO lake.t SELECT {i} * 1000 + range, repeat(md5(random()::VARCHAR), 32) "
                            f"FROM range({max(1, payload // 1024)})")
            else:
                con.execute(f"INSERT INTO lake.t VALUES ({i}, 'row {i}')")
            run([FDL, "commit", work, "-m", f"v{i + 1}", "-q"])
        row = Row("one-row commit", f"on {h} versions", "within 2x from smallest to largest history")
        row.peer_name = "itself at the smallest history"
        k = [h * 1000 + 7]

        def one(which):
            k[0] += 1
            con.execute(f"INSERT INTO lake.t VALUES ({k[0]}, 'one more')")
        for _ in range(reps):
            one("fdl")
            s, r = measure([FDL, "commit", work, "-m", "one row", "-q"])
            row.fdl.append(s)
            row.fdl_rss.append(r)
        vid = (root / "refs" / "heads" / "main").read_text().strip()
        vdir = root / "versions" / vid
        row.extra["version_bytes"] = files_bytes(vdir.iterdir())
        row.extra["catalog_bytes"] = (vdir / "ducklake.duckdb").stat().st_size
        con.close()
        rows.append(row)
        made[h] = (root, work)
    first = next(r for r in rows if r.op == "one-row commit")
    for r in rows:
        if r.op == "one-row commit":
            r.peer = first.fdl[:]
    return made


def bench_iceberg(tmp, made, reps, rows):
    """Issue 38: fdl iceberg writing a repository's first view (every
    version of the history a snapshot) on each history length, and a one-row
    commit with the view on against the same commit on a copy without it
    (a view may cost at most 25% more)."""
    smallest = []
    for h, (root, _) in sorted(made.items()):
        copy = tmp / f"iceberg-{h}"
        run([FDL, "clone", root, copy, "-q"])
        row = Row("fdl iceberg (first view)", f"on {h} versions", "grows with the history, not faster")
        row.peer_name = "itself at the smallest history"
        for _ in range(reps):
            shutil.rmtree(copy / "iceberg", ignore_errors=True)
            s, r = measure([FDL, "iceberg", copy])
            row.fdl.append(s)
            row.fdl_rss.append(r)
        row.extra["view_bytes"] = files_bytes(p for p in (copy / "iceberg").rglob("*"))
        smallest = smallest or row.fdl[:]
        row.peer = smallest
        rows.append(row)
        bare = tmp / f"iceberg-{h}-bare"
        run([FDL, "clone", root, bare, "-q"])
        cons = {"fdl": connect(checkout(copy, tmp / f"iceberg-{h}-work")),
                "peer": connect(checkout(bare, tmp / f"iceberg-{h}-bare-work"))}
        crow = Row("one-row commit, Iceberg view on", f"on {h} versions", "at most 25% more than without")
        k = [h * 1000 + 500]

        def one(which):
            k[0] += 1
            cons[which].execute(f"INSERT INTO lake.t VALUES ({k[0]}, 'one more')")
        alternate(crow, reps, [FDL, "commit", tmp / f"iceberg-{h}-work", "-m", "one row", "-q"],
                  [FDL, "commit", tmp / f"iceberg-{h}-bare-work", "-m", "one row", "-q"], one,
                  "the same commit without a view")
        for c in cons.values():
            c.close()
        rows.append(crow)
        # issue 41: the same commit with the REST catalog on (the view and
        # the catalog's files of every branch and tag) against the view alone
        cat = tmp / f"iceberg-{h}-catalog"
        run([FDL, "clone", copy, cat, "-q"])
        run([FDL, "tag", cat, "bench-tag"])
        run([FDL, "iceberg", cat, "--catalog"])
        cons = {"fdl": connect(checkout(cat, tmp / f"iceberg-{h}-catalog-work")),
                "peer": connect(checkout(copy, tmp / f"iceberg-{h}-work2"))}
        krow = Row("one-row commit, Iceberg catalog on", f"on {h} versions", "at most 25% more than the view alone")
        alternate(krow, reps, [FDL, "commit", tmp / f"iceberg-{h}-catalog-work", "-m", "one row", "-q"],
                  [FDL, "commit", tmp / f"iceberg-{h}-work2", "-m", "one row", "-q"], one,
                  "the same commit with the view alone")
        for c in cons.values():
            c.close()
        krow.extra["catalog_bytes"] = files_bytes(p for p in (cat / "iceberg").glob("*/catalog/**/*"))
        rows.append(krow)


def bench_log(tmp, lengths, reps, rows):
    for n in lengths:
        root = new_repo(tmp, f"log-{n}")
        synthetic_history(root, n)
        # the history index, as `fdl gc` writes it for a repository without
        # one (gc then stops at the first version without a catalog)
        subprocess.run([FDL, "gc", str(root)], capture_output=True, env=env())
        g = tmp / f"git-{n}"
        git_history(g, n)
        fmt = "--format=version %H%nAuthor: %an <%ae>%nDate:   %aI%n%n    %s%n"
        row = Row("log (whole)", f"{n} versions", "<= 2x git log")
        alternate(row, reps, [FDL, "log", root], ["git", "-C", g, "log", fmt], peer_name="git log --format")
        rows.append(row)
        if n == max(lengths):
            cold_row(rows, row, reps, [FDL, "log", root], ["git", "-C", g, "log", fmt], "git log --format")
        row = Row("log -n 10", f"{n} versions", "constant in history length; <= 3x git (issue 18)")
        alternate(row, reps, [FDL, "log", root, "-n", "10"], ["git", "-C", g, "log", "-n", "10", fmt],
                  peer_name="git log -n 10")
        rows.append(row)
        shutil.rmtree(root)
        shutil.rmtree(g)


class DelayedHost:
    """A plain static HTTP host (Python's http.server, not fdl serve, which
    could cheat) that waits `delay` seconds before answering each request
    and counts them: a host 20 ms away."""

    def __init__(self, root, delay=0.02):
        import functools
        import http.server
        import threading
        self.count = 0
        host = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, for both sides
            disable_nagle_algorithm = True  # headers and body written apart: no 40 ms delayed-ACK stall

            def log_message(self, *a):
                pass

            def send_head(self):
                host.count += 1
                time.sleep(delay)
                return super().send_head()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def history_on(root, work, n):
    """A repository whose seq 1 is a real version (catalog, data) and seqs 2..n
    are version.json files on top of it, as fdl log reads them; then `fdl gc`
    writes the history index (it stops after that, at the first version
    without a catalog, which is expected here)."""
    con = connect(checkout(root, work))
    con.execute("CREATE TABLE lake.t AS SELECT range AS i FROM range(1000)")
    con.close()
    run([FDL, "commit", work, "-m", "version 1", "-q"])
    prev = (root / "refs" / "heads" / "main").read_text().strip()
    base = time.time_ns() // 1_000_000
    for i in range(2, n + 1):
        prev = write_version(root, i, prev, base + i)
    (root / "refs" / "heads" / "main").write_text(prev + "\n")
    subprocess.run([FDL, "gc", str(root)], capture_output=True, env=env())
    if not (root / "history" / "heads" / "main.json").exists():
        raise RuntimeError("fdl gc wrote no history index")


def page_history_row(tmp, n, root, bare, reps, rows):
    """The page's first render (landing card and its first 50 history rows,
    body[data-ready]) from the same static host 20 ms away, a new browser
    context each load (cold), with the index and without it."""
    node = shutil.which("node")
    if not node or not (ROOT / "build" / "web" / "index.html").exists():
        print("remote page: skipped (node or build/web missing: make web)", file=sys.stderr)
        return
    row = Row("remote page: first render with 50 history rows, host 20 ms away (cold)", f"{n} versions",
              "a few requests for the history at any length")
    row.peer_name = "the same, no index"
    for which, src in (("fdl", root), ("peer", bare)):
        site = tmp / f"page-site-{n}-{which}"
        shutil.copytree(src, site, copy_function=os.link)
        shutil.copytree(ROOT / "build" / "web", site, dirs_exist_ok=True)
        host = DelayedHost(site)
        try:
            p = subprocess.run([node, str(ROOT / "web" / "test" / "timing.mjs"), host.url + "/", str(max(reps, 3))],
                               capture_output=True, text=True, cwd=ROOT / "web", timeout=600)
        finally:
            host.close()
            shutil.rmtree(site, ignore_errors=True)
        if p.returncode != 0:
            print(f"remote page: timing failed: {p.stderr[-500:]}", file=sys.stderr)
            return
        got = json.loads(p.stdout.strip().splitlines()[-1])
        setattr(row, which, [t / 1000 for t in got["times"]])
        row.extra[f"requests a load ({'with index' if which == 'fdl' else 'without'})"] = host.count // len(got["times"])
    rows.append(row)


def bench_remote_history(tmp, lengths, reps, rows):
    """issue 24: history over a static host 20 ms away, cold reader cache
    every run: fdl with its history index against the same commands with
    the index removed, and git clone (dumb HTTP) of as long a history."""
    for n in lengths:
        root, work = tmp / f"rh-{n}", tmp / f"rh-{n}-work"
        run([FDL, "init", root])
        history_on(root, work, n)
        bare = tmp / f"rh-{n}-noindex"
        shutil.copytree(root, bare, copy_function=os.link, ignore=shutil.ignore_patterns("history"))
        g = tmp / f"rh-{n}-git"
        git_history(g, n)
        subprocess.run(["git", "-C", str(g), "repack", "-a", "-d", "-q"], check=True)
        subprocess.run(["git", "-C", str(g), "update-server-info"], check=True)
        hosts = {"index": DelayedHost(root), "none": DelayedHost(bare), "git": DelayedHost(g)}
        caches = [0]

        def fdl_cold(host, *args):
            def cmd():
                caches[0] += 1
                c = tmp / f"cache-{n}-{caches[0]}"
                hosts[host].count = 0
                return ["env", f"FDL_CACHE_DIR={c}", FDL, *args]
            return cmd

        def git_clone():
            dest = tmp / f"clone-{n}"
            shutil.rmtree(dest, ignore_errors=True)
            hosts["git"].count = 0
            return ["git", "clone", "-q", f"{hosts['git'].url}/.git", dest]

        try:
            # without the index at 10,000 versions a run is 10,000 requests
            # (200 s): the whole log once, show and attach not at all
            slow_reps = reps if n <= 1000 else 1
            for op, args in (("log (whole)", ["log", "{url}@main"]), ("log -n 10", ["log", "{url}@main", "-n", "10"]),
                             ("show main:1", ["show", "{url}@main:1"]), ("attach main:1", ["attach", "{url}@main:1"])):
                row = Row(f"remote {op}, host 20 ms away (cold)", f"{n} versions",
                          "whole log of 10,000 in <= 5 requests and < 1 s; main:1 in <= 5 requests")
                with_ix = [a.replace("{url}", hosts["index"].url) for a in args]
                no_ix = [a.replace("{url}", hosts["none"].url) for a in args]
                req = {"index": [], "none": []}

                row.peer_name = "the same, no index"
                for i in range(reps):
                    secs, rss = measure(fdl_cold("index", *with_ix)())
                    row.fdl.append(secs)
                    row.fdl_rss.append(rss)
                    req["index"].append(hosts["index"].count)
                    if i < slow_reps and (n <= 1000 or op.startswith("log")):
                        secs, rss = measure(fdl_cold("none", *no_ix)())
                        row.peer.append(secs)
                        row.peer_rss.append(rss)
                        req["none"].append(hosts["none"].count)
                row.extra = {"requests with index": max(req["index"]),
                             "requests without": max(req["none"]) if req["none"] else "not run (200 s a run)"}
                rows.append(row)
                if op == "log (whole)":
                    row = Row("remote whole history, host 20 ms away (cold)", f"{n} versions",
                              "fdl log against git clone of as many commits")
                    git_req = []
                    row.peer_name = "git clone (dumb HTTP, packed)"
                    for i in range(reps):
                        secs, rss = measure(fdl_cold("index", *with_ix)())
                        row.fdl.append(secs)
                        row.fdl_rss.append(rss)
                        secs, rss = measure(git_clone())
                        row.peer.append(secs)
                        row.peer_rss.append(rss)
                        git_req.append(hosts["git"].count)
                    row.extra = {"git requests": max(git_req)}
                    rows.append(row)
            page_history_row(tmp, n, root, bare, reps, rows)
        finally:
            for h in hosts.values():
                h.close()
            for p in (root, work, bare, g):
                shutil.rmtree(p, ignore_errors=True)


def bench_checkout(tmp, files, reps, rows, base=None):
    """checkout of a version with `files` data files: the freeze row's
    largest repository when it has that many (one version, committed)."""
    if base and base[2] == files:
        root, work, _ = base
    else:
        root = new_repo(tmp, "co")
        work = tmp / "co-work"
        con = connect(checkout(root, work))
        fill_snapshots(con, files)
        con.close()
        run([FDL, "commit", work, "-m", "many files", "-q"])
    vid = (root / "refs" / "heads" / "main").read_text().strip()
    frozen = root / "versions" / vid / "ducklake.duckdb"
    n = [0]

    def fdl_cmd():
        n[0] += 1
        return [FDL, "checkout", root, tmp / f"co-fdl-{n[0]}"]

    def peer_cmd():
        n[0] += 1
        dest = tmp / f"co-hand-{n[0]}.sqlite"
        sql = tmp / f"co-hand-{n[0]}.sql"
        tables = [r[0] for r in duckdb.connect().execute(
            f"ATTACH '{frozen}' AS f (READ_ONLY); SELECT table_name FROM duckdb_tables() WHERE database_name = 'f'"
        ).fetchall()]
        body = [LOADS, f"ATTACH 'ducklake:{dest}' AS n0 (DATA_PATH '{root}/data/', META_TYPE 'sqlite'); DETACH n0;",
                f"ATTACH '{frozen}' AS f (READ_ONLY); ATTACH '{dest}' AS n (TYPE sqlite);"]
        body += [f"DELETE FROM n.{t}; INSERT INTO n.{t} BY NAME SELECT * FROM f.{t};" for t in tables]
        sql.write_text("\n".join(body))
        return [SQLRUN, sql]
    row = Row("checkout", f"{files} data files", "faster than by hand")
    alternate(row, reps, fdl_cmd, peer_cmd, peer_name="stock DuckDB: ATTACH + copy into SQLite")
    rows.append(row)
    cold_row(rows, row, reps, fdl_cmd, peer_cmd, "stock DuckDB: ATTACH + copy into SQLite")
    # issue 18: what a one-row version costs at this many data files, and
    # what a cold reader downloads to open it (fdl.json, version.json, catalog)
    one_work = tmp / "co-one"
    con = connect(checkout(root, one_work))
    con.execute("INSERT INTO lake.t0 VALUES (-1, 'one more')")
    con.close()
    s, r = measure([FDL, "commit", one_work, "-m", "one row", "-q"])
    vid = (root / "refs" / "heads" / "main").read_text().strip()
    vdir = root / "versions" / vid
    one = Row("one-row commit", f"on {files} data files", "bytes follow the change (issue 18)")
    one.fdl, one.fdl_rss, one.peer_name = [s], [r], "-"
    one.extra["version_bytes"] = files_bytes(vdir.iterdir())
    one.extra["catalog_bytes"] = (vdir / "ducklake.duckdb").stat().st_size
    one.extra["files_json_bytes"] = (vdir / "files.json").stat().st_size
    one.extra["reader_download_bytes"] = ((root / "fdl.json").stat().st_size + (vdir / "version.json").stat().st_size
                                          + (vdir / "ducklake.duckdb").stat().st_size)
    rows.append(one)


def bench_query(tmp, made, reps, rows):
    h = max(made)
    root, work = made[h]
    old = 1
    con = duckdb.connect()
    con.execute(f"{LOADS} ATTACH '{work}/ducklake.sqlite' AS w (TYPE sqlite, READ_ONLY)")
    snap = con.execute("SELECT min(snapshot_id) FROM w.ducklake_snapshot_changes WHERE changes_made LIKE "
                       "'%inserted_into_table%'").fetchone()[0]
    tt = tmp / "timetravel.sql"
    # the working catalog attached as `fdl checkout` printed it (its
    # DATA_PATH is the working folder's, under work/<id>/), read-only
    attach = read_only(stock_sql(CHECKOUTS[str(work)]))
    tt.write_text(f"{LOADS}{attach}\nSELECT count(*) FROM lake.t AT (VERSION => {snap});")
    # the old version by its id, as `fdl log` shows it; ROOT@1 (a seq) walks
    # the first-parent chain back from the tip, one version.json per step
    vid = next(json.loads(v.read_text())["id"] for v in (root / "versions").glob("*/version.json")
               if json.loads(v.read_text())["seq"] == old)
    row = Row("open + query an old version (folder)", f"seq {old} of {h}", "within 1.2x of time travel")
    alternate(row, reps, [FDL, "query", f"{root}@{vid}", "SELECT count(*) FROM t", "-f", "csv"], [SQLRUN, tt],
              peer_name="DuckLake time travel AT (VERSION => n)")
    by_seq = [measure([FDL, "query", f"{root}@{old}", "SELECT count(*) FROM t", "-f", "csv"])[0] for _ in range(3)]
    row.extra["by_seq_s"] = round(statistics.median(by_seq), 4)
    rows.append(row)
    cold_row(rows, row, reps, [FDL, "query", f"{root}@{vid}", "SELECT count(*) FROM t", "-f", "csv"], [SQLRUN, tt],
             "DuckLake time travel AT (VERSION => n)")
    # over fdl serve, cold reader cache each time; requests counted
    srv = subprocess.Popen([FDL, "serve", root, "--port", "0", "-q", "--no-page"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, env=env())
    try:
        line = srv.stdout.readline()
        url = line.split(" at ")[1].split("/ ")[0].rstrip("/").split()[0].rstrip("/")
        caches = [0]

        def fresh_cache(which):
            caches[0] += 1
            os.environ["FDL_CACHE_DIR"] = str(tmp / f"cache-{caches[0]}")
        tth = tmp / "timetravel-http.sql"
        tth.write_text(f"{LOADS}{attach}\nSELECT count(*) FROM lake.t AT (VERSION => {snap});")
        row = Row("open + query an old version (fdl serve, cold)", f"seq {old} of {h}",
                  "within 1.2x of time travel; <= 3 requests before the catalog")
        alternate(row, reps, [FDL, "query", f"{url}@{vid}", "SELECT count(*) FROM t", "-f", "csv"],
                  [SQLRUN, tth], fresh_cache, "DuckLake time travel (local catalog)")
        for label, ref in (("requests_by_id", vid), (f"requests_by_main:{old}", f"main:{old}")):
            os.environ["FDL_CACHE_DIR"] = str(tmp / f"cache-requests-{label}")
            p = subprocess.run([FDL, "query", f"{url}@{ref}", "SELECT 1", "--requests"], capture_output=True,
                               text=True, env=env())
            got = [w for w in p.stderr.split() if w.isdigit()]
            row.extra[label] = int(got[-1]) if got else p.stderr.strip()[:200]
        os.environ.pop("FDL_CACHE_DIR", None)
        rows.append(row)
    finally:
        srv.terminate()
        srv.wait()


def bench_clone(tmp, made, reps, rows):
    """fdl clone from a plain static host 20 ms away (DelayedHost, not fdl
    serve), cold: time and requests; the floor is each file once, 8 at a
    time (files x 20 ms / 8), from the same run's count of files."""
    for h in sorted(made):
        root = made[h][0]
        files = [p for p in root.rglob("*") if p.is_file() and "history" not in p.parts]
        host = DelayedHost(root, 0.02)
        try:
            row = Row("clone from a static host 20 ms away (cold)", f"{h} versions",
                      "within 2x of files x 20 ms / 8; requests <= files + 2 per version + 10")
            counts = []
            for i in range(max(1, reps // 2)):
                dst = tmp / f"clone-{h}-{i}"
                os.environ["FDL_CACHE_DIR"] = str(tmp / f"clone-cache-{h}-{i}")
                before = host.count
                secs, rss = measure([FDL, "clone", host.url, dst, "-q"])
                counts.append(host.count - before)
                row.fdl.append(secs)
                row.fdl_rss.append(rss)
                shutil.rmtree(dst)
            os.environ.pop("FDL_CACHE_DIR", None)
            floor = len(files) * 0.02 / 8
            versions = len(list((root / "versions").iterdir()))
            row.peer, row.peer_rss, row.peer_name = [floor], [0], "floor: each file once, 8 at a time"
            row.extra.update({"requests": max(counts), "files": len(files), "versions": versions,
                              "request_target": len(files) + 2 * versions + 10,
                              "bytes": files_bytes(files)})
            rows.append(row)
        finally:
            host.close()


S3SYNC = """
import concurrent.futures, os, pathlib, sys
os.environ.pop("AWS_PROFILE", None)  # empty for fdl (no profile), an error for boto3
import boto3, botocore.config
mode, bucket, prefix, local = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name="us-east-1",
                  config=botocore.config.Config(s3={"addressing_style": "path"}, max_pool_connections=8,
                                                retries={"max_attempts": 5, "mode": "standard"}))
local = pathlib.Path(local)
if mode == "down":
    keys = [o["Key"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
            for o in page.get("Contents", [])]
    def one(k):
        dst = local / k[len(prefix):]
        dst.parent.mkdir(parents=True, exist_ok=True)
        s3.download_file(bucket, k, str(dst))
else:
    keys = [p for p in local.rglob("*") if p.is_file()]
    def one(p):
        s3.upload_file(str(p), bucket, prefix + str(p.relative_to(local)))
with concurrent.futures.ThreadPoolExecutor(8) as pool:
    list(pool.map(one, keys))
"""


def moto_requests(log):
    """Requests the S3 server has answered so far (its access log)."""
    text = log.read_text(errors="replace")
    return sum(text.count(f'"{m} ') for m in ("GET", "HEAD", "PUT", "POST", "DELETE"))


def bench_clone_s3(tmp, made, reps, rows):
    """fdl clone into and out of a real S3 server (moto, every request's
    signature checked), cold, 8 transfers at once, against boto3 moving
    the same files with 8 threads (what `aws s3 sync` does): requests
    counted from the server's own log."""
    sys.path.insert(0, str(ROOT / "tests" / "interop"))
    from s3server import S3Server
    log = tmp / "moto.log"
    server = S3Server(log)
    script = tmp / "s3sync.py"
    script.write_text(S3SYNC)
    saved = dict(os.environ)
    client = server.client()
    os.environ.update(server.env())
    try:
        for h in sorted(made):
            if h < 100 and len(made) > 2:
                continue
            root = made[h][0]
            files = [p for p in root.rglob("*") if p.is_file() and "history" not in p.parts]
            versions = len(list((root / "versions").iterdir()))
            extra = {"files": len(files), "versions": versions, "bytes": files_bytes(files),
                     "request_target": len(files) + 2 * versions + 10}
            up = Row("clone into a bucket (S3 server)", f"{h} versions",
                     "within 2x of boto3 with 8 threads; requests <= files + 2 per version + 10")
            down = Row("clone from a bucket (S3 server, cold)", f"{h} versions",
                       "within 2x of boto3 with 8 threads; requests <= files + 2 per version + 10")
            up.peer_name = down.peer_name = "boto3, 8 threads (aws s3 sync)"
            for i in range(1 if h >= 1000 else max(1, reps // 2)):
                bucket = f"bench-{h}-{i}"
                client.create_bucket(Bucket=bucket)
                before = moto_requests(log)
                secs, rss = measure([FDL, "clone", root, f"s3://{bucket}/repo", "-q"])
                up.fdl.append(secs)
                up.fdl_rss.append(rss)
                up.extra["requests"] = moto_requests(log) - before
                client.create_bucket(Bucket=f"{bucket}-peer")
                secs, rss = measure([sys.executable, script, "up", f"{bucket}-peer", "repo/", root])
                up.peer.append(secs)
                up.peer_rss.append(rss)
                dst = tmp / f"s3-clone-{h}-{i}"
                os.environ["FDL_CACHE_DIR"] = str(tmp / f"s3-clone-cache-{h}-{i}")
                before = moto_requests(log)
                secs, rss = measure([FDL, "clone", f"s3://{bucket}/repo", dst, "-q"])
                down.fdl.append(secs)
                down.fdl_rss.append(rss)
                down.extra["requests"] = moto_requests(log) - before
                peer_dst = tmp / f"s3-peer-{h}-{i}"
                secs, rss = measure([sys.executable, script, "down", bucket, "repo/", peer_dst])
                down.peer.append(secs)
                down.peer_rss.append(rss)
                shutil.rmtree(dst)
                shutil.rmtree(peer_dst)
            up.extra.update(extra)
            down.extra.update(extra)
            rows += [up, down]
    finally:
        os.environ.clear()
        os.environ.update(saved)
        server.stop()


def bench_verify(tmp, made, reps, rows):
    """fdl verify of a whole repository at each history length against
    sha256sum of the same files (every file of versions/ and data/: what
    the default depth reads, each once), and --deep (every catalog opened
    and derived again, issue 54) against the same floor."""
    for h in sorted(made):
        if h < 30 and len(made) > 1:
            continue  # the smallest history adds nothing the others do not show
        root, _ = made[h]
        vfiles = [p for p in (root / "versions").rglob("*") if p.is_file()]
        dfiles = [p for p in (root / "data").rglob("*") if p.is_file()]
        lst = tmp / f"verify-files-{h}.txt"
        lst.write_text("\0".join(map(str, vfiles + dfiles)) + "\0")
        floor = ["sh", "-c", f"xargs -0 sha256sum < '{lst}' > /dev/null"]
        name = "sha256sum of versions/ and data/ (what verify hashes)"
        size = f"{h} versions, {files_bytes(vfiles) >> 20} MiB of versions, {files_bytes(dfiles) >> 20} MiB of data"
        row = Row("verify a whole repository", size, ">= 0.67x sha256sum of the same files")
        alternate(row, reps, [FDL, "verify", root], floor, peer_name=name)
        rows.append(row)
        cold_row(rows, row, max(1, reps // 2) + 1, [FDL, "verify", root], floor, name)
        deep = Row("verify --deep (every catalog derived again)", size, "no slower than verify was before issue 54")
        alternate(deep, max(1, reps // 2) + 1, [FDL, "verify", root, "--deep"], floor, peer_name=name)
        rows.append(deep)


# ---- frozen-ducklake 0.11.0, the format author's earlier CLI (issue 28) ----------------

PEER = ROOT / "deps" / "peer-venv" / "bin" / "fdl"
PEER_HOME = ROOT / "deps" / "peer-home"


def peer(proj, *args):
    """frozen-ducklake's `fdl` (called by its venv path: fdl's own CLI has
    the same name) in its project folder, with HOME=deps/peer-home, where
    scripts/setup-bench.sh put the pinned extensions its INSTALL looks for."""
    return ["env", "-C", str(proj), f"HOME={PEER_HOME}", "NO_COLOR=1", "COLUMNS=200", str(PEER), *map(str, args)]


def peer_project(tmp, name, public_url=None):
    """A frozen-ducklake project publishing to a folder: (project, target
    folder, the folder the pushed catalog is in, a connection to its SQLite
    working catalog as `lake`). Snapshot expiry is off
    (maintenance.snapshot_retention_days = false): fdl keeps every
    snapshot, so both sides publish the same catalog."""
    proj, pub = tmp / name, tmp / f"{name}-pub"
    proj.mkdir()
    pub.mkdir()
    run(peer(proj, "init", "bench", "--target-url", pub, "--public-url", public_url or pub,
             "--target-name", "default"))
    run(peer(proj, "config", "maintenance.snapshot_retention_days", "false"))
    con = connect(f"ATTACH 'ducklake:{proj}/.fdl/default/ducklake.sqlite' AS lake (META_TYPE 'sqlite', "
                  f"DATA_PATH '{pub}/bench/ducklake.duckdb.files/', OVERRIDE_DATA_PATH true)")
    return proj, pub, pub / "bench", con


def fill_both(con, n):
    """10 tables of 1,000 rows, then n snapshots of one row each."""
    for t in range(10):
        con.execute(f"CREATE TABLE lake.t{t} AS SELECT i::BIGINT AS k, 'row ' || i AS v FROM range(1000) r(i)")
    fill_snapshots(con, n)


def read_sql(attach, table="t0"):
    return f"{LOADS}{attach}\nSELECT count(*) + sum(k) FROM lake.{table};\n"


def stock_sql(text):
    """SQL fdl printed, to run in stock DuckDB (sqlrun), which loads the
    pinned extension files itself (LOADS) instead of INSTALL."""
    lines = []
    for line in text.splitlines():
        for ext, name in (("httpfs", "httpfs"), ("ducklake", "ducklake"), ("sqlite", "sqlite_scanner")):
            if f"LOAD {ext};" in line or f"INSTALL {ext};" in line:
                line = line.replace(f"INSTALL {ext};", "").replace(f"LOAD {ext};", f"LOAD '{ext_path(name)}';")
        lines.append(line)
    return "\n".join(lines)


def fdl_attach_sql(target):
    """`fdl attach`'s SQL, to run in stock DuckDB (sqlrun)."""
    return stock_sql(run([FDL, "attach", target]))


def serve_url(proc):
    line = proc.stdout.readline()
    return line.split(" at ")[1].split()[0].rstrip("/")


def wait_http(url):
    import urllib.request
    for _ in range(200):
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except Exception:  # noqa: BLE001  (not up yet)
            time.sleep(0.05)
    raise RuntimeError(f"{url} never answered")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_peer(tmp, sizes, reps, rows, read_at, big_gib):
    """fdl commit against frozen-ducklake's push after a one-row change, on
    a working catalog of N snapshots; the published latest version read by
    stock DuckDB from each layout, over a folder and over each one's serve;
    the first publish of a big table. Without frozen-ducklake (not
    installed: scripts/setup-bench.sh) fdl's commit and its floors still run."""
    have_peer = PEER.exists()
    if not have_peer:
        print("(frozen-ducklake is not installed: run scripts/setup-bench.sh; no frozen-ducklake rows)")
    for n in sizes:
        root = new_repo(tmp, f"peer-fdl-{n}")
        work = tmp / f"peer-fdl-{n}-work"
        ours = connect(checkout(root, work))
        fill_both(ours, n)
        run([FDL, "commit", work, "-m", "first", "-q"])
        theirs = None
        if have_peer:
            proj, pub, site, theirs = peer_project(tmp, f"peer-fd-{n}")
            fill_both(theirs, n)
            run(peer(proj, "push", "default"))
        k = [10 ** 9]

        def one_row(which):
            k[0] += 1
            (ours if which == "fdl" else theirs).execute(f"INSERT INTO lake.t1 VALUES ({k[0]}, 'one more')")
        row = Row("publish after a one-row change", f"{n} snapshots, 10 tables",
                  "faster than frozen-ducklake's push (which keeps no history)")
        alternate(row, reps, ["env", "FDL_PREVIEW_AT_COMMIT=1", FDL, "commit", work, "-m", "one row", "-q"],
                  peer(proj, "push", "default") if have_peer else None, one_row, "frozen-ducklake 0.11.0 fdl push")
        vdir = root / "versions" / (root / "refs/heads/main").read_text().strip()
        row.extra["fdl_version_bytes"] = files_bytes(vdir.iterdir())
        if have_peer:
            row.extra["peer_catalog_bytes"] = (site / "ducklake.duckdb").stat().st_size
        rows.append(row)
        commit_floors(tmp, n, vdir, row, rows, reps)
        if have_peer and n in read_at:
            bench_peer_read(tmp, rows, reps, n, root, proj, pub, site, theirs)
        ours.close()
        shutil.rmtree(root)
        shutil.rmtree(work)
        if have_peer:
            theirs.close()
            shutil.rmtree(proj)
            shutil.rmtree(pub)
    if big_gib and have_peer:
        bench_peer_big(tmp, rows, big_gib)


def commit_floors(tmp, n, vdir, commit, rows, reps):
    """Issue 54: the floors of the one-row commit (`commit`, measured just
    before), measured in the same run: DuckDB's own start with the two
    extensions a commit loads (sqlrun: LOAD ducklake and sqlite_scanner,
    SELECT 1), and what stock DuckDB alone needs to copy the version's
    catalog into a new file and checkpoint it, plus writing its files.json
    (`vdir`: the version the last commit wrote)."""
    start = tmp / "floor-start.sql"
    start.write_text(f"{LOADS}SELECT 1;\n")
    row = Row("one-row commit floor: DuckDB's start with the two extensions", f"{n} snapshots",
              "the commit within 1.6x (ratio >= 0.625) at 10 snapshots")
    alternate(row, reps, None, [SQLRUN, start], peer_name="sqlrun: LOAD ducklake, sqlite_scanner; SELECT 1")
    row.fdl, row.fdl_rss = commit.fdl[:], commit.fdl_rss[:]
    rows.append(row)
    dst = tmp / "floor-copy.duckdb"
    copy = tmp / "floor-copy.sql"
    copy.write_text(f"ATTACH '{vdir}/ducklake.duckdb' AS src (READ_ONLY); ATTACH '{dst}' AS dst;\n"
                    "COPY FROM DATABASE src TO dst; CHECKPOINT dst; DETACH dst;\n")
    script = (f"rm -f '{dst}' '{dst}.wal' && '{SQLRUN}' '{copy}' && "
              f"cat '{vdir}/files.json' > '{tmp}/floor-files.json'")
    row = Row("one-row commit floor: the catalog copied by hand", f"{n} snapshots",
              "the commit within 1.2x (ratio >= 0.83) at 10,000 snapshots")
    alternate(row, reps, None, ["sh", "-c", script],
              peer_name="sqlrun: COPY FROM DATABASE + CHECKPOINT, and files.json written")
    row.fdl, row.fdl_rss = commit.fdl[:], commit.fdl_rss[:]
    row.extra["catalog_bytes"] = (vdir / "ducklake.duckdb").stat().st_size
    row.extra["files_json_bytes"] = (vdir / "files.json").stat().st_size
    rows.append(row)


def bench_peer_read(tmp, rows, reps, n, root, proj, pub, site, theirs):
    """Stock DuckDB reads the published latest version: a folder, then HTTP
    (fdl serve against frozen-ducklake's serve, the same rows)."""
    size = f"{n} snapshots, latest version"
    ours_sql, theirs_sql = tmp / "read-fdl.sql", tmp / "read-peer.sql"
    ours_sql.write_text(read_sql(fdl_attach_sql(str(root))))
    theirs_sql.write_text(read_sql(f"ATTACH 'ducklake:{site}/ducklake.duckdb' AS lake (READ_ONLY);"))
    got = [run([SQLRUN, ours_sql]).strip(), run([SQLRUN, theirs_sql]).strip()]
    if got[0] != got[1]:
        raise RuntimeError(f"the two layouts answer differently: fdl {got[0]}, frozen-ducklake {got[1]}")
    row = Row("read the latest version, stock DuckDB (folder)", size, "as fast as frozen-ducklake's layout")
    alternate(row, reps, [SQLRUN, ours_sql], [SQLRUN, theirs_sql], peer_name="frozen-ducklake's layout")
    rows.append(row)
    # over HTTP: each side's own server; frozen-ducklake's catalog names
    # its public URL as its data path, so it is pushed again for that URL
    port = free_port()
    run(peer(proj, "config", "targets.default.public_url", f"http://127.0.0.1:{port}"))
    run(peer(proj, "push", "default"))
    theirs_srv = subprocess.Popen(peer(proj, "serve", "default", "--port", port), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=env())
    ours_srv = subprocess.Popen([FDL, "serve", root, "--port", "0", "-q", "--no-page"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=env())
    try:
        url = serve_url(ours_srv)
        wait_http(f"http://127.0.0.1:{port}/bench/ducklake.duckdb")
        ours_sql.write_text(read_sql(fdl_attach_sql(url)))
        theirs_sql.write_text(read_sql(
            "LOAD '" + str(ext_path("httpfs")) + "';\n"
            f"ATTACH 'ducklake:http://127.0.0.1:{port}/bench/ducklake.duckdb' AS lake (READ_ONLY);"))
        got = [run([SQLRUN, ours_sql]).strip(), run([SQLRUN, theirs_sql]).strip()]
        if got[0] != got[1]:
            raise RuntimeError(f"the two hosts answer differently: fdl {got[0]}, frozen-ducklake {got[1]}")
        row = Row("read the latest version, stock DuckDB (HTTP)", size, "as fast as frozen-ducklake's serve")
        alternate(row, reps, [SQLRUN, ours_sql], [SQLRUN, theirs_sql], peer_name="frozen-ducklake's fdl serve")
        rows.append(row)
    finally:
        for p in (ours_srv, theirs_srv):
            p.terminate()
            p.wait()


def bench_peer_big(tmp, rows, gib):
    """The first publish of one big table (written by stock DuckDB into each
    side's working catalog, untimed): one run each."""
    rows_n = int(gib * (1 << 30) / 64)
    make = (f"CREATE TABLE lake.big AS SELECT range AS k, md5(range::VARCHAR) || md5((range * 7)::VARCHAR) AS v "
            f"FROM range({rows_n})")
    root = new_repo(tmp, "peer-big")
    work = tmp / "peer-big-work"
    con = connect(checkout(root, work))
    con.execute(make)
    con.close()
    row = Row("first publish of a big table", "", "faster than frozen-ducklake's push")
    s, r = measure([FDL, "commit", work, "-m", "big", "-q"])
    row.fdl, row.fdl_rss = [s], [r]
    row.size = f"{files_bytes(list((root / 'data').rglob('*'))) / (1 << 30):.2f} GiB table"
    shutil.rmtree(root)
    shutil.rmtree(work)
    proj, pub, _, con = peer_project(tmp, "peer-big-fd")
    con.execute(make)
    con.close()
    s, r = measure(peer(proj, "push", "default"))
    row.peer, row.peer_rss, row.peer_name = [s], [r], "frozen-ducklake 0.11.0 fdl push"
    rows.append(row)
    shutil.rmtree(proj)
    shutil.rmtree(pub)


def bench_memory(tmp, gib, rows):
    """commit peak memory with one big table (gib GiB of Parquet)."""
    root = new_repo(tmp, "big")
    work = tmp / "big-work"
    con = connect(checkout(root, work))
    rows_n = int(gib * (1 << 30) / 64)
    con.execute(f"CREATE TABLE lake.big AS SELECT range AS k, md5(range::VARCHAR) || md5((range * 7)::VARCHAR) AS v "
                f"FROM range({rows_n})")
    con.close()
    s, r = measure([FDL, "commit", work, "-m", "big", "-q"])
    # sized after the commit: until then the files sit in the working
    # catalog's own folder (work/<id>/), not under data/
    row = Row("commit peak memory", f"{files_bytes(list((root / 'data').rglob('*'))) / (1 << 30):.2f} GiB table",
              "< 100 MiB")
    row.fdl, row.fdl_rss, row.peer_name = [s], [r], "-"
    rows.append(row)


def bench_keep_published(tmp, nfiles, reps, rows, baseline):
    """Issue 42's cost: a commit adding `nfiles` data files (as many
    snapshots), written into the working catalog's folder work/<id>/ and
    published by a hard link each, the catalog's rows settled, the copies
    removed; the peer is `baseline`, an fdl built from before issue 42
    (FDL_BASELINE_BIN), whose working catalog wrote them into data/ and
    whose commit only read them. Each side's repository and working folder
    are put back between runs."""
    sides = {}
    for which, binary in (("fdl", FDL), ("peer", baseline)):
        root, work = tmp / f"keep-{nfiles}-{which}", tmp / f"keep-{nfiles}-{which}-work"
        run([binary, "init", root])
        con = connect(run([binary, "checkout", root, work]))
        con.execute("CREATE TABLE lake.t (k BIGINT)")
        con.execute("INSERT INTO lake.t VALUES (0)")
        run([binary, "commit", work, "-m", "base", "-q"])
        for i in range(nfiles):
            con.execute(f"INSERT INTO lake.t VALUES ({i + 1})")
        con.close()
        saved = tmp / f"keep-{nfiles}-{which}-saved"
        shutil.copytree(root, saved / "root")
        shutil.copytree(work, saved / "work")
        sides[which] = (root, work, saved)

    def before(which):
        root, work, saved = sides[which]
        for src, dst in ((saved / "root", root), (saved / "work", work)):
            shutil.rmtree(dst)
            shutil.copytree(src, dst)
    row = Row("commit publishing its new files from work/<id>/", f"{nfiles} files",
              "the protection costs a commit at most 1.5x")
    alternate(row, reps, [FDL, "commit", sides["fdl"][1], "-m", "bench", "-q"],
              [baseline, "commit", sides["peer"][1], "-m", "bench", "-q"], before, "fdl before issue 42")
    rows.append(row)


def bench_rebase(tmp, history, replayed, reps, rows):
    """fdl rebase of a working folder that made `replayed` snapshots (appends,
    the last two deleting rows from its first file, so one delete file is
    written again) on a branch of `history` snapshots, after another
    publisher's one-row version; the peer is what a loser did before: check
    out again and redo the change (here the same statements, by stock
    DuckDB with no Python in between)."""
    root = new_repo(tmp, f"rb-{history}-{replayed}")
    base, winner, loser = (tmp / f"rb-{history}-{replayed}-{w}" for w in ("base", "winner", "loser"))
    con = connect(checkout(root, base))
    fill_snapshots(con, history)
    con.close()
    run([FDL, "commit", base, "-m", "history", "-q"])
    con = connect(checkout(root, winner))
    con.execute("INSERT INTO lake.t0 VALUES (-1, 'the winner')")
    con.close()
    attach = checkout(root, loser)
    redo = [f"INSERT INTO lake.t1 SELECT -1000 * {i} - range, 'loser' FROM range(100)" for i in range(1, replayed - 1)]
    redo += ["DELETE FROM lake.t1 WHERE k = -1005", "DELETE FROM lake.t1 WHERE k = -1006"]
    con = connect(attach)
    for sql in redo:
        con.execute(sql)
    con.close()
    run([FDL, "commit", winner, "-m", "the winner", "-q"])
    golden = tmp / f"rb-{history}-{replayed}-golden"
    shutil.copytree(loser, golden)
    # the loser's new data and delete files are staged in the repository's
    # work/<id>/, which a rebase rewrites (a delete file written again with
    # its snapshot ids moved): put back with the working catalog
    staged = tmp / f"rb-{history}-{replayed}-staged"
    shutil.copytree(root / "work", staged)
    n = [0]

    def restore(which):
        if which == "fdl":
            shutil.rmtree(loser)
            shutil.copytree(golden, loser)
            shutil.rmtree(root / "work")
            shutil.copytree(staged, root / "work")

    def peer_cmd():
        n[0] += 1
        dest = tmp / f"rb-redo-{history}-{replayed}-{n[0]}"
        script = tmp / f"rb-redo-{history}-{replayed}-{n[0]}.sql"
        script.write_text(LOADS + attach.replace(str(loser), str(dest)) + "\n" + ";\n".join(redo) + ";\n")
        return ["sh", "-c", f"'{FDL}' checkout '{root}' '{dest}' > /dev/null && '{SQLRUN}' '{script}'"]
    row = Row("rebase", f"{replayed} snapshots on {history}", "faster than checking out again and redoing")
    alternate(row, reps, [FDL, "rebase", loser], peer_cmd, before=restore,
              peer_name="fdl checkout + the change redone in stock DuckDB")
    restore("fdl")
    report = json.loads(run([FDL, "rebase", golden, "--json"]))
    row.extra["delete_files_written"] = report["delete_files"]
    rows.append(row)


def startup(rows, reps, tmp):
    """the fixed cost of a command: --version (no repository, no DuckDB)."""
    row = Row("start-up (fdl --version)", "-", "small against git --version")
    alternate(row, reps, [FDL, "--version"], ["git", "--version"], peer_name="git --version")
    rows.append(row)


# ---- report ---------------------------------------------------------------------------------

def fmt_s(x):
    return "-" if x is None else (f"{x * 1000:.1f} ms" if x < 1 else f"{x:.2f} s")


def bench_page(tmp, reps, rows, tables=50):
    """The page's landing card of a 50-table dataset: time from navigation to
    ready in headless Chromium (web/test/timing.mjs), served by fdl serve;
    the issue's target (1 s) is the reference."""
    node = shutil.which("node")
    if not node or not (ROOT / "build" / "web" / "index.html").exists():
        print("page: skipped (node or build/web missing: make web)", file=sys.stderr)
        return
    root = new_repo(tmp, "page-repo")
    work = tmp / "page-work"
    con = connect(checkout(root, work))
    for i in range(tables):
        con.execute(f"CREATE TABLE lake.t{i:02d} (id INTEGER, name VARCHAR, value DOUBLE)")
        con.execute(f"INSERT INTO lake.t{i:02d} SELECT i, 'n' || i, i * 1.5 FROM range(1000) t(i)")
    con.close()
    run([FDL, "commit", work, "-m", "tables", "-q"])
    srv = subprocess.Popen([FDL, "serve", root, "--port", "0", "-q"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, env=env())
    try:
        line = srv.stdout.readline()
        url = line.split(" at ")[1].split()[0]
        p = subprocess.run([node, str(ROOT / "web" / "test" / "timing.mjs"), url, str(max(reps, 3))],
                           capture_output=True, text=True, cwd=ROOT / "web", timeout=300)
    finally:
        srv.terminate()
        srv.wait(10)
    if p.returncode != 0:
        print(f"page: timing failed: {p.stderr[-500:]}", file=sys.stderr)
        return
    got = json.loads(p.stdout.strip().splitlines()[-1])
    row = Row("page: first render of the landing card", f"{tables} tables", "under 1 s")
    row.fdl = [t / 1000 for t in got["times"]]
    row.peer = [1.0] * len(row.fdl)
    row.peer_name = "the target (1 s)"
    rows.append(row)

def bench_preview(tmp, reps, rows, big_mib):
    """Issue 58: a one-row commit in a repository that keeps previews (its
    first parent has one, so each commit writes its version's) against the
    same commit in a clone of it without previews (one that never ran fdl
    preview: its commits write none), alternating, each with a working
    catalog of its own (10 tables at 10 snapshots; a table of big_mib MiB,
    above the commit's bound on statistics, changed by one row); and the
    time from navigation to the landing card's first rows drawn, from a
    static host 50 ms away, cold, against the issue's target (0.5 s).
    Each side goes on from its own last commit, as it would in use: one
    repository alternating both (FDL_PREVIEW_AT_COMMIT) would give every
    commit with a preview a parent without one."""
    small_root, small_work = new_repo(tmp, "preview-small"), tmp / "preview-small-work"
    con = connect(checkout(small_root, small_work))
    fill_snapshots(con, 10)
    con.close()
    run([FDL, "commit", small_work, "-m", "ten snapshots", "-q"])
    big_root, big_work = new_repo(tmp, "preview-big"), tmp / "preview-big-work"
    big = connect(checkout(big_root, big_work))
    # md5 text barely compresses: about 75 bytes of Parquet a row
    big.execute("CREATE TABLE lake.big AS SELECT i AS id, md5(i::VARCHAR) || md5((i * 7)::VARCHAR) AS s"
                f" FROM range({big_mib * 14000}) r(i)")
    big.close()
    run([FDL, "commit", big_work, "-m", "big", "-q"])
    big_bytes = files_bytes((big_root / "data").rglob("*.parquet"))
    for label, root, table in (("10 snapshots, 10 tables", small_root, "t0"),
                               (f"{big_bytes / 2**20:.0f} MiB table", big_root, "big")):
        row = Row("one-row commit, preview on", label, "at most 10% more than without")
        plain = tmp / (root.name + "-without")
        run([FDL, "clone", root, plain])
        shutil.rmtree(plain / "previews", ignore_errors=True)  # a repository that never ran fdl preview
        run([FDL, "preview", root])  # from now on, each commit here writes its version's
        sides = {}
        for which, r in (("fdl", root), ("peer", plain)):
            work = tmp / (r.name + "-one")
            sides[which] = (work, connect(checkout(r, work)))
        k = [10**9]

        def one(which, table=table):
            k[0] += 1
            c = sides[which][1]
            cols = [r[0] for r in c.execute(f"SELECT column_name FROM (DESCRIBE lake.{table})").fetchall()]
            c.execute(f"INSERT INTO lake.{table} ({cols[0]}) VALUES ({k[0]})")
        before = len(list((root / "previews").glob("*.json")))
        alternate(row, reps, [FDL, "commit", sides["fdl"][0], "-m", "one row", "-q"],
                  [FDL, "commit", sides["peer"][0], "-m", "one row", "-q"], one,
                  "the same commit in a clone without previews")
        for _, c in sides.values():
            c.close()
        # the measured side wrote one a commit, the other none, or the row is void
        if len(list((root / "previews").glob("*.json"))) != before + reps or (plain / "previews").exists():
            raise RuntimeError(f"{root}: not one preview a commit on one side and none on the other")
        rows.append(row)
    node = shutil.which("node")
    if not node or not (ROOT / "build" / "web" / "index.html").exists():
        print("preview page: skipped (node or build/web missing: make web)", file=sys.stderr)
        return
    first_rows_rows(tmp, node, small_root, reps, rows)


def bench_first_rows(tmp, reps, rows):
    """bench_preview's page rows alone, over the same kind of repository (10
    tables at 10 snapshots, its preview written by fdl preview)."""
    node = shutil.which("node")
    if not node or not (ROOT / "build" / "web" / "index.html").exists():
        print("preview page: skipped (node or build/web missing: make web)", file=sys.stderr)
        return
    root, work = new_repo(tmp, "first-rows"), tmp / "first-rows-work"
    con = connect(checkout(root, work))
    fill_snapshots(con, 10)
    con.close()
    run([FDL, "commit", work, "-m", "ten snapshots", "-q"])
    run([FDL, "preview", root])
    first_rows_rows(tmp, node, root, reps, rows)


FIRST_ROWS = '#card-tables .viewer[data-source="preview"][data-rows]'


def first_rows_load(tmp, node, site, reps):
    """timing.mjs over `site` on a static host 50 ms away: its answer, and
    the requests a load."""
    host = DelayedHost(site, delay=0.05)
    try:
        p = subprocess.run([node, str(ROOT / "web" / "test" / "timing.mjs"), host.url + "/", str(max(reps, 3)),
                            FIRST_ROWS], capture_output=True, text=True, cwd=ROOT / "web", timeout=600)
    finally:
        host.close()
    if p.returncode != 0:
        print(f"preview page: timing failed: {p.stderr[-500:]}", file=sys.stderr)
        return None, 0
    got = json.loads(p.stdout.strip().splitlines()[-1])
    return got, host.count // len(got["times"])


def first_rows_rows(tmp, node, root, reps, rows):
    """Issue 58: the time from navigation to the landing card's first rows
    painted (in the page: the first frame holding them), cold, from a static
    host 50 ms away, against the issue's target (0.5 s): the repository's own
    page (`fdl site`: index.html holds the rows; the script, _fdl/ alone
    copied beside it, takes over) and the script's page (web/index.html, a
    repository without pages), each with the floor: the same host serving
    one HTML page that already holds the drawn rows."""
    floor = tmp / "preview-floor"
    floor.mkdir()
    (floor / "index.html").write_text('<!doctype html><div id="card-tables"><div class="viewer" '
                                      'data-source="preview" data-rows="20">first rows</div></div>')
    script = tmp / "preview-site"
    shutil.copytree(root, script, copy_function=os.link)
    shutil.copytree(ROOT / "build" / "web", script, dirs_exist_ok=True)
    pages = tmp / "preview-pages"
    shutil.copytree(root, pages)  # fdl site writes into it: no link to the source's files
    run([FDL, "site", pages])
    shutil.copytree(ROOT / "build" / "web" / "_fdl", pages / "_fdl")
    for label, site in (("10 tables, the repository's page (fdl site)", pages),
                        ("10 tables, the script's page (no fdl site)", script)):
        got, requests = first_rows_load(tmp, node, site, reps)
        low, _ = first_rows_load(tmp, node, floor, reps)
        if not got:
            continue
        row = Row("page: time to first rows (preview), host 50 ms away (cold)", label, "under 0.5 s")
        row.fdl = [t / 1000 for t in got["times"]]
        row.peer = [0.5] * len(row.fdl)
        row.peer_name = "the target (0.5 s)"
        row.extra["requests a load"] = requests
        row.extra["HTML's last byte (median)"] = f"{got['html']} ms"
        row.extra["first contentful paint (median)"] = f"{got['fcp']} ms"
        row.extra["seen by playwright's polling waitForSelector (median)"] = f"{got['wall']['median']} ms"
        if low:
            row.extra["floor: one HTML page holding the rows, same host (median; polled)"] = \
                f"{low['median']} ms; {low['wall']['median']} ms"
        rows.append(row)


def report(rows, mode, started):
    lines = [f"# fdl benchmark ({mode})", "",
             f"{platform.node()}: {os.cpu_count()} cores, {platform.platform()}, "
             f"{subprocess.run([FDL, '--version'], capture_output=True, text=True).stdout.strip()}, "
             f"DuckDB {duckdb.__version__}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"{time.time() - started:.0f} s", "",
             "| operation | size | fdl (median) | peer | peer (median) | peer / fdl | fdl peak RSS | peer peak RSS | target |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d = r.as_dict()
        ratio = "-" if d["ratio"] is None else f"{d['ratio']:.2f}"
        lines.append(f"| {d['op']} | {d['size']} | {fmt_s(d['fdl_s'])} | {d['peer']} | {fmt_s(d['peer_s'])} | {ratio} | "
                     f"{d['fdl_rss_mib'] or 0:.0f} MiB | {(d['peer_rss_mib'] or 0):.0f} MiB | {d['target']} |")
    if CAN_DROP[0] is False:
        lines += ["", "Cold cache: not measured in this run (" + (COLD_OFF[0] or
                  "dropping the page cache needs root: /proc/sys/vm/drop_caches is not writable") + ")."]
    elif CAN_DROP[0]:
        lines += ["", "Rows marked (cold cache) drop the page cache, dentries and inodes before every run of "
                  "either side; the others run warm."]
    extras = [(r.op, r.size, r.extra) for r in rows if r.extra]
    if extras:
        lines += ["", "| operation | size | measured |", "|---|---|---|"]
        for op, size, e in extras:
            lines.append(f"| {op} | {size} | " + ", ".join(f"{k} {v}" for k, v in e.items()) + " |")
    return "\n".join(lines) + "\n"


def plot(rows, mode):
    if not shutil.which("gnuplot"):
        print("(gnuplot not installed: no plot)")
        return
    series = {"commit (freeze)": [], "one-row commit": [], "log (whole)": [], "checkout": []}
    for r in rows:
        d = r.as_dict()
        if d["op"] in series and d["fdl_s"]:
            size = int(str(d["size"]).split()[1 if d["op"] == "one-row commit" else 0])
            series[d["op"]].append((size, d["fdl_s"]))
    data = OUT / f"{mode}.dat"
    with open(data, "w") as f:
        for name, pts in series.items():
            f.write(f'"{name}"\n')
            for x, y in sorted(pts):
                f.write(f"{x} {y}\n")
            f.write("\n\n")
    script = (f"set terminal png size 900,540; set output '{OUT / (mode + '.png')}'; set logscale xy; "
              "set xlabel 'size (snapshots, versions or data files)'; set ylabel 'seconds (median)'; "
              "set key left top; set grid; "
              f"plot for [i=0:{len(series) - 1}] '{data}' index i using 1:2 with linespoints title columnheader(1)")
    subprocess.run(["gnuplot", "-e", script], check=False)
    print(f"plot: {OUT / (mode + '.png')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke test of every row")
    ap.add_argument("--smoke", action="store_true",
                    help="the smallest sizes, each run once: that every row still runs (tests/interop/test_bench.py)")
    ap.add_argument("--only", help="run only the rows whose operation contains this (several: comma-separated)")
    ap.add_argument("--histories", help="the history lengths of the one-row, query, verify and clone rows "
                    "(comma-separated, e.g. 30,1000)")
    ap.add_argument("--snapshots", help="the snapshot counts of the publish rows and the commit's floors "
                    "(comma-separated, e.g. 10,10000)")
    ap.add_argument("--out", help=f"where the report goes (default: {OUT})")
    a = ap.parse_args()
    a.quick = a.quick or a.smoke
    out = pathlib.Path(a.out) if a.out else OUT
    if a.smoke or os.environ.get("BENCH_NO_COLD") == "1":
        # a smoke test, or a machine shared with others: no cache dropped under them
        CAN_DROP[0] = False
        COLD_OFF[0] = "--smoke" if a.smoke else "BENCH_NO_COLD=1"
    mode = "smoke" if a.smoke else "quick" if a.quick else "full"
    reps = 1 if a.smoke else 3 if a.quick else 5
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    rows = []
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="fdl-bench-"))
    want = lambda op: not a.only or any(w and w in op for w in a.only.split(","))  # noqa: E731
    histories = [int(h) for h in a.histories.split(",")] if a.histories else \
        [3] if a.smoke else [10, 30] if a.quick else [10, 100, 1000]
    try:
        if want("start"):
            startup(rows, reps * 4, tmp)
        base = None
        if want("freeze"):
            base = bench_freeze(tmp, [10] if a.smoke else [10, 100] if a.quick else [10, 100, 1000, 10000], reps, rows)
        if want("hash"):
            bench_hash_commit(tmp, 1 if a.smoke else 10 if a.quick else int(os.environ.get("BENCH_HASH_MB", "100")), reps, rows)
        made = {}
        if want("one-row") or want("query") or want("verify") or want("clone") or want("iceberg"):
            made = bench_one_row(tmp, histories, reps, rows,
                                 payload=0 if a.quick else 1 << 20)
        if want("log"):
            bench_log(tmp, [10] if a.smoke else [10, 1000] if a.quick else [10, 1000, 10000], reps, rows)
        if want("remote"):
            bench_remote_history(tmp, [20] if a.smoke else [100] if a.quick else [100, 1000, 10000], reps, rows)
        if want("checkout"):
            bench_checkout(tmp, 10 if a.smoke else 100 if a.quick else 10000, reps, rows, base)
        if made and want("query"):
            bench_query(tmp, made, reps, rows)
        if made and want("verify"):
            bench_verify(tmp, made, reps, rows)
        if made and want("clone"):
            bench_clone(tmp, made, reps, rows)
            bench_clone_s3(tmp, made, reps, rows)
        if made and want("iceberg"):
            bench_iceberg(tmp, made, reps, rows)
        if want("publish") or want("read the latest") or want("big") or want("one-row commit floor"):
            snapshots = [int(n) for n in a.snapshots.split(",")] if a.snapshots else \
                [10] if a.quick else [10, 100, 1000, 10000]
            bench_peer(tmp, snapshots, reps, rows,
                       read_at=[10] if a.quick else [10, 1000], big_gib=0 if a.quick else 1)
        baseline = os.environ.get("FDL_BASELINE_BIN")
        if baseline and want("work/<id>"):
            for nfiles in ([1, 100] if a.quick else [1, 100, 1000]):
                bench_keep_published(tmp, nfiles, reps, rows, baseline)
        if want("rebase"):
            for history, replayed in ([(10, 2)] if a.smoke else [(100, 10)] if a.quick else [(1000, 10), (1000, 100)]):
                bench_rebase(tmp, history, replayed, reps, rows)
        if want("page"):
            bench_page(tmp, reps, rows)
        if want("preview"):
            bench_preview(tmp, reps, rows, 16 if a.smoke else 64 if a.quick else 1024)
        elif want("first rows"):  # the page rows alone: --only "first rows"
            bench_first_rows(tmp, reps, rows)
        if not a.quick and want("memory"):
            bench_memory(tmp, 5, rows)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = report(rows, mode, started)
    print(text)
    (out / f"{mode}.md").write_text(text)
    (out / f"{mode}.json").write_text(json.dumps([r.as_dict() for r in rows], indent=2))
    if not a.smoke:
        plot(rows, mode)


if __name__ == "__main__":
    main()
