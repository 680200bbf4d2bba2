/* The folder store's atomic writes and compare-and-swap. */
#include "test.h"
#include "../../src/store/store.h"
#include "../../src/store/curlx.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static fdl_store *open_store(t_ctx *t, char **dir)
{
	*dir = t_tempdir();
	fdl_store *s = NULL;
	fdl_error err;
	CHECK(t, fdl_store_open(&s, *dir, &err) == 0);
	return s;
}

static void done(fdl_store *s, char *dir)
{
	fdl_store_free(s);
	fdl_rm_rf(dir);
	free(dir);
}

/* No temporary or lock files left anywhere in the store. */
static int leftovers(fdl_store *s)
{
	fdl_strlist l = {0};
	fdl_error err;
	fdl_store_list(s, "", &l, &err);
	int n = 0;
	for (size_t i = 0; i < l.len; i++)
		if (strstr(l.items[i], ".tmp-") || strstr(l.items[i], ".lock"))
			n++;
	fdl_strlist_free(&l);
	return n;
}

static void put_if_absent(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	fdl_buf b = {0};
	CHECK(t, fdl_store_put_if_absent(s, "versions/a/version.json", "one", 3, &err) == 0);
	CHECK(t, fdl_store_put_if_absent(s, "versions/a/version.json", "two", 3, &err) == FDL_EEXISTS);
	CHECK_CONTAINS(t, err.message, "versions/a/version.json");
	CHECK(t, fdl_store_get(s, "versions/a/version.json", 100, &b, NULL, &err) == 0);
	CHECK(t, b.len == 3 && !memcmp(b.data, "one", 3));
	fdl_buf_free(&b);
	CHECK(t, fdl_store_get(s, "versions/b/version.json", 100, &b, NULL, &err) == FDL_ENOTFOUND);
	fdl_buf_free(&b);
	CHECK(t, leftovers(s) == 0);
	done(s, dir);
}

static void put_file_streams(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	char *src = fdl_asprintf("%s/big.bin", dir);
	FILE *f = fopen(src, "wb");
	for (int i = 0; i < 3 * 1024 * 1024 / 4; i++)
		fwrite(&i, sizeof i, 1, f);
	fclose(f);
	CHECK(t, fdl_store_put_file_if_absent(s, "x/big.bin", src, &err) == 0);
	CHECK(t, fdl_store_put_file_if_absent(s, "x/big.bin", src, &err) == FDL_EEXISTS);
	char h1[65], h2[65];
	int64_t n1, n2;
	char *dst = fdl_store_local_path(s, "x/big.bin");
	CHECK(t, fdl_sha256_file(h1, &n1, src, &err) == 0);
	CHECK(t, fdl_sha256_file(h2, &n2, dst, &err) == 0);
	CHECK(t, n1 == n2 && n1 == 3 * 1024 * 1024 && !strcmp(h1, h2));
	int64_t sz = 0;
	CHECK(t, fdl_store_head(s, "x/big.bin", &sz, &err) == 0 && sz == n1);
	CHECK(t, fdl_store_head(s, "x/none.bin", &sz, &err) == FDL_ENOTFOUND);
	char *copy = fdl_asprintf("%s/copy.bin", dir);
	CHECK(t, fdl_store_get_file(s, "x/big.bin", copy, &err) == 0);
	CHECK(t, fdl_sha256_file(h2, &n2, copy, &err) == 0 && !strcmp(h1, h2));
	free(copy);
	free(dst);
	free(src);
	CHECK(t, leftovers(s) == 0);
	done(s, dir);
}

