/* The working folder's copy of its base version's sha256 map (FDL_WORK_HASHES):
 * what files.json's sha256 map holds, as the commit that published the
 * version left it, so the next commit carries each file's hash over
 * without parsing the whole files.json (2.4 MB at 10,000 files, most of
 * a commit's time there). A cache, like Git's index: it names the
 * files.json it copies by that file's sha256 (which the base's
 * version.json records) and its own lines by theirs; any mismatch, or no
 * such regular file, and the commit reads files.json as before.
 *
 *   fdl-hashes 1 <files.json sha256> <sha256 of the lines below>
 *   <64 hex digits> <path>
 *   ...
 */
#include "work.h"

#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <stdlib.h>
#include <string.h>

#define HEADER "fdl-hashes 1 "
#define HEADER_LEN (sizeof HEADER - 1 + 64 + 1 + 64 + 1)

static char *hashes_path(const fdl_work *w)
{
	return w->postgres ? NULL : fdl_asprintf("%s/" FDL_WORK_HASHES, w->dir);
}

/* The lines of a body into map; false at the first malformed one (a key
 * jansson refuses, which a files.json could not hold, included). */
static bool body_lines(json_t *map, char *p, char *end, bool *oom)
{
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl || nl - p < 66 || p[64] != ' ' || strspn(p, "0123456789abcdef") != 64)
			return false;
		*nl = '\0';
		json_t *hex = json_stringn(p, 64);
		*oom = !hex;
		if (!hex || json_object_set_new(map, p + 65, hex))
			return false;
		p = nl + 1;
	}
	return true;
}

/* The file, opened with no symlink followed (and without waiting on a
 * FIFO), read whole up to max_bytes: 0 and why[0] NUL when read. */
static int read_file(fdl_buf *b, const fdl_work *w, size_t max_bytes, char why[160])
{
	fdl_error e;
	struct stat st;
	int fd = fdl_open_beneath(w->dir, FDL_WORK_HASHES, O_RDONLY | O_NONBLOCK, &e);
	if (fd < 0) {
		snprintf(why, 160, fd == FDL_ENOTFOUND ? "no %s" : "%s is not a regular file", FDL_WORK_HASHES);
		return -1;
	}
	bool regular = !fstat(fd, &st) && S_ISREG(st.st_mode);
	if (!regular || (size_t)st.st_size > max_bytes) {
		snprintf(why, 160, regular ? "%s is larger than the map it would copy" : "%s is not a regular file",
			 FDL_WORK_HASHES);
		close(fd);
		return -1;
	}
	if (fdl_fd_read(b, fd, FDL_WORK_HASHES, max_bytes, &e)) { /* which closes fd */
		snprintf(why, 160, "%s could not be read", FDL_WORK_HASHES);
		return -1;
	}
	return 0;
}

int fdl_work_hashes_parse(json_t **map, fdl_buf *b, const char *files_sha256, char why[160], fdl_error *err)
{
	char body[65];
	int rc = 0;
	*map = NULL;
	if (b->len < HEADER_LEN) {
		snprintf(why, 160, "%s is malformed", FDL_WORK_HASHES);
	} else if (memcmp(b->data, HEADER, sizeof HEADER - 1) || memcmp(b->data + sizeof HEADER - 1, files_sha256, 64) ||
		   b->data[HEADER_LEN - 66] != ' ' || b->data[HEADER_LEN - 1] != '\n') {
		snprintf(why, 160, "%s copies another " FDL_FILES_JSON, FDL_WORK_HASHES);
	} else if ((rc = fdl_sha256_mem(body, b->data + HEADER_LEN, b->len - HEADER_LEN, err)) == 0 &&
		   memcmp(b->data + HEADER_LEN - 65, body, 64)) {
		snprintf(why, 160, "%s changed since a commit wrote it", FDL_WORK_HASHES);
	} else if (!rc) {
		bool oom = false;
		json_t *m = json_object();
		if (m && body_lines(m, b->data + HEADER_LEN, b->data + b->len, &oom))
			*map = m;
		else {
			json_decref(m);
			rc = !m || oom ? fdl_oom(err) : 0;
			snprintf(why, 160, "%s is malformed", FDL_WORK_HASHES);
		}
	}
	return rc;
}

int fdl_work_hashes_read(json_t **map, const fdl_work *w, const char *files_sha256, int64_t files_bytes,
			 char why[160], fdl_error *err)
{
	*map = NULL;
	fdl_buf b = {0};
	int rc = 0;
	snprintf(why, 160, "no %s", FDL_WORK_HASHES);
	/* a line is shorter than its entry in files.json's map */
	if (!w->postgres && files_sha256 && strlen(files_sha256) == 64 && files_bytes > 0 &&
	    !read_file(&b, w, (size_t)files_bytes + HEADER_LEN, why))
		rc = fdl_work_hashes_parse(map, &b, files_sha256, why, err);
	fdl_buf_free(&b);
	return rc;
}

void fdl_work_hashes_text(fdl_buf *out, const json_t *map, const char *files_sha256)
{
	fdl_buf body = {0};
	const char *key;
	json_t *v;
	fdl_error e;
	int rc = 0;
	memset(out, 0, sizeof *out);
	json_object_foreach((json_t *)map, key, v) {
		const char *hex = json_string_value(v);
		if (!hex || strlen(hex) != 64 || strpbrk(key, "\n\r") || !*key)
			rc = -1; /* a path no line can hold: no copy */
		else
			rc = fdl_buf_printf(&body, &e, "%s %s\n", hex, key);
		if (rc)
			break;
	}
	char sum[65];
	if (!rc)
		rc = fdl_sha256_mem(sum, body.data ? body.data : "", body.len, &e);
	if (!rc)
		rc = fdl_buf_printf(out, &e, HEADER "%s %s\n", files_sha256, sum);
	if (!rc && body.len)
		rc = fdl_buf_add(out, body.data, body.len, &e);
	fdl_buf_free(&body);
	if (rc)
		fdl_buf_free(out);
}

