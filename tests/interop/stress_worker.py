"""One writer of the concurrency test: commit `count` rows to a branch,
checking out again after every conflict. Prints one line per outcome."""
import os
import shutil
import subprocess
import sys

import duckdb

fdl, ext, root, workdir, wid, count = sys.argv[1:7]
env = dict(os.environ, FDL_EXTENSION_DIR=ext, FDL_AUTHOR_NAME=f"w{wid}")
done = conflicts = 0
while done < int(count):
    shutil.rmtree(workdir, ignore_errors=True)
    sql = subprocess.run([fdl, "checkout", root, workdir], capture_output=True, text=True, env=env, check=True).stdout
    con = duckdb.connect(config={"extension_directory": ext, "autoinstall_known_extensions": False})
    con.execute(sql)
    con.execute(f"INSERT INTO lake.t VALUES ({wid}, {done})")
    con.close()
    p = subprocess.run([fdl, "commit", workdir, "-m", f"w{wid} #{done}"], capture_output=True, text=True, env=env)
    if p.returncode == 0:
        done += 1
        print(f"ok {wid} {done - 1}\n{p.stdout.strip()}", flush=True)  # and the version, for the ledger
    elif p.returncode == 4 and ("moved" in p.stderr or "locked" in p.stderr):
        conflicts += 1
    else:
        print(f"error {p.returncode} {p.stderr.strip()}", flush=True)
        sys.exit(1)
print(f"conflicts {wid} {conflicts}", flush=True)
