/*
 * test_sst.c — SST writer and reader: round trips, seeks, point lookups
 * with versions and visibility, bloom filter, properties, block cache.
 */
#include "sst_testutil.h"
#include "blockcache.h"
#include "bloom.h"

#include <fcntl.h>
#include <unistd.h>

static FstSstOptions
small_blocks(void)
{
	FstSstOptions o;

	fst_sst_options_default(&o);
	o.block_size = 512;			/* many blocks even for small tests */
	o.restart_interval = 4;
	return o;
}

FST_TEST(sst_roundtrip_scan_and_props)
{
	int			n = 2000;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstBuf		file;
	FstSstProps props;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstIter    *it;
	int			i;

	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 10 + i, (size_t) (i % 50));
	fst_sst_props_init(&props);
	CHECK_OK(test_build_sst(ents, n, &o, &file, &props, &err), &err);
	CHECK(props.num_entries == (uint64) n);
	CHECK(props.num_data_blocks > 10);
	CHECK(props.file_size == file.len);

	src = fst_range_source_memory(file.data, file.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK(fst_sst_props(r)->num_entries == (uint64) n);
	CHECK(fst_sst_props(r)->seq_min == 10 && fst_sst_props(r)->seq_max == (uint64) (9 + n));
	CHECK(fst_sst_props(r)->xid_min == 1000 && fst_sst_props(r)->xid_max == (uint32) (999 + n));
	CHECK(fst_sst_props(r)->num_data_blocks == props.num_data_blocks);
	CHECK(!fst_sst_props(r)->has_ttl);

	it = fst_sst_iter_create(r);
	i = 0;
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it), i++)
	{
		FstSlice	k = fst_iter_key(it);
		FstSlice	v = fst_iter_value(it);

		CHECK(i < n);
		CHECK(k.len == ents[i].klen && memcmp(k.data, ents[i].key, k.len) == 0);
		CHECK(v.len == ents[i].vlen && memcmp(v.data, ents[i].val, v.len) == 0);
	}
	CHECK_OK(fst_iter_status(it, &err), &err);
	CHECK_EQ_INT(i, n);

	/* seek to every key, and to points between keys */
	for (i = 0; i < n; i += 37)
	{
		fst_iter_seek(it, fst_slice(ents[i].key, ents[i].klen));
		CHECK(fst_iter_valid(it));
		CHECK(memcmp(fst_iter_key(it).data, ents[i].key, ents[i].klen) == 0);
	}
	{
		char		k[32];
		size_t		kl = fst_ikey_build(k, 0, "key00000100x", 12, 5);

		fst_iter_seek(it, fst_slice(k, kl));
		CHECK(fst_iter_valid(it));
		CHECK(memcmp(fst_iter_key(it).data, ents[101].key, ents[101].klen) == 0);
		kl = fst_ikey_build(k, 1, "", 0, 5);
		fst_iter_seek(it, fst_slice(k, kl));
		CHECK(!fst_iter_valid(it));
		CHECK_OK(fst_iter_status(it, &err), &err);
	}
	fst_iter_destroy(it);
	fst_sst_close(r);
	fst_range_close(src);
	fst_sst_props_free(&props);
	fst_buf_free(&file);
	fst_free(ents);
}

/* hex text, as md5() gives: 4 bits per byte that lz4 cannot exploit */
static void
hex_entry(TestEntry *e, int i)
{
	char		ukey[16];
	char		payload[72];
	uint32		h = (uint32) i * 2654435761u;
	int			j;

	snprintf(ukey, sizeof(ukey), "key%08d", i);
	for (j = 0; j < 64; j++)
	{
		h = h * 1103515245u + 12345u;
		payload[j] = "0123456789abcdef"[(h >> 16) & 15];
	}
	test_entry_make(e, 0, ukey, 11, 100 + i, FST_ENTRY_COMMITTED | FST_ENTRY_FROZEN,
					0, payload, 64);
}

static uint32
footer_version(const FstBuf *file)
{
	return fst_get_fixed32(file->data + file->len - FST_SST_FOOTER_SIZE);
}

/*
 * zstd blocks: every entry reads back, seeks and lookups work, the file is
 * stamped with the zstd format version (lz4's stays 1) and is smaller than
 * the lz4 file of the same entries.
 */
