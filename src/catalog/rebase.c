/* fdl rebase, the plan: where a working catalog's ids must move to follow a
 * later version of its branch, what it changed that cannot be replayed, and
 * the conflicts between its changes and the later version's since their
 * common base, by DuckLake's rules (docs/decisions.md, "fdl rebase"). The
 * replay itself is replay.c. */
#include "rebase.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- what each DuckLake table is to a rebase (the plan's and the replay's) ---- */

static const struct {
	const char *name;
	fdl_rebase_kind kind;
	const char *key;
} TABLES[] = {
	{"ducklake_metadata", REBASE_META, NULL},
	{"ducklake_snapshot", REBASE_SNAPSHOT, NULL},
	{"ducklake_snapshot_changes", REBASE_SNAPSHOT, NULL},
	{"ducklake_schema", REBASE_VERSIONED, NULL},
	{"ducklake_table", REBASE_VERSIONED, NULL},
	{"ducklake_view", REBASE_VERSIONED, NULL},
	{"ducklake_tag", REBASE_VERSIONED, NULL},
	{"ducklake_column_tag", REBASE_VERSIONED, NULL},
	{"ducklake_view_column_tag", REBASE_VERSIONED, NULL},
	{"ducklake_column", REBASE_VERSIONED, NULL},
	{"ducklake_data_file", REBASE_VERSIONED, "data_file_id"},
	{"ducklake_delete_file", REBASE_VERSIONED, "delete_file_id"},
	{"ducklake_partition_info", REBASE_VERSIONED, NULL},
	{"ducklake_sort_info", REBASE_VERSIONED, NULL},
	{"ducklake_macro", REBASE_VERSIONED, NULL},
	{"ducklake_schema_versions", REBASE_VERSIONED, NULL},
	{"ducklake_file_column_stats", REBASE_FILE, NULL},
	{"ducklake_file_variant_stats", REBASE_FILE, NULL},
	{"ducklake_file_partition_value", REBASE_FILE, NULL},
	{"ducklake_files_scheduled_for_deletion", REBASE_FILE, NULL},
	{"ducklake_partition_column", REBASE_CHILD, "partition_id"},
	{"ducklake_column_mapping", REBASE_CHILD, "mapping_id"},
	{"ducklake_name_mapping", REBASE_CHILD, "mapping_id"},
	{"ducklake_macro_impl", REBASE_CHILD, "macro_id"},
	{"ducklake_macro_parameters", REBASE_CHILD, "macro_id"},
	{"ducklake_sort_expression", REBASE_CHILD, "sort_id"},
	{"ducklake_table_stats", REBASE_STATS, NULL},
	{"ducklake_table_column_stats", REBASE_STATS, NULL},
	/* which inlined tables a working catalog made: not replayed (the
	 * tables themselves must be empty, see REBASE_INLINED) */
	{"ducklake_inlined_data_tables", REBASE_IGNORED, NULL},
};

fdl_rebase_kind fdl_rebase_table_kind(const char *name, const char **key)
{
	*key = NULL;
	for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++)
		if (!strcmp(TABLES[i].name, name)) {
			*key = TABLES[i].key;
			return TABLES[i].kind;
		}
	if (!strncmp(name, "ducklake_inlined_data_", 22) || !strncmp(name, "ducklake_inlined_delete_", 24))
		return REBASE_INLINED;
	return REBASE_UNKNOWN;
}

/* ---- SQL templates -------------------------------------------------------------- */

int fdl_rebase_sql(fdl_buf *out, const fdl_rebase_plan *p, const char *tmpl, const char *alias, const char *side,
		   fdl_error *err)
{
	const struct {
		const char *key;
		const char *text;
		int64_t n;
	} vars[] = {
		{"W", p->work, 0},	       {"N", p->onto, 0},	     {"A", alias, 0},
		{"S", side, 0},		       {"b", NULL, p->base},	     {"t", NULL, p->tip},
		{"dS", NULL, p->d_snapshot},   {"cb", NULL, p->catalog_from}, {"dC", NULL, p->d_catalog},
		{"fb", NULL, p->file_from},    {"dF", NULL, p->d_file},	     {"dV", NULL, p->d_version},
	};
	int rc = 0;
	for (const char *s = tmpl; *s && !rc;) {
		const char *open = strchr(s, '{'), *close = open ? strchr(open, '}') : NULL;
		size_t i = 0, n = sizeof vars / sizeof vars[0];
		for (; close && i < n; i++)
			if (strlen(vars[i].key) == (size_t)(close - open - 1) && !strncmp(open + 1, vars[i].key, strlen(vars[i].key)))
				break;
		if (!close || i == n) { /* no placeholder here: copy through the brace */
			size_t len = open ? (size_t)(open - s) + 1 : strlen(s);
			rc = fdl_buf_add(out, s, len, err);
			s += len;
			continue;
		}
		rc = fdl_buf_add(out, s, (size_t)(open - s), err);
		if (!rc && vars[i].key[0] >= 'A' && vars[i].key[0] <= 'Z')
			rc = vars[i].text ? fdl_buf_puts(out, vars[i].text, err)
					  : fdl_fail(err, FDL_ERROR, "rebase SQL: {%s} has no value", vars[i].key);
		else if (!rc)
			rc = fdl_buf_printf(out, err, "%" PRId64, vars[i].n);
		s = close + 1;
	}
	return rc;
}

