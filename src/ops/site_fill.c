/* fdl site: a repository given pages, and the pages of older versions
 * written (commits write their own through the seam), as fdl iceberg does
 * for views; and the public address the pages use. */
#include "../layout/site.h"
#include "../layout/walk.h"
#include "../site/site.h"

#include <stdlib.h>
#include <string.h>

const char *fdl_repo_public_url(const fdl_repo *repo) { return fdl_site_public_url(repo); }

int fdl_repo_public_url_set(fdl_repo *repo, const char *url, fdl_error *err)
{
	char *clean = NULL;
	int rc = url ? fdl_site_url_check(&clean, url, err) : 0;
	if (!rc)
		rc = fdl_config_set_field(repo, NULL, FDL_SITE_PUBLIC_URL, clean ? json_string(clean) : json_null(), err);
	free(clean);
	return rc;
}

static int every_version(fdl_strlist *ids, fdl_repo *repo, fdl_error *err)
{
	vdirs d = {0};
	int rc = fdl_vdirs_list(&d, NULL, NULL, repo, err);
	for (size_t i = 0; !rc && i < d.len; i++)
		if (fdl_vdir_has(&d.items[i], FDL_VERSION_JSON))
			rc = fdl_strlist_add(ids, d.items[i].id, err);
	fdl_vdirs_free(&d);
	return rc;
}

int fdl_site_fill(fdl_repo *repo, const char *const *refs, size_t n, size_t *written, fdl_error *err)
{
	fdl_strlist ids = {0};
	char id[FDL_ID_LEN + 1];
	int rc = n ? 0 : every_version(&ids, repo, err);
	for (size_t i = 0; !rc && i < n; i++)
		if (!(rc = fdl_ref_resolve(id, repo, refs[i], err)))
			rc = fdl_strlist_add(&ids, id, err);
	if (!rc)
		rc = fdl_site_enable(repo, err);
	for (size_t i = 0; !rc && i < ids.len; i++)
		rc = fdl_site_write(repo, ids.items[i], err);
	if (!rc)
		rc = fdl_site_write_home(repo, err);
	if (!rc && written)
		*written = ids.len;
	fdl_strlist_free(&ids);
	return rc;
}
