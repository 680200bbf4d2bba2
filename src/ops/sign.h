#ifndef FDL_SIGN_H
#define FDL_SIGN_H

#include "../util/util.h"

/* An armored SSHSIG signature (namespace "fdl", sha512) of msg with the
 * unencrypted OpenSSH Ed25519 private key at key_path. Caller frees. */
int fdl_sshsig_sign(char **armored, const char *key_path, const void *msg, size_t len, fdl_error *err);

/* Check an armored SSHSIG signature of msg (namespace "fdl") and that its
 * key is listed in the allowed_signers file (OpenSSH's format); *signer
 * receives the principal. Caller frees. */
int fdl_sshsig_verify(char **signer, const char *armored, size_t alen, const void *msg, size_t len,
		      const char *allowed_signers, const char *source, fdl_error *err);

#endif
