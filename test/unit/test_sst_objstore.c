/*
 * test_sst_objstore.c — SST files written to and read back from the
 * file:// object store through ranged reads: the path every table's reads
 * take, and what a size mismatch looks like.
 */
#include "sst_testutil.h"
#include "objstore.h"
#include "objstore_source.h"

#include <sys/stat.h>

FST_TEST(sst_read_through_object_store)
{
	int			n = 1500;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o;
	FstBuf		file;
	FstError	err;
	FstObjStore *store;
	FstRangeSource *src;
	FstSstReader *r;
	FstIter    *it;
	char		url[700],
				dir[600];
	const char *key = "c1/tables/t1/sst/0a/000000000010.sst";
	uint64		gets_after_open;
	int			i;

	fst_sst_options_default(&o);
	o.block_size = 1024;
	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 50, 60);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	snprintf(dir, sizeof(dir), "%s/remote", fst_test_tmpdir());
	mkdir(dir, 0700);
	snprintf(url, sizeof(url), "file://%s", dir);
	CHECK_OK(fst_objstore_open(url, &store, &err), &err);
	CHECK_OK(fst_objstore_put_if_absent(store, key, file.data, file.len, &err), &err);

	/* size from HEAD */
	CHECK_OK(fst_range_source_object(store, key, 0, &src, &err), &err);
	CHECK(src->size == file.len);
	CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
	/* opening a small file is one ranged GET (the tail) */
	CHECK_EQ_INT(src->reads, 1);
	gets_after_open = fst_objstore_stats(store)->requests[FST_OBJ_OP_GET_RANGE];
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it), i = 0; fst_iter_valid(it); fst_iter_next(it), i++)
		CHECK(memcmp(fst_iter_key(it).data, ents[i].key, ents[i].klen) == 0);
	CHECK_OK(fst_iter_status(it, &err), &err);
	CHECK_EQ_INT(i, n);
	CHECK(fst_objstore_stats(store)->requests[FST_OBJ_OP_GET_RANGE] - gets_after_open ==
		  fst_sst_props(r)->num_data_blocks);
	fst_iter_destroy(it);
	fst_sst_close(r);
	fst_range_close(src);

	/* a recorded size larger than the object: corrupt, not a crash */
	CHECK_OK(fst_range_source_object(store, key, file.len + 100, &src, &err), &err);
	CHECK(fst_sst_open(src, NULL, &r, &err) == FST_CORRUPT);
	fst_range_close(src);
	/* a missing object */
	CHECK(fst_range_source_object(store, "c1/none.sst", 0, &src, &err) == FST_NOT_FOUND);

	fst_objstore_close(store);
	fst_buf_free(&file);
	fst_free(ents);
}
