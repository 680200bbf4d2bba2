/* AWS-style INI files (ini.c). */
#ifndef FDL_UTIL_INI_H
#define FDL_UTIL_INI_H

#include "util.h"

/* One value of an AWS-style INI file: `section` is "default", "profile x"
 * or "x"; `key` is "region" or, for a nested block ("s3 =" followed by
 * indented lines), "s3.addressing_style". *out is NULL when absent. A
 * missing file is not an error. Caller frees *out. */
int fdl_ini_get(char **out, const char *text, size_t len, const char *section, const char *key);

#endif
