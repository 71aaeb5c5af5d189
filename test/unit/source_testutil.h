/*-------------------------------------------------------------------------
 *
 * source_testutil.h
 *	  A put source for the tests of streamed puts (test_objstore.c,
 *	  test_s3.c, test_diskcache.c): a body in memory read back in pieces,
 *	  counting its reads, that can be told to fail at an offset; and the
 *	  contract every backend's streamed create-if-absent keeps.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_SOURCE_TESTUTIL_H
#define FST_SOURCE_TESTUTIL_H

#include "objstore.h"
#include "unit.h"

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

/*
 * fst_objstore_put_if_absent_source on store, with a body of len bytes
 * (more than one 256 kB piece): stored whole, read in pieces of at most
 * 256 kB; a taken key refused with the object unchanged; a source that
 * fails half way fails the put with its error and leaves no object.
 */
static inline void
test_source_put_contract(FstObjStore *store, uint64 len, unsigned seed)
{
	char	   *body = test_source_body(len, seed);
	FstError	err;
	FstBuf		b;
	TestSource	t;
	FstObjInfo	info;

	fst_buf_init(&b);
	test_source_init(&t, body, len);
	CHECK_OK(fst_objstore_put_if_absent_source(store, "s/big", &t.src, &err), &err);
	CHECK(t.reads >= 2);
	CHECK(t.largest <= 256 * 1024);
	CHECK_OK(fst_objstore_get(store, "s/big", &b, &err), &err);
	CHECK(b.len == len && memcmp(b.data, body, len) == 0);
	/* taken: refused, the object as it was */
	test_source_init(&t, "other", 5);
	CHECK(fst_objstore_put_if_absent_source(store, "s/big", &t.src, &err) == FST_ALREADY_EXISTS);
	CHECK_OK(fst_objstore_get(store, "s/big", &b, &err), &err);
	CHECK(b.len == len && memcmp(b.data, body, len) == 0);
	/* a source that fails half way: its error, and no object */
	test_source_init(&t, body, len);
	t.fail_at = len / 2;
	CHECK(fst_objstore_put_if_absent_source(store, "s/half", &t.src, &err) == FST_IO_ERROR);
	CHECK_MSG(strstr(err.msg, "test source fails") != NULL, "%s", err.msg);
	CHECK(fst_objstore_head(store, "s/half", &info, &err) == FST_NOT_FOUND);
	free(body);
	fst_buf_free(&b);
}

#endif							/* FST_SOURCE_TESTUTIL_H */
