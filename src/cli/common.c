/* The prologue every command shares: open the repository, resolve a ref,
 * print a report's JSON. Each returns an exit code (0 to go on). */
#include "cli.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Open the repository `target` names; with `ref` not NULL, *ref gets the
 * REF of ROOT@REF (or keeps the positional one it holds; both at once is a
 * usage error). Without `ref`, ROOT@REF is refused: the command takes none. */
static int open_target(fdl_repo **out, const char *target, const char **ref, char **owned)
{
	fdl_error err = {0};
	char *root = NULL, *at = NULL;
	*out = NULL;
	*owned = NULL;
	if (fdl_target_split(&root, &at, target, &err))
		return cli_fail(&err);
	int rc = 0;
	if (at && !ref) {
		fprintf(stderr, "fdl: '%s' names a version after '@', and this command takes only a repository; give %s\n",
			target, root);
		rc = CLI_EXIT_USAGE;
	} else if (at && *ref) {
		fprintf(stderr, "fdl: '%s' names a version after '@' and '%s' names another; give one\n", target,
			*ref);
		rc = CLI_EXIT_USAGE;
	} else if (at) {
		*ref = *owned = at;
		at = NULL;
	}
	if (!rc && fdl_repo_open(out, root, &err))
		rc = cli_fail(&err);
	fdl_free(root);
	fdl_free(at);
	if (rc) {
		fdl_free(*owned);
		*owned = NULL;
	}
	return rc;
}

int cli_open_repo(fdl_repo **out, const char *root)
{
	char *owned;
	return open_target(out, root, NULL, &owned);
}

int cli_open_repo_ref(fdl_repo **out, const char *target, const char **ref, char **owned)
{
	return open_target(out, target, ref, owned);
}

int cli_open_version(fdl_repo **out, char id[FDL_ID_LEN + 1], const char *root, const char *ref)
{
	char *owned = NULL;
	int rc = open_target(out, root, &ref, &owned);
	if (rc)
		return rc;
	fdl_error err = {0};
	if (fdl_ref_resolve(id, *out, ref, &err)) {
		fdl_repo_free(*out);
		*out = NULL;
		rc = cli_fail(&err);
	}
	fdl_free(owned);
	return rc;
}

int cli_print_json(int rc, char **text, const fdl_error *err)
{
	if (!rc)
		fputs(*text, stdout);
	fdl_free(*text);
	*text = NULL;
	return rc ? cli_fail(err) : 0;
}

int cli_count(long long *out, const char *option, const char *value, cli_count_kind kind)
{
	bool all = kind == CLI_COUNT_OR_ALL;
	if (all && !strcmp(value, "all")) {
		*out = -1;
		return 0;
	}
	char *end;
	long long n = strtoll(value, &end, 10);
	if (!*value || *end || n < 0) {
		fprintf(stderr, "fdl: %s expects a number%s, got '%s'\n", option, all ? " or 'all'" : "", value);
		return CLI_EXIT_USAGE;
	}
	*out = n;
	return 0;
}

void cli_print_removals(const char *what, const fdl_version_removal *v, size_t n, bool dry_run)
{
	for (size_t i = 0; i < n; i++) {
		printf("%s %s", what, v[i].id);
		for (size_t k = 0; k < v[i].removed.count; k++)
			printf("%s %s", k ? "," : (dry_run ? ": would remove" : ": removed"), v[i].removed.strings[k]);
		printf("\n");
	}
}

void cli_print_list(const char *before, const fdl_strarray *a, const char *after)
{
	for (size_t i = 0; i < a->count; i++)
		printf("%s%s%s\n", before, a->strings[i], after);
}

/* One ref's line: "  NAME  ID (seq N) MESSAGE", `*` for HEAD's branch. */
static void ref_line(fdl_repo *repo, const char *name, const char *id, int mark)
{
	fdl_version *v = NULL;
	fdl_error verr;
	long long seq = fdl_version_read(&v, repo, id, &verr) ? -1 : (long long)fdl_version_seq(v);
	if (mark >= 0)
		printf("%c ", mark ? '*' : ' ');
	printf("%-20s %s", name, id);
	if (seq > 0)
		printf(" (seq %lld) %s\n", seq, fdl_version_message(v));
	else
		printf(" (unreadable: %s)\n", verr.message);
	fdl_version_free(v);
}

/* fdl branch NAME START --force: move it, saying from where (the way back). */
static int branch_force(fdl_repo *repo, const char *name, const char *start, fdl_error *err)
{
	char old[FDL_ID_LEN + 1], now[FDL_ID_LEN + 1];
	int rc = fdl_branch_set(old, repo, name, start, err);
	if (!rc)
		rc = fdl_ref_resolve(now, repo, name, err);
	if (rc)
		return rc;
	if (!old[0])
		printf("Created branch %s at %s\n", name, now);
	else if (!strcmp(old, now))
		printf("Branch %s is already at %s; nothing moved\n", name, now);
	else
		printf("Moved branch %s from %s to %s\nTo move it back: fdl branch %s %s %s --force\n", name, old, now,
		       fdl_repo_root(repo), name, old);
	return 0;
}

