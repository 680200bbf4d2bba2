"""dataset.json in full: the publisher's description (YAML or JSON, split per
table or not) checked against the spec and merged with the catalog."""
import json
import textwrap

import pytest

from conftest import connect, fdl, fdl_setup, read_json


def make_work(repo, tmp_path):
    """A working folder of an empty repository (checked out by the release
    build: the scene; the describe and commit after it are the step)."""
    con = repo.checkout(tmp_path / "work", setup=True)
    con.execute("CREATE TABLE lake.population (town_code VARCHAR NOT NULL, people BIGINT)")
    con.execute("INSERT INTO lake.population VALUES ('01101', 1200), ('01102', 830)")
    con.execute("COMMENT ON COLUMN lake.population.people IS 'residents on census day'")
    con.execute("CREATE VIEW lake.big AS SELECT * FROM lake.population WHERE people > 1000")
    return con, tmp_path / "work"


def write(path, text):
    path.write_text(textwrap.dedent(text).lstrip())


def refused(work, *needles):
    """describe and commit refuse with the same message, naming what is wrong."""
    d = fdl("describe", work, check=False)
    c = fdl("commit", work, "-m", "x", check=False)
    assert d.returncode == 5, d.stderr
    assert c.returncode == 5, c.stderr
    assert d.stderr == c.stderr
    for n in needles:
        assert n in d.stderr, (n, d.stderr)
    return d.stderr


FULL = """
    name: population
    title: Population by town
    description: Census population of each town
    keywords: [population, census]
    language: en
    homepage: https://example.org/population
    issued: 2026-10-30
    update_frequency: yearly
    licenses:
      - CC-BY-4.0
      - {id: ODbL-1.0, spdx: ODbL-1.0, url: "https://opendatacommons.org/licenses/odbl/", title: ODbL}
    sources: [{title: 2025 census, path: "https://example.org/census-2025"}]
    contributors: [{title: Example City, roles: [publisher]}]
    temporal_coverage: {start: 2025, end: "2025"}
    spatial_coverage: [JP]
    schemas: [{name: main, title: Tables}]
    annotations:
      example.org: {featured: true, rank: 3, tags: [a, b], none: null}
    tables:
      - name: population
        title: Population
        primary_key: [town_code]
        depends_on: []
        sql: SELECT * FROM read_csv('census.csv')
        annotations: {example.org: {refresh: daily}}
        fields:
          - {name: town_code, title: Town code, description: JIS code}
"""


def test_full_description_merged_with_catalog(repo, tmp_path):
    con, work = make_work(repo, tmp_path)
    write(work / "dataset.yml", FULL)
    write(work / "big.table.yml", """
        name: big
        kind: view
        title: Big towns
        fields: [{name: town_code, title: Town code}]
    """)
    described = json.loads(fdl("describe", work).stdout)
    fdl("commit", work, "-m", "described")
    vdir = repo.root / "versions" / repo.head()
    ds = read_json(vdir / "dataset.json")
    assert ds == described
    assert list(ds)[:3] == ["name", "title", "description"]
    assert ds["issued"] == "2026-10-30" and ds["temporal_coverage"] == {"start": "2025", "end": "2025"}
    assert ds["licenses"][0] == "CC-BY-4.0" and ds["licenses"][1]["id"] == "ODbL-1.0"
    assert ds["annotations"] == {"example.org": {"featured": True, "rank": 3, "tags": ["a", "b"], "none": None}}
    [table, view] = ds["tables"]
    assert "kind" not in table and table["name"] == "population" and table["primary_key"] == ["town_code"]
    assert table["annotations"] == {"example.org": {"refresh": "daily"}}
    assert table["fields"][0] == {"name": "town_code", "title": "Town code", "description": "JIS code",
                                  "type": "varchar", "nullable": False}
    # undescribed column: from the catalog, with its COMMENT ON text
    assert table["fields"][1] == {"name": "people", "description": "residents on census day",
                                  "type": "int64", "nullable": True}
    assert view["kind"] == "view" and "big" == view["name"] and "people > 1000" in view["sql"]
    assert view["fields"] == [{"name": "town_code", "title": "Town code"}]
    assert "rows" not in view
    # version.json records the file
    v = repo.version(repo.head())
    assert v["dataset"]["path"] == "dataset.json"
    assert v["dataset"]["bytes"] == (vdir / "dataset.json").stat().st_size


