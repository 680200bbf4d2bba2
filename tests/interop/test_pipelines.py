"""The real clients of docs/integrations.md: dbt (dbt-core 1.11 + dbt-duckdb
1.11.1) and dlt 1.31, from deps/pipelines-venv (scripts/setup.sh), building
data through `fdl run`, and a plain Python script committing what it wrote
with stock DuckDB. Every version is read back by stock DuckDB through the
ATTACH fdl prints. The snippets in docs/integrations.md are the files under
examples/, checked here byte for byte."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import EXT, FDL, ROOT, Repo, connect, fdl, fdl_setup, read_json, rows

PIPE_BIN = ROOT / "deps" / "pipelines-venv" / "bin"


@pytest.fixture
def tools():
    assert (PIPE_BIN / "dbt").exists() and (PIPE_BIN / "python").exists(), \
        "deps/pipelines-venv is missing: run make setup (scripts/setup.sh installs dbt and dlt)"
    return {"PATH": f"{PIPE_BIN}:{os.environ['PATH']}", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "DO_NOT_TRACK": "1", "RUNTIME__LOG_LEVEL": "WARNING"}


@pytest.fixture
def repo(tmp_path):
    """The repository the pipelines publish to, its init by the release
    build: the scene (tests/README.md, "Shared setups")."""
    return Repo(tmp_path, setup=True)


def read(root, ref="main"):
    """Stock DuckDB on a version, through the release build's ATTACH (the
    reader is stock DuckDB; `fdl attach` runs the build under test in the
    tests about it, test_cli and test_reader)."""
    con = connect()
    con.execute(fdl_setup("attach", f"{root}@{ref}").stdout)
    return con


def versions(root):
    out = [read_json(p) for p in (root / "versions").glob("*/version.json")]
    return sorted(out, key=lambda v: v["seq"])


def test_the_documented_snippets_are_the_example_files():
    doc = (ROOT / "docs" / "integrations.md").read_text()
    blocks = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```\n", doc, re.S)
    assert {p for p, _ in blocks} == {"examples/dbt/profiles.yml", "examples/dlt/pipeline.py",
                                      "examples/dlt/dataset.yml", "examples/python/build.py"}, [p for p, _ in blocks]
    for path, text in blocks:
        assert text == (ROOT / path).read_text(), f"docs/integrations.md's copy of {path} differs from the file"


def dbt_build(root, project, tmp_path, tools, message):
    return fdl("run", root, "-m", message, "--", "dbt", "build", "--project-dir", project, "--profiles-dir",
               project, "--target-path", tmp_path / "target", "--log-path", tmp_path / "logs", env=tools)


def test_a_dbt_project_built_and_published_with_fdl_run(repo, tmp_path, tools):
    """Two seeds, a table model and an incremental one, built twice: the
    second run appends a census year; the table rebuilt by dbt (temp table,
    drop, rename) is no schema change; both versions read back."""
    project = tmp_path / "dbt"
    shutil.copytree(ROOT / "examples" / "dbt", project)
    out = dbt_build(repo.root, project, tmp_path, tools, "dbt build 2024")
    assert "Committed version" in out.stdout, out.stdout
    with open(project / "seeds" / "census.csv", "a") as f:
        f.write("2025,N,1250\n2025,S,3300\n2025,E,600\n")
    dbt_build(repo.root, project, tmp_path, tools, "dbt build 2025")
    v1, v2 = versions(repo.root)
    assert (v1["seq"], v2["seq"]) == (1, 2)
    assert v2["changes"] == [], v2["changes"]  # a dbt rebuild is not a drop and an add
    con = read(repo.root)
    assert con.execute("SELECT year, count(*), sum(people) FROM lake.population_growth GROUP BY ALL "
                       "ORDER BY ALL").fetchall() == [(2024, 3, 5160), (2025, 3, 5150)]
    assert rows(con, "lake.population_by_region")[0] == ("East", 2024, 560)
    assert con.execute("SELECT count(*) FROM lake.population_by_region").fetchone() == (6,)
    old = read(repo.root, v1["id"])
    assert old.execute("SELECT count(*) FROM lake.population_growth").fetchone() == (3,)
    # a run that writes nothing commits nothing
    p = fdl("run", repo.root, "--", "true", env=tools)
    assert "nothing to commit" in p.stdout and len(versions(repo.root)) == 2


def test_a_dlt_pipeline_loaded_and_published_with_fdl_run(repo, tmp_path, tools):
    """dlt's ducklake destination on $FDL_CATALOG_URL: three stations, then
    a merge that changes one and adds one; stock DuckDB reads both versions."""
    pipeline = ROOT / "examples" / "dlt" / "pipeline.py"
    out = fdl("run", repo.root, "-m", "stations", "--", "python", pipeline, env=tools)
    assert "Committed version" in out.stdout, (out.stdout, out.stderr)
    changed = tmp_path / "stations.json"
    changed.write_text(json.dumps([{"id": 2, "name": "Ridge", "elevation_m": 815},
                                   {"id": 4, "name": "Cape", "elevation_m": 31}]))
    fdl("run", repo.root, "-m", "stations again", "--", "python", pipeline, changed, env=tools)
    con = read(repo.root)
    assert con.execute("SELECT id, name, elevation_m FROM lake.weather.stations ORDER BY id").fetchall() == [
        (1, "Harbour", 4), (2, "Ridge", 815), (3, "Valley", 120), (4, "Cape", 31)]
    first, second = versions(repo.root)
    # dlt's bookkeeping is in the catalog, left out of the description (examples/dlt/dataset.yml)
    assert con.execute("SELECT count(*) FROM lake.weather._dlt_loads").fetchone() == (2,)
    for v in (first, second):
        ds = read_json(repo.root / "versions" / v["id"] / "dataset.json")
        assert [(t["schema"], t["name"]) for t in ds["tables"]] == [("weather", "stations")], ds["tables"]
        assert ds["title"] == "Weather stations"
    old = read(repo.root, first["id"])
    assert old.execute("SELECT elevation_m FROM lake.weather.stations WHERE id = 2").fetchone() == (812,)
    assert fdl("verify", repo.root, "--all").returncode == 0


def test_a_python_script_writes_with_duckdb_and_commits(repo, tmp_path, ledger):
    script = ROOT / "examples" / "python" / "build.py"
    env = dict(os.environ, FDL=FDL, FDL_EXTENSION_DIR=EXT, FDL_AUTHOR_NAME="Test", FDL_AUTHOR_EMAIL="t@example.org")
    for csv in ("population-2024.csv", "population-2025.csv"):
        p = subprocess.run([sys.executable, script, repo.root, ROOT / "examples" / csv], env=env,
                           capture_output=True, text=True)
        assert p.returncode == 0 and "Committed version" in p.stdout, p.stderr
        ledger.published(p.stdout)
    con = read(repo.root)
    n = con.execute("SELECT count(*) FROM lake.population").fetchone()[0]
    expected = len((ROOT / "examples" / "population-2025.csv").read_text().splitlines()) - 1
    assert n == expected
    assert [v["message"] for v in versions(repo.root)] == ["population from population-2024.csv",
                                                           "population from population-2025.csv"]
