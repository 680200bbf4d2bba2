#!/usr/bin/env python3
"""fdl, packaged to run from wherever it is unpacked (`make dist`, `make wheel`).

  package.py stage STAGE --cli F --lib F --duckdb F --extensions DIR --lazy SONAMES --web DIR --man DIR
                   --header F --doc F... [--duckdb-license F]
      One tree: bin/fdl, lib/libfdl.so.2, lib/fdl/ (libduckdb.so, the
      extensions fdl loads laid out as DuckDB's extension_directory, the
      libraries libfdl opens with dlopen() under their own names, and every C
      library any of these needs beyond the C runtime, renamed
      <name>-<hash>.so.N as auditwheel does, so that a process that already
      has the system's copy never mixes the two), share/ (the page, the manual
      pages, the licences), include/fdl.h. Each program and library finds the
      others through its run path ($ORIGIN), checked at the end with the
      loader (ldd): nothing resolves outside the tree but the C runtime.
  package.py tarball STAGE OUT.tar.gz
  package.py wheel STAGE OUTDIR --binding DIR --requires REQ... --auditwheel EXE --policy TAG
      pyfdl-<version>-py3-none-<TAG>.whl: the binding (bindings/python)
      with the tree inside the package (pyfdl/bin, pyfdl/lib, pyfdl/share),
      the `fdl` command (a launcher that execs pyfdl/bin/fdl), tagged TAG;
      `auditwheel show` must find it consistent with exactly TAG (its
      verdict is kept beside it, <wheel>.auditwheel.json).

Needs ldd (glibc), patchelf and strip. docs/packaging.md says why it is so.
"""
import argparse
import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile

# What every Linux has and manylinux lets a wheel assume: glibc's own
# libraries, the C++ runtime, zlib. Everything else is carried.
RUNTIME = {
    "linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0",
    "librt.so.1", "libresolv.so.2", "libutil.so.1", "libanl.so.1", "libmvec.so.1", "libnsl.so.1",
    "libgcc_s.so.1", "libstdc++.so.6", "libz.so.1",
}
# The DuckDB extensions fdl loads: catalogs (ducklake; sqlite_scanner and
# postgres_scanner for working catalogs), httpfs (HTTP and S3 data), avro
# (fdl verify reading the Iceberg manifests back).
EXTENSIONS = ("ducklake", "sqlite_scanner", "httpfs", "postgres_scanner", "avro")


def die(msg):
    sys.exit(f"package.py: {msg}")


def run(*cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        die(f"{' '.join(cmd)} failed: {p.stderr.strip()}")
    return p.stdout


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def elfs(root):
    for d, _, files in os.walk(root):
        for f in sorted(files):
            p = os.path.join(d, f)
            if not os.path.islink(p) and is_elf(p):
                yield p


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run("readelf", "-d", "-W", path))


def resolved(path):
    """soname -> path, as the loader resolves path's dependencies (all of
    them, transitively), in a clean environment."""
    out = run("env", "-i", "ldd", path)
    libs = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+|not found)", line)
        if m:
            libs[m.group(1)] = None if m.group(2) == "not found" else m.group(2)
        else:
            m = re.match(r"\s*(/\S+) \(0x", line)
            if m:
                libs[os.path.basename(m.group(1))] = m.group(1)
    return libs


def system_library(soname):
    """Where the system keeps soname (x86-64), from ldconfig's cache."""
    for line in run("/sbin/ldconfig", "-p").splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and m.group(1) == soname and "x86-64" in m.group(2):
            return m.group(3)
    die(f"{soname} is not installed (scripts/setup.sh installs the Debian package that has it)")


def hashed_name(soname, path):
    """libcrypto.so.3 -> libcrypto-1a2b3c4d.so.3, after the file's sha256."""
    with open(path, "rb") as f:
        h = hashlib.sha256(f.read()).hexdigest()[:8]
    stem, sep, rest = soname.partition(".so")
    return f"{stem}-{h}{sep}{rest}"


