/* The public reports: freeing them, and their one --json form each. */
#include "report.h"
#include "../layout/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building blocks ------------------------------------------------------- */

void fdl_strarray_take(fdl_strarray *out, fdl_strlist *l)
{
	out->strings = l->items;
	out->count = l->len;
	memset(l, 0, sizeof *l);
}

void fdl_strarray_clear(fdl_strarray *a)
{
	for (size_t i = 0; i < a->count; i++)
		free(a->strings[i]);
	free(a->strings);
	memset(a, 0, sizeof *a);
}

json_t *fdl_strarray_json(const fdl_strarray *a)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < a->count; i++)
		json_array_append_new(list, json_string(a->strings[i]));
	return list;
}

/* Make room for one more item of `size` bytes in a growable array. */
void *fdl_report_grow(void **items, size_t count, size_t size, fdl_error *err)
{
	char *p = realloc(*items, (count + 1) * size);
	if (!p) {
		fdl_oom(err);
		return NULL;
	}
	*items = p;
	memset(p + count * size, 0, size);
	return p + count * size;
}

int fdl_findings_add(fdl_finding **items, size_t *count, const char *where, const char *what, fdl_error *err)
{
	fdl_finding *f = fdl_report_grow((void **)items, *count, sizeof **items, err);
	if (!f)
		return FDL_ENOMEM;
	f->where = fdl_strdup(where);
	f->what = fdl_strdup(what);
	if (!f->where || !f->what) {
		free(f->where);
		free(f->what);
		return fdl_oom(err);
	}
	(*count)++;
	return 0;
}

int fdl_findings_addv(fdl_finding **items, size_t *count, const char *where, const char *fmt, va_list ap,
		      fdl_error *err)
{
	char msg[2048];
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t wl = strlen(where);
	const char *text = msg;
	if (!strncmp(msg, where, wl) && msg[wl] == ':' && msg[wl + 1] == ' ')
		text = msg + wl + 2;
	return fdl_findings_add(items, count, where, text, err);
}

/* Move the findings of `from` to the end of `to`. */
static int take_findings(fdl_finding **to, size_t *to_n, fdl_finding **from, size_t *from_n)
{
	if (!*from_n)
		return 0;
	fdl_finding *grown = realloc(*to, (*to_n + *from_n) * sizeof *grown);
	if (!grown)
		return -1;
	memcpy(grown + *to_n, *from, *from_n * sizeof *grown);
	*to = grown;
	*to_n += *from_n;
	free(*from);
	*from = NULL;
	*from_n = 0;
	return 0;
}

int fdl_verify_report_merge(fdl_verify_report *to, fdl_verify_report *part)
{
	int rc = 0;
	to->versions_checked += part->versions_checked;
	if (take_findings(&to->problems, &to->problem_count, &part->problems, &part->problem_count) ||
	    take_findings(&to->warnings, &to->warning_count, &part->warnings, &part->warning_count))
		rc = FDL_ENOMEM;
	if (part->signature_count) {
		fdl_good_signature *g =
			realloc(to->signatures, (to->signature_count + part->signature_count) * sizeof *g);
		if (!g) {
			rc = FDL_ENOMEM;
		} else {
			memcpy(g + to->signature_count, part->signatures, part->signature_count * sizeof *g);
			to->signatures = g;
			to->signature_count += part->signature_count;
			free(part->signatures);
			part->signatures = NULL;
			part->signature_count = 0;
		}
	}
	fdl_verify_report_free_fields(part);
	return rc;
}

static void findings_free(fdl_finding *items, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(items[i].where);
		free(items[i].what);
	}
	free(items);
}

int fdl_removals_add(fdl_version_removal **items, size_t *count, const char *id, fdl_strlist *removed,
		     fdl_error *err)
{
	fdl_version_removal *r = fdl_report_grow((void **)items, *count, sizeof **items, err);
	if (!r)
		return FDL_ENOMEM;
	snprintf(r->id, sizeof r->id, "%s", id);
	fdl_strarray_take(&r->removed, removed);
	(*count)++;
	return 0;
}

static void removals_free(fdl_version_removal *items, size_t count)
{
	for (size_t i = 0; i < count; i++)
		fdl_strarray_clear(&items[i].removed);
	free(items);
}