def test_catalog_facts_match_stock_duckdb(repo, tmp_path):
    con, work = make_work(repo, tmp_path)
    con.execute("CREATE TABLE lake.m (d DOUBLE, ts TIMESTAMP, flag BOOLEAN NOT NULL, n DECIMAL(10,2))")
    con.execute("INSERT INTO lake.m VALUES (1.5, '2025-01-01', true, 3.25), (NULL, NULL, false, NULL)")
    con.execute("DELETE FROM lake.population WHERE town_code = '01102'")
    fdl("commit", work, "-m", "one")
    ds = read_json(repo.root / "versions" / repo.head() / "dataset.json")
    reader = repo.open_version("main")
    for t in [x for x in ds["tables"] if "kind" not in x]:
        full = f"lake.{t['schema']}.{t['name']}"
        assert reader.execute(f"SELECT count(*) FROM {full}").fetchone()[0] == t["rows"]
        cols = reader.execute(f"DESCRIBE {full}").fetchall()
        assert [c[0] for c in cols] == [f["name"] for f in t["fields"]]
        assert [c[2] == "YES" for c in cols] == [f["nullable"] for f in t["fields"]]
    m = next(t for t in ds["tables"] if t["name"] == "m")
    assert [f["type"] for f in m["fields"]] == ["float64", "timestamp", "boolean", "decimal(10,2)"]


def test_json_description_and_extensions(repo, tmp_path):
    con, work = make_work(repo, tmp_path)
    (work / "dataset.json").write_text(json.dumps({
        "name": "p", "title": "P", "extensions": {"old.tool": {"k": [1, 2]}},
        "tables": [{"name": "population", "extensions": {"t": True}}]}))
    ds = json.loads(fdl("describe", work).stdout)
    assert ds["annotations"] == {"old.tool": {"k": [1, 2]}}
    assert ds["tables"][0]["annotations"] == {"t": True}
    assert "extensions" not in ds


def test_no_description_defaults(repo, tmp_path):
    con, work = make_work(repo, tmp_path)
    ds = json.loads(fdl("describe", work).stdout)
    assert ds["name"] == ds["title"] == "repo"
    assert [t["name"] for t in ds["tables"]] == ["population", "big"]


@pytest.mark.parametrize("text,needles", [
    ("name: p\ntitle: P\ncolour: red\n", ["dataset.yml, line 3", "'colour'"]),
    ("name: p\n", ["dataset.yml", "'title' (required)"]),
    ("title: P\n", ["'name' (required)"]),
    ("name: p\ntitle: P\nkeywords: census\n", ["line 3", "keywords", "expected a list"]),
    ("name: p\ntitle: P\nlicenses: [{url: x}]\n", ["licenses[0]", "'id' (required)"]),
    ("name: p\ntitle: P\nsources: [{title: a, email: b}]\n", ["'email'"]),
    ("name: p\ntitle: P\ntables:\n  - name: population\n    colour: red\n", ["line 5", "'colour'"]),
    ("name: p\ntitle: P\ntables:\n  - name: nosuch\n", ["line 4", "main.nosuch", "not a table"]),
    # the column's own line, not its table's (issue 36)
    ("name: p\ntitle: P\ntables:\n  - name: population\n    fields: [{name: nosuch}]\n",
     ["line 5", "no column 'nosuch'"]),
    ("name: p\ntitle: P\ntables:\n  - name: population\n    primary_key: [nosuch]\n", ["primary_key", "nosuch"]),
    ("name: p\ntitle: P\ntables:\n  - name: big\n    fields: [{name: a, type: int}]\n", ["view", "type"]),
    ("name: p\ntitle: P\ntables:\n  - name: big\n    kind: table\n", ["is a view"]),
    ("name: p\ntitle: P\ntables:\n  - name: population\n  - name: population\n", ["described twice"]),
    ("name: p\ntitle: P\nname: q\n", ["line 3", "'name' appears twice"]),
    ("name: [p\n", ["dataset.yml, line"]),
    ("name: p\ntitle: P\ntables:\n  - name: population\n    fields: [{name: people, nullable: maybe}]\n",
     ["true or false"]),
])
def test_refusals(repo, tmp_path, text, needles):
    con, work = make_work(repo, tmp_path)
    (work / "dataset.yml").write_text(text)
    refused(work, *needles)
    assert list((repo.root / "versions").iterdir()) == []


