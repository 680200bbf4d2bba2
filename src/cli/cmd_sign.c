/* fdl sign: sign a version (an SSH signature over version.json).
 * Parses its arguments, calls libfdl and prints what it returns. */
#include "cli.h"

const cli_doc doc_sign = {
	.usage = "fdl sign ROOT VERSION --key KEY",
	.summary = "sign a version (an SSH signature over version.json)",
	.text = "Writes `version.json.sig`: an SSH signature (SSHSIG, namespace `fdl`, as Git\n"
		"signs commits) over the exact bytes of `version.json`, which carries the\n"
		"sha256 of every other file of the version, with an unencrypted Ed25519\n"
		"key. One of them, `files.json`, carries the sha256 of every data file, so\n"
		"the signature covers the data too (a version written before fdl recorded\n"
		"those covers its data by size only). A signature is never replaced (exit\n"
		"9). `fdl verify --signatures --allowed-signers FILE` checks them, with\n"
		"the data they cover, and stock OpenSSH checks the signature itself.",
	.examples = "ssh-keygen -t ed25519 -N '' -f publisher\n"
		    "fdl sign /srv/population main --key publisher\n"
		    "echo \"data@example.org namespaces=\\\"fdl\\\" $(cut -d' ' -f1,2 publisher.pub)\" > allowed_signers\n"
		    "fdl verify /srv/population --signatures --allowed-signers allowed_signers\n"
		    "ssh-keygen -Y verify -f allowed_signers -I data@example.org -n fdl \\\n"
		    "  -s /srv/population/versions/<id>/version.json.sig < /srv/population/versions/<id>/version.json\n",
	.min = 2,
	.max = 2,
};

int cmd_sign(int argc, char **argv)
{
	const char *pos[2], *key = NULL;
	int npos;
	cli_opt opts[] = {
		{.name = "key", .value = &key, .arg = "KEY", .help = "an unencrypted OpenSSH Ed25519 private key (ssh-keygen -t ed25519)"},
		{0},
	};
	int rc = cli_parse(argc, argv, &doc_sign, opts, pos, &npos);
	if (rc != CLI_GO)
		return rc;
	if (!key) {
		fprintf(stderr, "fdl: sign needs --key KEY\n");
		return CLI_EXIT_USAGE;
	}
	fdl_repo *repo;
	char id[FDL_ID_LEN + 1];
	if ((rc = cli_open_version(&repo, id, pos[0], pos[1])))
		return rc;
	fdl_error err = {0};
	rc = fdl_version_sign(repo, id, key, &err);
	fdl_repo_free(repo);
	if (rc)
		return cli_fail(&err);
	printf("Signed version %s (versions/%s/version.json.sig)\n", id, id);
	return 0;
}
