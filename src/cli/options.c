/* Parsing a command's arguments, and its documentation in the three forms
 * that are made from the one source in its cmd_<name>.c (the cli_doc and
 * the option table): --help (text), --help=man (roff, for the manual
 * pages) and --help=markdown (README's section), plus --help=options (the
 * option names, for shell completion). */
#include "cli.h"

#include <string.h>

static const cli_opt *find(const cli_opt *opts, const char *name, size_t len, char short_name)
{
	for (const cli_opt *o = opts; o && o->name; o++) {
		if (short_name && o->short_name == short_name)
			return o;
		if (!short_name && strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	}
	return NULL;
}

/* "fdl: <what> '<arg>'" (or "--<arg> <what>" for an option's own
 * complaint), then the usage. */
static int usage_error(const cli_doc *doc, const char *what, const char *arg, bool option)
{
	if (option)
		fprintf(stderr, "fdl: option --%s %s\nusage: %s\n", arg, what, doc->usage);
	else
		fprintf(stderr, "fdl: %s%s%s%s\nusage: %s\n", what, arg ? " '" : "", arg ? arg : "", arg ? "'" : "",
			doc->usage);
	return CLI_EXIT_USAGE;
}

int cli_parse(int argc, char **argv, const cli_doc *doc, const cli_opt *opts, const char **pos, int *npos)
{
	*npos = 0;
	bool options_end = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options_end || a[0] != '-' || a[1] == '\0') {
			if (*npos >= doc->max)
				return usage_error(doc, "unexpected argument", a, false);
			pos[(*npos)++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			options_end = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strncmp(a, "--help", 6)) {
			const char *form = a[1] == 'h' || !a[6] ? "text" : a[6] == '=' ? a + 7 : "";
			if (cli_print_doc(stdout, doc, opts, form) != 0)
				return usage_error(doc, "--help takes text, man, markdown or options, not", form, false);
			return 0;
		}
		const cli_opt *o;
		const char *inline_value = NULL;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			o = find(opts, a + 2, len, 0);
			if (eq)
				inline_value = eq + 1;
		} else {
			o = a[2] == '\0' ? find(opts, NULL, 0, a[1]) : NULL;
		}
		if (!o)
			return usage_error(doc, "unknown option", a, false);
		if (o->flag) {
			if (inline_value)
				return usage_error(doc, "takes no value", o->name, true);
			*o->flag = true;
		} else if (inline_value || i + 1 < argc) {
			const char *v = inline_value ? inline_value : argv[++i];
			if (o->many) {
				if (*o->nmany >= o->max_many)
					return usage_error(doc, "is given too many times", o->name, true);
				o->many[(*o->nmany)++] = v;
			} else {
				*o->value = v;
			}
		} else {
			return usage_error(doc, "needs a value", o->name, true);
		}
	}
	if (*npos < doc->min)
		return usage_error(doc, "missing arguments", NULL, false);
	return CLI_GO;
}

/* ---- the documentation ------------------------------------------------------ */

/* "commit" from "fdl commit WORK ...". */
static void command_name(char *out, size_t size, const cli_doc *doc)
{
	const char *s = doc->usage + (strncmp(doc->usage, "fdl ", 4) ? 0 : 4);
	size_t n = strcspn(s, " ");
	snprintf(out, size, "%.*s", (int)n, s);
}

static void option_left(char *out, size_t size, const cli_opt *o)
{
	const char *arg = o->value || o->many ? (o->arg ? o->arg : "VALUE") : NULL;
	if (o->short_name)
		snprintf(out, size, "-%c, --%s%s%s", o->short_name, o->name, arg ? " " : "", arg ? arg : "");
	else
		snprintf(out, size, "--%s%s%s", o->name, arg ? " " : "", arg ? arg : "");
}

static bool takes_refs(const cli_doc *doc)
{
	return strstr(doc->usage, "REF") || strstr(doc->usage, "VERSION");
}

/* Call line() for each paragraph of `text` (blank lines part them); a
 * paragraph whose lines start with two spaces is literal. */
static void each_paragraph(const char *text, void (*para)(FILE *, const char *, size_t, bool), FILE *f)
{
	const char *p = text;
	while (p && *p) {
		while (*p == '\n')
			p++;
		const char *end = strstr(p, "\n\n");
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n)
			para(f, p, n, p[0] == ' ' && p[1] == ' ');
		p = end ? end + 2 : p + n;
	}
}

static void text_para(FILE *f, const char *p, size_t n, bool literal)
{
	(void)literal;
	fprintf(f, "%.*s\n\n", (int)n, p);
}

static void print_text(FILE *f, const cli_doc *doc, const cli_opt *opts)
{
	fprintf(f, "usage: %s\n\n", doc->usage);
	each_paragraph(doc->text, text_para, f);
	bool any = false;
	for (const cli_opt *o = opts; o && o->name; o++) {
		if (!any)
			fprintf(f, "options:\n");
		any = true;
		char left[64];
		option_left(left, sizeof left, o);
		fprintf(f, "  %-26s %s\n", left, o->help);
	}
	fprintf(f, "  %-26s %s\n", "-h, --help", "show this help (--help=man, --help=markdown)");
	if (takes_refs(doc))
		fprintf(f, "\n%s", CLI_REFS_HELP);
	if (doc->examples) {
		fputs("\nexamples:\n", f);
		for (const char *line = doc->examples; *line;) {
			size_t n = strcspn(line, "\n");
			fprintf(f, "  %.*s\n", (int)n, line);
			line += n + (line[n] == '\n');
		}
	}
}

