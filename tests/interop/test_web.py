"""The repository page, end to end: `fdl serve` on 127.0.0.1, Debian's Chromium
driven by playwright-core (web/test/e2e.mjs) the way a person uses the page,
and every number it shows checked against stock DuckDB. Screenshots of each
page are kept in build/artifacts/web/."""
import json
import os
import pathlib
import subprocess

import pytest

from conftest import ROOT, Repo, commits, connect, fdl, fdl_setup
from test_reader import Server, get

NODE_SCRIPT = ROOT / "web" / "test" / "e2e.mjs"  # beside web/node_modules
ARTIFACTS = pathlib.Path(os.environ.get("FDL_ARTIFACTS", ROOT / "build" / "artifacts")) / "web"


@pytest.fixture(autouse=True)
def page_browser(browser):
    """Every test here drives the page in the worker's one Chromium
    (conftest.chromium, FDL_TEST_BROWSER)."""
    return browser


@pytest.fixture
def repo(tmp_path):
    """The repository, its init by the release build: the scene the page
    reads (tests/README.md, "Shared setups"; the histories replace it)."""
    return Repo(tmp_path, setup=True)


def oracle(repo, ref):
    """Stock DuckDB on a version, through the release build's ATTACH: the
    oracle the page is checked against (`fdl attach` runs the build under
    test in the tests about it, test_cli and test_reader)."""
    con = connect()
    con.execute(fdl_setup("attach", repo.root, ref).stdout)
    return con


def log_ids(repo):
    """The versions `fdl log --json` lists, newest first (the release build:
    an oracle here; test_history checks log)."""
    return [json.loads(x) for x in fdl_setup("log", repo.root, "--json").stdout.splitlines() if x.strip()]


def diff_rows(repo, seq):
    """`fdl diff --rows --json` of main:seq-1 and main:seq by the release
    build: the oracle of the page's compare (test_history checks diff)."""
    return json.loads(fdl_setup("diff", repo.root, f"main:{seq - 1}", f"main:{seq}", "--rows", "--json").stdout)


DESCRIBED = ("name: population\ntitle: Population by town\n"
             "description: Census population of each town\n"
             "keywords: [population, census]\nlicenses: [CC-BY-4.0]\n"
             "sources: [{title: 2025 census, path: 'https://example.org/census'}]\n"
             "contributors: [{title: Example City, roles: [publisher]}]\n"
             "tables:\n  - name: population\n    title: People per town\n"
             "    fields: [{name: town, description: The town's name}]\n")
# three versions: a described dataset; more rows and a delete in `towns`; a
# renamed column in `towns` (a breaking change)
THREE = [("Census 2024", ["CREATE TABLE lake.population (town VARCHAR, people BIGINT)",
                          "INSERT INTO lake.population SELECT 'town' || i, i * 10 FROM range(250) t(i)",
                          "CREATE TABLE lake.towns (code INTEGER, name VARCHAR)",
                          "INSERT INTO lake.towns VALUES (1, 'Ashby'), (2, 'Brill'), (3, 'Crewe')"],
          {"dataset.yml": DESCRIBED}),
         ("Add the 2025 towns", ["INSERT INTO lake.population SELECT 'new' || i, i FROM range(40) t(i)",
                                 "DELETE FROM lake.towns WHERE code = 2"]),
         ("Rename towns.name", ["ALTER TABLE lake.towns RENAME COLUMN name TO town_name"])]


def build_repo(repo, histories):
    """The three versions of THREE in `repo`: a copy of the session's
    (histories.published)."""
    histories.published(THREE, repo.root)


