"""Previews (docs/format.md "Previews (fdl)"): each version's first rows and
column statistics, written at commit and by `fdl preview`, checked value by
value against stock DuckDB over the whole table; a table the commit left as it
was reused; removed with a withdrawn version; listed by verify."""
import json
import shutil

import duckdb
import pytest

from conftest import Repo, commits, connect, fdl, read_json


@pytest.fixture(autouse=True)
def every_commit_previews(monkeypatch, request):
    """Every commit of these tests writes its preview (FDL_PREVIEW_AT_COMMIT=1),
    the first version's too; the rule without it (a repository keeps previews
    once `fdl preview` wrote one) has its own test."""
    if request.node.name != "test_a_repository_keeps_previews_once_fdl_preview_wrote_one":
        monkeypatch.setenv("FDL_PREVIEW_AT_COMMIT", "1")


@pytest.fixture
def repo(tmp_path):
    """The repository, its init by the release build: the scene
    (tests/README.md, "Shared setups")."""
    return Repo(tmp_path, setup=True)


def commits_under_test(repo, work, *steps):
    """commits() from the release build's checkout (the scene), each commit,
    which writes the preview under test, by FDL_BIN: the ids, oldest first."""
    con = repo.checkout(work, setup=True)
    ids = []
    for message, statements in steps:
        for sql in statements:
            con.execute(sql)
        fdl("commit", work, "-m", message)
        ids.append(repo.head())
    con.close()
    return ids


def preview(repo, vid):
    """The version's preview with each table's file merged in, by schema.table."""
    doc = read_json(repo.root / "previews" / f"{vid}.json")
    assert doc["fdl_preview"] == 1 and doc["version"] == vid
    out = {}
    for t in doc["tables"]:
        table = read_json(repo.root / t["key"])
        assert (table["schema"], table["name"], table["table_id"]) == (t["schema"], t["name"], t["table_id"])
        # the version's file holds a copy of each table file: a page reads it in one request
        assert t["file"] == table, t["key"]
        out[f"{t['schema']}.{t['name']}"] = dict(table, key=t["key"])
    return out


def q(name):
    return '"' + name.replace('"', '""') + '"'


RANGED = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
          "UHUGEINT", "FLOAT", "DOUBLE", "DATE"}


def expected(con, table):
    """What stock DuckDB answers over every row of `table` (lake.schema.name)."""
    cols = con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall()
    first = con.execute(f"SELECT {', '.join(f'CAST({q(c)} AS VARCHAR)' for c, _ in cols)} FROM {table} LIMIT 20").fetchall()
    stats = []
    for c, t in cols:
        n = q(c)
        nulls, = con.execute(f"SELECT count(*) - count({n}) FROM {table}").fetchone()
        s = {"name": c, "type": t, "nulls": nulls}
        if "[" in t or t.startswith(("STRUCT", "MAP")):
            stats.append(dict(s, distinct=None, min=None, max=None))
            continue
        s["distinct"], s["min"], s["max"] = con.execute(
            f"SELECT count(DISTINCT {n}), CAST(min({n}) AS VARCHAR), CAST(max({n}) AS VARCHAR) FROM {table}").fetchone()
        if t == "VARCHAR":
            lo, hi, avg = con.execute(f"SELECT min(length({n})), max(length({n})), CAST(avg(length({n})) AS VARCHAR)"
                                      f" FROM {table}").fetchone()
            s["lengths"] = {"min": lo, "max": hi, "avg": avg}
            s["top"] = [{"value": v, "count": k} for v, k in con.execute(
                f"SELECT {n}, count(*) FROM {table} WHERE {n} IS NOT NULL GROUP BY {n} ORDER BY count(*) DESC, {n}"
                " LIMIT 10").fetchall()]
        elif s["min"] is not None and (t in RANGED or t.startswith(("DECIMAL(", "TIMESTAMP", "TIME"))):
            try:
                s["histogram"] = [{"upto": k, "count": v} for k, v in con.execute(
                    f"SELECT CAST(e.key AS VARCHAR), e.value FROM (SELECT unnest(map_entries(histogram({n}, (SELECT"
                    f" equi_width_bins(min({n}), max({n}), 10, true) FROM {table})))) AS e FROM {table})").fetchall()]
            except duckdb.InvalidInputException:  # an infinite bound: DuckDB has no histogram, the preview none
                pass
        stats.append(s)
    count, = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    return {"columns": [{"name": c, "type": t} for c, t in cols], "row_count": count,
            "rows": [list(r) for r in first], "stats": stats}


