/* The fdl command line: one file per command (cmd_<name>.c), each a story
 * of calls into libfdl; this header is what they share. */
#ifndef FDL_CLI_H
#define FDL_CLI_H

#include "fdl.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit codes: 0 ok, 1 other failure, 2 usage, else the negated FDL_E*. */
#define CLI_EXIT_USAGE 2

/* What a REF (or VERSION) may be, printed once by every --help whose usage
 * takes one; fdl_ref_resolve() is the one resolver behind it. */
#define CLI_REFS_HELP                                                                              \
	"REF or VERSION, in every command: a branch or tag (a branch first), `HEAD` (the\n"          \
	"default), `refs/heads/NAME` or `refs/tags/NAME`, a version id, a unique start of one\n"    \
	"(at least 4 characters, as Git abbreviates), a seq on HEAD's branch (`12`) or on a\n"     \
	"branch or tag (`main:12`); any of them followed, as in Git, by `~N` (N first parents\n"  \
	"back: `main~1` is the version before main's tip) or `^N` (the Nth parent; `^` = `^1`).\n"

typedef struct cli_opt {
	const char *name;   /* long name without "--" */
	char short_name;    /* 0 for none */
	const char **value; /* set for options taking a value */
	bool *flag;         /* set for flags */
	const char *help;
	const char *arg; /* what the value is called in the help, NULL = "VALUE" */
	/* repeatable options: values appended to many[0..*nmany) (max_many) */
	const char **many;
	size_t *nmany;
	size_t max_many;
} cli_opt;

/* A command's documentation, the one source of its --help, its manual
 * page (--help=man) and its section of README (--help=markdown). `text` is
 * paragraphs parted by blank lines, `code` in backquotes; a paragraph whose
 * lines start with two spaces is shown as written. */
typedef struct cli_doc {
	const char *usage;    /* "fdl commit WORK [-m MESSAGE | -F FILE] ..." */
	const char *summary;  /* one line: fdl --help and the page's NAME */
	const char *text;     /* what it does, its errors and exit codes */
	const char *examples; /* shell lines, each ending in a newline; may be NULL */
	int min, max;         /* how many positional arguments it takes */
} cli_doc;

typedef struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const cli_doc *doc;
} cli_cmd;

/* Parse argv[1..] against a command's doc and options: options anywhere,
 * "--" ends them, positionals into pos (doc->min..doc->max). Returns
 * CLI_GO to go on, or the exit code to return: 0 after printing --help, 2
 * after a usage error (said on stderr with the usage). */
#define CLI_GO (-1)
int cli_parse(int argc, char **argv, const cli_doc *doc, const cli_opt *opts, const char **pos, int *npos);

/* A command's documentation in one form: "text", "man", "markdown" or
 * "options" (the option names, for completion); -1 for another form. */
int cli_print_doc(FILE *f, const cli_doc *doc, const cli_opt *opts, const char *form);

/* The shared prologue (common.c); each returns an exit code, 0 to go on.
 * Open the repository at root (the caller frees *out). */
int cli_open_repo(fdl_repo **out, const char *root);
/* The same for commands that take ROOT[@REF] and a REF argument: *ref in,
 * the REF to use out (*owned frees it); ROOT@REF with a REF too is exit 2. */
int cli_open_repo_ref(fdl_repo **out, const char *target, const char **ref, char **owned);
/* fdl branch and fdl tag: list, create (NAME [REF]) or --delete NAME. */
typedef enum { CLI_REF_BRANCHES, CLI_REF_TAGS } cli_ref_kind;
int cli_ref_command(int argc, char **argv, const cli_doc *doc, cli_ref_kind kind);
/* Open the repository at root and resolve ref (NULL: HEAD) to a version id. */
int cli_open_version(fdl_repo **out, char id[FDL_ID_LEN + 1], const char *root, const char *ref);
/* A count given to `option`: 0 or more, or with CLI_COUNT_OR_ALL also
 * "all", which gives -1. */
typedef enum { CLI_COUNT_NUMBER, CLI_COUNT_OR_ALL } cli_count_kind;
int cli_count(long long *out, const char *option, const char *value, cli_count_kind kind);
/* Print the JSON a report's _json function made (its rc, and where it put
 * the text: read only after the call) and free it. */
int cli_print_json(int rc, char **text, const fdl_error *err);

/* What expire and withdraw did to each version, and a list of names. */
void cli_print_removals(const char *what, const fdl_version_removal *v, size_t n, bool dry_run);
void cli_print_list(const char *before, const fdl_strarray *a, const char *after);

/* Print "fdl: <message>" and return the exit code for a libfdl error. */
int cli_fail(const fdl_error *err);
int cli_exit_code(int code);

/* One description change as a line: "licenses changed", "main.t.a: description added". */
void cli_print_desc_change(FILE *f, const fdl_desc_change *c, const char *indent);
/* One `changes` item as a line: "add_column main.t.note ... BREAKING". */
void cli_print_change(FILE *f, const fdl_change *change, const char *indent);

