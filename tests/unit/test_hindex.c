/* The history index's own rules (src/layout/hindex_*.c) on a folder of
 * version.json files: 16 to max(32, sqrt(n)) versions inline and one pack
 * whatever the length n, old packs removed, every version read from the index when it is
 * current; an index behind its branch, or of a branch another one forked
 * from, completed from version.json files; a seq opened through the index
 * only when that version's own version.json agrees. */
#include "test.h"
#include "../../src/layout/hindex.h"
#include "../../src/util/util.h"
#include "fdl.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>

typedef struct chain {
	char *dir;
	char root[4096];
	char ids[2400][FDL_ID_LEN + 1];
	int n;
	fdl_uuid7_gen gen;
} chain;

/* Write a fixture file plainly: these tests build histories of thousands
 * of versions, and what they check is the index, not the durability of
 * their own setup (fdl_file_write_atomic's two fsyncs a file were most of
 * their time). */
static int put_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Version seq n+1 on top of `parent` (NULL: a first version). */
static int add_version(chain *c, char out[FDL_ID_LEN + 1], const char *parent, int seq)
{
	fdl_error err;
	if (fdl_uuid7_next(&c->gen, out, &err))
		return -1;
	char dir[4400], path[4500], doc[2048];
	snprintf(dir, sizeof dir, "%s/versions/%s", c->root, out);
	snprintf(path, sizeof path, "%s/version.json", dir);
	char parents[64] = "[]";
	if (parent)
		snprintf(parents, sizeof parents, "[\"%s\"]", parent);
	int n = snprintf(doc, sizeof doc,
			 "{\"fdl\": \"0.1\", \"id\": \"%s\", \"seq\": %d, \"parents\": %s,\n"
			 " \"created_at\": \"2026-12-03T10:00:00Z\", \"author\": {\"name\": \"unit\"},\n"
			 " \"message\": \"version %d\",\n"
			 " \"catalog\": {\"path\": \"ducklake.duckdb\", \"storage\": \"duckdb-v1.5.0\", \"bytes\": 1,"
			 " \"sha256\": \"%064d\"},\n"
			 " \"dataset\": {\"path\": \"dataset.json\", \"bytes\": 1, \"sha256\": \"%064d\"},\n"
			 " \"ducklake\": {\"format\": \"1.0\", \"snapshot_id\": %d, \"snapshots\": [%d, %d]}}\n",
			 out, seq, parents, seq, 0, 0, seq, seq, seq);
	mkdir(dir, 0755);
	return put_file(path, doc, (size_t)n);
}

static int set_ref(chain *c, const char *branch, const char *id)
{
	char path[4400], line[64];
	snprintf(path, sizeof path, "%s/refs/heads/%s", c->root, branch);
	int n = snprintf(line, sizeof line, "%s\n", id);
	return put_file(path, line, (size_t)n);
}

/* n more versions on main, the ref moved to the last. */
static int grow(chain *c, int n)
{
	for (int i = 0; i < n; i++, c->n++)
		if (add_version(c, c->ids[c->n], c->n ? c->ids[c->n - 1] : NULL, c->n + 1))
			return -1;
	return set_ref(c, "main", c->ids[c->n - 1]);
}

static int setup(chain *c, t_ctx *t)
{
	memset(c, 0, sizeof *c);
	c->dir = t_tempdir();
	snprintf(c->root, sizeof c->root, "%s/repo", c->dir);
	fdl_error err;
	int rc = fdl_repo_init(c->root, NULL, &err);
	if (rc)
		fprintf(stderr, "    setting up: %s\n", err.message);
	CHECK(t, rc == 0);
	return rc;
}

static void teardown(chain *c)
{
	fdl_rm_rf(c->dir);
	free(c->dir);
}

static json_t *pointer(chain *c, const char *branch)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/history/heads/%s.json", c->root, branch);
	return json_load_file(path, 0, NULL);
}

