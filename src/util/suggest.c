/* "Did you mean": the candidate closest to a mistyped word, as Git
 * suggests a command or a ref (the optimal string alignment distance:
 * insertions, deletions, substitutions and swaps of two neighbours). */
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* The distance between a and b, or `cap` + 1 when it is more than `cap`
 * (or the words are too long to be worth comparing). */
static size_t distance(const char *a, const char *b, size_t cap)
{
	size_t n = strlen(a), m = strlen(b);
	if (n > 256 || m > 256 || (n > m ? n - m : m - n) > cap)
		return cap + 1;
	size_t *row = calloc(3 * (m + 1), sizeof *row);
	if (!row)
		return cap + 1;
	size_t *prev2 = row, *prev = row + m + 1, *cur = row + 2 * (m + 1);
	for (size_t j = 0; j <= m; j++)
		prev[j] = j;
	for (size_t i = 1; i <= n; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t best = prev[j - 1] + cost;
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	size_t d = prev[m];
	free(row);
	return d;
}

const char *fdl_closest(const char *word, const char *const *candidates, size_t n)
{
	if (!word || !*word)
		return NULL;
	/* a typo, not another word: one edit in short words, up to a third */
	size_t len = strlen(word), cap = len / 3 > 3 ? 3 : len / 3 ? len / 3 : 1;
	const char *best = NULL;
	size_t best_d = cap + 1;
	for (size_t i = 0; i < n; i++) {
		if (!candidates[i] || !strcmp(candidates[i], word))
			continue;
		size_t d = distance(word, candidates[i], cap);
		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best;
}
