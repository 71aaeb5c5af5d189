/*-------------------------------------------------------------------------
 *
 * source_testutil.h
 *	  A put source for the tests of streamed puts (test_objstore.c,
 *	  test_s3.c, test_diskcache.c): a body in memory read back in pieces,
 *	  counting its reads, that can be told to fail at an offset.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_SOURCE_TESTUTIL_H
#define FST_SOURCE_TESTUTIL_H

#include "objstore.h"

typedef struct TestSource
{
	FstPutSource src;
	const char *data;
	uint64		fail_at;		/* a read reaching past this fails */
	int			reads;			/* reads made */
	size_t		largest;		/* the largest piece asked for */
} TestSource;

static FstCode
test_source_read(void *arg, uint64 offset, char *buf, size_t n, FstError *err)
{
	TestSource *t = arg;

	t->reads++;
	if (n > t->largest)
		t->largest = n;
	if (offset + n > t->fail_at)
		return fst_error(err, FST_IO_ERROR, "test source fails at " UINT64_FORMAT,
						 t->fail_at);
	memcpy(buf, t->data + offset, n);
	return FST_OK;
}

static inline void
test_source_init(TestSource *t, const char *data, uint64 len)
{
	memset(t, 0, sizeof(*t));
	t->data = data;
	t->fail_at = UINT64_MAX;
	t->src.len = len;
	t->src.read = test_source_read;
	t->src.arg = t;
}

/* len bytes of a pattern no two offsets of which repeat soon */
static inline char *
test_source_body(uint64 len, unsigned seed)
{
	char	   *b = malloc(len ? len : 1);
	uint64		i;
	uint32		x = seed * 2654435761u + 1;

	for (i = 0; i < len; i++)
	{
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b[i] = (char) x;
	}
	return b;
}

#endif							/* FST_SOURCE_TESTUTIL_H */
