"""Publishing an Iceberg table Spark keeps (issue 59): `fdl add --iceberg` +
`fdl commit` on the table Spark wrote into the working catalog's folder
(a Hadoop catalog there), against the way without it, copying the
snapshot's rows through DuckDB (`CREATE OR REPLACE TABLE lake.events AS
SELECT * FROM iceberg_scan(...)`) + `fdl commit`; for the first snapshot
and for a later one (1% more rows, 0.1% deleted).

    deps/venv/bin/python bench/add_iceberg.py [GB] [RUNS]

Spark (local[2]) writes GB of Parquet as an Iceberg v2 table once per run
(merge-on-read, 1% of the rows deleted: position deletes), then the two
ways alternate; each time is the wall clock of the fdl (and DuckDB)
processes only, Spark's writes excluded. Prints one Markdown row per
snapshot with the medians. FDL_BIN names the fdl binary (default
build/fdl).
"""
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
FDL = os.environ.get("FDL_BIN", str(ROOT / "build" / "fdl"))
ENV = dict(os.environ, FDL_EXTENSION_DIR=str(ROOT / "deps" / "extensions"), FDL_AUTHOR_NAME="Bench",
           FDL_AUTHOR_EMAIL="bench@example.org")
ROW_BYTES = 20  # as bench/add_spark.py
JARS = ROOT / "deps" / "jars"
MOR = ("'format-version' = '2', 'write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read'")


def fdl(*args):
    return subprocess.run([FDL, *map(str, args)], check=True, capture_output=True, text=True, env=ENV).stdout


def rows_sql(first, n):
    return (f"SELECT id, cast(id * 7919 % 1000003 AS DECIMAL(12, 2)) AS amount, timestamp_seconds(1700000000 + id) "
            f"AS at, concat('name-', id % 100000) AS name, named_struct('city', concat('c', id % 97), 'zip', "
            f"cast(id % 10000 AS INT)) AS place, cast(id % 8 AS INT) AS day FROM range({first}, {first + n})")


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def one_run(spark, rows, run, times):
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="fdl-bench-ice-"))
    try:
        repo, work, copy = tmp / "repo", tmp / "work", tmp / "copy"
        fdl("init", repo)
        fdl("checkout", repo, work)
        dest = pathlib.Path(fdl("add", "--folder", work, "events").strip())
        cat = f"bench{run}"
        spark.conf.set(f"spark.sql.catalog.{cat}", "org.apache.iceberg.spark.SparkCatalog")
        spark.conf.set(f"spark.sql.catalog.{cat}.type", "hadoop")
        spark.conf.set(f"spark.sql.catalog.{cat}.warehouse", f"file://{dest.parent.parent}")
        t = f"{cat}.main.events"
        spark.sql(f"CREATE TABLE {t} USING iceberg PARTITIONED BY (day) TBLPROPERTIES ({MOR}) AS {rows_sql(0, rows)}")
        spark.sql(f"DELETE FROM {t} WHERE id % 100 = 7")
        attach = fdl("checkout", repo, copy, "--orphan", "copy")
        size = sum(p.stat().st_size for p in dest.rglob("*.parquet"))

        def by_add(label):
            fdl("add", work, "events", "--iceberg", dest)
            fdl("commit", work, "-m", f"Spark's Iceberg table, {label}")

        def by_copy(label):
            meta = sorted((dest / "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))[-1]
            script = attach + (f"\nLOAD avro; LOAD iceberg;\nCREATE OR REPLACE TABLE lake.events AS SELECT * FROM "
                               f"iceberg_scan('{meta}');\n")
            subprocess.run([str(ROOT / "deps" / "venv" / "bin" / "duckdb"), "-c", script], check=True,
                           capture_output=True, env=ENV)
            fdl("commit", copy, "-m", f"Spark's Iceberg table copied through DuckDB, {label}")

        for label in ("first snapshot", "later snapshot"):
            if label == "later snapshot":
                spark.sql(f"INSERT INTO {t} {rows_sql(rows, rows // 100)}")
                spark.sql(f"DELETE FROM {t} WHERE id % 1000 = 11")
            order = ["fdl add --iceberg", "DuckDB copy"] if run % 2 == 0 else ["DuckDB copy", "fdl add --iceberg"]
            for way in order:
                times[(label, way)].append(timed(lambda: (by_add if way.startswith("fdl") else by_copy)(label)))
        return size
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    gb = float(sys.argv[1]) if len(sys.argv) > 1 else 0.25
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rows = int(gb * 2**30 / ROW_BYTES)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("fdl-bench-add-iceberg")
             .config("spark.jars", str(JARS / "iceberg-spark-runtime-4.0_2.13-1.10.0.jar"))
             .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    times = {(s, w): [] for s in ("first snapshot", "later snapshot") for w in ("fdl add --iceberg", "DuckDB copy")}
    size = 0
    for run in range(runs):
        size = one_run(spark, rows, run, times)
    spark.stop()
    print(f"| publish an Iceberg table of {size / 2**30:.2f} GiB ({rows:,} rows, 8 partitions, 1% deleted), "
          f"median of {runs} | fdl add --iceberg + commit | DuckDB copy + commit | ratio |")
    print("|---|---|---|---|")
    for label in ("first snapshot", "later snapshot"):
        a, c = statistics.median(times[(label, "fdl add --iceberg")]), statistics.median(times[(label, "DuckDB copy")])
        print(f"| {label} | {a:.2f} s | {c:.2f} s | {c / a:.1f}x |")
    print("all runs:", {f"{k[0]}, {k[1]}": [round(x, 2) for x in v] for k, v in times.items()})


if __name__ == "__main__":
    main()
