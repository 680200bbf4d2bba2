/*
 * version.json.sig: an SSH signature (OpenSSH's SSHSIG format, the one Git
 * uses for signed commits; PROTOCOL.sshsig) with namespace "fdl" over the
 * exact bytes of version.json, made with an Ed25519 key (OpenSSL does the
 * cryptography). Anyone can check one with stock OpenSSH:
 *   ssh-keygen -Y verify -f allowed_signers -I <signer> -n fdl -s version.json.sig < version.json
 */
#include "sign.h"
#include "../layout/layout.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define SIG_NAMESPACE "fdl"
#define KEY_TYPE "ssh-ed25519"

/* ---- SSH wire encoding ------------------------------------------------------ */

static int put_u32(fdl_buf *b, uint32_t v)
{
	unsigned char x[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
			      (unsigned char)v};
	return fdl_buf_add(b, x, 4, NULL);
}

static int put_str(fdl_buf *b, const void *p, size_t n)
{
	return put_u32(b, (uint32_t)n) || fdl_buf_add(b, p, n, NULL);
}

typedef struct reader {
	const unsigned char *p;
	size_t left;
} reader;

static bool get_u32(reader *r, uint32_t *v)
{
	if (r->left < 4)
		return false;
	*v = ((uint32_t)r->p[0] << 24) | ((uint32_t)r->p[1] << 16) | ((uint32_t)r->p[2] << 8) | r->p[3];
	r->p += 4;
	r->left -= 4;
	return true;
}

static bool get_str(reader *r, const unsigned char **p, size_t *n)
{
	uint32_t len;
	if (!get_u32(r, &len) || len > r->left)
		return false;
	*p = r->p;
	*n = len;
	r->p += len;
	r->left -= len;
	return true;
}

static bool str_is(const unsigned char *p, size_t n, const char *s)
{
	return n == strlen(s) && memcmp(p, s, n) == 0;
}

/* ---- base64 and armor (OpenSSL's codec) ------------------------------------ */

static int b64_decode(fdl_buf *out, const char *text, size_t len, fdl_error *err)
{
	fdl_buf clean = {0};
	for (size_t i = 0; i < len; i++)
		if (text[i] != '\n' && text[i] != '\r' && text[i] != ' ' && text[i] != '\t')
			if (fdl_buf_add(&clean, text + i, 1, err))
				return FDL_ENOMEM;
	if (!clean.len || clean.len % 4) {
		fdl_buf_free(&clean);
		return fdl_fail(err, FDL_EINVALID, "not valid base64");
	}
	int rc = fdl_buf_grow(out, clean.len / 4 * 3, err);
	int n = rc ? -1 : EVP_DecodeBlock((unsigned char *)out->data, (unsigned char *)clean.data, (int)clean.len);
	if (n < 0) {
		fdl_buf_free(&clean);
		return rc ? rc : fdl_fail(err, FDL_EINVALID, "not valid base64");
	}
	size_t pad = 0;
	while (pad < 2 && clean.len > pad && clean.data[clean.len - 1 - pad] == '=')
		pad++;
	out->len = (size_t)n - pad;
	fdl_buf_free(&clean);
	return 0;
}

/* The base64 between BEGIN and END armor lines. */
static int unarmor(fdl_buf *out, const char *text, size_t len, const char *what, const char *source, fdl_error *err)
{
	char begin[64], end[64];
	snprintf(begin, sizeof begin, "-----BEGIN %s-----", what);
	snprintf(end, sizeof end, "-----END %s-----", what);
	const char *b = memmem(text, len, begin, strlen(begin));
	const char *e = b ? memmem(b, len - (size_t)(b - text), end, strlen(end)) : NULL;
	if (!b || !e)
		return fdl_fail(err, FDL_EINVALID, "%s: not an armored %s (no %s ... %s)", source, what, begin, end);
	b += strlen(begin);
	int rc = b64_decode(out, b, (size_t)(e - b), err);
	return rc ? fdl_error_prefix(err, "%s", source) : 0;
}

/* ---- keys -------------------------------------------------------------------- */

typedef struct ed_key {
	unsigned char pub[32];
	unsigned char seed[32];
} ed_key;

