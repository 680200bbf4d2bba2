"""fdl from its packages alone: the wheel (`make wheel`) and the tarball
(`make dist`), built once, each installed into a fresh folder by README's
user section, run as written (its install block, then its tour) in an
environment that names nothing of the clone: `env -i` with HOME (a fresh
folder: pip's configuration pointing at a folder holding the wheel and
DuckDB's, as PyPI would, and the bucket's credentials in ~/.aws) and PATH
(/usr/bin:/bin). Then the rest of the tour: serve and clone over HTTP, the
page, the user agent, pyfdl.

Every process runs under the loader's debug output (LD_DEBUG=libs,files,
into a folder of the test): each shared library an fdl process loads,
linked or opened with dlopen, comes from the installed folder or from the
C runtime (glibc, libgcc_s, libstdc++, libz), and libcurl, libxml2,
libmicrohttpd, libsqlite3, libduckdb and the extensions were among them,
from the installed folder. Nothing is downloaded: the user's own DuckDB
never writes ~/.duckdb."""
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import threading
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ROOT

README = ROOT / "README.md"
# what a process may load from outside the installed folder: the C runtime
RUNTIME = {"ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
           "libresolv.so.2", "libutil.so.1", "libanl.so.1", "libmvec.so.1", "libnsl.so.1", "libgcc_s.so.1",
           "libstdc++.so.6", "libz.so.1"}
SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")
# what the tour must have loaded from the installed folder
MUST = {"libfdl.so.2", "libduckdb.so", "libcurl.so.4", "libxml2.so.2", "libmicrohttpd.so.12", "libsqlite3.so.0",
        "ducklake.duckdb_extension", "sqlite_scanner.duckdb_extension", "httpfs.duckdb_extension",
        "avro.duckdb_extension"}
BUCKET = "my-bucket"


def readme_block(marker):
    """The sh block after README's `<!-- marker` comment."""
    m = re.search(r"<!-- " + re.escape(marker) + r"\b[^\n]*-->\n```sh[^\n]*\n(.*?)```", README.read_text(), re.S)
    assert m, f"README.md has no sh block after <!-- {marker}"
    return m.group(1)


