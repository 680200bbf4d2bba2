"""Iceberg views (fdl iceberg, docs/iceberg.md) read by the real engines:
PySpark 4.0.1 with Iceberg 1.10.0 (conftest's spark: one local[1] session
a worker, tables registered in a JdbcCatalog on SQLite), pyiceberg 0.12.0, polars'
scan_iceberg (on folders) and DuckDB 1.5.5's iceberg_scan, on a folder and
on a bucket of the S3 server. Every
read is compared, column by column, with what stock DuckDB returns through
`fdl attach` for the same version."""
import datetime
import decimal
import hashlib
import itertools
import json
import os
import pathlib
import shutil

import duckdb
import pytest

import ledger as ledger_mod
from conftest import EXT, LEDGER_FDL, Repo, S3Repo, connect, fdl, fdl_setup, host_serves, host_stops, read_json
from conftest import JARS, SPARK_JARS  # noqa: F401 (test_private's Spark)

os.environ.setdefault("POLARS_ICEBERG_PLANNER", "pyiceberg")  # polars' own planner is another package


# ---- values as one spelling, whichever engine read them -------------------

def norm(v):
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return ("ts", v.isoformat())
    if isinstance(v, (datetime.date, datetime.time)):
        return ("t", v.isoformat())
    if isinstance(v, decimal.Decimal):
        return ("dec", str(v))
    if isinstance(v, float):
        return ("f", repr(v))
    if isinstance(v, (bytes, bytearray, memoryview)):
        return ("b", bytes(v).hex())
    if isinstance(v, dict):
        return tuple((k, norm(x)) for k, x in v.items())
    if hasattr(v, "asDict"):  # a Spark Row (a struct)
        return tuple((k, norm(x)) for k, x in v.asDict().items())
    if isinstance(v, (list, tuple)):
        return ("list", tuple(norm(x) for x in v))
    return v


def normalised(rows):
    return sorted((tuple(norm(x) for x in r) for r in rows), key=repr)


def duck_rows(con, source, columns):
    """Rows of `source` in stock DuckDB, TIMESTAMPTZ as UTC wall time (the
    venv has no pytz), columns in the given order."""
    con.execute("SET TimeZone = 'UTC'")
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {source})").fetchall())
    sel = ", ".join(f'"{c}"::TIMESTAMP' if types[c] == "TIMESTAMP WITH TIME ZONE" else f'"{c}"' for c in columns)
    return con.execute(f"SELECT {sel} FROM {source}").fetchall()


def expected(repo, ref, table):
    """What stock DuckDB returns through fdl attach: (columns, rows). The
    oracle, not the step under test: the ATTACH is printed by the release
    build (fdl_setup; attach runs under FDL_BIN in test_cli, test_reader)."""
    con = connect()
    con.execute(fdl_setup("attach", repo.root, ref, env=repo.env).stdout)
    cols = [r[0] for r in con.execute(f"SELECT column_name FROM (DESCRIBE lake.{table})").fetchall()]
    return cols, normalised(duck_rows(con, f"lake.{table}", cols))


# ---- the three readers ------------------------------------------------------

class Readers:
    registered = itertools.count(1)  # table names in Spark's catalog, one per registration

    def __init__(self, spark, s3=None):
        self.spark = spark
        self.s3 = s3  # the S3 server for a bucket repository

    def register(self, uri):
        name = f"cat.fdl.t{next(Readers.registered)}"
        self.spark.sql(f"CALL cat.system.register_table(table => '{name.split('.', 1)[1]}', "
                       f"metadata_file => '{uri}')")
        return name

    def spark_rows(self, uri, columns, **options):
        reader = self.spark.read
        for k, v in options.items():
            reader = reader.option(k, v)
        df = reader.table(self.register(uri)).select(*[f"`{c}`" for c in columns])
        return normalised(df.collect())

    def pyiceberg_table(self, uri):
        from pyiceberg.table import StaticTable
        props = {}
        if self.s3:
            env = self.s3.env()
            props = {"s3.endpoint": env["AWS_ENDPOINT_URL"], "s3.access-key-id": env["AWS_ACCESS_KEY_ID"],
                     "s3.secret-access-key": env["AWS_SECRET_ACCESS_KEY"], "s3.region": "us-east-1",
                     "s3.force-virtual-addressing": "false"}
        return StaticTable.from_metadata(uri, properties=props)

    def pyiceberg_rows(self, uri, columns, snapshot_id=None):
        t = self.pyiceberg_table(uri)
        table = t.scan(snapshot_id=snapshot_id).to_arrow().select(columns)
        return normalised(tuple(r[c] for c in columns) for r in table.to_pylist())

    def polars_rows(self, uri, columns):
        import polars as pl
        df = pl.scan_iceberg(self.pyiceberg_table(uri)).select(columns).collect()
        return normalised(df.rows())

    def duckdb_rows(self, uri, columns, secret_sql=""):
        con = connect()
        con.execute("LOAD iceberg")
        if secret_sql:
            con.execute(secret_sql)
        return normalised(duck_rows(con, f"iceberg_scan('{uri}')", columns))


def secret_of(repo):
    """The LOAD httpfs and CREATE SECRET lines fdl attach prints for a bucket
    (the release build's: the clients' set-up, not what is tested)."""
    sql = repo.setup("attach", repo.root).stdout if isinstance(repo, S3Repo) else ""
    return "\n".join(line for line in sql.splitlines() if not line.startswith("ATTACH") and line.strip())


def check_all(readers, repo, ref, views, secret=""):
    """Each table of the view read by Spark, pyiceberg and DuckDB equals
    stock DuckDB through fdl attach."""
    for table, uri in views.items():
        cols, want = expected(repo, ref, table)
        assert want, f"{table} at {ref} has rows to compare"
        assert readers.pyiceberg_rows(uri, cols) == want, f"pyiceberg {table}@{ref}"
        assert readers.duckdb_rows(uri, cols, secret) == want, f"duckdb {table}@{ref}"
        assert readers.spark_rows(uri, cols) == want, f"spark {table}@{ref}"
        if not readers.s3:
            assert readers.polars_rows(uri, cols) == want, f"polars {table}@{ref}"


# ---- the repository every test reads --------------------------------------

def build(repo):
    """Three versions: deletes, a rename, an added column, a list, a struct, a
    DECIMAL, a TIMESTAMPTZ, a second schema, an update; tag t2 on version 2.
    By the release build (fdl_setup): the scene of tests about the views and
    catalogs written of it afterwards (by FDL_BIN), not about these commits."""
    work = repo.tmp / "work"
    con = repo.checkout(work, setup=True)
    con.execute("""CREATE TABLE lake.people (id INTEGER, name VARCHAR, score DECIMAL(10, 2), seen TIMESTAMPTZ,
                   tags VARCHAR[], place STRUCT(city VARCHAR, zip INTEGER), born DATE, ratio DOUBLE, big BIGINT)""")
    con.execute("""INSERT INTO lake.people SELECT i, 'p' || i, i * 1.25, TIMESTAMPTZ '2024-03-01 12:00:00+00' +
                   INTERVAL (i) MINUTE, ['a' || i, 'b'], {'city': 'c' || (i % 3), 'zip': 1000 + i},
                   DATE '2000-01-01' + i::INTEGER, i / 4, i * 10000000000 FROM range(20) r(i)""")
    con.close()
    fdl_setup("commit", work, "-m", "v1", env=repo.env)
    con = repo.checkout(repo.tmp / "work2", setup=True)
    con.execute("DELETE FROM lake.people WHERE id % 5 = 0")
    con.execute("ALTER TABLE lake.people RENAME COLUMN name TO full_name")
    con.close()
    fdl_setup("commit", repo.tmp / "work2", "-m", "v2",
        env=repo.env)
    fdl_setup("tag", repo.root, "t2", env=repo.env)
    w3 = repo.tmp / "work3"
    con = repo.checkout(w3, setup=True)
    con.execute("ALTER TABLE lake.people ADD COLUMN note VARCHAR")
    con.execute("UPDATE lake.people SET score = score + 100, note = 'updated' WHERE id < 4")
    con.execute("INSERT INTO lake.people (id, full_name, note) VALUES (99, 'new', 'added')")
    con.execute("CREATE TABLE lake.sales (region VARCHAR, d DATE, amount INTEGER)")
    con.execute("ALTER TABLE lake.sales SET PARTITIONED BY (region, year(d))")
    con.execute("""INSERT INTO lake.sales SELECT ['north', 'south', NULL][i % 3 + 1], DATE '2019-06-30' + (200 * i)::INTEGER,
                   i::INTEGER FROM range(12) r(i)""")
    con.execute("CREATE SCHEMA lake.geo")
    con.execute("CREATE TABLE lake.geo.towns AS SELECT i AS code, 'town ' || i AS town FROM range(5) r(i)")
    con.close()
    fdl_setup("commit", w3, "-m", "v3", env=repo.env)


def sid(vid):
    """A version's Iceberg snapshot id (docs/iceberg.md): the first 16 hex
    digits of the sha256 of its id, the top two bits 01."""
    return int(hashlib.sha256(vid.encode()).hexdigest()[:16], 16) & (2**62 - 1) | 2**62


def sid_of(repo, ref):
    """The snapshot id of the version a ref (main:N, a tag) names (the
    oracle: fdl show by the release build, fdl_setup)."""
    return sid(json.loads(fdl_setup("show", f"{repo.root}@{ref}", "--json", env=repo.env).stdout)["id"])


def snap_seqs(meta):
    """The seqs of a metadata.json's snapshots, oldest first, each snapshot's
    id checked to be its version's."""
    for s in meta["snapshots"]:
        assert s["snapshot-id"] == sid(s["summary"]["fdl.version"]), s
    return [int(s["summary"]["fdl.seq"]) for s in meta["snapshots"]]