def test_refusals_across_files(repo, tmp_path):
    con, work = make_work(repo, tmp_path)
    write(work / "dataset.yml", "name: p\ntitle: P\n")
    (work / "dataset.json").write_text('{"name": "p", "title": "P"}')
    refused(work, "both dataset.yml and dataset.json")
    (work / "dataset.json").unlink()
    write(work / "population.table.yml", "name: population\nwhatever: 1\n")
    refused(work, "population.table.yml, line 2", "'whatever'")
    write(work / "population.table.yml", "name: population\n")
    write(work / "dataset.yml", "name: p\ntitle: P\ntables: [{name: population}]\n")
    refused(work, "described twice", "population.table.yml", "dataset.yml")


DESCRIBED = """\
name: population
title: Population by town
description: Census population of each town
licenses: [CC-BY-4.0]
keywords: [population, "2025"]
tables:
  - name: t
    title: Towns
    description: One row per town
    fields:
      - name: a
        title: Town code
  - name: gone
    description: dropped later
"""


def described_repo(repo, tmp_path):
    """The first version, described (by the release build: the scene of the
    tests after it; test_full_description_merged_with_catalog is about that
    commit): the next contributor's checkout and commits run FDL_BIN."""
    con = repo.checkout(tmp_path / "w1", setup=True)
    con.execute("CREATE TABLE lake.t (a INTEGER, b INTEGER)")
    con.execute("CREATE TABLE lake.gone (x INTEGER)")
    con.execute("INSERT INTO lake.t VALUES (1, 10)")
    con.close()
    (tmp_path / "w1" / "dataset.yml").write_text(DESCRIBED)
    fdl_setup("commit", tmp_path / "w1", "-m", "described")
    return read_json(repo.root / "versions" / repo.head() / "dataset.json")


def test_the_next_contributor_keeps_the_description(repo, tmp_path):
    """Issue 23: a fresh checkout gives the base's description to edit, and
    a commit from it keeps every field nobody removed (the licence above
    all), even when a table it describes was dropped meanwhile."""
    first = described_repo(repo, tmp_path)
    con = repo.checkout(tmp_path / "w2")
    yml = (tmp_path / "w2" / "dataset.yml").read_text()
    assert "CC-BY-4.0" in yml and "Population by town" in yml and "rows" not in yml and "int32" not in yml
    con.execute("INSERT INTO lake.t VALUES (2, 20)")
    con.execute("DROP TABLE lake.gone")
    con.close()
    fdl("commit", tmp_path / "w2", "-m", "more rows, one table less")
    second = read_json(repo.root / "versions" / repo.head() / "dataset.json")
    for key in ("name", "title", "description", "licenses", "keywords"):
        assert second[key] == first[key], key
    assert second["keywords"] == ["population", "2025"]  # a number-like string stays a string
    t = second["tables"][0]
    assert (t["name"], t["title"], t["description"], t["rows"]) == ("t", "Towns", "One row per town", 2)
    assert t["fields"][0]["title"] == "Town code" and t["fields"][0]["type"] == "int32"
    assert [x["name"] for x in second["tables"]] == ["t"]  # the dropped table's description went with it
    # nothing new: nothing to commit, the description included
    p = fdl("commit", tmp_path / "w2", "-m", "again", check=False)
    assert p.returncode == 8, p.stderr
    # an explicit removal: the key deleted from dataset.yml is gone
    yml = (tmp_path / "w2" / "dataset.yml").read_text()
    (tmp_path / "w2" / "dataset.yml").write_text("\n".join(l for l in yml.splitlines() if "licenses" not in l
                                                           and "CC-BY-4.0" not in l) + "\n")
    fdl("commit", tmp_path / "w2", "-m", "no licence any more")
    third = read_json(repo.root / "versions" / repo.head() / "dataset.json")
    assert "licenses" not in third and third["title"] == first["title"]


def test_a_description_of_a_table_that_never_was_is_refused(repo, tmp_path):
    """The format's rule stands for what the publisher writes: a table the
    catalog does not have, and the base never described, is refused (a
    typo); one the base described and a later change dropped just leaves."""
    described_repo(repo, tmp_path)
    con = repo.checkout(tmp_path / "w2")
    con.execute("DROP TABLE lake.gone")
    con.close()
    yml = tmp_path / "w2" / "dataset.yml"
    yml.write_text(yml.read_text().replace("Population by town", "Population by town, 2025"))
    (tmp_path / "w2" / "tpyo.table.yml").write_text("name: tpyo\ntitle: a typo\n")
    p = fdl("commit", tmp_path / "w2", "-m", "edited", check=False)
    assert p.returncode == 5 and "main.tpyo" in p.stderr and "line" in p.stderr, p.stderr
    (tmp_path / "w2" / "tpyo.table.yml").unlink()
    fdl("commit", tmp_path / "w2", "-m", "edited, without the typo")
    ds = read_json(repo.root / "versions" / repo.head() / "dataset.json")
    assert ds["title"] == "Population by town, 2025" and [t["name"] for t in ds["tables"]] == ["t"]