def copy(src, dst, mode=0o644):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)
    os.chmod(dst, mode)


def debian_copyright(path, into):
    """The copyright file of the Debian package that installed path."""
    out = subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True)
    if out.returncode:
        out = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
    if out.returncode:
        die(f"no Debian package owns {path}: its licence cannot be carried")
    pkg = out.stdout.split(":")[0]
    src = f"/usr/share/doc/{pkg}/copyright"
    if os.path.exists(src):
        copy(src, os.path.join(into, f"{pkg}.copyright"))


def stage(a):
    out = a.stage
    shutil.rmtree(out, ignore_errors=True)
    lib, own = os.path.join(out, "lib"), os.path.join(out, "lib", "fdl")
    licences = os.path.join(out, "share", "doc", "fdl", "licences")
    copy(a.cli, os.path.join(out, "bin", "fdl"), 0o755)
    soname = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", run("readelf", "-d", a.lib)).group(1)
    copy(a.lib, os.path.join(lib, soname), 0o755)
    run("strip", "--strip-debug", os.path.join(out, "bin", "fdl"), os.path.join(lib, soname))
    copy(a.duckdb, os.path.join(own, "libduckdb.so"), 0o755)
    run("strip", "--strip-unneeded", os.path.join(own, "libduckdb.so"))  # its .symtab: 11 MB
    if a.duckdb_license:
        copy(a.duckdb_license, os.path.join(licences, "duckdb.LICENSE"))
    versions = [v for v in os.listdir(a.extensions) if v.startswith("v")]
    if len(versions) != 1:
        die(f"{a.extensions} should hold one DuckDB version folder, not {versions}")
    for e in EXTENSIONS:
        rel = os.path.join(versions[0], "linux_amd64", f"{e}.duckdb_extension")
        if not os.path.exists(os.path.join(a.extensions, rel)):
            die(f"{os.path.join(a.extensions, rel)} is missing (make setup)")
        copy(os.path.join(a.extensions, rel), os.path.join(own, "extensions", rel))
    # the libraries libfdl opens with dlopen(), beside it under their own
    # names (fdl_dynlib_beside): no loader sees those as dependencies
    for name in a.lazy.split():
        path = system_library(name)
        copy(path, os.path.join(own, name), 0o755)
        debian_copyright(path, licences)
    # everything they all need beyond the C runtime, renamed
    carried = {}
    for path in list(elfs(out)):
        for name, where in resolved(path).items():
            if name in RUNTIME or name in carried or (where and where.startswith(os.path.abspath(out) + "/")):
                continue
            if where is None:
                die(f"{path} needs {name}, which is not installed")
            if os.path.exists(os.path.join(own, name)):
                continue
            carried[name] = hashed_name(name, where)
            copy(where, os.path.join(own, carried[name]), 0o755)
            run("patchelf", "--set-soname", carried[name], os.path.join(own, carried[name]))
            debian_copyright(where, licences)
    for path in elfs(out):
        swaps = [x for n in needed(path) if n in carried for x in ("--replace-needed", n, carried[n])]
        rel = os.path.relpath(path, out)
        if rel == "bin/fdl":
            origin = "$ORIGIN/../lib"
        elif rel == f"lib/{soname}":
            origin = "$ORIGIN/fdl"
        elif swaps:
            origin = "$ORIGIN"
        else:
            continue
        run("patchelf", *swaps, "--set-rpath", origin, path)
    check(out)
    for src, dst in ((a.web, "share/fdl/web"), (a.man, "share/man/man1")):
        shutil.copytree(src, os.path.join(out, dst), ignore=shutil.ignore_patterns(".*"))
    copy(a.header, os.path.join(out, "include", "fdl.h"))
    for d in a.doc:
        copy(d, os.path.join(out, "share", "doc", "fdl", os.path.basename(d)))
    print(f"package.py: {out}: {len(carried)} libraries carried for {len(a.lazy.split())} opened with dlopen, "
          f"{du(out) / 1e6:.0f} MB")