def views_json(repo, ref=None):
    target = f"{repo.root}@{ref}" if ref else str(repo.root)
    p = fdl("iceberg", target, "--json", env=repo.env)
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """build() on a folder, once for the module: the scene the folder tests start from, copied into each (scene_copy)
    before any view is written, with the checksums stock DuckDB took of
    its versions when they were published (.sums, .memo: ledger.adopt)."""
    tmp = tmp_path_factory.mktemp("built")
    led = ledger_mod.Ledger(LEDGER_FDL, EXT)
    outer, ledger_mod.CURRENT[0] = ledger_mod.CURRENT[0], led  # records each version build() publishes
    try:
        r = scene_repo(tmp)
        r.tmp = tmp
        build(r)
    finally:
        ledger_mod.CURRENT[0] = outer
        led.close()
    r.sums = {vid: sums for vid, (_, sums) in led.entries.items()}
    r.memo = led.memo
    assert len(r.sums) == 3
    return r


def scene_copy(built, tmp, ledger=None):
    """A copy of the module's built() scene at tmp/repo, as Repo(tmp) and
    build() would have made it there; the test's ledger adopts its versions
    (read again at the end like the ones the test publishes)."""
    r = Repo.__new__(Repo)
    r.root, r.tmp = tmp / "repo", tmp
    shutil.copytree(built.root, r.root, symlinks=True)
    if ledger is not None:
        ledger.adopt(r.root, built.sums, built.memo)
    return r


@pytest.fixture
def repo(tmp_path):
    """conftest's repo, initialized by the release build (fdl_setup): the
    scene of tests about the views and catalogs of what is committed to it
    (init runs FDL_BIN in test_init_iceberg_and_tags_keep_the_tips_view and
    the tests about init)."""
    return scene_repo(tmp_path)


def scene_repo(tmp):
    r = Repo.__new__(Repo)
    r.root = tmp / "repo"
    fdl_setup("init", r.root)
    return r


def scene_bucket(server, tmp):
    """S3Repo(server, tmp) with its init by the release build (the scene)."""
    r = S3Repo(server, tmp, init=False)
    r.setup("init", r.root)
    return r


def attached(repo, ref):
    """Stock DuckDB on a version through fdl attach by the release build
    (the oracle, as expected() is)."""
    con = connect()
    con.execute(fdl_setup("attach", repo.root, ref, env=repo.env).stdout)
    return con


@pytest.fixture(scope="module")
def folder_repo(built, tmp_path_factory):
    return scene_copy(built, tmp_path_factory.mktemp("folder"))


def test_folder_views_read_by_every_engine(spark, folder_repo):
    r = Readers(spark)
    for ref in ("main:1", "main:2", "main"):
        views = views_json(folder_repo, ref)
        assert set(views) == ({"main.people", "main.sales", "geo.towns"} if ref == "main" else {"main.people"})
        for uri in views.values():
            assert uri.startswith(f"file://{folder_repo.root}/iceberg/")
        check_all(r, folder_repo, ref, views)


def current_names(meta, snapshot_id, columns):
    """The current names of columns named as in a snapshot's schema (the
    same field ids): Spark's DataFrame options read with the current schema."""
    snap = next(x for x in meta["snapshots"] if x["snapshot-id"] == snapshot_id)
    old = next(x for x in meta["schemas"] if x["schema-id"] == snap["schema-id"])
    cur = next(x for x in meta["schemas"] if x["schema-id"] == meta["current-schema-id"])
    ids = {f["name"]: f["id"] for f in old["fields"]}
    names = {f["id"]: f["name"] for f in cur["fields"]}
    return [names[ids[c]] for c in columns]


def spark_sql_rows(r, uri, columns, clause):
    name = r.register(uri)
    sel = ", ".join(f"`{c}`" for c in columns)
    return normalised(r.spark.sql(f"SELECT {sel} FROM {name} {clause}").collect())


def test_partitions_where_the_meaning_is_the_same(folder_repo):
    """DuckLake's identity partition of a string and its year (the calendar
    year) of a date are Iceberg's identity and year (years since 1970); the
    readers' equality is checked with the other views above."""
    uri = views_json(folder_repo)["main.sales"]
    meta = read_json(uri[len("file://"):])
    [spec] = [s for s in meta["partition-specs"] if s["fields"]]
    assert [(f["name"], f["transform"]) for f in spec["fields"]] == [("region", "identity"), ("d_year", "year")]
    from pyiceberg.expressions import EqualTo
    t = Readers(None).pyiceberg_table(uri)
    files = {task.file.file_path: task.file.partition for task in t.scan().plan_files()}
    assert len(files) > 3
    for part in files.values():
        assert part[0] in ("north", "south", None) and 49 <= part[1] <= 56  # 2019..2026 - 1970
    north = list(t.scan(row_filter=EqualTo("region", "north")).plan_files())
    assert 0 < len(north) < len(files)  # pruned by partition