def test_fdl_run_that_writes_nothing_commits_nothing(repo, tmp_path):
    described_repo(repo, tmp_path)
    before = repo.head()
    p = fdl("run", repo.root, "--", "true")
    assert "nothing to commit" in p.stdout and repo.head() == before


def test_a_working_folder_without_a_description_file_carries_it_over(repo, tmp_path):
    """A folder checked out before checkout wrote dataset.yml (or one whose
    file was deleted) and a PostgreSQL catalog have no file: the base's
    description carries over."""
    first = described_repo(repo, tmp_path)
    con = repo.checkout(tmp_path / "w2")
    (tmp_path / "w2" / "dataset.yml").unlink()
    con.execute("INSERT INTO lake.t VALUES (3, 30)")
    con.close()
    fdl("commit", tmp_path / "w2", "-m", "no file")
    second = read_json(repo.root / "versions" / repo.head() / "dataset.json")
    assert second["licenses"] == first["licenses"] and second["tables"][0]["title"] == "Towns"


def test_a_pipelines_bookkeeping_is_left_out_of_the_description(repo, tmp_path):
    """annotations.fdl.exclude (patterns on schema.table): dlt's _dlt_*
    tables and a staging schema stay in the frozen catalog and files.json
    (the format's rules: the catalog is the working catalog cut at a
    snapshot, files.json is derived from it) but are not described in
    dataset.json, which the page lists its tables from. The rule travels
    with the description: a fresh checkout keeps it."""
    con, work = make_work(repo, tmp_path)
    con.execute("CREATE TABLE lake._dlt_loads (load_id VARCHAR)")
    con.execute("INSERT INTO lake._dlt_loads VALUES ('1')")
    con.execute("CREATE SCHEMA lake.staging")
    con.execute("CREATE TABLE lake.staging.raw (x INTEGER)")
    write(work / "dataset.yml", """
        name: population
        title: Population by town
        annotations:
          fdl:
            exclude: ["*._dlt_*", "staging.*"]
    """)
    fdl("commit", work, "-m", "with bookkeeping")
    vid = repo.head()
    ds = read_json(repo.root / "versions" / vid / "dataset.json")
    assert [(t["schema"], t["name"]) for t in ds["tables"]] == [("main", "population"), ("main", "big")]
    assert ds["annotations"]["fdl"]["exclude"] == ["*._dlt_*", "staging.*"]
    files = read_json(repo.root / "versions" / vid / "files.json")
    assert {"main._dlt_loads", "staging.raw", "main.population"} <= set(files["tables"])
    assert fdl("verify", repo.root, "--all").returncode == 0
    c2 = connect()
    c2.execute(fdl("attach", repo.root).stdout)
    assert c2.execute("SELECT count(*) FROM lake._dlt_loads").fetchone() == (1,)  # still in the catalog
    # the next contributor: checkout writes the rule back, a commit keeps it
    con2 = repo.checkout(tmp_path / "next")
    assert "exclude" in (tmp_path / "next" / "dataset.yml").read_text()
    con2.execute("INSERT INTO lake._dlt_loads VALUES ('2')")
    fdl("commit", tmp_path / "next", "-m", "another load")
    ds2 = read_json(repo.root / "versions" / repo.head() / "dataset.json")
    assert [t["name"] for t in ds2["tables"]] == ["population", "big"]
    # describing an excluded table is a contradiction; a rule that is not a list is refused
    write(tmp_path / "next" / "dataset.yml", """
        name: population
        title: Population by town
        tables:
          - name: _dlt_loads
            description: loads
        annotations:
          fdl:
            exclude: ["*._dlt_*"]
    """)
    refused(tmp_path / "next", "dataset.yml, line 4", "main._dlt_loads", "annotations.fdl.exclude leaves out")
    write(tmp_path / "next" / "dataset.yml", """
        name: population
        title: Population by town
        annotations: {fdl: {exclude: "*._dlt_*"}}
    """)
    refused(tmp_path / "next", "dataset.yml", "must be a list of patterns")