def test_the_page_lists_versions_opens_one_and_queries_it(repo, tmp_path, histories):
    build_repo(repo, histories)
    server = Server(repo.root, tmp_path)
    try:
        # the page and its assets come from fdl itself, with the right types
        status, headers, body = get(server.url + "/")
        assert status == 200 and headers["Content-Type"].startswith("text/html") and b"_fdl/app.js" in body
        status, headers, _ = get(server.url + "/_fdl/duckdb/duckdb-eh.wasm", method="HEAD")
        assert status == 200 and headers["Content-Type"] == "application/wasm"
        status, _, body = get(server.url + "/_fdl/refs.json")
        assert status == 200 and json.loads(body)["branches"] == {"main": repo.head()}
        assert get(server.url + "/_fdl/../fdl.json")[0] in (403, 404)

        # version 3's two queries one after another: typed into the same page (e2e.mjs)
        plan = {"queries": [{"seq": 3, "sql": "SELECT count(*) AS n, sum(people) AS people FROM population"},
                            {"seq": 3, "sql": "SELECT * FROM towns"},
                            {"seq": 1, "sql": "SELECT count(*) AS n FROM population"},
                            {"seq": 2, "sql": "SELECT code, name FROM towns ORDER BY code"}],
                "viewers": [{"seq": 2, "table": "main.towns"}, {"seq": 3, "table": "main.population", "stats": True}],
                "compares": [2, 3]}
        p = subprocess.run(["node", str(NODE_SCRIPT), server.url + "/", str(ARTIFACTS), json.dumps(plan)],
                           capture_output=True, text=True, timeout=900, cwd=ROOT / "web")
        assert p.returncode == 0, p.stderr[-4000:]
        seen = json.loads(p.stdout.strip().splitlines()[-1])
        # the landing page's DuckDB block, run in stock DuckDB as it is shown
        con = connect()
        *setup, select = [x for x in seen["card"]["duckdb"].split(";\n") if x.strip()]
        for stmt in setup:
            con.execute(stmt)
        snippet_rows = len(con.execute(select.rstrip(";")).fetchall())
    finally:
        server.stop()

    assert seen["consoleErrors"] == []
    assert seen["title"] == "Population by town"
    text = seen["overviewText"]
    for shown in ("Census population of each town", "CC-BY-4.0", "2025 census", "Example City (publisher)",
                  "population", "census"):
        assert shown in text, shown
    assert [h["seq"] for h in seen["history"]] == [3, 2, 1]
    assert [h["message"].split(" ")[0] for h in seen["history"]] == ["Rename", "Add", "Census"]
    assert seen["history"][0]["breaking"] >= 1  # the rename is marked
    assert seen["history"][2]["breaking"] == 0
    assert seen["branches"] == ["main (HEAD)"]

    latest, renamed, first, deleted = seen["queries"]
    # what stock DuckDB says about the same versions
    truth = {}
    for seq in (3, 1):
        con = oracle(repo, f"main:{seq}")
        truth[seq] = con.execute("SELECT count(*), sum(people) FROM lake.population").fetchone()
    assert latest["heading"].startswith("Version 3")
    assert latest["header"] == ["n", "people"]
    assert latest["rows"] == [[str(truth[3][0]), str(truth[3][1])]]
    assert latest["status"].startswith("1 row") and latest["csvLink"]
    assert first["rows"] == [[str(truth[1][0])]]
    assert truth[3][0] == 290 and truth[1][0] == 250
    # towns has deletes (v2 on) and a renamed column (v3): both read as DuckLake reads them,
    # the rename through files.json's field_ids
    assert latest["notQueryable"] == [] and first["notQueryable"] == []
    con = oracle(repo, "main:3")
    towns3 = con.execute("SELECT * FROM lake.towns ORDER BY code").fetchall()
    assert towns3 == [(1, "Ashby"), (3, "Crewe")]
    assert renamed["header"] == ["code", "town_name"]
    assert sorted(renamed["rows"]) == [[str(c), n] for c, n in towns3]
    # the ATTACH shown is the one fdl prints for an HTTP repository
    assert f"versions/{repo.head()}/ducklake.duckdb" in latest["attach"]
    assert "OVERRIDE_DATA_PATH true" in latest["attach"]
    for name in ("overview.png", "version-3.png", "version-1.png", "version-2.png", "viewer-2.png",
                 "overview-phone.png", "version-3-phone.png", "version-1-phone.png"):
        assert (ARTIFACTS / name).stat().st_size > 10000, name

    # a table with deleted rows (delete files) reads in the browser as DuckLake reads it
    con = oracle(repo, "main:2")
    towns2 = con.execute("SELECT code, name FROM lake.towns ORDER BY code").fetchall()
    assert towns2 == [(1, "Ashby"), (3, "Crewe")]
    assert deleted["rows"] == [[str(c), n] for c, n in towns2] and deleted["header"] == ["code", "name"]
    # the viewer: the first rows without SQL, with the column types, the same rows
    towns_view, population_view = seen["viewers"]
    assert towns_view["error"] == [] and towns_view["header"] == ["code", "name"]
    assert towns_view["types"] == ["int32", "varchar"]
    assert sorted(towns_view["rows"]) == sorted([[str(c), n] for c, n in towns2])
    con = oracle(repo, "main:3")
    people = {r[0]: r[1] for r in con.execute("SELECT town, people FROM lake.population").fetchall()}
    assert len(population_view["rows"]) == 20  # one page
    assert all(people[t] == int(n) for t, n in population_view["rows"])
    # column statistics from the footers: what stock DuckDB computes over the same rows
    lo_t, hi_t, lo_p, hi_p = con.execute("SELECT min(town), max(town), min(people), max(people) "
                                         "FROM lake.population").fetchone()
    assert population_view["stats"] == [["town", "0", lo_t, hi_t], ["people", "0", str(lo_p), str(hi_p)]]

    # the landing page is the latest version's card
    card = seen["card"]
    head = repo.head()
    assert "version 3" in card["version"]
    assert [t["table"] for t in card["tables"]] == ["main.population", "main.towns"]
    counts = {t: con.execute(f"SELECT count(*) FROM lake.{t}").fetchone()[0] for t in ("population", "towns")}
    facts = {t["table"]: t["facts"] for t in card["tables"]}
    assert facts["main.population"].startswith(f"{counts['population']} rows") and "2 columns" in facts["main.population"]
    assert facts["main.towns"].startswith(f"{counts['towns']} rows")
    assert card["tables"][1]["columns"] == ["code", "town_name"]
    log = [v["id"] for v in log_ids(repo)]
    assert card["historyIds"] == log and len(log) == 3  # whole ids behind the short ones
    # "use this dataset": the DuckDB block runs in stock DuckDB as it is shown
    assert f"versions/{head}/ducklake.duckdb" in card["duckdb"] and "import duckdb" in card["python"]
    assert card["fdl"].startswith("fdl attach http://") and card["fdl"].endswith("@main | duckdb")
    assert snippet_rows == 10
    # "cite": from dataset.json's fields, the version and the URL
    assert "title        = {Population by town}" in card["bibtex"] and "author       = {Example City}" in card["bibtex"]
    assert f"version      = {{{head}}}" in card["bibtex"]
    assert 'title: "Population by town"' in card["cff"] and 'license: "CC-BY-4.0"' in card["cff"]
    assert f'version: "{head}"' in card["cff"]
    # "compare with the parent": rows added and removed per table, as fdl diff --rows counts them
    by_seq = {c["seq"]: {r[0]: r for r in c["rows"]} for c in seen["compares"]}
    assert all(c["done"] == "1" for c in seen["compares"])
    for seq in (2, 3):
        diff = diff_rows(repo, seq)
        for table, t in diff["rows"].items():
            row = by_seq[seq][table]
            if row[5] == "not readable in the browser":  # towns after its rename (v3)
                assert seq == 3 and table == "main.towns"
                continue
            assert row[3:5] == [str(t["added_total"]), str(t["removed_total"])], (seq, table, row, t)
    assert by_seq[2]["main.population"][1:5] == ["250", "290", "40", "0"]
    assert by_seq[2]["main.towns"][1:5] == ["3", "2", "0", "1"]
    # rows per table across the history, as each version's catalog records them
    assert seen["chart"] == [{"seq": 1, "rows": {"main.population": 250, "main.towns": 3}},
                             {"seq": 2, "rows": {"main.population": 290, "main.towns": 2}},
                             {"seq": 3, "rows": {"main.population": 290, "main.towns": 2}}]
    # readable on a phone: nothing wider than the screen
    assert seen["phoneOverflow"] <= 0, seen["phoneOverflow"]


