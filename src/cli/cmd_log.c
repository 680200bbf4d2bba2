/* fdl log: list versions, newest first, following the first parent.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_snapshots(fdl_repo *repo, const fdl_version *v)
{
	fdl_snapshot_list *list = NULL;
	fdl_error err;
	if (fdl_version_snapshots(&list, repo, fdl_version_id(v), &err)) {
		printf("    (snapshots unavailable: %s)\n\n", err.message);
		return;
	}
	for (size_t i = 0; i < list->count; i++) {
		const fdl_snapshot *s = &list->items[i];
		printf("    snapshot %lld  %s", (long long)s->snapshot_id, s->time ? s->time : "");
		if (s->author)
			printf("  %s", s->author);
		if (s->message)
			printf(": %s", s->message);
		else
			printf("  [%s]", s->changes ? s->changes : "");
		printf("\n");
		if (s->extra_info)
			printf("        %s\n", s->extra_info);
	}
	printf("\n");
	fdl_snapshot_list_free(list);
}

static void print_version(const fdl_version *v, const fdl_log_mark *m)
{
	printf("version %s (seq %lld)", fdl_version_id(v), (long long)fdl_version_seq(v));
	for (size_t i = 0; m && i < m->refs.count; i++)
		printf("%s%s%s", i ? ", " : " (", m->refs.strings[i], i + 1 == m->refs.count ? ")" : "");
	printf("\n");
	const char *email = fdl_version_author_email(v);
	printf("Author: %s%s%s%s\n", fdl_version_author_name(v), email ? " <" : "", email ? email : "",
	       email ? ">" : "");
	printf("Date:   %s\n", fdl_version_created_at(v));
	if (m && m->state[0])
		printf("State:  %s%s%s (%s)\n", m->state, m->when[0] ? " on " : "", m->when,
		       !strcmp(m->state, "withdrawn") ? "its catalog and the data it added are gone"
						     : "left retention: its catalog is gone");
	printf("\n");
	/* indent every line of the message, as git log does */
	const char *msg = fdl_version_message(v);
	while (*msg) {
		const char *nl = strchr(msg, '\n');
		int n = nl ? (int)(nl - msg) : (int)strlen(msg);
		printf("    %.*s\n", n, msg);
		msg += n + (nl ? 1 : 0);
	}
	printf("\n");
	if (fdl_version_change_count(v)) {
		printf("    Changes:\n");
		for (size_t i = 0; i < fdl_version_change_count(v); i++)
			cli_print_change(stdout, fdl_version_change(v, i), "      ");
		printf("\n");
	}
}

const cli_doc doc_log = {
	.usage = "fdl log ROOT [REF] [--json] [--limit N] [--snapshots] [--decorate | --no-decorate]",
	.summary = "list versions, newest first, following the first parent",
	.text = "Versions of a branch (default HEAD), newest first, following the first\n"
		"parent, with each version's schema changes (breaking ones marked). Read\n"
		"through the repository's history index where it has one (a few requests\n"
		"at any length, even from a static host; see docs/format.md), else one\n"
		"`version.json` at a time; either way each version's id, seq and first\n"
		"parent are checked to follow on. `--json` prints one\n"
		"`version.json` object per line; `--snapshots` lists under each version the\n"
		"DuckLake snapshots it froze with their `commit_message` and\n"
		"`commit_extra_info` (set in DuckDB with `CALL lake.set_commit_message(...)`).\n"
		"\n"
		"On a terminal, as `git log` does there, each version shows the branches\n"
		"and tags at it (`HEAD -> main`, `tag: v2025`), and a `State:` line when it\n"
		"expired or was withdrawn; a static host tells both through the ref list\n"
		"fdl writes (`history/refs.json`: one request more). `--decorate` shows them\n"
		"anywhere (into a pipe or a file too), `--no-decorate` nowhere.",
	.examples = "fdl log /srv/population main --limit 5 --snapshots\n",
	.min = 1,
	.max = 2,
};

int cmd_log(int argc, char **argv)
{
	const char *limit_s = NULL, *pos[2];
	bool json = false, snapshots = false, plain = false, decorate = false;
	int npos;
	cli_opt opts[] = {
		{.name = "json", .flag = &json, .help = "one version.json object per line"},
		{.name = "limit", .short_name = 'n', .value = &limit_s, .arg = "N", .help = "show at most N versions"},
		{.name = "snapshots", .flag = &snapshots, .help = "list the DuckLake snapshots (commit messages) under each version"},
		{.name = "decorate", .flag = &decorate, .help = "branches, tags and states beside the versions, not only on a terminal"},
		{.name = "no-decorate", .flag = &plain, .help = "no branches, tags or states beside the versions"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_log, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (decorate && plain) {
		fprintf(stderr, "fdl: --decorate and --no-decorate are each other's opposite; give one\n");
		return CLI_EXIT_USAGE;
	}
	long long limit = -1;
	if (limit_s && (rc = cli_count(&limit, "--limit", limit_s, CLI_COUNT_NUMBER)))
		return rc;
	fdl_repo *repo;
	const char *ref = npos > 1 ? pos[1] : NULL;
	char *owned = NULL;
	if ((rc = cli_open_repo_ref(&repo, pos[0], &ref, &owned)))
		return rc;
	fdl_error err = {0};
	fdl_log *log = NULL;
	/* the text shows only what a brief read gives: a third of the parsing */
	rc = json ? fdl_log_read(&log, repo, ref, limit, &err) : fdl_log_read_brief(&log, repo, ref, limit, &err);
	fdl_free(owned);
	if (rc == FDL_ENOTFOUND && !ref && log && !log->count) {
		/* an unborn HEAD branch: an empty history, like `git log` would refuse */
		fprintf(stderr, "fdl: %s\n", err.message);
		fdl_log_free(log);
		fdl_repo_free(repo);
		return cli_exit_code(rc);
	}
	fdl_error derr;
	bool marks = !json && !plain && (decorate || isatty(STDOUT_FILENO));
	if (marks && log && log->count && fdl_log_decorate(log, repo, &derr))
		fprintf(stderr, "fdl: (no branches, tags or states shown: %s)\n", derr.message);
	/* what was read before a failure is shown, then the failure */
	for (size_t i = 0; log && i < log->count; i++) {
		const fdl_version *v = log->items[i];
		if (json) {
			char *text;
			fdl_error jerr;
			if (fdl_version_to_json(&text, v, &jerr)) {
				if (!rc) {
					err = jerr;
					rc = jerr.code;
				}
				break;
			}
			/* one line per version: fold the pretty-printed JSON */
			for (char *p = text; *p; p++)
				if (*p == '\n')
					*p = ' ';
			printf("%s\n", text);
			fdl_free(text);
		} else {
			print_version(v, log->marks ? &log->marks[i] : NULL);
			if (snapshots)
				print_snapshots(repo, v);
		}
	}
	if (!rc && !json && log && log->withdrawn_end[0])
		printf("The history ends here: version %s, its first parent, was withdrawn with its version.json\n",
		       log->withdrawn_end);
	fdl_log_free(log);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	return 0;
}
