/* The history index (fdl's addition, docs/format.md "The history index"):
 * a branch's whole first-parent history in a few files, so a reader of a
 * remote repository gets `log` or `main:1` in a constant number of
 * requests instead of one request per version.
 *
 *   history/heads/<branch>.json   the pointer: the tip it indexes, the
 *                                 packs in seq order, the newest versions
 *                                 inline (16 to 32 once there are
 *                                 that many)
 *   history/packs/<sha256>.jsonl  immutable, named by the sha256 of their
 *                                 bytes: one version per line, ascending,
 *                                 as "<head>\t<sha256>\t<version.json>"
 *                                 (the head: what fdl log shows)
 *
 * It is derived, never the truth: refs/ and version.json are. A reader
 * that finds no index, a stale one or one that does not hold together
 * reads version.json files instead; what it opens through the index is
 * checked against the version's own version.json. */
#ifndef FDL_HINDEX_H
#define FDL_HINDEX_H

#include "layout.h"

/* One version of a first-parent history. */
typedef struct fdl_hentry {
	char id[FDL_ID_LEN + 1];
	int64_t seq;
	char sha256[65]; /* of version.json's bytes as published */
	json_t *doc;     /* version.json parsed, or only its head array (one reference owned) */
	bool whole;      /* doc is the whole version.json, not only its head */
} fdl_hentry;

/* The head of a version: the fields of its version.json that fdl log
 * shows, as an array in this order (an array parses in less than half the
 * time of an object), sharing their values; NULL when out of memory:
 * [seq, id, parents, created_at, author name, author email or null,
 *  message, changes or null] */
enum {
	FDL_HEAD_SEQ,
	FDL_HEAD_ID,
	FDL_HEAD_PARENTS,
	FDL_HEAD_CREATED_AT,
	FDL_HEAD_AUTHOR_NAME,
	FDL_HEAD_AUTHOR_EMAIL,
	FDL_HEAD_MESSAGE,
	FDL_HEAD_CHANGES,
	FDL_HEAD_FIELDS
};
json_t *fdl_hentry_head(const json_t *version);

/* A history, newest first. */
typedef struct fdl_hist {
	fdl_hentry *items;
	size_t len, cap;
	size_t from_index; /* how many entries came from the index */
	size_t read;       /* how many version.json files were read */
} fdl_hist;

void fdl_hist_free(fdl_hist *h);

/* The first-parent history of `tip`, newest first, at most `limit`
 * versions (-1: all); each entry's doc is the whole version.json when
 * `whole`, else at least its head (a third of the bytes to parse). `branch` names the index to use (NULL: HEAD's
 * branch's); any branch's index helps as far as `tip`'s chain and the
 * indexed one agree. Every entry's id, seq (falling by one) and first
 * parent link up, whichever way it was read. On failure *out keeps the
 * versions read before it (newest first); free it either way. */
int fdl_history_read(fdl_hist *out, fdl_repo *repo, const char *branch, const char *tip, long long limit,
		     bool whole, fdl_error *err);

/* The version with `seq` on tip's first-parent chain, from the index when
 * it has one and that version's own version.json agrees with it (id, seq,
 * first parent, sha256): *found false (rc 0) otherwise, and the caller
 * walks the chain itself. */
int fdl_history_find_seq(char id[FDL_ID_LEN + 1], bool *found, fdl_repo *repo, const char *branch,
			 const char *tip, int64_t seq, fdl_error *err);

/* Bring `branch`'s index up to its ref (best effort for callers: the index
 * is derived, and a failure leaves the repository as correct as before,
 * only slower to read). Removes the index of a branch that is gone. It
 * reads at most `max_walk` version.json files to find where the old index
 * (or HEAD's branch's) agrees (-1: no bound; FDL_ENOCHANGE past it), so a
 * commit on a long history written without an index stays fast and leaves
 * the whole index to fdl gc and clone, which pass -1. */
#define FDL_HISTORY_WALK_MAX 1000
int fdl_history_update(fdl_repo *repo, const char *branch, long max_walk, fdl_error *err);

/* The index of a branch about to be created at `tip`, written before its
 * ref (so an interrupted `fdl branch` run again ends the same), and the
 * removal of a branch's index before its ref is deleted. */
int fdl_history_prepare(fdl_repo *repo, const char *branch, const char *tip, fdl_error *err);
int fdl_history_remove(fdl_repo *repo, const char *branch, fdl_error *err);

/* Remove every index (a withdrawal that deletes a version.json must not
 * leave a copy of it in the index); the ref list, which holds none, stays. */
int fdl_history_drop(fdl_repo *repo, fdl_error *err);

/* What fdl verify says about the index, each finding a key and a message:
 * problems (a pointer or pack that does not hold together, an entry that
 * differs from the version.json it copies, a file that is not part of the
 * index) and warnings (an index behind its branch or of a branch that is
 * gone, a pack no pointer names). Every entry is compared with the
 * version.json the store holds. */
int fdl_history_check(fdl_finding_list *problems, fdl_finding_list *warnings, fdl_repo *repo, fdl_error *err);

/* The same on a store that cannot be listed: the index of each branch
 * among `refs` (keys, "refs/heads/main") and the ref list, those the store
 * has; packs no pointer names cannot be seen. */
int fdl_history_check_named(fdl_finding_list *problems, fdl_finding_list *warnings, fdl_repo *repo,
			    const fdl_strlist *refs, fdl_error *err);

/* fdl_history_check's part for the ref list, history/refs.json
 * (reflist.c): a problem when it does not hold together, a warning for
 * each ref it names at another version than refs/ does, or a version it
 * calls gone that has no expired.json. */
int fdl_reflist_verify(fdl_finding_list *problems, fdl_finding_list *warnings, fdl_repo *repo, fdl_error *err);

/* Keys of the files under history/packs/ that no pointer names (left by
 * an interrupted writer or a lost race), for fdl gc; none when a pointer
 * cannot be read (then any pack may be needed). */
int fdl_history_unnamed_packs(fdl_strlist *out, fdl_repo *repo, fdl_error *err);

/* After fdl_history_read of `tip` failed with FDL_ENOTFOUND (`h` holding
 * what it read): when the missing version.json is that of a version
 * withdrawn with it (`fdl withdraw --remove-version-json`: its expired.json
 * is there), the history simply ends there: *end gets its id, err is
 * cleared and 0 returned. Anything else returns err's code, err kept. */
int fdl_history_withdrawn_end(char end[FDL_ID_LEN + 1], fdl_repo *repo, const fdl_hist *h, const char *tip,
			      fdl_error *err);

#endif
