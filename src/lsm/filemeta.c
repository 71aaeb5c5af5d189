/*-------------------------------------------------------------------------
 *
 * filemeta.c
 *	  Ownership helpers for FstFileMeta.
 *
 *-------------------------------------------------------------------------
 */
#include "filemeta.h"

static char *
dup_bytes(const char *p, size_t n)
{
	char	   *r = fst_malloc(n);

	if (r && n)
		memcpy(r, p, n);
	return r;
}

bool
fst_filemeta_set_range(FstFileMeta *m, FstSlice smallest, FstSlice largest)
{
	char	   *s = dup_bytes(smallest.data, smallest.len);
	char	   *l = dup_bytes(largest.data, largest.len);

	if (s == NULL || l == NULL)
	{
		fst_free(s);
		fst_free(l);
		return false;
	}
	fst_free(m->smallest);
	fst_free(m->largest);
	m->smallest = s;
	m->smallest_len = smallest.len;
	m->largest = l;
	m->largest_len = largest.len;
	return true;
}

bool
fst_filemeta_copy(FstFileMeta *dst, const FstFileMeta *src)
{
	*dst = *src;
	dst->smallest = NULL;
	dst->largest = NULL;
	if (!fst_filemeta_set_range(dst, fst_filemeta_smallest(src),
								fst_filemeta_largest(src)))
	{
		memset(dst, 0, sizeof(*dst));
		return false;
	}
	return true;
}

void
fst_filemeta_clear(FstFileMeta *m)
{
	fst_free(m->smallest);
	fst_free(m->largest);
	memset(m, 0, sizeof(*m));
}
