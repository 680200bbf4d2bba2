/* fdl verify: check a repository like git fsck.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"


const cli_doc doc_verify = {
	.usage = "fdl verify ROOT [--deep] [--reachable] [--json] [--signatures --allowed-signers FILE]",
	.summary = "check a repository like git fsck",
	.text = "Checks a repository like `git fsck` and names every problem with the file\n"
		"it is in: refs and `HEAD`; each `version.json` (must fields, id =\n"
		"directory, seq and first parent); the bytes and sha256 of every file it\n"
		"lists; any file a version may not hold, and anything under `versions/` or\n"
		"`refs/` that does not belong there (a stray file, a symbolic link:\n"
		"reported, never followed); `expired.json` field by field, the names under\n"
		"`catalogs/`, the history index and ref list, and the Iceberg views. Data\n"
		"files come from each version's `files.json` (its bytes proven by\n"
		"`version.json`): every live file there, of its recorded size, and every\n"
		"file of its sha256 map with that sha256, each read once however many\n"
		"versions share it. This default depth reads each file once, streamed, on\n"
		"every core, and costs about what `sha256sum` of the same files costs; it\n"
		"opens no catalog, except that of a version whose `files.json` is absent\n"
		"or records no data hashes (written before fdl recorded them, or by\n"
		"another writer: named in a warning, its data checked by size from the\n"
		"catalog).\n"
		"\n"
		"`--deep` also opens every live catalog in DuckDB and derives it again: it\n"
		"stops at `version.json`'s snapshot, `files.json` says what it holds (the\n"
		"tables, files, rows and columns, and a sha256 map naming every file of\n"
		"every snapshot and no other), and the column statistics DuckDB answers\n"
		"`min()` and `max()` from are those of its data files. It costs ~30 ms of\n"
		"DuckDB per version on top. What only it finds is what a writer got wrong\n"
		"when it wrote the version (recorded with matching hashes): a `files.json`\n"
		"or statistics that disagree with the catalog, a catalog past its snapshot,\n"
		"a time-travel file the sha256 map leaves out. A byte changed after\n"
		"writing is found at either depth.\n"
		"\n"
		"Every version is checked, as `git fsck` checks every object, those no ref\n"
		"reaches too (a branch moved back, a deleted branch); `--reachable` checks\n"
		"only the versions reachable from refs, and the summary says how many it\n"
		"left out. With `--signatures`, every signature a checked version carries\n"
		"must be good, by a key in the allowed signers file, and every version a\n"
		"branch or tag names must carry one (sign each new tip: `fdl sign ROOT\n"
		"main`); an older version without one is named in a warning, as `git log\n"
		"--show-signature` notes a commit with none. Versions are\n"
		"checked on every core (at most 8; `FDL_VERIFY_THREADS=N` sets how many);\n"
		"the report is the same, in the same order. Exit 0 only when clean, 5\n"
		"otherwise.\n"
		"\n"
		"ROOT may be an `http(s)://` host (with a token, as every command finds\n"
		"one: docs/private.md). Such a host lists no folder, so verify walks from\n"
		"each ref its ref list names (or `HEAD`'s branch) through every parent,\n"
		"and a warning says what it cannot see: versions no ref reaches, stray\n"
		"files, `catalogs/`, history packs no index names and the Iceberg views.\n"
		"Verify the folder it serves, or a clone, for those.",
	.examples = "fdl verify /srv/population\n"
		    "fdl verify /srv/population --deep\n",
	.min = 1,
	.max = 1,
};

int cmd_verify(int argc, char **argv)
{
	const char *pos[1], *allowed = NULL;
	bool all = false, reachable = false, json = false, sigs = false, deep = false;
	int npos;
	cli_opt opts[] = {
		{.name = "reachable", .flag = &reachable, .help = "only the versions reachable from refs"},
		{.name = "all", .flag = &all, .help = "every version directory (the default; kept for scripts)"},
		{.name = "deep", .flag = &deep, .help = "also open every live catalog and derive its files.json, snapshot and statistics again"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{.name = "signatures", .flag = &sigs, .help = "also check every version.json.sig, and require one on what a branch or tag names"},
		{.name = "allowed-signers", .value = &allowed, .arg = "FILE", .help = "OpenSSH allowed_signers file (with --signatures)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_verify, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (sigs != (allowed != NULL)) {
		fprintf(stderr, "fdl: --signatures and --allowed-signers FILE go together\n");
		return CLI_EXIT_USAGE;
	}
	if (all && reachable) {
		fprintf(stderr, "fdl: --all and --reachable are each other's opposite; give one\n");
		return CLI_EXIT_USAGE;
	}
	fdl_verify_options check = FDL_VERIFY_OPTIONS_INIT;
	check.reachable_only = reachable;
	check.allowed_signers = allowed;
	check.deep = deep;
	return cli_verify(pos[0], &check, json ? CLI_VERIFY_JSON : CLI_VERIFY_TEXT);
}