FST_TEST(sst_zstd_roundtrip_version_and_size)
{
	int			n = 3000;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o;
	FstBuf		lz4file,
				zfile;
	FstSstProps props;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstIter    *it;
	FstGetResult res;
	int			i;

	fst_sst_options_default(&o);
	o.block_size = 8192;
	for (i = 0; i < n; i++)
		hex_entry(&ents[i], i);
	CHECK_OK(test_build_sst(ents, n, &o, &lz4file, NULL, &err), &err);
	o.compression = FST_COMPRESS_ZSTD;
	fst_sst_props_init(&props);
	CHECK_OK(test_build_sst(ents, n, &o, &zfile, &props, &err), &err);
	CHECK_EQ_INT((int) footer_version(&lz4file), FST_SST_FORMAT_VERSION);
	CHECK_EQ_INT((int) footer_version(&zfile), FST_SST_FORMAT_ZSTD);
	CHECK_EQ_INT((int) props.compression, FST_COMPRESS_ZSTD);
	/* zstd codes hex in about half a byte each; lz4 keeps it as it is */
	CHECK(zfile.len * 10 < lz4file.len * 8);

	src = fst_range_source_memory(zfile.data, zfile.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK(fst_sst_props(r)->compression == FST_COMPRESS_ZSTD);
	it = fst_sst_iter_create(r);
	i = 0;
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it), i++)
	{
		FstSlice	k = fst_iter_key(it);
		FstSlice	v = fst_iter_value(it);

		CHECK(i < n);
		CHECK(k.len == ents[i].klen && memcmp(k.data, ents[i].key, k.len) == 0);
		CHECK(v.len == ents[i].vlen && memcmp(v.data, ents[i].val, v.len) == 0);
	}
	CHECK_OK(fst_iter_status(it, &err), &err);
	CHECK_EQ_INT(i, n);
	for (i = n - 1; i >= 0; i -= 97)
	{
		fst_iter_seek(it, fst_slice(ents[i].key, ents[i].klen));
		CHECK(fst_iter_valid(it));
		CHECK(memcmp(fst_iter_key(it).data, ents[i].key, ents[i].klen) == 0);
		CHECK_OK(fst_sst_get(r, fst_slice(ents[i].key, ents[i].klen - FST_SEQ_BYTES),
							 FST_MAX_SEQ, NULL, NULL, &res, NULL, NULL, &err), &err);
		CHECK(res == FST_GET_FOUND);
	}
	fst_iter_destroy(it);
	fst_sst_close(r);
	fst_range_close(src);
	fst_sst_props_free(&props);
	fst_buf_free(&lz4file);
	fst_buf_free(&zfile);
	fst_free(ents);
}

static bool
reject_xid(void *arg, const FstEntryHeader *h)
{
	return h->xid != *(uint32 *) arg;
}

