/* SQLite itself (libsqlite3, loaded on first use: ../util/dynlib.h), for
 * the one statement DuckDB's sqlite extension cannot run: the trigger of a
 * working catalog that keeps DuckLake from deleting a published data file
 * (stage.c says why). Run only on a catalog file no DuckDB of this process
 * has open: two copies of SQLite in one process must not hold one file. */
#include "duck.h"
#include "../util/dynlib.h"

#include <sqlite3.h>
#include <string.h>

/* Every SQLite function libfdl calls, once (../util/dynlib.h says how the
 * list is read); they are called through api.f, without forwards. */
#define SQLITE3_FUNCTIONS(F, V, H) \
	H(int, open_v2, (const char *, sqlite3 **, int, const char *)) \
	H(int, exec, (sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **)) \
	H(int, close, (sqlite3 *)) \
	H(const char *, errmsg, (sqlite3 *)) \
	H(int, busy_timeout, (sqlite3 *, int)) \
	H(void, free, (void *))

#define FDL_DYN_SYMBOL(name) "sqlite3_" #name

static const char *const names[] = {SQLITE3_FUNCTIONS(FDL_DYN_NAME_F, FDL_DYN_NAME_V, FDL_DYN_NAME_H)};

static union {
	void *slot[sizeof names / sizeof *names];
	struct {
		SQLITE3_FUNCTIONS(FDL_DYN_SLOT_F, FDL_DYN_SLOT_V, FDL_DYN_SLOT_H)
	} f;
} api;
_Static_assert(sizeof api.slot == sizeof api.f, "one slot per function");

static fdl_dynlib lib = FDL_DYNLIB("libsqlite3.so.0", "libsqlite3-0", names, api.slot);

static int count_row(void *payload, int n, char **values, char **cols)
{
	(void)n;
	(void)values;
	(void)cols;
	++*(int *)payload;
	return 0;
}

int fdl_catalog_sqlite_exec_once(const char *path, const char *probe, const char *sql, fdl_error *err)
{
	int rc = fdl_dynlib_load(&lib, err);
	if (rc)
		return rc;
	sqlite3 *db = NULL;
	char *msg = NULL;
	int found = 0;
	int s = api.f.open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
	if (s == SQLITE_OK)
		s = api.f.busy_timeout(db, 5000);
	if (s == SQLITE_OK && probe)
		s = api.f.exec(db, probe, count_row, &found, &msg);
	if (s == SQLITE_OK && !found)
		s = api.f.exec(db, sql, NULL, NULL, &msg);
	if (s != SQLITE_OK)
		rc = fdl_fail(err, FDL_EIO, "SQLite, on %s: %s", path, msg ? msg : db ? api.f.errmsg(db) : "cannot open");
	if (msg)
		api.f.free(msg);
	if (db)
		api.f.close(db);
	return rc;
}
