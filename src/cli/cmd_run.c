/* fdl run: a pipeline step. Check out the branch tip into a temporary
 * working catalog, run COMMAND with variables telling it how to attach, and
 * commit only if COMMAND exited 0 and wrote a new snapshot or description. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *tempdir(void)
{
	const char *base = getenv("TMPDIR");
	char *t = malloc(4096);
	if (!t)
		return NULL;
	snprintf(t, 4096, "%s/fdl-run-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(t)) {
		free(t);
		return NULL;
	}
	return t;
}

/* Remove the temporary folder: the working catalog (through libfdl, which
 * checks it is one), then the folder itself. */
static void rm_tree(const char *dir)
{
	char *work = NULL;
	fdl_error ignore;
	if (asprintf(&work, "%s/work", dir) >= 0)
		fdl_work_remove(work, &ignore);
	free(work);
	rmdir(dir);
}

static int run_child(cli_interrupt *ci, char **cmd, const char *work, const char *repo_root, const char *branch_ref,
		     const char *attach)
{
	pid_t pid = cli_interrupt_fork(ci);
	if (pid < 0) {
		fprintf(stderr, "fdl: cannot start %s: %s\n", cmd[0], strerror(errno));
		return 1;
	}
	if (pid == 0) {
		char *catalog = NULL;
		if (asprintf(&catalog, "%s/ducklake.sqlite", work) < 0)
			_exit(127);
		char *url = NULL, *ext = fdl_extension_dir();
		if (asprintf(&url, "sqlite:///%s", catalog) < 0 || !ext)
			_exit(127);
		setenv("FDL_WORK", work, 1);
		setenv("FDL_CATALOG", catalog, 1);
		setenv("FDL_CATALOG_URL", url, 1);
		setenv("FDL_EXTENSION_DIR", ext, 1);
		setenv("FDL_REPOSITORY", repo_root, 1);
		setenv("FDL_ATTACH", attach, 1);
		if (branch_ref)
			setenv("FDL_BRANCH", branch_ref, 1);
		cli_interrupt_unblock(); /* COMMAND gets Ctrl-C as it would without fdl */
		execvp(cmd[0], cmd);
		fprintf(stderr, "fdl: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	cli_interrupt_child(ci, 0);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* Remove the temporary folder and free its names. */
static void cleanup(char *tmp, char *work)
{
	rm_tree(tmp);
	free(tmp);
	free(work);
}

/* Check the branch out into `work` and run COMMAND on it: 0 with
 * COMMAND's exit status in *code, else the exit code of what failed
 * (said). Frees repo. */
static int checkout_and_run(cli_interrupt *ci, fdl_repo *repo, const char *ref, const char *work, char **cmd,
			    int *code)
{
	fdl_error err = {0};
	fdl_checkout_options co = {.version = FDL_CHECKOUT_OPTIONS_VERSION, .ref = ref};
	char *attach = NULL;
	int rc = fdl_checkout(repo, work, &co, &err);
	char root[4096];
	snprintf(root, sizeof root, "%s", fdl_repo_root(repo));
	fdl_repo_free(repo);
	if (!rc)
		rc = fdl_work_attach_sql(&attach, work, "lake", &err);
	fdl_work_info *info = NULL;
	if (!rc)
		rc = fdl_work_info_read(&info, work, &err);
	if (rc) {
		fdl_free(attach);
		return cli_fail(&err);
	}
	setenv("FDL_BASE", info->base, 1);
	setenv("FDL_DATA_PATH", info->data_path, 1);
	*code = run_child(ci, cmd, work, root, info->branch, attach);
	fdl_work_info_free(info);
	fdl_free(attach);
	return 0;
}

/* Commit what COMMAND wrote in `work` (message NULL: "fdl run: COMMAND
 * ARGS"); the exit code. */
static int commit_work(const char *work, char **cmd, const char *message, const char *author)
{
	char msg[1024];
	if (!message) {
		snprintf(msg, sizeof msg, "fdl run:");
		for (char **c = cmd; *c && strlen(msg) + strlen(*c) + 2 < sizeof msg; c++) {
			strcat(msg, " ");
			strcat(msg, *c);
		}
		message = msg;
	}
	char name[256], email[256];
	if (!cli_author(author, work, name, sizeof name, email, sizeof email))
		return cli_no_author();
	fdl_error err = {0};
	fdl_commit_options o = {.version = FDL_COMMIT_OPTIONS_VERSION, .message = message, .author_name = name,
				.author_email = email, .warning = cli_warning};
	char id[FDL_ID_LEN + 1];
	int rc = fdl_commit(id, work, &o, &err);
	if (rc == FDL_ENOCHANGE) {
		printf("%s wrote no new snapshot and no new description; nothing to commit\n", cmd[0]);
		return 0;
	}
	if (rc)
		return cli_fail(&err);
	printf("Committed version %s\n", id);
	return 0;
}

const cli_doc doc_run = {
	.usage = "fdl run ROOT [--ref BRANCH] [-m MSG] [--author A] -- COMMAND [ARGS...]",
	.summary = "check out, run a build command, commit if it succeeded",
	.text = "A pipeline step: checks the branch tip out into a temporary working\n"
		"catalog, runs COMMAND, and commits only if it exits 0 and wrote a new\n"
		"snapshot or a new description (else \"nothing to commit\", exit 0).\n"
		"COMMAND's non-zero exit code is passed on with nothing committed; a\n"
		"publish by someone else meanwhile is a conflict (exit 4). Interrupted\n"
		"(Ctrl-C, SIGTERM, SIGHUP), it passes the signal to COMMAND, commits\n"
		"nothing, removes its temporary folder, says so and exits 128 + the\n"
		"signal. `--ref` names a branch that exists. COMMAND finds in\n"
		"its environment:\n"
		"\n"
		"  FDL_WORK          the temporary working catalog folder (a dataset.yml written here describes the version)\n"
		"  FDL_CATALOG       the SQLite DuckLake catalog file, $FDL_WORK/ducklake.sqlite\n"
		"  FDL_CATALOG_URL   the same as a URL, sqlite:////abs/path/ducklake.sqlite (dlt, SQLAlchemy)\n"
		"  FDL_DATA_PATH     where DuckDB writes the Parquet files (the working catalog's own work/<id>/)\n"
		"  FDL_ATTACH        the full LOAD + ATTACH SQL, catalog alias lake\n"
		"  FDL_EXTENSION_DIR the DuckDB extensions fdl loads: a DuckDB extension_directory, so tools load them offline\n"
		"  FDL_REPOSITORY    the repository root\n"
		"  FDL_BRANCH        the branch being built\n"
		"  FDL_BASE          the version the build starts from (empty on a new branch)\n"
		"\n"
		"with a `build.py` such as:\n"
		"\n"
		"  import os, duckdb\n"
		"  con = duckdb.connect()\n"
		"  con.execute(os.environ[\"FDL_ATTACH\"])\n"
		"  con.execute(\"CREATE OR REPLACE TABLE lake.population AS SELECT * FROM 'census.csv'\")",
	.examples = "fdl run /srv/population -m \"nightly rebuild\" -- python build.py\n",
	.min = 1,
	.max = 1,
};

int cmd_run(int argc, char **argv)
{
	/* split at "--": options and ROOT before, COMMAND after */
	int dash = -1;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	const char *ref = NULL, *message = NULL, *author = NULL, *pos[1];
	int npos;
	cli_opt opts[] = {
		{.name = "ref", .value = &ref, .arg = "BRANCH", .help = "branch to build on (default: HEAD's)"},
		{.name = "message", .short_name = 'm', .value = &message, .arg = "MSG", .help = "commit message (default: \"fdl run: COMMAND\")"},
		{.name = "author", .value = &author, .arg = "\"NAME <EMAIL>\"", .help = "who made it (default as for commit)"},
		{0},
	};
	int rc = cli_parse(dash < 0 ? argc : dash, argv, &doc_run, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (dash < 0 || dash + 1 >= argc) {
		fprintf(stderr, "fdl: run needs a command after --\nusage: %s\n", doc_run.usage);
		return CLI_EXIT_USAGE;
	}
	char **cmd = argv + dash + 1;
	fdl_repo *repo;
	if ((rc = cli_open_repo(&repo, pos[0])))
		return rc;
	char *tmp = tempdir();
	if (!tmp) {
		fdl_repo_free(repo);
		fprintf(stderr, "fdl: cannot make a temporary folder: %s\n", strerror(errno));
		return 6;
	}
	char *work = NULL;
	if (asprintf(&work, "%s/work", tmp) < 0) {
		fdl_repo_free(repo);
		free(tmp);
		return 1;
	}
	/* interrupted, it removes the temporary folder and says what it did */
	cli_interrupt ci;
	cli_interrupt_start(&ci, "run", "Nothing was committed; the temporary working catalog is removed.");
	snprintf(ci.tmp, sizeof ci.tmp, "%s", tmp);
	ci.cleanup = rm_tree;
	int code = 0;
	rc = checkout_and_run(&ci, repo, ref, work, cmd, &code);
	int sig = rc ? 0 : cli_interrupt_got(&ci);
	if (rc || sig || code != 0) {
		cli_interrupt_end(&ci);
		if (sig)
			fprintf(stderr, "\nfdl: run interrupted (%s) while %s ran. Nothing was committed; the temporary "
					"working catalog is removed.\n",
				strsignal(sig), cmd[0]);
		else if (!rc)
			fprintf(stderr, "fdl: %s exited %d; nothing committed\n", cmd[0], code);
		cleanup(tmp, work);
		return rc ? rc : sig ? 128 + sig : code;
	}
	cli_interrupt_say(&ci, "It was committing: fdl log ROOT shows whether the version was published (a version is "
			       "published whole or not at all); the temporary working catalog is removed.");
	rc = commit_work(work, cmd, message, author);
	cli_interrupt_end(&ci);
	cleanup(tmp, work);
	return rc;
}