FST_TEST(sst_get_versions_visibility_and_bloom)
{
	/* key "a": seq 30 (xid 3), 20 tombstone (xid 2), 10 (xid 1); key "b": 5 */
	TestEntry	e[4];
	FstSstOptions o = small_blocks();
	FstBuf		file,
				val;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstGetResult res;
	FstEntryHeader hdr;
	char		up[8];
	uint32		bad;
	int			i,
				negatives = 0;

	test_entry_make(&e[0], 3, "a", 1, 30, FST_ENTRY_COMMITTED, 3, "v30", 3);
	test_entry_make(&e[1], 3, "a", 1, 20, FST_ENTRY_COMMITTED | FST_ENTRY_TOMBSTONE, 2, NULL, 0);
	test_entry_make(&e[2], 3, "a", 1, 10, FST_ENTRY_COMMITTED, 1, "v10", 3);
	test_entry_make(&e[3], 3, "b", 1, 5, FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED, 0, "vb", 2);
	CHECK_OK(test_build_sst(e, 4, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, true);
	fst_buf_free(&file);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK(fst_sst_props(r)->num_tombstones == 1);
	CHECK(fst_sst_props(r)->kg_min == 3 && fst_sst_props(r)->kg_max == 3);
	/* the frozen entry, and xids 1 and 2 (special: no clog), are not noted */
	CHECK(fst_sst_props(r)->xid_min == 3 && fst_sst_props(r)->xid_max == 3);

	fst_buf_init(&val);
	fst_put_be16(up, 3);
	up[2] = 'a';
	CHECK_OK(fst_sst_get(r, fst_slice(up, 3), FST_MAX_SEQ, NULL, NULL, &res, &hdr, &val, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 30);
	CHECK(val.len == FST_ENTRY_HEADER_SIZE + 3 && memcmp(val.data + FST_ENTRY_HEADER_SIZE, "v30", 3) == 0);
	CHECK_OK(fst_sst_get(r, fst_slice(up, 3), 25, NULL, NULL, &res, &hdr, &val, &err), &err);
	CHECK(res == FST_GET_DELETED && hdr.seq == 20);
	CHECK_OK(fst_sst_get(r, fst_slice(up, 3), 15, NULL, NULL, &res, &hdr, &val, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 10);
	CHECK_OK(fst_sst_get(r, fst_slice(up, 3), 9, NULL, NULL, &res, &hdr, &val, &err), &err);
	CHECK(res == FST_GET_NONE);
	/* visibility: hide xid 3 and xid 2 in turn */
	bad = 3;
	CHECK_OK(fst_sst_get(r, fst_slice(up, 3), FST_MAX_SEQ, reject_xid, &bad, &res, &hdr, &val, &err), &err);
	CHECK(res == FST_GET_DELETED && hdr.seq == 20);
	up[2] = 'b';
	CHECK_OK(fst_sst_get(r, fst_slice(up, 3), FST_MAX_SEQ, NULL, NULL, &res, &hdr, &val, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.seq == 5 && (hdr.flags & FST_ENTRY_FROZEN));
	/* absent keys: "aa" sorts between, "c" after, other key group before */
	up[2] = 'c';
	CHECK_OK(fst_sst_get(r, fst_slice(up, 3), FST_MAX_SEQ, NULL, NULL, &res, &hdr, &val, &err), &err);
	CHECK(res == FST_GET_NONE);
	/* the filter answers most misses alone */
	for (i = 0; i < 1000; i++)
	{
		char		k[16];
		int			kl = snprintf(k + 2, sizeof(k) - 2, "miss%d", i) + 2;

		bool		may;

		fst_put_be16(k, 3);
		CHECK_OK(fst_sst_may_contain(r, fst_slice(k, kl), &may, &err), &err);
		if (!may)
			negatives++;
	}
	CHECK_MSG(negatives > 950, "bloom filter excluded only %d of 1000 misses", negatives);
	fst_buf_free(&val);
	fst_sst_close(r);
	fst_range_close(src);
}

static bool
accept_xid(void *arg, const FstEntryHeader *h)
{
	return h->xid == *(uint32 *) arg;
}

FST_TEST(sst_get_versions_across_blocks)
{
	/* 300 versions of one key span many 512-byte blocks */
	int			n = 300;
	TestEntry  *e = fst_calloc(n + 2, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstGetResult res;
	FstEntryHeader hdr;
	char		up[8];
	int			i;

	test_entry_make(&e[0], 0, "a", 1, 1, FST_ENTRY_COMMITTED, 1, "x", 1);
	for (i = 0; i < n; i++)
		test_entry_make(&e[i + 1], 0, "k", 1, (uint64) (n - i) * 2, FST_ENTRY_COMMITTED,
						(uint32) (n - i), "payload-payload", 15);
	test_entry_make(&e[n + 1], 0, "z", 1, 1, FST_ENTRY_COMMITTED, 1, "x", 1);
	CHECK_OK(test_build_sst(e, n + 2, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, true);
	fst_buf_free(&file);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK(fst_sst_props(r)->num_data_blocks > 5);
	fst_put_be16(up, 0);
	up[2] = 'k';
	for (i = 1; i <= n; i += 13)
	{
		/* a snapshot at seq 2i+1 sees version 2i */
		CHECK_OK(fst_sst_get(r, fst_slice(up, 3), (uint64) i * 2 + 1, NULL, NULL, &res, &hdr, NULL, &err), &err);
		CHECK(res == FST_GET_FOUND && hdr.seq == (uint64) i * 2);
	}
	/* visibility that accepts only the oldest version walks every block */
	{
		uint32		oldest = 1;

		CHECK_OK(fst_sst_get(r, fst_slice(up, 3), FST_MAX_SEQ, accept_xid, &oldest, &res, &hdr, NULL, &err), &err);
		CHECK(res == FST_GET_FOUND && hdr.xid == 1 && hdr.seq == 2);
	}
	fst_sst_close(r);
	fst_range_close(src);
	fst_free(e);
}

FST_TEST(sst_writer_rejects_disorder_and_bad_entries)
{
	TestEntry	a,
				b;
	FstSstOptions o;
	FstBuf		file;
	FstBufSink	sink;
	FstSstWriter *w;
	FstError	err;

	fst_sst_options_default(&o);
	fst_buf_init(&file);
	fst_buf_sink_init(&sink, &file);
	CHECK_OK(fst_sst_writer_create(&o, &sink.base, &w, &err), &err);
	test_entry_make(&a, 0, "b", 1, 5, FST_ENTRY_COMMITTED, 1, "x", 1);
	test_entry_make(&b, 0, "a", 1, 5, FST_ENTRY_COMMITTED, 1, "x", 1);
	CHECK_OK(fst_sst_writer_add(w, fst_slice(a.key, a.klen), fst_slice(a.val, a.vlen), &err), &err);
	CHECK(fst_sst_writer_add(w, fst_slice(b.key, b.klen), fst_slice(b.val, b.vlen), &err) == FST_INVALID_ARGUMENT);
	/* the same key again is also out of order */
	CHECK(fst_sst_writer_add(w, fst_slice(a.key, a.klen), fst_slice(a.val, a.vlen), &err) == FST_INVALID_ARGUMENT);
	/* a value without a header */
	test_entry_make(&b, 0, "c", 1, 5, FST_ENTRY_COMMITTED, 1, "x", 1);
	CHECK(fst_sst_writer_add(w, fst_slice(b.key, b.klen), fst_slice(b.val, 3), &err) == FST_INVALID_ARGUMENT);
	fst_sst_writer_destroy(w);
	fst_buf_free(&file);

	o.block_size = 10;
	CHECK(fst_sst_writer_create(&o, &sink.base, &w, &err) == FST_INVALID_ARGUMENT);
}

FST_TEST(sst_empty_file_and_ttl_range)
{
	FstSstOptions o;
	FstBuf		file;
	FstBufSink	sink;
	FstSstWriter *w;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstIter    *it;
	TestEntry	e;
	FstGetResult res;

	fst_sst_options_default(&o);
	CHECK_OK(test_build_sst(NULL, 0, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, true);
	fst_buf_free(&file);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK(fst_sst_props(r)->num_entries == 0);
	it = fst_sst_iter_create(r);
	fst_iter_seek_first(it);
	CHECK(!fst_iter_valid(it));
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_destroy(it);
	CHECK_OK(fst_sst_get(r, fst_slice("\0\0a", 3), FST_MAX_SEQ, NULL, NULL, &res, NULL, NULL, &err), &err);
	CHECK(res == FST_GET_NONE);
	fst_sst_close(r);
	fst_range_close(src);

	/* TTL range */
	fst_buf_init(&file);
	fst_buf_sink_init(&sink, &file);
	CHECK_OK(fst_sst_writer_create(&o, &sink.base, &w, &err), &err);
	test_entry_make(&e, 0, "a", 1, 5, FST_ENTRY_COMMITTED, 1, "x", 1);
	CHECK_OK(fst_sst_writer_add(w, fst_slice(e.key, e.klen), fst_slice(e.val, e.vlen), &err), &err);
	fst_sst_writer_note_ttl(w, 500);
	test_entry_make(&e, 0, "b", 1, 5, FST_ENTRY_COMMITTED, 1, "x", 1);
	CHECK_OK(fst_sst_writer_add(w, fst_slice(e.key, e.klen), fst_slice(e.val, e.vlen), &err), &err);
	fst_sst_writer_note_ttl(w, -20);
	CHECK_OK(fst_sst_writer_finish(w, NULL, &err), &err);
	fst_sst_writer_destroy(w);
	src = fst_range_source_memory(file.data, file.len, true);
	fst_buf_free(&file);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK(fst_sst_props(r)->has_ttl);
	CHECK(fst_sst_props(r)->ttl_min == -20 && fst_sst_props(r)->ttl_max == 500);
	{
		FstFileMeta m;

		memset(&m, 0, sizeof(m));
		CHECK(fst_sst_props_to_filemeta(fst_sst_props(r), &m));
		CHECK(m.has_ttl && m.ttl_min == -20 && m.num_entries == 2 && m.size == src->size);
		CHECK(fst_ikey_cmp(fst_filemeta_smallest(&m), fst_filemeta_largest(&m)) < 0);
		fst_filemeta_clear(&m);
	}
	fst_sst_close(r);
	fst_range_close(src);
}

FST_TEST(sst_uncompressed_no_filter_and_file_source)
{
	int			n = 500;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstGetResult res;
	char		path[600];
	int			fd,
				i;

	o.compression = FST_COMPRESS_NONE;
	o.bloom_bits_per_key = 0;
	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 7, 40);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	snprintf(path, sizeof(path), "%s/plain.sst", fst_test_tmpdir());
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, file.data, file.len) == (ssize_t) file.len);
	close(fd);
	fst_buf_free(&file);
	CHECK_OK(fst_range_source_file(path, &src, &err), &err);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	for (i = 0; i < n; i += 7)
	{
		char		up[16];

		memcpy(up, ents[i].key, ents[i].klen - FST_SEQ_BYTES);
		CHECK_OK(fst_sst_get(r, fst_slice(up, ents[i].klen - FST_SEQ_BYTES), FST_MAX_SEQ,
							 NULL, NULL, &res, NULL, NULL, &err), &err);
		CHECK(res == FST_GET_FOUND);
	}
	/* without a filter every lookup is answered by reading blocks */
	CHECK(fst_sst_reader_stats(r)->bloom_checks == 0);
	fst_sst_close(r);
	fst_range_close(src);
	CHECK(fst_range_source_file("/nonexistent/x.sst", &src, &err) == FST_NOT_FOUND);
	fst_free(ents);
}

FST_TEST(sst_block_cache_serves_repeat_reads)
{
	int			n = 3000;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstSstReadOptions ro;
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstBlockCache *cache = fst_block_cache_create(64 * 1024);
	FstBlockCacheStats cs;
	FstIter    *it;
	uint64		reads_before;
	int			i,
				pass;

	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 7, 30);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, true);
	fst_buf_free(&file);
	fst_sst_read_options_default(&ro);
	ro.cache = cache;
	ro.cache_id = 42;
	CHECK_OK(fst_sst_open(src, &ro, &r, &err), &err);
	for (pass = 0; pass < 2; pass++)
	{
		reads_before = src->reads;
		for (i = 0; i < 200; i++)
		{
			FstGetResult res;
			char		up[16];

			memcpy(up, ents[i].key, ents[i].klen - FST_SEQ_BYTES);
			CHECK_OK(fst_sst_get(r, fst_slice(up, ents[i].klen - FST_SEQ_BYTES), FST_MAX_SEQ,
								 NULL, NULL, &res, NULL, NULL, &err), &err);
			CHECK(res == FST_GET_FOUND);
		}
		if (pass == 1)
			CHECK_MSG(src->reads == reads_before, "second pass read %llu blocks",
					  (unsigned long long) (src->reads - reads_before));
	}
	/* a full scan through a small cache stays within its bound */
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it), i = 0; fst_iter_valid(it); fst_iter_next(it))
		i++;
	CHECK_EQ_INT(i, n);
	fst_iter_destroy(it);
	fst_block_cache_stats(cache, &cs);
	CHECK(cs.charge <= cs.capacity);
	CHECK(cs.evictions > 0 && cs.hits > 0);
	fst_block_cache_erase_file(cache, 42);
	fst_block_cache_stats(cache, &cs);
	CHECK(cs.entries == 0 && cs.charge == 0);
	fst_sst_close(r);
	fst_range_close(src);
	fst_block_cache_destroy(cache);
	fst_free(ents);
}