def test_time_travel_by_snapshot_and_tag(spark, folder_repo):
    """The latest view's snapshots are the branch's versions, each with the
    snapshot id of its version id and its seq in the summary: the snapshot
    of main:N and tag t2 read what fdl query ROOT@main:N reads, in SQL and
    through DataFrame options, in Spark and pyiceberg."""
    r = Readers(spark)
    uri = views_json(folder_repo)["main.people"]
    meta = read_json(uri[len("file://"):])
    assert snap_seqs(meta) == [1, 2, 3]
    assert [s["sequence-number"] for s in meta["snapshots"]] == [1, 2, 3]
    assert meta["refs"]["t2"] == {"snapshot-id": sid_of(folder_repo, "t2"), "type": "tag"}
    assert meta["current-snapshot-id"] == sid_of(folder_repo, "main")
    for seq in (1, 2):
        cols, want = expected(folder_repo, f"main:{seq}", "people")
        snap = sid_of(folder_repo, f"main:{seq}")
        assert spark_sql_rows(r, uri, cols, f"VERSION AS OF {snap}") == want
        assert r.spark_rows(uri, current_names(meta, snap, cols), **{"snapshot-id": str(snap)}) == want
        assert r.pyiceberg_rows(uri, cols, snapshot_id=snap) == want
    name = r.register(uri)  # the lookup docs/iceberg.md gives: a seq's snapshot id
    found = r.spark.sql(f"SELECT snapshot_id, summary['fdl.seq'] AS seq FROM {name}.snapshots").collect()
    assert {x["seq"]: x["snapshot_id"] for x in found} == {str(n): sid_of(folder_repo, f"main:{n}") for n in (1, 2, 3)}
    cols, want = expected(folder_repo, "t2", "people")
    assert spark_sql_rows(r, uri, cols, "VERSION AS OF 't2'") == want
    assert r.spark_rows(uri, current_names(meta, sid_of(folder_repo, "t2"), cols), tag="t2") == want
    q = fdl("query", f"{folder_repo.root}@main:1", "SELECT count(*) AS n FROM people", "--format", "csv").stdout
    one = str(sid_of(folder_repo, "main:1"))
    assert r.spark.read.option("snapshot-id", one).table(r.register(uri)).count() == int(q.split()[-1])
    # TIMESTAMP AS OF a snapshot's own time reads that snapshot
    ts = meta["snapshots"][0]["timestamp-ms"]
    cols, want = expected(folder_repo, "main:1", "people")
    when = datetime.datetime.fromtimestamp(ts / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    assert spark_sql_rows(r, uri, cols, f"TIMESTAMP AS OF '{when}'") == want


def test_manifests_name_only_the_repositorys_files(folder_repo):
    """Every data file of every snapshot is a file of that version's
    files.json (zero copy), every delete file lies in the view's tree."""
    from pyiceberg.table import StaticTable
    uri = views_json(folder_repo)["main.people"]
    t = StaticTable.from_metadata(uri)
    root = f"file://{folder_repo.root}"
    for snap in t.metadata.snapshots:
        vid = snap.summary["fdl.version"]
        files = read_json(folder_repo.root / "versions" / vid / "files.json")["tables"]["main.people"]["files"]
        own = {f"{root}/data/{f['path']}" for f in files}
        tasks = list(t.scan(snapshot_id=snap.snapshot_id).plan_files())
        assert {task.file.file_path for task in tasks} == own
        for task in tasks:
            for d in task.delete_files:
                assert d.file_path.startswith(f"{root}/iceberg/")
                assert pathlib.Path(d.file_path[len("file://"):]).is_file()


def test_s3_views_read_by_every_engine(spark, s3_server, tmp_path):
    repo = scene_bucket(s3_server, tmp_path)
    build(repo)
    views = views_json(repo)
    assert set(views) == {"main.people", "main.sales", "geo.towns"}
    for uri in views.values():
        assert uri.startswith(f"s3://{repo.bucket}/datasets/pop/iceberg/")
    r = Readers(spark, s3_server)
    check_all(r, repo, "main", views, secret_of(repo))
    # a commit on the bucket writes its view from its parent's
    con = repo.checkout(tmp_path / "w4", setup=True)
    con.execute("DELETE FROM lake.geo.towns WHERE code = 1")
    con.close()
    fdl("commit", tmp_path / "w4", "-m", "v4", env=repo.env)
    tip = repo.head()
    assert any(f"/versions/{tip}/view.json" in k for k in repo.keys())
    views = views_json(repo)
    assert f"/versions/{tip}/" in views["geo.towns"]
    check_all(r, repo, "main", {"geo.towns": views["geo.towns"]}, secret_of(repo))


def test_every_commit_writes_its_view(spark, repo, tmp_path):
    """Once a repository has a view, each commit writes its version's view
    (no fdl iceberg run) from its parent's, with the earlier versions as its
    snapshots; it is exactly the view fdl iceberg writes from nothing."""
    con = repo.checkout(tmp_path / "w1", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT range AS a, 'x' || range AS b FROM range(30)")
    con.close()
    fdl_setup("commit", tmp_path / "w1", "-m", "one")
    assert not (repo.root / "iceberg").exists()  # no view until asked for
    fdl("iceberg", repo.root)
    for i, sql in enumerate(["INSERT INTO lake.t VALUES (100, 'new')",
                             "DELETE FROM lake.t WHERE a % 7 = 0",
                             "UPDATE lake.t SET b = 'changed' WHERE a < 5"]):
        con = repo.checkout(tmp_path / f"w{i + 2}", setup=True)
        con.execute(sql)
        con.close()
        fdl("commit", tmp_path / f"w{i + 2}", "-m", sql)
    vid = repo.head()
    views = list((repo.root / "iceberg").glob(f"*/versions/{vid}/main/t/metadata/00004-{vid}.metadata.json"))
    assert len(views) == 1, "the commit wrote the new version's view"
    meta = read_json(views[0])
    assert snap_seqs(meta) == [1, 2, 3, 4]
    r = Readers(spark)
    for seq in (4, 3, 2):
        cols, want = expected(repo, f"main:{seq}", "t")
        snap = sid_of(repo, f"main:{seq}")
        assert r.pyiceberg_rows(f"file://{views[0]}", cols, snapshot_id=snap) == want
        assert spark_sql_rows(r, f"file://{views[0]}", cols, f"VERSION AS OF {snap}") == want
    cols, want = expected(repo, "main", "t")
    assert r.duckdb_rows(f"file://{views[0]}", cols) == want
    # asking again writes nothing new; from nothing, the same view (the
    # manifests may differ: DuckLake rewrote v3's delete file in v4 as one
    # whose rows carry their snapshot, which the view of v3 did not see)
    p = fdl("iceberg", repo.root)
    assert "(0 files written)" in p.stdout, p.stdout

    def without_lists(m):
        for x in m["snapshots"]:
            del x["manifest-list"]
        return m
    # the tip's own snapshot: manifests the commits used again (found by
    # what they list, their statistics not read) are the very files a view
    # written from nothing has, so its manifest list is the same file
    tip_list = read_json(views[0])["snapshots"][-1]["manifest-list"]
    assert read_json(views[0].parent.parent.parent.parent / "view.json")["manifest_sigs"]
    incremental = without_lists(read_json(views[0]))
    shutil.rmtree(repo.root / "iceberg")
    fdl("iceberg", repo.root)
    assert without_lists(read_json(views[0])) == incremental
    assert read_json(views[0])["snapshots"][-1]["manifest-list"] == tip_list
    for seq in (4, 3, 2, 1):
        cols, want = expected(repo, f"main:{seq}", "t")
        assert r.pyiceberg_rows(f"file://{views[0]}", cols, snapshot_id=sid_of(repo, f"main:{seq}")) == want


def test_columns_iceberg_cannot_hold_are_named_and_left_out(spark, repo, tmp_path):
    """Never silently wrong: INTERVAL, HUGEINT, UBIGINT and a column added
    with a DEFAULT (older rows: the default in DuckLake, NULL in Iceberg v2)
    are left out and named; TIME and an unsigned integer are kept for
    pyiceberg and DuckDB, named for Spark, which fails on them (and reads
    the rest of such a table, and a table whose left-out columns are in its
    files)."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("""CREATE TABLE lake.odd AS SELECT i AS id, INTERVAL (i) DAY AS iv, i::HUGEINT AS h,
                   i::UBIGINT AS ub, TIME '10:00:00' + INTERVAL (i) MINUTE AS tm FROM range(4) r(i)""")
    con.execute("CREATE TABLE lake.uns AS SELECT i AS id, i::UINTEGER AS u FROM range(4) r(i)")
    con.execute("CREATE TABLE lake.gone AS SELECT i AS id, i::UBIGINT AS ub, INTERVAL (i) DAY AS iv FROM range(4) r(i)")
    con.execute("CREATE TABLE lake.dflt AS SELECT i AS id FROM range(3) r(i)")
    con.execute("ALTER TABLE lake.dflt ADD COLUMN d INTEGER DEFAULT 7")
    con.execute("INSERT INTO lake.dflt VALUES (10, 1)")
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "odd types")
    p = fdl("iceberg", repo.root, "--json")
    views = json.loads(p.stdout)
    for col, why in [("odd.iv (interval)", "no interval"), ("odd.h (int128)", "double"),
                     ("odd.ub (uint64)", "unsigned 64-bit"), ("odd.tm (time)", "Spark"),
                     ("uns.u (uint32)", "Spark"), ("dflt.d (int32)", "DEFAULT")]:
        line = next((x for x in p.stderr.splitlines() if f"main.{col}" in x), None)
        assert line and why in line, (col, p.stderr)
    r = Readers(spark)
    for table, cols in [("odd", ["id", "tm"]), ("uns", ["id", "u"]), ("dflt", ["id"])]:
        uri = views[f"main.{table}"]
        schema = [f["name"] for f in read_json(uri[len("file://"):])["schemas"][-1]["fields"]]
        assert schema == cols, (table, schema)
        con = attached(repo, "main")
        want = normalised(duck_rows(con, f"lake.{table}", cols))
        assert r.pyiceberg_rows(uri, cols) == want
        assert r.duckdb_rows(uri, cols) == want
    # Spark fails loudly, never reads wrong values
    with pytest.raises(Exception, match="time"):
        r.spark_rows(views["main.odd"], ["id"])
    with pytest.raises(Exception):
        r.spark_rows(views["main.uns"], ["id", "u"])
    four = normalised([(0,), (1,), (2,), (3,)])
    assert r.spark_rows(views["main.uns"], ["id"]) == four
    assert r.spark_rows(views["main.gone"], ["id"]) == four
    assert r.spark_rows(views["main.dflt"], ["id"]) == normalised([(0,), (1,), (2,), (10,)])


def test_a_hostile_catalog_gets_no_view(repo, tmp_path, ledger):
    """A catalog whose paths lead out of the repository is refused before a
    view names anything: no metadata.json, no manifest."""
    ledger.waive(repo.root, "the test plants a hostile catalog in its own repository")
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    vid = repo.head()
    ledger.waive(vid, "its catalog is made hostile on purpose")
    path = repo.root / "versions" / vid / "ducklake.duckdb"
    c = connect()
    c.execute(f"ATTACH '{path}' AS c")
    c.execute("UPDATE c.ducklake_table SET path = '../../../../../../../../tmp/'")
    c.close()
    doc = read_json(repo.root / "versions" / vid / "version.json")
    data = path.read_bytes()
    doc["catalog"]["bytes"] = len(data)
    doc["catalog"]["sha256"] = hashlib.sha256(data).hexdigest()
    (repo.root / "versions" / vid / "version.json").write_text(json.dumps(doc))
    p = fdl("iceberg", repo.root, check=False)
    assert p.returncode == 5 and "'..'" in p.stderr, p.stderr
    assert not list(repo.root.glob("iceberg/*/manifests/*")) and not list(repo.root.glob("iceberg/**/*.metadata.json"))


def test_a_planted_parent_view_leads_no_reader_outside(repo, tmp_path):
    """A parent's view is files of the repository like any other: one whose
    manifests were made to name a file outside the repository (every length
    kept, so the files still hold together) is not built on, and a manifest
    under fdl's name with other bytes is written again: every snapshot of
    the next version's view reads only the repository's own data files."""
    from pyiceberg.table import StaticTable
    con = repo.checkout(tmp_path / "w1", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(10)")
    con.close()
    fdl_setup("commit", tmp_path / "w1", "-m", "one")
    fdl("iceberg", repo.root)
    # a folder beside the repository whose path is as long as its own
    outside = repo.root.parent / ("x" * len(repo.root.name))
    shutil.copytree(repo.root / "data", outside / "data")
    old, new = f"file://{repo.root}/data/".encode(), f"file://{outside}/data/".encode()
    planted = 0
    for p in repo.root.glob("iceberg/*/manifests/*"):
        b = p.read_bytes()
        if old in b:
            p.write_bytes(b.replace(old, new))
            planted += 1
    assert planted, "the view's manifests name the repository's data files"
    con = repo.checkout(tmp_path / "w2", setup=True)
    con.execute("INSERT INTO lake.t VALUES (100)")
    con.close()
    fdl("commit", tmp_path / "w2", "-m", "two")  # its view, built on its parent's when it may be
    vid = repo.head()
    metas = list(repo.root.glob(f"iceberg/*/versions/{vid}/main/t/metadata/*.metadata.json"))
    assert len(metas) == 1
    t = StaticTable.from_metadata(f"file://{metas[0]}")
    assert len(t.metadata.snapshots) == 2
    for snap in t.metadata.snapshots:
        for task in t.scan(snapshot_id=snap.snapshot_id).plan_files():
            assert task.file.file_path.startswith(f"file://{repo.root}/data/"), task.file.file_path
    shutil.rmtree(outside)


def all_view_bytes(root):
    return b"".join(p.read_bytes() for p in (root / "iceberg").rglob("*") if p.is_file())


def test_withdrawal_leaves_no_view_leading_to_its_data(repo, tmp_path):
    """A withdrawn version's data: no file of any view names it any more
    (metadata, manifest lists, manifests, delete files); the other branch's
    view is written again and reads as stock DuckDB."""
    con = repo.checkout(tmp_path / "w1", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(5)")
    con.close()
    fdl_setup("commit", tmp_path / "w1", "-m", "one")
    fdl_setup("branch", repo.root, "clean")
    con = repo.checkout(tmp_path / "w2", setup=True)
    con.execute("INSERT INTO lake.t VALUES (666)")
    con.execute("DELETE FROM lake.t WHERE a = 0")
    con.close()
    fdl_setup("commit", tmp_path / "w2", "-m", "personal data")
    bad = repo.head()
    con = repo.checkout(tmp_path / "w3", "--ref", "clean", setup=True)
    con.execute("INSERT INTO lake.t VALUES (7)")
    con.close()
    fdl_setup("commit", tmp_path / "w3", "-m", "clean")
    fdl("iceberg", repo.root)
    fdl("iceberg", f"{repo.root}@clean")
    dry = json.loads(fdl("withdraw", repo.root, bad, "--reason", "personal data", "--dry-run", "--json").stdout)
    names = [pathlib.Path(p).name.encode() for p in dry["data_files"]]
    assert len(names) == 2, dry  # the data file and the delete file it added
    assert all(n in all_view_bytes(repo.root) for n in names), "the view named the data before"
    fdl("withdraw", repo.root, bad, "--reason", "personal data", "--force")  # a tip: on purpose
    text = all_view_bytes(repo.root)
    assert not any(n in text for n in names)
    assert bad.encode() not in text
    uri = views_json(repo, "clean")["main.t"]
    cols, want = expected(repo, "clean", "t")
    assert Readers(None).pyiceberg_rows(uri, cols) == want


@pytest.mark.quick  # Iceberg's in make check: views written by each commit, read by pyiceberg and DuckDB (seconds)
def test_expiry_and_gc_keep_views_to_live_versions(repo, tmp_path):
    """After retention expires older versions, no view lists them (the
    tip's, written by the commits, is written again by fdl expire), and it
    still reads right once gc deleted what they needed."""
    for i in range(3):
        con = repo.checkout(tmp_path / f"w{i}", setup=True)
        con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(4)" if i == 0 else
                    f"DELETE FROM lake.t WHERE a = {i}; INSERT INTO lake.t VALUES ({10 * i})")
        con.close()
        (fdl if i else fdl_setup)("commit", tmp_path / f"w{i}", "-m", f"v{i}")  # the first: the scene, no view yet
        if i == 0:
            fdl("iceberg", repo.root)
    tip = repo.head()
    [uri] = [f"file://{p}" for p in (repo.root / "iceberg").glob(f"*/versions/{tip}/main/t/metadata/*.json")]
    assert snap_seqs(read_json(uri[len("file://"):])) == [1, 2, 3]
    for i in range(3):  # a working catalog keeps its base from expiry: done with them (the scene)
        fdl_setup("checkout", "--abandon", tmp_path / f"w{i}")
    cfg = read_json(repo.root / "fdl.json")
    cfg["retention"] = {"days": 0, "keep": 1}
    (repo.root / "fdl.json").write_text(json.dumps(cfg))
    fdl("expire", repo.root)
    for p in (repo.root / "iceberg").rglob("*.metadata.json"):
        assert snap_seqs(read_json(p)) == [3], p
    fdl("gc", repo.root, "--grace", "0s")
    cols, want = expected(repo, "main", "t")
    assert Readers(None).pyiceberg_rows(uri, cols) == want
    assert Readers(None).duckdb_rows(uri, cols) == want


def test_clone_writes_the_copys_own_view(repo, tmp_path):
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(6)")
    con.execute("DELETE FROM lake.t WHERE a = 3")
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    fdl("iceberg", repo.root)
    copy = tmp_path / "copy"
    fdl("clone", repo.root, copy, "-q")
    views = list((copy / "iceberg").rglob("*.metadata.json"))
    assert len(views) == 1
    assert str(repo.root).encode() not in all_view_bytes(copy), "the copy's view names only the copy"
    cols, want = expected(repo, "main", "t")
    assert Readers(None).pyiceberg_rows(f"file://{views[0]}", cols) == want
    assert Readers(None).duckdb_rows(f"file://{views[0]}", cols) == want


def test_verify_checks_each_view_against_its_version(repo, tmp_path):
    """fdl verify reads every view back (manifests with DuckDB's avro
    extension): clean as written; a delete file with other positions, a
    snapshot of a version that is not in the history, are problems."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(10)")
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    con = repo.checkout(tmp_path / "w2", setup=True)
    con.execute("DELETE FROM lake.t WHERE a IN (2, 5)")
    con.close()
    fdl_setup("commit", tmp_path / "w2", "-m", "two")
    fdl("iceberg", repo.root)
    assert fdl("verify", repo.root).returncode == 0
    [dele] = list((repo.root / "iceberg").glob("*/deletes/**/*.parquet"))
    good = dele.read_bytes()
    c = connect()
    c.execute(f"COPY (SELECT file_path, pos + 1 AS pos FROM read_parquet('{dele}')) TO '{tmp_path / 'x.parquet'}' "
              "(FORMAT parquet, FIELD_IDS {file_path: 2147483546, pos: 2147483545})")
    dele.write_bytes((tmp_path / "x.parquet").read_bytes())
    p = fdl("verify", repo.root, check=False)
    assert p.returncode == 5 and "does not hold the positions" in p.stdout + p.stderr, p.stdout
    dele.write_bytes(good)
    [meta] = list((repo.root / "iceberg").rglob("*.metadata.json"))
    doc = read_json(meta)
    doc["snapshots"][0]["summary"]["fdl.version"] = "01234567-89ab-7def-8123-456789abcdef"
    meta.write_text(json.dumps(doc))
    p = fdl("verify", repo.root, check=False)
    first = doc["snapshots"][0]["snapshot-id"]
    assert p.returncode == 5 and f"snapshot {first} is of version 01234567-89ab-7def-8123-456789abcdef" in p.stdout, \
        p.stdout


def test_init_iceberg_and_tags_keep_the_tips_view(tmp_path):
    """fdl init --iceberg: the first commit has its view; a tag made later
    is a tag ref of the branch tip's view without any fdl iceberg run."""
    root = tmp_path / "repo"
    fdl("init", root, "--iceberg")
    assert read_json(root / "iceberg" / "views.json")["views"][0]["location"] == f"file://{root}"
    con = connect()
    con.execute(fdl_setup("checkout", root, tmp_path / "w").stdout)  # the commits write the views: the step
    con.execute("CREATE TABLE lake.t AS SELECT 1 AS a")
    con.close()
    fdl("commit", tmp_path / "w", "-m", "one")
    con = connect()
    con.execute(fdl_setup("checkout", root, tmp_path / "w2").stdout)
    con.execute("INSERT INTO lake.t VALUES (2)")
    con.close()
    fdl("commit", tmp_path / "w2", "-m", "two")
    tip = (root / "refs" / "heads" / "main").read_text().strip()
    [meta] = list(root.glob(f"iceberg/*/versions/{tip}/main/t/metadata/*.metadata.json"))
    assert "first" not in read_json(meta)["refs"]
    fdl("tag", root, "first", "main:1")
    first = sid((root / "refs" / "tags" / "first").read_text().strip())
    assert read_json(meta)["refs"]["first"] == {"snapshot-id": first, "type": "tag"}
    fdl("tag", root, "--delete", "first")
    assert "first" not in read_json(meta)["refs"]


def test_a_version_iceberg_cannot_show_is_named(repo, tmp_path):
    """DuckLake's merged files hold rows of several snapshots and are
    filtered by row in DuckLake; a version whose live files include one that
    holds later rows is no snapshot of the view, and fdl iceberg says so."""
    con = repo.checkout(tmp_path / "w1", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1)")
    con.close()
    fdl_setup("commit", tmp_path / "w1", "-m", "one")
    con = repo.checkout(tmp_path / "w2", setup=True)
    con.execute("INSERT INTO lake.t VALUES (2)")
    con.execute("INSERT INTO lake.t VALUES (3)")
    con.execute("CALL ducklake_merge_adjacent_files('lake')")
    con.close()
    fdl_setup("commit", tmp_path / "w2", "-m", "two, merged")
    p = fdl("iceberg", repo.root, "--json")
    assert "main.t: version 1 is not a snapshot" in p.stderr, p.stderr
    uri = json.loads(p.stdout)["main.t"]
    assert snap_seqs(read_json(uri[len("file://"):])) == [2]
    cols, want = expected(repo, "main", "t")
    assert Readers(None).pyiceberg_rows(uri, cols) == want


def test_a_version_whose_table_holds_no_file_has_a_view(repo, tmp_path):
    """A table with no data file (created empty, or every row withdrawn by
    --clean) is a snapshot with no manifest entry: fdl iceberg wrote it
    with qsort over a NULL list (UBSan stopped the sanitizer build, found by
    README's withdraw flow in test_snippets.py)."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER)")
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "an empty table")
    uri = json.loads(fdl("iceberg", repo.root, "--json").stdout)["main.t"]
    cols, want = expected(repo, "main", "t")
    assert want == [] and Readers(None).pyiceberg_rows(uri, cols) == []


def test_time_travel_before_a_widening_reads_every_column(spark, repo, tmp_path):
    """Issue 53: INTEGER, FLOAT and DECIMAL(9,2) columns widened to BIGINT,
    DOUBLE and DECIMAL(18,2). Each snapshot has the schema of its own time,
    so time travel to the version before the widening reads every column
    with its rows in pyiceberg, DuckDB and Spark (SQL: the snapshot's
    schema; the DataFrame option: the current one, over the older files),
    in the view the commit built on its parent's as in the one written from
    nothing. Spark's vectorized reader fails on an int file read as long
    (apache/iceberg#16341): the view turns it off for the table and fdl
    iceberg names the column; float and decimal need nothing. A change
    Iceberg cannot promote (INTEGER to DOUBLE) keeps the column in the
    snapshots before it and leaves it out, named, from the change on."""
    con = repo.checkout(tmp_path / "w1", setup=True)
    con.execute("CREATE TABLE lake.t (id INTEGER, v INTEGER, f FLOAT, d DECIMAL(9, 2))")
    con.execute("INSERT INTO lake.t VALUES (1, 10, 1.5, 1.25), (2, -20, 2.5, 2.5)")
    con.execute("CREATE TABLE lake.u AS SELECT 1 AS id, 7 AS w")
    con.close()
    fdl_setup("commit", tmp_path / "w1", "-m", "narrow")
    fdl("iceberg", repo.root)  # the next version's view is its commit's, built on this one
    con = repo.checkout(tmp_path / "w2", setup=True)
    for sql in ["ALTER TABLE lake.t ALTER v TYPE BIGINT", "ALTER TABLE lake.t ALTER f TYPE DOUBLE",
                "ALTER TABLE lake.t ALTER d TYPE DECIMAL(18, 2)",
                "INSERT INTO lake.t VALUES (3, 30000000000, 3.25, 1234567890123.45)",
                "ALTER TABLE lake.u ALTER w TYPE DOUBLE", "INSERT INTO lake.u VALUES (2, 2.5)"]:
        con.execute(sql)
    con.close()
    fdl("commit", tmp_path / "w2", "-m", "wide")
    [path] = (repo.root / "iceberg").glob(f"*/versions/{repo.head()}/main/t/metadata/*.metadata.json")
    by_commit = read_json(path)
    shutil.rmtree(repo.root / "iceberg")
    p = fdl("iceberg", repo.root, "--json")
    uri = json.loads(p.stdout)["main.t"]
    meta = read_json(uri[len("file://"):])
    assert meta == by_commit, "the commit's view is the one written from nothing"
    assert [[(f["name"], f["type"]) for f in x["fields"]] for x in meta["schemas"]] == [
        [("id", "int"), ("v", "int"), ("f", "float"), ("d", "decimal(9,2)")],
        [("id", "int"), ("v", "long"), ("f", "double"), ("d", "decimal(18,2)")]]
    assert [x["schema-id"] for x in meta["snapshots"]] == [0, 1]
    [line] = [x for x in p.stderr.splitlines() if x.strip().startswith("main.t.")]
    assert line.strip().startswith("main.t.v (int64)") and "Spark" in line and \
        "read.parquet.vectorization.enabled=false" in line, p.stderr
    assert meta["properties"]["read.parquet.vectorization.enabled"] == "false"
    [line] = [x for x in p.stderr.splitlines() if x.strip().startswith("main.u.")]
    assert line.strip().startswith("main.u.w (float64)") and "cannot read from the older files" in line, p.stderr
    u = json.loads(p.stdout)["main.u"]
    assert "read.parquet.vectorization.enabled" not in read_json(u[len("file://"):])["properties"]
    assert Readers(None).pyiceberg_rows(u, ["id", "w"], snapshot_id=sid_of(repo, "main:1")) == normalised([(1, 7)])
    assert Readers(None).pyiceberg_rows(u, ["id"]) == normalised([(1,), (2,)])
    with pytest.raises(Exception):
        Readers(None).pyiceberg_rows(u, ["id", "w"])
    r = Readers(spark)
    one = sid_of(repo, "main:1")
    cols, want = expected(repo, "main:1", "t")
    assert cols == ["id", "v", "f", "d"] and len(want) == 2
    assert r.pyiceberg_rows(uri, cols, snapshot_id=one) == want
    con = connect()
    con.execute("LOAD iceberg")
    assert normalised(duck_rows(con, f"iceberg_scan('{uri}', snapshot_from_id => {one})", cols)) == want
    assert spark_sql_rows(r, uri, cols, f"VERSION AS OF {one}") == want
    assert r.spark_rows(uri, cols, **{"snapshot-id": str(one)}) == want
    check_all(r, repo, "main", {"main.t": uri})  # Spark as the session is: vectorized reads on
    # the view of main:1 alone: nothing was widened there, nothing to say
    p = fdl("iceberg", f"{repo.root}@main:1", "--json")
    assert "main.t." not in p.stderr, p.stderr
    assert "read.parquet.vectorization.enabled" not in read_json(json.loads(p.stdout)["main.t"][7:])["properties"]


def older_fdl_view(view_json):
    """Make a view what fdl wrote before issue 53 (view.json format 1,
    snapshot id = seq), as a repository upgraded from it holds."""
    view = read_json(view_json)
    view["fdl_iceberg"] = 1
    view_json.write_text(json.dumps(view))
    for p in view_json.parent.rglob("*.metadata.json"):
        m = read_json(p)
        seq = {x["snapshot-id"]: int(x["summary"]["fdl.seq"]) for x in m["snapshots"]}
        for x in m["snapshots"]:
            x["snapshot-id"] = seq[x["snapshot-id"]]
            if "parent-snapshot-id" in x:
                x["parent-snapshot-id"] = seq[x["parent-snapshot-id"]]
        for x in [*m["snapshot-log"], *m["refs"].values()]:
            x["snapshot-id"] = seq[x["snapshot-id"]]
        m["current-snapshot-id"] = seq[m["current-snapshot-id"]]
        p.write_text(json.dumps(m))


def test_views_of_an_older_fdl_are_verified_and_written_again(repo, tmp_path):
    """A view from before issue 53 (snapshot id = seq) still verifies, with a
    warning naming it; a commit never builds on it (every snapshot of the
    next view has its version's id), and the catalog writes it again."""
    for i in range(2):
        con = repo.checkout(tmp_path / f"w{i}", setup=True)
        con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(3)" if i == 0 else
                    "INSERT INTO lake.t VALUES (10)")
        con.close()
        fdl_setup("commit", tmp_path / f"w{i}", "-m", f"v{i}")
    fdl_setup("tag", repo.root, "t2")  # the scene: the catalog and the view made older
    catalog_json(repo, setup=True)
    old = repo.head()
    [view] = (repo.root / "iceberg").glob(f"*/versions/{old}/view.json")
    older_fdl_view(view)
    p = fdl("verify", repo.root)
    assert "0 problems" in p.stdout, p.stdout
    warned = [x for x in (p.stdout + p.stderr).splitlines() if "older fdl" in x]
    assert len(warned) == 1 and f"versions/{old}/view.json" in warned[0] and "seqs" in warned[0], p.stdout
    con = repo.checkout(tmp_path / "w2", setup=True)
    con.execute("INSERT INTO lake.t VALUES (20)")
    con.close()
    fdl("commit", tmp_path / "w2", "-m", "v2")
    [meta] = (repo.root / "iceberg").glob(f"*/versions/{repo.head()}/main/t/metadata/*.metadata.json")
    assert snap_seqs(read_json(meta)) == [1, 2, 3]
    assert read_json(view)["fdl_iceberg"] == 1  # the tag t2's namespace still leads to it
    fdl("iceberg", repo.root, "--catalog")
    assert read_json(view)["fdl_iceberg"] == 2
    [meta] = view.parent.glob("main/t/metadata/*.metadata.json")
    assert snap_seqs(read_json(meta)) == [1, 2]
    p = fdl("verify", repo.root)
    assert "0 problems" in p.stdout and "older fdl" not in p.stdout + p.stderr, p.stdout
    cols, want = expected(repo, "t2", "t")
    tag_answer = next((repo.root / "iceberg").glob("*/catalog/v1/namespaces/t2/tables/t"))
    assert read_json(tag_answer)["metadata"]["current-snapshot-id"] == sid_of(repo, "t2")
    assert Readers(None).pyiceberg_rows(f"file://{meta}", cols) == want


# ---- the REST catalog with no server (fdl iceberg ROOT --catalog) ------------

class StaticHost:
    """`python3 -m http.server` serving a folder: a plain static file server
    (no rewrite rules; a folder answers with a 301 to folder/ and its
    index.html), in a process of its own."""

    def __init__(self, folder, log):
        from s3server import free_port, wait_port
        import subprocess
        import sys
        port = free_port()
        self.log = open(log, "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                      "--directory", str(folder)], stdout=self.log, stderr=subprocess.STDOUT)
        wait_port(port, self.proc)
        self.url = f"http://127.0.0.1:{port}"
        host_serves(self.url, folder)  # the ledger may map its URLs to the folder's files

    def stop(self):
        host_stops(self.url)
        self.proc.terminate()
        self.proc.wait(10)
        self.log.close()


def catalog_json(repo, setup=False):
    """fdl iceberg ROOT --catalog --json; with setup by the release build
    (a catalog the test starts from, not the one it checks)."""
    return json.loads((fdl_setup if setup else fdl)("iceberg", repo.root, "--catalog", "--json", env=repo.env).stdout)


def catalog_written(root, env=None):
    """How many files fdl iceberg ROOT --catalog writes: 0 when it is current."""
    out = fdl("iceberg", root, "--catalog", env=env).stdout
    return int(out.split(" files written")[0].rsplit("(", 1)[1])


class CatalogClients:
    """Spark (a REST catalog added to the module's session), pyiceberg and
    DuckDB attached to one catalog URI, each the way docs/iceberg.md says."""
    names = itertools.count(1)

    def __init__(self, spark, uri, s3=None, secret=""):
        self.spark, self.uri, self.s3, self.secret = spark, uri, s3, secret
        self.spark_name = f"rest{next(CatalogClients.names)}"
        conf = {"": "org.apache.iceberg.spark.SparkCatalog", ".type": "rest", ".uri": uri,
                ".cache-enabled": "false"}  # every query asks the catalog: it changes under the session
        if s3:
            env = s3.env()
            conf.update({".s3.endpoint": env["AWS_ENDPOINT_URL"], ".s3.path-style-access": "true",
                         ".s3.access-key-id": env["AWS_ACCESS_KEY_ID"],
                         ".s3.secret-access-key": env["AWS_SECRET_ACCESS_KEY"], ".client.region": "us-east-1"})
        for k, v in conf.items() if spark else ():
            spark.conf.set(f"spark.sql.catalog.{self.spark_name}{k}", v)

    def pyiceberg(self):
        from pyiceberg.catalog import load_catalog
        props = {"uri": self.uri}
        if self.s3:
            env = self.s3.env()
            props.update({"s3.endpoint": env["AWS_ENDPOINT_URL"], "s3.access-key-id": env["AWS_ACCESS_KEY_ID"],
                          "s3.secret-access-key": env["AWS_SECRET_ACCESS_KEY"], "s3.region": "us-east-1",
                          "s3.force-virtual-addressing": "false"})
        return load_catalog("fdl", type="rest", **props)

    def duck(self):
        con = connect()
        con.execute("LOAD iceberg")
        if self.secret:
            con.execute(self.secret)
        con.execute(f"ATTACH '' AS fdl (TYPE iceberg, ENDPOINT '{self.uri}', AUTHORIZATION_TYPE 'none', "
                    "DEFAULT_SCHEMA 'main')")
        return con

    def namespaces(self):
        """What each client lists, as sets of level tuples."""
        py = set(self.pyiceberg().list_namespaces())
        con = self.duck()
        duck = {s for (s,) in con.execute("SELECT schema_name FROM duckdb_schemas() WHERE database_name = 'fdl'")
                .fetchall()}
        con.close()
        spark = {r[0].replace("`", "") for r in self.spark.sql(f"SHOW NAMESPACES IN {self.spark_name}").collect()}
        return py, duck, spark

    def rows(self, levels, table, columns):
        """The table's rows as each client reads them: {client: rows}."""
        sel = ", ".join(f'"{c}"' for c in columns)
        con = self.duck()
        schema = ".".join(levels).replace('"', '""')
        duck = normalised(duck_rows(con, f'fdl."{schema}"."{table}"', columns))
        con.close()
        t = self.pyiceberg().load_table((*levels, table)).scan().to_arrow().select(columns)
        py = normalised(tuple(r[c] for c in columns) for r in t.to_pylist())
        ident = ".".join(f"`{p}`" for p in (self.spark_name, *levels, table))
        spark = normalised(self.spark.sql(f"SELECT {sel.replace(chr(34), '`')} FROM {ident}").collect())
        return {"duckdb": duck, "pyiceberg": py, "spark": spark}

    def rows_at(self, levels, table, columns, snapshot):
        """The table's rows at an earlier snapshot (time travel through the
        catalog), columns named as in that snapshot: {client: rows}."""
        sel = ", ".join(f'"{c}"' for c in columns)
        con = self.duck()
        schema = ".".join(levels).replace('"', '""')
        duck = normalised(duck_rows(con, f'fdl."{schema}"."{table}" AT (VERSION => {snapshot})', columns))
        con.close()
        t = self.pyiceberg().load_table((*levels, table)).scan(snapshot_id=snapshot).to_arrow().select(columns)
        py = normalised(tuple(r[c] for c in columns) for r in t.to_pylist())
        ident = ".".join(f"`{p}`" for p in (self.spark_name, *levels, table))
        spark = normalised(self.spark.sql(f"SELECT {sel.replace(chr(34), '`')} FROM {ident} VERSION AS OF {snapshot}")
                           .collect())
        return {"duckdb": duck, "pyiceberg": py, "spark": spark}


def expect_namespaces(clients, want):
    """Every client lists exactly these namespaces (level tuples)."""
    py, duck, spark = clients.namespaces()
    dotted = {".".join(n) for n in want}
    assert py == set(want), py
    assert duck == dotted, duck
    assert spark == dotted, spark


def expect_rows(clients, repo, ref, levels, table):
    """A table of the catalog reads, in every client, what stock DuckDB reads
    through fdl attach of the ref."""
    qualified = table if len(levels) == 1 else f"{levels[1]}.{table}"
    cols, want = expected(repo, ref, qualified)
    assert want, f"{qualified} at {ref} has rows to compare"
    for client, got in clients.rows(levels, table, cols).items():
        assert got == want, f"{client}: {'.'.join(levels)}.{table} differs from {ref}"


def catalog_files(repo, path):
    """Every file of the catalog at `path` in the repository: {key: bytes}."""
    if isinstance(repo, S3Repo):
        prefix = f"datasets/pop/{path}/"
        return {k: repo.get(k) for k in repo.keys(prefix)}
    return {str(p): p.read_bytes() for p in (repo.root / path).rglob("*") if p.is_file()}


def catalog_round(spark, repo, tmp_path, uri, path, s3=None):
    """What the issue asks of a catalog, on a repository built by build():
    namespaces are every branch and tag; a branch's, a tag's and a second
    schema's table read as stock DuckDB through fdl attach; a new commit and
    a new tag show with no other command; after a withdrawal nothing in the
    catalog leads to withdrawn data."""
    secret = secret_of(repo)
    clients = CatalogClients(spark, uri, s3, secret)
    expect_namespaces(clients, {("main",), ("main", "geo"), ("t2",), ("feature/x",)})
    expect_rows(clients, repo, "main", ("main",), "people")
    expect_rows(clients, repo, "t2", ("t2",), "people")
    expect_rows(clients, repo, "main", ("main", "geo"), "towns")
    expect_rows(clients, repo, "feature/x", ("feature/x",), "people")
    # time travel: a branch's table holds its earlier versions
    for seq in (1, 2):
        cols, want = expected(repo, f"main:{seq}", "people")
        for client, got in clients.rows_at(("main",), "people", cols, sid_of(repo, f"main:{seq}")).items():
            assert got == want, f"{client}: main.people at snapshot {seq} differs from main:{seq}"
    # a commit and a tag: the catalog follows with no other command
    con = repo.checkout(tmp_path / "w4", setup=True)
    con.execute("DELETE FROM lake.geo.towns WHERE code = 1")
    con.execute("INSERT INTO lake.people (id, full_name) VALUES (500, 'late')")
    con.close()
    fdl("commit", tmp_path / "w4", "-m", "v4", env=repo.env)
    fdl("tag", repo.root, "v4", env=repo.env)
    expect_namespaces(clients, {("main",), ("main", "geo"), ("t2",), ("feature/x",), ("v4",), ("v4", "geo")})
    expect_rows(clients, repo, "main", ("main",), "people")
    expect_rows(clients, repo, "main", ("main", "geo"), "towns")
    expect_rows(clients, repo, "v4", ("v4", "geo"), "towns")
    # a branch with data that must go: withdrawn, nothing in the catalog leads to it
    fdl("branch", repo.root, "leak", env=repo.env)
    assert ("leak",) in clients.pyiceberg().list_namespaces()  # a new branch is a namespace at once
    con = repo.checkout(tmp_path / "w5", "--ref", "leak", setup=True)
    con.execute("INSERT INTO lake.people (id, full_name) VALUES (666, 'personal data')")
    con.close()
    bad = fdl("commit", tmp_path / "w5", "-m", "personal data", "-q", env=repo.env).stdout.strip()
    assert ("leak",) in clients.pyiceberg().list_namespaces()
    dry = json.loads(fdl("withdraw", repo.root, bad, "--reason", "personal data", "--dry-run", "--json",
                         env=repo.env).stdout)
    names = [pathlib.Path(p).name for p in dry["data_files"]]
    assert names and any(n.encode() in b"".join(f for f in all_files(repo)) for n in names), \
        "the repository's views named the data before"
    fdl("withdraw", repo.root, bad, "--reason", "personal data", "--force", env=repo.env)  # a tip: on purpose
    files = catalog_files(repo, path)
    assert len(files) > 10
    for key, data in files.items():
        assert bad.encode() not in data, key
        assert not any(n.encode() in data for n in names), key
    cat = clients.pyiceberg()
    assert ("leak",) not in cat.list_namespaces()
    for ns in cat.list_namespaces():
        for ident in cat.list_tables(ns):
            t = cat.load_table(ident)
            for snap in t.metadata.snapshots:
                assert snap.summary["fdl.version"] != bad
                for task in t.scan(snapshot_id=snap.snapshot_id).plan_files():
                    assert not any(n in task.file.file_path for n in names)
    expect_rows(clients, repo, "main", ("main",), "people")
    assert catalog_written(repo.root, repo.env) == 0, "the withdrawal left the catalog current"
    p = fdl("verify", repo.root, env=repo.env)
    assert "0 problems" in p.stdout and "catalog" not in p.stdout, p.stdout


def all_files(repo):
    if isinstance(repo, S3Repo):
        return [repo.get(k) for k in repo.keys("datasets/pop/iceberg/")]
    return [p.read_bytes() for p in (repo.root / "iceberg").rglob("*") if p.is_file()]


def test_catalog_of_a_folder_on_a_plain_static_host(spark, built, tmp_path, ledger):
    """A folder repository's catalog, served by python -m http.server (no
    rewrite rules), attached by Spark, pyiceberg and DuckDB."""
    repo = scene_copy(built, tmp_path, ledger)
    fdl_setup("branch", repo.root, "feature/x", "t2")  # the scene: the catalog is what is tested
    cat = catalog_json(repo)
    assert cat["catalog"] == f"file://{repo.root}/{cat['path']}"
    assert cat["namespaces"] == [["feature/x"], ["main"], ["main", "geo"], ["t2"]]
    host = StaticHost(repo.root, tmp_path / "http.log")
    try:
        ledger.reader(host.url)  # the static host serves the repository too
        catalog_round(spark, repo, tmp_path, f"{host.url}/{cat['path']}", cat["path"])
    finally:
        host.stop()


def test_a_snapshot_id_never_comes_to_mean_other_rows(spark, tmp_path, ledger):
    """Issue 53: v1..v3 in a catalog, main moved back to main:2 and v3'
    committed. The table keeps its table-uuid (as after Iceberg's own
    rollback), v1 and v2 keep their snapshot ids and rows, v3' has an id of
    its own, and v3's id is no snapshot of the branch any more: a client
    that cached the metadata refreshes without error and no longer finds it,
    an incremental read from it is refused, Spark and DuckDB refuse the
    pinned id; the view of v3 itself still reads v3's rows under it."""
    from pyiceberg.table.snapshots import ancestors_of
    repo = scene_repo(tmp_path)
    for i, row in enumerate(["(1, 'A')", "(2, 'B')", "(3, 'C-bad')"]):
        con = repo.checkout(tmp_path / f"w{i}", setup=True)
        if i == 0:
            con.execute("CREATE TABLE lake.t (id INTEGER, s VARCHAR)")
        con.execute(f"INSERT INTO lake.t VALUES {row}")
        con.close()
        fdl_setup("commit", tmp_path / f"w{i}", "-m", f"v{i + 1}")
    v3 = repo.head()
    cat = catalog_json(repo)
    host = StaticHost(repo.root, tmp_path / "http.log")
    try:
        ledger.reader(host.url)
        clients = CatalogClients(spark, f"{host.url}/{cat['path']}")
        cached = clients.pyiceberg().load_table(("main", "t"))

        def rows(table, snap):
            return normalised(tuple(r.values()) for r in table.scan(snapshot_id=snap).to_arrow().to_pylist())
        before = {x.snapshot_id: rows(cached, x.snapshot_id) for x in cached.metadata.snapshots}
        bad = cached.metadata.current_snapshot_id
        assert bad == sid(v3) and before[bad] == normalised([(1, "A"), (2, "B"), (3, "C-bad")])
        fdl("branch", repo.root, "main", "main:2", "--force")
        con = repo.checkout(tmp_path / "w3", setup=True)
        con.execute("INSERT INTO lake.t VALUES (30, 'C-prime')")
        con.close()
        fdl("commit", tmp_path / "w3", "-m", "v3'")
        fresh = clients.pyiceberg().load_table(("main", "t"))
        assert fresh.metadata.table_uuid == cached.metadata.table_uuid
        now = {x.snapshot_id: rows(fresh, x.snapshot_id) for x in fresh.metadata.snapshots}
        assert fresh.metadata.current_snapshot_id == sid(repo.head()) != bad
        assert bad not in now and set(before) - {bad} < set(now)
        for snap, got in now.items():
            assert before.get(snap, got) == got, f"snapshot {snap} reads other rows"
        assert now[sid(repo.head())] == normalised([(1, "A"), (2, "B"), (30, "C-prime")])
        assert [x.sequence_number for x in fresh.metadata.snapshots] == [1, 2, 3]
        cached.refresh()  # the same table: no "Table UUID does not match"
        assert cached.metadata.snapshot_by_id(bad) is None
        assert bad not in {x.snapshot_id for x in ancestors_of(cached.current_snapshot(), cached.metadata)}
        with pytest.raises(ValueError, match="not a parent ancestor"):
            list(cached.incremental_append_scan(from_snapshot_id_exclusive=bad).plan_files())
        with pytest.raises(Exception, match=str(bad)):
            spark.sql(f"SELECT * FROM `{clients.spark_name}`.`main`.`t` VERSION AS OF {bad}").collect()
        con = clients.duck()
        with pytest.raises(duckdb.Error):
            con.execute(f"SELECT * FROM fdl.main.t AT (VERSION => {bad})").fetchall()
        con.close()
        expect_rows(clients, repo, "main", ("main",), "t")
        for seq in (1, 2):
            cols, want = expected(repo, f"main:{seq}", "t")
            for client, got in clients.rows_at(("main",), "t", cols, sid_of(repo, f"main:{seq}")).items():
                assert got == want, f"{client}: main.t at main:{seq}"
        old = views_json(repo, v3)["main.t"]  # v3 is still a version: its own view
        assert Readers(None).pyiceberg_rows(old, ["id", "s"], snapshot_id=bad) == before[bad]
    finally:
        host.stop()


def test_catalog_for_an_http_location_read_by_duckdb(built, tmp_path, ledger):
    """A folder published on a plain HTTP host: the catalog written for that
    location (--location) names only http:// files on the host, and DuckDB
    reads them (docs/iceberg.md names the engines that read no HTTP data)."""
    repo = scene_copy(built, tmp_path, ledger)
    host = StaticHost(repo.root, tmp_path / "http.log")
    try:
        ledger.reader(host.url)
        cat = json.loads(fdl("iceberg", repo.root, "--catalog", "--location", host.url, "--json").stdout)
        assert cat["catalog"] == f"{host.url}/{cat['path']}" and cat["location"] == host.url
        files = catalog_files(repo, cat["path"])
        assert len(files) > 10
        for key, data in files.items():
            assert b"file://" not in data and str(repo.root).encode() not in data, key
            if key.endswith(("/people", "/towns", "/sales")):
                assert json.loads(data)["metadata-location"].startswith(f"{host.url}/iceberg/"), key
        con = CatalogClients(None, cat["catalog"]).duck()
        for ref, levels, table in (("main", ("main",), "people"), ("t2", ("t2",), "people"),
                                   ("main", ("main", "geo"), "towns")):
            cols, want = expected(repo, ref, table if len(levels) == 1 else f"{levels[1]}.{table}")
            schema = ".".join(levels)
            assert normalised(duck_rows(con, f'fdl."{schema}"."{table}"', cols)) == want, f"{schema}.{table}"
        con.close()
    finally:
        host.stop()


@pytest.fixture(scope="module")
def open_s3(tmp_path_factory):
    """The S3 test server without signature checks: a public bucket's own
    endpoint answers the catalog's GETs, which clients send unsigned (the
    signature-checking server fails on an unsigned request)."""
    from s3server import S3Server
    server = S3Server(tmp_path_factory.mktemp("open-s3") / "moto.log", check_signatures=False)
    yield server
    server.stop()


def test_catalog_of_a_bucket_on_its_own_endpoint(spark, open_s3, tmp_path):
    """A bucket repository's catalog, served by the S3 server's own endpoint
    (a public-read bucket, unsigned GETs), attached by Spark, pyiceberg and
    DuckDB, its tables' files s3:// URIs read with the clients' keys."""
    repo = scene_bucket(open_s3, tmp_path)
    open_s3.client().put_bucket_policy(Bucket=repo.bucket, Policy=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                                                "Resource": f"arn:aws:s3:::{repo.bucket}/datasets/pop/iceberg/*"}]}))
    build(repo)
    fdl_setup("branch", repo.root, "feature/x", "t2", env=repo.env)  # the scene: the catalog is what is tested
    cat = catalog_json(repo)
    assert cat["catalog"] == f"{open_s3.endpoint}/{repo.bucket}/datasets/pop/{cat['path']}"
    assert cat["location"] == repo.root
    assert f"datasets/pop/{cat['path']}/v1/namespaces" in repo.keys()  # a plain key: a bucket has no index.html
    catalog_round(spark, repo, tmp_path, cat["catalog"], cat["path"], s3=open_s3)