/* An unencrypted OpenSSH private key (openssh-key-v1) holding one Ed25519 key. */
static int load_private_key(ed_key *k, const char *path, fdl_error *err)
{
	fdl_buf file = {0}, raw = {0};
	int rc = fdl_file_read(&file, path, 1 << 20, err);
	if (!rc)
		rc = unarmor(&raw, file.data, file.len, "OPENSSH PRIVATE KEY", path, err);
	fdl_buf_free(&file);
	if (rc)
		return rc;
	reader r = {(const unsigned char *)raw.data, raw.len};
	const unsigned char *s, *priv;
	size_t n, privn;
	uint32_t nkeys, c1, c2;
	const char *magic = "openssh-key-v1";
	rc = FDL_EINVALID;
	if (r.left < 15 || memcmp(r.p, magic, 15) != 0) {
		fdl_fail(err, rc, "%s: not an OpenSSH private key", path);
		goto out;
	}
	r.p += 15;
	r.left -= 15;
	if (!get_str(&r, &s, &n)) {
		fdl_fail(err, rc, "%s: truncated key", path);
		goto out;
	}
	if (!str_is(s, n, "none")) {
		fdl_fail(err, rc, "%s: the key is protected by a passphrase; fdl signs with an unprotected Ed25519 key "
			 "(ssh-keygen -t ed25519 -N '')", path);
		goto out;
	}
	if (!get_str(&r, &s, &n) || !get_str(&r, &s, &n) || !get_u32(&r, &nkeys) || nkeys != 1 ||
	    !get_str(&r, &s, &n) || !get_str(&r, &priv, &privn)) {
		fdl_fail(err, rc, "%s: not a key file with exactly one key", path);
		goto out;
	}
	reader pr = {priv, privn};
	const unsigned char *pub, *sec;
	size_t pubn, secn;
	if (!get_u32(&pr, &c1) || !get_u32(&pr, &c2) || c1 != c2 || !get_str(&pr, &s, &n)) {
		fdl_fail(err, rc, "%s: damaged private key section", path);
		goto out;
	}
	if (!str_is(s, n, KEY_TYPE)) {
		fdl_fail(err, rc, "%s: a %.*s key; fdl signs with Ed25519 keys (ssh-keygen -t ed25519)", path, (int)n, s);
		goto out;
	}
	if (!get_str(&pr, &pub, &pubn) || pubn != 32 || !get_str(&pr, &sec, &secn) || secn != 64) {
		fdl_fail(err, rc, "%s: damaged Ed25519 key", path);
		goto out;
	}
	memcpy(k->pub, pub, 32);
	memcpy(k->seed, sec, 32);
	rc = 0;
out:
	fdl_buf_free(&raw);
	return rc;
}

static int public_blob(fdl_buf *b, const unsigned char pub[32])
{
	return put_str(b, KEY_TYPE, strlen(KEY_TYPE)) || put_str(b, pub, 32);
}

/* What is signed: MAGIC, namespace, reserved, hash algorithm, H(message). */
static int signed_data(fdl_buf *b, const char *ns, const char *hash_alg, const void *msg, size_t len, fdl_error *err)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	const EVP_MD *alg = !strcmp(hash_alg, "sha512") ? EVP_sha512() : !strcmp(hash_alg, "sha256") ? EVP_sha256() : NULL;
	if (!alg)
		return fdl_fail(err, FDL_EINVALID, "signature hash algorithm '%s' is not sha512 or sha256", hash_alg);
	if (EVP_Digest(msg, len, md, &mdlen, alg, NULL) != 1)
		return fdl_fail(err, FDL_ERROR, "OpenSSL: digest failed");
	if (fdl_buf_add(b, "SSHSIG", 6, err) || put_str(b, ns, strlen(ns)) || put_str(b, "", 0) ||
	    put_str(b, hash_alg, strlen(hash_alg)) || put_str(b, md, mdlen))
		return fdl_oom(err);
	return 0;
}