static json_t *removals_json(const fdl_version_removal *items, size_t count)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < count; i++)
		json_array_append_new(list, json_pack("{s:s, s:o}", "id", items[i].id, "removed",
						      fdl_strarray_json(&items[i].removed)));
	return list;
}

/* Serialise a report's document (NULL: out of memory) and release it. */
static int dump(char **out, json_t *doc, fdl_error *err)
{
	int rc = doc ? fdl_json_dump(out, NULL, doc, err) : fdl_oom(err);
	json_decref(doc);
	return rc;
}

void fdl_diff_free(fdl_diff *d)
{
	if (!d)
		return;
	fdl_changes_free(d->changes, d->change_count);
	for (size_t i = 0; i < d->desc_change_count; i++) {
		free(d->desc_changes[i].table);
		free(d->desc_changes[i].column);
		free(d->desc_changes[i].field);
		free(d->desc_changes[i].kind);
	}
	free(d->desc_changes);
	free(d);
}

int fdl_diff_json(char **out, const fdl_diff *d, fdl_error *err)
{
	json_t *changes = fdl_changes_json(d->changes, d->change_count), *desc = json_array();
	for (size_t i = 0; desc && i < d->desc_change_count; i++) {
		const fdl_desc_change *c = &d->desc_changes[i];
		json_t *one = json_pack("{s:s, s:s}", "field", c->field, "kind", c->kind);
		if (one && c->table)
			json_object_set_new(one, "table", json_string(c->table));
		if (one && c->column)
			json_object_set_new(one, "column", json_string(c->column));
		json_array_append_new(desc, one);
	}
	json_t *o = changes && desc ? json_pack("{s:s, s:s, s:o, s:o}", "from", d->from, "to", d->to, "changes", changes,
						"description_changes", desc)
				    : NULL;
	if (!o)
		return fdl_oom(err);
	return dump(out, o, err);
}

void fdl_branch_list_free(fdl_branch *list) { free(list); }
void fdl_tag_list_free(fdl_tag *list) { free(list); }

/* ---- snapshots ----------------------------------------------------------------- */


int fdl_snapshot_list_json(char **out, const fdl_snapshot_list *l, fdl_error *err)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < l->count; i++) {
		const fdl_snapshot *s = &l->items[i];
		json_t *o = json_pack("{s:I}", "snapshot_id", (json_int_t)s->snapshot_id);
		const char *keys[] = {"time", "author", "message", "extra_info", "changes"};
		const char *vals[] = {s->time, s->author, s->message, s->extra_info, s->changes};
		for (size_t k = 0; o && k < 5; k++)
			if (vals[k])
				json_object_set_new(o, keys[k], json_string(vals[k]));
		json_array_append_new(list, o);
	}
	return dump(out, list, err);
}

/* ---- verify ----------------------------------------------------------------------- */

void fdl_verify_report_free_fields(fdl_verify_report *r)
{
	free(r->repository);
	findings_free(r->problems, r->problem_count);
	findings_free(r->warnings, r->warning_count);
	for (size_t i = 0; i < r->signature_count; i++)
		free(r->signatures[i].signer);
	free(r->signatures);
	memset(r, 0, sizeof *r);
}

void fdl_verify_report_free(fdl_verify_report *r)
{
	if (!r)
		return;
	fdl_verify_report_free_fields(r);
	free(r);
}

static json_t *findings_json(const fdl_finding *items, size_t count, const char *what_key)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < count; i++)
		json_array_append_new(list, json_pack("{s:s, s:s}", "where", items[i].where, what_key, items[i].what));
	return list;
}

int fdl_verify_report_json(char **out, const fdl_verify_report *r, fdl_error *err)
{
	json_t *doc = json_pack("{s:s, s:I, s:I, s:b, s:o, s:o}", "repository", r->repository, "versions_checked",
				(json_int_t)r->versions_checked, "versions_unchecked", (json_int_t)r->versions_unchecked,
				"ok", r->problem_count == 0, "problems",
				findings_json(r->problems, r->problem_count, "problem"), "warnings",
				findings_json(r->warnings, r->warning_count, "warning"));
	if (doc && r->signatures_checked) {
		json_t *sigs = json_array();
		for (size_t i = 0; sigs && i < r->signature_count; i++)
			json_array_append_new(sigs, json_pack("{s:s, s:s}", "id", r->signatures[i].id, "signer",
							      r->signatures[i].signer));
		json_object_set_new(doc, "signatures", sigs);
	}
	return dump(out, doc, err);
}

