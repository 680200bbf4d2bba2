/*
 * fdl serve's token file. Tokens are kept as their SHA-256 only; a request's
 * token is hashed and compared with every one of them by CRYPTO_memcmp, so
 * neither a token's length nor how many of its bytes match shows in the
 * time a check takes. The list sits behind a read-write lock: SIGHUP's
 * reload builds a new list beside the old one and swaps it in while no
 * check is comparing, so a request being answered never notices.
 */
#include "tokens.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TOKEN_MIN 16
#define TOKEN_FILE_MAX (1 << 20)

typedef struct entry {
	char name[FDL_TOKEN_NAME_MAX + 1];
	unsigned char digest[32];
} entry;

typedef struct token_list {
	entry *e;
	size_t n;
} token_list;

struct fdl_serve_tokens {
	pthread_rwlock_t lock;
	char *path;
	token_list list;
};

static void digest_of(unsigned char out[32], const char *s, size_t n)
{
	unsigned int len = 32;
	if (EVP_Digest(s, n, out, &len, EVP_sha256(), NULL) != 1)
		memset(out, 0xff, 32); /* matches no token's digest but by chance */
}

/* Split the next white-space separated field off *p. */
static char *field(char **p)
{
	char *s = *p;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	char *e = s;
	while (*e && *e != ' ' && *e != '\t')
		e++;
	if (*e)
		*e++ = '\0';
	*p = e;
	return s;
}

static bool printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s == 0x7f)
			return false;
	return true;
}

/* One line of the file (NUL-terminated, no newline) into l. */
static int parse_line(token_list *l, char *line, const char *path, int lineno, fdl_error *err)
{
	char *p = line;
	char *name = field(&p);
	if (!name || name[0] == '#')
		return 0;
	char *token = field(&p), *scope = field(&p), *more = field(&p);
	if (!token)
		return fdl_fail(err, FDL_EINVALID, "%s:%d: '%s' has no token (a line is `NAME TOKEN`)", path, lineno,
				name);
	if (strlen(name) > FDL_TOKEN_NAME_MAX || !printable(name))
		return fdl_fail(err, FDL_EINVALID, "%s:%d: a token's name is at most %d printable characters", path,
				lineno, FDL_TOKEN_NAME_MAX);
	if (strlen(token) < TOKEN_MIN || !printable(token))
		return fdl_fail(err, FDL_EINVALID,
				"%s:%d: the token of '%s' is shorter than %d characters or holds a control character "
				"(make one with `openssl rand -hex 32`)", path, lineno, name, TOKEN_MIN);
	if ((scope && strcmp(scope, "read")) || more)
		return fdl_fail(err, FDL_EINVALID, "%s:%d: after the token of '%s' only the scope `read` may follow",
				path, lineno, name);
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->e[i].name, name))
			return fdl_fail(err, FDL_EINVALID, "%s:%d: the name '%s' is given twice", path, lineno, name);
	entry *grown = realloc(l->e, (l->n + 1) * sizeof *grown);
	if (!grown)
		return fdl_oom(err);
	l->e = grown;
	snprintf(l->e[l->n].name, sizeof l->e[l->n].name, "%s", name);
	digest_of(l->e[l->n].digest, token, strlen(token));
	l->n++;
	OPENSSL_cleanse(token, strlen(token));
	return 0;
}

static int load(token_list *l, const char *path, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_private_file_read(&b, path, TOKEN_FILE_MAX, err);
	int lineno = 0;
	for (char *line = rc ? NULL : b.data, *next; line && !rc; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		size_t n = strlen(line);
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		rc = parse_line(l, line, path, ++lineno, err);
	}
	if (!rc && l->n == 0)
		rc = fdl_fail(err, FDL_EINVALID, "%s holds no token (a line is `NAME TOKEN`)", path);
	if (b.data)
		OPENSSL_cleanse(b.data, b.len);
	fdl_buf_free(&b);
	if (rc) {
		free(l->e);
		*l = (token_list){0};
	}
	return rc;
}

int fdl_serve_tokens_new(fdl_serve_tokens **out, const char *path, fdl_error *err)
{
	fdl_serve_tokens *t = calloc(1, sizeof *t);
	if (!t || !(t->path = fdl_strdup(path))) {
		free(t);
		return fdl_oom(err);
	}
	pthread_rwlock_init(&t->lock, NULL);
	int rc = load(&t->list, path, err);
	if (rc) {
		fdl_serve_tokens_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int fdl_serve_tokens_reload(fdl_serve_tokens *t, fdl_error *err)
{
	token_list fresh = {0};
	int rc = load(&fresh, t->path, err);
	if (rc) {
		fdl_error_prefix(err, "the tokens were not changed");
		return rc;
	}
	pthread_rwlock_wrlock(&t->lock);
	token_list old = t->list;
	t->list = fresh;
	pthread_rwlock_unlock(&t->lock);
	free(old.e);
	return 0;
}

/* The token an Authorization header carries, into buf; its length, or -1. */
static int presented(const char *h, char *buf, size_t size)
{
	while (*h == ' ')
		h++;
	if (!strncasecmp(h, "Bearer ", 7)) {
		h += 7;
		while (*h == ' ')
			h++;
		size_t n = strlen(h);
		while (n && h[n - 1] == ' ')
			n--;
		if (n == 0 || n >= size)
			return -1;
		memcpy(buf, h, n);
		buf[n] = '\0';
		return (int)n;
	}
	if (strncasecmp(h, "Basic ", 6))
		return -1;
	h += 6;
	while (*h == ' ')
		h++;
	size_t n = strlen(h);
	if (n == 0 || n % 4 || n / 4 * 3 >= size)
		return -1;
	int got = EVP_DecodeBlock((unsigned char *)buf, (const unsigned char *)h, (int)n);
	if (got < 0)
		return -1;
	got -= (h[n - 1] == '=') + (h[n - 2] == '=');
	buf[got] = '\0';
	char *colon = memchr(buf, ':', (size_t)got);
	if (!colon)
		return -1;
	int len = got - (int)(colon + 1 - buf);
	memmove(buf, colon + 1, (size_t)len + 1);
	return len;
}

bool fdl_serve_tokens_check(fdl_serve_tokens *t, const char *authorization, char name[FDL_TOKEN_NAME_MAX + 1])
{
	char buf[1024];
	int n = authorization ? presented(authorization, buf, sizeof buf) : -1;
	if (n <= 0)
		return false;
	unsigned char d[32];
	digest_of(d, buf, (size_t)n);
	OPENSSL_cleanse(buf, sizeof buf);
	pthread_rwlock_rdlock(&t->lock);
	size_t found = t->list.n;
	for (size_t i = 0; i < t->list.n; i++) {
		/* no early exit: every token is compared */
		int differs = CRYPTO_memcmp(d, t->list.e[i].digest, sizeof d);
		size_t mask = (size_t)0 - (size_t)(differs == 0);
		found = (found & ~mask) | (i & mask);
	}
	bool ok = found < t->list.n;
	if (ok)
		memcpy(name, t->list.e[found].name, FDL_TOKEN_NAME_MAX + 1);
	pthread_rwlock_unlock(&t->lock);
	return ok;
}

void fdl_serve_tokens_free(fdl_serve_tokens *t)
{
	if (!t)
		return;
	pthread_rwlock_destroy(&t->lock);
	free(t->list.e);
	free(t->path);
	free(t);
}