int fdl_sshsig_sign(char **armored, const char *key_path, const void *msg, size_t len, fdl_error *err)
{
	ed_key k;
	int rc = load_private_key(&k, key_path, err);
	if (rc)
		return rc;
	fdl_buf data = {0}, blob = {0}, sigblob = {0};
	unsigned char sig[64];
	size_t siglen = sizeof sig;
	EVP_PKEY *pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, k.seed, 32);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	rc = signed_data(&data, SIG_NAMESPACE, "sha512", msg, len, err);
	if (!rc && (!pkey || !ctx || EVP_DigestSignInit(ctx, NULL, NULL, NULL, pkey) != 1 ||
		    EVP_DigestSign(ctx, sig, &siglen, (unsigned char *)data.data, data.len) != 1 || siglen != 64))
		rc = fdl_fail(err, FDL_ERROR, "OpenSSL: Ed25519 signing failed");
	if (!rc && (put_str(&sigblob, KEY_TYPE, strlen(KEY_TYPE)) || put_str(&sigblob, sig, 64)))
		rc = fdl_oom(err);
	if (!rc) {
		fdl_buf pub = {0};
		if (fdl_buf_add(&blob, "SSHSIG", 6, err) || put_u32(&blob, 1) || public_blob(&pub, k.pub) ||
		    put_str(&blob, pub.data, pub.len) || put_str(&blob, SIG_NAMESPACE, strlen(SIG_NAMESPACE)) ||
		    put_str(&blob, "", 0) || put_str(&blob, "sha512", 6) || put_str(&blob, sigblob.data, sigblob.len))
			rc = fdl_oom(err);
		fdl_buf_free(&pub);
	}
	if (!rc) {
		/* armor: base64 wrapped at 70 columns, as ssh-keygen writes it */
		size_t b64len = 4 * ((blob.len + 2) / 3);
		char *b64 = malloc(b64len + 1);
		fdl_buf out = {0};
		if (!b64)
			rc = fdl_oom(err);
		else {
			EVP_EncodeBlock((unsigned char *)b64, (unsigned char *)blob.data, (int)blob.len);
			rc = fdl_buf_puts(&out, "-----BEGIN SSH SIGNATURE-----\n", err);
			for (size_t i = 0; i < b64len && !rc; i += 70) {
				rc = fdl_buf_add(&out, b64 + i, b64len - i < 70 ? b64len - i : 70, err);
				if (!rc)
					rc = fdl_buf_puts(&out, "\n", err);
			}
			if (!rc)
				rc = fdl_buf_puts(&out, "-----END SSH SIGNATURE-----\n", err);
			free(b64);
		}
		if (!rc)
			*armored = fdl_buf_detach(&out);
		fdl_buf_free(&out);
	}
	OPENSSL_cleanse(&k, sizeof k);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	fdl_buf_free(&data);
	fdl_buf_free(&blob);
	fdl_buf_free(&sigblob);
	return rc;
}

/* ---- checking ------------------------------------------------------------------ */

/* Is the public key blob in allowed_signers (for namespace fdl)? The first
 * matching principal goes to *signer. */