/* ---- expire, withdraw, gc ------------------------------------------------------------ */

void fdl_expire_report_free(fdl_expire_report *r)
{
	if (!r)
		return;
	removals_free(r->expired, r->expired_count);
	free(r);
}

int fdl_expire_report_json(char **out, const fdl_expire_report *r, fdl_error *err)
{
	return dump(out, json_pack("{s:b, s:o}", "dry_run", r->dry_run, "expired",
				   removals_json(r->expired, r->expired_count)),
		    err);
}

void fdl_withdraw_report_free(fdl_withdraw_report *r)
{
	if (!r)
		return;
	removals_free(r->versions, r->version_count);
	fdl_strarray_clear(&r->data_files);
	fdl_strarray_clear(&r->refs);
	for (size_t i = 0; i < r->left_count; i++)
		free(r->left[i].table);
	free(r->left);
	for (size_t i = 0; i < r->added_count; i++)
		free(r->added[i].table);
	free(r->added);
	free(r->refused);
	free(r->cleanup);
	free(r);
}

int fdl_withdraw_added_add(fdl_withdraw_report *r, const char *from, const char *table, int64_t rows, fdl_error *err)
{
	fdl_withdraw_rows *a = fdl_report_grow((void **)&r->added, r->added_count, sizeof *r->added, err);
	if (!a)
		return FDL_ENOMEM;
	snprintf(a->from, sizeof a->from, "%s", from);
	a->rows = rows;
	if (!(a->table = fdl_strdup(table)))
		return fdl_oom(err);
	r->added_count++;
	return 0;
}

int fdl_withdraw_left_add(fdl_withdraw_report *r, const char *id, const char *from, const char *table, int64_t rows,
			  fdl_error *err)
{
	fdl_withdraw_left *l = fdl_report_grow((void **)&r->left, r->left_count, sizeof *r->left, err);
	if (!l)
		return FDL_ENOMEM;
	memset(l, 0, sizeof *l);
	snprintf(l->id, sizeof l->id, "%s", id);
	snprintf(l->from, sizeof l->from, "%s", from);
	l->rows = rows;
	if (!(l->table = fdl_strdup(table)))
		return fdl_oom(err);
	r->left_count++;
	return 0;
}

int fdl_withdraw_report_json(char **out, const fdl_withdraw_report *r, fdl_error *err)
{
	json_t *left = json_array();
	for (size_t i = 0; left && i < r->left_count; i++)
		json_array_append_new(left, json_pack("{s:s, s:s, s:s, s:I}", "id", r->left[i].id, "from", r->left[i].from,
						      "table", r->left[i].table, "rows", (json_int_t)r->left[i].rows));
	json_t *added = json_array();
	for (size_t i = 0; added && i < r->added_count; i++)
		json_array_append_new(added, json_pack("{s:s, s:s, s:I}", "from", r->added[i].from, "table",
						       r->added[i].table, "rows", (json_int_t)r->added[i].rows));
	return dump(out, json_pack("{s:b, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "dry_run", r->dry_run, "withdrawn",
				   r->withdrawn, "versions", removals_json(r->versions, r->version_count), "data_files",
				   fdl_strarray_json(&r->data_files), "refs", fdl_strarray_json(&r->refs), "still_returned",
				   left, "refused", r->refused ? json_string(r->refused) : json_null(), "cleanup",
				   r->cleanup ? json_string(r->cleanup) : json_null(), "added", added),
		    err);
}

void fdl_gc_report_free(fdl_gc_report *r)
{
	if (!r)
		return;
	fdl_strarray_clear(&r->deleted);
	fdl_strarray_clear(&r->incomplete_versions);
	fdl_strarray_clear(&r->left_alone);
	for (size_t i = 0; i < r->work_count; i++) {
		free(r->work[i].where);
		free(r->work[i].branch);
		free(r->work[i].lease_end);
		fdl_strarray_clear(&r->work[i].files);
	}
	free(r->work);
	free(r);
}