def test_the_page_on_a_plain_static_host(repo, tmp_path, histories):
    """Copied beside the repository on a host that only serves files (Python's
    http.server: no listing for the page, no ranges), the page shows HEAD's
    branch and its history."""
    import shutil
    import socket
    import sys
    import time
    build_repo(repo, histories)
    site = tmp_path / "site"
    shutil.copytree(repo.root, site)
    shutil.copytree(ROOT / "build" / "web", site, dirs_exist_ok=True)
    # version 3's files.json as a writer without fdl's additions writes it
    fj = site / "versions" / repo.head() / "files.json"
    doc = json.loads(fj.read_text())
    assert doc["tables"]["main.towns"].pop("field_ids") == {"code": 1, "town_name": 2}
    assert [c["field_id"] for c in doc["tables"]["main.towns"].pop("columns")] == [1, 2]
    assert doc["tables"]["main.towns"].pop("schema_changed") is True
    fj.write_text(json.dumps(doc))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    host = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", str(site)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # until it listens (however slow the machine), or it died; the
        # deadline is a safety net, never the outcome
        deadline = time.monotonic() + 300
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                assert host.poll() is None, f"python -m http.server exited {host.returncode}"
                assert time.monotonic() < deadline, "python -m http.server never listened"
                time.sleep(0.1)
        p = subprocess.run(["node", str(NODE_SCRIPT), f"http://127.0.0.1:{port}/", str(ARTIFACTS / "static"),
                            json.dumps({"queries": [{"seq": 3, "sql": "SELECT * FROM towns"}]})],
                           capture_output=True, text=True, timeout=900, cwd=ROOT / "web")
        assert p.returncode == 0, p.stderr[-4000:]
        seen = json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        host.terminate()
        host.wait(10)
    assert seen["title"] == "Population by town"
    assert [h["seq"] for h in seen["history"]] == [3, 2, 1]
    assert seen["branches"] == ["main (HEAD)"]
    # a table the page cannot read says why, with the fix, not DuckDB's "does not exist"
    [blocked] = seen["queries"]
    assert blocked["status"].startswith("main.towns cannot be queried in the browser: a column of this table was "
                                        "renamed"), blocked["status"]
    assert "CREATE OR REPLACE TABLE lake.main.towns AS FROM lake.main.towns" in blocked["status"]
    assert "does not exist" not in blocked["status"]
    # the only failed load is the list of refs a static host cannot give
    assert [e for e in seen["consoleErrors"] if "404" not in e] == [], seen["consoleErrors"]
    assert (ARTIFACTS / "static" / "overview.png").stat().st_size > 10000


def test_the_page_reads_the_history_from_the_index(repo, tmp_path, histories):
    """60 versions on a plain static host that counts requests: the first page
    of the history (50 rows) comes from the history index, a handful of
    files, where without the index it is one version.json per row."""
    import shutil
    from test_hindex import CountingHost, Versions, walk
    Versions(repo, tmp_path, 60, histories)
    truth = walk(repo.root)
    seen, fetched = {}, {}
    for name in ("index", "none"):
        site = tmp_path / f"site-{name}"
        shutil.copytree(repo.root, site, ignore=None if name == "index" else shutil.ignore_patterns("history"))
        shutil.copytree(ROOT / "build" / "web", site, dirs_exist_ok=True)
        host = CountingHost(site)
        try:
            p = subprocess.run(["node", str(NODE_SCRIPT), host.url + "/", str(ARTIFACTS / f"history-{name}"),
                                json.dumps({"queries": []})], capture_output=True, text=True, timeout=900,
                               cwd=ROOT / "web")
            assert p.returncode == 0, p.stderr[-4000:]
            seen[name] = json.loads(p.stdout.strip().splitlines()[-1])
            fetched[name] = [r for r in host.requests if r.endswith("/version.json")]
        finally:
            host.close()
    for name in ("index", "none"):
        assert [h["seq"] for h in seen[name]["history"]] == list(range(60, 10, -1))
        assert seen[name]["history"][0]["message"].startswith("row 60")
    assert seen["index"]["history"] == seen["none"]["history"]
    assert len(fetched["none"]) >= 49  # one a row, but the tip's: the landing card (previews/HEAD.json) holds it
    assert len(fetched["index"]) <= 2, fetched["index"]
    assert len(truth) == 60


