"""Publishing Spark's output (issue 59): `fdl add` + `fdl commit` on the
files Spark wrote into the table's folder of the working catalog, against
the way without fdl add, copying the same rows through DuckDB
(`INSERT INTO lake.t SELECT * FROM read_parquet(...)`) + `fdl commit`.

    deps/venv/bin/python bench/add_spark.py [GB] [RUNS]

Spark (local[2]) writes GB of Parquet once per run into two working
catalogs' folders (the same rows, partitioned by day), then the two ways
alternate; each time is the wall clock of the fdl (and DuckDB) processes
only, Spark's write excluded. Prints one Markdown row per way with the
median. FDL_BIN names the fdl binary (default build/fdl).
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
ROW_BYTES = 20  # what a row below costs in Snappy Parquet (measured: 0.31 GiB for 16.8M rows)


def fdl(*args):
    return subprocess.run([FDL, *map(str, args)], check=True, capture_output=True, text=True, env=ENV).stdout


def spark_write(spark, dest, rows):
    # tasks of ~4M rows (~80 MB): each sorts its slice by day in memory, as a
    # Spark job over many input splits does (two huge tasks spill for ages)
    df = spark.range(0, rows, 1, max(2, rows // 4_000_000)).selectExpr(
        "id", "cast(id * 7919 % 1000003 AS DECIMAL(12, 2)) AS amount",
        "timestamp_seconds(1700000000 + id) AS at", "concat('name-', id % 100000) AS name",
        "named_struct('city', concat('c', id % 97), 'zip', cast(id % 10000 AS INT)) AS place",
        "cast(id % 8 AS INT) AS day")
    df.write.partitionBy("day").parquet(str(dest))


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    gb = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rows = int(gb * 2**30 / ROW_BYTES)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("fdl-bench-add").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    times = {"fdl add": [], "DuckDB copy": []}
    size = 0
    for run in range(runs):
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="fdl-bench-add-"))
        try:
            repo, work, copy = tmp / "repo", tmp / "work", tmp / "copy"
            fdl("init", repo)
            fdl("checkout", repo, work)
            dest = pathlib.Path(fdl("add", "--folder", work, "events").strip())
            spark_write(spark, dest, rows)
            size = sum(p.stat().st_size for p in dest.rglob("*.parquet"))
            attach = fdl("checkout", repo, copy, "--orphan", "copy")
            state = {"src": dest}

            def by_add():
                fdl("add", work, "events", dest, "--create")
                fdl("commit", work, "-m", "Spark's output, registered")
                state["src"] = repo / "data" / "main" / "events"  # where the files are now

            def by_copy():
                script = attach + (f"\nCREATE TABLE lake.events AS SELECT * FROM read_parquet("
                                   f"'{state['src']}/**/*.parquet', hive_partitioning = true);\n")
                subprocess.run([str(ROOT / "deps" / "venv" / "bin" / "duckdb"), "-c", script], check=True,
                               capture_output=True, env=ENV)
                fdl("commit", copy, "-m", "Spark's output, copied through DuckDB")

            order = ["fdl add", "DuckDB copy"] if run % 2 == 0 else ["DuckDB copy", "fdl add"]
            for way in order:
                times[way].append(timed(by_add if way == "fdl add" else by_copy))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    spark.stop()
    a, c = statistics.median(times["fdl add"]), statistics.median(times["DuckDB copy"])
    print(f"| publish {size / 2**30:.2f} GiB of Spark output ({rows:,} rows, 8 partitions), median of {runs} "
          f"| fdl add + commit | DuckDB copy + commit | ratio |")
    print("|---|---|---|---|")
    print(f"| seconds | {a:.2f} | {c:.2f} | {c / a:.1f}x |")
    print("all runs:", {k: [round(x, 2) for x in v] for k, v in times.items()})


if __name__ == "__main__":
    main()
