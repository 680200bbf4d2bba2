/* A lock held across several steps of one command (the layout's lock on
 * creating refs and expiring versions): on a store with local files, Git's
 * lockfile (util/lockfile.c); on a bucket, an object created only if absent
 * that holds the same holder record and is deleted on release. */
#include "store.h"

#include <stdlib.h>
#include <string.h>

/* One look at the lock object another holder left: *held when it stays
 * (*held_by its record); else it is gone now (it was released, or it
 * recorded this host and a process that no longer runs, and is deleted). */
static int look(bool *held, fdl_store *s, const char *key, fdl_buf *held_by, fdl_error *err)
{
	char etag[FDL_ETAG_MAX];
	*held = false;
	fdl_buf_free(held_by);
	int rc = fdl_store_get(s, key, 4096, held_by, etag, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		return 0;
	}
	if (rc)
		return rc;
	if (fdl_buf_add(held_by, "", 1, err))
		return FDL_ENOMEM;
	if ((*held = !fdl_lock_record_dead(held_by->data)))
		return 0;
	rc = fdl_store_del_if_match(s, key, etag, err);
	if (rc == FDL_ECONFLICT || rc == FDL_ENOTFOUND) { /* another breaker, or its holder, was first */
		fdl_error_clear(err);
		rc = 0;
	}
	return rc;
}

static int take_object(fdl_store_lock *l, fdl_store *s, const char *key, const char *what, const char *command,
		       fdl_error *err)
{
	char rec[FDL_LOCK_RECORD_MAX];
	size_t len = fdl_lock_record(rec, command);
	long deadline = fdl_now_ms() + fdl_lock_wait_ms();
	fdl_buf held_by = {0};
	int rc;
	for (long pause = 1;;) {
		rc = fdl_store_put_if_absent(s, key, rec, len, err);
		if (rc != FDL_EEXISTS)
			break;
		fdl_error_clear(err);
		bool held = false;
		if ((rc = look(&held, s, key, &held_by, err)))
			break;
		if (!held)
			continue;
		if (fdl_now_ms() >= deadline) {
			char *where = fdl_asprintf("%s/%s", s->url, key);
			rc = fdl_lock_record_report(held_by.data, where ? where : key, what, err);
			free(where);
			break;
		}
		fdl_sleep_ms(pause);
		pause = pause < 50 ? pause * 2 : 50;
	}
	fdl_buf_free(&held_by);
	if (!rc) {
		l->store = s;
		rc = (l->key = fdl_strdup(key)) ? 0 : fdl_oom(err);
	}
	return rc;
}

int fdl_store_lock_take(fdl_store_lock *l, fdl_store *s, const char *key, const char *what, const char *command,
			fdl_error *err)
{
	memset(l, 0, sizeof *l);
	l->file.fd = -1;
	if (fdl_path_check_relative(key, "lock key", err))
		return FDL_EINVALID;
	char *path = fdl_store_local_path(s, key);
	if (path) {
		int rc = fdl_lockfile_take(&l->file, path, what, command, err);
		free(path);
		return rc;
	}
	if (!fdl_store_can(s, FDL_STORE_WRITE))
		return fdl_fail(err, FDL_EINVALID, "%s: a %s store is read only", s->url, s->ops->name);
	return take_object(l, s, key, what, command, err);
}

void fdl_store_lock_release(fdl_store_lock *l)
{
	fdl_lockfile_release(&l->file);
	if (l->key) {
		fdl_error ignore;
		fdl_store_del(l->store, l->key, &ignore);
	}
	free(l->key);
	memset(l, 0, sizeof *l);
	l->file.fd = -1;
}
