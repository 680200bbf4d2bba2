/* What fdl add and fdl add --iceberg share (add.c, add_iceberg.c): the
 * working catalog opened with the table's folder known, and the check that
 * a file lies under that folder. */
#ifndef FDL_OPS_ADD_H
#define FDL_OPS_ADD_H

#include "work.h"
#include "../catalog/catalog.h"

#define ADD_ALIAS "fdl_add"

typedef struct add_job {
	bool iceberg;   /* DuckDB with the iceberg extension (set before opening) */
	fdl_work w;
	fdl_repo *repo;
	fdl_duck *d;
	char *schema, *table; /* the name split */
	fdl_add_shape shape;
	char *folder;   /* the table's folder relative to the data path, ending in '/' */
	char *dir;      /* w.data_path + folder, no trailing '/' */
	char *realdir;  /* dir with every symlink resolved (NULL: it does not exist) */
	char *key;      /* the table's folder as the store's key prefix: work/<id>/<folder> */
	bool bucket;    /* the repository is a bucket: files are keys, named by their s3:// URL */
	fdl_strlist rel;   /* the files, relative to dir, sorted */
	fdl_strlist keys;  /* the partition columns, from the first file's folders */
	fdl_strlist names, types; /* the table's columns as they will be */
	int64_t rows, bytes;
} add_job;

/* The working catalog `work` opened (its lock is the caller's), the
 * table's folder known; without `create` the table must exist. */
int fdl_add_job_open(add_job *j, const char *work, const char *table, bool create, fdl_error *err);
void fdl_add_job_free(add_job *j);
/* One regular file (no symlink) under the table's folder: its place
 * relative to it appended to j->rel, its size to j->bytes; else
 * FDL_EINVALID naming the file and the folder. */
int fdl_add_job_file(add_job *j, const char *path, fdl_error *err);
int fdl_add_refuse_outside(const add_job *j, const char *path, fdl_error *err);

#endif