/* A toy shared_get/shared_put store: up to 256 blocks by (id, offset). */
typedef struct ToyShared
{
	uint64		id[256];
	uint64		off[256];
	char	   *data[256];
	size_t		len[256];
	int			n;
	int			gets;
	int			puts;
	bool		corrupt;		/* hand out damaged copies */
} ToyShared;

static bool
toy_get(void *arg, uint64 id, uint64 off, char **data, size_t *len)
{
	ToyShared  *t = arg;
	int			i;

	t->gets++;
	for (i = 0; i < t->n; i++)
		if (t->id[i] == id && t->off[i] == off)
		{
			*data = fst_malloc(t->len[i]);
			memcpy(*data, t->data[i], t->len[i]);
			if (t->corrupt)
				memset(*data + t->len[i] - 4, 0xff, 4);	/* the restart count */
			*len = t->len[i];
			return true;
		}
	return false;
}

static bool
toy_put(void *arg, uint64 id, uint64 off, const char *data, size_t len)
{
	ToyShared  *t = arg;

	t->puts++;
	if (t->n == 256)
		return false;
	t->id[t->n] = id;
	t->off[t->n] = off;
	t->data[t->n] = fst_malloc(len);
	memcpy(t->data[t->n], data, len);
	t->len[t->n] = len;
	t->n++;
	return true;
}

