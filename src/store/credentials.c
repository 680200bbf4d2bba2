/*
 * The token fdl sends to an http(s):// repository, found as Git and curl
 * find theirs: FDL_TOKEN first (for the repository the command names, and
 * only its host), then the user's credentials file, one line per host,
 * `HOST[:PORT] TOKEN` (`$XDG_CONFIG_HOME/fdl/credentials`, else
 * `~/.config/fdl/credentials`), then `~/.netrc` (`$NETRC`), the password
 * of the host's `machine` entry (never `default`: a token goes to the host
 * named for it). Both files are refused when others may read them, as ssh
 * refuses a private key. The token is never put in a message.
 */
#include "store.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CREDENTIALS_MAX (1 << 20)

/* host and host:port of url (scheme://[user@]host[:port]/...), lower case. */
static int host_of(const char *url, char host[256], char hostport[264])
{
	const char *p = strstr(url, "://");
	if (!p)
		return -1;
	p += 3;
	size_t n = strcspn(p, "/?#");
	const char *at = memchr(p, '@', n);
	if (at) {
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	if (n == 0 || n >= 256)
		return -1;
	for (size_t i = 0; i < n; i++)
		hostport[i] = (char)tolower((unsigned char)p[i]);
	hostport[n] = '\0';
	const char *colon = hostport[0] == '[' ? strstr(hostport, "]:") : strrchr(hostport, ':');
	size_t hn = colon ? (size_t)(colon - hostport) + (hostport[0] == '[') : n;
	memcpy(host, hostport, hn);
	host[hn] = '\0';
	return 0;
}

/* Next white-space separated word of *p (NULL at the end). */
static char *word(char **p)
{
	char *s = *p;
	while (*s && isspace((unsigned char)*s))
		s++;
	if (!*s)
		return NULL;
	char *e = s;
	while (*e && !isspace((unsigned char)*e))
		e++;
	if (*e)
		*e++ = '\0';
	*p = e;
	return s;
}

/* The credentials file: `HOST[:PORT] TOKEN` a line; host:port before host. */
static int from_credentials(char **out, const char *path, const char *host, const char *hostport, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_private_file_read(&b, path, CREDENTIALS_MAX, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		return 0;
	}
	char *bare = NULL, *save = NULL;
	for (char *line = rc ? NULL : strtok_r(b.data, "\n", &save); line && !*out; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *h = word(&p), *t = h ? word(&p) : NULL;
		if (!h || h[0] == '#' || !t)
			continue;
		for (char *c = h; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (!strcmp(h, hostport))
			*out = fdl_strdup(t);
		else if (!bare && !strcmp(h, host))
			bare = fdl_strdup(t);
	}
	if (!*out)
		*out = bare;
	else
		free(bare);
	fdl_buf_free(&b);
	return rc;
}

/* netrc: `machine HOST login USER password TOKEN`, any layout of words. */
static int from_netrc(char **out, const char *path, const char *host, fdl_error *err)
{
	fdl_buf b = {0};
	int rc = fdl_private_file_read(&b, path, CREDENTIALS_MAX, err);
	if (rc == FDL_ENOTFOUND) {
		fdl_error_clear(err);
		return 0;
	}
	char *p = rc ? NULL : b.data, *w;
	bool mine = false;
	while (p && !*out && (w = word(&p)) != NULL) {
		if (!strcmp(w, "machine")) {
			char *m = word(&p);
			mine = m && !strcasecmp(m, host);
		} else if (!strcmp(w, "default")) {
			mine = false;
		} else if (!strcmp(w, "password") || !strcmp(w, "login") || !strcmp(w, "account")) {
			char *v = word(&p);
			if (mine && v && !strcmp(w, "password"))
				*out = fdl_strdup(v);
		}
	}
	fdl_buf_free(&b);
	return rc;
}

/* $XDG_CONFIG_HOME/fdl/credentials, else ~/.config/fdl/credentials. */
static char *credentials_path(void)
{
	const char *x = getenv("XDG_CONFIG_HOME");
	if (x && *x)
		return fdl_asprintf("%s/fdl/credentials", x);
	const char *home = getenv("HOME");
	return home && *home ? fdl_asprintf("%s/.config/fdl/credentials", home) : NULL;
}

static char *netrc_path(void)
{
	const char *n = getenv("NETRC");
	if (n && *n)
		return fdl_strdup(n);
	const char *home = getenv("HOME");
	return home && *home ? fdl_asprintf("%s/.netrc", home) : NULL;
}

int fdl_http_token(char **out, const char *url, fdl_error *err)
{
	*out = NULL;
	char host[256], hostport[264];
	if (host_of(url, host, hostport))
		return 0;
	const char *env = getenv("FDL_TOKEN");
	if (env && *env)
		return (*out = fdl_strdup(env)) ? 0 : fdl_oom(err);
	char *path = credentials_path();
	int rc = path ? from_credentials(out, path, host, hostport, err) : 0;
	free(path);
	if (rc || *out)
		return rc;
	path = netrc_path();
	rc = path ? from_netrc(out, path, host, err) : 0;
	free(path);
	return rc;
}
