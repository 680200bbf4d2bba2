/* YAML through libyaml, the one place that speaks it: a document as a
 * small tree of nodes with line numbers, duplicate keys refused; and JSON
 * values written out as YAML (fdl checkout's dataset.yml). */
#include "yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 10000

void fdl_ynode_free(fdl_ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		fdl_ynode_free(n->items[i]);
		if (n->keys)
			free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->key_lines);
	free(n->text);
	free(n);
}

static int copy_node(fdl_ynode **out, yaml_document_t *doc, yaml_node_t *yn, int depth, const char *source,
		     fdl_error *err)
{
	if (depth > MAX_DEPTH)
		return fdl_fail(err, FDL_EINVALID, "%s: nested more than %d levels deep", source, MAX_DEPTH);
	fdl_ynode *n = calloc(1, sizeof *n);
	if (!n)
		return fdl_oom(err);
	n->line = (int)yn->start_mark.line + 1;
	int rc = 0;
	if (yn->type == YAML_SCALAR_NODE) {
		n->kind = FDL_Y_SCALAR;
		n->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		n->text = malloc(yn->data.scalar.length + 1);
		if (!n->text)
			rc = fdl_oom(err);
		else {
			memcpy(n->text, yn->data.scalar.value, yn->data.scalar.length);
			n->text[yn->data.scalar.length] = '\0';
			if (strlen(n->text) != yn->data.scalar.length)
				rc = fdl_fail(err, FDL_EINVALID, "%s, line %d: a value contains a NUL byte", source,
					      n->line);
		}
	} else if (yn->type == YAML_SEQUENCE_NODE) {
		n->kind = FDL_Y_SEQ;
		size_t count = (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
		n->items = count ? calloc(count, sizeof *n->items) : NULL;
		if (count && !n->items)
			rc = fdl_oom(err);
		for (size_t i = 0; i < count && !rc; i++) {
			yaml_node_t *child = yaml_document_get_node(doc, yn->data.sequence.items.start[i]);
			rc = copy_node(&n->items[i], doc, child, depth + 1, source, err);
			if (!rc)
				n->n++;
		}
	} else if (yn->type == YAML_MAPPING_NODE) {
		n->kind = FDL_Y_MAP;
		size_t count = (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
		n->items = count ? calloc(count, sizeof *n->items) : NULL;
		n->keys = count ? calloc(count, sizeof *n->keys) : NULL;
		n->key_lines = count ? calloc(count, sizeof *n->key_lines) : NULL;
		if (count && (!n->items || !n->keys || !n->key_lines))
			rc = fdl_oom(err);
		for (size_t i = 0; i < count && !rc; i++) {
			yaml_node_pair_t *p = &yn->data.mapping.pairs.start[i];
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			int kline = (int)k->start_mark.line + 1;
			if (k->type != YAML_SCALAR_NODE) {
				rc = fdl_fail(err, FDL_EINVALID, "%s, line %d: a key must be a plain string", source,
					      kline);
				break;
			}
			char *key = malloc(k->data.scalar.length + 1);
			if (!key) {
				rc = fdl_oom(err);
				break;
			}
			memcpy(key, k->data.scalar.value, k->data.scalar.length);
			key[k->data.scalar.length] = '\0';
			for (size_t j = 0; j < n->n; j++)
				if (!strcmp(n->keys[j], key)) {
					rc = fdl_fail(err, FDL_EINVALID, "%s, line %d: key '%s' appears twice (first on line %d)",
						      source, kline, key, n->key_lines[j]);
					break;
				}
			if (!rc)
				rc = copy_node(&n->items[i], doc, yaml_document_get_node(doc, p->value), depth + 1,
					       source, err);
			if (rc) {
				free(key);
				fdl_ynode_free(n->items[i]);
				n->items[i] = NULL;
				break;
			}
			n->keys[i] = key;
			n->key_lines[i] = kline;
			n->n++;
		}
	}
	if (rc) {
		fdl_ynode_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

int fdl_yaml_load(fdl_ynode **out, const char *data, size_t len, const char *source, fdl_error *err)
{
	if (len > (64u << 20))
		return fdl_fail(err, FDL_EINVALID, "%s is larger than 64 MiB", source);
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		return fdl_fail(err, FDL_ERROR, "libyaml: cannot start a parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		rc = fdl_fail(err, FDL_EINVALID, "%s, line %zu, column %zu: %s%s%s", source,
			      parser.problem_mark.line + 1, parser.problem_mark.column + 1,
			      parser.problem ? parser.problem : "not valid YAML", parser.context ? " " : "",
			      parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root)
		rc = fdl_fail(err, FDL_EINVALID, "%s is empty", source);
	else
		rc = copy_node(out, &doc, root, 0, source, err);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return rc;
}

const fdl_ynode *fdl_ynode_get(const fdl_ynode *map, const char *key, int *key_line)
{
	if (!map || map->kind != FDL_Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i], key)) {
			if (key_line)
				*key_line = map->key_lines[i];
			return map->items[i];
		}
	return NULL;
}

static json_t *scalar_json(const fdl_ynode *n)
{
	const char *s = n->text;
	if (!n->plain)
		return json_string(s);
	if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();
	char *end;
	errno = 0;
	long long i = strtoll(s, &end, 10);
	if (!*end && errno == 0 && (s[0] == '-' || s[0] == '+' || (s[0] >= '0' && s[0] <= '9')))
		return json_integer(i);
	errno = 0;
	double d = strtod(s, &end);
	if (!*end && errno == 0 && strspn(s, "+-0123456789.eE") == strlen(s))
		return json_real(d);
	return json_string(s);
}

json_t *fdl_ynode_to_json(const fdl_ynode *n)
{
	json_t *j = NULL;
	switch (n->kind) {
	case FDL_Y_SCALAR:
		return scalar_json(n);
	case FDL_Y_SEQ:
		j = json_array();
		for (size_t i = 0; j && i < n->n; i++)
			if (json_array_append_new(j, fdl_ynode_to_json(n->items[i]))) {
				json_decref(j);
				return NULL;
			}
		return j;
	case FDL_Y_MAP:
		j = json_object();
		for (size_t i = 0; j && i < n->n; i++)
			if (json_object_set_new(j, n->keys[i], fdl_ynode_to_json(n->items[i]))) {
				json_decref(j);
				return NULL;
			}
		return j;
	}
	return NULL;
}

/* ---- writing ------------------------------------------------------------ */

/* Would a plain scalar with this text read back as something else than a
 * string (null, a boolean, a number) or not at all? */
static bool needs_quotes(const char *s)
{
	if (!*s || strchr(":#{}[],&*!|>'\"%@`\n", s[0]) || strchr(s, ':') || strchr(s, '#') || strchr(s, '\n') ||
	    s[strlen(s) - 1] == ' ' || s[0] == ' ' || s[0] == '-' || s[0] == '?')
		return true;
	const char *words[] = {"null", "Null", "NULL", "~", "true", "True", "TRUE", "false", "False", "FALSE",
			       "yes", "no", "on", "off", "Yes", "No", "On", "Off", NULL};
	for (const char **w = words; *w; w++)
		if (!strcmp(s, *w))
			return true;
	char *end;
	strtod(s, &end);
	return *end == '\0' || ((s[0] == '.' || s[0] == '+') && s[1]);
}

static int emit(yaml_emitter_t *em, const json_t *v)
{
	yaml_event_t ev;
	char num[64];
	const char *text = NULL;
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		const char *k;
		json_t *x;
		json_object_foreach((json_t *)v, k, x)
		{
			json_t *key = json_string(k);
			int rc = key ? emit(em, key) : -1;
			json_decref(key);
			if (rc || emit(em, x))
				return -1;
		}
		return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev) ? 0 : -1;
	}
	case JSON_ARRAY: {
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) if (emit(em, x)) return -1;
		return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev) ? 0 : -1;
	}
	case JSON_STRING:
		text = json_string_value(v);
		style = needs_quotes(text) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		text = num;
		break;
	case JSON_REAL:
		snprintf(num, sizeof num, "%.17g", json_real_value(v));
		text = num;
		break;
	case JSON_TRUE:
		text = "true";
		break;
	case JSON_FALSE:
		text = "false";
		break;
	default:
		text = "null";
		break;
	}
	return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text),
					    style != YAML_DOUBLE_QUOTED_SCALAR_STYLE, 1, style) &&
			       yaml_emitter_emit(em, &ev)
		       ? 0
		       : -1;
}

static int to_buf(void *data, unsigned char *bytes, size_t size)
{
	fdl_error e;
	return fdl_buf_add(data, bytes, size, &e) == 0;
}

int fdl_yaml_write(fdl_buf *out, const json_t *v, const char *what, fdl_error *err)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	if (!yaml_emitter_initialize(&em))
		return fdl_oom(err);
	int rc = 0;
	yaml_emitter_set_output(&em, to_buf, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, 100);
	if (!(yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&em, &ev) &&
	      yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&em, &ev) &&
	      emit(&em, v) == 0 && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev) &&
	      yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev)))
		rc = fdl_fail(err, FDL_ERROR, "cannot write %s as YAML: %s", what,
			      em.problem ? em.problem : "out of memory");
	if (!rc)
		yaml_emitter_flush(&em);
	yaml_emitter_delete(&em);
	if (!rc && out->len && out->data[out->len - 1] != '\n')
		rc = fdl_buf_puts(out, "\n", err);
	return rc;
}