FST_TEST(sst_shared_cache_hooks)
{
	int			n = 2000;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstSstReadOptions ro;
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r1,
			   *r2,
			   *r3;
	ToyShared  *toy = fst_calloc(1, sizeof(ToyShared));
	FstIter    *it;
	uint64		reads;
	int			i;

	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 7, 30);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, true);
	fst_buf_free(&file);
	fst_sst_read_options_default(&ro);
	ro.cache_id = 7;
	ro.shared_get = toy_get;
	ro.shared_put = toy_put;
	ro.shared_arg = toy;

	/* the first reader finds nothing and offers every block it reads */
	CHECK_OK(fst_sst_open(src, &ro, &r1, &err), &err);
	it = fst_sst_iter_create(r1);
	for (fst_iter_seek_first(it), i = 0; fst_iter_valid(it); fst_iter_next(it))
		i++;
	CHECK_EQ_INT(i, n);
	fst_iter_destroy(it);
	CHECK(toy->n > 1 && toy->puts == toy->n);
	CHECK(fst_sst_reader_stats(r1)->shared_hits == 0);

	/* a second reader of the file (another process) reads no data block */
	CHECK_OK(fst_sst_open(src, &ro, &r2, &err), &err);
	reads = src->reads;			/* opening reads the tail */
	it = fst_sst_iter_create(r2);
	for (fst_iter_seek_first(it), i = 0; fst_iter_valid(it); fst_iter_next(it))
	{
		CHECK(fst_slice_cmp(fst_iter_key(it), fst_slice(ents[i].key, ents[i].klen)) == 0);
		i++;
	}
	CHECK_EQ_INT(i, n);
	fst_iter_destroy(it);
	CHECK_MSG(src->reads == reads, "second reader read %llu blocks",
			  (unsigned long long) (src->reads - reads));
	CHECK(fst_sst_reader_stats(r2)->shared_hits == (uint64) toy->n);

	/* a damaged copy is an error, not a crash */
	toy->corrupt = true;
	CHECK_OK(fst_sst_open(src, &ro, &r3, &err), &err);
	it = fst_sst_iter_create(r3);
	fst_iter_seek_first(it);
	CHECK(!fst_iter_valid(it));
	CHECK(fst_iter_status(it, &err) == FST_CORRUPT);
	fst_iter_destroy(it);

	fst_sst_close(r1);
	fst_sst_close(r2);
	fst_sst_close(r3);
	fst_range_close(src);
	for (i = 0; i < toy->n; i++)
		fst_free(toy->data[i]);
	fst_free(toy);
	fst_free(ents);
}