class Serve(StaticHost):
    """fdl serve on a folder repository (the catalog's folders answer with
    their index.html); stopped as a static host is."""

    def __init__(self, root, log):
        import re
        import subprocess
        from conftest import FDL
        self.log = open(log, "w")
        self.proc = subprocess.Popen([FDL, "serve", str(root), "--port", "0"], stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=dict(os.environ, FDL_EXTENSION_DIR=EXT))
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", self.proc.stdout.readline())
        assert m
        self.url = f"http://127.0.0.1:{m.group(1)}"


def test_catalog_of_a_folder_on_fdl_serve(spark, built, tmp_path, ledger):
    """The same catalog served by fdl serve (its folders answer with their
    index.html, %1F in a path is a nested namespace), attached by Spark,
    pyiceberg and DuckDB."""
    repo = scene_copy(built, tmp_path, ledger)
    fdl_setup("branch", repo.root, "feature/x", "t2")  # the scene: the catalog is what is tested
    cat = catalog_json(repo)
    server = Serve(repo.root, tmp_path / "serve.log")
    try:
        ledger.reader(server.url)  # fdl serve serves the repository too
        catalog_round(spark, repo, tmp_path, f"{server.url}/{cat['path']}", cat["path"])
    finally:
        server.stop()


def test_catalog_names_on_fdl_serve_and_refuses_what_leads_outside(repo, tmp_path):
    """A ref whose name a host or client would spell otherwise is left out
    and named, a table name is made plain and named; fdl serve answers the
    catalog for DuckDB; a view's metadata planted to name a file outside the
    repository stops the catalog, and verify names a catalog file that leads
    outside (a missing one is only behind: a warning)."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute('CREATE TABLE lake."my table" AS SELECT range AS a, range * 2 AS b FROM range(7)')
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    fdl_setup("branch", repo.root, "a+b")  # the scene: what the catalog makes of it is the step
    p = fdl("iceberg", repo.root, "--catalog")
    assert "refs/heads/a+b: not a namespace" in p.stdout, p.stdout
    line = next(x for x in p.stdout.splitlines() if "main.my table" in x)
    renamed = line.split("named ")[1].split(" ")[0]
    assert renamed.startswith("_"), line
    cat = catalog_json(repo)
    assert cat["namespaces"] == [["main"]]
    server = Serve(repo.root, tmp_path / "serve.log")
    try:
        clients = CatalogClients(None, f"{server.url}/{cat['path']}")
        con = clients.duck()
        got = normalised(con.execute(f'SELECT a, b FROM fdl.main."{renamed}"').fetchall())
        want = normalised(attached(repo, "main").execute('SELECT a, b FROM lake."my table"').fetchall())
        assert got == want and len(got) == 7
        assert [n for n in clients.pyiceberg().list_namespaces()] == [("main",)]
    finally:
        server.stop()
    # a planted metadata.json naming a file outside the repository: refused
    tip = repo.head()
    [meta] = list(repo.root.glob(f"iceberg/*/versions/{tip}/main/*/metadata/*.metadata.json"))
    doc = read_json(meta)
    doc["snapshots"][0]["manifest-list"] = "file:///etc/passwd"
    meta.write_text(json.dumps(doc))
    p = fdl("iceberg", repo.root, "--catalog", check=False)
    assert p.returncode == 5 and "file:///etc/passwd" in p.stderr, p.stderr
    assert not any(b"/etc/passwd" in f for f in catalog_files(repo, cat["path"]).values())
    fdl("iceberg", f"{repo.root}@main")  # the view written again
    fdl("iceberg", repo.root, "--catalog")
    assert fdl("verify", repo.root).returncode == 0
    # verify: a catalog file leading outside is a problem, a missing one a warning
    tables = repo.root / cat["path"] / "v1" / "namespaces" / "main" / "tables"
    answer = tables / renamed
    good = answer.read_bytes()
    doc = json.loads(good)
    doc["metadata-location"] = "file:///etc/passwd"
    answer.write_text(json.dumps(doc))
    p = fdl("verify", repo.root, check=False)
    assert p.returncode == 5 and "leads to file:///etc/passwd" in p.stdout, p.stdout
    answer.unlink()
    p = fdl("verify", repo.root, check=False)
    assert p.returncode == 0 and "missing: the catalog is behind" in p.stdout + p.stderr, p.stdout
    answer.write_bytes(good)


def test_a_commit_rewrites_its_branchs_namespaces_alone(repo, tmp_path):
    """A commit brings its branch's namespaces and the list up to date and
    leaves the other refs' files as they were; a schema whose tables all went
    leaves the catalog, its folder too (on a file system [ref, schema] is a
    folder beside [ref], not in it); a branch and a tag deleted leave it."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE SCHEMA lake.geo")
    con.execute("CREATE TABLE lake.geo.towns AS SELECT range AS code FROM range(3)")
    con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(5)")
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    fdl_setup("branch", repo.root, "other")  # the scene; their deletion below is a step
    fdl_setup("tag", repo.root, "t1")
    cat = catalog_json(repo)
    ns = repo.root / cat["path"] / "v1" / "namespaces"
    assert (ns / "main\x1fgeo" / "tables" / "towns").is_file()
    others = {p: p.read_bytes() for p in ns.glob("*/**/*")
              if p.is_file() and not p.relative_to(ns).parts[0].startswith("main")}
    assert len(others) == 2 * 2 * 3  # other and t1: [ref] and [ref, geo], each its resource, tables and one table
    mtimes = {p: p.stat().st_mtime_ns for p in others}
    con = repo.checkout(tmp_path / "w2", setup=True)
    con.execute("DROP TABLE lake.geo.towns")
    con.execute("DROP SCHEMA lake.geo")
    con.execute("INSERT INTO lake.t VALUES (99)")
    con.close()
    fdl("commit", tmp_path / "w2", "-m", "two")
    assert not (ns / "main\x1fgeo").exists()
    assert read_json(ns / "index.html")["namespaces"] == [["main"], ["other"], ["other", "geo"], ["t1"], ["t1", "geo"]]
    assert {p: p.stat().st_mtime_ns for p in others} == mtimes  # not written again
    tip = repo.head()
    assert read_json(ns / "main" / "tables" / "t")["metadata"]["snapshots"][-1]["summary"]["fdl.version"] == tip
    assert catalog_written(repo.root) == 0
    p = fdl("verify", repo.root)
    assert "0 problems" in p.stdout and "catalog" not in p.stdout, p.stdout
    # a branch and a tag deleted: their namespaces go, folders and all
    fdl("branch", repo.root, "--delete", "other")
    fdl("tag", repo.root, "--delete", "t1")
    assert read_json(ns / "index.html")["namespaces"] == [["main"]]
    assert sorted(p.name for p in ns.iterdir()) == ["index.html", "main"]
    assert catalog_written(repo.root) == 0


