/* YAML (and JSON, which libyaml reads as YAML) into a small tree that keeps
 * the line of every node, so a description's errors can name file, line and
 * key, and JSON values written out as YAML. Parsing and emitting are
 * libyaml's; this only copies its document into owned nodes and feeds it
 * events. */
#ifndef FDL_YAML_H
#define FDL_YAML_H

#include "json.h"

typedef enum { FDL_Y_SCALAR, FDL_Y_SEQ, FDL_Y_MAP } fdl_ykind;

typedef struct fdl_ynode fdl_ynode;
struct fdl_ynode {
	fdl_ykind kind;
	int line;        /* 1-based */
	char *text;      /* scalars */
	bool plain;      /* an unquoted scalar (typed: null, bool, number) */
	size_t n;        /* items (seq) or pairs (map) */
	char **keys;     /* map keys */
	int *key_lines;  /* map key lines */
	fdl_ynode **items;
};

/* At most 64 MiB of input and 10,000 levels of nesting. */
int fdl_yaml_load(fdl_ynode **out, const char *data, size_t len, const char *source, fdl_error *err);
void fdl_ynode_free(fdl_ynode *n);
/* The value of `key` in a map, or NULL. */
const fdl_ynode *fdl_ynode_get(const fdl_ynode *map, const char *key, int *key_line);
/* A node as JSON, scalars typed the way YAML 1.2's core schema types plain
 * scalars (null, true/false, integers, floats; else strings). */
json_t *fdl_ynode_to_json(const fdl_ynode *n);

/* Append `v` to out as one block-style YAML document (libyaml's emitter;
 * strings quoted where a plain scalar would read back as something else),
 * ending in a newline; a failure names `what`. */
int fdl_yaml_write(fdl_buf *out, const json_t *v, const char *what, fdl_error *err);

#endif
