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

int cmd_serve(int argc, char **argv)
{
	const char *port_s = "4001", *bind = "127.0.0.1", *pos[1], *page = NULL;
	bool quiet = false, verify = false, no_page = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "port", .short_name = 'p', .value = &port_s, .help = "TCP port (default 4001; 0 = any free port)"},
		{.name = "bind", .value = &bind, .help = "IPv4 address to listen on (default 127.0.0.1)"},
		{.name = "quiet", .short_name = 'q', .flag = &quiet, .help = "do not log requests on stderr"},
		{.name = "verify", .flag = &verify, .help = "run fdl verify first; refuse to start if it finds a problem"},
		{.name = "page", .value = &page, .help = "the page's folder (default: installed beside fdl, or build/web)"},
		{.name = "no-page", .flag = &no_page, .help = "serve the repository's files only, no page at /"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl serve ROOT [--port 4001] [--bind 127.0.0.1] [--verify] [--page DIR | --no-page]",
			   "Serve a folder repository over HTTP until interrupted: GET and HEAD of the\n"
			   "repository's own files, byte ranges, ETags and conditional GET, CORS for browsers\n"
			   "(DuckDB-Wasm), immutable caching for versions and data, short caching for HEAD and\n"
			   "refs. Each request is logged on stderr. Stock DuckDB reads a version with the\n"
			   "statements `fdl attach http://HOST:PORT` prints. At / a page shows the dataset,\n"
			   "its branches and history, each version's tables, changes and ATTACH, and queries\n"
			   "a version in the browser with DuckDB-Wasm (served by fdl, no CDN).",
			   pos, 1, 1, &npos, &done);
	if (done)
		return rc;
	char *end;
	long port = strtol(port_s, &end, 10);
	if (*end || port < 0 || port > 65535) {
		fprintf(stderr, "fdl: --port must be 0..65535, not '%s'\n", port_s);
		return CLI_EXIT_USAGE;
	}
	if (verify) {
		int vrc = cli_verify(pos[0], true, false, true, NULL);
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
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	fdl_error err = {0};
	fdl_server *s = NULL;
	char buf[PATH_MAX];
	const char *web = no_page ? NULL : page_dir(page, buf, sizeof buf);
	if (!web && !no_page)
		fprintf(stderr, "fdl: no page to serve (no index.html in %s or beside fdl; run `make web` or pass "
				"--page DIR); serving the repository's files only\n", FDL_DEFAULT_WEB_DIR);
	fdl_serve_options o = {.bind = bind, .port = (int)port, .log = quiet ? NULL : stderr, .web_dir = web};
	if (fdl_server_start(&s, pos[0], &o, &err))
		return cli_fail(&err);
	printf("Serving %s at http://%s:%d/%s\n", pos[0], bind, fdl_server_port(s), web ? " (the page is at /)" : "");
	fflush(stdout);
	int sig = 0;
	sigwait(&set, &sig);
	fdl_server_stop(s);
	return 0;
}