def check(out):
    """Every program and library in the tree, as the loader sees it: each
    dependency found inside the tree, or the C runtime."""
    root = os.path.abspath(out) + "/"
    for path in elfs(out):
        for name, where in resolved(path).items():
            if where is None:
                die(f"{path}: {name} not found")
            if not where.startswith(root) and name not in RUNTIME:
                die(f"{path}: {name} resolves to {where}, outside the tree")


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def files(root):
    for d, dirs, fs in os.walk(root):
        dirs.sort()
        for f in sorted(fs):
            yield os.path.join(d, f)


def tarball(a):
    top = os.path.basename(os.path.normpath(a.stage))
    tmp = a.out + ".part"

    def norm(t):
        t.uid = t.gid = 0
        t.uname = t.gname = "root"
        return t

    with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
        tar.add(a.stage, arcname=top, filter=norm)
    os.replace(tmp, a.out)
    print(f"package.py: {a.out}: {os.path.getsize(a.out) / 1e6:.1f} MB")


# ---- the wheel ---------------------------------------------------------------

LAUNCHER = '''#!python
"""The fdl command of the pyfdl wheel: runs the fdl program the wheel
carries (pyfdl/bin/fdl), in place of this process."""
import os
import sys
from importlib.util import find_spec

spec = find_spec("pyfdl")
if spec is None or not spec.origin:
    sys.exit("fdl: the pyfdl package is not importable from " + sys.executable)
exe = os.path.join(os.path.dirname(spec.origin), "bin", "fdl")
os.execv(exe, ["fdl", *sys.argv[1:]])
'''


def pyproject_field(text, key):
    m = re.search(rf'^{key}\s*=\s*"([^"]*)"', text, re.M)
    return m.group(1) if m else None


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def write_wheel(path, entries, dist_info, tag, compress=True):
    """entries: (archive name, source path or bytes, executable)."""
    wheel = f"Wheel-Version: 1.0\nGenerator: fdl scripts/package.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    entries = entries + [(f"{dist_info}/WHEEL", wheel.encode(), False)]
    rec = io.StringIO()
    w = csv.writer(rec, lineterminator="\n")
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path + ".part", "w", method, compresslevel=6 if compress else None) as z:
        for name, src, exe in entries:
            data = src if isinstance(src, bytes) else open(src, "rb").read()
            info = zipfile.ZipInfo(name, date_time=(2020, 2, 2, 0, 0, 0))
            info.external_attr = ((0o755 if exe else 0o644) | stat.S_IFREG) << 16
            info.compress_type = method
            z.writestr(info, data)
            w.writerow(record_line(name, data))
        w.writerow([f"{dist_info}/RECORD", "", ""])
        info = zipfile.ZipInfo(f"{dist_info}/RECORD", date_time=(2020, 2, 2, 0, 0, 0))
        info.external_attr = (0o644 | stat.S_IFREG) << 16
        info.compress_type = method
        z.writestr(info, rec.getvalue())
    os.replace(path + ".part", path)