FST_TEST(sst_positions_address_every_entry)
{
	int			n = 1200;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstBuf		file,
				k,
				v;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstIter    *it;
	uint32		prev_block = 0;
	int			i;

	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 10 + i, (size_t) (i % 40));
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK(fst_sst_props(r)->restart_interval == 4);
	fst_buf_init(&k);
	fst_buf_init(&v);
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it), i = 0; fst_iter_valid(it); fst_iter_next(it), i++)
	{
		uint32		b,
					e;

		fst_sst_iter_position(it, &b, &e);
		CHECK(b == prev_block || b == prev_block + 1);
		CHECK(b != prev_block || i == 0 || e > 0);
		prev_block = b;
		CHECK_OK(fst_sst_read_at(r, b, e, &k, &v, &err), &err);
		CHECK(k.len == ents[i].klen && memcmp(k.data, ents[i].key, k.len) == 0);
		CHECK(v.len == ents[i].vlen && memcmp(v.data, ents[i].val, v.len) == 0);
	}
	CHECK_EQ_INT(i, n);
	/* positions after a seek are right too */
	fst_iter_seek(it, fst_slice(ents[777].key, ents[777].klen));
	{
		uint32		b,
					e;

		fst_sst_iter_position(it, &b, &e);
		CHECK_OK(fst_sst_read_at(r, b, e, &k, &v, &err), &err);
		CHECK(memcmp(k.data, ents[777].key, k.len) == 0);
		CHECK(fst_sst_read_at(r, b, 100000, &k, &v, &err) == FST_NOT_FOUND);
		CHECK(fst_sst_read_at(r, 1000000, 0, &k, &v, &err) == FST_NOT_FOUND);
	}
	fst_iter_destroy(it);
	fst_buf_free(&k);
	fst_buf_free(&v);
	fst_sst_close(r);
	fst_range_close(src);
	fst_buf_free(&file);
	fst_free(ents);
}

/*
 * Blocks by number (for ANALYZE's sampling): as many as the iterator
 * walks through, each one's last key the key of the last entry the
 * iterator finds in it, nothing past the last.
 */
FST_TEST(sst_blocks_by_number_name_their_last_keys)
{
	int			n = 1200;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstBuf		file,
				last;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstIter    *it;
	uint32		nblocks;
	int			i;

	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 10 + i, (size_t) (i % 40));
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	nblocks = fst_sst_num_blocks(r);
	CHECK(nblocks > 10);
	fst_buf_init(&last);
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it), i = 0; fst_iter_valid(it); fst_iter_next(it), i++)
	{
		uint32		b,
					e,
					nb,
					ne;

		fst_sst_iter_position(it, &b, &e);
		CHECK(b < nblocks);
		CHECK(fst_sst_block_last_key(r, b, &last));
		/* every key of block b is at most its last key ... */
		CHECK(fst_ikey_cmp(fst_slice(ents[i].key, ents[i].klen),
						   fst_slice(last.data, last.len)) <= 0);
		/* ... and the block's final entry is that key */
		if (i + 1 < n)
		{
			FstIter    *peek = fst_sst_iter_create(r);

			fst_iter_seek(peek, fst_slice(ents[i + 1].key, ents[i + 1].klen));
			fst_sst_iter_position(peek, &nb, &ne);
			fst_iter_destroy(peek);
		}
		else
			nb = b + 1;
		if (nb != b)
			CHECK(last.len == ents[i].klen &&
				  memcmp(last.data, ents[i].key, last.len) == 0);
	}
	CHECK_EQ_INT(i, n);
	CHECK(!fst_sst_block_last_key(r, nblocks, &last));
	CHECK(last.len == 0);
	fst_iter_destroy(it);
	fst_buf_free(&last);
	fst_sst_close(r);
	fst_range_close(src);
	fst_buf_free(&file);
	fst_free(ents);
}

/* rewrite_entry: every even-numbered entry frozen, odd ones aborted (xid 0) */
static int	rewrite_calls = 0;

static void
rewrite_even_frozen(void *arg, FstSlice ikey, char *value, size_t len)
{
	uint32		xid = fst_get_fixed32(value + 1);

	(void) ikey;
	(void) len;
	rewrite_calls++;
	if (((xid - 1000) % 2) == 0)
		value[0] = (char) (value[0] | FST_ENTRY_FROZEN);
	else
		fst_put_fixed32(value + 1, 0);
	*(int *) arg += 1;
}

