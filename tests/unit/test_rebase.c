/* fdl rebase's pieces below the operation: the SQL templates of the plan
 * and the replay, which DuckLake tables a replay knows, and the folder swap
 * (files linked, never copied; two folders exchanged in one step). */
#include "test.h"
#include "../../src/catalog/rebase.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void templates_expand(t_ctx *t)
{
	fdl_rebase_plan p = {.work = "fdl_old", .onto = "fdl_new", .base = 7, .tip = 12, .d_snapshot = 5,
			     .catalog_from = 3, .d_catalog = 2, .file_from = 9, .d_file = 4, .d_version = 1};
	fdl_buf b = {0};
	fdl_error err = {0};
	CHECK(t, fdl_rebase_sql(&b, &p, "{W}.x {N}.y {A} {S} {b} {t} {dS} {cb} {dC} {fb} {dF} {dV}", "al", "work",
				&err) == 0);
	CHECK(t, b.data && !strcmp(b.data, "fdl_old.x fdl_new.y al work 7 12 5 3 2 9 4 1"));
	fdl_buf_free(&b);
	/* braces that are no placeholder pass through (DuckDB's struct literals) */
	CHECK(t, fdl_rebase_sql(&b, &p, "FIELD_IDS {pos: 1} {x} {", NULL, NULL, &err) == 0);
	CHECK(t, b.data && !strcmp(b.data, "FIELD_IDS {pos: 1} {x} {"));
	fdl_buf_free(&b);
	/* an alias the template needs and was not given is an error, not "(null)" */
	CHECK(t, fdl_rebase_sql(&b, &p, "{A}", NULL, NULL, &err) == FDL_ERROR);
	fdl_buf_free(&b);
}

static void tables_known(t_ctx *t)
{
	const char *key = NULL;
	CHECK(t, fdl_rebase_table_kind("ducklake_data_file", &key) == REBASE_VERSIONED && key &&
		     !strcmp(key, "data_file_id"));
	CHECK(t, fdl_rebase_table_kind("ducklake_column", &key) == REBASE_VERSIONED && !key);
	CHECK(t, fdl_rebase_table_kind("ducklake_name_mapping", &key) == REBASE_CHILD && !strcmp(key, "mapping_id"));
	CHECK(t, fdl_rebase_table_kind("ducklake_inlined_data_4_2", &key) == REBASE_INLINED);
	CHECK(t, fdl_rebase_table_kind("ducklake_inlined_delete_4", &key) == REBASE_INLINED);
	CHECK(t, fdl_rebase_table_kind("ducklake_inlined_data_tables", &key) == REBASE_IGNORED);
	CHECK(t, fdl_rebase_table_kind("ducklake_something_new", &key) == REBASE_UNKNOWN);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static ino_t inode(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? st.st_ino : 0;
}

static void folders_linked_and_swapped(t_ctx *t)
{
	char *dir = t_tempdir();
	char *a = fdl_asprintf("%s/a", dir), *b = fdl_asprintf("%s/b", dir), *p = NULL, *q = NULL;
	fdl_error err = {0};
	mkdir(a, 0755);
	mkdir(b, 0755);
	p = fdl_asprintf("%s/keep.yml", a);
	write_file(p, "kept");
	free(p);
	p = fdl_asprintf("%s/skip.sqlite", a);
	write_file(p, "left out");
	free(p);
	p = fdl_asprintf("%s/sub", a);
	mkdir(p, 0755);
	free(p);
	p = fdl_asprintf("%s/sub/deep.sql", a);
	write_file(p, "deep");
	free(p);
	p = fdl_asprintf("%s/link", a);
	CHECK(t, symlink("keep.yml", p) == 0);
	free(p);
	const char *skip[] = {"skip.sqlite", NULL};
	CHECK(t, fdl_dir_link_tree(a, b, skip, &err) == 0);
	p = fdl_asprintf("%s/keep.yml", a), q = fdl_asprintf("%s/keep.yml", b);
	CHECK(t, inode(p) && inode(p) == inode(q)); /* the same file, not a copy */
	free(p), free(q);
	p = fdl_asprintf("%s/sub/deep.sql", a), q = fdl_asprintf("%s/sub/deep.sql", b);
	CHECK(t, inode(p) && inode(p) == inode(q));
	free(p), free(q);
	p = fdl_asprintf("%s/skip.sqlite", b);
	CHECK(t, access(p, F_OK) != 0);
	free(p);
	char target[64] = "";
	p = fdl_asprintf("%s/link", b);
	CHECK(t, readlink(p, target, sizeof target - 1) == 8 && !strcmp(target, "keep.yml"));
	free(p);
	/* swapped in one step: each name now holds the other folder */
	p = fdl_asprintf("%s/skip.sqlite", a);
	ino_t before = inode(p);
	CHECK(t, fdl_dir_exchange(a, b, &err) == 0);
	q = fdl_asprintf("%s/skip.sqlite", b);
	CHECK(t, before && inode(q) == before && access(p, F_OK) != 0);
	free(p), free(q);
	q = fdl_asprintf("%s/nope", dir);
	CHECK(t, fdl_dir_exchange(a, q, &err) == FDL_EIO);
	CHECK_CONTAINS(t, err.message, "RENAME_EXCHANGE");
	free(q);
	fdl_rm_rf(dir);
	free(dir);
	free(a);
	free(b);
}

const t_case rebase_tests[] = {
	{"rebase: SQL templates expand the plan's aliases and numbers", templates_expand},
	{"rebase: every DuckLake table has its kind, unknown ones none", tables_known},
	{"rebase: a folder's files linked into another, then the two swapped", folders_linked_and_swapped},
	{NULL, NULL},
};
