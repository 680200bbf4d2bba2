"""fdl add (issue 59): Parquet that real Spark 4.0.1 (local[1], one session for
the module) wrote into a repository's working folder is published without
being copied; stock DuckDB through `fdl attach` and Spark itself through
fdl's Iceberg view return exactly Spark's rows; a file of another type, one
outside the repository, one that is not Parquet and one changed before the
commit are refused, with the file named and nothing registered. `fdl add
--iceberg`: an Iceberg table Spark wrote (a Hadoop catalog in the working
catalog's folder, merge-on-read updates and deletes) is published equal to
Spark's own read of its snapshot, a later snapshot registers only its new
files, and equality deletes, v1 or broken metadata and a data file outside
the repository are refused."""
import decimal
import hashlib
import json
import datetime
import os
import pathlib
import shutil

import duckdb
import pytest

from conftest import S3Repo, connect, fdl, fdl_setup, read_json
from test_iceberg import Readers, duck_rows, normalised, views_json


# spark: conftest's, one session (one JVM, every jar) a worker


def events(spark, first, n, id_type=None):
    """A DataFrame with nested, DECIMAL and TIMESTAMP columns and a day to
    partition by."""
    from pyspark.sql import types as T
    schema = T.StructType([
        T.StructField("id", id_type or T.LongType()), T.StructField("name", T.StringType()),
        T.StructField("amount", T.DecimalType(12, 2)), T.StructField("at", T.TimestampType()),
        T.StructField("tags", T.ArrayType(T.StringType())),
        T.StructField("place", T.StructType([T.StructField("city", T.StringType()),
                                             T.StructField("zip", T.IntegerType())])),
        T.StructField("day", T.IntegerType())])
    rows = [(i, f"n{i}" if i % 7 else None, decimal.Decimal(i) * decimal.Decimal("1.25"),
             datetime.datetime(2024, 3, 1, 12) + datetime.timedelta(minutes=i), [f"a{i}", "b"],
             (f"c{i % 3}", 1000 + i), i % 3) for i in range(first, first + n)]
    return spark.createDataFrame(rows, schema)


COLUMNS = ["id", "name", "amount", "at", "tags", "place", "day"]


def spark_rows(df):
    return normalised(df.select(*COLUMNS).collect())


def published_rows(repo, ref="main", table="events"):
    con = repo.open_version(ref)
    return normalised(duck_rows(con, f"lake.{table}", COLUMNS))


def staged_files(dest):
    return sorted(p for p in pathlib.Path(dest).rglob("*.parquet") if not p.name.startswith("."))


def test_spark_output_published_without_copying(spark, repo, tmp_path):
    work = tmp_path / "work"
    fdl_setup("checkout", repo.root, work)  # the scene: the add and commit after it run FDL_BIN
    dest = fdl("add", "--folder", work, "events").stdout.strip()
    assert dest.startswith(f"{repo.root}/work/") and dest.endswith("/main/events/")
    first = events(spark, 0, 30)
    first.write.partitionBy("day").parquet(dest)
    inodes = {p.relative_to(dest): p.stat().st_ino for p in staged_files(dest)}
    assert len(inodes) == 3

    out = fdl("add", work, "events", dest, "--create").stdout
    assert "Added 3 files (30 rows" in out and "created, partitioned by day" in out
    fdl("commit", work, "-m", "Spark, first night")
    v1 = repo.head()
    data = repo.root / "data" / "main" / "events"
    for rel, ino in inodes.items():  # the very files Spark wrote: linked, not copied
        assert (data / rel).stat().st_ino == ino, rel
    sums = read_json(repo.root / "versions" / v1 / "files.json")["sha256"]
    for rel in inodes:  # hashed as any new file
        path = f"main/events/{rel}"
        assert sums[path] == hashlib.sha256((data / rel).read_bytes()).hexdigest(), path
    want1 = spark_rows(first)
    assert published_rows(repo) == want1

    # the next night appends: only its new files are registered
    second = events(spark, 30, 12)
    second.write.mode("append").partitionBy("day").parquet(dest)
    new = [p for p in staged_files(dest)]
    assert len(new) == 3  # the first night's staged copies went at the commit
    out = fdl("add", work, "events", *new).stdout
    assert "Added 3 files (12 rows" in out and "created" not in out
    fdl("commit", work, "-m", "Spark, second night")
    assert published_rows(repo) == sorted(want1 + spark_rows(second), key=repr)
    assert published_rows(repo, "main:1") == want1
    fdl("verify", repo.root)

    # Spark reads both versions back through fdl's Iceberg view
    r = Readers(spark)
    for ref, want in (("main:1", want1), ("main", sorted(want1 + spark_rows(second), key=repr))):
        uri = views_json(repo, ref)["main.events"]
        assert r.spark_rows(uri, COLUMNS) == want, ref