def check_version(repo, vid):
    got = preview(repo, vid)
    con = repo.open_version(vid, setup=True)  # stock DuckDB, the oracle: the release build's ATTACH
    try:
        names = sorted(r[0] for r in con.execute(
            "SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall())
        assert sorted(got) == names
        for name in names:
            schema, table = name.split(".")
            want = expected(con, f"lake.{q(schema)}.{q(table)}")
            have = {k: got[name][k] for k in ("columns", "row_count", "rows", "stats")}
            assert have == want, f"{name} of {vid}"
    finally:
        con.close()
    return got


STEPS = [
    ("big and small", [
        "CREATE TABLE lake.big AS SELECT i AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE 'k' || (i % 13) END AS kind,"
        " i * 0.25 AS score, DATE '2020-01-01' + (i % 1000)::INT AS day,"
        " TIMESTAMP '2024-01-01' + to_seconds(i) AS at, [i % 3, i % 5] AS pair FROM range(200000) r(i)",
        "CREATE TABLE lake.towns (code INTEGER, name VARCHAR)",
        "INSERT INTO lake.towns VALUES (1, 'Ashby'), (2, 'Brill'), (3, NULL), (4, '<script>alert(1)</script>')"]),
    ("a delete and a renamed column in towns", [
        "DELETE FROM lake.towns WHERE code = 2",
        "ALTER TABLE lake.towns RENAME COLUMN name TO town_name"]),
    ("one more row in big", ["INSERT INTO lake.big VALUES (-1, 'new', NULL, NULL, NULL, NULL)"]),
]


def test_each_statistic_equals_stock_duckdb_and_unchanged_tables_are_reused(repo, tmp_path):
    ids = commits_under_test(repo, tmp_path / "w", *STEPS)
    p = [check_version(repo, vid) for vid in ids]
    # a table the commit did not change keeps its file; one it changed gets a new one
    assert p[1]["main.big"]["key"] == p[0]["main.big"]["key"]
    assert p[1]["main.towns"]["key"] != p[0]["main.towns"]["key"]
    assert p[2]["main.towns"]["key"] == p[1]["main.towns"]["key"]
    assert p[2]["main.big"]["key"] != p[1]["main.big"]["key"]
    # hostile text stays a string, as DuckDB prints it
    assert ["4", "<script>alert(1)</script>"] in p[0]["main.towns"]["rows"]
    assert fdl("verify", repo.root).stdout.strip().endswith("0 problems")
    # a copy that differs from its table file: verify names it
    vfile = repo.root / "previews" / f"{ids[2]}.json"
    kept = vfile.read_text()
    doc = json.loads(kept)
    doc["tables"][0]["file"]["row_count"] += 1
    vfile.write_text(json.dumps(doc))
    v = fdl("verify", repo.root, check=False)
    assert v.returncode != 0 and "another copy of it (field 'file')" in v.stdout + v.stderr, v.stdout + v.stderr
    vfile.write_text(kept)


PLAIN_STEPS = [
    ("three files and an empty table", [
        "CREATE TABLE lake.m (id INTEGER, name VARCHAR)",
        "INSERT INTO lake.m SELECT i, 'n' || (i % 4) FROM range(30) r(i)",
        "INSERT INTO lake.m SELECT i, 'n' || (i % 5) FROM range(30, 60) r(i)",
        "INSERT INTO lake.m SELECT i, NULL FROM range(60, 65) r(i)",
        "CREATE TABLE lake.e (x INTEGER)",
        "CREATE TABLE lake.p (k INTEGER, region VARCHAR)",
        "ALTER TABLE lake.p SET PARTITIONED BY (region)",
        "INSERT INTO lake.p VALUES (1, 'NULL'), (2, 'north'), (3, NULL)",
        "CREATE TABLE lake.s (i INTEGER, st STRUCT(a INTEGER, b VARCHAR))",
        "INSERT INTO lake.s VALUES (1, {'a': 1, 'b': 'x'})"]),
    # the first 20 rows now span two files, each with deletes; a renamed
    # column and one added with a default for the older files
    ("deletes in two files, a rename, a column added", [
        "DELETE FROM lake.m WHERE id < 25 OR (id >= 30 AND id % 7 = 0)",
        "ALTER TABLE lake.m RENAME COLUMN name TO label",
        "ALTER TABLE lake.m ADD COLUMN score DOUBLE DEFAULT 1.5",
        "INSERT INTO lake.m VALUES (100, 'late', 2.5)",
        # a struct that gained a field after a file was written: files.json
        # says no plain reader gets it right (its "unreadable")
        "ALTER TABLE lake.s ADD COLUMN st.c INTEGER",
        "INSERT INTO lake.s VALUES (2, {'a': 2, 'b': 'y', 'c': 3})"]),
    ("one more row", ["INSERT INTO lake.m VALUES (101, NULL, NULL)"]),
]


def test_a_changed_table_is_read_from_its_data_files_as_duckdb_reads_it(repo, tmp_path):
    """A commit reads a changed table's preview from its data files by
    files.json's reading (columns by field id, defaults, deletes, DuckLake's
    row order, partition folders ignored; a table without files from its
    columns), not through DuckLake, and each value still equals stock
    DuckDB's; a table files.json calls unreadable is read through DuckLake."""
    con = repo.checkout(tmp_path / "w", setup=True)
    ids, traces = [], []
    for message, statements in PLAIN_STEPS:
        for sql in statements:
            con.execute(sql)
        traces.append(fdl("commit", tmp_path / "w", "-m", message, env={"FDL_TRACE": "1"}).stderr)
        ids.append(repo.head())
    con.close()
    for vid, trace in zip(ids, traces):
        assert "preview: main.m read from its data files" in trace, trace
        assert "main.m through DuckLake" not in trace, trace
        check_version(repo, vid)
    for table in ("e", "p", "s"):
        assert f"preview: main.{table} read from its data files" in traces[0], traces[0]
    assert "preview: main.s through DuckLake (from its data files alone: a reader of plain Parquet cannot" \
        in traces[1], traces[1]
    # a commit that left the leading files as they were takes the first rows
    # from its parent's preview (the rows stock DuckDB returns, checked
    # above); one that deleted from them, or renamed a column, reads them again
    reused = "preview: first rows as in the parent's preview (the same leading files)"
    assert [reused in t for t in traces] == [False, False, True], traces
    # the first rows come from the two leading files, past their deletes
    rows = preview(repo, ids[1])["main.m"]["rows"]
    assert [r[0] for r in rows[:6]] == ["25", "26", "27", "28", "29", "30"], rows


def test_the_preview_at_commit_is_the_one_fdl_preview_computes_from_the_version(repo, tmp_path):
    """A commit computes its preview before its version is written, from what
    it holds (the frozen catalog in its own folder, files.json's text, its
    base's id), beside the version's writes: byte for byte what `fdl
    preview` computes from the versions once written, the table files and
    the landing card too, for tables with deletes in two files, a renamed
    and an added column, a struct read through DuckLake, and first rows
    taken from the parent's preview."""
    commits_under_test(repo, tmp_path / "w", *PLAIN_STEPS)
    previews = repo.root / "previews"

    def held():
        return {str(p.relative_to(previews)): p.read_bytes() for p in previews.rglob("*") if p.is_file()}
    at_commit = held()
    assert len([k for k in at_commit if not k.startswith("tables/")]) == 4  # three versions and the card
    shutil.rmtree(previews)
    fdl("preview", repo.root)
    assert held() == at_commit


def test_fdl_preview_fills_older_versions_and_they_go_with_a_withdrawal(repo, tmp_path, ledger):
    ids, _ = commits(repo, tmp_path / "w", *STEPS, setup=True)  # the scene: fdl preview is checked
    before = {vid: (repo.root / "previews" / f"{vid}.json").read_text() for vid in ids}
    tables = sorted(p.name for p in (repo.root / "previews" / "tables").iterdir())
    # previews deleted (a repository published before fdl wrote them): fdl preview writes the same files
    for f in (repo.root / "previews").rglob("*.json"):
        f.unlink()
    out = fdl("preview", repo.root).stdout
    assert out.count("preview written") == 3 and "1 reused" in out, out
    assert {vid: (repo.root / "previews" / f"{vid}.json").read_text() for vid in ids} == before
    assert sorted(p.name for p in (repo.root / "previews" / "tables").iterdir()) == tables
    assert "has its preview" in fdl("preview", repo.root, ids[0]).stdout
    assert fdl("preview", repo.root, "nope", check=False).returncode == 3
    # a table file nobody names: a warning
    stray = repo.root / "previews" / "tables" / ("0" * 64 + ".json")
    stray.write_text("{}")
    v = fdl("verify", repo.root, check=False)
    assert "no preview names it" in v.stdout + v.stderr and v.returncode == 0, v.stdout + v.stderr
    # withdrawn: every version holding the rows goes, and with them their previews
    fdl("withdraw", repo.root, ids[0], "--reason", "personal data", "--force")
    ledger.gone(*ids)
    assert not list((repo.root / "previews").rglob("*.json"))
    # a withdrawal cut short before its sweep leaves one: verify warns, running it again deletes it
    (repo.root / "previews" / f"{ids[0]}.json").write_text(before[ids[0]])
    v = fdl("verify", repo.root, check=False)
    assert f"version {ids[0]} is gone" in v.stdout + v.stderr, v.stdout + v.stderr
    fdl("withdraw", repo.root, ids[0], "--reason", "personal data", "--force")
    assert not list((repo.root / "previews").rglob("*.json"))


def test_a_repository_keeps_previews_once_fdl_preview_wrote_one(repo, tmp_path, monkeypatch):
    """A repository that never ran `fdl preview` pays nothing for previews at
    commit (none written); once it has one, each commit whose first parent
    has a preview writes its own, equal to stock DuckDB's answers."""
    monkeypatch.delenv("FDL_PREVIEW_AT_COMMIT", raising=False)
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.t AS SELECT i AS a, 'x' || i AS b FROM range(50) r(i)")
    fdl("commit", tmp_path / "w", "-m", "v1")
    con.execute("INSERT INTO lake.t VALUES (-1, NULL)")
    fdl("commit", tmp_path / "w", "-m", "v2")
    assert not (repo.root / "previews").exists()
    v2 = repo.head()
    assert "preview written" in fdl("preview", repo.root).stdout
    assert (repo.root / "previews" / f"{v2}.json").exists()
    con.execute("DELETE FROM lake.t WHERE a < 10")
    fdl("commit", tmp_path / "w", "-m", "v3")
    con.close()
    check_version(repo, repo.head())


def test_a_column_without_a_histogram_leaves_the_other_statistics_as_duckdb_answers(repo, tmp_path):
    """A DOUBLE column holding infinity has no histogram (DuckDB's
    equi_width_bins refuses an infinite bound, which ends the preview's
    transaction): the preview has none for it, and every other statistic,
    read after it from the table's data files, still equals stock DuckDB's."""
    con = repo.checkout(tmp_path / "w", setup=True)
    con.execute("CREATE TABLE lake.f (x DOUBLE, s VARCHAR, n INTEGER)")
    con.execute("INSERT INTO lake.f VALUES (1.5, 'a', 1), ('inf', 'b', 2), (NULL, 'a', NULL), (-2.25, NULL, 3)")
    con.close()
    trace = fdl("commit", tmp_path / "w", "-m", "infinity", env={"FDL_TRACE": "1"}).stderr
    assert "preview: main.f read from its data files" in trace and "main.f through DuckLake" not in trace, trace
    got = check_version(repo, repo.head())
    stats = {s["name"]: s for s in got["main.f"]["stats"]}
    assert "histogram" not in stats["x"] and stats["x"]["max"] == "inf", stats["x"]
    assert stats["n"]["histogram"] and stats["s"]["top"] == [{"value": "a", "count": 2}, {"value": "b", "count": 1}]