FST_TEST(sst_rewrite_entry_hook)
{
	int			n = 600;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstSstReadOptions ro;
	FstBlockCache *cache = fst_block_cache_create(1 << 20);
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstIter    *it;
	int			i,
				seen = 0,
				calls_after_first;
	int			pass;

	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 10 + i, (size_t) (i % 50));
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, false);
	fst_sst_read_options_default(&ro);
	ro.cache = cache;
	ro.cache_id = 77;
	ro.rewrite_entry = rewrite_even_frozen;
	ro.rewrite_arg = &seen;
	CHECK_OK(fst_sst_open(src, &ro, &r, &err), &err);
	calls_after_first = 0;
	for (pass = 0; pass < 2; pass++)
	{
		it = fst_sst_iter_create(r);
		i = 0;
		for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it), i++)
		{
			FstEntry	e;

			CHECK(fst_entry_decode(fst_iter_key(it), fst_iter_value(it), &e));
			if (i % 2 == 0)
				CHECK(e.hdr.xid == (uint32) (1000 + i) && (e.hdr.flags & FST_ENTRY_FROZEN));
			else
				CHECK(e.hdr.xid == 0 && !(e.hdr.flags & FST_ENTRY_FROZEN));
			/* the payload is untouched */
			CHECK(memcmp(fst_iter_value(it).data + FST_ENTRY_HEADER_SIZE,
						 ents[i].val + FST_ENTRY_HEADER_SIZE,
						 ents[i].vlen - FST_ENTRY_HEADER_SIZE) == 0);
		}
		CHECK_OK(fst_iter_status(it, &err), &err);
		CHECK_EQ_INT(i, n);
		fst_iter_destroy(it);
		if (pass == 0)
			calls_after_first = rewrite_calls;
	}
	/* each entry rewritten once: the second pass hit the cache */
	CHECK_EQ_INT(seen, n);
	CHECK_EQ_INT(rewrite_calls, calls_after_first);
	fst_sst_close(r);
	fst_range_close(src);
	fst_block_cache_destroy(cache);
	fst_buf_free(&file);
	fst_free(ents);
}

/*
 * A bloom filter larger than the tail read at open is read at the first
 * lookup, not at open: a range scan never pays for it.  A corrupt filter
 * read then is reported by that lookup.
 */
FST_TEST(sst_bloom_filter_read_at_first_lookup)
{
	int			n = 80000;		/* ~100 KB of filter at 10 bits per key */
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o;
	FstBuf		file,
				val;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	FstIter    *it;
	FstGetResult res;
	FstEntryHeader hdr;
	uint64		reads_after_scan,
				filter_off;
	char	   *copy;
	int			i,
				negatives = 0;
	bool		may;

	fst_sst_options_default(&o);
	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 10, 0);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	/* the filter handle is the footer's second field */
	filter_off = fst_get_fixed64(file.data + file.len - FST_SST_FOOTER_SIZE + 4);
	CHECK_MSG(file.len - filter_off > 64 * 1024,
			  "metadata of %zu bytes fits the tail", (size_t) (file.len - filter_off));

	src = fst_range_source_memory(file.data, file.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK_EQ_INT(src->reads, 1);
	CHECK_EQ_INT(fst_sst_reader_stats(r)->filter_loads, 0);
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it), i = 0; fst_iter_valid(it); fst_iter_next(it))
		i++;
	CHECK_OK(fst_iter_status(it, &err), &err);
	fst_iter_destroy(it);
	CHECK_EQ_INT(i, n);
	CHECK_EQ_INT(fst_sst_reader_stats(r)->filter_loads, 0);
	reads_after_scan = src->reads;

	/* the first lookup reads the filter (one read), later ones do not */
	fst_buf_init(&val);
	CHECK_OK(fst_sst_get(r, fst_ikey_user_part(fst_slice(ents[77].key, ents[77].klen)),
						 FST_MAX_SEQ, NULL, NULL, &res, &hdr, &val, &err), &err);
	CHECK(res == FST_GET_FOUND && hdr.xid == 1077);
	CHECK_EQ_INT(fst_sst_reader_stats(r)->filter_loads, 1);
	CHECK(src->reads == reads_after_scan + 2);	/* filter + data block */
	for (i = 0; i < 1000; i++)
	{
		char		k[16];
		int			kl = snprintf(k + 2, sizeof(k) - 2, "miss%d", i) + 2;

		fst_put_be16(k, 0);
		CHECK_OK(fst_sst_may_contain(r, fst_slice(k, kl), &may, &err), &err);
		if (!may)
			negatives++;
	}
	CHECK_MSG(negatives > 950, "bloom filter excluded only %d of 1000 misses", negatives);
	CHECK_EQ_INT(fst_sst_reader_stats(r)->filter_loads, 1);
	fst_sst_close(r);
	fst_range_close(src);

	/* a flipped filter byte: open and scan succeed, the lookup reports it */
	copy = fst_malloc(file.len);
	memcpy(copy, file.data, file.len);
	copy[filter_off + 100] ^= 0x10;
	src = fst_range_source_memory(copy, file.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK(fst_sst_get(r, fst_ikey_user_part(fst_slice(ents[5].key, ents[5].klen)),
					  FST_MAX_SEQ, NULL, NULL, &res, &hdr, &val, &err) == FST_CORRUPT);
	CHECK(fst_sst_may_contain(r, fst_ikey_user_part(fst_slice(ents[5].key, ents[5].klen)),
							  &may, &err) == FST_CORRUPT && may);
	fst_sst_close(r);
	fst_range_close(src);

	fst_free(copy);
	fst_buf_free(&val);
	fst_buf_free(&file);
	fst_free(ents);
}

