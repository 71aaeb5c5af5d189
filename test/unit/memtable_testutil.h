/*
 * memtable_testutil.h — helpers shared by the memtable tests: regions
 * formatted as memtables, inserting test entries, reference ordering.
 */
#ifndef FST_MEMTABLE_TESTUTIL_H
#define FST_MEMTABLE_TESTUTIL_H

#include "sst_testutil.h"
#include "memtable.h"

/* A malloc'ed region formatted as a memtable. */
static inline FstMemtable *
test_mt_create(size_t size, uint64 seed)
{
	void	   *region = fst_malloc(size);
	FstMemtable *mt;
	FstError	err;

	if (region == NULL)
		return NULL;
	if (fst_memtable_init(region, size, seed, &mt, &err) != FST_OK)
	{
		fprintf(stderr, "fst_memtable_init: %s\n", err.msg);
		fst_free(region);
		return NULL;
	}
	return mt;
}

static inline void
test_mt_free(FstMemtable *mt)
{
	if (mt)
		fst_free(fst_memtable_region(mt));
}

static inline FstCode
mt_put(FstMemtable *mt, const TestEntry *e, uint32 *ref, FstError *err)
{
	return fst_memtable_insert(mt, fst_slice(e->key, e->klen),
							   fst_slice(e->val, e->vlen), ref, err);
}

static inline int
cmp_test_entry(const void *a, const void *b)
{
	const TestEntry *x = a;
	const TestEntry *y = b;

	return fst_ikey_cmp(fst_slice(x->key, x->klen), fst_slice(y->key, y->klen));
}

/* The user part (key group + user key) of a test key, into buf. */
static inline FstSlice
user_part(char *buf, uint16 kg, const char *ukey, size_t ulen)
{
	fst_put_be16(buf, kg);
	memcpy(buf + FST_KG_BYTES, ukey, ulen);
	return fst_slice(buf, FST_KG_BYTES + ulen);
}

#endif
