/*-------------------------------------------------------------------------
 *
 * kvtest.h
 *	  Test helpers: building sorted arrays of entries (FstKV) for array
 *	  iterators.  Test code only: each entry is malloc'ed on its own.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_KVTEST_H
#define FST_KVTEST_H

#include "iter.h"
#include "unit.h"

typedef struct TestKVs
{
	FstKV	   *kv;
	int			n;
	int			cap;
} TestKVs;

static inline void
kvs_init(TestKVs *t)
{
	t->kv = NULL;
	t->n = 0;
	t->cap = 0;
}

/* Appends an entry; payload may be NULL (empty). */
static inline void
kvs_add_raw(TestKVs *t, uint16 kg, const char *ukey, size_t ukey_len,
			uint64 seq, uint8 flags, uint32 xid, const char *payload,
			size_t payload_len)
{
	char	   *k = malloc(ukey_len + FST_IKEY_OVERHEAD);
	char	   *v = malloc(FST_ENTRY_HEADER_SIZE + payload_len + 1);

	if (t->n == t->cap)
	{
		t->cap = t->cap ? t->cap * 2 : 16;
		t->kv = realloc(t->kv, sizeof(FstKV) * t->cap);
	}
	fst_ikey_build(k, kg, ukey, ukey_len, seq);
	fst_entry_header_encode(v, flags, xid, 0);
	if (payload_len)
		memcpy(v + FST_ENTRY_HEADER_SIZE, payload, payload_len);
	t->kv[t->n].key = fst_slice(k, ukey_len + FST_IKEY_OVERHEAD);
	t->kv[t->n].value = fst_slice(v, FST_ENTRY_HEADER_SIZE + payload_len);
	t->n++;
}

static inline void
kvs_add(TestKVs *t, const char *ukey, uint64 seq, uint8 flags,
		const char *payload)
{
	kvs_add_raw(t, 0, ukey, strlen(ukey), seq, flags | FST_ENTRY_COMMITTED,
				(uint32) seq, payload, payload ? strlen(payload) : 0);
}

static inline int
kvs_cmp(const void *a, const void *b)
{
	return fst_ikey_cmp(((const FstKV *) a)->key, ((const FstKV *) b)->key);
}

static inline void
kvs_sort(TestKVs *t)
{
	if (t->n > 1)
		qsort(t->kv, t->n, sizeof(FstKV), kvs_cmp);
}

static inline void
kvs_free(TestKVs *t)
{
	int			i;

	for (i = 0; i < t->n; i++)
	{
		free((void *) t->kv[i].key.data);
		free((void *) t->kv[i].value.data);
	}
	free(t->kv);
	kvs_init(t);
}

static inline FstIter *
kvs_iter(const TestKVs *t)
{
	return fst_array_iter_create(t->kv, t->n);
}

/* An internal key for seeks: kg 0, ukey, seq (into buf of 64+ bytes). */
static inline FstSlice
kvs_target(char *buf, const char *ukey, uint64 seq)
{
	return fst_slice(buf, fst_ikey_build(buf, 0, ukey, strlen(ukey), seq));
}

/* Does the iterator's current key have user key ukey (kg 0) and seq? */
static inline bool
kvs_at(FstIter *it, const char *ukey, uint64 seq)
{
	FstSlice	k;

	if (!fst_iter_valid(it))
		return false;
	k = fst_iter_key(it);
	return k.len == strlen(ukey) + FST_IKEY_OVERHEAD &&
		memcmp(k.data + FST_KG_BYTES, ukey, strlen(ukey)) == 0 &&
		fst_ikey_seq(k) == seq;
}

#endif							/* FST_KVTEST_H */
