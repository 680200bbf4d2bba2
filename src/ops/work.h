/* A working catalog folder: WORK/ducklake.sqlite (the SQLite DuckLake
 * catalog a publisher writes with DuckDB) and WORK/fdl-work.json, which
 * records where it came from so commit knows what to compare-and-swap. */
#ifndef FDL_WORK_H
#define FDL_WORK_H

#include "../layout/layout.h"

#define FDL_WORK_FILE "fdl-work.json"
#define FDL_WORK_CATALOG "ducklake.sqlite"
#define FDL_WORK_LOCK "fdl-work.lock"
/* DuckLake's empty catalog in a DuckDB file, written by checkout (which
 * loads DuckLake anyway): a full freeze copies its tables instead of
 * loading DuckLake to create them (docs/decisions.md). */
#define FDL_WORK_TEMPLATE "fdl-template.duckdb"
/* The base version's sha256 map, as the commit that published it wrote it
 * (work_hashes.c): the next commit carries the hashes over from it. */
#define FDL_WORK_HASHES "fdl-hashes.txt"
/* The sha256 of each file fdl add registered, when it did ("<sha256>
 * <path relative to the data path>" a line): the commit that publishes
 * one refuses it if it changed since (work_hashes.c). */
#define FDL_WORK_ADDED "fdl-added.txt"
/* fdl add --iceberg's record, per table ("schema.table"): the Iceberg
 * table's metadata file and snapshot last added, and the files of that
 * snapshot (relative to the data path), which the commit leaves in the
 * working catalog's folder for the Iceberg table that still names them
 * (work_hashes.c). */
#define FDL_WORK_ICEBERG "fdl-iceberg.json"

/* WORK is a folder, or "postgres:<libpq connection string>" (empty: the
 * PG* environment variables), a team's DuckLake catalog in PostgreSQL whose
 * record lives in its table public.fdl_work. */
#define FDL_PG_PREFIX "postgres:"

typedef struct fdl_work {
	bool postgres;
	/* its id: the repository's record of it is work/<id>.json and DuckDB
	 * writes its new data files into work/<id>/ ("" for a working catalog
	 * made before fdl kept records: it writes into the data folder) */
	char id[FDL_ID_LEN + 1];
	char *dir;          /* absolute folder; for PostgreSQL the WORK string */
	char *catalog;      /* dir/ducklake.sqlite, or the connection string */
	char *repository;   /* the repository root it was checked out from */
	char *branch;       /* branch name */
	char *data_path;    /* the DATA_PATH the catalog writes to */
	char base[FDL_ID_LEN + 1]; /* "" when the branch had no version */
	int64_t base_snapshot;     /* -1 without a base */
	/* a version written and about to be published: if a commit dies after
	 * moving the ref but before recording it here, the next commit sees the
	 * ref at `pending` and completes the record instead of conflicting */
	char pending[FDL_ID_LEN + 1];
	/* sha256 of the dataset.yml checkout wrote from the base version's
	 * description ("" if none): unedited, it is the base's, carried over */
	char description_sha256[65];
	/* the version whose description checkout wrote there ("" if none):
	 * what it described, a later commit may find dropped */
	char description_from[FDL_ID_LEN + 1];
	/* the description files' sha256 (fdl_desc_files_sha256) when a commit
	 * last took them as they changed, and that version ("" if none): while
	 * they stay the same they name tables and columns as `names_at` did,
	 * so a rename since is followed from there */
	char names_sha256[65];
	char names_at[FDL_ID_LEN + 1];
	/* sha256 of FDL_WORK_TEMPLATE as checkout wrote it ("" if none): a
	 * full freeze copies the template only while it still has it */
	char template_sha256[65];
	/* PostgreSQL: the record as last read or written; saves are a
	 * compare-and-swap against it, since many committers share it */
	char *record;
} fdl_work;

int fdl_work_load(fdl_work *w, const char *dir, fdl_error *err);
/* The record's bytes into w's fields (`path` names them in messages); on
 * failure what it set is left for fdl_work_free. */
int fdl_work_parse(fdl_work *w, const char *data, size_t len, const char *path, fdl_error *err);
/* WORK/FDL_WORK_TEMPLATE (NULL for PostgreSQL, or out of memory). */
char *fdl_work_template_path(const fdl_work *w);
/* The sha256 map (path -> hex) of the files.json whose sha256 is
 * files_sha256 (and size files_bytes, which bounds what is read), from
 * WORK/FDL_WORK_HASHES, opened with no symlink followed; *map NULL, and
 * `why` saying why, when that file cannot stand for it (absent, not a
 * regular file, another files.json's, changed, a PostgreSQL catalog).
 * Errors only for memory. */
int fdl_work_hashes_read(json_t **map, const fdl_work *w, const char *files_sha256, int64_t files_bytes,
			 char why[160], fdl_error *err);