def test_commits_on_two_branches_racing_keep_both_in_the_list(repo, tmp_path, ledger):
    """A commit replaces the namespace list by compare-and-swap: a commit on
    another branch that changed the list between its read and its write
    (forced with a pause point) makes it read the list again, so both
    branches' namespaces are there."""
    import subprocess
    import time
    from conftest import FDL
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(3)")
    con.close()
    fdl_setup("commit", tmp_path / "w", "-m", "one")
    fdl_setup("branch", repo.root, "b")  # the scene: the racing commits are the step
    cat = catalog_json(repo, setup=True)
    ns = repo.root / cat["path"] / "v1" / "namespaces"
    con = repo.checkout(tmp_path / "wa", setup=True)
    con.execute("INSERT INTO lake.t VALUES (10)")
    con.close()
    con = repo.checkout(tmp_path / "wb", "--ref", "b", setup=True)
    con.execute("CREATE SCHEMA lake.geo")
    con.execute("CREATE TABLE lake.geo.towns AS SELECT range AS code FROM range(2)")
    con.close()
    gate = tmp_path / "gate"
    gate.mkdir()
    env = dict(os.environ, FDL_EXTENSION_DIR=EXT, FDL_PAUSE_AT="iceberg-catalog-list", FDL_PAUSE_DIR=str(gate))
    a = subprocess.Popen([FDL, "commit", str(tmp_path / "wa"), "-m", "on main", "-q"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600  # a safety net: nothing here is timed
    while not (gate / "iceberg-catalog-list.reached").exists():
        assert a.poll() is None, a.communicate()
        assert time.monotonic() < deadline, "commit A never reached the list"
        time.sleep(0.01)
    # A has read the list and written main's namespaces: B's commit now
    fdl("commit", tmp_path / "wb", "-m", "on b")
    assert ["b", "geo"] in read_json(ns / "index.html")["namespaces"]
    (gate / "iceberg-catalog-list.go").touch()
    out, errs = a.communicate(timeout=600)
    assert a.returncode == 0, errs
    ledger.published(out)
    assert read_json(ns / "index.html")["namespaces"] == [["b"], ["b", "geo"], ["main"]]
    assert errs.count("pause point iceberg-catalog-list reached") == 2, errs  # its compare-and-swap failed once
    assert read_json(ns / "main" / "index.html")["properties"]["fdl.version"] == repo.head()
    assert read_json(ns / "b\x1fgeo" / "index.html")["properties"]["fdl.version"] == repo.head("b")
    assert catalog_written(repo.root) == 0


def test_catalog_follows_expiry_and_clones_write_their_own(s3_server, repo, tmp_path):
    """Expired versions leave the catalog's tables; a clone of a repository
    with a catalog has its own, for its own place: a folder's copy names the
    copy, a bucket's copy s3:// URIs under plain keys (a bucket has no
    index.html)."""
    for i in range(3):
        con = repo.checkout(tmp_path / f"w{i}", setup=True)
        con.execute("CREATE TABLE lake.t AS SELECT range AS a FROM range(4)" if i == 0 else
                    f"INSERT INTO lake.t VALUES ({10 * i})")
        con.close()
        fdl_setup("commit", tmp_path / f"w{i}", "-m", f"v{i}")
    cat = catalog_json(repo)
    answer = repo.root / cat["path"] / "v1" / "namespaces" / "main" / "tables" / "t"
    assert snap_seqs(read_json(answer)["metadata"]) == [1, 2, 3]
    for i in range(3):  # a working catalog keeps its base from expiry: done with them (the scene)
        fdl_setup("checkout", "--abandon", tmp_path / f"w{i}")
    cfg = read_json(repo.root / "fdl.json")
    cfg["retention"] = {"days": 0, "keep": 1}
    (repo.root / "fdl.json").write_text(json.dumps(cfg))
    fdl("expire", repo.root)
    assert snap_seqs(read_json(answer)["metadata"]) == [3]
    assert fdl("verify", repo.root).returncode == 0
    copy = tmp_path / "copy"
    fdl("clone", repo.root, copy, "-q")
    assert catalog_written(copy) == 0  # the clone wrote it
    [views] = read_json(copy / "iceberg" / "views.json")["views"]
    assert views["location"] == f"file://{copy}" and views["catalog"] is True
    files = [p.read_bytes() for p in (copy / "iceberg" / views["id"] / "catalog").rglob("*") if p.is_file()]
    assert files and not any(str(repo.root).encode() in f for f in files)
    bucket = S3Repo(s3_server, tmp_path, init=False)
    bucket.fdl("clone", repo.root, bucket.root, "-q")
    assert catalog_written(bucket.root, bucket.env) == 0
    theirs = json.loads(bucket.fdl("iceberg", bucket.root, "--catalog", "--json").stdout)
    assert theirs["location"] == bucket.root
    key = f"datasets/pop/{theirs['path']}/v1/namespaces/main/tables/t"
    doc = json.loads(bucket.get(key))
    assert doc["metadata-location"].startswith(f"{bucket.root}/iceberg/")
    assert f"datasets/pop/{theirs['path']}/v1/namespaces" in bucket.keys()
    assert not any(k.endswith("index.html") for k in bucket.keys("datasets/pop/iceberg/"))
    assert bucket.fdl("verify", bucket.root).returncode == 0
