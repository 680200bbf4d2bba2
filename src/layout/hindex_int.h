/* The history index's internals shared by its three files: hindex_read.c
 * (entries, the pointer and its packs, reading), hindex_write.c (updates)
 * and hindex_check.c (fdl verify, fdl gc's unnamed packs). */
#ifndef FDL_HINDEX_INT_H
#define FDL_HINDEX_INT_H

#include "hindex.h"

#define HIST_FORMAT 2     /* what fdl writes: pack lines are "<head>\t<sha256>\t<version>" */
#define HIST_FORMAT_OLD 1 /* still read: pack lines are whole entries */
#define HIST_TAIL_MAX 32  /* versions inline in the pointer, at most (or sqrt of the history) */
#define HIST_TAIL_KEEP 16 /* ... and after a flush: log -n 16 never needs a pack */
#define HIST_MAX_PACKS 8 /* what a reader accepts; fdl writes one */
#define HIST_RETRIES 5

typedef struct hpack {
	char name[80]; /* "<sha256>.jsonl" */
	int64_t first, last, bytes;
	fdl_hentry *e; /* loaded entries, ascending; NULL until needed */
	size_t n;
} hpack;

typedef struct hindex {
	char *key;
	bool exists, usable;
	bool whole; /* load packs' whole version.json, not only the heads */
	int format; /* the pointer's fdl_history */
	char etag[FDL_ETAG_MAX];
	char tip[FDL_ID_LEN + 1];
	int64_t seq;
	hpack packs[HIST_MAX_PACKS];
	size_t npacks;
	fdl_hentry *tail; /* ascending */
	size_t ntail;
	char why[512]; /* why it is not usable */
} hindex;

const char *fdl__hix_entry_parent(const fdl_hentry *e);
void fdl__hix_entry_clear(fdl_hentry *e);
int fdl__hix_hist_push(fdl_hist *h, const fdl_hentry *e, fdl_error *err);
json_t *fdl__hix_entry_to_json(const fdl_hentry *e);
int fdl__hix_entry_read(fdl_hentry *e, fdl_repo *repo, const char *id, fdl_error *err);
void fdl__hix_free(hindex *ix);
char *fdl__hix_pack_key(const char *name);
bool fdl__hix_entries_link(const fdl_hentry *older, const fdl_hentry *newer);
int fdl__hix_load(hindex *ix, fdl_repo *repo, const char *branch, bool want_etag, fdl_error *err);
bool fdl__hix_pack_load(hindex *ix, hpack *p, fdl_repo *repo);
/* The parsers under fdl__hix_load and fdl__hix_pack_load, of bytes as read (fuzzed). */
int fdl__hix_pointer_parse(hindex *ix, const char *data, size_t len);
bool fdl__hix_pack_parse(hindex *ix, hpack *p, const char *data, size_t len, const char *key);
const fdl_hentry *fdl__hix_index_at(hindex *ix, fdl_repo *repo, int64_t seq);

#endif