@pytest.mark.quick
def test_the_card_renders_markdown_safely_and_labels_a_description_only_version(repo, tmp_path):
    """A description written in Markdown is rendered, and whatever HTML or
    script it holds is shown as text: no script, no javascript: link, no
    image loaded from elsewhere. A version that changed only dataset.json
    says so."""
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)  # the scene: the release build (tests/README.md)
    hostile = ("Counts of **trees**, see [the survey](https://example.org/survey).\n\n"
               "<script>window.pwned = 1</script>\n\n[click me](javascript:alert(1)) "
               "![pixel](https://tracker.example/p.png) <img src=x onerror=alert(2)>")
    (work / "dataset.yml").write_text("name: trees\ntitle: Trees\ndescription: " + json.dumps(hostile) + "\n")
    con.execute("CREATE TABLE lake.t (id INTEGER, species VARCHAR)")
    con.execute("INSERT INTO lake.t VALUES (1, 'oak'), (2, 'ash')")
    fdl_setup("commit", work, "-m", "Trees")
    (work / "dataset.yml").write_text("name: trees\ntitle: Trees of the city\ndescription: " + json.dumps(hostile) + "\n")
    fdl_setup("commit", work, "-m", "Retitle")
    con.close()
    server = Server(repo.root, tmp_path)
    try:
        p = subprocess.run(["node", str(NODE_SCRIPT), server.url + "/", str(ARTIFACTS / "markdown"),
                            json.dumps({"queries": [], "viewers": [{"seq": 2, "table": "main.t"}]})],
                           capture_output=True, text=True, timeout=900, cwd=ROOT / "web")
        assert p.returncode == 0, p.stderr[-4000:]
        seen = json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        server.stop()
    assert seen["consoleErrors"] == []
    html = seen["card"]["descriptionHtml"]
    assert "<strong>trees</strong>" in html
    assert '<a href="https://example.org/survey" rel="noopener nofollow ugc">the survey</a>' in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html and "<script" not in html
    assert "javascript:" not in "".join(h or "" for h in seen["card"]["hrefs"])
    assert "<img" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert seen["card"]["scripts"] == 0
    assert seen["title"] == "Trees of the city"
    [viewer] = seen["viewers"]
    assert viewer["changesNote"].startswith("Description only")
    assert sorted(viewer["rows"]) == [["1", "oak"], ["2", "ash"]]


def test_the_page_reads_every_kind_of_table_as_duckdb_does(repo, tmp_path):
    """Types (integers, floats, decimal, text, bool, dates and times, UUID,
    lists, structs, blobs, NULLs), a table in another schema, partitioned and
    updated (deletes plus inserts), and a view over a table: each queried in
    the browser, every value (cast to text by each engine) equal to stock
    DuckDB through the ATTACH."""
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)  # the scene: the release build (tests/README.md)
    con.execute("""CREATE TABLE lake.ty (id INTEGER, i8 TINYINT, i16 SMALLINT, i64 BIGINT, u32 UINTEGER, f FLOAT,
      d DOUBLE, dec DECIMAL(10,3), s VARCHAR, b BOOLEAN, dt DATE, tm TIME, ts TIMESTAMP, tstz TIMESTAMPTZ, u UUID,
      l INTEGER[], st STRUCT(a INTEGER, b VARCHAR), bl BLOB)""")
    con.execute("""INSERT INTO lake.ty VALUES (1, -5, 300, 9000000000, 4000000000, 1.5, 2.25, 12.345, 'héllo', true,
      DATE '2024-02-29', TIME '12:34:56', TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMPTZ '2024-01-02 03:04:05+00',
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', [1,2,3], {'a': 1, 'b': 'x'}, '\\xAA\\xBB'::BLOB),
      (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""")
    con.execute("CREATE SCHEMA lake.other")
    con.execute("CREATE TABLE lake.other.p (k INTEGER, region VARCHAR)")
    con.execute("ALTER TABLE lake.other.p SET PARTITIONED BY (region)")
    con.execute("INSERT INTO lake.other.p VALUES (1, 'north'), (2, 'south'), (3, 'north')")
    con.execute("INSERT INTO lake.other.p VALUES (4, 'east')")
    con.execute("UPDATE lake.other.p SET k = 30 WHERE k = 3")
    con.execute("CREATE VIEW lake.v AS SELECT id, s FROM lake.ty WHERE id = 1")
    fdl_setup("commit", work, "-m", "every kind")
    con.close()
    cols = ["id", "i8", "i16", "i64", "u32", "f", "d", "dec", "s", "b", "dt", "tm", "ts", "tstz", "u", "l", "st", "bl"]
    queries = [f"SELECT '{c}' AS col, string_agg(CAST({c} AS VARCHAR), '|' ORDER BY id) AS v FROM ty" for c in cols]
    queries += ["SELECT k, region FROM other.p ORDER BY k", "SELECT * FROM v"]
    server = Server(repo.root, tmp_path)
    try:
        p = subprocess.run(["node", str(NODE_SCRIPT), server.url + "/", str(ARTIFACTS / "kinds"),
                            json.dumps({"queries": [{"seq": 1, "sql": q} for q in queries]})],
                           capture_output=True, text=True, timeout=900, cwd=ROOT / "web")
        assert p.returncode == 0, p.stderr[-4000:]
        seen = json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        server.stop()
    assert seen["consoleErrors"] == []
    con = oracle(repo, "main:1")
    for q, got in zip(queries, seen["queries"]):
        stock = q.replace("FROM ty", "FROM lake.ty").replace("FROM other.p", "FROM lake.other.p").replace("FROM v", "FROM lake.v")
        want = [["NULL" if x is None else str(x) for x in row] for row in con.execute(stock).fetchall()]
        assert got["rows"] == want, (q, got["rows"] or got["status"], want)
    assert seen["queries"][-1]["rows"] == [["1", "héllo"]]


def stock_text(con, sql):
    """Each value of `sql` as stock DuckDB prints it (CAST to VARCHAR), NULL as the page shows it."""
    con.execute("SET TimeZone = 'UTC'")
    cur = con.execute(f"SELECT COLUMNS(*)::VARCHAR FROM ({sql})")
    return [["NULL" if x is None else x for x in row] for row in cur.fetchall()]


def stock_csv(con, sql, tmp_path):
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"COPY ({sql}) TO '{tmp_path}/stock.csv'")
    return (tmp_path / "stock.csv").read_bytes()


def run_page(repo, tmp_path, name, plan):
    server = Server(repo.root, tmp_path)
    try:
        p = subprocess.run(["node", str(NODE_SCRIPT), server.url + "/", str(ARTIFACTS / name), json.dumps(plan)],
                           capture_output=True, text=True, timeout=900, cwd=ROOT / "web")
        assert p.returncode == 0, p.stderr[-4000:]
        return json.loads(p.stdout.strip().splitlines()[-1])
    finally:
        server.stop()