static int pack_files(chain *c)
{
	char path[4400];
	snprintf(path, sizeof path, "%s/history/packs", c->root);
	DIR *d = opendir(path);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void bounded_shape_at_any_length(t_ctx *t)
{
	chain c;
	if (setup(&c, t))
		return teardown(&c);
	fdl_repo *repo = NULL;
	fdl_error err;
	CHECK(t, fdl_repo_open(&repo, c.root, &err) == 0);
	size_t most_tail = 0;
	for (int k = 0; repo && k < 390; k++) {
		/* past 1,024 versions (sqrt > 32), in one step: then one by one again */
		CHECK(t, grow(&c, k == 330 ? 760 : 1) == 0);
		CHECK(t, fdl_history_update(repo, "main", -1, &err) == 0);
		json_t *p = pointer(&c, "main");
		CHECK(t, p != NULL);
		size_t tail = json_array_size(json_object_get(p, "tail"));
		size_t packs = json_array_size(json_object_get(p, "packs"));
		size_t bound = 32;
		while ((bound + 1) * (bound + 1) <= (size_t)c.n)
			bound++;
		/* one pack at any length: the whole history in the pointer and one pack */
		CHECK(t, tail <= bound && packs <= 1 && (c.n < 16 || tail >= 16));
		CHECK(t, json_integer_value(json_object_get(p, "seq")) == c.n);
		CHECK(t, (int)packs == pack_files(&c)); /* the packs it replaced are gone */
		if (tail > most_tail)
			most_tail = tail;
		if (c.n == 33) /* 33 versions: the oldest 17 became the pack */
			CHECK(t, packs == 1 && tail == 16);
		json_decref(p);
	}
	CHECK(t, most_tail > 32); /* past 1,024 versions the pointer holds sqrt(n) */
	for (int whole = 0; whole < 2; whole++) { /* heads only, then whole version.json files */
		fdl_hist h;
		CHECK(t, repo && fdl_history_read(&h, repo, "main", c.ids[c.n - 1], -1, whole, &err) == 0);
		CHECK(t, h.len == (size_t)c.n && h.from_index == (size_t)c.n && h.read == 0);
		for (size_t i = 0; i < h.len; i++)
			CHECK(t, !strcmp(h.items[i].id, c.ids[c.n - 1 - (int)i]) &&
					 (h.items[i].whole || (!whole && json_is_array(h.items[i].doc))));
		fdl_hist_free(&h);
	}
	fdl_repo_free(repo);
	teardown(&c);
}

static void stale_and_forked_are_completed(t_ctx *t)
{
	chain c;
	if (setup(&c, t))
		return teardown(&c);
	fdl_repo *repo = NULL;
	fdl_error err;
	CHECK(t, grow(&c, 40) == 0);
	CHECK(t, fdl_repo_open(&repo, c.root, &err) == 0);
	/* a commit's bounded walk leaves a long history without an index to gc */
	CHECK(t, repo && fdl_history_update(repo, "main", 10, &err) == FDL_ENOCHANGE);
	CHECK_CONTAINS(t, err.message, "fdl gc");
	json_t *none = pointer(&c, "main");
	CHECK(t, none == NULL);
	json_decref(none);
	CHECK(t, repo && fdl_history_update(repo, "main", -1, &err) == 0);
	/* a pointer that names a pack which is gone is repaired, not stuck */
	json_t *before = pointer(&c, "main");
	const char *gone = json_string_value(json_object_get(json_array_get(json_object_get(before, "packs"), 0), "name"));
	char gone_path[4400];
	snprintf(gone_path, sizeof gone_path, "%s/history/packs/%s", c.root, gone ? gone : "none");
	CHECK(t, gone && remove(gone_path) == 0);
	json_decref(before);
	CHECK(t, grow(&c, 17) == 0); /* enough to move the tail into a pack */
	CHECK(t, repo && fdl_history_update(repo, "main", -1, &err) == 0);
	fdl_hist all;
	CHECK(t, repo && fdl_history_read(&all, repo, "main", c.ids[c.n - 1], -1, true, &err) == 0);
	CHECK(t, all.len == (size_t)c.n && all.from_index == (size_t)c.n);
	fdl_hist_free(&all);
	/* three more versions, the index not told */
	CHECK(t, grow(&c, 3) == 0);
	fdl_hist h;
	CHECK(t, repo && fdl_history_read(&h, repo, "main", c.ids[c.n - 1], -1, false, &err) == 0);
	CHECK(t, h.len == (size_t)c.n && h.read == 3 && h.from_index == (size_t)c.n - 3);
	fdl_hist_free(&h);
	/* a branch forked at seq 30 with five versions of its own, read with
	 * main's index: its own five from their files, the rest from the index */
	char fork[5][FDL_ID_LEN + 1];
	for (int i = 0; i < 5; i++)
		CHECK(t, add_version(&c, fork[i], i ? fork[i - 1] : c.ids[29], 31 + i) == 0);
	CHECK(t, set_ref(&c, "dev", fork[4]) == 0);
	CHECK(t, repo && fdl_history_read(&h, repo, "main", fork[4], -1, false, &err) == 0);
	CHECK(t, h.len == 35 && h.read == 5 && h.from_index == 30);
	CHECK(t, h.len == 35 && !strcmp(h.items[5].id, c.ids[29]));
	fdl_hist_free(&h);
	/* seq refs on the fork: 32 is its own (main's index names another
	 * version there), read from the fork's files; 12 is shared */
	bool found = false;
	char id[FDL_ID_LEN + 1];
	CHECK(t, repo && fdl_history_find_seq(id, &found, repo, "dev", fork[4], 32, &err) == 0);
	CHECK(t, found && !strcmp(id, fork[1]));
	CHECK(t, repo && fdl_history_find_seq(id, &found, repo, "dev", fork[4], 12, &err) == 0);
	CHECK(t, found && !strcmp(id, c.ids[11]));
	CHECK(t, repo && fdl_history_find_seq(id, &found, repo, "main", c.ids[c.n - 1], 12, &err) == 0);
	CHECK(t, found && !strcmp(id, c.ids[11]));
	/* a branch from the end of main's pack starts its own index from it */
	char rel[FDL_ID_LEN + 1];
	json_t *mp = pointer(&c, "main");
	int last = (int)json_integer_value(json_object_get(json_array_get(json_object_get(mp, "packs"), 0), "last_seq"));
	json_decref(mp);
	CHECK(t, last > 0 && last < c.n);
	CHECK(t, last > 0 && add_version(&c, rel, c.ids[last - 1], last + 1) == 0);
	CHECK(t, set_ref(&c, "rel", rel) == 0);
	CHECK(t, repo && fdl_history_update(repo, "rel", -1, &err) == 0);
	json_t *dev = pointer(&c, "rel"), *main_p = pointer(&c, "main");
	CHECK(t, dev && main_p &&
		      json_equal(json_array_get(json_object_get(dev, "packs"), 0),
				 json_array_get(json_object_get(main_p, "packs"), 0)));
	json_decref(dev);
	json_decref(main_p);
	fdl_repo_free(repo);
	teardown(&c);
}

static void a_seq_is_checked_against_its_version(t_ctx *t)
{
	chain c;
	if (setup(&c, t))
		return teardown(&c);
	fdl_repo *repo = NULL;
	fdl_error err;
	CHECK(t, grow(&c, 10) == 0);
	CHECK(t, fdl_repo_open(&repo, c.root, &err) == 0);
	CHECK(t, repo && fdl_history_update(repo, "main", -1, &err) == 0);
	bool found = false;
	char id[FDL_ID_LEN + 1];
	CHECK(t, repo && fdl_history_find_seq(id, &found, repo, "main", c.ids[9], 4, &err) == 0);
	CHECK(t, found && !strcmp(id, c.ids[3]));
	/* the index records another sha256 for seq 4: not taken */
	json_t *p = pointer(&c, "main");
	json_t *e = json_array_get(json_object_get(p, "tail"), 3);
	json_object_set_new(e, "sha256", json_string("1111111111111111111111111111111111111111111111111111111111111111"));
	char path[4400];
	snprintf(path, sizeof path, "%s/history/heads/main.json", c.root);
	CHECK(t, json_dump_file(p, path, JSON_COMPACT) == 0);
	json_decref(p);
	CHECK(t, repo && fdl_history_find_seq(id, &found, repo, "main", c.ids[9], 4, &err) == 0);
	CHECK(t, !found);
	/* and the ref resolver then walks the chain: the same answer */
	char via[FDL_ID_LEN + 1];
	CHECK(t, repo && fdl_ref_resolve(via, repo, "main:4", &err) == 0 && !strcmp(via, c.ids[3]));
	fdl_finding_list problems = {0}, warnings = {0};
	CHECK(t, repo && fdl_history_check(&problems, &warnings, repo, &err) == 0);
	CHECK(t, problems.len == 1 && warnings.len == 0);
	if (problems.len)
		CHECK_CONTAINS(t, problems.items[0].what, c.ids[3]);
	fdl_finding_list_free(&problems);
	fdl_finding_list_free(&warnings);
	fdl_repo_free(repo);
	teardown(&c);
}

/* A pack past 1 MiB is parsed in two halves at once: the whole history
 * comes back in order; a damaged line in the second half makes the index
 * unusable, and the history is read from version.json files instead. */
static void a_long_pack_is_parsed_in_halves(t_ctx *t)
{
	chain c;
	if (setup(&c, t))
		return teardown(&c);
	fdl_repo *repo = NULL;
	fdl_error err;
	CHECK(t, grow(&c, 2000) == 0);
	CHECK(t, fdl_repo_open(&repo, c.root, &err) == 0);
	CHECK(t, repo && fdl_history_update(repo, "main", -1, &err) == 0);
	json_t *p = pointer(&c, "main");
	const json_t *pack = json_array_get(json_object_get(p, "packs"), 0);
	CHECK(t, json_integer_value(json_object_get(pack, "bytes")) > (1 << 20));
	fdl_hist h;
	for (int whole = 0; whole < 2; whole++) {
		CHECK(t, repo && fdl_history_read(&h, repo, "main", c.ids[c.n - 1], -1, whole, &err) == 0);
		CHECK(t, h.len == 2000 && h.from_index == 2000 && h.read == 0);
		for (size_t i = 0; i < h.len; i++)
			CHECK(t, !strcmp(h.items[i].id, c.ids[c.n - 1 - (int)i]) && h.items[i].seq == c.n - (int64_t)i);
		fdl_hist_free(&h);
	}
	/* break the head of seq 1900 (in the second half) in place */
	char path[4600];
	snprintf(path, sizeof path, "%s/history/packs/%s", c.root, json_string_value(json_object_get(pack, "name")));
	fdl_buf b = {0};
	CHECK(t, fdl_file_read(&b, path, 1 << 24, &err) == 0);
	char *at = b.data ? strstr(b.data, "\n[1900,") : NULL;
	CHECK(t, at != NULL && at > b.data + b.len / 2);
	if (at) {
		at[2] = 'x'; /* [x900,: not JSON */
		CHECK(t, fdl_file_write_atomic(path, b.data, b.len, &err) == 0);
	}
	fdl_buf_free(&b);
	for (int whole = 0; whole < 2; whole++) { /* whole: the head is checked too */
		CHECK(t, repo && fdl_history_read(&h, repo, "main", c.ids[c.n - 1], -1, whole, &err) == 0);
		CHECK(t, h.len == 2000 && h.read >= 1900);
		for (size_t i = 0; i < h.len; i++)
			CHECK(t, !strcmp(h.items[i].id, c.ids[c.n - 1 - (int)i]));
		fdl_hist_free(&h);
	}
	json_decref(p);
	fdl_repo_free(repo);
	teardown(&c);
}

/* Rewrite every pack of `branch`'s index in the first format (whole
 * entries, one JSON object a line) and its pointer as fdl_history 1, as
 * fdl 0.2 wrote them. */
static int to_old_format(chain *c, const char *branch)
{
	json_t *p = pointer(c, branch);
	json_t *packs = json_object_get(p, "packs");
	int rc = p ? 0 : -1;
	for (size_t i = 0; !rc && i < json_array_size(packs); i++) {
		json_t *pk = json_array_get(packs, i);
		char path[4600], name[80], hex[65];
		snprintf(path, sizeof path, "%s/history/packs/%s", c->root, json_string_value(json_object_get(pk, "name")));
		fdl_buf in = {0}, out = {0};
		fdl_error err;
		rc = fdl_file_read(&in, path, 1 << 26, &err);
		for (char *line = in.data; !rc && line && *line;) {
			char *nl = strchr(line, '\n'), *t1 = strchr(line, '\t');
			json_t *v = t1 && nl ? json_loadb(t1 + 66, (size_t)(nl - t1 - 66), 0, NULL) : NULL;
			char sha[65];
			snprintf(sha, sizeof sha, "%.64s", t1 ? t1 + 1 : "");
			json_t *e = v ? json_pack("{s:O, s:O, s:s, s:O}", "id", json_object_get(v, "id"), "seq",
						  json_object_get(v, "seq"), "sha256", sha, "version", v)
				      : NULL;
			char *text = e ? json_dumps(e, JSON_COMPACT) : NULL;
			rc = text ? fdl_buf_add(&out, text, strlen(text), &err) || fdl_buf_add(&out, "\n", 1, &err) : -1;
			free(text);
			json_decref(e);
			json_decref(v);
			line = nl ? nl + 1 : NULL;
		}
		if (!rc)
			rc = remove(path) || fdl_sha256_mem(hex, out.data, out.len, &err);
		snprintf(name, sizeof name, "%s.jsonl", hex);
		snprintf(path, sizeof path, "%s/history/packs/%s", c->root, name);
		if (!rc)
			rc = fdl_file_write_atomic(path, out.data, out.len, &err);
		json_object_set_new(pk, "name", json_string(name));
		json_object_set_new(pk, "bytes", json_integer((json_int_t)out.len));
		fdl_buf_free(&in);
		fdl_buf_free(&out);
	}
	char path[4400];
	snprintf(path, sizeof path, "%s/history/heads/%s.json", c->root, branch);
	if (!rc) {
		json_object_set_new(p, "fdl_history", json_integer(1));
		rc = json_dump_file(p, path, JSON_COMPACT);
	}
	json_decref(p);
	return rc;
}

/* An index written by fdl 0.2 (whole entries in its packs) is still read,
 * brief or whole, and the next update writes it in the new format. */
static void the_old_format_is_read_and_rewritten(t_ctx *t)
{
	chain c;
	if (setup(&c, t))
		return teardown(&c);
	fdl_repo *repo = NULL;
	fdl_error err;
	CHECK(t, grow(&c, 300) == 0);
	CHECK(t, fdl_repo_open(&repo, c.root, &err) == 0);
	CHECK(t, repo && fdl_history_update(repo, "main", -1, &err) == 0);
	CHECK(t, to_old_format(&c, "main") == 0);
	json_t *p = pointer(&c, "main");
	CHECK(t, json_integer_value(json_object_get(p, "fdl_history")) == 1 && json_array_size(json_object_get(p, "packs")));
	json_decref(p);
	fdl_hist h;
	for (int whole = 0; whole < 2; whole++) {
		CHECK(t, repo && fdl_history_read(&h, repo, "main", c.ids[c.n - 1], -1, whole, &err) == 0);
		CHECK(t, h.len == 300 && h.from_index == 300 && h.read == 0);
		fdl_hist_free(&h);
	}
	fdl_finding_list problems = {0}, warnings = {0};
	CHECK(t, repo && fdl_history_check(&problems, &warnings, repo, &err) == 0);
	CHECK(t, problems.len == 0 && warnings.len == 0);
	fdl_finding_list_free(&problems);
	fdl_finding_list_free(&warnings);
	/* up to date, but old: gc (an update) writes it anew */
	CHECK(t, repo && fdl_history_update(repo, "main", -1, &err) == 0);
	p = pointer(&c, "main");
	CHECK(t, json_integer_value(json_object_get(p, "fdl_history")) == 2);
	json_decref(p);
	CHECK(t, pack_files(&c) >= 1 && pack_files(&c) <= 2); /* the old packs are gone */
	CHECK(t, repo && fdl_history_read(&h, repo, "main", c.ids[c.n - 1], -1, false, &err) == 0);
	CHECK(t, h.len == 300 && h.from_index == 300 && h.read == 0);
	fdl_hist_free(&h);
	fdl_repo_free(repo);
	teardown(&c);
}

/* A head edited by hand (what log shows) while its version.json part is
 * left alone: a brief listing may show it (it is only a listing), a whole
 * read refuses the pack, fdl verify names it. */
static void an_edited_head_is_caught_where_it_matters(t_ctx *t)
{
	chain c;
	if (setup(&c, t))
		return teardown(&c);
	fdl_repo *repo = NULL;
	fdl_error err;
	CHECK(t, grow(&c, 60) == 0);
	CHECK(t, fdl_repo_open(&repo, c.root, &err) == 0);
	CHECK(t, repo && fdl_history_update(repo, "main", -1, &err) == 0);
	json_t *p = pointer(&c, "main");
	const json_t *pack = json_array_get(json_object_get(p, "packs"), 0);
	char path[4600];
	snprintf(path, sizeof path, "%s/history/packs/%s", c.root, json_string_value(json_object_get(pack, "name")));
	fdl_buf b = {0};
	CHECK(t, fdl_file_read(&b, path, 1 << 24, &err) == 0);
	char *at = b.data ? strstr(b.data, ",\"version 7\",") : NULL; /* seq 7's message, in its head */
	CHECK(t, at != NULL);
	if (at) {
		at[10] = '8'; /* "version 8": the same length, so the pointer's byte count holds */
		CHECK(t, fdl_file_write_atomic(path, b.data, b.len, &err) == 0);
	}
	fdl_buf_free(&b);
	json_decref(p);
	fdl_hist h;
	CHECK(t, repo && fdl_history_read(&h, repo, "main", c.ids[c.n - 1], -1, false, &err) == 0);
	CHECK(t, h.len == 60 && h.from_index == 60);
	CHECK(t, h.len == 60 && !strcmp(json_string_value(json_array_get(h.items[53].doc, FDL_HEAD_MESSAGE)), "version 8"));
	fdl_hist_free(&h);
	CHECK(t, repo && fdl_history_read(&h, repo, "main", c.ids[c.n - 1], -1, true, &err) == 0);
	CHECK(t, h.len == 60 && h.read >= 7); /* the pack refused: read from version.json files */
	CHECK(t, h.len == 60 && !strcmp(json_string_value(json_object_get(h.items[53].doc, "message")), "version 7"));
	fdl_hist_free(&h);
	fdl_finding_list problems = {0}, warnings = {0};
	CHECK(t, repo && fdl_history_check(&problems, &warnings, repo, &err) == 0);
	CHECK(t, problems.len >= 1);
	if (problems.len)
		CHECK_CONTAINS(t, problems.items[0].what, "differs from its version.json");
	fdl_finding_list_free(&problems);
	fdl_finding_list_free(&warnings);
	fdl_repo_free(repo);
	teardown(&c);
}

/* Git's ~N and ^N after any ref (issue 62: docs/integrations.md's
 * `fdl attach ROOT@main~1` exited 5), with the history index and without
 * it: the same versions, and the end of the chain named. */
static void git_suffixes_walk_first_parents(t_ctx *t)
{
	chain c;
	if (setup(&c, t))
		return teardown(&c);
	fdl_repo *repo = NULL;
	fdl_error err;
	CHECK(t, grow(&c, 10) == 0);
	CHECK(t, fdl_repo_open(&repo, c.root, &err) == 0);
	const struct {
		const char *spec;
		int want; /* index into c.ids */
	} ok[] = {
		{"main~1", 8}, {"main~", 8}, {"main^", 8}, {"main^1", 8}, {"main^^", 7}, {"main~2^", 6},
		{"HEAD~3", 6}, {"@~9", 0}, {"main:5~2", 2}, {"5^", 3}, {"main~0", 9}, {"main^0", 9},
		{"main~1~1~1", 6}, {"refs/heads/main~4", 5},
	};
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) /* now through the history index */
			CHECK(t, repo && fdl_history_update(repo, "main", -1, &err) == 0);
		for (size_t i = 0; repo && i < sizeof ok / sizeof *ok; i++) {
			char id[FDL_ID_LEN + 1] = "";
			int rc = fdl_ref_resolve(id, repo, ok[i].spec, &err);
			bool good = rc == 0 && !strcmp(id, c.ids[ok[i].want]);
			CHECK(t, good);
			if (!good)
				fprintf(stderr, "    %s: rc %d, %s (%s)\n", ok[i].spec, rc, id, rc ? err.message : "");
		}
	}
	char spec[FDL_ID_LEN + 8], id[FDL_ID_LEN + 1];
	snprintf(spec, sizeof spec, "%s~2", c.ids[5]);
	CHECK(t, repo && fdl_ref_resolve(id, repo, spec, &err) == 0 && !strcmp(id, c.ids[3]));
	const struct {
		const char *spec;
		int rc;
		const char *says;
	} bad[] = {
		{"main~10", FDL_ENOTFOUND, "goes past"}, {"main^2", FDL_ENOTFOUND, "has no parent 2"},
		{"1^", FDL_ENOTFOUND, "first of its history"}, {"~1", FDL_EINVALID, "follows a ref"},
		{"main~x", FDL_EINVALID, "~N or ^N"}, {"nobranch~1", FDL_ENOTFOUND, "nobranch"},
		{"main~9999999999", FDL_EINVALID, "too many"},
	};
	for (size_t i = 0; repo && i < sizeof bad / sizeof *bad; i++) {
		int rc = fdl_ref_resolve(id, repo, bad[i].spec, &err);
		CHECK(t, rc == bad[i].rc);
		if (rc == bad[i].rc)
			CHECK_CONTAINS(t, err.message, bad[i].says);
		else
			fprintf(stderr, "    %s: rc %d\n", bad[i].spec, rc);
	}
	fdl_repo_free(repo);
	teardown(&c);
}

const t_case hindex_tests[] = {
	{"refs: Git's ~N and ^N suffixes walk parents, with the history index and without", git_suffixes_walk_first_parents},
	{"history index: 16 to max(32, sqrt n) inline, one pack, old packs removed, at any length", bounded_shape_at_any_length},
	{"history index: behind its branch or forked from, completed from version.json", stale_and_forked_are_completed},
	{"history index: a seq it names is checked against that version.json", a_seq_is_checked_against_its_version},
	{"history index: a pack past 1 MiB is parsed in two halves at once", a_long_pack_is_parsed_in_halves},
	{"history index: fdl 0.2's format is read, and rewritten by the next update", the_old_format_is_read_and_rewritten},
	{"history index: a head edited by hand is refused by whole reads and verify", an_edited_head_is_caught_where_it_matters},
	{NULL, NULL},
};
