/*-------------------------------------------------------------------------
 *
 * fuzz_manifest.c
 *	  libFuzzer target for the manifest decoder.
 *
 * Any input must decode cleanly or be refused (FST_CORRUPT,
 * FST_NOT_SUPPORTED); never crash, leak or read out of bounds.  An input
 * that decodes must survive re-encoding: encode(decode(x)) must decode
 * again, to an equal manifest whose encoding is byte-identical.  Any other
 * outcome aborts.
 *
 * Every input is tried twice: as given, and "resealed" (its length field
 * and CRC rewritten to match), so that mutations reach the body parser
 * instead of stopping at the checksum.
 *
 * Seed corpus: test/fuzz/corpus/manifest/, written by
 *	  FST_WRITE_CORPUS=test/fuzz/corpus/manifest build/unit_tests manifest_write_corpus
 *
 *-------------------------------------------------------------------------
 */
#include "manifest.h"

#include "coding.h"

#include <stdio.h>
#include <stdlib.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_one(const char *data, size_t size)
{
	FstManifest m1,
				m2;
	FstBuf		b1,
				b2;
	FstError	err;
	FstCode		rc;

	rc = fst_manifest_decode(data, size, &m1, &err);
	if (rc != FST_OK)
	{
		if (rc != FST_CORRUPT && rc != FST_NOT_SUPPORTED && rc != FST_NO_MEMORY)
		{
			fprintf(stderr, "decode returned %s: %s\n", fst_code_name(rc), err.msg);
			abort();
		}
		fst_manifest_free(&m1);
		return;
	}

	fst_buf_init(&b1);
	fst_buf_init(&b2);
	if (fst_manifest_encode(&m1, &b1, &err) != FST_OK)
	{
		fprintf(stderr, "re-encode of a decoded manifest failed: %s\n", err.msg);
		abort();
	}
	if (fst_manifest_decode(b1.data, b1.len, &m2, &err) != FST_OK)
	{
		fprintf(stderr, "decode of a re-encoded manifest failed: %s\n", err.msg);
		abort();
	}
	if (!fst_manifest_equal(&m1, &m2))
	{
		fprintf(stderr, "re-decoded manifest differs\n");
		abort();
	}
	if (fst_manifest_encode(&m2, &b2, &err) != FST_OK ||
		b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0)
	{
		fprintf(stderr, "re-encoding is not stable\n");
		abort();
	}
	fst_buf_free(&b1);
	fst_buf_free(&b2);
	fst_manifest_free(&m1);
	fst_manifest_free(&m2);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *copy;

	check_one((const char *) data, size);
	if (size < 28)
		return 0;
	/* reseal: header length field at offset 16, CRC in the last 4 bytes */
	copy = malloc(size);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	fst_put_fixed64(copy + 16, (uint64) size);
	fst_put_fixed32(copy + size - 4, fst_crc_mask(fst_crc32c(copy, size - 4)));
	check_one(copy, size);
	free(copy);
	return 0;
}