def test_spark_output_on_a_bucket(spark, s3_server, tmp_path):
    """The same on the S3 test server: Spark writes s3a:// into the table's
    prefix of the working catalog's folder, the commit copies server-side."""
    repo = S3Repo(s3_server, tmp_path)
    work = tmp_path / "work"
    repo.setup("checkout", repo.root, work)  # the scene (test_s3's checkouts run FDL_BIN)
    dest = repo.fdl("add", "--folder", work, "events").stdout.strip()
    assert dest.startswith(f"{repo.root}/work/") and dest.endswith("/main/events/")
    df = events(spark, 0, 20)
    df.write.partitionBy("day").parquet("s3a://" + dest[len("s3://"):])
    out = repo.fdl("add", work, "events", dest, "--create").stdout
    assert "Added 3 files (20 rows" in out and "partitioned by day" in out
    repo.fdl("commit", work, "-m", "Spark on a bucket")
    assert normalised(duck_rows(repo.open_version("main"), "lake.events", COLUMNS)) == spark_rows(df)
    keys = repo.keys()
    assert sum(k.startswith("datasets/pop/data/main/events/day=") for k in keys) == 3
    assert not any(k.startswith("datasets/pop/work/") and k.endswith(".parquet") for k in keys)
    # a key outside the table's prefix, and a URL of another bucket, are refused
    p = repo.fdl("add", work, "events", f"{repo.root}/data/main/events/", check=False)
    assert p.returncode == 5 and "is not under" in p.stderr
    p = repo.fdl("add", work, "events", "s3://elsewhere/x.parquet", check=False)
    assert p.returncode == 5 and "s3://elsewhere/x.parquet is not under" in p.stderr
    repo.fdl("verify", repo.root)


@pytest.fixture
def spark_work(spark, repo, tmp_path):
    """A working catalog with table events published from Spark's files, and
    the folder it takes files from: the scene of the refusals below, so
    checked out, added and committed by the release build (tests/README.md,
    "Shared setups": Scenes); each refused add and the commit after it run
    the build under test, as test_spark_output_published_without_copying's
    checkout, add and commit do."""
    work = tmp_path / "work"
    (tmp_path / "attach.sql").write_text(fdl_setup("checkout", repo.root, work).stdout)
    dest = fdl_setup("add", "--folder", work, "events").stdout.strip()
    events(spark, 0, 6).write.partitionBy("day").parquet(dest)
    fdl_setup("add", work, "events", dest, "--create")
    fdl_setup("commit", work, "-m", "base")
    return work, pathlib.Path(dest)


def refused(work, *args, code=5):
    p = fdl("add", work, "events", *args, check=False)
    assert p.returncode == code, p.stderr
    # nothing registered: the working catalog holds no new snapshot
    assert fdl("commit", work, "-m", "nothing", check=False).returncode == 8
    return p.stderr


