/*
 * sst_testutil.h — helpers shared by the SST, corruption and model tests:
 * building entries and whole files in memory.
 */
#ifndef FST_SST_TESTUTIL_H
#define FST_SST_TESTUTIL_H

#include "unit.h"
#include "sst.h"

/* An entry under construction: key and value bytes owned by the test. */
typedef struct TestEntry
{
	char		key[64];
	size_t		klen;
	char		val[FST_ENTRY_HEADER_SIZE + 512];
	size_t		vlen;
} TestEntry;

static inline void
test_entry_make(TestEntry *e, uint16 kg, const char *ukey, size_t ulen,
				uint64 seq, uint8 flags, uint32 xid,
				const char *payload, size_t plen)
{
	e->klen = fst_ikey_build(e->key, kg, ukey, ulen, seq);
	fst_entry_header_encode(e->val, flags, xid, 0);
	if (plen)
		memcpy(e->val + FST_ENTRY_HEADER_SIZE, payload, plen);
	e->vlen = FST_ENTRY_HEADER_SIZE + plen;
}

/* "key%08d" user keys in key group kg, one version each, payload "v%d..." */
static inline void
test_entry_numbered(TestEntry *e, int i, uint64 seq, size_t plen)
{
	char		ukey[16];
	char		payload[512];
	size_t		j;

	snprintf(ukey, sizeof(ukey), "key%08d", i);
	for (j = 0; j < plen && j < sizeof(payload); j++)
		payload[j] = (char) ('a' + (i + j * 7) % 26);
	test_entry_make(e, (uint16) (i % 4 == 0 ? 0 : 0), ukey, 11, seq,
					FST_ENTRY_COMMITTED, 1000 + i, payload, plen);
}

/* Writes entries (already sorted) into *file with the given options. */
static inline FstCode
test_build_sst(const TestEntry *ents, int n, const FstSstOptions *opt,
			   FstBuf *file, FstSstProps *props, FstError *err)
{
	FstBufSink	sink;
	FstSstWriter *w;
	FstCode		rc;
	int			i;

	fst_buf_init(file);
	fst_buf_sink_init(&sink, file);
	rc = fst_sst_writer_create(opt, &sink.base, &w, err);
	if (rc != FST_OK)
		return rc;
	for (i = 0; i < n && rc == FST_OK; i++)
		rc = fst_sst_writer_add(w, fst_slice(ents[i].key, ents[i].klen),
								fst_slice(ents[i].val, ents[i].vlen), err);
	if (rc == FST_OK)
		rc = fst_sst_writer_finish(w, props, err);
	fst_sst_writer_destroy(w);
	return rc;
}

#endif
