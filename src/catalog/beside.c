/* One statement run beside the caller's own (duck.h: fdl_duck_beside_start):
 * on a second connection to the caller's database, on a thread of its own
 * (the pool's side shape). DuckDB runs a statement on the thread that asks
 * for it, so two connections are two cores: the incremental freeze sums up
 * the base and copies it while it reads the working catalog. */
#include "duck.h"
#include "../util/pool.h"

#include <stdlib.h>
#include <string.h>

struct fdl_duck_beside {
	fdl_duck *con; /* the second connection (fdl_duck_new_sharing) */
	char *sql;
	fdl_rows rows;
	int rc;
	fdl_error err;
	fdl_pool_side *side; /* NULL: it ran in the caller's thread */
};

static void beside_run(void *arg)
{
	fdl_duck_beside *b = arg;
	b->rc = fdl_duck_query(b->con, &b->rows, b->sql, &b->err);
}

int fdl_duck_beside_start(fdl_duck_beside **out, fdl_duck *d, const char *sql, fdl_error *err)
{
	fdl_duck_beside *b = calloc(1, sizeof *b);
	*out = NULL;
	if (!b || !(b->sql = fdl_strdup(sql))) {
		free(b);
		return fdl_oom(err);
	}
	int rc = fdl_duck_new_sharing(&b->con, d, err);
	if (rc) {
		free(b->sql);
		free(b);
		return rc;
	}
	if (!(b->side = fdl_pool_side_start(beside_run, b)))
		beside_run(b); /* no thread: the statement runs now, in order */
	*out = b;
	return 0;
}

int fdl_duck_beside_join(fdl_duck_beside *b, fdl_rows *rows, fdl_error *err)
{
	if (rows)
		memset(rows, 0, sizeof *rows);
	if (!b)
		return 0;
	fdl_pool_side_join(b->side);
	int rc = b->rc;
	if (rc && err)
		*err = b->err;
	if (!rc && rows)
		*rows = b->rows; /* the result outlives its connection */
	else
		fdl_rows_free(&b->rows);
	fdl_duck_free(b->con);
	free(b->sql);
	free(b);
	return rc;
}
