/* fdl verify: check a repository like git fsck.
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"


const cli_doc doc_verify = {
	.usage = "fdl verify ROOT [--reachable] [--json] [--signatures --allowed-signers FILE]",
	.summary = "check a repository like git fsck",
	.text = "Checks a repository like `git fsck` and names every problem with the file\n"
		"it is in: refs and `HEAD`; each `version.json` (must fields, id =\n"
		"directory, seq and first parent); the bytes and sha256 of every file it\n"
		"lists; any file a version may not hold, and anything under `versions/` or\n"
		"`refs/` that does not belong there (a stray file, a symbolic link:\n"
		"reported, never followed); and for every live catalog its last snapshot,\n"
		"every data file it references (present, recorded size, and the sha256\n"
		"`files.json` records, each file read once however many versions share\n"
		"it) and that `files.json` agrees with it. A version written before fdl\n"
		"recorded data hashes is named in a warning: its data is checked by size.\n"
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
		"otherwise.",
	.examples = "fdl verify /srv/population\n",
	.min = 1,
	.max = 1,
};

int cmd_verify(int argc, char **argv)
{
	const char *pos[1], *allowed = NULL;
	bool all = false, reachable = false, json = false, sigs = false;
	int npos;
	cli_opt opts[] = {
		{.name = "reachable", .flag = &reachable, .help = "only the versions reachable from refs"},
		{.name = "all", .flag = &all, .help = "every version directory (the default; kept for scripts)"},
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
	return cli_verify(pos[0], &check, json ? CLI_VERIFY_JSON : CLI_VERIFY_TEXT);
}