def test_a_type_mismatch_names_file_column_and_types(spark, spark_work):
    from pyspark.sql import types as T
    work, dest = spark_work
    other = dest.parent / "events_int"  # in the working folder, beside the table's
    events(spark, 100, 4, id_type=T.IntegerType()).write.partitionBy("day").parquet(str(other))
    events(spark, 200, 3).write.mode("append").partitionBy("day").parquet(str(dest))
    bad = []
    for p in staged_files(other):  # into the table's folder, beside good files
        shutil.move(str(p), str(dest / p.relative_to(other)))
        bad.append(str(dest / p.relative_to(other)))
    err = refused(work, dest)
    assert "column id is INTEGER in the file, BIGINT in table main.events" in err
    assert any(b in err for b in bad) and "Nothing was added" in err


def test_a_file_outside_the_repository_is_refused(spark, spark_work, tmp_path):
    work, dest = spark_work
    outside = tmp_path / "elsewhere"
    events(spark, 300, 3).write.partitionBy("day").parquet(str(outside))
    one = staged_files(outside)[0]
    err = refused(work, one)
    assert str(one) in err and "is not under" in err and str(dest) in err
    # nor through a symlink planted in the table's folder
    (dest / "day=0" / "link.parquet").symlink_to(one)
    err = refused(work, dest / "day=0" / "link.parquet")
    assert "symlink" in err and "link.parquet" in err


def test_a_file_that_is_not_parquet_is_refused(spark, spark_work):
    work, dest = spark_work
    events(spark, 400, 3).write.mode("append").partitionBy("day").parquet(str(dest))
    (dest / "day=1" / "notes.parquet").write_text("id,name\n1,a\n")
    err = refused(work, dest)
    assert f"{dest}/day=1/notes.parquet is not a Parquet file" in err


def test_a_file_changed_before_the_commit_is_refused(spark, spark_work, repo):
    work, dest = spark_work
    head = repo.head()
    events(spark, 500, 3).write.mode("append").partitionBy("day").parquet(str(dest))
    files = staged_files(dest)
    fdl("add", work, "events", *files)
    victim = files[0]
    data = bytearray(victim.read_bytes())
    data[8] ^= 0xFF  # the same size, another content
    os.chmod(victim, 0o644)
    victim.write_bytes(bytes(data))
    p = fdl("commit", work, "-m", "changed", check=False)
    assert p.returncode == 5, p.stderr
    assert victim.name in p.stderr and "changed after fdl add registered it" in p.stderr
    assert repo.head() == head  # nothing published


def test_a_file_the_table_holds_already_is_refused(spark, spark_work, tmp_path):
    """DuckDB's own files in the table's folder (rows inserted in the
    working catalog) are the table's already: adding the folder would
    count their rows twice."""
    work, dest = spark_work
    con = connect()
    con.execute((tmp_path / "attach.sql").read_text())
    con.execute("INSERT INTO lake.events SELECT * FROM lake.events LIMIT 2")
    con.close()
    own = [p for p in staged_files(dest) if p.name.startswith("ducklake-")]
    assert own, "DuckDB wrote into the table's folder"
    p = fdl("add", work, "events", dest, check=False)
    assert p.returncode == 9, p.stderr
    assert str(own[0]) in p.stderr and "already" in p.stderr and "Nothing was added" in p.stderr
    fdl("commit", work, "-m", "DuckDB's rows only")  # the inserted rows, once


def bounds(con, table):
    """Each column's min and max as stock DuckDB answers them asked alone
    (from the statistics when it can), then from a scan no statistics can
    answer; a column DuckDB does not order is left out."""
    out = {}
    for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall():
        qc = '"' + c.replace('"', '""') + '"'
        try:
            alone = con.execute(f"SELECT min({qc})::VARCHAR, max({qc})::VARCHAR FROM {table}").fetchone()
        except duckdb.Error:
            continue
        out[c] = (alone, con.execute(f"SELECT min({qc})::VARCHAR, max({qc})::VARCHAR FROM {table} x "
                                     "WHERE hash(x) IS NOT NULL").fetchone())
    return out


