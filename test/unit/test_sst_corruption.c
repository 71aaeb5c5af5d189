/*
 * test_sst_corruption.c — every byte of an SST is covered by a checksum:
 * flipping any byte, or truncating the file anywhere, must be reported as
 * corruption by open, a full scan or a lookup, never crash and never
 * answer.
 */
#include "sst_testutil.h"

/* Opens file bytes and scans everything; returns the first failure code. */
static FstCode
open_and_scan(const char *data, size_t len, bool verify, uint64 *nentries)
{
	FstRangeSource *src = fst_range_source_memory(data, len, false);
	FstSstReadOptions ro;
	FstSstReader *r;
	FstIter    *it;
	FstError	err;
	FstCode		rc;

	*nentries = 0;
	fst_sst_read_options_default(&ro);
	ro.verify_checksums = verify;
	rc = fst_sst_open(src, &ro, &r, &err);
	if (rc == FST_OK)
	{
		it = fst_sst_iter_create(r);
		for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
			(*nentries)++;
		rc = fst_iter_status(it, &err);
		fst_iter_destroy(it);
		if (rc == FST_OK)
		{
			/* a lookup reads the bloom filter if open did not */
			FstGetResult res;
			FstEntryHeader hdr;
			FstBuf		val;
			char		up[8] = {0, 0, 'k', 'e', 'y'};

			fst_buf_init(&val);
			rc = fst_sst_get(r, fst_slice(up, 5), FST_MAX_SEQ, NULL, NULL,
							 &res, &hdr, &val, &err);
			fst_buf_free(&val);
		}
		fst_sst_close(r);
	}
	fst_range_close(src);
	return rc;
}

static void
build_sample(FstBuf *file, int compression)
{
	TestEntry	ents[120];
	FstSstOptions o;
	FstError	err;
	int			i;

	fst_sst_options_default(&o);
	o.block_size = 256;
	o.compression = compression;
	for (i = 0; i < (int) lengthof(ents); i++)
		test_entry_numbered(&ents[i], i, 100 + i, 24);
	if (test_build_sst(ents, lengthof(ents), &o, file, NULL, &err) != FST_OK)
		fst_buf_init(file);
}

static void
flip_every_byte(int compression)
{
	FstBuf		file;
	char	   *copy;
	uint64		n;
	size_t		pos;
	int			undetected = 0;

	build_sample(&file, compression);
	CHECK(file.len > 1000);
	CHECK(open_and_scan(file.data, file.len, true, &n) == FST_OK && n == 120);
	copy = fst_malloc(file.len);
	for (pos = 0; pos < file.len; pos++)
	{
		static const uint8 masks[] = {0x01, 0x80, 0xff};
		int			m;

		for (m = 0; m < 3; m++)
		{
			FstCode		rc;

			memcpy(copy, file.data, file.len);
			copy[pos] ^= (char) masks[m];
			rc = open_and_scan(copy, file.len, true, &n);
			if (rc != FST_CORRUPT)
			{
				if (undetected++ < 5)
					fst_test_fail(__FILE__, __LINE__,
								  "flip 0x%02x at byte %zu of %zu gave %s",
								  masks[m], pos, file.len, fst_code_name(rc));
			}
			/* without checksums: any answer, but no crash (ASan watches) */
			(void) open_and_scan(copy, file.len, false, &n);
		}
	}
	CHECK_EQ_INT(undetected, 0);
	fst_free(copy);
	fst_buf_free(&file);
}

FST_TEST(sst_corruption_every_byte_flip_lz4)
{
	flip_every_byte(FST_COMPRESS_LZ4);
}

FST_TEST(sst_corruption_every_byte_flip_zstd)
{
	flip_every_byte(FST_COMPRESS_ZSTD);
}

FST_TEST(sst_corruption_every_byte_flip_uncompressed)
{
	flip_every_byte(FST_COMPRESS_NONE);
}

FST_TEST(sst_corruption_every_truncation)
{
	FstBuf		file;
	uint64		n;
	size_t		len;

	build_sample(&file, FST_COMPRESS_LZ4);
	CHECK(file.len > 1000);
	for (len = 0; len < file.len; len++)
	{
		char	   *copy = fst_malloc(len);
		FstCode		rc;

		memcpy(copy, file.data, len);
		rc = open_and_scan(copy, len, true, &n);
		fst_free(copy);
		CHECK_MSG(rc == FST_CORRUPT, "truncation to %zu bytes gave %s", len,
				  fst_code_name(rc));
	}
	/* bytes appended after the footer are not an SST either */
	fst_buf_append(&file, "x", 1);
	CHECK(open_and_scan(file.data, file.len, true, &n) == FST_CORRUPT);
	fst_buf_free(&file);
}

FST_TEST(sst_corruption_newer_format_version_is_not_supported)
{
	FstBuf		file;
	uint64		n;
	char	   *footer;

	build_sample(&file, FST_COMPRESS_LZ4);
	footer = file.data + file.len - FST_SST_FOOTER_SIZE;
	fst_put_fixed32(footer, FST_SST_FORMAT_ZSTD + 1);
	fst_put_fixed32(footer + 52, fst_crc_mask(fst_crc32c(footer, 52)));
	CHECK(open_and_scan(file.data, file.len, true, &n) == FST_NOT_SUPPORTED);
	fst_buf_free(&file);
}
