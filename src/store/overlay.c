/*
 * The overlay store: reads answered from a local folder of copies the
 * caller already checked (laid out by key), then from the store below it;
 * everything else goes to the store below. fdl clone reads its copy
 * through one, so that what it wrote is not fetched back from a bucket.
 * A read that asks for an etag (a compare-and-swap) always goes below.
 */
#include "store.h"

#include <stdlib.h>

typedef struct overlay_store {
	fdl_store base;
	fdl_store_ops ops; /* overlay_ops with the capabilities of the store below */
	fdl_store *local; /* a folder store over the copies */
	fdl_store *below; /* borrowed */
} overlay_store;

static overlay_store *ov(fdl_store *s)
{
	return (overlay_store *)s;
}

/* Each read asks the local copies first; only their "not here" goes below
 * (which then sets err anew). */
static int ov_get(fdl_store *s, const char *key, size_t max_bytes, fdl_buf *out, char etag[FDL_ETAG_MAX],
		  fdl_error *err)
{
	int rc = etag ? FDL_ENOTFOUND : fdl_store_get(ov(s)->local, key, max_bytes, out, NULL, err);
	return rc == FDL_ENOTFOUND ? fdl_store_get(ov(s)->below, key, max_bytes, out, etag, err) : rc;
}

static int ov_get_file(fdl_store *s, const char *key, const char *local_path, fdl_error *err)
{
	int rc = fdl_store_get_file(ov(s)->local, key, local_path, err);
	return rc == FDL_ENOTFOUND ? fdl_store_get_file(ov(s)->below, key, local_path, err) : rc;
}

static int ov_sha256(fdl_store *s, const char *key, char hex[65], int64_t *bytes, fdl_error *err)
{
	int rc = fdl_store_sha256(ov(s)->local, key, hex, bytes, err);
	return rc == FDL_ENOTFOUND ? fdl_store_sha256(ov(s)->below, key, hex, bytes, err) : rc;
}

static int ov_head(fdl_store *s, const char *key, int64_t *bytes, fdl_error *err)
{
	int rc = fdl_store_head(ov(s)->local, key, bytes, err);
	return rc == FDL_ENOTFOUND ? fdl_store_head(ov(s)->below, key, bytes, err) : rc;
}

static int ov_modified(fdl_store *s, const char *key, int64_t *when, fdl_error *err)
{
	return fdl_store_modified(ov(s)->below, key, when, err);
}

static int ov_put_if_absent(fdl_store *s, const char *key, const void *data, size_t len, fdl_error *err)
{
	return fdl_store_put_if_absent(ov(s)->below, key, data, len, err);
}

static int ov_put_file_if_absent(fdl_store *s, const char *key, const char *local_path, fdl_error *err)
{
	return fdl_store_put_file_if_absent(ov(s)->below, key, local_path, err);
}

static int ov_put_if_match(fdl_store *s, const char *key, const void *data, size_t len, const char *etag,
			   fdl_error *err)
{
	return fdl_store_put_if_match(ov(s)->below, key, data, len, etag, err);
}

static int ov_list(fdl_store *s, const char *prefix, fdl_strlist *out, fdl_strlist *others, fdl_error *err)
{
	return fdl_store_list_all(ov(s)->below, prefix, out, others, err);
}

static int ov_del(fdl_store *s, const char *key, fdl_error *err)
{
	return fdl_store_del(ov(s)->below, key, err);
}

static int ov_del_if_match(fdl_store *s, const char *key, const char *etag, fdl_error *err)
{
	return fdl_store_del_if_match(ov(s)->below, key, etag, err);
}

static int ov_lock_check(fdl_store *s, const char *key, fdl_error *err)
{
	return fdl_store_lock_check(ov(s)->below, key, err);
}

static char *ov_local_path(fdl_store *s, const char *key)
{
	return fdl_store_local_path(ov(s)->below, key);
}

static void ov_s3_access(fdl_store *s, fdl_s3_access *out)
{
	fdl_store_s3_access(ov(s)->below, out);
}

static void ov_free(fdl_store *s)
{
	fdl_store_free(ov(s)->local);
	free(s->url);
	free(s);
}

static const fdl_store_ops overlay_ops = {
	.name = "overlay",
	.get = ov_get,
	.get_file = ov_get_file,
	.sha256 = ov_sha256,
	.head = ov_head,
	.modified = ov_modified,
	.put_if_absent = ov_put_if_absent,
	.put_file_if_absent = ov_put_file_if_absent,
	.put_if_match = ov_put_if_match,
	.list = ov_list,
	.del = ov_del,
	.del_if_match = ov_del_if_match,
	.lock_check = ov_lock_check,
	.local_path = ov_local_path,
	.s3_access = ov_s3_access,
	.free = ov_free,
};

int fdl_store_overlay_open(fdl_store **out, fdl_store *below, const char *dir, fdl_error *err)
{
	overlay_store *o = calloc(1, sizeof *o);
	if (!o)
		return fdl_oom(err);
	o->ops = overlay_ops;
	o->ops.caps = below->ops->caps;
	o->base.ops = &o->ops;
	o->below = below;
	o->base.url = fdl_strdup(below->url);
	int rc = o->base.url ? fdl_store_folder_open(&o->local, dir, err) : fdl_oom(err);
	if (rc) {
		free(o->base.url);
		free(o);
		return rc;
	}
	*out = &o->base;
	return 0;
}