def audit(auditwheel, whl, expected):
    """auditwheel's verdict on the wheel: it must be consistent with the
    policy it is tagged with, and with no stricter one (a library that
    needs a newer glibc or libstdc++ is a decision, not a side effect).
    Kept beside the wheel, with its sha256, for the test."""
    p = subprocess.run([auditwheel, "show", "--json", whl], capture_output=True, text=True)
    if p.returncode:
        die(f"auditwheel show {whl} failed: {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    if doc.get("overall_tag") != expected:
        die(f"auditwheel finds {whl} consistent with {doc.get('overall_tag')!r}, not {expected!r} "
            f"(WHEEL_POLICY in the Makefile; docs/packaging.md): {json.dumps(doc.get('symbol_policies', ''))[:2000]}")
    with open(whl, "rb") as f:
        doc["wheel_sha256"] = hashlib.sha256(f.read()).hexdigest()
    with open(whl + ".auditwheel.json", "w") as f:
        json.dump(doc, f, indent=1)


def wheel(a):
    pyproject = open(os.path.join(a.binding, "pyproject.toml")).read()
    name, version = pyproject_field(pyproject, "name"), pyproject_field(pyproject, "version")
    summary = pyproject_field(pyproject, "description")
    requires_python = pyproject_field(pyproject, "requires-python")
    init = open(os.path.join(a.binding, "pyfdl", "__init__.py")).read()
    own = re.search(r'^__version__ = "([^"]+)"', init, re.M).group(1)
    lib_version = re.search(r"libfdl\.so\.(\d+\.\d+\.\d+)", " ".join(os.listdir(os.path.join(a.stage, "lib"))))
    fdl_version = run(os.path.join(a.stage, "bin", "fdl"), "--version").split()[1]
    if not (version == own == fdl_version) or (lib_version and lib_version.group(1) != version):
        die(f"versions differ: pyproject.toml {version}, pyfdl.__version__ {own}, fdl --version {fdl_version} "
            "(include/fdl.h): change them together")
    dist_info = f"{name}-{version}.dist-info"
    entries = []
    pkg = os.path.join(a.binding, "pyfdl")
    for p in files(pkg):
        if "__pycache__" not in p:
            entries.append((f"pyfdl/{os.path.relpath(p, pkg)}", p, False))
    for p in files(a.stage):
        rel = os.path.relpath(p, a.stage)
        if rel.startswith("share/man/"):
            entries.append((f"{name}-{version}.data/data/{rel}", p, False))
        elif not rel.startswith("include/"):
            entries.append((f"pyfdl/{rel}", p, os.access(p, os.X_OK)))
    entries.append((f"{name}-{version}.data/scripts/fdl", LAUNCHER.encode(), True))
    readme = open(os.path.join(a.binding, "README.md")).read()
    meta = [f"Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", f"Summary: {summary}",
            f"Requires-Python: {requires_python}", "License: see the fdl repository; the licences of what the "
            "wheel carries are in its dist-info/licenses",
            "Classifier: Operating System :: POSIX :: Linux", "Classifier: Programming Language :: C",
            "Classifier: Topic :: Database"]
    meta += [f"Requires-Dist: {r}" for r in a.requires]
    meta += ["Description-Content-Type: text/markdown", "", readme]
    entries.append((f"{dist_info}/METADATA", "\n".join(meta).encode(), False))
    for lic in files(os.path.join(a.stage, "share", "doc", "fdl", "licences")):
        entries.append((f"{dist_info}/licenses/{os.path.basename(lic)}", lic, False))
    os.makedirs(a.outdir, exist_ok=True)
    for old in os.listdir(a.outdir):
        if ".whl" in old:
            os.remove(os.path.join(a.outdir, old))
    out = os.path.join(a.outdir, f"{name}-{version}-py3-none-{a.policy}.whl")
    write_wheel(out, entries, dist_info, f"py3-none-{a.policy}", compress=True)
    audit(a.auditwheel, out, a.policy)
    print(f"package.py: {out}: {os.path.getsize(out) / 1e6:.1f} MB, {a.policy} (auditwheel agrees)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stage")
    s.add_argument("stage")
    for opt in ("cli", "lib", "duckdb", "extensions", "lazy", "web", "man", "header"):
        s.add_argument(f"--{opt}", required=True)
    s.add_argument("--doc", action="append", default=[])
    s.add_argument("--duckdb-license")
    t = sub.add_parser("tarball")
    t.add_argument("stage")
    t.add_argument("out")
    w = sub.add_parser("wheel")
    w.add_argument("stage")
    w.add_argument("outdir")
    w.add_argument("--binding", required=True)
    w.add_argument("--requires", action="append", default=[])
    w.add_argument("--auditwheel", required=True)
    w.add_argument("--policy", required=True, help="the platform tag, e.g. manylinux_2_35_x86_64")
    a = ap.parse_args()
    {"stage": stage, "tarball": tarball, "wheel": wheel}[a.cmd](a)


if __name__ == "__main__":
    main()