def test_every_value_reads_as_duckdb_prints_it(repo, tmp_path):
    """Issue 35's values, in a browser in Tokyo: every type in the landing
    card's SQL box, a version's SQL box and the viewer equals stock DuckDB's
    CAST(x AS VARCHAR) (TIMESTAMPTZ in UTC with +00), and the CSV download
    is byte for byte what stock DuckDB's COPY (...) TO 'x.csv' writes."""
    import base64
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)  # the scene: the release build (tests/README.md)
    con.execute("""CREATE TABLE lake.vals (id INTEGER, dec DECIMAL(10,3), dt DATE, ts TIMESTAMP, tstz TIMESTAMPTZ,
      tm TIME, iv INTERVAL, u UUID, bl BLOB, h HUGEINT, big BIGINT, ub UBIGINT, f FLOAT, d DOUBLE, s VARCHAR,
      l VARCHAR[], st STRUCT(a INTEGER, b VARCHAR, "c d" DATE), m MAP(VARCHAR, INTEGER), ll INTEGER[][], b BOOLEAN)""")
    con.execute("""INSERT INTO lake.vals VALUES
      (1, 999.698, DATE '2025-12-01', TIMESTAMP '2025-12-01 13:45:07', TIMESTAMPTZ '2025-12-01 13:45:07.25+09',
       TIME '12:34:56.5', INTERVAL '1 year 2 months 3 days 04:05:06.7', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
       '\\xAA\\x00ab,"'::BLOB, -1267650600228229401496703205376, 9007199254740993, 18446744073709551615, 0.1, 1e20,
       'a,"b"
next #line', ['NULL', '', 'x,y', 'it''s', NULL, ' lead'], {'a': NULL, 'b': 'x:y', 'c d': DATE '2024-02-29'},
       MAP {'k': 1, 'NULL': NULL}, [[1, 2], [], NULL], true),
      (2, -0.005, DATE '0044-03-15', TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMPTZ '2024-06-30 23:59:59+00',
       TIME '00:00:00', INTERVAL '36 hours', NULL, ''::BLOB, 0, -9007199254740993, 0, -0.0, 'nan', '',
       [], {'a': 1, 'b': '', 'c d': NULL}, MAP {}, [], false),
      (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""")
    fdl_setup("commit", work, "-m", "every value")
    con.close()
    sql = "SELECT * FROM vals ORDER BY id"
    seen = run_page(repo, tmp_path, "values", {
        "cardQueries": [sql], "queries": [{"seq": 1, "sql": sql, "csv": True},
                                          {"seq": 1, "sql": "SELECT id, tstz, st.b AS b, l[1] AS first FROM vals ORDER BY id DESC",
                                           "csv": True}],
        "viewers": [{"seq": 1, "table": "main.vals"}]})
    assert seen["consoleErrors"] == []
    assert seen["timeZone"] == "Asia/Tokyo"
    lake = repo.open_version("main", setup=True)
    want = stock_text(lake, "SELECT * FROM lake.vals ORDER BY id")
    assert want[0][4] == "2025-12-01 04:45:07.25+00" and want[0][1] == "999.698"  # what the issue saw wrong
    [card] = seen["cardQueries"]
    version_query, projection = seen["queries"]
    for got in (card, version_query):
        assert got["header"] == [c[0] for c in lake.execute("DESCRIBE lake.vals").fetchall()]
        assert got["rows"] == want, got["rows"]
        assert got["nulls"][2] == [False] + [True] * 19  # NULL is NULL, not the text 'NULL' of row 1's list
        assert got["broken"] == [], got["broken"]  # a date, a UUID, a number is never split across lines
        assert base64.b64decode(got["csv"]) == stock_csv(lake, "SELECT * FROM lake.vals ORDER BY id", tmp_path)
    proj = "SELECT id, tstz, st.b AS b, l[1] AS first FROM lake.vals ORDER BY id DESC"
    assert projection["rows"] == stock_text(lake, proj)
    assert base64.b64decode(projection["csv"]) == stock_csv(lake, proj, tmp_path)
    [viewer] = seen["viewers"]
    assert viewer["error"] == [] and sorted(viewer["rows"], key=lambda r: r[0]) == want
    assert not seen["clipped"], seen["clipped"]


