"""fdl add (issue 59): Parquet that real Spark 4.0.1 (local[1], one session for
the module) wrote into a repository's working folder is published without
being copied; stock DuckDB through `fdl attach` and Spark itself through
fdl's Iceberg view return exactly Spark's rows; a file of another type, one
outside the repository, one that is not Parquet and one changed before the
commit are refused, with the file named and nothing registered."""
import decimal
import hashlib
import datetime
import os
import pathlib
import shutil

import pytest

from conftest import S3Repo, connect, fdl, read_json
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
    fdl("checkout", repo.root, work)
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
    repo.fdl("checkout", repo.root, work)
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
    the folder it takes files from."""
    work = tmp_path / "work"
    (tmp_path / "attach.sql").write_text(fdl("checkout", repo.root, work).stdout)
    dest = fdl("add", "--folder", work, "events").stdout.strip()
    events(spark, 0, 6).write.partitionBy("day").parquet(dest)
    fdl("add", work, "events", dest, "--create")
    fdl("commit", work, "-m", "base")
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
