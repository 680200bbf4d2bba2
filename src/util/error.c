/* fdl_error: setting, prefixing and clearing the one error type, and the
 * names of its codes. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

void fdl_free(void *ptr)
{
	free(ptr);
}

int fdl_fail(fdl_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		vsnprintf(err->message, sizeof err->message, fmt, ap);
		va_end(ap);
	}
	return code;
}

int fdl_error_prefix(fdl_error *err, const char *fmt, ...)
{
	if (!err)
		return FDL_ERROR;
	char prefix[512];
	char old[sizeof err->message];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof old);
	/* prefix + ": " + old, cut to fit */
	size_t pl = strnlen(prefix, sizeof prefix);
	size_t room = sizeof err->message - 1;
	size_t n = 0;
	memcpy(err->message, prefix, pl < room ? pl : room);
	n = pl < room ? pl : room;
	if (n + 2 <= room) {
		memcpy(err->message + n, ": ", 2);
		n += 2;
	}
	size_t ol = strnlen(old, sizeof old);
	size_t take = ol < room - n ? ol : room - n;
	memcpy(err->message + n, old, take);
	err->message[n + take] = '\0';
	return err->code;
}

void fdl_error_clear(fdl_error *err)
{
	if (err) {
		err->code = FDL_OK;
		err->message[0] = '\0';
	}
}

#define FDL_STR_(x) #x
#define FDL_STR(x) FDL_STR_(x)

const char *fdl_libversion(void)
{
	return FDL_STR(FDL_VERSION_MAJOR) "." FDL_STR(FDL_VERSION_MINOR) "." FDL_STR(FDL_VERSION_PATCH);
}

int fdl_oom(fdl_error *err)
{
	return fdl_fail(err, FDL_ENOMEM, "out of memory");
}

int fdl_options_check(unsigned int version, unsigned int known, const char *fn, const char *type, fdl_error *err)
{
	if (version >= 1 && version <= known)
		return 0;
	char macro[64];
	size_t n = 0;
	const char *name = strncmp(type, "fdl_", 4) ? type : type + 4;
	for (; name[n] && n < sizeof macro - 1; n++)
		macro[n] = (char)(name[n] >= 'a' && name[n] <= 'z' ? name[n] - 'a' + 'A' : name[n]);
	macro[n] = '\0';
	return fdl_fail(err, FDL_EINVALID,
			"%s: %s version %u, expected 1 to %u: start the struct from FDL_%s_INIT (a program built "
			"against a newer fdl.h than this libfdl, or a struct not initialised)",
			fn, type, version, known, macro);
}