int fdl_rebase_exec(fdl_duck *d, const fdl_rebase_plan *p, const char *tmpl, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_rebase_sql(&sql, p, tmpl, NULL, NULL, err);
	if (!rc)
		rc = fdl_duck_exec(d, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

int fdl_rebase_int(fdl_duck *d, const fdl_rebase_plan *p, int64_t *out, const char *tmpl, fdl_error *err)
{
	fdl_buf sql = {0};
	int rc = fdl_rebase_sql(&sql, p, tmpl, NULL, NULL, err);
	if (!rc)
		rc = fdl_duck_int(d, out, 0, sql.data, err);
	fdl_buf_free(&sql);
	return rc;
}

int fdl_rebase_add_conflict(fdl_rebase_plan *p, const char *table, const char *kind, const char *detail, fdl_error *err)
{
	if (!p->conflicts && !(p->conflicts = json_array()))
		return fdl_oom(err);
	json_t *c = json_pack("{s:s?, s:s, s:s}", "table", table, "kind", kind, "detail", detail);
	return c && json_array_append_new(p->conflicts, c) == 0 ? 0 : fdl_oom(err);
}

int fdl_rebase_conflicts_from(fdl_duck *d, fdl_rebase_plan *p, const char *tmpl, fdl_error *err)
{
	fdl_buf sql = {0};
	fdl_rows r = {0};
	int rc = fdl_rebase_sql(&sql, p, tmpl, NULL, NULL, err);
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	for (size_t i = 0; !rc && i < fdl_rows_count(&r); i++) {
		char *t = fdl_rows_str(&r, 0, i), *k = fdl_rows_str(&r, 1, i), *x = fdl_rows_str(&r, 2, i);
		rc = k && x ? fdl_rebase_add_conflict(p, t, k, x, err) : fdl_oom(err);
		duckdb_free(t);
		duckdb_free(k);
		duckdb_free(x);
	}
	fdl_rows_free(&r);
	return rc;
}

void fdl_rebase_plan_free(fdl_rebase_plan *p)
{
	json_decref(p->conflicts);
	p->conflicts = NULL;
	fdl_strlist_free(&p->replaced);
}

/* ---- the ids ----------------------------------------------------------------------- */

/* The working catalog's ids at the base, and the new catalog's at its tip:
 * what every id handed out after the base moves by. */
static int read_ids(fdl_duck *d, fdl_rebase_plan *p, fdl_error *err)
{
	static const char q[] =
		"SELECT w.next_catalog_id, w.next_file_id, w.schema_version,"
		" (SELECT max(snapshot_id) FROM {W}.ducklake_snapshot),"
		" n.snapshot_id, n.next_catalog_id, n.next_file_id, n.schema_version,"
		" (SELECT value FROM {W}.ducklake_metadata WHERE key = 'version' AND scope IS NULL LIMIT 1) IS NOT DISTINCT FROM"
		" (SELECT value FROM {N}.ducklake_metadata WHERE key = 'version' AND scope IS NULL LIMIT 1),"
		" (SELECT count(*) FROM {N}.ducklake_snapshot m WHERE m.snapshot_id = {b} AND (m.next_catalog_id <>"
		"  w.next_catalog_id OR m.next_file_id <> w.next_file_id OR m.schema_version <> w.schema_version))"
		" FROM {N}.ducklake_snapshot n LEFT JOIN {W}.ducklake_snapshot w ON w.snapshot_id = {b}"
		" ORDER BY n.snapshot_id DESC LIMIT 1";
	fdl_buf sql = {0};
	fdl_rows r = {0};
	int rc = fdl_rebase_sql(&sql, p, q, NULL, NULL, err);
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	if (rc)
		return fdl_error_prefix(err, "reading the snapshots to rebase");
	if (fdl_rows_count(&r) == 0 || fdl_rows_null(&r, 0, 0) || fdl_rows_null(&r, 3, 0))
		rc = fdl_fail(err, FDL_EINVALID,
			      "the working catalog has no snapshot %" PRId64 " (its base version's last): it was "
			      "expired there, or the catalog is not the one checked out from that version",
			      p->base);
	else if (!fdl_rows_int(&r, 8, 0))
		rc = fdl_fail(err, FDL_EINVALID, "the working catalog and the version to rebase onto are of different "
			      "DuckLake formats (ducklake_metadata 'version'); check out again instead");
	else if (fdl_rows_int(&r, 9, 0) || fdl_rows_int(&r, 4, 0) < p->base)
		rc = fdl_fail(err, FDL_EINVALID, "the version to rebase onto does not hold the working catalog's base "
			      "snapshot %" PRId64 " as it was: it does not descend from the base version",
			      p->base);
	if (!rc) {
		p->catalog_from = fdl_rows_int(&r, 0, 0);
		p->file_from = fdl_rows_int(&r, 1, 0);
		p->last = fdl_rows_int(&r, 3, 0);
		p->tip = fdl_rows_int(&r, 4, 0);
		p->d_snapshot = p->tip - p->base;
		p->d_catalog = fdl_rows_int(&r, 5, 0) - p->catalog_from;
		p->d_file = fdl_rows_int(&r, 6, 0) - p->file_from;
		p->d_version = fdl_rows_int(&r, 7, 0) - fdl_rows_int(&r, 2, 0);
	}
	fdl_rows_free(&r);
	return rc;
}

/* ---- what cannot be replayed ------------------------------------------------------- */

static int refuse_tables(fdl_duck *d, const fdl_rebase_plan *p, const char *alias, fdl_error *err)
{
	fdl_strlist names = {0};
	fdl_buf sql = {0};
	int rc = fdl_buf_puts(&sql, "SELECT table_name FROM duckdb_tables() WHERE database_name = ", err);
	if (!rc)
		rc = fdl_buf_sql_str(&sql, alias, err);
	if (!rc)
		rc = fdl_duck_strings(d, &names, sql.data, err);
	fdl_buf_free(&sql);
	for (size_t i = 0; !rc && i < names.len; i++) {
		const char *t = names.items[i], *key;
		fdl_rebase_kind k = fdl_rebase_table_kind(t, &key);
		if (k == REBASE_UNKNOWN && !strncmp(t, "ducklake_", 9))
			rc = fdl_fail(err, FDL_EINVALID, "the catalog holds the DuckLake table %s, which fdl rebase does not "
				      "know; check out again and redo the change instead", t);
		if (k != REBASE_INLINED || rc)
			continue;
		char q[512];
		int64_t n = 0;
		snprintf(q, sizeof q, "SELECT count(*) FROM %s.\"%s\"", alias, t);
		rc = fdl_duck_int(d, &n, 0, q, err);
		if (!rc && n > 0)
			rc = fdl_fail(err, FDL_EINVALID,
				      "the working catalog holds %" PRId64 " rows or deletes inline (%s); a version keeps "
				      "all data in data files: run CALL ducklake_flush_inlined_data('<catalog alias>') in "
				      "DuckDB, then rebase again",
				      n, t);
	}
	fdl_strlist_free(&names);
	(void)p;
	return rc;
}

/* Files whose rows carry snapshot ids of their own (a compaction merged
 * them) would have to be written again to move those ids; a data file is
 * never rewritten, so such a working catalog is refused. */
static int refuse_unreplayable(fdl_duck *d, const fdl_rebase_plan *p, fdl_error *err)
{
	int rc = refuse_tables(d, p, p->work, err);
	if (!rc)
		rc = refuse_tables(d, p, p->onto, err);
	int64_t s = 0;
	if (!rc)
		rc = fdl_rebase_int(d, p, &s,
				    "SELECT min(s) FROM (SELECT begin_snapshot AS s FROM {W}.ducklake_data_file WHERE"
				    " data_file_id >= {fb} AND partial_max IS NOT NULL UNION ALL SELECT snapshot_id FROM"
				    " {W}.ducklake_snapshot_changes WHERE snapshot_id > {b} AND regexp_matches(changes_made,"
				    " '(^|,)(merge_adjacent|rewrite_delete|compacted_table):'))",
				    err);
	if (!rc && s > 0)
		rc = fdl_fail(err, FDL_EINVALID,
			      "snapshot %" PRId64 " of the working catalog compacted data files (their rows carry "
			      "snapshot ids); fdl rebase never rewrites data files: commit before compacting, or check "
			      "out again and redo the change",
			      s);
	if (!rc)
		rc = fdl_rebase_int(d, p, &s,
				    "SELECT min(begin_snapshot) FROM {W}.ducklake_delete_file WHERE delete_file_id >= {fb}"
				    " AND partial_max IS NOT NULL AND (encryption_key IS NOT NULL OR format <> 'parquet')",
				    err);
	if (!rc && s > 0)
		rc = fdl_fail(err, FDL_EINVALID,
			      "snapshot %" PRId64 " of the working catalog wrote an encrypted or non-Parquet delete file, "
			      "which fdl rebase cannot write again with its snapshot ids moved; check out again and "
			      "redo the change",
			      s);
	return rc;
}

/* ---- the base's statistics and options ------------------------------------------- */

/* What the replay compares with: the base version's table statistics and
 * options, as temporary tables (empty without a base). */
static int base_tables(fdl_duck *d, const fdl_rebase_plan *p, const char *base, fdl_error *err)
{
	static const char empty[] =
		"CREATE OR REPLACE TEMP TABLE fdl_rb_bstats (table_id BIGINT, record_count BIGINT, next_row_id BIGINT,"
		" file_size_bytes BIGINT);"
		"CREATE OR REPLACE TEMP TABLE fdl_rb_bcols (table_id BIGINT, column_id BIGINT, contains_null BOOLEAN,"
		" contains_nan BOOLEAN, min_value VARCHAR, max_value VARCHAR, extra_stats VARCHAR);"
		"CREATE OR REPLACE TEMP TABLE fdl_rb_bmeta (key VARCHAR, value VARCHAR, scope VARCHAR, scope_id BIGINT);";
	static const char filled[] =
		"INSERT INTO fdl_rb_bstats SELECT table_id, record_count, next_row_id, file_size_bytes"
		" FROM {A}.ducklake_table_stats;"
		"INSERT INTO fdl_rb_bcols SELECT table_id, column_id, contains_null, contains_nan, min_value, max_value,"
		" extra_stats FROM {A}.ducklake_table_column_stats;"
		"INSERT INTO fdl_rb_bmeta SELECT key, value, scope, scope_id FROM {A}.ducklake_metadata;";
	/* row ids: a base table's rows added on each side start at the base's
	 * next_row_id; the working catalog's move past the tip's */
	static const char shift[] =
		"CREATE OR REPLACE TEMP TABLE fdl_rb_shift AS SELECT n.table_id, coalesce(b.next_row_id, 0) AS from_row,"
		" n.next_row_id - coalesce(b.next_row_id, 0) AS shift FROM {N}.ducklake_table_stats n"
		" LEFT JOIN fdl_rb_bstats b USING (table_id) WHERE n.table_id < {cb};"
		"CREATE OR REPLACE TEMP TABLE fdl_rb_tip AS SELECT snapshot_time AS t FROM {N}.ducklake_snapshot"
		" WHERE snapshot_id = {t}";
	int rc = fdl_duck_exec(d, empty, err);
	if (!rc && base) {
		fdl_buf sql = {0};
		rc = fdl_rebase_sql(&sql, p, filled, base, NULL, err);
		if (!rc)
			rc = fdl_duck_exec(d, sql.data, err);
		fdl_buf_free(&sql);
	}
	if (!rc)
		rc = fdl_rebase_exec(d, p, shift, err);
	return rc;
}

/* ---- what each side changed since the base ---------------------------------------- */

/* Per object of the base (ids below {cb}), what side {S} (alias {A}) did
 * to it after the base: dropped it, renamed it, changed its columns, its
 * partitioning or sort, its comments, added rows to it, deleted rows from
 * it, gave its name to another table or view ('taken'); and from which of
 * the base's data files it deleted rows or moved them (a new delete file,
 * or the data file no longer live there). A file is the side's own by its
 * id (at or above {fb}), not by its begin_snapshot: DuckLake writes a
 * delete file that takes over an older one's deletes with that one's
 * begin_snapshot, which may be the base's.
 *
 * A base data file leaves a side in two ways: its row ends (deleted whole,
 * ducklake_rewrite_data_files), or its row is removed outright, as
 * ducklake_merge_adjacent_files (and CHECKPOINT, which runs it) does: the
 * merged file carries the old files' rows with their snapshot ids, so the
 * old files need no end_snapshot for time travel. Both are "no longer
 * live": the base's files (live at {b}, read from the working catalog,
 * which keeps them: one that compacted is refused) missing a live row on
 * the side. A dropped table, view or schema is found the same way (live
 * in the working catalog at {b}, not live on the side), never by its
 * ended row: ducklake_expire_snapshots removes that row once no snapshot
 * left sees it, and the tip may have expired its base's snapshots. */
static const char changes_sql[] =
	"INSERT INTO fdl_rb_kind"
	" SELECT '{S}', 'drop', table_id FROM {W}.ducklake_table WHERE table_id < {cb} AND begin_snapshot <= {b}"
	"  AND (end_snapshot IS NULL OR end_snapshot > {b})"
	"  AND table_id NOT IN (SELECT table_id FROM {A}.ducklake_table WHERE end_snapshot IS NULL)"
	" UNION SELECT '{S}', 'drop', view_id FROM {W}.ducklake_view WHERE view_id < {cb} AND begin_snapshot <= {b}"
	"  AND (end_snapshot IS NULL OR end_snapshot > {b})"
	"  AND view_id NOT IN (SELECT view_id FROM {A}.ducklake_view WHERE end_snapshot IS NULL)"
	" UNION SELECT '{S}', 'drop', schema_id FROM {W}.ducklake_schema WHERE schema_id < {cb} AND begin_snapshot <= {b}"
	"  AND (end_snapshot IS NULL OR end_snapshot > {b})"
	"  AND schema_id NOT IN (SELECT schema_id FROM {A}.ducklake_schema WHERE end_snapshot IS NULL)"
	" UNION SELECT '{S}', 'rename', table_id FROM {A}.ducklake_table WHERE table_id < {cb} AND begin_snapshot > {b}"
	" UNION SELECT '{S}', 'view', view_id FROM {A}.ducklake_view WHERE view_id < {cb}"
	"  AND (begin_snapshot > {b} OR end_snapshot > {b})"
	" UNION SELECT '{S}', 'columns', table_id FROM {A}.ducklake_column WHERE table_id < {cb}"
	"  AND (begin_snapshot > {b} OR end_snapshot > {b})"
	" UNION SELECT '{S}', 'layout', table_id FROM {A}.ducklake_partition_info WHERE table_id < {cb}"
	"  AND (begin_snapshot > {b} OR end_snapshot > {b})"
	" UNION SELECT '{S}', 'layout', table_id FROM {A}.ducklake_sort_info WHERE table_id < {cb}"
	"  AND (begin_snapshot > {b} OR end_snapshot > {b})"
	" UNION SELECT '{S}', 'tags', object_id FROM {A}.ducklake_tag WHERE object_id < {cb}"
	"  AND (begin_snapshot > {b} OR end_snapshot > {b})"
	" UNION SELECT '{S}', 'tags', table_id FROM {A}.ducklake_column_tag WHERE table_id < {cb}"
	"  AND (begin_snapshot > {b} OR end_snapshot > {b})"
	" UNION SELECT '{S}', 'insert', table_id FROM {A}.ducklake_data_file WHERE table_id < {cb}"
	"  AND data_file_id >= {fb}"
	" UNION SELECT '{S}', 'delete', table_id FROM {A}.ducklake_delete_file WHERE table_id < {cb}"
	"  AND delete_file_id >= {fb}"
	" UNION SELECT '{S}', 'delete', table_id FROM fdl_rb_left"
	" UNION SELECT '{S}', 'taken', b.id FROM fdl_rb_bobj b"
	" JOIN (SELECT t.table_id AS id, s.schema_name, t.table_name AS name FROM {A}.ducklake_table t"
	"  JOIN {A}.ducklake_schema s USING (schema_id) WHERE t.end_snapshot IS NULL AND s.end_snapshot IS NULL"
	"  UNION ALL SELECT v.view_id, s.schema_name, v.view_name FROM {A}.ducklake_view v"
	"  JOIN {A}.ducklake_schema s USING (schema_id) WHERE v.end_snapshot IS NULL AND s.end_snapshot IS NULL) a"
	"  ON lower(a.schema_name) = lower(b.schema_name) AND lower(a.name) = lower(b.name) AND a.id <> b.id;"
	"INSERT INTO fdl_rb_delfile"
	" SELECT '{S}', data_file_id FROM {A}.ducklake_delete_file WHERE delete_file_id >= {fb} AND data_file_id < {fb}"
	" UNION SELECT '{S}', data_file_id FROM fdl_rb_left";

/* The base's data files no longer live on side {A} (see above). */
static const char left_sql[] =
	"CREATE OR REPLACE TEMP TABLE fdl_rb_left AS SELECT f.data_file_id, f.table_id FROM {W}.ducklake_data_file f"
	" WHERE f.data_file_id < {fb} AND f.begin_snapshot <= {b} AND (f.end_snapshot IS NULL OR f.end_snapshot > {b})"
	" AND NOT EXISTS (SELECT 1 FROM {A}.ducklake_data_file a WHERE a.data_file_id = f.data_file_id"
	" AND a.end_snapshot IS NULL)";
/* The base's tables and views by name, as the working catalog had them at
 * the base: a side that gave one's name to another object 'took' it. */
static const char bobj_sql[] =
	"CREATE OR REPLACE TEMP TABLE fdl_rb_bobj AS WITH s AS (SELECT schema_id, schema_name FROM {W}.ducklake_schema"
	"  WHERE begin_snapshot <= {b} AND (end_snapshot IS NULL OR end_snapshot > {b}))"
	" SELECT t.table_id AS id, s.schema_name, t.table_name AS name FROM {W}.ducklake_table t JOIN s USING (schema_id)"
	"  WHERE t.table_id < {cb} AND t.begin_snapshot <= {b} AND (t.end_snapshot IS NULL OR t.end_snapshot > {b})"
	" UNION ALL SELECT v.view_id, s.schema_name, v.view_name FROM {W}.ducklake_view v JOIN s USING (schema_id)"
	"  WHERE v.view_id < {cb} AND v.begin_snapshot <= {b} AND (v.end_snapshot IS NULL OR v.end_snapshot > {b})";

static int changes(fdl_duck *d, const fdl_rebase_plan *p, fdl_error *err)
{
	int rc = fdl_duck_exec(d,
			       "CREATE OR REPLACE TEMP TABLE fdl_rb_kind (side VARCHAR, kind VARCHAR, id BIGINT);"
			       "CREATE OR REPLACE TEMP TABLE fdl_rb_delfile (side VARCHAR, data_file_id BIGINT)",
			       err);
	if (!rc)
		rc = fdl_rebase_exec(d, p, bobj_sql, err);
	for (int k = 0; k < 2 && !rc; k++) {
		fdl_buf sql = {0};
		rc = fdl_rebase_sql(&sql, p, left_sql, k ? p->onto : p->work, NULL, err);
		if (!rc)
			rc = fdl_duck_exec(d, sql.data, err);
		fdl_buf_free(&sql);
		if (!rc)
			rc = fdl_rebase_sql(&sql, p, changes_sql, k ? p->onto : p->work, k ? "tip" : "work", err);
		if (!rc)
			rc = fdl_duck_exec(d, sql.data, err);
		fdl_buf_free(&sql);
	}
	return rc;
}

/* ---- the conflicts ---------------------------------------------------------------- */

/* The base's name of each object (schema.table, schema.view, schema), for
 * the messages. */
static const char names_sql[] =
	"CREATE OR REPLACE TEMP TABLE fdl_rb_name AS SELECT id, name FROM ("
	" SELECT t.table_id AS id, s.schema_name || '.' || t.table_name AS name, t.begin_snapshot AS since"
	"  FROM {W}.ducklake_table t JOIN {W}.ducklake_schema s USING (schema_id) WHERE t.begin_snapshot <= {b}"
	" UNION ALL SELECT v.view_id, s.schema_name || '.' || v.view_name, v.begin_snapshot"
	"  FROM {W}.ducklake_view v JOIN {W}.ducklake_schema s USING (schema_id) WHERE v.begin_snapshot <= {b}"
	" UNION ALL SELECT schema_id, schema_name, begin_snapshot FROM {W}.ducklake_schema WHERE begin_snapshot <= {b})"
	" QUALIFY row_number() OVER (PARTITION BY id ORDER BY since DESC) = 1";

/* DuckLake's rules, per object of the base (the first that applies):
 * dropped on one side and changed on the other; renamed on the tip, its
 * name given to another table or view there, and changed here (the change
 * belongs to the object, by id, but its statement named it by that name:
 * which of the two was meant is ambiguous, as Git finds a file renamed
 * on one side and a new file at its path); the schema (columns, name,
 * partitioning, sort) changed on both; comments changed on both; rows
 * written here into a table whose columns the tip changed; a view changed
 * on both. Appends on both sides, changes to a table the tip only renamed
 * (they follow it, as in DuckLake and Git), and changes to different
 * objects go through. */
static const char rules_sql[] =
	"WITH w AS (SELECT DISTINCT kind, id FROM fdl_rb_kind WHERE side = 'work'),"
	" t AS (SELECT DISTINCT kind, id FROM fdl_rb_kind WHERE side = 'tip'),"
	" cur AS (SELECT t.table_id AS id, s.schema_name || '.' || t.table_name AS name FROM {N}.ducklake_table t"
	"  JOIN {N}.ducklake_schema s USING (schema_id) WHERE t.end_snapshot IS NULL AND s.end_snapshot IS NULL"
	"  UNION ALL SELECT v.view_id, s.schema_name || '.' || v.view_name FROM {N}.ducklake_view v"
	"  JOIN {N}.ducklake_schema s USING (schema_id) WHERE v.end_snapshot IS NULL AND s.end_snapshot IS NULL),"
	" hit AS ("
	"  SELECT w.id, 1 AS rank, 'dropped' AS kind, 'dropped on the tip, changed here' AS detail"
	"   FROM w JOIN t USING (id) WHERE t.kind = 'drop'"
	"  UNION ALL SELECT w.id, 2, 'dropped', 'dropped here, changed on the tip'"
	"   FROM w JOIN t USING (id) WHERE w.kind = 'drop'"
	"  UNION ALL SELECT w.id, 3, 'renamed', 'changed here; the tip renamed it to ' || coalesce(cur.name, '?')"
	"   || ' and gave its name to another table or view' FROM w JOIN t USING (id) LEFT JOIN cur USING (id)"
	"   WHERE t.kind = 'taken'"
	"  UNION ALL SELECT w.id, 4, 'schema', 'its schema changed here and on the tip'"
	"   FROM w JOIN t USING (id) WHERE w.kind IN ('rename', 'columns', 'layout')"
	"   AND t.kind IN ('rename', 'columns', 'layout')"
	"  UNION ALL SELECT w.id, 5, 'comment', 'comments on it changed here and on the tip'"
	"   FROM w JOIN t USING (id) WHERE w.kind = 'tags' AND t.kind = 'tags'"
	"  UNION ALL SELECT w.id, 6, 'columns', 'rows written here, with the columns the tip has since changed'"
	"   FROM w JOIN t USING (id) WHERE w.kind IN ('insert', 'delete') AND t.kind = 'columns'"
	"  UNION ALL SELECT w.id, 7, 'view', 'the view changed here and on the tip'"
	"   FROM w JOIN t USING (id) WHERE w.kind = 'view' AND t.kind = 'view')"
	" SELECT coalesce(n.name, CAST(hit.id AS VARCHAR)), hit.kind, hit.detail FROM hit"
	" LEFT JOIN fdl_rb_name n USING (id)"
	" QUALIFY row_number() OVER (PARTITION BY hit.id ORDER BY rank) = 1 ORDER BY 1";

/* A delete in a data file the tip also deleted from, rewrote or compacted
 * (DuckLake refuses a delete from a file a concurrent transaction
 * compacted: the rows are elsewhere now). */
static const char files_sql[] =
	"SELECT DISTINCT coalesce(n.name, CAST(f.table_id AS VARCHAR)), 'delete',"
	" 'rows deleted here from ' || f.path || ', which the tip also deleted from, rewrote or compacted'"
	" FROM fdl_rb_delfile w JOIN fdl_rb_delfile t USING (data_file_id)"
	" JOIN {W}.ducklake_data_file f USING (data_file_id) LEFT JOIN fdl_rb_name n ON n.id = f.table_id"
	" WHERE w.side = 'work' AND t.side = 'tip' ORDER BY 1, 3";

/* An option (ducklake_metadata) set here to another value than the tip
 * set it to. */
static const char options_sql[] =
	"SELECT DISTINCT NULL, 'option', 'option ' || w.key || ' set here to ' || w.value || ' and on the tip to '"
	" || n.value FROM {W}.ducklake_metadata w JOIN {N}.ducklake_metadata n ON n.key = w.key"
	" AND n.scope IS NOT DISTINCT FROM w.scope AND n.scope_id IS NOT DISTINCT FROM w.scope_id"
	" LEFT JOIN fdl_rb_bmeta b ON b.key = w.key AND b.scope IS NOT DISTINCT FROM w.scope"
	" AND b.scope_id IS NOT DISTINCT FROM w.scope_id"
	" WHERE w.key <> 'data_path' AND (w.scope_id IS NULL OR w.scope_id < {cb})"
	" AND w.value IS DISTINCT FROM b.value AND n.value IS DISTINCT FROM b.value AND n.value <> w.value";

static int conflicts(fdl_duck *d, fdl_rebase_plan *p, fdl_error *err)
{
	int rc = fdl_rebase_exec(d, p, names_sql, err);
	if (!rc)
		rc = fdl_rebase_conflicts_from(d, p, rules_sql, err);
	if (!rc)
		rc = fdl_rebase_conflicts_from(d, p, files_sql, err);
	if (!rc)
		rc = fdl_rebase_conflicts_from(d, p, options_sql, err);
	return rc;
}

/* Rows the working catalog updated keep their row ids inside the new data
 * file. When it updated rows it had added itself, and the tip added rows to
 * the same table, those ids would have to move with the file's other rows:
 * a conflict, since a data file is never written again. The candidates are
 * few (the files of a snapshot that both added and deleted rows); each
 * file's footer says the largest row id it carries. */
static int row_ids(fdl_duck *d, fdl_rebase_plan *p, fdl_error *err)
{
	static const char q[] =
		"SELECT s.path, s.path_is_relative, t.path, t.path_is_relative, f.path, f.path_is_relative,"
		" x.from_row, coalesce(n.name, CAST(f.table_id AS VARCHAR))"
		" FROM {W}.ducklake_data_file f JOIN fdl_rb_shift x USING (table_id)"
		" JOIN {W}.ducklake_snapshot_changes c ON c.snapshot_id = f.begin_snapshot"
		" JOIN (SELECT * FROM {W}.ducklake_table QUALIFY row_number() OVER (PARTITION BY table_id"
		"  ORDER BY begin_snapshot DESC) = 1) t USING (table_id)"
		" JOIN (SELECT * FROM {W}.ducklake_schema QUALIFY row_number() OVER (PARTITION BY schema_id"
		"  ORDER BY begin_snapshot DESC) = 1) s ON s.schema_id = t.schema_id"
		" LEFT JOIN fdl_rb_name n ON n.id = f.table_id"
		" WHERE f.data_file_id >= {fb} AND x.shift <> 0"
		" AND regexp_matches(c.changes_made, '(^|,)deleted_from_table:' || f.table_id || '(,|$)')";
	fdl_buf sql = {0};
	fdl_rows r = {0};
	int rc = fdl_rebase_sql(&sql, p, q, NULL, NULL, err);
	rc = fdl_duck_query_built(d, &r, &sql, rc, err);
	for (size_t i = 0; !rc && i < fdl_rows_count(&r); i++) {
		char *rel = NULL, *name = fdl_rows_str(&r, 7, i);
		int64_t top = -1;
		rc = fdl_catalog_resolve_path(&rel, &r, i, 0, "a data file of the working catalog", err);
		if (!rc) {
			rc = fdl_buf_puts(&sql, "SELECT max(TRY_CAST(stats_max AS BIGINT)) FROM parquet_metadata(", err);
			char *full = fdl_asprintf("%s%s", p->data_path, rel);
			rc = rc ? rc : full ? fdl_buf_sql_str(&sql, full, err) : fdl_oom(err);
			free(full);
		}
		if (!rc)
			rc = fdl_buf_puts(&sql, ") WHERE path_in_schema = '_ducklake_internal_row_id'", err);
		if (!rc)
			rc = fdl_duck_int(d, &top, -1, sql.data, err);
		if (!rc && top >= fdl_rows_int(&r, 6, i))
			rc = fdl_rebase_add_conflict(p, name, "row_ids",
						 "rows added here were updated here, and the tip added rows to the table: "
						 "their row ids, kept in the updated rows' data file, would be taken twice",
						 err);
		fdl_buf_free(&sql);
		free(rel);
		duckdb_free(name);
	}
	fdl_rows_free(&r);
	return rc;
}

int fdl_catalog_rebase_plan(fdl_rebase_plan *p, fdl_duck *d, const char *base_alias, fdl_error *err)
{
	if (!p->conflicts && !(p->conflicts = json_array()))
		return fdl_oom(err);
	int rc = read_ids(d, p, err);
	if (!rc)
		rc = refuse_unreplayable(d, p, err);
	if (!rc)
		rc = base_tables(d, p, base_alias, err);
	if (!rc)
		rc = changes(d, p, err);
	if (!rc)
		rc = conflicts(d, p, err);
	if (!rc)
		rc = row_ids(d, p, err);
	return rc;
}
