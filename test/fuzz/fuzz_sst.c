/*
 * fuzz_sst.c — libFuzzer target for the SST reader.
 *
 * The input is taken as a whole SST file.  The first byte chooses whether
 * checksums are verified: without them the fuzzer reaches the footer, index,
 * properties, filter and block parsers directly (a random input never
 * passes a CRC).  Any input must give an error code or a consistent file,
 * never a crash, a hang or an out-of-bounds access.  Blocks go through a
 * block cache, so that point reads also take fst_sst_peek's path (a search
 * in the cached block), whose answers must be versions of the key asked.
 */
#include "blockcache.h"
#include "sst.h"

#include <stdlib.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FstRangeSource *src;
	FstSstReadOptions ro;
	FstSstReader *r;
	FstError	err;
	FstIter    *it;
	uint64		n = 0;
	FstBuf		last;
	FstBlockCache *cache;
	static FstSstPeek pk;

	if (size < 1)
		return 0;
	cache = fst_block_cache_create(1 << 20);
	if (cache == NULL)
		return 0;
	fst_sst_read_options_default(&ro);
	ro.verify_checksums = (data[0] & 1) == 0;
	ro.cache = cache;
	ro.cache_id = 1;
	src = fst_range_source_memory((const char *) data + 1, size - 1, false);
	if (src == NULL)
	{
		fst_block_cache_destroy(cache);
		return 0;
	}
	if (fst_sst_open(src, &ro, &r, &err) != FST_OK)
	{
		fst_range_close(src);
		fst_block_cache_destroy(cache);
		return 0;
	}
	fst_buf_init(&last);
	it = fst_sst_iter_create(r);
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
	{
		FstSlice	k = fst_iter_key(it);
		FstSlice	v = fst_iter_value(it);
		FstGetResult res;

		/* a verified file is sorted */
		if (ro.verify_checksums && n > 0 && fst_ikey_valid(k) &&
			fst_ikey_cmp(fst_slice(last.data, last.len), k) >= 0)
			abort();
		last.len = 0;
		fst_buf_append(&last, k.data, k.len);
		if (fst_ikey_valid(k) && k.len >= FST_IKEY_OVERHEAD && (n % 7) == 0)
		{
			(void) fst_sst_get(r, fst_ikey_user_part(k), FST_MAX_SEQ, NULL, NULL,
							   &res, NULL, NULL, &err);
			{
				FstSlice	up = fst_ikey_user_part(fst_slice(last.data, last.len));
				char		target[256];

				if (up.len + FST_SEQ_BYTES <= sizeof(target))
				{
					int			i;

					memcpy(target, up.data, up.len);
					fst_put_be64(target + up.len, FST_MAX_SEQ);
					if (fst_sst_peek(r, fst_slice(target, up.len + FST_SEQ_BYTES), up, &pk))
						for (i = 0; i < pk.nversions; i++)
							if (fst_slice_cmp(fst_ikey_user_part(pk.v[i].key), up) != 0)
								abort();
				}
			}
			fst_iter_seek(it, fst_slice(last.data, last.len));
			if (!fst_iter_valid(it))
				break;
		}
		(void) v;
		if (++n > 100000)
			break;
	}
	fst_iter_destroy(it);
	fst_buf_free(&last);
	fst_sst_close(r);
	fst_range_close(src);
	fst_block_cache_destroy(cache);
	return 0;
}
