/* fdl serve's tokens (tokens.c): who may read a private repository. */
#ifndef FDL_SERVE_TOKENS_H
#define FDL_SERVE_TOKENS_H

#include "../util/util.h"

#include <stdbool.h>

/* The longest token name a log line carries. */
#define FDL_TOKEN_NAME_MAX 64

typedef struct fdl_serve_tokens fdl_serve_tokens;

/* Load a token file: one token a line, `NAME TOKEN [read]` (white space
 * between; blank lines and lines starting with `#` skipped). Refused when
 * its group or others may read it, when empty, when a name repeats, when a
 * token is shorter than 16 characters. */
int fdl_serve_tokens_new(fdl_serve_tokens **out, const char *path, fdl_error *err);
/* Read the file again and swap the new tokens in at once (SIGHUP); on an
 * error the old tokens stay and the error says why. Requests being served
 * are not disturbed: a check holds the tokens only while it compares. */
int fdl_serve_tokens_reload(fdl_serve_tokens *t, fdl_error *err);
/* Is `authorization` (an Authorization header's value, NULL if none) a
 * valid `Bearer TOKEN` or `Basic` with TOKEN as its password? Every token
 * is compared, in constant time (their SHA-256 with CRYPTO_memcmp): the
 * time says nothing of which matched or how much of one. On a match, the
 * token's name is copied to `name`. */
bool fdl_serve_tokens_check(fdl_serve_tokens *t, const char *authorization, char name[FDL_TOKEN_NAME_MAX + 1]);
void fdl_serve_tokens_free(fdl_serve_tokens *t);

#endif
