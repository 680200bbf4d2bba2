/* Regression runner: feed every file of the given folders to the target. */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *p = realloc(buf, cap *= 2);
			if (!p) {
				free(buf);
				buf = NULL;
			}
			buf = p;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			if (run_file(argv[i]) == 0)
				files++;
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
			if (run_file(path) == 0)
				files++;
		}
		closedir(d);
	}
	printf("%s: %d corpus inputs ran clean\n", argv[0], files);
	return 0;
}
