#include "cli.h"


/* Run fdl_verify and print its report; returns the exit code. */
int cli_verify(const char *root, bool all, bool json, bool quiet, const char *allowed)
{
	fdl_error err = {0};
	fdl_repo *repo;
	if (fdl_repo_open(&repo, root, &err))
		return cli_fail(&err);
	fdl_verify_report *r = NULL;
	int rc = fdl_verify(&r, repo, all, allowed, &err);
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
			fprintf(f, "%zu versions checked, %zu problems\n", r->versions_checked, r->problem_count);
	}
	rc = r->problem_count ? 5 : 0;
	fdl_verify_report_free(r);
	return rc;
}

int cmd_verify(int argc, char **argv)
{
	const char *pos[1], *allowed = NULL;
	bool all = false, json = false, sigs = false;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "all", .flag = &all, .help = "every version directory, not only those reachable from refs"},
		{.name = "json", .flag = &json, .help = "print the report as JSON"},
		{.name = "signatures", .flag = &sigs, .help = "also require a good version.json.sig on every version"},
		{.name = "allowed-signers", .value = &allowed, .help = "OpenSSH allowed_signers file (with --signatures)"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl verify ROOT [--all] [--json] [--signatures --allowed-signers FILE]",
			   "Check a repository like git fsck and name every problem: refs and HEAD; each\n"
			   "version.json (must fields, id = directory, seq and parents); the bytes and sha256\n"
			   "of every file it lists; no file a version may not hold; for every live catalog,\n"
			   "its last snapshot, that each data file it references exists with its recorded\n"
			   "size, and that files.json agrees with it. Exit 0 only when clean, 5 otherwise.",
			   pos, 1, 1, &npos, &done);
	if (done)
		return rc;
	if (sigs != (allowed != NULL)) {
		fprintf(stderr, "fdl: --signatures and --allowed-signers FILE go together\n");
		return CLI_EXIT_USAGE;
	}
	return cli_verify(pos[0], all, json, false, allowed);
}

int cmd_sign(int argc, char **argv)
{
	const char *pos[2], *key = NULL;
	int npos;
	bool done;
	cli_opt opts[] = {
		{.name = "key", .value = &key, .help = "an unencrypted OpenSSH Ed25519 private key (ssh-keygen -t ed25519)"},
		{0},
	};
	int rc = cli_parse(argc, argv, opts, "fdl sign ROOT VERSION --key KEY",
			   "Sign a version: write versions/<id>/version.json.sig, an SSH signature (namespace\n"
			   "fdl) over the exact bytes of version.json, which carries the sha256 of every other\n"
			   "file. Check with fdl verify --signatures, or with stock OpenSSH:\n"
			   "  ssh-keygen -Y verify -f allowed_signers -I SIGNER -n fdl -s version.json.sig < version.json",
			   pos, 2, 2, &npos, &done);
	if (done)
		return rc;
	if (!key) {
		fprintf(stderr, "fdl: sign needs --key KEY\n");
		return CLI_EXIT_USAGE;
	}
	fdl_error err = {0};
	fdl_repo *repo;
	if (fdl_repo_open(&repo, pos[0], &err))
		return cli_fail(&err);
	char id[FDL_ID_LEN + 1];
	rc = fdl_ref_resolve(id, repo, pos[1], &err);
	if (!rc)
		rc = fdl_version_sign(repo, id, key, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	printf("Signed version %s (versions/%s/version.json.sig)\n", id, id);
	return 0;
}
