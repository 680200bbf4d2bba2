/* The working catalogs a repository knows (fdl's own, docs/format.md):
 * work/<id>.json, the record a checkout writes and every command on it
 * refreshes, and work/<id>/, the folder its DuckDB writes new data files
 * to until a commit publishes them. gc keeps both while the record's lease
 * runs. */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

char *fdl_workrec_key(const char *id)
{
	return fdl_asprintf("%s/%s.json", FDL_WORK_AREA, id);
}

char *fdl_workrec_staging(const char *id)
{
	return fdl_asprintf("%s/%s", FDL_WORK_AREA, id);
}

static int dump_put(fdl_repo *repo, const char *key, const json_t *doc, const char *etag, bool create,
		    fdl_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = fdl_json_dump(&text, &len, doc, err);
	if (!rc)
		rc = create ? fdl_store_put_if_absent(repo->store, key, text, len, err)
			    : fdl_store_put_if_match(repo->store, key, text, len, etag, err);
	free(text);
	return rc;
}

int fdl_workrec_create(fdl_repo *repo, const char *id, const json_t *rec, fdl_error *err)
{
	char *key = fdl_workrec_key(id);
	int rc = key ? dump_put(repo, key, rec, NULL, true, err) : fdl_oom(err);
	free(key);
	return rc;
}

int fdl_workrec_read(fdl_workrec_seen *out, fdl_repo *repo, const char *id, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	char *key = fdl_workrec_key(id);
	fdl_buf b = {0};
	int rc = key ? fdl_store_get(repo->store, key, 1 << 20, &b, out->etag, err) : fdl_oom(err);
	if (rc == FDL_ENOTFOUND)
		fdl_fail(err, rc, "%s/%s is gone: this working catalog was abandoned (fdl checkout --abandon) or its "
			 "lease ended (fdl gc); check out again",
			 repo->root, key);
	if (!rc)
		rc = fdl_json_parse(&out->doc, b.data, b.len, key, err);
	if (!rc && !json_is_object(out->doc))
		rc = fdl_fail(err, FDL_EINVALID, "%s/%s: expected a JSON object", repo->root, key);
	if (rc)
		fdl_workrec_seen_free(out);
	fdl_buf_free(&b);
	free(key);
	return rc;
}

void fdl_workrec_seen_free(fdl_workrec_seen *s)
{
	json_decref(s->doc);
	memset(s, 0, sizeof *s);
}

/* Set `fields` and used_at on the record as read (`seen`, used up; NULL or
 * empty: read it now) and write it back by compare-and-swap; another
 * command refreshing it meanwhile makes this one read again. */
int fdl_workrec_touch(fdl_repo *repo, const char *id, const json_t *fields, fdl_workrec_seen *seen, fdl_error *err)
{
	char *key = fdl_workrec_key(id);
	fdl_workrec_seen mine = {0};
	if (seen && seen->doc) {
		mine = *seen;
		memset(seen, 0, sizeof *seen);
	}
	int rc = key ? 0 : fdl_oom(err);
	for (int attempt = 0; !rc && attempt < 5; attempt++) {
		char now[32];
		if (!mine.doc)
			rc = fdl_workrec_read(&mine, repo, id, err);
		if (!rc)
			rc = fdl_time_now_iso(now, err);
		if (!rc) {
			if (fields)
				json_object_update(mine.doc, (json_t *)fields);
			json_object_set_new(mine.doc, "used_at", json_string(now));
			rc = dump_put(repo, key, mine.doc, mine.etag, false, err);
		}
		fdl_workrec_seen_free(&mine);
		if (rc == FDL_ECONFLICT && attempt < 4) {
			fdl_error_clear(err);
			rc = 0;
			continue;
		}
		break;
	}
	fdl_workrec_seen_free(&mine);
	free(key);
	return rc;
}

int fdl_workrec_remove(fdl_repo *repo, const char *id, fdl_error *err)
{
	/* the record first: a working catalog without one is abandoned, and
	 * gc removes what is left of its folder after the grace period */
	int rc = fdl_store_del_owned(repo->store, fdl_workrec_key(id), NULL, err);
	char *dir = rc ? NULL : fdl_workrec_staging(id);
	fdl_strlist files = {0};
	if (!rc && !dir)
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_store_list(repo->store, dir, &files, err);
	for (size_t i = 0; i < files.len && !rc; i++)
		rc = fdl_store_del_owned(repo->store, fdl_strdup(files.items[i]), NULL, err);
	fdl_strlist_free(&files);
	free(dir);
	return rc;
}