/* The commands: cmd_<name>() runs one, doc_<name> documents it. */
int cmd_init(int argc, char **argv);
extern const cli_doc doc_init;
int cmd_checkout(int argc, char **argv);
extern const cli_doc doc_checkout;
int cmd_commit(int argc, char **argv);
extern const cli_doc doc_commit;
int cmd_rebase(int argc, char **argv);
extern const cli_doc doc_rebase;
int cmd_log(int argc, char **argv);
extern const cli_doc doc_log;
int cmd_show(int argc, char **argv);
extern const cli_doc doc_show;
int cmd_attach(int argc, char **argv);
extern const cli_doc doc_attach;
int cmd_iceberg(int argc, char **argv);
extern const cli_doc doc_iceberg;
int cmd_preview(int argc, char **argv);
extern const cli_doc doc_preview;
int cmd_query(int argc, char **argv);
extern const cli_doc doc_query;
int cmd_export(int argc, char **argv);
extern const cli_doc doc_export;
int cmd_serve(int argc, char **argv);
extern const cli_doc doc_serve;
int cmd_verify(int argc, char **argv);
extern const cli_doc doc_verify;
int cmd_sign(int argc, char **argv);
extern const cli_doc doc_sign;
int cmd_config(int argc, char **argv);
extern const cli_doc doc_config;
int cmd_expire(int argc, char **argv);
extern const cli_doc doc_expire;
int cmd_withdraw(int argc, char **argv);
extern const cli_doc doc_withdraw;
int cmd_gc(int argc, char **argv);
extern const cli_doc doc_gc;
int cmd_clone(int argc, char **argv);
extern const cli_doc doc_clone;
int cmd_site(int argc, char **argv);
extern const cli_doc doc_site;
int cmd_catalogs(int argc, char **argv);
extern const cli_doc doc_catalogs;
int cmd_add(int argc, char **argv);
extern const cli_doc doc_add;
int cmd_describe(int argc, char **argv);
extern const cli_doc doc_describe;
/* Text with `code` spans, as roff paragraphs (for fdl(1)). */
void cli_man_text(FILE *f, const char *text);

int cmd_branch(int argc, char **argv);
extern const cli_doc doc_branch;
int cmd_tag(int argc, char **argv);
extern const cli_doc doc_tag;
int cmd_diff(int argc, char **argv);
extern const cli_doc doc_diff;
int cmd_run(int argc, char **argv);
extern const cli_doc doc_run;
/* How cli_verify prints fdl verify's report: as text, as JSON, or only
 * its problems (on stderr, for a command that verifies before it acts). */
typedef enum { CLI_VERIFY_TEXT, CLI_VERIFY_JSON, CLI_VERIFY_QUIET } cli_verify_output;
/* Verify the repository at root as `check` says (NULL: the defaults) and
 * print the report. Exit code: 0 clean, 5 problems. */
int cli_verify(const char *root, const fdl_verify_options *check, cli_verify_output output);
/* Who the author of a commit is, as Git finds it: --author "Name <email>"
 * (`spec`, or "Name"), then FDL_AUTHOR_NAME/EMAIL, GIT_AUTHOR_NAME/EMAIL,
 * then git config user.name/user.email run in `work`. False when nothing
 * names one. */
bool cli_author(const char *spec, const char *work, char *name, size_t nsz, char *email, size_t esz);
/* fdl_commit_options.warning: "fdl: warning: MESSAGE" on stderr. */
void cli_warning(const char *message, void *payload);
/* Say that nothing names an author, and how to name one; exit 2. */
int cli_no_author(void);

/* Upload or clone progress on stderr when it is a terminal and not `quiet`:
 * cli_progress_start returns the callback to hand to libfdl (NULL for
 * none), with the cli_progress as its payload. */
typedef struct cli_progress {
	char what[512];
	double started, shown;
	int64_t files_done, files_total; /* fdl clone's "clone files" */
} cli_progress;
fdl_progress_cb cli_progress_start(cli_progress *p, bool quiet);
void cli_progress_end(cli_progress *p);

/* SIGINT, SIGTERM and SIGHUP during a command that writes (interrupt.c):
 * cli_interrupt_start (before any other thread starts) has one thread wait
 * for them; on one it prints "fdl: WHAT interrupted (SIGNAL). MESSAGE",
 * calls `cleanup(tmp)` when `tmp` is set, removes libfdl's temporary
 * folders of this process and exits 128 + the signal. While a child runs
 * (cli_interrupt_fork starts it, noted before any signal is looked at;
 * cli_interrupt_child(ci, 0) when it ended) the signal is passed
 * to it and noted instead (cli_interrupt_got). A forked child calls
 * cli_interrupt_unblock before exec. cli_interrupt_end before returning. */
typedef struct cli_interrupt {
	pthread_t thread;
	pthread_mutex_t mu;
	bool started;
	char what[64];
	char message[512];
	char tmp[4096];
	void (*cleanup)(const char *tmp);
	pid_t child;
	int got;
} cli_interrupt;
int cli_interrupt_start(cli_interrupt *ci, const char *what, const char *message);
void cli_interrupt_say(cli_interrupt *ci, const char *message);
void cli_interrupt_child(cli_interrupt *ci, pid_t child);
pid_t cli_interrupt_fork(cli_interrupt *ci);
int cli_interrupt_got(cli_interrupt *ci);
void cli_interrupt_unblock(void);
void cli_interrupt_end(cli_interrupt *ci);

#endif