def test_columns_the_added_files_have_no_statistics_for_are_answered_as_the_rows_hold(spark, repo, tmp_path):
    """Spark writes a TIMESTAMP as INT96 with no min/max; pyarrow can write
    a file with no statistics at all. After DuckDB inserts rows into such a
    table, stock DuckDB answers min() and max() of every column from the
    statistics of every version exactly as a scan of its rows does
    (DuckLake read the added files' missing bounds as "all NULL" and kept
    the inserted rows' bounds alone: max("at") 12:02 while the rows hold
    12:05)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    work = tmp_path / "work"
    attach = fdl_setup("checkout", repo.root, work).stdout  # the scene: the adds and commits run FDL_BIN
    dest = pathlib.Path(fdl("add", "--folder", work, "events").stdout.strip())
    events(spark, 0, 6).write.partitionBy("day").parquet(str(dest))  # at 12:00 to 12:05
    fdl("add", work, "events", dest, "--create")
    readings = pathlib.Path(fdl("add", "--folder", work, "readings").stdout.strip())
    readings.mkdir(parents=True, exist_ok=True)
    t0 = datetime.datetime(2024, 3, 1, 12)
    pq.write_table(pa.table({
        "id": pa.array([10, 20, 30], pa.int64()),
        "v": pa.array([1.5, float("nan"), -2.5], pa.float64()),
        "s": pa.array(["m", "z", None], pa.string()),
        "d": pa.array([datetime.date(2024, 1, 9), None, datetime.date(2024, 1, 1)], pa.date32()),
        "amount": pa.array([decimal.Decimal("7.25"), decimal.Decimal("-1.00"), None], pa.decimal128(12, 2)),
        "at": pa.array([t0, t0 + datetime.timedelta(hours=5), None], pa.timestamp("us")),
        "none": pa.array([None, None, None], pa.float64())}), readings / "r.parquet", write_statistics=False)
    fdl("add", work, "readings", readings, "--create")
    fdl("commit", work, "-m", "files with no statistics")
    con = connect()
    con.execute(attach)
    con.execute("INSERT INTO lake.events SELECT * FROM lake.events WHERE id IN (1, 2)")  # 12:01, 12:02
    con.execute("INSERT INTO lake.readings VALUES (40, 0.5, 'p', DATE '2024-01-05', 3.00, "
                "TIMESTAMP '2024-03-01 13:00', 1.0)")
    for t in ("lake.events", "lake.readings"):
        b = bounds(con, t)
        assert {c: alone for c, (alone, _) in b.items()} == {c: scan for c, (_, scan) in b.items()}, t
    assert bounds(con, "lake.events")["at"][0] == ("2024-03-01 12:00:00", "2024-03-01 12:05:00")
    con.close()
    fdl("commit", work, "-m", "DuckDB's rows beside them")
    for ref in ("main:1", "main"):
        con = repo.open_version(ref)
        for t in ("lake.events", "lake.readings"):
            b = bounds(con, t)
            assert {c: alone for c, (alone, _) in b.items()} == {c: scan for c, (_, scan) in b.items()}, (ref, t)
        con.close()


# ---- fdl add --iceberg ----------------------------------------------------------

MOR = ("'format-version' = '2', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read', "
       "'write.merge.mode' = 'merge-on-read'")
EVENTS_DDL = ("id BIGINT, name STRING, amount DECIMAL(12,2), at TIMESTAMP, tags ARRAY<STRING>, "
              "place STRUCT<city: STRING, zip: INT>, day INT")


def hadoop_catalog(spark, work):
    """A Hadoop catalog whose warehouse is the working catalog's own folder
    of the repository: its namespace/table folder is the table's folder
    fdl add takes files from (found by the release build: scenery). Returns
    the catalog's name."""
    dest = pathlib.Path(fdl_setup("add", "--folder", work, "events").stdout.strip())
    warehouse = dest.parent.parent
    name = "ice_" + hashlib.sha256(str(warehouse).encode()).hexdigest()[:8]
    spark.conf.set(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set(f"spark.sql.catalog.{name}.type", "hadoop")
    spark.conf.set(f"spark.sql.catalog.{name}.warehouse", f"file://{warehouse}")
    return name


def live_files(spark, table, content=0):
    return {r.file_path for r in spark.sql(f"SELECT file_path FROM {table}.files WHERE content = {content}").collect()}


def add_iceberg(work, table, metadata, check=True):
    p = fdl("add", work, table, "--iceberg", metadata, "--json", check=check)
    return json.loads(p.stdout) if p.returncode == 0 else p


def test_iceberg_table_published_and_a_later_snapshot(spark, repo, tmp_path):
    work = tmp_path / "work"
    fdl_setup("checkout", repo.root, work)  # the scene: the adds and commits run FDL_BIN
    cat = hadoop_catalog(spark, work)
    t = f"{cat}.main.events"
    spark.sql(f"CREATE TABLE {t} ({EVENTS_DDL}) USING iceberg PARTITIONED BY (day) TBLPROPERTIES ({MOR})")
    events(spark, 0, 30).writeTo(t).append()
    spark.sql(f"UPDATE {t} SET name = 'updated', amount = amount * 2 WHERE id % 5 = 0")
    spark.sql(f"DELETE FROM {t} WHERE id % 7 = 3")
    assert live_files(spark, t, content=1), "merge-on-read wrote position deletes"
    want1 = spark_rows(spark.table(t))
    folder = pathlib.Path(fdl("add", "--folder", work, "events").stdout.strip())

    r = add_iceberg(work, "events", folder)
    first = live_files(spark, t)
    assert r["created"] and r["deleted_rows"] > 0 and r["rows"] == len(want1)
    assert {str(folder / f) for f in r["files"]} == {f.removeprefix("file:") for f in first}
    fdl("commit", work, "-m", "Spark's Iceberg table, first snapshot")
    assert published_rows(repo) == want1
    data = repo.root / "data" / "main" / "events"
    for f in r["files"]:  # published without a copy; the Iceberg table still has its file
        assert (data / f).stat().st_ino == (folder / f).stat().st_ino, f

    # the next night: new rows, an update and a delete touching old files
    events(spark, 30, 12).writeTo(t).append()
    spark.sql(f"UPDATE {t} SET name = 'again' WHERE id IN (1, 31)")
    spark.sql(f"DELETE FROM {t} WHERE id IN (2, 32)")
    want2 = spark_rows(spark.table(t))
    second = live_files(spark, t)
    r2 = add_iceberg(work, "events", folder)
    assert not r2["created"]
    # only the files the later snapshot added are registered, those it dropped removed
    assert {str(folder / f) for f in r2["files"]} == {f.removeprefix("file:") for f in second - first}
    assert {str(folder / f) for f in r2["removed"]} == {f.removeprefix("file:") for f in first - second}
    assert r2["files"] and r2["rows"] == len(want2)
    record = read_json(work / "fdl-iceberg.json")["main.events"]
    snap = spark.sql(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0][0]
    assert record["snapshot"] == r2["iceberg_snapshot"] == snap
    fdl("commit", work, "-m", "Spark's Iceberg table, later snapshot")
    assert published_rows(repo) == want2
    assert published_rows(repo, "main:1") == want1
    fdl("verify", repo.root)
    # the same snapshot again changes nothing
    r3 = add_iceberg(work, "events", folder)
    assert r3["files"] == [] and r3["removed"] == []
    assert fdl("commit", work, "-m", "nothing", check=False).returncode == 8


def refused_iceberg(work, table, metadata):
    p = add_iceberg(work, table, metadata, check=False)
    assert p.returncode == 5, p.stderr
    assert "Nothing was added" in p.stderr or "nothing was added" in p.stderr, p.stderr
    assert fdl("commit", work, "-m", "nothing", check=False).returncode == 8  # nothing registered
    assert not (work / "fdl-iceberg.json").exists()
    return p.stderr


def test_iceberg_tables_fdl_cannot_carry_are_refused(spark, repo, tmp_path):
    # the checkout, the table's folder, and the first snapshot of typed
    # below are the scene each refusal starts from: the release build's
    work = tmp_path / "work"
    fdl_setup("checkout", repo.root, work)
    cat = hadoop_catalog(spark, work)
    base = pathlib.Path(fdl_setup("add", "--folder", work, "events").stdout.strip()).parent

    # equality deletes (Flink writes them; here through Iceberg's Java API)
    spark.sql(f"CREATE TABLE {cat}.main.eq (id BIGINT, name STRING) USING iceberg TBLPROPERTIES ({MOR})")
    spark.sql(f"INSERT INTO {cat}.main.eq VALUES (1, 'a'), (2, 'b')")
    jvm = spark._jvm
    table = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration()).load(str(base / "eq"))
    ids = spark._sc._gateway.new_array(spark._sc._gateway.jvm.int, 1)
    ids[0] = 1
    eq_file = str(base / "eq" / "data" / "eq-deletes.parquet")
    import pyarrow
    import pyarrow.parquet
    pyarrow.parquet.write_table(pyarrow.table({"id": pyarrow.array([1], pyarrow.int64())}), eq_file)
    delete = (jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec()).ofEqualityDeletes(ids)
              .withPath(eq_file).withFormat(jvm.org.apache.iceberg.FileFormat.PARQUET)
              .withFileSizeInBytes(os.path.getsize(eq_file)).withRecordCount(1).build())
    table.newRowDelta().addDeletes(delete).commit()
    err = refused_iceberg(work, "eq", base / "eq")
    assert "equality delete" in err and eq_file in err

    # a v1 table
    spark.sql(f"CREATE TABLE {cat}.main.old (id BIGINT) USING iceberg TBLPROPERTIES ('format-version' = '1')")
    spark.sql(f"INSERT INTO {cat}.main.old VALUES (1)")
    meta = sorted((base / "old" / "metadata").glob("v*.metadata.json"))[-1]
    err = refused_iceberg(work, "old", meta)
    assert str(meta) in err and "v1 table" in err

    # metadata that is no Iceberg table's
    broken = base / "old" / "metadata" / "v99.metadata.json"
    broken.write_text('{"format-version": 2, "location": ')
    err = refused_iceberg(work, "old", broken)
    assert str(broken) in err and "not the metadata of an Iceberg table" in err

    # a data file outside the repository
    outside = tmp_path / "outside"
    spark.sql(f"CREATE TABLE {cat}.main.far (id BIGINT) USING iceberg "
              f"TBLPROPERTIES ('write.data.path' = 'file://{outside}')")
    spark.sql(f"INSERT INTO {cat}.main.far VALUES (1), (2)")
    err = refused_iceberg(work, "far", base / "far")
    far = next(outside.rglob("*.parquet"))
    assert str(far) in err and "is not under" in err

    # a later snapshot whose column type changed (int -> long) against the table made from the first
    spark.sql(f"CREATE TABLE {cat}.main.typed (id INT, name STRING) USING iceberg TBLPROPERTIES ({MOR})")
    spark.sql(f"INSERT INTO {cat}.main.typed VALUES (1, 'a')")
    fdl_setup("add", work, "typed", "--iceberg", base / "typed", "--json")
    fdl_setup("commit", work, "-m", "typed, first snapshot")
    spark.sql(f"ALTER TABLE {cat}.main.typed ALTER COLUMN id TYPE BIGINT")
    spark.sql(f"INSERT INTO {cat}.main.typed VALUES (2, 'b')")
    record = read_json(work / "fdl-iceberg.json")
    p = add_iceberg(work, "typed", base / "typed", check=False)
    assert p.returncode == 5 and "column id (BIGINT) of the Iceberg table is INTEGER in table main.typed" in p.stderr
    assert "metadata.json" in p.stderr and "Nothing was added" in p.stderr
    assert fdl("commit", work, "-m", "nothing", check=False).returncode == 8
    assert read_json(work / "fdl-iceberg.json") == record