/* roff text: backslashes escaped, a leading '.' or '\'' made literal,
 * `code` in bold. */
static void roff(FILE *f, const char *s, size_t n, bool line_start)
{
	bool code = false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (line_start && (c == '.' || c == '\''))
			fputs("\\&", f);
		line_start = c == '\n';
		if (c == '\\')
			fputs("\\e", f);
		else if (c == '-')
			fputs("\\-", f);
		else if (c == '`') {
			fputs(code ? "\\fR" : "\\fB", f);
			code = !code;
		} else
			fputc(c, f);
	}
	if (code)
		fputs("\\fR", f);
}

static void man_para(FILE *f, const char *p, size_t n, bool literal)
{
	fputs(literal ? ".PP\n.nf\n.RS 4\n" : ".PP\n", f);
	roff(f, p, n, true);
	fputs(literal ? "\n.RE\n.fi\n" : "\n", f);
}

void cli_man_text(FILE *f, const char *text)
{
	each_paragraph(text, man_para, f);
}

static void print_man(FILE *f, const cli_doc *doc, const cli_opt *opts)
{
	char name[64], upper[64];
	command_name(name, sizeof name, doc);
	for (size_t i = 0; i < sizeof upper; i++)
		upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
	fprintf(f, ".TH FDL-%s 1 \"\" \"fdl %s\" \"fdl manual\"\n.SH NAME\nfdl\\-%s \\- ", upper, fdl_libversion(), name);
	roff(f, doc->summary, strlen(doc->summary), false);
	fputs("\n.SH SYNOPSIS\n.B ", f);
	roff(f, doc->usage, strlen(doc->usage), false);
	fputs("\n.SH DESCRIPTION\n", f);
	each_paragraph(doc->text, man_para, f);
	fputs(".SH OPTIONS\n", f);
	for (const cli_opt *o = opts; o && o->name; o++) {
		char left[64];
		option_left(left, sizeof left, o);
		fputs(".TP\n.B ", f);
		roff(f, left, strlen(left), false);
		fputc('\n', f);
		roff(f, o->help, strlen(o->help), true);
		fputc('\n', f);
	}
	fputs(".TP\n.B \\-h, \\-\\-help\nshow this help\n", f);
	if (takes_refs(doc)) {
		fputs(".SH REFS\n", f);
		each_paragraph(CLI_REFS_HELP, man_para, f);
	}
	if (doc->examples) {
		fputs(".SH EXAMPLES\n.nf\n.RS 4\n", f);
		roff(f, doc->examples, strlen(doc->examples), true);
		fputs(".RE\n.fi\n", f);
	}
	fputs(".SH SEE ALSO\n.BR fdl (1)\n", f);
}

static void md_para(FILE *f, const char *p, size_t n, bool literal)
{
	if (!literal) {
		fprintf(f, "%.*s\n\n", (int)n, p);
		return;
	}
	fputs("```text\n", f); /* shown, not run (tests/interop/test_snippets.py) */
	for (const char *line = p, *end = p + n; line < end;) { /* without the two spaces */
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
		size_t skip = len >= 2 && line[0] == ' ' && line[1] == ' ' ? 2 : 0;
		fprintf(f, "%.*s\n", (int)(len - skip), line + skip);
		line += len + 1;
	}
	fputs("```\n\n", f);
}

static void print_markdown(FILE *f, const cli_doc *doc, const cli_opt *opts)
{
	fprintf(f, "### `%s`\n\n", doc->usage);
	each_paragraph(doc->text, md_para, f);
	bool any = false;
	for (const cli_opt *o = opts; o && o->name; o++) {
		char left[64];
		option_left(left, sizeof left, o);
		fprintf(f, "%s- `%s`: %s\n", any ? "" : "Options:\n\n", left, o->help);
		any = true;
	}
	if (any)
		fputc('\n', f);
	if (doc->examples)
		fprintf(f, "```sh\n%s```\n\n", doc->examples);
}

int cli_print_doc(FILE *f, const cli_doc *doc, const cli_opt *opts, const char *form)
{
	if (!strcmp(form, "text"))
		print_text(f, doc, opts);
	else if (!strcmp(form, "man"))
		print_man(f, doc, opts);
	else if (!strcmp(form, "markdown"))
		print_markdown(f, doc, opts);
	else if (!strcmp(form, "options"))
		for (const cli_opt *o = opts; o && o->name; o++)
			fprintf(f, "--%s\n", o->name);
	else
		return -1;
	return 0;
}

int cli_exit_code(int code)
{
	if (code == 0)
		return 0;
	if (code <= -3 && code >= -99)
		return -code;
	return 1;
}

int cli_fail(const fdl_error *err)
{
	fprintf(stderr, "fdl: %s\n", err->message[0] ? err->message : "failed");
	return cli_exit_code(err->code ? err->code : FDL_ERROR);
}
