#include "cli.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

int cmd_serve(int argc, char **argv)
{
	const char *port_s = "4001", *bind = "127.0.0.1", *pos[1];
	bool quiet = false, verify = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "port", .short_name = 'p', .value = &port_s, .help = "TCP port (default 4001; 0 = any free port)"},
		{.name = "bind", .value = &bind, .help = "IPv4 address to listen on (default 127.0.0.1)"},
		{.name = "quiet", .short_name = 'q', .flag = &quiet, .help = "do not log requests on stderr"},
		{.name = "verify", .flag = &verify, .help = "run fdl verify first; refuse to start if it finds a problem"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl serve ROOT [--port 4001] [--bind 127.0.0.1] [--verify]",
			   "Serve a folder repository over HTTP until interrupted: GET and HEAD of the\n"
			   "repository's own files, byte ranges, ETags and conditional GET, CORS for browsers\n"
			   "(DuckDB-Wasm), immutable caching for versions and data, short caching for HEAD and\n"
			   "refs. Each request is logged on stderr. Stock DuckDB reads a version with the\n"
			   "statements `fdl attach http://HOST:PORT` prints.",
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
	fdl_serve_options o = {.bind = bind, .port = (int)port, .log = quiet ? NULL : stderr};
	if (fdl_server_start(&s, pos[0], &o, &err))
		return cli_fail(&err);
	printf("Serving %s at http://%s:%d/\n", pos[0], bind, fdl_server_port(s));
	fflush(stdout);
	int sig = 0;
	sigwait(&set, &sig);
	fdl_server_stop(s);
	return 0;
}