int cli_ref_command(int argc, char **argv, const cli_doc *doc, cli_ref_kind kind)
{
	bool tags = kind == CLI_REF_TAGS;
	const char *del = NULL, *set_head = NULL, *pos[3];
	bool force = false;
	int npos;
	cli_opt opts[4] = {
		{.name = "delete", .short_name = 'd', .value = &del, .arg = "NAME",
		 .help = tags ? "delete tag NAME" : "delete branch NAME (not the one HEAD names)"},
	};
	if (!tags) { /* a tag names one version for good: it has neither */
		opts[1] = (cli_opt){.name = "force", .short_name = 'f', .flag = &force,
				    .help = "move NAME to START-REF even if it exists (back to an older version too)"};
		opts[2] = (cli_opt){.name = "set-head", .value = &set_head, .arg = "NAME",
				    .help = "make HEAD name branch NAME (the default branch)"};
	}
	int rc = cli_parse(argc, argv, doc, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if ((del != NULL) + (set_head != NULL) > 1 || ((del || set_head) && (npos > 1 || force))) {
		fprintf(stderr, "fdl: --delete NAME and --set-head NAME take no other NAME, and not each other\n");
		return CLI_EXIT_USAGE;
	}
	if (force && npos < 2) {
		fprintf(stderr, "fdl: --force moves a branch: give NAME (and START-REF)\n");
		return CLI_EXIT_USAGE;
	}
	fdl_repo *repo;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	fdl_error err = {0};
	const char *noun = tags ? "tag" : "branch";
	if (del) {
		rc = tags ? fdl_tag_delete(repo, del, &err) : fdl_branch_delete(repo, del, &err);
		if (!rc)
			printf("Deleted %s %s\n", noun, del);
	} else if (set_head) {
		char *was = NULL;
		fdl_error ignore;
		fdl_repo_head_branch(&was, repo, &ignore);
		rc = fdl_repo_head_set(repo, set_head, &err);
		if (!rc)
			printf("HEAD now names branch %s%s%s%s\n", set_head, was ? " (it named " : "", was ? was : "",
			       was ? ")" : "");
		fdl_free(was);
	} else if (force) {
		rc = branch_force(repo, pos[1], npos > 2 ? pos[2] : NULL, &err);
	} else if (npos > 1) {
		const char *start = npos > 2 ? pos[2] : NULL;
		rc = tags ? fdl_tag_create(repo, pos[1], start, &err) : fdl_branch_create(repo, pos[1], start, &err);
		if (!rc)
			printf("Created %s %s\n", noun, pos[1]);
	} else if (tags) {
		fdl_tag *list = NULL;
		size_t n = 0;
		rc = fdl_tag_list(&list, &n, repo, &err);
		for (size_t i = 0; !rc && i < n; i++)
			ref_line(repo, list[i].name, list[i].target, -1);
		fdl_tag_list_free(list);
	} else {
		fdl_branch *list = NULL;
		size_t n = 0;
		rc = fdl_branch_list(&list, &n, repo, &err);
		for (size_t i = 0; !rc && i < n; i++)
			ref_line(repo, list[i].name, list[i].tip, list[i].head);
		fdl_branch_list_free(list);
	}
	fdl_repo_free(repo);
	return rc ? cli_fail(&err) : 0;
}

/* ---- helpers of several commands --------------------------------------------- */

/* "add_column main.t.note", with the old name or type where there is one. */
void cli_print_change(FILE *f, const fdl_change *c, const char *indent)
{
	fprintf(f, "%s%-16s %s%s%s", indent, c->kind ? c->kind : "?", c->table ? c->table : "?", c->column ? "." : "",
		c->column ? c->column : "");
	if (c->from)
		fprintf(f, " (was %s)", c->from);
	if (c->from_type && c->type)
		fprintf(f, " (%s -> %s)", c->from_type, c->type);
	else if (c->type)
		fprintf(f, " %s", c->type);
	if (c->breaking)
		fprintf(f, "  BREAKING");
	fprintf(f, "\n");
}

/* "licenses changed", "main.t.a: description added". */
void cli_print_desc_change(FILE *f, const fdl_desc_change *c, const char *indent)
{
	fprintf(f, "%s%s%s%s%s%s %s\n", indent, c->table ? c->table : "", c->column ? "." : "", c->column ? c->column : "",
		c->table ? ": " : "", c->field, c->kind);
}

/* Run fdl_verify and print its report; returns the exit code. */
int cli_verify(const char *root, const fdl_verify_options *check, cli_verify_output output)
{
	bool json = output == CLI_VERIFY_JSON, quiet = output == CLI_VERIFY_QUIET;
	fdl_error err = {0};
	fdl_repo *repo;
	if (fdl_repo_open(&repo, root, &err))
		return cli_fail(&err);
	fdl_verify_report *r = NULL;
	int rc = fdl_verify(&r, repo, check, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	if (json) {
		char *text = NULL;
		if ((rc = cli_print_json(fdl_verify_report_json(&text, r, &err), &text, &err))) {
			fdl_verify_report_free(r);
			return rc;
		}
	} else {
		FILE *f = quiet ? stderr : stdout;
		for (size_t i = 0; i < r->problem_count; i++)
			fprintf(f, "problem: %s: %s\n", r->problems[i].where, r->problems[i].what);
		for (size_t i = 0; i < r->signature_count && !quiet; i++)
			printf("good signature: %s by %s\n", r->signatures[i].id, r->signatures[i].signer);
		for (size_t i = 0; i < r->warning_count; i++)
			fprintf(f, "warning: %s: %s\n", r->warnings[i].where, r->warnings[i].what);
		if (!quiet || r->problem_count)
			fprintf(f, "%zu version%s checked, %zu problem%s\n", r->versions_checked,
				r->versions_checked == 1 ? "" : "s", r->problem_count, r->problem_count == 1 ? "" : "s");
		if (r->versions_unchecked && (!quiet || r->problem_count))
			fprintf(f, "%zu version%s no ref reaches %s not checked: fdl verify without --reachable "
				   "checks them too\n",
				r->versions_unchecked, r->versions_unchecked == 1 ? "" : "s",
				r->versions_unchecked == 1 ? "was" : "were");
	}
	rc = r->problem_count ? 5 : 0;
	fdl_verify_report_free(r);
	return rc;
}

/* user.name and user.email as `git config` run in `dir` finds them (so a
 * Git repository's own config counts, as in Git), in one run of git (each
 * costs ~6 ms): records "key\nvalue\0" (-z: a value may hold a newline),
 * the last value of each key winning, as in Git; "" when git or the key is
 * absent. Output past the buffer is read and dropped, so git ends well. */
static void git_identity(char *name, size_t nsz, char *email, size_t esz, const char *dir)
{
	char out[8192], drop[512];
	name[0] = email[0] = '\0';
	int fds[2];
	if (pipe(fds) != 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDOUT_FILENO);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		if (dir && chdir(dir) != 0 && chdir("/") != 0)
			_exit(127);
		execlp("git", "git", "config", "-z", "--get-regexp", "^user\\.(name|email)$", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	size_t n = 0;
	for (ssize_t got = 1; pid > 0 && got > 0;) {
		if (n + 1 < sizeof out) {
			if ((got = read(fds[0], out + n, sizeof out - 1 - n)) > 0)
				n += (size_t)got;
		} else
			got = read(fds[0], drop, sizeof drop);
	}
	close(fds[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (pid <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		n = 0;
	for (size_t at = 0; at < n;) {
		const char *rec = out + at, *nl = memchr(rec, '\n', n - at), *end = memchr(rec, '\0', n - at);
		if (!end)
			break;
		at = (size_t)(end - out) + 1;
		if (!nl || nl > end)
			continue; /* a key with no value */
		if ((size_t)(nl - rec) == 9 && !memcmp(rec, "user.name", 9))
			snprintf(name, nsz, "%s", nl + 1);
		else if ((size_t)(nl - rec) == 10 && !memcmp(rec, "user.email", 10))
			snprintf(email, esz, "%s", nl + 1);
	}
}

/* Who the author is, as Git finds it: --author "Name <email>" (or "Name"),
 * then FDL_AUTHOR_NAME/EMAIL, GIT_AUTHOR_NAME/EMAIL, then git config
 * user.name/user.email. Returns false when nothing names one. */
bool cli_author(const char *spec, const char *work, char *name, size_t nsz, char *email, size_t esz)
{
	name[0] = email[0] = '\0';
	if (spec) {
		const char *lt = strchr(spec, '<'), *gt = lt ? strchr(lt, '>') : NULL;
		size_t n = lt && gt ? (size_t)(lt - spec) : strlen(spec);
		while (n && spec[n - 1] == ' ')
			n--;
		snprintf(name, nsz, "%.*s", (int)n, spec);
		if (lt && gt)
			snprintf(email, esz, "%.*s", (int)(gt - lt - 1), lt + 1);
		return name[0] != '\0';
	}
	const char *vars[][2] = {{"FDL_AUTHOR_NAME", "FDL_AUTHOR_EMAIL"}, {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"}};
	for (size_t i = 0; i < 2; i++) {
		const char *n = getenv(vars[i][0]);
		if (n && *n) {
			const char *e = getenv(vars[i][1]);
			snprintf(name, nsz, "%s", n);
			snprintf(email, esz, "%s", e ? e : "");
			return true;
		}
	}
	git_identity(name, nsz, email, esz, work);
	return name[0] != '\0';
}

void cli_warning(const char *message, void *payload)
{
	(void)payload;
	fprintf(stderr, "fdl: warning: %s\n", message);
}

int cli_no_author(void)
{
	fprintf(stderr, "fdl: who is the author of this version? Nothing names one: give --author \"NAME "
			"<EMAIL>\", set FDL_AUTHOR_NAME (and FDL_AUTHOR_EMAIL), or run\n"
			"  git config --global user.name \"Your Name\"\n"
			"  git config --global user.email you@example.org\n");
	return CLI_EXIT_USAGE;
}