static const char *const GC_WORK_STATES[] = {"kept", "expiring", "ended", "abandoned", "unreadable"};

static json_t *maybe_string(const char *s)
{
	return s ? json_string(s) : json_null();
}

int fdl_gc_report_json(char **out, const fdl_gc_report *r, fdl_error *err)
{
	json_t *work = json_array();
	for (size_t i = 0; work && i < r->work_count; i++) {
		const fdl_gc_work *w = &r->work[i];
		json_array_append_new(work, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "id", w->id, "state",
						      GC_WORK_STATES[w->state], "where", maybe_string(w->where), "branch",
						      maybe_string(w->branch), "lease_end", maybe_string(w->lease_end),
						      "uncommitted_files", fdl_strarray_json(&w->files)));
	}
	return dump(out, json_pack("{s:b, s:I, s:o, s:o, s:o, s:o}", "dry_run", r->dry_run, "grace_seconds",
				   (json_int_t)r->grace_seconds, "deleted", fdl_strarray_json(&r->deleted),
				   "incomplete_versions", fdl_strarray_json(&r->incomplete_versions), "working_catalogs",
				   work, "left_alone", fdl_strarray_json(&r->left_alone)),
		    err);
}

/* ---- clone ------------------------------------------------------------------------------ */

void fdl_clone_report_free(fdl_clone_report *r)
{
	if (!r)
		return;
	free(r->from);
	free(r->to);
	for (size_t i = 0; i < r->moved.count; i++)
		free(r->moved.strings[i]);
	free(r->moved.strings);
	free(r);
}

int fdl_clone_report_json(char **out, const fdl_clone_report *r, fdl_error *err)
{
	json_t *moved = json_array();
	for (size_t i = 0; moved && i < r->moved.count; i++)
		json_array_append_new(moved, json_string(r->moved.strings[i]));
	return dump(out, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:o*}", "from", r->from, "to", r->to, "versions",
				   (json_int_t)r->versions, "copied", (json_int_t)r->copied, "already_there",
				   (json_int_t)r->already_there, "removed", (json_int_t)r->removed, "moved", moved),
		    err);
}

void fdl_rebase_report_free(fdl_rebase_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->conflict_count; i++) {
		free(r->conflicts[i].table);
		free(r->conflicts[i].kind);
		free(r->conflicts[i].detail);
	}
	free(r->conflicts);
	free(r);
}

int fdl_rebase_report_json(char **out, const fdl_rebase_report *r, fdl_error *err)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < r->conflict_count; i++) {
		const fdl_rebase_conflict *c = &r->conflicts[i];
		json_array_append_new(list, json_pack("{s:s?, s:s, s:s}", "table", c->table, "kind", c->kind, "detail",
						      c->detail));
	}
	return dump(out, list ? json_pack("{s:s?, s:s, s:I, s:I, s:o}", "from", r->from[0] ? r->from : NULL, "onto",
					  r->onto, "snapshots", (json_int_t)r->snapshots, "delete_files",
					  (json_int_t)r->delete_files, "conflicts", list)
			       : NULL,
		    err);
}

void fdl_add_report_free(fdl_add_report *r)
{
	if (!r)
		return;
	free(r->table);
	fdl_strarray_clear(&r->partition);
	fdl_strarray_clear(&r->files);
	fdl_strarray_clear(&r->removed);
	free(r);
}

int fdl_add_report_json(char **out, const fdl_add_report *r, fdl_error *err)
{
	json_t *j = json_pack("{s:s, s:b, s:o, s:o, s:I, s:I}", "table", r->table, "created", r->created, "partition",
			      fdl_strarray_json(&r->partition), "files", fdl_strarray_json(&r->files), "rows",
			      (json_int_t)r->rows, "bytes", (json_int_t)r->bytes);
	if (j && r->iceberg &&
	    (json_object_set_new(j, "iceberg_snapshot", json_integer(r->iceberg_snapshot)) ||
	     json_object_set_new(j, "deleted_rows", json_integer(r->deleted_rows)) ||
	     json_object_set_new(j, "removed", fdl_strarray_json(&r->removed)))) {
		json_decref(j);
		j = NULL;
	}
	return dump(out, j, err);
}
