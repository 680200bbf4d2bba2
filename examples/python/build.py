"""Write with stock DuckDB, then commit: the whole publishing step in Python.

    python examples/python/build.py ROOT census.csv

Checks ROOT's main branch out into a working catalog, loads the CSV into
lake.population, and commits it as a new version. Run it again with another
CSV: the next version replaces the table. Uses the fdl CLI ($FDL, default
`fdl`) for checkout and commit, DuckDB for everything in between.
"""
import os
import subprocess
import sys
import tempfile

import duckdb

FDL = os.environ.get("FDL", "fdl")


def main(root, csv):
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "work")
        attach = subprocess.run([FDL, "checkout", root, work], check=True, capture_output=True,
                                text=True).stdout
        con = duckdb.connect(config={"extension_directory": os.environ.get("FDL_EXTENSION_DIR", ""),
                                     "autoinstall_known_extensions": False}
                             if os.environ.get("FDL_EXTENSION_DIR") else {})
        con.execute(attach)
        con.execute("CREATE OR REPLACE TABLE lake.population AS SELECT * FROM read_csv(?)", [csv])
        con.close()
        out = subprocess.run([FDL, "commit", work, "-m", f"population from {os.path.basename(csv)}"],
                             check=True, capture_output=True, text=True).stdout
        print(out.strip())


if __name__ == "__main__":
    main(*sys.argv[1:3])
