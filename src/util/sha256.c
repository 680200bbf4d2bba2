/* SHA-256 of memory and of files (streamed), through OpenSSL libcrypto. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fdl_sha256 {
	EVP_MD_CTX *ctx;
};

int fdl_sha256_new(fdl_sha256 **out, fdl_error *err)
{
	fdl_sha256 *h = calloc(1, sizeof *h);
	if (!h)
		return fdl_oom(err);
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		fdl_sha256_free(h);
		return fdl_fail(err, FDL_ERROR, "OpenSSL: cannot start a SHA-256 digest");
	}
	*out = h;
	return 0;
}

int fdl_sha256_update(fdl_sha256 *h, const void *data, size_t len, fdl_error *err)
{
	if (EVP_DigestUpdate(h->ctx, data, len) != 1)
		return fdl_fail(err, FDL_ERROR, "OpenSSL: SHA-256 update failed");
	return 0;
}

int fdl_sha256_final(fdl_sha256 *h, char hex[65], fdl_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (EVP_DigestFinal_ex(h->ctx, md, &n) != 1 || n != 32)
		return fdl_fail(err, FDL_ERROR, "OpenSSL: SHA-256 final failed");
	static const char digits[] = "0123456789abcdef";
	for (unsigned i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

int fdl_sha256_reset(fdl_sha256 *h, fdl_error *err)
{
	if (EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
		return fdl_fail(err, FDL_ERROR, "OpenSSL: cannot restart a SHA-256 digest");
	return 0;
}

void fdl_sha256_free(fdl_sha256 *h)
{
	if (h) {
		EVP_MD_CTX_free(h->ctx);
		free(h);
	}
}

int fdl_sha256_mem(char hex[65], const void *data, size_t len, fdl_error *err)
{
	fdl_sha256 *h;
	int rc = fdl_sha256_new(&h, err);
	if (rc)
		return rc;
	rc = fdl_sha256_update(h, data, len, err);
	if (!rc)
		rc = fdl_sha256_final(h, hex, err);
	fdl_sha256_free(h);
	return rc;
}

typedef struct hashing {
	fdl_sha256 *h;
	int64_t total;
	fdl_error *err;
} hashing;

static int hash_chunk(const void *data, size_t len, void *payload)
{
	hashing *x = payload;
	x->total += (int64_t)len;
	return fdl_sha256_update(x->h, data, len, x->err);
}

int fdl_sha256_fd(char hex[65], int64_t *bytes, int fd, const char *path, fdl_error *err)
{
	hashing x = {NULL, 0, err};
	int rc = fdl_sha256_new(&x.h, err);
	if (!rc)
		rc = fdl_fd_each_chunk(fd, path, hash_chunk, &x, err);
	if (!rc)
		rc = fdl_sha256_final(x.h, hex, err);
	fdl_sha256_free(x.h);
	if (!rc && bytes)
		*bytes = x.total;
	return rc;
}

int fdl_sha256_file(char hex[65], int64_t *bytes, const char *path, fdl_error *err)
{
	hashing x = {NULL, 0, err};
	int rc = fdl_sha256_new(&x.h, err);
	if (!rc)
		rc = fdl_file_each_chunk(path, hash_chunk, &x, err);
	if (!rc)
		rc = fdl_sha256_final(x.h, hex, err);
	fdl_sha256_free(x.h);
	if (!rc && bytes)
		*bytes = x.total;
	return rc;
}