static void compare_and_swap(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	char etag[FDL_ETAG_MAX], etag2[FDL_ETAG_MAX];
	fdl_buf b = {0};
	/* create only if absent */
	CHECK(t, fdl_store_put_if_match(s, "refs/heads/main", "A\n", 2, NULL, &err) == 0);
	CHECK(t, fdl_store_put_if_match(s, "refs/heads/main", "B\n", 2, NULL, &err) == FDL_ECONFLICT);
	CHECK(t, fdl_store_get(s, "refs/heads/main", 100, &b, etag, &err) == 0);
	CHECK(t, b.len == 2 && b.data[0] == 'A');
	fdl_buf_free(&b);
	/* replace with the etag read */
	CHECK(t, fdl_store_put_if_match(s, "refs/heads/main", "C\n", 2, etag, &err) == 0);
	/* a stale etag loses and changes nothing */
	CHECK(t, fdl_store_put_if_match(s, "refs/heads/main", "D\n", 2, etag, &err) == FDL_ECONFLICT);
	CHECK_CONTAINS(t, err.message, "another writer");
	CHECK(t, fdl_store_get(s, "refs/heads/main", 100, &b, etag2, &err) == 0);
	CHECK(t, b.data[0] == 'C' && strcmp(etag, etag2) != 0);
	fdl_buf_free(&b);
	/* an etag for a key that does not exist */
	CHECK(t, fdl_store_put_if_match(s, "refs/heads/other", "E\n", 2, etag2, &err) == FDL_ECONFLICT);
	/* a held lock is a conflict, and is left to its owner */
	char *lock = fdl_asprintf("%s/refs/heads/main.lock", dir);
	FILE *f = fopen(lock, "w");
	fclose(f);
	CHECK(t, fdl_store_put_if_match(s, "refs/heads/main", "F\n", 2, etag2, &err) == FDL_ECONFLICT);
	CHECK_CONTAINS(t, err.message, "main.lock");
	CHECK(t, access(lock, F_OK) == 0);
	unlink(lock);
	free(lock);
	CHECK(t, leftovers(s) == 0);
	done(s, dir);
}