def download_cache():
    env = os.environ
    return pathlib.Path(env.get("FDL_DOWNLOAD_CACHE") or env.get("FDL_CACHE") or
                        pathlib.Path(env.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache") / "fdl")


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """make wheel dist (nothing to do when they are current); the wheel, the
    tarball, and a folder pip installs from as it would from PyPI: the
    wheel and DuckDB's, from the download cache scripts/setup.sh fills."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    p = subprocess.run(["make", "-s", "-j2", "wheel", "dist"], cwd=ROOT, capture_output=True, text=True,
                       timeout=1800, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    wheels = list((ROOT / "build" / "wheel").glob("pyfdl-*.whl"))
    assert len(wheels) == 1, wheels
    tarballs = list((ROOT / "build" / "dist").glob("fdl-*-linux-x86_64.tar.gz"))
    assert len(tarballs) == 1, tarballs
    index = tmp_path_factory.mktemp("index")
    os.symlink(wheels[0], index / wheels[0].name)
    duckdb = sorted(download_cache().glob("duckdb-1.5.5-cp*-manylinux*.whl"))
    assert duckdb, f"no duckdb 1.5.5 wheel in {download_cache()} (make setup)"
    for w in duckdb:
        os.symlink(w, index / w.name)
    return wheels[0], tarballs[0], index


def home_for(tmp, index, s3_server):
    """A fresh HOME: pip installs from `index` only; the AWS CLI's files
    name the test's S3 server."""
    home = tmp / "home"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        f"[global]\nno-index = true\nfind-links = {index}\ndisable-pip-version-check = true\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(
        f"[default]\naws_access_key_id = {s3_server.key_id}\naws_secret_access_key = {s3_server.secret}\n")
    (home / ".aws" / "config").write_text(
        f"[default]\nregion = us-east-1\nendpoint_url = {s3_server.endpoint}\n")
    return home


class Session:
    """A shell of the user's: env -i with HOME and PATH, in a fresh folder,
    every process writing the loader's debug output into `ld`."""

    def __init__(self, tmp, home, path):
        self.cwd, self.home, self.path = tmp / "user", home, path
        self.cwd.mkdir()
        self.ld = tmp / "ld"
        self.ld.mkdir()
        self.trace = tmp / "trace"

    def env(self):
        return ["env", "-i", f"HOME={self.home}", f"PATH={self.path}", "LD_DEBUG=libs,files",
                f"LD_DEBUG_OUTPUT={self.ld}/ld"]

    def script(self, text):
        """Run a README block as written; bash -x stamps each command with
        the time (stderr, kept in `trace`)."""
        stamped = "PS4='+ ${EPOCHREALTIME} '\nset -x\n" + text  # (bash takes no PS4 from root's environment)
        p = subprocess.run([*self.env(), "/bin/bash", "-ec", stamped], cwd=self.cwd,
                           capture_output=True, text=True, timeout=900)
        self.trace.write_text(p.stderr)
        assert p.returncode == 0, f"exit {p.returncode}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr[-6000:]}"
        return p.stdout

    def sh(self, command, check=True):
        """One more command in the same shell (the PATH the block left)."""
        p = subprocess.run([*self.env(), "/bin/bash", "-ec", command], cwd=self.cwd, capture_output=True,
                           text=True, timeout=300)
        assert not check or p.returncode == 0, f"{command}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
        return p

    def popen(self, command, log):
        """A command left running (a server): stdout a pipe, stderr into `log`."""
        with open(log, "w") as err:
            return subprocess.Popen([*self.env(), "/bin/bash", "-ec", f"exec {command}"], cwd=self.cwd,
                                    stdout=subprocess.PIPE, stderr=err, text=True)

    def seconds(self, first, last):
        """From the start of the first traced command matching `first` to the
        end of the last one matching `last` (the start of the next)."""
        stamps = [(float(m.group(1)), m.group(2)) for m in
                  re.finditer(r"^\++ (\d+\.\d+) (.*)$", self.trace.read_text(), re.M)]
        start = next(t for t, c in stamps if re.search(first, c))
        i = max(i for i, (t, c) in enumerate(stamps) if re.search(last, c))
        assert i + 1 < len(stamps), f"nothing ran after {last!r}: its end is unknown"
        return stamps[i + 1][0] - start


def loaded(ld_dir):
    """{pid: [paths]}: what each fdl process loaded, from the loader's debug
    output. A process that exec'd fdl (the wheel's launcher, a Python
    script) counts from its exec on; other processes (pip, Python) are not
    fdl's and are left out."""
    out = {}
    for f in sorted(pathlib.Path(ld_dir).glob("ld.*")):
        lines = f.read_text(errors="replace").splitlines()
        starts = [i for i, l in enumerate(lines) if "transferring control: fdl" in l]
        if not starts:
            continue
        controls = [i for i, l in enumerate(lines) if "transferring control:" in l]
        before = [i for i in controls if i < starts[0]]
        lines = lines[before[-1] + 1:] if before else lines
        paths, tries = [], None
        for l in lines:
            body = l.split(":", 1)[1].strip() if ":" in l else l
            if body.startswith("find library="):
                if tries:
                    paths.append(tries[-1])
                tries = []
                continue
            if body.startswith("trying file=") and tries is not None:
                tries.append(body[len("trying file="):])
                continue
            if tries:
                paths.append(tries[-1])
            tries = None
            m = re.match(r"file=(/\S+) \[\d+\];\s+dynamically loaded by", body)
            if m:
                paths.append(m.group(1))
            m = re.match(r"calling init: (/\S+)", body)
            if m:
                paths.append(m.group(1))
        if tries:
            paths.append(tries[-1])
        out[f.name] = paths
    return out


def check_loaded(ld_dir, installed):
    installed = os.path.realpath(installed) + "/"
    procs = loaded(ld_dir)
    assert len(procs) >= 10, f"only {len(procs)} fdl processes in the loader's output"
    seen = set()
    for pid, paths in procs.items():
        for p in paths:
            real = os.path.realpath(p)
            if real.startswith(installed):
                seen.add(os.path.basename(real))
                continue
            name = os.path.basename(p)
            assert name in RUNTIME and real.startswith(SYSTEM_DIRS), \
                f"{pid}: an fdl process loaded {p} ({real}), neither installed nor the C runtime"
    assert MUST <= seen, f"not loaded from the installed folder: {sorted(MUST - seen)}"
    return procs


class Recorder(SimpleHTTPRequestHandler):
    """A static host of a folder that notes each request's User-Agent."""
    agents = []

    def log_message(self, *a):
        pass

    def do_GET(self):
        Recorder.agents.append(self.headers.get("User-Agent"))
        super().do_GET()

    def do_HEAD(self):
        Recorder.agents.append(self.headers.get("User-Agent"))
        super().do_HEAD()


def tour(sh, install, path_after, version, ledger, s3_server):
    """README's install block and tour, as written, in one shell; then the
    rest, in the PATH the block left: what it published, serve and clone
    over HTTP with the page, the user agent, the bucket."""
    s3_server.client().create_bucket(Bucket=BUCKET)
    try:
        out = sh.script(readme_block(f"user-install: {install}") + readme_block("user-tour"))
        assert "Oslo" in out and "717710" in out, out
        (vid,) = re.findall(r"Committed version (\S+)", out)
        ledger.record(sh.cwd / "population", vid)
        took = sh.seconds(r"^(pip install|tar xzf)", r"^fdl commit ")
        sh.path = path_after
        assert sh.sh("fdl --version").stdout.split()[:2] == ["fdl", version]
        assert vid in sh.sh(f"fdl log s3://{BUCKET}/population --json").stdout
        # serve, with its page, and clone from it over HTTP
        log = sh.cwd.parent / "serve.log"
        serve = sh.popen("fdl serve population --port 0", log)
        try:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", serve.stdout.readline())
            assert m, log.read_text()
            url = f"http://127.0.0.1:{m.group(1)}"
            with urllib.request.urlopen(url + "/", timeout=30) as r:
                assert b"<html" in r.read(4096).lower()
            sh.sh(f"fdl clone {url} mirror")
            assert vid in sh.sh("fdl log mirror --json").stdout
            assert "Oslo" in sh.sh(f"fdl query {url} 'FROM population ORDER BY city'").stdout
        finally:
            serve.terminate()
            serve.wait(timeout=30)
        # the user agent names the installed version
        Recorder.agents = []
        host = ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: Recorder(*a, directory=str(sh.cwd)))
        threading.Thread(target=host.serve_forever, daemon=True).start()
        try:
            sh.sh(f"fdl clone http://127.0.0.1:{host.server_port}/population copy")
        finally:
            host.shutdown()
            host.server_close()
        assert Recorder.agents and set(Recorder.agents) == {f"fdl/{version}"}, set(Recorder.agents)
        sh.sh("fdl verify mirror && fdl verify copy")
        # the other commands: a second writer, a pipeline step that commits
        # (its DuckDB attaching with FDL_ATTACH alone), rebase, show, diff,
        # export, a clone from the bucket
        sh.sh("fdl checkout population second > second.sql")
        (sh.cwd / "build.py").write_text(
            "import os, duckdb\n"
            "con = duckdb.connect()\n"
            "con.execute(os.environ['FDL_ATTACH'])\n"
            "con.execute(\"INSERT INTO lake.population VALUES ('Trondheim', 212660)\")\n")
        run = sh.sh("fdl run population -m 'Census 2025' --author 'You <you@example.org>' -- python build.py").stdout
        (second,) = re.findall(r"Committed version (\S+)", run)
        ledger.record(sh.cwd / "population", second)
        assert second in sh.sh("fdl rebase second").stdout
        assert second in sh.sh("fdl show population").stdout
        assert "Trondheim" in sh.sh("fdl diff population 1 2 --rows").stdout
        sh.sh("fdl export population population --to population.parquet")
        assert (sh.cwd / "population.parquet").stat().st_size > 0
        sh.sh(f"fdl clone s3://{BUCKET}/population from-bucket && fdl verify from-bucket")
    finally:
        bucket = s3_server.client()
        for key in s3_server.keys(BUCKET):
            bucket.delete_object(Bucket=BUCKET, Key=key)
        bucket.delete_bucket(Bucket=BUCKET)
    assert not (sh.home / ".duckdb").exists(), "the user's DuckDB installed or downloaded an extension"
    return took