def test_schema_changes_partitions_statistics_compare_and_offline_versions(repo, tmp_path):
    """One repository of five versions, read in the browser as stock DuckDB
    reads it. Issue 43: a column added with DEFAULT 42, one dropped and
    re-added, a renamed one, a table partitioned by year(ts) with a real
    column `year`, an identity partition holding 'NULL': every query equals
    DuckLake. Issue 35: the statistics of a column added later and of a
    renamed one equal count(*) - count(col), min and max; compare on the
    renamed table equals fdl diff --rows; an expired version (retention)
    and a withdrawn one (the branch's tip) show no ATTACH, query or compare,
    but the reason, the date and the newest live version, and the landing
    card says its tip is offline."""
    from test_lifecycle import set_retention
    work = tmp_path / "w"
    con = repo.checkout(work, setup=True)  # the scene: the release build (tests/README.md)
    con.execute("CREATE TABLE lake.first (x INTEGER)")
    con.execute("INSERT INTO lake.first VALUES (1)")
    fdl_setup("commit", work, "-m", "v1: a start that will expire")
    con.execute("CREATE TABLE lake.t (id INTEGER, name VARCHAR, j INTEGER)")
    con.execute("INSERT INTO lake.t SELECT i, 'n' || i, i * 10 FROM range(10) r(i)")
    con.execute("CREATE TABLE lake.h (ts TIMESTAMP, year INTEGER, v INTEGER)")
    con.execute("ALTER TABLE lake.h SET PARTITIONED BY (year(ts))")
    con.execute("INSERT INTO lake.h VALUES (TIMESTAMP '2024-05-01 10:00:00', 1999, 1), "
                "(TIMESTAMP '2023-01-01 00:00:00', NULL, 2), (TIMESTAMP '2024-12-31 23:59:59', 2031, 3)")
    con.execute("CREATE TABLE lake.p (k INTEGER, region VARCHAR)")
    con.execute("ALTER TABLE lake.p SET PARTITIONED BY (region)")
    con.execute("INSERT INTO lake.p VALUES (1, 'NULL'), (2, 'north'), (3, NULL), (4, 'a=b')")
    fdl_setup("commit", work, "-m", "v2: tables")
    con.execute("ALTER TABLE lake.t ADD COLUMN later INTEGER")
    con.execute("ALTER TABLE lake.t ADD COLUMN k INTEGER DEFAULT 42")
    con.execute("ALTER TABLE lake.t DROP COLUMN j")
    con.execute("ALTER TABLE lake.t ADD COLUMN j VARCHAR DEFAULT 'dflt'")
    con.execute("ALTER TABLE lake.t RENAME COLUMN name TO label")
    con.execute("INSERT INTO lake.t (id, label, later) SELECT i, 'm' || i, i FROM range(10, 15) r(i)")
    con.execute("DELETE FROM lake.t WHERE id = 3")
    fdl_setup("commit", work, "-m", "v3: columns added, re-added, renamed")
    con.execute("INSERT INTO lake.t (id, label, later, k) SELECT i, 'o' || i, i * 2, 7 FROM range(15, 20) r(i)")
    con.execute("UPDATE lake.t SET label = 'changed' WHERE id = 12")
    fdl_setup("commit", work, "-m", "v4: more rows")
    con.execute("INSERT INTO lake.t (id, label) VALUES (99, 'secret')")
    fdl_setup("commit", work, "-m", "v5: published by mistake")
    con.close()
    log = {v["seq"]: v["id"] for v in log_ids(repo)}
    # what stock DuckDB says, read before anything goes offline
    lake = repo.open_version("main:4", setup=True)
    queries = ["SELECT * FROM t ORDER BY id", "SELECT * FROM h ORDER BY v", "SELECT * FROM p ORDER BY k",
               "SELECT j, k, count(*) AS n FROM t GROUP BY ALL ORDER BY ALL"]
    want = [stock_text(lake, q.replace("FROM ", "FROM lake.")) for q in queries]
    assert ["1999"] == [r[1] for r in want[1] if r[2] == "1"] and ["1", "NULL"] == want[2][0]
    # DuckLake's truth for t: old rows have k = 42, the re-added j's default (never the dropped j), later NULL
    assert [r[1:] for r in want[0] if r[0] == "0"] == [["n0", "NULL", "42", "dflt"]]
    stats = {}
    for c in [d[0] for d in lake.execute("DESCRIBE lake.t").fetchall()]:
        n, lo, hi = lake.execute(f'SELECT count(*) - count("{c}"), CAST(min("{c}") AS VARCHAR), '
                                 f'CAST(max("{c}") AS VARCHAR) FROM lake.t').fetchone()
        stats[c] = [c, str(n), "NULL" if lo is None else lo, "NULL" if hi is None else hi]
    diffs = {seq: diff_rows(repo, seq) for seq in (3, 4)}
    set_retention(repo, 0, 4)
    assert [e["id"] for e in json.loads(fdl("expire", repo.root, "--json").stdout)["expired"]] == [log[1]]
    fdl_setup("withdraw", repo.root, log[5], "--reason", "a row published by mistake", "--force")  # the tip: offline on purpose

    seen = run_page(repo, tmp_path, "lifecycle", {
        "queries": [{"seq": 4, "sql": q} for q in queries],
        "viewers": [{"seq": 4, "table": "main.t", "stats": True}],
        "compares": [3, 4],
        "pages": [{"id": log[5], "name": "withdrawn"}, {"id": log[1], "name": "expired"}, {"id": log[4], "name": "live"},
                  {"id": log[3], "name": "older"}]})
    # the offline versions' files.json are asked for and missing: those 404s only
    assert [e for e in seen["consoleErrors"] if "404" not in e] == [], seen["consoleErrors"]
    for q, got, w in zip(queries, seen["queries"], want):
        assert got["rows"] == w, (q, got["rows"] or got["status"], w)
    [viewer] = seen["viewers"]
    assert viewer["stats"] == list(stats.values()), (viewer["stats"], stats)
    assert stats["later"][1] != "0" and stats["label"][2] == "changed"  # NULLs of the old files; the renamed column's
    by_seq = {c["seq"]: {r[0]: r for r in c["rows"]} for c in seen["compares"]}
    for seq, diff in diffs.items():
        for table, t in diff["rows"].items():
            row = by_seq[seq][table]
            assert row[3:5] == [str(t["added_total"]), str(t["removed_total"])], (seq, table, row, t)
    assert by_seq[3]["main.t"][3:5] != ["0", "0"]
    # the tip is withdrawn: the card says so and points to version 4
    assert seen["tipOffline"] and "Withdrawn on" in seen["tipOffline"] and "a row published by mistake" in seen["tipOffline"]
    assert "version 4" in seen["tipOffline"] and not seen["cardHasSql"]
    withdrawn, expired, live, older = seen["pages"]
    for page, reason in ((withdrawn, "Withdrawn on"), (expired, "Expired (retention) on")):
        assert reason in page["notice"], page["notice"]
        assert page["newestLive"] == f"#/v/{log[4]}"
        assert not page["attach"] and not page["compare"] and not page["sql"] and page["viewers"] == 0
        assert page["snippets"] == [] and "ATTACH above" not in page["text"]
    expired_at = json.loads((repo.root / "versions" / log[1] / "expired.json").read_text())["expired_at"]
    assert expired_at[:10] in expired["notice"]
    assert live["attach"] and live["compare"] and live["sql"] and live["notice"] is None
    # a live version whose branch tip is withdrawn offers no ATTACH of that tip, nor the
    # `fdl attach URL@main` line (both exit 7): it says why and that it is the newest live one
    assert live["snippets"] == ["attach-version"], live["snippets"]
    assert "Withdrawn on" in live["latestOffline"] and "version 5" in live["latestOffline"], live["latestOffline"]
    assert "this version is the newest of main that can be read" in live["latestOffline"], live["latestOffline"]
    assert older["snippets"] == ["attach-version"] and older["latestLive"] == f"#/v/{log[4]}", older
    assert not seen["clipped"], seen["clipped"]