/* fst_sst_block_for: where a seek lands, for prefetching. */
FST_TEST(sst_block_for_seek_targets)
{
	int			n = 3000;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstBuf		file;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	uint64		off,
				len,
				prev = 0;
	int			i,
				changes = 0;
	char		past[16];

	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 10, 20);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	src = fst_range_source_memory(file.data, file.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	for (i = 0; i < n; i++)
	{
		FstSlice	up = fst_ikey_user_part(fst_slice(ents[i].key, ents[i].klen));

		CHECK(fst_sst_block_for(r, up, &off, &len));
		CHECK(i > 0 || off == 0);
		CHECK(off >= prev && len > FST_BLOCK_TRAILER_SIZE && off + len <= file.len);
		if (off != prev)
			changes++;
		prev = off;
	}
	CHECK_EQ_INT(changes + 1, (int) fst_sst_props(r)->num_data_blocks);
	/* after the last key: no block */
	fst_put_be16(past, 0);
	memcpy(past + 2, "zzzz", 4);
	CHECK(!fst_sst_block_for(r, fst_slice(past, 6), &off, &len));
	fst_sst_close(r);
	fst_range_close(src);
	fst_buf_free(&file);
	fst_free(ents);
}

/* the prefix rule of the test below: user keys "g%04d/..." by their group */
static size_t
group_prefix(FstSlice user_part)
{
	const char *slash;

	if (user_part.len < 3)
		return 0;
	slash = memchr(user_part.data + 2, '/', user_part.len - 2);
	return slash ? (size_t) (slash - user_part.data) + 1 : 0;
}

/*
 * fst_sst_may_contain_prefix: a file written with a prefix rule answers
 * for prefixes under that rule (never "absent" for one it holds), and for
 * any other rule, or a file without one, says "may".
 */
FST_TEST(sst_prefix_filter)
{
	int			n = 2000;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o = small_blocks();
	FstBuf		file,
				plain;
	FstSstProps props;
	FstError	err;
	FstRangeSource *src;
	FstSstReader *r;
	bool		may;
	int			i,
				negatives = 0;
	char		k[32];
	int			kl;

	/* 200 groups of 10 keys; the groups are the even numbers */
	for (i = 0; i < n; i++)
	{
		kl = snprintf(k, sizeof(k), "g%04d/row%05d", (i / 10) * 2, i);
		test_entry_make(&ents[i], 0, k, kl, 10, FST_ENTRY_COMMITTED, 1000, "p", 1);
	}
	CHECK_OK(test_build_sst(ents, n, &o, &plain, NULL, &err), &err);
	o.prefix_of = group_prefix;
	o.prefix_id = 7;
	fst_sst_props_init(&props);
	CHECK_OK(test_build_sst(ents, n, &o, &file, &props, &err), &err);
	CHECK_EQ_INT((int) props.prefix_id, 7);
	fst_sst_props_free(&props);

	src = fst_range_source_memory(file.data, file.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK_EQ_INT((int) fst_sst_props(r)->prefix_id, 7);
	for (i = 0; i < 400; i++)
	{
		fst_put_be16(k, 0);
		kl = snprintf(k + 2, sizeof(k) - 2, "g%04d/", i) + 2;
		CHECK_OK(fst_sst_may_contain_prefix(r, 7, fst_slice(k, kl), &may, &err), &err);
		if (i % 2 == 0)
			CHECK_MSG(may, "prefix of group %d, which the file holds, said absent", i);
		else if (!may)
			negatives++;
		/* under another rule, or none, the file cannot tell */
		CHECK_OK(fst_sst_may_contain_prefix(r, 8, fst_slice(k, kl), &may, &err), &err);
		CHECK(may);
		CHECK_OK(fst_sst_may_contain_prefix(r, 0, fst_slice(k, kl), &may, &err), &err);
		CHECK(may);
	}
	CHECK_MSG(negatives > 190, "prefix filter excluded only %d of 200 absent groups", negatives);
	/* whole user parts are still in the filter */
	for (i = 0; i < n; i += 97)
	{
		CHECK_OK(fst_sst_may_contain(r, fst_ikey_user_part(fst_slice(ents[i].key, ents[i].klen)),
									 &may, &err), &err);
		CHECK(may);
	}
	fst_sst_close(r);
	fst_range_close(src);

	/* a file written without the rule never says a prefix is absent */
	src = fst_range_source_memory(plain.data, plain.len, false);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	CHECK_EQ_INT((int) fst_sst_props(r)->prefix_id, 0);
	fst_put_be16(k, 0);
	kl = snprintf(k + 2, sizeof(k) - 2, "g%04d/", 1) + 2;
	CHECK_OK(fst_sst_may_contain_prefix(r, 7, fst_slice(k, kl), &may, &err), &err);
	CHECK(may);
	fst_sst_close(r);
	fst_range_close(src);

	/* a rule without an id, or an id without a rule, is refused */
	fst_buf_free(&file);
	o.prefix_id = 0;
	CHECK(test_build_sst(ents, 1, &o, &file, NULL, &err) == FST_INVALID_ARGUMENT);
	fst_buf_free(&file);
	o.prefix_of = NULL;
	o.prefix_id = 3;
	CHECK(test_build_sst(ents, 1, &o, &file, NULL, &err) == FST_INVALID_ARGUMENT);

	fst_buf_free(&file);
	fst_buf_free(&plain);
	fst_free(ents);
}