def audited(wheel):
    """The wheel's tag is the policy auditwheel found it consistent with
    (make wheel keeps auditwheel's verdict beside it, with its sha256)."""
    audit = json.loads(pathlib.Path(str(wheel) + ".auditwheel.json").read_text())
    assert audit["wheel_sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest(), "a stale auditwheel verdict"
    tag = wheel.name[:-len(".whl")].split("-")[-1]
    assert tag.startswith("manylinux_") and audit["overall_tag"] == tag, (tag, audit["overall_tag"])


def test_the_wheel_alone(packages, tmp_path, s3_server, ledger):
    wheel, _, index = packages
    audited(wheel)
    version = wheel.name.split("-")[1]
    sh = Session(tmp_path, home_for(tmp_path, index, s3_server), "/usr/bin:/bin")
    venv = sh.cwd / "fdl-env"
    took = tour(sh, "wheel", f"{venv}/bin:/usr/bin:/bin", version, ledger, s3_server)
    print(f"wheel: {wheel.stat().st_size / 1e6:.1f} MB; pip install pyfdl to the first commit: {took:.1f} s")
    # pyfdl finds the wheel's own libfdl, whose version is the wheel's, and
    # publishes beside the user's DuckDB in one process
    (sh.cwd / "publish.py").write_text(
        "import json, duckdb, pyfdl\n"
        "repo = pyfdl.Repository('population')\n"
        "con = duckdb.connect()\n"
        "con.execute(repo.checkout('third'))\n"
        "con.execute(\"INSERT INTO lake.population VALUES ('Stavanger', 149048)\")\n"
        "con.close()\n"
        "vid = repo.commit('third', 'Census 2026', 'You <you@example.org>')\n"
        "print(json.dumps([pyfdl._lib._name, pyfdl.__version__, pyfdl.library_version(), pyfdl.extension_dir(),\n"
        "                  [v.message for v in repo.versions()], vid, repo.connect().sql('SELECT count(*) FROM population').fetchall()]))\n")
    info = json.loads(sh.sh("python publish.py").stdout)
    ledger.record(sh.cwd / "population", info[5])
    site = f"{venv}/lib/"
    assert info[0].startswith(site) and info[0].endswith("/pyfdl/lib/libfdl.so.2"), info
    assert info[1] == info[2] == version and info[3].startswith(site), info
    assert info[4] == ["Census 2026", "Census 2025", "Census 2024"] and info[6] == [[4]], info
    check_loaded(sh.ld, venv)


def test_the_tarball_alone(packages, tmp_path, s3_server, ledger):
    wheel, tarball, index = packages
    version = wheel.name.split("-")[1]
    assert tarball.name == f"fdl-{version}-linux-x86_64.tar.gz"
    sh = Session(tmp_path, home_for(tmp_path, index, s3_server), "/usr/bin:/bin")
    shutil.copy(tarball, sh.cwd)
    top = sh.cwd / tarball.name[:-len(".tar.gz")]
    took = tour(sh, "tarball", f"{sh.cwd}/duckdb-env/bin:{top}/bin:/usr/bin:/bin", version, ledger, s3_server)
    print(f"tarball: {tarball.stat().st_size / 1e6:.1f} MB; tar xzf to the first commit: {took:.1f} s")
    check_loaded(sh.ld, top)
