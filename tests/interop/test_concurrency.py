"""Many writers on one branch of a repository (a folder, or a bucket), readers
meanwhile.

Scale with FDL_STRESS_PROCS and FDL_STRESS_COMMITS (CI: 3 x 3; the figures
in docs/reliability.md come from larger runs)."""
import os
import pathlib
import subprocess
import sys
import threading

from conftest import EXT, FDL, fdl, rows

PROCS = int(os.environ.get("FDL_STRESS_PROCS", "3"))
COMMITS = int(os.environ.get("FDL_STRESS_COMMITS", "3"))


def test_many_writers_one_branch(repo, tmp_path, ledger):
    many_writers(repo, tmp_path, ledger)


def test_many_writers_one_branch_of_a_bucket(s3repo, tmp_path, ledger):
    many_writers(s3repo, tmp_path, ledger)


def many_writers(repo, tmp_path, ledger):
    con = repo.checkout(tmp_path / "base")
    con.execute("CREATE TABLE lake.t (w INTEGER, k INTEGER)")
    con.close()
    fdl("commit", tmp_path / "base", "-m", "base", env=repo.env)
    base = repo.head()
    stop = threading.Event()
    reads = {"ok": 0, "bad": []}

    def reader():
        env = dict(os.environ, FDL_EXTENSION_DIR=EXT, **repo.env)
        # at least one read, however fast the writers are done
        while not stop.is_set() or reads["ok"] + len(reads["bad"]) == 0:
            try:
                p = subprocess.run([FDL, "query", str(repo.root), "SELECT count(*) FROM t", "-f", "csv"],
                                   capture_output=True, text=True, env=env)
            except OSError as e:  # the reader must not die unseen
                reads["bad"].append((None, repr(e)))
                return
            if p.returncode == 0 and p.stdout.startswith("count_star()\n"):
                reads["ok"] += 1
            else:
                reads["bad"].append((p.returncode, p.stderr))

    t = threading.Thread(target=reader)
    t.start()
    worker = pathlib.Path(__file__).with_name("stress_worker.py")
    procs = [subprocess.Popen([sys.executable, str(worker), FDL, EXT, str(repo.root), str(tmp_path / f"w{i}"), str(i),
                               str(COMMITS)], stdout=subprocess.PIPE, text=True, env=dict(os.environ, **repo.env))
             for i in range(PROCS)]
    outs = [p.communicate()[0] for p in procs]
    stop.set()
    t.join()
    assert all(p.returncode == 0 for p in procs), outs
    ledger.published("".join(outs), env=repo.env)
    won = {tuple(map(int, l.split()[1:])) for o in outs for l in o.splitlines() if l.startswith("ok ")}
    conflicts = sum(int(l.split()[2]) for o in outs for l in o.splitlines() if l.startswith("conflicts "))
    assert len(won) == PROCS * COMMITS
    # the first-parent chain holds every successful commit, once, in order
    chain = []
    v = repo.head()
    while v != base:
        chain.append(v)
        v = repo.version(v)["parents"][0]
    assert len(chain) == PROCS * COMMITS
    seqs = [repo.version(x)["seq"] for x in chain]
    assert seqs == list(range(PROCS * COMMITS + 1, 1, -1))
    # no update lost: the tip has every row a winner committed
    assert set(rows(repo.open_version("main"), "lake.t")) == won
    assert reads["bad"] == [] and reads["ok"] > 0
    assert fdl("verify", repo.root, "--all", env=repo.env).returncode == 0
    print(f"\n{repo.root}: {PROCS} writers x {COMMITS} commits, {conflicts} conflicts retried, "
          f"{reads['ok']} reads, 0 failed")