def test_the_card_paints_first_rows_and_statistics_from_the_preview(repo, tmp_path, monkeypatch):
    """Issue 58: on a repository with a 2 M-row table and a table with deletes
    and a renamed column, the landing card shows each table's 20 first rows
    and every column's statistics with no click and no request for DuckDB-Wasm's
    files, each statistic equal to stock DuckDB over the whole table; so does
    a version's page. (Every commit writes its preview here.)"""
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    from test_preview import expected
    ids, _ = commits(repo, tmp_path / "w",
                     ("big and towns", [
                         "CREATE TABLE lake.big AS SELECT i AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE 'k' || (i % 13)"
                         " END AS kind, i * 0.25 AS score, DATE '2020-01-01' + (i % 1000)::INT AS day"
                         " FROM range(2000000) r(i)",
                         "CREATE TABLE lake.towns (code INTEGER, name VARCHAR)",
                         "INSERT INTO lake.towns VALUES (1, 'Ashby'), (2, 'Brill'), (3, NULL),"
                         " (4, '<script>alert(1)</script>'), (5, '<img src=x onerror=alert(2)>')"]),
                     ("a delete and a renamed column", [
                         "DELETE FROM lake.towns WHERE code = 2",
                         "ALTER TABLE lake.towns RENAME COLUMN name TO town_name"]), setup=True)  # the scene: the page is checked
    assert all((repo.root / "previews" / f"{vid}.json").exists() for vid in ids)
    seen = run_page(repo, tmp_path, "preview", {"queries": [], "viewers": [{"seq": 1, "table": "main.towns",
                                                                            "stats": True}]})
    assert seen["consoleErrors"] == []
    assert seen["duckdbBeforeClick"] == [] and not [u for u in seen["requests"] if "/_fdl/duckdb/" in u]
    assert seen["card"]["scripts"] == 0
    con = repo.open_version(ids[-1], setup=True)
    first = repo.open_version(ids[0], setup=True)
    try:
        want = {name: expected(con, f"lake.main.{name}") for name in ("big", "towns")}
        want_first = expected(first, "lake.main.towns")
    finally:
        con.close()
        first.close()

    def same(drawn, want):
        assert drawn["source"] == "preview" and drawn["statsSource"] == "preview"
        assert drawn["header"] == [c["name"] for c in want["columns"]]
        assert drawn["rows"] == want["rows"] and len(drawn["rows"]) == min(20, want["row_count"])
        assert len(drawn["stats"]) == len(want["stats"])
        for got, s in zip(drawn["stats"], want["stats"]):
            assert got["cells"] == [s["name"], str(s["nulls"]), "NULL" if s["min"] is None else s["min"],
                                    "NULL" if s["max"] is None else s["max"]], (got, s)
            assert got["distinct"] == str(s["distinct"])
            assert got["histogram"] == [[b["upto"], b["count"]] for b in s.get("histogram", [])]
            assert got["top"] == [[v["value"], v["count"]] for v in s.get("top", [])]
            assert got["lengths"] == ({k: str(v) for k, v in s["lengths"].items()} if "lengths" in s else None)

    card = {v["table"]: v for v in seen["cardViewers"]}
    assert sorted(card) == ["main.big", "main.towns"]
    same(card["main.big"], want["big"])
    same(card["main.towns"], want["towns"])
    assert want["big"]["row_count"] == 2000000 and want["towns"]["row_count"] == 4
    [v1] = seen["viewers"]
    same(v1["drawn"], want_first)
    assert ["4", "<script>alert(1)</script>"] in v1["drawn"]["rows"]