int fdl_work_hashes_save(const fdl_work *w, const fdl_buf *text, fdl_error *err)
{
	char *path = hashes_path(w);
	if (!path)
		return w->postgres ? 0 : fdl_oom(err);
	int rc = text->len ? fdl_file_write_atomic(path, text->data, text->len, err) : 0;
	if (!text->len) /* no cache can stand for this version's: none is left */
		remove(path);
	free(path);
	return rc;
}

/* ---- fdl add's records ---- */

/* WORK/name read whole, opened with no symlink followed; *there false
 * (and nothing read) when there is no such file or w is PostgreSQL's. */
static int read_record(fdl_buf *b, bool *there, const fdl_work *w, const char *name, fdl_error *err)
{
	*there = false;
	if (w->postgres)
		return 0;
	int fd = fdl_open_beneath(w->dir, name, O_RDONLY | O_NONBLOCK, err);
	if (fd == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		return 0;
	}
	if (fd < 0)
		return fdl_error_prefix(err, "reading %s/%s", w->dir, name);
	*there = true;
	return fdl_fd_read(b, fd, name, (size_t)1 << 30, err);
}

/* fdl add's: the sha256 of each file it registered */

int fdl_work_added_read(json_t **map, const fdl_work *w, fdl_error *err)
{
	*map = NULL;
	fdl_buf b = {0};
	bool there = false;
	int rc = read_record(&b, &there, w, FDL_WORK_ADDED, err);
	if (rc || !there) {
		fdl_buf_free(&b);
		return rc;
	}
	bool oom = false;
	json_t *m = rc ? NULL : json_object();
	if (!rc && !m)
		rc = fdl_oom(err);
	if (!rc && b.len && !body_lines(m, b.data, b.data + b.len, &oom))
		rc = oom ? fdl_oom(err)
			 : fdl_fail(err, FDL_EINVALID, "%s/%s is malformed (lines \"<sha256> <path>\" expected)", w->dir,
				    FDL_WORK_ADDED);
	fdl_buf_free(&b);
	if (rc)
		json_decref(m);
	else
		*map = m;
	return rc;
}

int fdl_work_added_save(const fdl_work *w, const json_t *map, fdl_error *err)
{
	fdl_buf b = {0};
	const char *key;
	json_t *v;
	int rc = 0;
	json_object_foreach((json_t *)map, key, v) {
		if (strpbrk(key, "\n\r"))
			return fdl_fail(err, FDL_EINVALID, "a file name with a line break cannot be added: %s", key);
		if ((rc = fdl_buf_printf(&b, err, "%s %s\n", json_string_value(v), key)))
			break;
	}
	char *path = rc ? NULL : fdl_asprintf("%s/%s", w->dir, FDL_WORK_ADDED);
	if (!rc && !path)
		rc = fdl_oom(err);
	if (!rc)
		rc = fdl_file_write_atomic(path, b.data ? b.data : "", b.len, err);
	free(path);
	fdl_buf_free(&b);
	return rc;
}

/* ---- fdl add --iceberg's record: per table, the snapshot last added ---- */

int fdl_work_iceberg_read(json_t **out, const fdl_work *w, fdl_error *err)
{
	*out = NULL;
	fdl_buf b = {0};
	bool there = false;
	int rc = read_record(&b, &there, w, FDL_WORK_ICEBERG, err);
	if (rc || !there) {
		fdl_buf_free(&b);
		return rc;
	}
	json_t *j = rc ? NULL : json_loadb(b.data ? b.data : "", b.len, 0, NULL);
	fdl_buf_free(&b);
	if (!rc && !json_is_object(j))
		rc = fdl_fail(err, FDL_EINVALID, "%s/%s is malformed (a JSON object expected)", w->dir, FDL_WORK_ICEBERG);
	if (rc)
		json_decref(j);
	else
		*out = j;
	return rc;
}

int fdl_work_iceberg_save(const fdl_work *w, const json_t *record, fdl_error *err)
{
	char *text = json_dumps(record, JSON_INDENT(1) | JSON_SORT_KEYS);
	char *path = fdl_asprintf("%s/%s", w->dir, FDL_WORK_ICEBERG);
	int rc = text && path ? fdl_file_write_atomic(path, text, strlen(text), err) : fdl_oom(err);
	free(text);
	free(path);
	return rc;
}

int fdl_work_iceberg_kept(fdl_strlist *out, const fdl_work *w, fdl_error *err)
{
	json_t *rec = NULL;
	int rc = fdl_work_iceberg_read(&rec, w, err);
	const char *table;
	json_t *t;
	json_object_foreach(rec, table, t) {
		json_t *files = json_object_get(t, "files");
		for (size_t i = 0; !rc && i < json_array_size(files); i++)
			if (json_is_string(json_array_get(files, i)))
				rc = fdl_strlist_add(out, json_string_value(json_array_get(files, i)), err);
	}
	json_decref(rec);
	fdl_strlist_sort(out);
	return rc;
}
