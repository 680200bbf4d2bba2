/* fdl serve: serve a repository over HTTP, with its page.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FDL_DEFAULT_WEB_DIR
#define FDL_DEFAULT_WEB_DIR "/usr/local/share/fdl/web"
#endif

static bool has_page(const char *dir)
{
	char p[PATH_MAX + 16];
	return snprintf(p, sizeof p, "%s/index.html", dir) < (int)sizeof p && access(p, R_OK) == 0;
}

/* The page's folder: --page, $FDL_WEB_DIR, <the binary's folder>/../share/fdl/web
 * (make install), else the build tree's build/web. */
static const char *page_dir(const char *given, char *buf, size_t n)
{
	if (given)
		return given;
	const char *env = getenv("FDL_WEB_DIR");
	if (env && *env)
		return env;
	char exe[PATH_MAX - 32];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (len > 0) {
		exe[len] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf, n, "%s/../share/fdl/web", exe);
			if (has_page(buf))
				return buf;
		}
	}
	return has_page(FDL_DEFAULT_WEB_DIR) ? FDL_DEFAULT_WEB_DIR : NULL;
}

const cli_doc doc_serve = {
	.usage = "fdl serve ROOT [--port 4001] [--bind 127.0.0.1] [--verify] [--page DIR | --no-page]\n"
		 "                [--token-file FILE] [--tls-cert PEM --tls-key PEM] [--insecure] [-q]",
	.summary = "serve a repository over HTTP, with its page",
	.text = "Serves a folder repository over HTTP (libmicrohttpd) until interrupted: GET\n"
		"and HEAD of the repository's own files only (`fdl.json`, `HEAD`, `refs/`,\n"
		"`versions/`, the data folder; never a folder listing, never a path outside\n"
		"ROOT, symlinks not followed; a target with a bad `%`-escape, a NUL or a\n"
		"path that is not UTF-8 is 400), byte ranges (single and multiple;\n"
		"206/416), ETags (a version file's sha256) and `If-None-Match` (304), CORS\n"
		"for browsers, `Cache-Control: immutable` for versions and data, 5 s for\n"
		"`HEAD`, refs and `fdl.json`. One log line per request on stderr (with a\n"
		"token file, ending with the name of the token it carried, `-` for none).\n"
		"\n"
		"A private repository: `--token-file FILE` names a file of tokens, one a\n"
		"line, `NAME TOKEN` (`openssl rand -hex 32` makes one; the file must be\n"
		"mode 600, and is read again on SIGHUP with no request dropped). Every path\n"
		"but the page's static files then answers 401, the same whether it exists\n"
		"or not, unless the request carries `Authorization: Bearer TOKEN` or TOKEN\n"
		"as a Basic password (netrc); tokens are compared in constant time.\n"
		"`--tls-cert` and `--tls-key` serve HTTPS. Tokens over plain HTTP are\n"
		"refused on an address other than loopback unless `--insecure` (a TLS\n"
		"proxy in front). Readers give fdl the token through `FDL_TOKEN`, the\n"
		"credentials file or `~/.netrc` (docs/private.md).\n"
		"`--verify` runs `fdl verify` first and refuses to start on a repository\n"
		"that fails it.\n"
		"\n"
		"At `/`, a page for people: the latest version as a dataset card (the\n"
		"description as Markdown, tables with rows, size, columns, first rows and\n"
		"column statistics, a SQL box, how to use and cite it), branches and history\n"
		"(breaking changes marked), and per version its tables, changes, a\n"
		"comparison with its parent, the `ATTACH` with a copy button, and a SQL box\n"
		"that queries the version in the browser with DuckDB-Wasm (served by fdl,\n"
		"no CDN) through `files.json` and HTTP ranges, read as DuckLake reads it\n"
		"(docs/format.md) and every value spelled as DuckDB prints it (docs/web.md);\n"
		"an expired or withdrawn version shows why and since when, and the newest\n"
		"version of its branch that can be read. The page is\n"
		"static files (`make web` builds them into `build/web`; `make install` puts\n"
		"them in `share/fdl/web`, where `fdl serve` looks first); copied beside a\n"
		"repository on any static host, it works there too, showing HEAD's branch.",
	.examples = "fdl serve /srv/population --port 4001 --verify &\n"
		    "fdl attach http://127.0.0.1:4001 | duckdb   # once it listens\n",
	.min = 1,
	.max = 1,
};