int64_t fdl_workrec_lease_end(const json_t *rec)
{
	int64_t used = fdl_time_parse_iso(json_string_value(json_object_get(rec, "used_at")));
	const json_t *days = json_object_get(rec, "lease_days");
	int64_t d = json_is_integer(days) && json_integer_value(days) > 0 ? (int64_t)json_integer_value(days)
									   : FDL_WORK_LEASE_DAYS;
	return used < 0 ? -1 : used + d * 86400;
}

static fdl_workrec *find_or_add(fdl_workrecs *w, const char *id, fdl_error *err)
{
	for (size_t i = 0; i < w->len; i++)
		if (!strcmp(w->items[i].id, id))
			return &w->items[i];
	fdl_workrec *grown = realloc(w->items, (w->len + 1) * sizeof *grown);
	if (!grown) {
		fdl_oom(err);
		return NULL;
	}
	w->items = grown;
	fdl_workrec *r = &w->items[w->len++];
	memset(r, 0, sizeof *r);
	memcpy(r->id, id, FDL_ID_LEN + 1);
	r->lease_end = -1;
	return r;
}

static int read_record(fdl_repo *repo, fdl_workrec *r, fdl_error *err)
{
	char *key = fdl_workrec_key(r->id);
	fdl_buf b = {0};
	fdl_error e;
	int rc = key ? fdl_store_get(repo->store, key, 1 << 20, &b, NULL, &e) : fdl_oom(err);
	if (!rc && !(r->doc = json_loadb(b.data, b.len, 0, NULL)))
		r->problem = fdl_asprintf("%s is not JSON", key);
	else if (!rc && !json_is_object(r->doc))
		r->problem = fdl_asprintf("%s is not a JSON object", key);
	else if (rc == FDL_ENOTFOUND) { /* removed since the listing */
		r->has_record = false;
		rc = 0;
	}
	else if (rc && key)
		rc = fdl_fail(err, e.code, "%s", e.message);
	if (!rc && r->doc && !r->problem)
		r->lease_end = fdl_workrec_lease_end(r->doc);
	fdl_buf_free(&b);
	free(key);
	return rc;
}

int fdl_workrecs_list(fdl_workrecs *out, fdl_repo *repo, fdl_error *err)
{
	memset(out, 0, sizeof *out);
	fdl_strlist keys = {0};
	int rc = fdl_store_list(repo->store, FDL_WORK_AREA, &keys, err);
	fdl_strlist_sort(&keys);
	size_t area = strlen(FDL_WORK_AREA) + 1;
	for (size_t i = 0; i < keys.len && !rc; i++) {
		const char *rel = keys.items[i] + area;
		char id[FDL_ID_LEN + 1];
		snprintf(id, sizeof id, "%.*s", FDL_ID_LEN, rel);
		bool record = fdl_id_is_valid(id) && !strcmp(rel + FDL_ID_LEN, ".json");
		bool staged = fdl_id_is_valid(id) && rel[FDL_ID_LEN] == '/';
		fdl_workrec *r = record || staged ? find_or_add(out, id, err) : NULL;
		if ((record || staged) && !r)
			rc = FDL_ENOMEM;
		else if (record)
			r->has_record = true;
		else if (staged)
			rc = fdl_strlist_add(&r->staged, keys.items[i], err);
		else
			rc = fdl_strlist_add(&out->strays, keys.items[i], err);
	}
	for (size_t i = 0; i < out->len && !rc; i++)
		if (out->items[i].has_record)
			rc = read_record(repo, &out->items[i], err);
	fdl_strlist_free(&keys);
	if (rc)
		fdl_workrecs_free(out);
	return rc;
}

void fdl_workrecs_free(fdl_workrecs *w)
{
	for (size_t i = 0; i < w->len; i++) {
		json_decref(w->items[i].doc);
		free(w->items[i].problem);
		fdl_strlist_free(&w->items[i].staged);
	}
	free(w->items);
	fdl_strlist_free(&w->strays);
	memset(w, 0, sizeof *w);
}
