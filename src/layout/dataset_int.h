/* dataset.c's internals shared with dataset_merge.c: the publisher's
 * description as loaded (or carried over from the base version). */
#ifndef FDL_DATASET_INT_H
#define FDL_DATASET_INT_H

#include "dataset.h"

typedef struct described {
	json_t *table; /* converted table item */
	char *src;
	int line;
	bool used;
	json_t *field_lines; /* {"<field name>": line} where the YAML gave them, or NULL */
} described;

typedef struct desc {
	json_t *top; /* converted dataset (without tables) or NULL */
	char *top_src;
	/* the description is the base version's, carried over (inherited, or
	 * the dataset.yml checkout wrote, unedited): what the catalog no longer
	 * has (a dropped table or column) is dropped from it, not refused */
	bool inherited;
	described *tables;
	size_t ntables;
} desc;

void fdl__ds_desc_free(desc *d);
int fdl__ds_field_line(const described *dsc, const char *name);
const json_t *fdl__ds_base_table(const json_t *base, const char *schema, const char *name);
const char *fdl__ds_str(const json_t *o, const char *k);
int fdl__ds_desc_from_base(desc *d, const json_t *base, fdl_error *err);
bool fdl__ds_base_has_field(const json_t *bt, const char *col);
int fdl__ds_desc_load(desc *d, const fdl_desc_files *f, fdl_error *err);

#endif