int cmd_serve(int argc, char **argv)
{
	const char *port_s = "4001", *bind = "127.0.0.1", *pos[1], *page = NULL;
	const char *token_file = NULL, *tls_cert = NULL, *tls_key = NULL;
	bool quiet = false, verify = false, no_page = false, insecure = false;
	int npos;
	cli_opt opts[] = {
		{.name = "port", .short_name = 'p', .value = &port_s, .arg = "PORT", .help = "TCP port (default 4001; 0 = any free port)"},
		{.name = "bind", .value = &bind, .arg = "ADDRESS", .help = "IPv4 address to listen on (default 127.0.0.1)"},
		{.name = "quiet", .short_name = 'q', .flag = &quiet, .help = "do not log requests on stderr"},
		{.name = "verify", .flag = &verify, .help = "run fdl verify first; refuse to start if it finds a problem"},
		{.name = "page", .value = &page, .arg = "DIR", .help = "the page's folder (default: installed beside fdl, or build/web)"},
		{.name = "no-page", .flag = &no_page, .help = "serve the repository's files only, no page at /"},
		{.name = "token-file", .value = &token_file, .arg = "FILE", .help = "tokens (`NAME TOKEN` a line, mode 600): a private repository"},
		{.name = "tls-cert", .value = &tls_cert, .arg = "PEM", .help = "the certificate (chain) for HTTPS"},
		{.name = "tls-key", .value = &tls_key, .arg = "PEM", .help = "its private key (mode 600)"},
		{.name = "insecure", .flag = &insecure, .help = "allow tokens over plain HTTP on an address other than loopback"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_serve, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	char *end;
	long port = strtol(port_s, &end, 10);
	if (*end || port < 0 || port > 65535) {
		fprintf(stderr, "fdl: --port must be 0..65535, not '%s'\n", port_s);
		return CLI_EXIT_USAGE;
	}
	if (verify) {
		int vrc = cli_verify(pos[0], NULL, CLI_VERIFY_QUIET);
		if (vrc) {
			fprintf(stderr, "fdl: %s fails fdl verify; not serving it\n", pos[0]);
			return vrc;
		}
	}
	/* block the signals before the server's threads start, then wait */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	fdl_error err = {0};
	fdl_server *s = NULL;
	char buf[PATH_MAX];
	const char *web = no_page ? NULL : page_dir(page, buf, sizeof buf);
	if (!web && !no_page)
		fprintf(stderr, "fdl: no page to serve (no index.html in %s or beside fdl; run `make web` or pass "
				"--page DIR); serving the repository's files only\n", FDL_DEFAULT_WEB_DIR);
	fdl_serve_options o = {.version = FDL_SERVE_OPTIONS_VERSION, .bind = bind, .port = (int)port,
			       .log = quiet ? NULL : stderr, .web_dir = web, .token_file = token_file,
			       .tls_cert = tls_cert, .tls_key = tls_key, .insecure = insecure};
	if (fdl_server_start(&s, pos[0], &o, &err))
		return cli_fail(&err);
	printf("Serving %s at http%s://%s:%d/%s%s\n", pos[0], tls_cert ? "s" : "", bind, fdl_server_port(s),
	       web ? " (the page is at /)" : "", token_file ? " to holders of a token" : "");
	fflush(stdout);
	int sig = 0;
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP) {
		fdl_error e = {0};
		if (!token_file)
			continue;
		if (fdl_server_reload_tokens(s, &e))
			fprintf(stderr, "fdl serve: %s\n", e.message);
		else
			fprintf(stderr, "fdl serve: read %s again\n", token_file);
	}
	fdl_server_stop(s);
	return 0;
}