/* Many processes increment one counter by CAS: no update may be lost. */
static void concurrent_cas(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	CHECK(t, fdl_store_put_if_match(s, "refs/heads/n", "0\n", 2, NULL, &err) == 0);
	enum { PROCS = 6, EACH = 40 };
	for (int p = 0; p < PROCS; p++) {
		if (fork() == 0) {
			int wins = 0;
			while (wins < EACH) {
				fdl_buf b = {0};
				char etag[FDL_ETAG_MAX], next[32];
				if (fdl_store_get(s, "refs/heads/n", 100, &b, etag, &err))
					_exit(3);
				snprintf(next, sizeof next, "%ld\n", strtol(b.data, NULL, 10) + 1);
				fdl_buf_free(&b);
				int rc = fdl_store_put_if_match(s, "refs/heads/n", next, strlen(next), etag, &err);
				if (rc == 0)
					wins++;
				else if (rc != FDL_ECONFLICT)
					_exit(4);
			}
			_exit(0);
		}
	}
	int ok = 0;
	for (int p = 0; p < PROCS; p++) {
		int st;
		wait(&st);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	CHECK(t, ok == PROCS);
	fdl_buf b = {0};
	CHECK(t, fdl_store_get(s, "refs/heads/n", 100, &b, NULL, &err) == 0);
	CHECK(t, strtol(b.data, NULL, 10) == PROCS * EACH);
	fdl_buf_free(&b);
	CHECK(t, leftovers(s) == 0);
	done(s, dir);
}

static void keys_checked(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	fdl_buf b = {0};
	const char *bad[] = {"../x", "/etc/passwd", "a/../../x", "a\\b", "", "a//b", "./a", NULL};
	for (const char **k = bad; *k; k++) {
		CHECK(t, fdl_store_put_if_absent(s, *k, "x", 1, &err) == FDL_EINVALID);
		CHECK(t, fdl_store_get(s, *k, 10, &b, NULL, &err) == FDL_EINVALID);
	}
	fdl_buf_free(&b);
	done(s, dir);
}

/* Many sizes at once, a folder at a time: absent files and folders, a
 * symlink at the end or on the way (never followed), a FIFO. */
static void head_many(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	CHECK(t, fdl_store_put_if_absent(s, "d/a/one", "1", 1, &err) == 0);
	CHECK(t, fdl_store_put_if_absent(s, "d/a/two", "22", 2, &err) == 0);
	CHECK(t, fdl_store_put_if_absent(s, "d/b/three", "333", 3, &err) == 0);
	CHECK(t, fdl_store_put_if_absent(s, "top", "4444", 4, &err) == 0);
	char *p = fdl_asprintf("%s/d/a/link", dir), *q = fdl_asprintf("%s/d/a/two", dir);
	CHECK(t, symlink(q, p) == 0);
	free(p);
	p = fdl_asprintf("%s/d/via", dir);
	q = (free(q), fdl_asprintf("%s/d/a", dir));
	CHECK(t, symlink(q, p) == 0); /* a folder reached through a symlink */
	free(p);
	free(q);
	p = fdl_asprintf("%s/d/b/fifo", dir);
	CHECK(t, mkfifo(p, 0600) == 0);
	free(p);
	const char *keys[] = {"d/a/link", "d/a/none", "d/a/one", "d/a/two", "d/b/fifo", "d/b/three",
			      "d/c/none", "d/via/one", "top", "zzz"};
	int64_t want[] = {FDL_HEAD_NOT_FILE, FDL_HEAD_ABSENT, 1, 2, FDL_HEAD_NOT_FILE, 3,
			  FDL_HEAD_ABSENT, FDL_HEAD_NOT_FILE, 4, FDL_HEAD_ABSENT};
	int64_t got[10];
	memset(got, 0x55, sizeof got);
	CHECK(t, fdl_store_head_many(s, keys, 10, got, &err) == 0);
	for (int i = 0; i < 10; i++)
		CHECK(t, got[i] == want[i]);
	const char *bad[] = {"d/../top"};
	CHECK(t, fdl_store_head_many(s, bad, 1, got, &err) == FDL_EINVALID);
	done(s, dir);
}

static void list_and_delete(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	fdl_store_put_if_absent(s, "versions/a/x", "1", 1, &err);
	fdl_store_put_if_absent(s, "versions/b/y", "1", 1, &err);
	fdl_store_put_if_absent(s, "refs/heads/main", "1", 1, &err);
	fdl_strlist l = {0};
	CHECK(t, fdl_store_list(s, "versions", &l, &err) == 0);
	fdl_strlist_sort(&l);
	CHECK(t, l.len == 2 && !strcmp(l.items[0], "versions/a/x") && !strcmp(l.items[1], "versions/b/y"));
	fdl_strlist_free(&l);
	CHECK(t, fdl_store_list(s, "nothing", &l, &err) == 0 && l.len == 0);
	CHECK(t, fdl_store_del(s, "versions/a/x", &err) == 0);
	CHECK(t, fdl_store_del(s, "versions/a/x", &err) == FDL_ENOTFOUND);
	done(s, dir);
}

/* A temporary file named by fdl_tmp_template in `dir`; its name in *out. */
static int make_tmp(const char *dir, char **out)
{
	char *base = fdl_asprintf("%s/part.parquet", dir);
	char *tmpl = base ? fdl_tmp_template(base) : NULL;
	free(base);
	int fd = tmpl ? mkstemp(tmpl) : -1;
	if (fd >= 0)
		close(fd);
	*out = tmpl;
	return fd >= 0 ? 0 : -1;
}

static bool exists(const char *path)
{
	struct stat st;
	return path && lstat(path, &st) == 0;
}

static void tmpfile_sweep(t_ctx *t)
{
	char *dir = t_tempdir();
	char *sub = fdl_asprintf("%s/data/main/t", dir);
	fdl_error err;
	CHECK(t, fdl_mkdir_p(sub, &err) == 0);
	/* a writer that dies with its temporary file in place */
	int pipefd[2];
	CHECK(t, pipe(pipefd) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		char *name = NULL;
		int rc = make_tmp(sub, &name);
		if (!rc && write(pipefd[1], name, strlen(name) + 1) < 0)
			rc = -1;
		_exit(rc ? 1 : 0);
	}
	char dead[4096] = "";
	int status = 0;
	CHECK(t, pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(t, read(pipefd[0], dead, sizeof dead - 1) > 0);
	close(pipefd[0]);
	close(pipefd[1]);
	char *live = NULL, *other = fdl_asprintf("%s/x.tmp-notours", sub), *link = fdl_asprintf("%s/l.tmp-1-1-abcdef", sub);
	CHECK(t, make_tmp(sub, &live) == 0); /* this process's: alive */
	FILE *f = fopen(other, "w");
	if (f)
		fclose(f);
	CHECK(t, symlink(dead, link) == 0); /* a symlink is never a temporary file of ours */
	CHECK(t, exists(dead) && exists(live) && exists(other));
	fdl_tmpfile_sweep(dir);
	CHECK(t, !exists(dead));
	CHECK(t, exists(live) && exists(other) && exists(link));
	free(live);
	free(other);
	free(link);
	free(sub);
	fdl_rm_rf(dir);
	free(dir);
}

/* A key's sha256 streamed in place, size included; a symlink is not followed. */
static void sha256_streamed(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	char want[65], got[65];
	int64_t n = -1;
	CHECK(t, fdl_store_put_if_absent(s, "data/a.parquet", "PAR1 AMOUNT:000100", 18, &err) == 0);
	CHECK(t, fdl_sha256_mem(want, "PAR1 AMOUNT:000100", 18, &err) == 0);
	CHECK(t, fdl_store_sha256(s, "data/a.parquet", got, &n, &err) == 0);
	CHECK(t, !strcmp(got, want) && n == 18);
	CHECK(t, fdl_store_sha256(s, "data/none.parquet", got, &n, &err) == FDL_ENOTFOUND);
	char *p = fdl_asprintf("%s/data/link.parquet", dir), *q = fdl_asprintf("%s/data/a.parquet", dir);
	CHECK(t, symlink(q, p) == 0);
	CHECK(t, fdl_store_sha256(s, "data/link.parquet", got, &n, &err) == FDL_EINVALID);
	free(p);
	free(q);
	done(s, dir);
}

/* A lock held across steps: a second taker is refused naming the holder;
 * released, it is free; one whose holder died on this host is broken. */
static void held_lock(t_ctx *t)
{
	char *dir;
	fdl_store *s = open_store(t, &dir);
	fdl_error err;
	setenv("FDL_LOCK_WAIT_MS", "0", 1);
	fdl_store_lock a = {.file.fd = -1}, b = {.file.fd = -1};
	CHECK(t, fdl_store_lock_take(&a, s, "refs.lock", "creating refs", "fdl tag", &err) == 0);
	CHECK(t, fdl_store_lock_take(&b, s, "refs.lock", "creating refs", "fdl tag", &err) == FDL_ECONFLICT);
	CHECK_CONTAINS(t, err.message, "creating refs is locked by another fdl (fdl tag");
	fdl_store_lock_release(&a);
	CHECK(t, fdl_store_lock_take(&b, s, "refs.lock", "creating refs", "fdl tag", &err) == 0);
	fdl_store_lock_release(&b);
	CHECK(t, leftovers(s) == 0);
	/* a child takes it and dies holding it */
	pid_t pid = fork();
	if (pid == 0) {
		fdl_store_lock c = {.file.fd = -1};
		_exit(fdl_store_lock_take(&c, s, "refs.lock", "creating refs", "fdl expire", &err) == 0 ? 0 : 1);
	}
	int status = 0;
	CHECK(t, waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(t, leftovers(s) == 1);
	CHECK(t, fdl_store_lock_take(&a, s, "refs.lock", "creating refs", "fdl tag", &err) == 0);
	fdl_store_lock_release(&a);
	CHECK(t, leftovers(s) == 0);
	/* the record a lock object holds: a dead process on this host is gone, this one is not */
	char rec[FDL_LOCK_RECORD_MAX];
	fdl_lock_record(rec, "fdl tag");
	CHECK(t, !fdl_lock_record_dead(rec));
	char *dead = fdl_asprintf("%s", rec);
	char *line = strstr(dead, "pid ");
	CHECK(t, line != NULL);
	if (line) {
		char *end = strchr(line, '\n');
		char *swapped = fdl_asprintf("%.*spid %ld%s", (int)(line - dead), dead, (long)pid, end);
		CHECK(t, fdl_lock_record_dead(swapped)); /* the child exited and was reaped */
		free(swapped);
	}
	free(dead);
	unsetenv("FDL_LOCK_WAIT_MS");
	done(s, dir);
}

/* HTTPS on a distribution whose CA file is not where Debian's libcurl
 * looks: the first readable one of the known places. */
static void ca_file_elsewhere(t_ctx *t)
{
	char *dir = t_tempdir();
	char *mine = fdl_asprintf("%s/ca-bundle.crt", dir), *gone = fdl_asprintf("%s/ca-certificates.crt", dir);
	FILE *f = fopen(mine, "w");
	CHECK(t, f && fputs("-----BEGIN CERTIFICATE-----\n", f) >= 0 && fclose(f) == 0);
	const char *known[] = {gone, mine};
	CHECK(t, fdl_curl_ca_file(gone, known, 2) == mine);  /* libcurl's own is missing */
	CHECK(t, fdl_curl_ca_file(NULL, known, 2) == mine);  /* libcurl names none */
	CHECK(t, fdl_curl_ca_file(mine, known, 2) == NULL);  /* libcurl's own is there: unchanged */
	CHECK(t, fdl_curl_ca_file(gone, known, 1) == NULL);  /* none anywhere: libcurl says so */
	free(mine);
	free(gone);
	fdl_rm_rf(dir);
	free(dir);
}

static void put_text(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	chmod(path, mode);
}

/* A token for a URL: FDL_TOKEN, else the credentials file (host:port before
 * host), else netrc's machine (never its default); a file others may read
 * refused. */
static void http_tokens(t_ctx *t)
{
	char *dir = t_tempdir();
	char *cfg = fdl_asprintf("%s/fdl", dir), *cred = fdl_asprintf("%s/fdl/credentials", dir);
	char *netrc = fdl_asprintf("%s/netrc", dir), *tok = NULL;
	fdl_error e = {0};
	mkdir(cfg, 0700);
	setenv("XDG_CONFIG_HOME", dir, 1);
	setenv("NETRC", netrc, 1);
	unsetenv("FDL_TOKEN");
	CHECK(t, fdl_http_token(&tok, "https://data.example.org/x", &e) == 0 && !tok);
	put_text(cred, "# host token\ndata.example.org aaaa\nDATA.example.org:8443 bbbb\nother.org cccc\n", 0600);
	put_text(netrc, "default login x password dddd\nmachine mirror.org login me password eeee\n", 0600);
	CHECK(t, fdl_http_token(&tok, "https://data.example.org/x", &e) == 0 && tok && !strcmp(tok, "aaaa"));
	free(tok);
	CHECK(t, fdl_http_token(&tok, "https://u@data.example.org:8443/x", &e) == 0 && tok && !strcmp(tok, "bbbb"));
	free(tok);
	CHECK(t, fdl_http_token(&tok, "http://mirror.org/x", &e) == 0 && tok && !strcmp(tok, "eeee"));
	free(tok);
	CHECK(t, fdl_http_token(&tok, "http://nowhere.org/x", &e) == 0 && !tok); /* netrc's default is not used */
	setenv("FDL_TOKEN", "ffff", 1);
	CHECK(t, fdl_http_token(&tok, "http://nowhere.org/x", &e) == 0 && tok && !strcmp(tok, "ffff"));
	free(tok);
	unsetenv("FDL_TOKEN");
	chmod(cred, 0640);
	CHECK(t, fdl_http_token(&tok, "https://data.example.org/x", &e) == FDL_EINVALID && strstr(e.message, "chmod 600") &&
		     !strstr(e.message, "aaaa"));
	unlink(cred);
	chmod(netrc, 0644);
	CHECK(t, fdl_http_token(&tok, "http://mirror.org/x", &e) == FDL_EINVALID && !strstr(e.message, "eeee"));
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("NETRC");
	free(cfg);
	free(cred);
	free(netrc);
	fdl_rm_rf(dir);
	free(dir);
}

const t_case store_tests[] = {
	{"http: a token for a host from FDL_TOKEN, the credentials file or netrc", http_tokens},
	{"https: the CA file where the distribution keeps it when libcurl's own is missing", ca_file_elsewhere},
	{"folder store: put-if-absent never overwrites", put_if_absent},
	{"folder store: files are streamed in and out", put_file_streams},
	{"folder store: compare-and-swap", compare_and_swap},
	{"folder store: concurrent CAS loses no update", concurrent_cas},
	{"folder store: unsafe keys are refused", keys_checked},
	{"folder store: list and delete", list_and_delete},
	{"folder store: many sizes at once, no symlink followed", head_many},
	{"a killed writer's temporary files are swept, no one else's", tmpfile_sweep},
	{"folder store: a key's sha256, streamed, no symlink followed", sha256_streamed},
	{"store lock: held across steps, refused to others, broken when its holder is gone", held_lock},
	{NULL, NULL},
};
