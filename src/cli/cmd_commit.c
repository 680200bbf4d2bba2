/* fdl commit: freeze a working catalog into a new version and move its branch.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Read a whole message from FILE, or stdin for "-" (at most 1 MiB). */
static char *read_message(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f) {
		fprintf(stderr, "fdl: cannot read the message from %s: %s\n", path, strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap + 1);
	if (buf)
		n = fread(buf, 1, cap + 1, f);
	bool failed = !buf || ferror(f) || n > cap;
	if (f != stdin)
		fclose(f);
	if (failed) {
		fprintf(stderr, "fdl: cannot read the message from %s: %s\n", path,
			buf && n > cap ? "longer than 1 MiB" : "read error");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (memchr(buf, '\0', n)) {
		fprintf(stderr, "fdl: the message in %s holds a NUL byte\n", path);
		free(buf);
		return NULL;
	}
	return buf;
}

/* Git's "strip" cleanup: drop '#' lines (when asked), trailing spaces on
 * each line, and blank lines at the start and end; in place. */
static void clean_message(char *msg, bool strip_comments)
{
	char *w = msg;
	for (char *line = msg; *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *next = nl ? nl + 1 : line + len;
		if (!(strip_comments && line[0] == '#')) {
			size_t keep = len;
			while (keep && (line[keep - 1] == ' ' || line[keep - 1] == '\t' || line[keep - 1] == '\r'))
				keep--;
			if (keep || w != msg) { /* no blank lines at the start */
				memmove(w, line, keep);
				w += keep;
				*w++ = '\n';
			}
		}
		line = next;
	}
	while (w > msg && (w[-1] == '\n'))
		w--;
	*w = '\0';
}

/* The message from $FDL_EDITOR, $GIT_EDITOR, $VISUAL or $EDITOR (run by the
 * shell, as Git does), on a temporary COMMIT_EDITMSG; NULL when no editor is set
 * and stdin is not a terminal, or when the editor failed. */
static char *edit_message(const char *work)
{
	const char *vars[] = {"FDL_EDITOR", "GIT_EDITOR", "VISUAL", "EDITOR"};
	const char *editor = NULL;
	for (size_t i = 0; i < 4 && !editor; i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			editor = getenv(vars[i]);
	if (!editor && !isatty(STDIN_FILENO))
		return NULL;
	char path[4096];
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/fdl-COMMIT_EDITMSG-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		fprintf(stderr, "fdl: cannot write %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	fprintf(f, "\n# Committing %s.\n", work);
	fputs("# What changed in this version? Lines starting with '#' are left out;\n"
	      "# an empty message aborts the commit.\n", f);
	fclose(f);
	pid_t pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exec $0 \"$1\"", editor ? editor : "vi", path, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "fdl: the editor '%s' failed; nothing committed\n", editor ? editor : "vi");
		unlink(path);
		return NULL;
	}
	char *msg = read_message(path);
	unlink(path);
	if (msg)
		clean_message(msg, true);
	return msg;
}

/* --rebase: commits tried in all before giving up (each lost race means
 * another writer's version was published). */
#define COMMIT_TRIES 8

const cli_doc doc_commit = {
	.usage = "fdl commit WORK [-m MESSAGE | -F FILE] [--author \"NAME <EMAIL>\"] [--input ID=FILE_OR_URL]... [--rebase] "
		 "[--compact] [-q]",
	.summary = "freeze a working catalog into a new version and move its branch",
	.text = "Freezes the working catalog's latest snapshot into a new version\n"
		"(`versions/<uuidv7>/` with `ducklake.duckdb`, `dataset.json`, `files.json`,\n"
		"`version.json`) and moves the branch by compare-and-swap. If someone else\n"
		"moved the branch since the checkout, nothing is published and the message\n"
		"names both versions (exit 4): `fdl rebase WORK` replays WORK's changes on the\n"
		"new tip, then commit again. With `--rebase`, commit does that itself when it\n"
		"loses such a race, and commits again, up to 8 times; a conflict of the\n"
		"rebase stops it (exit 4, see `fdl rebase`). Every data file added since\n"
		"the checkout must be in the working catalog's own folder in the repository\n"
		"(`work/<id>/`), from which the commit puts it into the data folder (a hard\n"
		"link, or a copy inside the bucket) before it writes the version; once\n"
		"published, the working catalog records it there and its copy goes. Each\n"
		"new file is read once for its sha256, which `files.json` records (a file\n"
		"the base version recorded is carried over, not read again). A base version\n"
		"withdrawn since the checkout is refused (exit 7), and so is a commit that\n"
		"finds a data file of its base gone from the data folder (DuckLake deleted\n"
		"it), naming it (exit 5), and a first commit creating a branch with a tag's\n"
		"name (exit 9).\n"
		"\n"
		"With no new snapshot, a changed description alone makes a version (same\n"
		"snapshot, new `dataset.json`); with neither it is \"nothing to commit\"\n"
		"(exit 8), and a broken description fails first (exit 5). The description\n"
		"in WORK (see `fdl describe`) becomes the version's `dataset.json`;\n"
		"`changes` lists the column and table differences from the parent, each\n"
		"with `breaking`.\n"
		"\n"
		"The message comes from `-m`, from a file with `-F FILE` (`-F -`: stdin), or\n"
		"from your editor (`$FDL_EDITOR`, `$GIT_EDITOR`, `$VISUAL`, `$EDITOR`; `#`\n"
		"lines dropped). The author defaults to `$FDL_AUTHOR_NAME <$FDL_AUTHOR_EMAIL>`,\n"
		"then `$GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>`, then `git config user.name` and\n"
		"`user.email`; when nothing names one, the commit is refused (exit 2).\n"
		"\n"
		"`--input SOURCE_ID=FILE_OR_URL` (repeatable) records a source file in\n"
		"`version.json`'s `inputs`: its sha256 (streamed, whatever its size), when it\n"
		"was retrieved (a file's modification time; now for an `http(s)` URL, fetched\n"
		"with libcurl) and its URL. On a terminal, uploads to a bucket show their\n"
		"progress on stderr; `-q` prints only the new version id.\n"
		"\n"
		"A table whose live data files are mostly small (over 50 under 1 MiB) costs\n"
		"every reader a request and a footer per file: commit warns, naming the\n"
		"DuckDB call that merges them (`ducklake_merge_adjacent_files`).\n"
		"`--compact` runs it on the working catalog first, as a new snapshot of it,\n"
		"and freezes the result; the files it merged stay for the older versions\n"
		"that read them.\n"
		"\n"
		"Each commit builds the new frozen catalog from the base version's plus the\n"
		"rows added or ended since; it freezes in full where the base cannot serve\n"
		"(a first version, another DuckLake format, another writer's layout), and\n"
		"`FDL_TRACE=1` says which and why (`FDL_FREEZE=full` forces the full one).\n"
		"\n"
		"Interrupted (Ctrl-C, SIGTERM, SIGHUP), it says so, removes its temporary\n"
		"folder and exits 128 + the signal: a version is published whole or not at\n"
		"all, and the same `fdl commit` run again finishes the job.",
	.examples = "fdl checkout /srv/population work > attach.sql\n"
		    "duckdb -init attach.sql -c \"INSERT INTO lake.population FROM 'examples/population-2025.csv'\"\n"
		    "fdl commit work -m \"Add the final 2025 figures\" --author \"Example City <data@example.org>\" \\\n"
		    "  --input census:2025=examples/population-2025.csv\n"
		    "duckdb -init attach.sql -c \"UPDATE lake.population SET people = people + 1 WHERE town_code = (SELECT min(town_code) FROM lake.population)\"\n"
		    "echo 'Corrections from the town office' > release-notes.txt\n"
		    "fdl commit work -F release-notes.txt\n",
	.min = 1,
	.max = 1,
};

int cmd_commit(int argc, char **argv)
{
	const char *message = NULL, *message_file = NULL, *author = NULL, *pos[1], *inputs[256];
	size_t ninputs = 0;
	bool quiet = false, rebase = false, compact = false;
	int npos;
	cli_opt opts[] = {
		{.name = "message", .short_name = 'm', .value = &message, .arg = "MESSAGE", .help = "what changed"},
		{.name = "file", .short_name = 'F', .value = &message_file, .arg = "FILE", .help = "take the message from FILE ('-': stdin)"},
		{.name = "author", .value = &author, .arg = "\"NAME <EMAIL>\"", .help = "who made it (default: $FDL_AUTHOR_NAME, $GIT_AUTHOR_NAME, git config user.name)"},
		{.name = "quiet", .short_name = 'q', .flag = &quiet, .help = "print only the new version id, no upload progress"},
		{.name = "rebase", .flag = &rebase, .help = "after a lost race, rebase onto the new tip and commit again"},
		{.name = "compact", .flag = &compact, .help = "merge the working catalog's small data files first (ducklake_merge_adjacent_files)"},
		{.name = "input", .arg = "ID=FILE_OR_URL", .help = "record a source file in version.json's inputs (repeatable)", .many = inputs,
		 .nmany = &ninputs, .max_many = 256},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_commit, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (message && message_file) {
		fprintf(stderr, "fdl: give the message with -m or with -F, not both\n");
		return CLI_EXIT_USAGE;
	}
	char name[256], email[256];
	if (!cli_author(author, pos[0], name, sizeof name, email, sizeof email))
		return cli_no_author();
	char *text = NULL;
	if (message_file && !(text = read_message(message_file)))
		return 1;
	if (text)
		clean_message(text, false);
	else if (!message && !(text = edit_message(pos[0]))) {
		fprintf(stderr, "fdl: commit needs a message: -m MESSAGE, -F FILE, or an editor ($EDITOR)\n");
		return CLI_EXIT_USAGE;
	}
	if (text)
		message = text;
	if (!*message) {
		fprintf(stderr, "fdl: the message is empty; nothing committed\n");
		free(text);
		return CLI_EXIT_USAGE;
	}
	cli_progress progress;
	fdl_commit_options o = {.version = FDL_COMMIT_OPTIONS_VERSION, .message = message, .author_name = name, .author_email = email,
				.inputs = inputs, .input_count = ninputs,
				.progress = cli_progress_start(&progress, quiet), .progress_payload = &progress,
				.compact = compact, .warning = cli_warning};
	fdl_error err = {0};
	char id[FDL_ID_LEN + 1];
	int rebases = 0;
	cli_interrupt ci;
	cli_interrupt_start(&ci, "commit",
			    "Nothing half-written is left: run the same fdl commit again, and it publishes what this "
			    "one had not, or records the version it had published.");
	rc = rebase ? fdl_commit_rebase(id, &rebases, pos[0], &o, COMMIT_TRIES, &err) : fdl_commit(id, pos[0], &o, &err);
	cli_interrupt_end(&ci);
	cli_progress_end(&progress);
	free(text);
	if (rc)
		return cli_fail(&err);
	if (quiet)
		printf("%s\n", id);
	else if (rebases)
		printf("Committed version %s (rebased %d time%s onto commits that won the race)\n", id, rebases,
		       rebases == 1 ? "" : "s");
	else
		printf("Committed version %s\n", id);
	return 0;
}
