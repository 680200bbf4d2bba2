"""The dataset's pages and the descriptions tools load (issue 58): `fdl site`
and every commit after it write each version's static HTML with schema.org
JSON-LD, its Croissant 1.1 file and its Frictionless Data Package. Checked
with the real clients, from deps/findable-venv (scripts/setup.sh):
mlcroissant validates each version's croissant.json and loads its tables
(the same rows as stock DuckDB through `fdl attach`), frictionless validates
datapackage.json, extruct finds the JSON-LD Dataset with its title and
licence; Chromium with JavaScript disabled shows the title, the tables and
their first rows. A description holding a script stays text everywhere."""
import datetime
import decimal
import json
import math
import os
import re
import subprocess

import pytest

from conftest import ROOT, Repo, connect, fdl, fdl_setup
from test_reader import Server, get

VENV = ROOT / "deps" / "findable-venv" / "bin"


@pytest.fixture(autouse=True)
def every_commit_previews(monkeypatch):
    """The pages' first rows come from the previews: every commit here writes
    its own (FDL_PREVIEW_AT_COMMIT=1, docs/environment.md)."""
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")

HOSTILE = "Counts </script><script>window.pwned=1</script> & <b>more</b>"
TITLE = "Population <script>alert(1)</script> by town"

# mlcroissant's rows as JSON: text decoded, times as ISO, NaN and NA as null
LOAD = r"""
import json, math, sys
import mlcroissant as mlc
ds = mlc.Dataset(sys.argv[1])
out = {}
for rs in ds.metadata.record_sets:
    rows = []
    for r in ds.records(rs.id):
        row = {}
        for k, v in r.items():
            k = k.split("/", 1)[1]
            if isinstance(v, bytes):
                v = v.decode()
            elif hasattr(v, "isoformat"):
                v = None if str(v) == "NaT" else v.isoformat()
            elif isinstance(v, float) and math.isnan(v):
                v = None
            elif hasattr(v, "item"):
                v = v.item()
            row[k] = v
        rows.append(row)
    out[rs.id] = rows
print(json.dumps(out))
"""

EXTRUCT = r"""
import json, sys
import extruct
html = open(sys.argv[1], encoding="utf-8").read()
print(json.dumps(extruct.extract(html, base_url=sys.argv[2], syntaxes=["json-ld"])["json-ld"]))
"""


@pytest.fixture
def repo(tmp_path):
    """conftest's repo, initialized by the release build (fdl_setup): what
    these tests start from (init runs FDL_BIN in the tests about it)."""
    r = Repo.__new__(Repo)
    r.root = tmp_path / "repo"
    fdl_setup("init", r.root)
    return r


@pytest.fixture(scope="module")
def venv():
    assert (VENV / "mlcroissant").exists() and (VENV / "frictionless").exists(), \
        "deps/findable-venv is missing: run make setup-tests (scripts/setup.sh installs mlcroissant, frictionless, extruct)"
    return VENV


