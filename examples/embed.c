/* A program that embeds libfdl: open a repository, list the versions of
 * HEAD's branch, print one version's dataset.json, and verify the whole
 * repository. Build it against an installed libfdl with nothing else:
 *
 *   cc -std=c17 -o embed examples/embed.c $(pkg-config --cflags --libs fdl)
 *   ./embed /srv/population [REF]
 */
#include <fdl.h>

#include <stdio.h>
#include <string.h>

static int fail(const fdl_error *err)
{
	fprintf(stderr, "embed: %s\n", err->message);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: embed ROOT [REF]\n");
		return 2;
	}
	fdl_error err = {0};
	fdl_repo *repo = NULL;
	if (fdl_repo_open(&repo, argv[1], &err))
		return fail(&err);
	printf("libfdl %s, repository %s, data in %s\n", fdl_libversion(), fdl_repo_root(repo),
	       fdl_repo_data_url(repo));

	/* the history of HEAD's branch, newest first, by first parents */
	char id[FDL_ID_LEN + 1];
	int rc = fdl_ref_resolve(id, repo, NULL, &err);
	while (!rc) {
		fdl_version *v = NULL;
		if ((rc = fdl_version_read(&v, repo, id, &err)))
			break;
		printf("version %lld %s by %s: %s (%zu changes)\n", (long long)fdl_version_seq(v), fdl_version_id(v),
		       fdl_version_author_name(v), fdl_version_message(v), fdl_version_change_count(v));
		const char *parent = fdl_version_parent(v, 0);
		if (parent)
			memcpy(id, parent, sizeof id);
		fdl_version_free(v);
		if (!parent)
			break;
	}

	/* one version's description, checked against its sha256 */
	fdl_version *v = NULL;
	char *dataset = NULL;
	if (!rc)
		rc = fdl_ref_resolve(id, repo, argc > 2 ? argv[2] : NULL, &err);
	if (!rc)
		rc = fdl_version_read(&v, repo, id, &err);
	if (!rc)
		rc = fdl_version_dataset(&dataset, repo, v, &err);
	if (!rc)
		printf("dataset.json of %s:\n%s", id, dataset);
	fdl_free(dataset);
	fdl_version_free(v);

	/* the whole repository, as fdl verify checks it */
	fdl_verify_report *report = NULL;
	fdl_verify_options check = FDL_VERIFY_OPTIONS_INIT; /* every version; signatures not checked */
	if (!rc)
		rc = fdl_verify(&report, repo, &check, &err);
	if (!rc) {
		for (size_t i = 0; i < report->problem_count; i++)
			printf("problem: %s: %s\n", report->problems[i].where, report->problems[i].what);
		printf("verify: %zu versions checked, %zu problems\n", report->versions_checked,
		       report->problem_count);
		rc = report->problem_count ? 5 : 0;
		fdl_verify_report_free(report);
		fdl_repo_free(repo);
		return rc;
	}
	fdl_repo_free(repo);
	return fail(&err);
}