/* Its text for `map`, the sha256 map of the files.json whose sha256 is
 * files_sha256 (out empty when a path cannot be written on a line, or
 * memory ran out: a derived copy is never worth failing a commit). */
/* The parse under fdl_work_hashes_read, of the file's bytes as read (b's
 * body is changed in place). */
int fdl_work_hashes_parse(json_t **map, fdl_buf *b, const char *files_sha256, char why[160], fdl_error *err);
void fdl_work_hashes_text(fdl_buf *out, const json_t *map, const char *files_sha256);
/* Replace WORK/FDL_WORK_HASHES with `text` (removed when text is empty;
 * nothing for PostgreSQL). */
int fdl_work_hashes_save(const fdl_work *w, const fdl_buf *text, fdl_error *err);
/* fdl add's record, path -> sha256 (*map NULL when there is none), and
 * the record replaced by `map`. */
int fdl_work_added_read(json_t **map, const fdl_work *w, fdl_error *err);
int fdl_work_added_save(const fdl_work *w, const json_t *map, fdl_error *err);
/* fdl add --iceberg's record (*out NULL when there is none), the record
 * replaced, and the files every table's entry keeps (sorted). */
int fdl_work_iceberg_read(json_t **out, const fdl_work *w, fdl_error *err);
int fdl_work_iceberg_save(const fdl_work *w, const json_t *record, fdl_error *err);
int fdl_work_iceberg_kept(fdl_strlist *out, const fdl_work *w, fdl_error *err);
/* The record JSON of a PostgreSQL working catalog; FDL_ENOTFOUND if none. */
int fdl_work_pg_read(fdl_buf *out, const char *conninfo, fdl_error *err);
/* Write the record; for PostgreSQL only if nobody changed it since it was
 * read (else FDL_ECONFLICT). */
int fdl_work_save(fdl_work *w, fdl_error *err);
void fdl_work_free(fdl_work *w);
/* One writer of a working folder at a time (fdl commit, fdl rebase):
 * WORK/fdl-work.lock, held until released, so no writer ever writes back
 * an older record over another's; the record is read again once held. (A
 * PostgreSQL catalog's record is updated by compare-and-swap instead: no
 * folder to lock, nothing taken.) `command` is recorded as the holder's. */
int fdl_work_lock(fdl_lockfile *lk, fdl_work *w, const char *work, const char *command, fdl_error *err);

/* What checkout makes, which rebase makes again (checkout.c). A fresh
 * folder beside `final`, on its file system: ".<name>.fdl-<what>-<random>". */
int fdl_checkout_sibling(char **out, const char *final, const char *what, fdl_error *err);
/* Create w->catalog and fill it with version w->base (nothing for an
 * empty branch), its data path w->data_path; sets w->base_snapshot. With
 * an id (w->id), the version's files are recorded by their place in the
 * data folder and, in PostgreSQL, the trigger that keeps DuckLake off them
 * is made (SQLite's, fdl_catalog_keep_published_sqlite, once no DuckDB of
 * the process holds the file). */
struct fdl_duck;
int fdl_checkout_seed(struct fdl_duck *d, fdl_repo *repo, fdl_work *w, fdl_error *err);
/* Write w->dir/dataset.yml from version w->base's description (nothing
 * when it has none) and record its sha256 and origin in w. */
int fdl_checkout_description(fdl_work *w, fdl_repo *repo, fdl_error *err);

/* Where DuckDB reaches the repository's data folder (a local path, or a
 * bucket's s3:// URL), and a working catalog's own folder work/<id>/;
 * FDL_EINVALID for a store no DuckDB writes to. Caller frees. */
int fdl_work_data_location(char **out, fdl_repo *repo, fdl_error *err);
int fdl_work_staging_location(char **out, fdl_repo *repo, const char *id, fdl_error *err);
/* The record of w in its repository: create it (checkout; `dir`, when not
 * NULL, is the folder w is about to be moved to), or refresh it
 * with w's branch and base (every command on w; FDL_ENOTFOUND, saying so,
 * when the publisher abandoned it). Nothing for a working catalog
 * without an id. */
int fdl_work_record_create(fdl_repo *repo, const fdl_work *w, const char *dir, fdl_error *err);
int fdl_work_record_touch(fdl_repo *repo, const fdl_work *w, fdl_workrec_seen *seen, fdl_error *err);
/* Read it (to refresh it later, by compare-and-swap over what was read). */
int fdl_work_record_read(fdl_workrec_seen *out, fdl_repo *repo, const fdl_work *w, fdl_error *err);

/* Read the description files of the working folder `dir` (what
 * fdl_dataset_build merges: dataset.yml, .yaml or .json, and every
 * *.table.yml); FDL_EINVALID when it holds two dataset files. */
struct fdl_desc_files;
int fdl_work_description(struct fdl_desc_files *out, const char *dir, fdl_error *err);

#endif