static int allowed(char **signer, const char *allowed_path, const unsigned char *blob, size_t blen, fdl_error *err)
{
	fdl_buf file = {0};
	int rc = fdl_file_read(&file, allowed_path, 16u << 20, err);
	if (rc)
		return rc;
	rc = FDL_EINVALID;
	char *save = NULL;
	for (char *line = strtok_r(file.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		char *tok[4] = {0};
		int nt = 0;
		char *s2 = NULL;
		for (char *t = strtok_r(line, " \t\r", &s2); t && nt < 4; t = strtok_r(NULL, " \t\r", &s2))
			tok[nt++] = t;
		if (nt < 3)
			continue;
		/* principals [options] keytype key */
		bool typed = !strncmp(tok[1], "ssh-", 4) || !strncmp(tok[1], "ecdsa-", 6) || !strncmp(tok[1], "sk-", 3);
		int kt = typed ? 1 : 2;
		if (kt + 1 >= nt)
			continue;
		const char *options = typed ? "" : tok[1];
		if (strstr(options, "namespaces=") && !strstr(options, "\"fdl\"") && !strstr(options, "\"fdl,") &&
		    !strstr(options, ",fdl\"") && !strstr(options, ",fdl,"))
			continue;
		if (strstr(options, "cert-authority"))
			continue;
		fdl_buf key = {0};
		if (strcmp(tok[kt], KEY_TYPE) == 0 && b64_decode(&key, tok[kt + 1], strlen(tok[kt + 1]), NULL) == 0 &&
		    key.len == blen && memcmp(key.data, blob, blen) == 0) {
			char *comma = strchr(tok[0], ',');
			*signer = comma ? strndup(tok[0], (size_t)(comma - tok[0])) : fdl_strdup(tok[0]);
			rc = 0;
		}
		fdl_buf_free(&key);
		if (!rc)
			break;
	}
	fdl_buf_free(&file);
	if (rc)
		fdl_fail(err, FDL_EINVALID, "signed by a key that is not in %s", allowed_path);
	return rc;
}

int fdl_sshsig_verify(char **signer, const char *armored, size_t alen, const void *msg, size_t len,
		      const char *allowed_signers, const char *source, fdl_error *err)
{
	fdl_buf raw = {0}, data = {0};
	int rc = unarmor(&raw, armored, alen, "SSH SIGNATURE", source, err);
	if (rc)
		return rc;
	reader r = {(const unsigned char *)raw.data, raw.len};
	const unsigned char *pk, *ns, *res, *ha, *sig;
	size_t pkn, nsn, resn, han, sign;
	uint32_t ver;
	rc = FDL_EINVALID;
	if (r.left < 6 || memcmp(r.p, "SSHSIG", 6)) {
		fdl_fail(err, rc, "%s: not an SSHSIG signature", source);
		goto out;
	}
	r.p += 6;
	r.left -= 6;
	if (!get_u32(&r, &ver) || ver != 1 || !get_str(&r, &pk, &pkn) || !get_str(&r, &ns, &nsn) ||
	    !get_str(&r, &res, &resn) || !get_str(&r, &ha, &han) || !get_str(&r, &sig, &sign)) {
		fdl_fail(err, rc, "%s: a damaged SSHSIG signature", source);
		goto out;
	}
	if (!str_is(ns, nsn, SIG_NAMESPACE)) {
		fdl_fail(err, rc, "%s: signed for namespace '%.*s', not '%s'", source, (int)nsn, ns, SIG_NAMESPACE);
		goto out;
	}
	reader kr = {pk, pkn}, sr = {sig, sign};
	const unsigned char *kt, *kb, *st, *sb;
	size_t ktn, kbn, stn, sbn;
	if (!get_str(&kr, &kt, &ktn) || !str_is(kt, ktn, KEY_TYPE) || !get_str(&kr, &kb, &kbn) || kbn != 32 ||
	    !get_str(&sr, &st, &stn) || !str_is(st, stn, KEY_TYPE) || !get_str(&sr, &sb, &sbn) || sbn != 64) {
		fdl_fail(err, rc, "%s: not an Ed25519 signature (fdl checks ssh-ed25519 keys)", source);
		goto out;
	}
	char alg[16];
	snprintf(alg, sizeof alg, "%.*s", (int)(han < 15 ? han : 15), ha);
	if ((rc = signed_data(&data, SIG_NAMESPACE, alg, msg, len, err)))
		goto out;
	EVP_PKEY *pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, kb, 32);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool good = pkey && ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) == 1 &&
		    EVP_DigestVerify(ctx, sb, 64, (unsigned char *)data.data, data.len) == 1;
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(pkey);
	if (!good) {
		rc = fdl_fail(err, FDL_EINVALID, "%s: the signature does not match " FDL_VERSION_JSON " (it changed, or the "
			      "signature is not for it)", source);
		goto out;
	}
	rc = allowed(signer, allowed_signers, pk, pkn, err);
	if (rc)
		fdl_error_prefix(err, "%s", source);
out:
	fdl_buf_free(&raw);
	fdl_buf_free(&data);
	return rc;
}

int fdl_version_sign(fdl_repo *repo, const char *id, const char *key_path, fdl_error *err)
{
	fdl_version *v = NULL;
	int rc = fdl_version_read(&v, repo, id, err); /* only a valid version is signed */
	fdl_version_free(v);
	if (rc)
		return rc;
	char *key = fdl_version_key(id, FDL_VERSION_JSON);
	char *sigkey = fdl_version_key(id, FDL_VERSION_SIG);
	fdl_buf b = {0};
	char *sig = NULL;
	rc = key && sigkey ? fdl_store_get(repo->store, key, FDL_META_MAX_BYTES, &b, NULL, err)
			   : fdl_oom(err);
	if (!rc)
		rc = fdl_sshsig_sign(&sig, key_path, b.data, b.len, err);
	if (!rc) {
		rc = fdl_store_put_if_absent(repo->store, sigkey, sig, strlen(sig), err);
		if (rc == FDL_EEXISTS)
			rc = fdl_fail(err, FDL_EEXISTS, "version %s is already signed (%s); a signature is never replaced",
				      id, sigkey);
	}
	free(sig);
	fdl_buf_free(&b);
	free(key);
	free(sigkey);
	return rc;
}
