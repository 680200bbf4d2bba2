/* A program that publishes with libfdl: commit a working catalog (made by
 * `fdl checkout` or fdl_checkout and written to with DuckDB) as a new
 * version, as `fdl commit` does.
 *
 *   cc -std=c17 -o embed_commit examples/embed_commit.c $(pkg-config --cflags --libs fdl)
 *   ./embed_commit WORK "what changed" "Name <email>"
 */
#include <fdl.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: embed_commit WORK MESSAGE AUTHOR-NAME [AUTHOR-EMAIL]\n");
		return 2;
	}
	fdl_error err = {0};
	fdl_work_info *info = NULL;
	if (fdl_work_info_read(&info, argv[1], &err)) {
		fprintf(stderr, "embed_commit: %s\n", err.message);
		return 1;
	}
	printf("working catalog of %s, branch %s, based on %s\n", info->repository, info->branch,
	       info->base[0] ? info->base : "(nothing yet)");
	fdl_work_info_free(info);
	fdl_commit_options o = FDL_COMMIT_OPTIONS_INIT;
	o.message = argv[2];
	o.author_name = argv[3];
	o.author_email = argc > 4 ? argv[4] : NULL;
	char id[FDL_ID_LEN + 1];
	int rc = fdl_commit(id, argv[1], &o, &err);
	if (rc == FDL_ENOCHANGE) {
		printf("nothing to commit\n");
		return 0;
	}
	if (rc) {
		fprintf(stderr, "embed_commit: %s\n", err.message);
		return -rc;
	}
	printf("committed %s\n", id);
	return 0;
}