def tool(venv, *args, check=True):
    p = subprocess.run([str(venv / args[0]), *map(str, args[1:])], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert not check or p.returncode == 0, f"{args[0]} {args[1:]} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p


def build(repo, tmp_path, setup=False):
    """v1: a described dataset (a hostile description, licences, people)
    with a plain table, a table with a delete and one with a renamed column;
    pages turned on; v2 (written by the commit through the seam): more rows
    in a new single-file table. The checkout and v1 are the scene (the
    release build, fdl_setup); `fdl site` and v2's commit, which write the
    pages, run FDL_BIN unless setup (a test about what comes after them)."""
    work = tmp_path / "w"
    step = fdl_setup if setup else fdl
    con = repo.checkout(work, setup=True)
    (work / "dataset.yml").write_text(
        "name: population\n"
        f"title: {json.dumps(TITLE)}\n"
        f"description: {json.dumps(HOSTILE)}\n"
        "keywords: [population, census]\nlanguage: en\n"
        "licenses: [CC-BY-4.0, {id: odbl, title: Open Database License, url: 'https://opendatacommons.org/licenses/odbl/1-0/'}]\n"
        "contributors: [{title: Example City, roles: [publisher]}, {title: Ada Lovelace, roles: [author]}]\n"
        "tables:\n  - name: plain\n    description: One row per town\n"
        "    fields: [{name: town, description: \"The town's <i>name</i>\"}]\n")
    con.execute("CREATE TABLE lake.plain AS SELECT i AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE 'town' || i END AS town, "
                "CASE WHEN i % 11 = 0 THEN NULL ELSE i * 1.5 END::DOUBLE AS share, DATE '2024-01-01' + i::INT AS day, "
                "TIMESTAMP '2024-01-01 10:00:00' + to_seconds(i) AS at, i % 2 = 0 AS even, i::TINYINT AS small "
                "FROM range(60) t(i)")
    con.execute("CREATE TABLE lake.towns AS SELECT i AS code, 'name' || i AS name FROM range(10) t(i)")
    con.execute("DELETE FROM lake.towns WHERE code = 2")
    con.execute("CREATE TABLE lake.renamed AS SELECT i AS a FROM range(5) t(i)")
    con.execute("ALTER TABLE lake.renamed RENAME COLUMN a TO b")
    fdl_setup("commit", work, "-m", "Census 2024")
    v1 = repo.head()
    step("site", repo.root)
    con.execute("CREATE TABLE lake.extra AS SELECT i AS n, 'x' || i AS label FROM range(30) t(i)")
    step("commit", work, "-m", "Add extra")
    con.close()
    return [v1, repo.head()]


def duck_rows(repo, vid, table):
    """The table as stock DuckDB reads it through fdl attach (the oracle: the
    release build's ATTACH), as the loader's JSON spells it."""
    con = connect()
    con.execute(fdl_setup("attach", repo.root, vid).stdout)
    cur = con.execute(f"SELECT * FROM lake.{table}")
    names = [d[0] for d in cur.description]
    rows = []
    for r in cur.fetchall():
        row = {}
        for k, v in zip(names, r):
            if isinstance(v, datetime.datetime):
                v = v.isoformat()
            elif isinstance(v, datetime.date):
                v = datetime.datetime(v.year, v.month, v.day).isoformat()
            elif isinstance(v, decimal.Decimal):
                v = float(v)
            row[k] = v
        rows.append(row)
    con.close()
    return rows


def by_first(rows):
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def test_croissant_and_data_package_load_what_duckdb_reads(repo, tmp_path, venv):
    ids = build(repo, tmp_path)
    for vid in ids:
        for name in ("index.html", "croissant.json", "datapackage.json"):
            assert (repo.root / "site" / vid / name).is_file(), (vid, name)
    assert (repo.root / "index.html").is_file()
    server = Server(repo.root, tmp_path)
    try:
        for vid in ids:
            # from fdl serve: absolute addresses, its own
            status, headers, body = get(f"{server.url}/site/{vid}/croissant.json")
            assert status == 200 and headers["Content-Type"].startswith("application/json")
            doc = json.loads(body)
            urls = [d["contentUrl"] for d in doc["distribution"] if "contentUrl" in d]
            assert urls and all(u.startswith(server.url + "/data/") for u in urls), urls
            tool(venv, "mlcroissant", "validate", "--jsonld", f"{server.url}/site/{vid}/croissant.json")
            # the tables a plain reader cannot serve are named, never described
            assert {r["@id"] for r in doc["recordSet"]} == ({"main.plain"} if vid == ids[0] else {"main.plain", "main.extra"})
            assert "main.towns (a data file has deleted rows" in doc["description"]
            assert "main.renamed (a column was renamed" in doc["description"]
            loaded = json.loads(tool(venv, "python", "-c", LOAD, f"{server.url}/site/{vid}/croissant.json").stdout)
            for table, rows in loaded.items():
                assert by_first(rows) == by_first(duck_rows(repo, vid, table.split(".", 1)[1])), table
            # licences and people mapped, not dropped
            assert doc["license"] == ["https://spdx.org/licenses/CC-BY-4.0.html",
                                      "https://opendatacommons.org/licenses/odbl/1-0/"]
            assert doc["creator"] == [{"@type": "Person", "name": "Ada Lovelace"}]
            assert doc["publisher"] == {"@type": "Organization", "name": "Example City"}

            status, _, body = get(f"{server.url}/site/{vid}/datapackage.json")
            assert status == 200
            # from its URL: frictionless fetches a remote resource itself only then
            tool(venv, "frictionless", "validate", f"{server.url}/site/{vid}/datapackage.json")
            pkg = json.loads(body)
            assert [lic["name"] for lic in pkg["licenses"]] == ["CC-BY-4.0", "odbl"]
            assert [c["title"] for c in pkg["contributors"]] == ["Example City", "Ada Lovelace"]
            assert {r["title"] for r in pkg["resources"]} == ({"main.plain"} if vid == ids[0] else {"main.plain", "main.extra"})
    finally:
        server.stop()


def test_a_public_address_goes_into_the_files(repo, tmp_path, venv):
    ids = build(repo, tmp_path, setup=True)  # the config and the site after it are the step
    server = Server(repo.root, tmp_path)
    try:
        fdl("config", repo.root, "public_url", server.url + "/")
        assert fdl("config", repo.root, "public_url").stdout.strip() == server.url
        fdl("site", repo.root, ids[1])
        croissant = repo.root / "site" / ids[1] / "croissant.json"
        doc = json.loads(croissant.read_text())
        assert all(d["contentUrl"].startswith(server.url + "/data/") for d in doc["distribution"])
        tool(venv, "mlcroissant", "validate", "--jsonld", croissant)
        tool(venv, "frictionless", "validate", f"{server.url}/site/{ids[1]}/datapackage.json")
        assert fdl("config", repo.root, "public_url", "javascript:alert(1)", check=False).returncode == 5
    finally:
        server.stop()


def links(html):
    return {m.group(1): m.group(2) for m in re.finditer(
        r'<link rel="alternate" type="([^"]+)" title="[^"]*" href="([^"]+)">', html)}


def test_the_page_without_javascript_and_its_json_ld(repo, tmp_path, venv, ledger, chromium):
    ids = build(repo, tmp_path)
    server = Server(repo.root, tmp_path)
    endpoint = chromium
    try:
        for path, vid in (("/", ids[1]), (f"/site/{ids[0]}/index.html", ids[0])):
            status, headers, body = get(server.url + path)
            assert status == 200 and headers["Content-Type"].startswith("text/html")
            html = body.decode()
            # the hostile description is text: no markup of its own anywhere
            assert html.count("<script") == 2 and "window.pwned" in html and "<b>more" not in html
            assert "&lt;/script&gt;&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
            # the JSON-LD Dataset, as a crawler's extractor finds it
            page = tmp_path / "page.html"
            page.write_text(html)
            found = json.loads(tool(venv, "python", "-c", EXTRUCT, page, server.url + path).stdout)
            ds = [d for d in found if d.get("@type") == "Dataset"]
            assert len(ds) == 1 and ds[0]["name"] == TITLE and ds[0]["description"] == HOSTILE
            assert ds[0]["license"][0] == "https://spdx.org/licenses/CC-BY-4.0.html" and ds[0]["identifier"] == vid
            # the Croissant file and the Data Package, found from the page
            alt = links(html)
            assert set(alt) == {"application/ld+json", "application/json"}
            base = server.url + path.rsplit("/", 1)[0] + "/"
            assert json.loads(get(base + alt["application/ld+json"])[2])["conformsTo"] == \
                "http://mlcommons.org/croissant/1.1"
            assert json.loads(get(base + alt["application/json"])[2])["id"] == vid
            # Chromium with JavaScript off: the title, the tables, their first rows
            p = subprocess.run(["node", str(ROOT / "web" / "test" / "nojs.mjs"), server.url + path],
                               capture_output=True, text=True, cwd=ROOT / "web", timeout=300,
                               env=dict(os.environ, FDL_TEST_BROWSER=endpoint))
            assert p.returncode == 0, p.stderr
            seen = json.loads(p.stdout)
            assert seen["status"] == 200 and seen["h1"] == TITLE and HOSTILE in seen["text"]
            want = {"main.plain", "main.towns", "main.renamed"} | ({"main.extra"} if vid == ids[1] else set())
            assert set(seen["tables"]) == want
            first = duck_rows(repo, vid, "plain")
            shown = seen["rows"]["main.plain"]
            assert 0 < len(shown) <= 20
            for cells in shown:  # each row shown is a row of the table, NULL as NULL
                row = next(r for r in first if str(r["id"]) == cells[0])
                assert cells[1] == (row["town"] if row["town"] is not None else "NULL")
    finally:
        server.stop()


def test_a_withdrawal_takes_the_descriptions_with_it(repo, tmp_path, venv, ledger):
    ids = build(repo, tmp_path, setup=True)  # the withdrawal is the step
    fdl("withdraw", repo.root, ids[1], "--reason", "published by mistake", "--force")
    ledger.gone(ids[1])
    folder = repo.root / "site" / ids[1]
    assert not (folder / "croissant.json").exists() and not (folder / "datapackage.json").exists()
    page = (folder / "index.html").read_text()
    assert "This version was withdrawn" in page and "croissant.json" not in page
    assert (repo.root / "site" / ids[0] / "croissant.json").exists()