def test_the_repository_page_shows_first_rows_with_its_html_and_the_script_takes_over(repo, tmp_path, monkeypatch):
    """Issue 58's time to first rows: with `fdl site`, the landing page is the
    repository's own index.html, which holds HEAD's first rows; with scripts
    on and `_fdl/app.js` held back, they are there (the card's marks, the
    preview's rows) with no request for a repository file; once the script
    comes it takes the page over without the rows ever leaving it, and
    without a request for DuckDB-Wasm. Served by fdl serve and by a plain
    static host (the repository with `_fdl/` copied beside it)."""
    import shutil
    from test_hindex import CountingHost
    from test_preview import expected
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    ids, _ = commits(repo, tmp_path / "w",
                     ("towns and counts", [
                         "CREATE TABLE lake.towns (code INTEGER, name VARCHAR)",
                         "INSERT INTO lake.towns VALUES (1, 'Ashby'), (2, 'Brill'), (3, NULL),"
                         " (4, '<script>alert(1)</script>')",
                         "CREATE TABLE lake.counts AS SELECT i AS id, i * 3 AS n FROM range(500) r(i)"]),
                     ("a delete", ["DELETE FROM lake.towns WHERE code = 2"]), setup=True)  # the scene
    fdl("site", repo.root)
    con = repo.open_version(ids[-1], setup=True)
    try:
        want = {t: [list(r) for r in expected(con, f"lake.main.{t}")["rows"]] for t in ("towns", "counts")}
    finally:
        con.close()
    want = {f"main.{t}": [["NULL" if c is None else c for c in r] for r in rows] for t, rows in want.items()}
    assert len(want["main.counts"]) == 20 and ["4", "<script>alert(1)</script>"] in want["main.towns"]
    static = tmp_path / "static"
    shutil.copytree(repo.root, static)
    shutil.copytree(ROOT / "build" / "web" / "_fdl", static / "_fdl")
    hosts = {"fdl serve": Server(repo.root, tmp_path), "static host": CountingHost(static)}
    try:
        for name, host in hosts.items():
            p = subprocess.run(["node", str(ROOT / "web" / "test" / "first.mjs"), host.url + "/"],
                               capture_output=True, text=True, timeout=900, cwd=ROOT / "web")
            assert p.returncode == 0, (name, p.stderr[-4000:])
            seen = json.loads(p.stdout.strip().splitlines()[-1])
            # before the script: the rows, from the HTML alone (its stylesheet and the held script asked for)
            assert seen["before"]["rows"] == want, name
            assert set(seen["before"]["requests"]) <= {"/", "/_fdl/style.css", "/_fdl/app.js"}, seen["before"]
            # the script took over: the card's rows from the preview, never gone in between
            assert seen["after"]["rows"] == want and set(seen["after"]["sources"].values()) == {"preview"}, name
            assert seen["gone"] is False and seen["scripts"] == 0, name
            assert not [u for u in seen["requests"] if "/_fdl/duckdb/" in u], name
            assert [e for e in seen["consoleErrors"] if "404" not in e] == [], (name, seen["consoleErrors"])
    finally:
        hosts["fdl serve"].stop()
        hosts["static host"].close()


def test_the_script_page_draws_the_card_from_one_file_and_never_a_stale_one(repo, tmp_path, monkeypatch):
    """Issue 58's time to first rows on the script's page (a repository
    without `fdl site` pages): the landing card's first rows come from the
    landing card's file (previews/HEAD.json) read beside HEAD and the ref in
    one round trip, with no request for the tip's own files nor its
    preview; a card left behind by an older tip (a ref move cut short) is
    never shown: the page reads the tip the ref names, its own files and
    rows. From a plain static host and from fdl serve."""
    import shutil
    from test_hindex import CountingHost
    from test_preview import expected
    monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")
    work = tmp_path / "w"
    ids, con = commits(repo, work, ("towns", [
        "CREATE TABLE lake.towns (code INTEGER, name VARCHAR)",
        "INSERT INTO lake.towns VALUES (1, 'Ashby'), (2, 'Brill'), (3, NULL), (4, '<script>alert(1)</script>')"]),
        close=False, setup=True)  # the scene; the next commit, whose landing card is checked, runs FDL_BIN
    old_card = (repo.root / "previews" / "HEAD.json").read_bytes()
    con.execute("DELETE FROM lake.towns WHERE code = 2")
    fdl("commit", work, "-m", "a delete")
    con.close()
    ids.append(repo.head())
    card = json.loads((repo.root / "previews" / "HEAD.json").read_bytes())
    assert card["head"] == "main" and card["tip"] == ids[-1] and card["preview"]["version"] == ids[-1]

    def want_of(vid):
        c = repo.open_version(vid, setup=True)
        try:
            rows = expected(c, "lake.main.towns")["rows"]
        finally:
            c.close()
        return {"main.towns": [["NULL" if x is None else x for x in r] for r in rows]}
    want, want_old = want_of(ids[-1]), want_of(ids[0])
    assert want != want_old and ["4", "<script>alert(1)</script>"] in want["main.towns"]
    repo_files = ("/versions/", f"/previews/{ids[-1]}.json", f"/previews/{ids[0]}.json")

    def look(host):
        p = subprocess.run(["node", str(ROOT / "web" / "test" / "card.mjs"), host.url + "/"],
                           capture_output=True, text=True, timeout=600, cwd=ROOT / "web")
        assert p.returncode == 0, p.stderr[-4000:]
        return json.loads(p.stdout.strip().splitlines()[-1])

    static = tmp_path / "static"
    shutil.copytree(repo.root, static)
    shutil.copytree(ROOT / "build" / "web", static, dirs_exist_ok=True)
    hosts = {"static host": CountingHost(static), "fdl serve": Server(repo.root, tmp_path)}
    try:
        for name, host in hosts.items():
            seen = look(host)
            assert seen["rows"] == want and seen["sources"] == {"main.towns": "preview"}, (name, seen)
            assert "version 2" in seen["version"], (name, seen["version"])
            # one round trip after the page: the card, HEAD and the ref; no file of the tip itself
            assert "/previews/HEAD.json" in seen["before"], (name, seen["before"])
            assert not [u for u in seen["before"] if u.startswith(repo_files)], (name, seen["before"])
            assert not [u for u in seen["requests"] if "/_fdl/duckdb/" in u], name
            assert [e for e in seen["consoleErrors"] if "404" not in e] == [], (name, seen["consoleErrors"])
        # the card of the older tip, left as a ref move cut short would leave it: the ref wins
        (static / "previews" / "HEAD.json").write_bytes(old_card)
        seen = look(hosts["static host"])
        assert seen["rows"] == want and "version 2" in seen["version"], seen
        assert f"/versions/{ids[-1]}/version.json" in seen["requests"], seen["requests"]
        assert f"/previews/{ids[-1]}.json" in seen["requests"], seen["requests"]
    finally:
        hosts["fdl serve"].stop()
        hosts["static host"].close()
    v = fdl("verify", static, check=False)
    assert "previews/HEAD.json" in v.stdout + v.stderr and "not HEAD's tip" in v.stdout + v.stderr, v.stdout
