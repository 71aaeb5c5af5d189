/*-------------------------------------------------------------------------
 *
 * test_format_versions.c
 *	  The format versions of SST files and manifests (docs/operations.md,
 *	  "On-disk formats and their versions"): readers take the current and
 *	  older versions, refuse a newer one as FST_NOT_SUPPORTED with the cause
 *	  FST_CAUSE_NEWER_FORMAT (which the server reports as SQLSTATE 0A000 with
 *	  a hint to upgrade forst) and a message naming the version found and
 *	  the versions supported, and a version no forst writes as FST_CORRUPT.
 *
 *-------------------------------------------------------------------------
 */
#include "unit.h"

#include "coding.h"
#include "manifest.h"
#include "sst_testutil.h"

/* ---- SST files --------------------------------------------------------- */

static void
sample_sst(FstBuf *file, int compression)
{
	TestEntry	ents[40];
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

/* Stamps version into the footer, with a valid footer checksum. */
static void
set_sst_version(FstBuf *file, uint32 version)
{
	char	   *footer = file->data + file->len - FST_SST_FOOTER_SIZE;

	fst_put_fixed32(footer, version);
	fst_put_fixed32(footer + 52, fst_crc_mask(fst_crc32c(footer, 52)));
}

static FstCode
open_sst(const FstBuf *file, FstError *err)
{
	FstRangeSource *src = fst_range_source_memory(file->data, file->len, false);
	FstSstReader *r = NULL;
	FstCode		rc;

	fst_error_clear(err);
	rc = fst_sst_open(src, NULL, &r, err);
	if (r != NULL)
		fst_sst_close(r);
	fst_range_close(src);
	return rc;
}

FST_TEST(format_sst_reads_every_known_version)
{
	FstBuf		file;
	FstError	err;
	uint32		v;

	sample_sst(&file, FST_COMPRESS_LZ4);
	CHECK(file.len > 0);
	for (v = FST_SST_FORMAT_OLDEST; v <= FST_SST_FORMAT_NEWEST; v++)
	{
		set_sst_version(&file, v);
		CHECK_OK(open_sst(&file, &err), &err);
	}
	fst_buf_free(&file);
}

FST_TEST(format_sst_refuses_a_newer_version_naming_both)
{
	FstBuf		file;
	FstError	err;

	sample_sst(&file, FST_COMPRESS_NONE);
	set_sst_version(&file, FST_SST_FORMAT_NEWEST + 1);
	CHECK_EQ_INT(open_sst(&file, &err), FST_NOT_SUPPORTED);
	CHECK_EQ_INT(err.cause, FST_CAUSE_NEWER_FORMAT);
	CHECK_MSG(strstr(err.msg, "SST format version 3 is newer than this build reads (versions 1 to 2)") != NULL,
			  "message: %s", err.msg);
	/* far in the future too, and without an error carrier */
	set_sst_version(&file, 0x7fffffff);
	CHECK_EQ_INT(open_sst(&file, &err), FST_NOT_SUPPORTED);
	CHECK_EQ_INT(err.cause, FST_CAUSE_NEWER_FORMAT);
	{
		FstRangeSource *src = fst_range_source_memory(file.data, file.len, false);
		FstSstReader *r = NULL;

		CHECK_EQ_INT(fst_sst_open(src, NULL, &r, NULL), FST_NOT_SUPPORTED);
		fst_range_close(src);
	}
	fst_buf_free(&file);
}

FST_TEST(format_sst_version_zero_is_corrupt)
{
	FstBuf		file;
	FstError	err;

	sample_sst(&file, FST_COMPRESS_NONE);
	set_sst_version(&file, 0);
	CHECK_EQ_INT(open_sst(&file, &err), FST_CORRUPT);
	CHECK_EQ_INT(err.cause, FST_CAUSE_NONE);
	fst_buf_free(&file);
}

/* ---- manifests --------------------------------------------------------- */

/* A manifest with one L0 file that has no TTL, owner or pending range. */
static void
sample_manifest(FstBuf *out)
{
	FstManifest m;
	FstFileMeta f;
	char		k1[32],
				k2[32];
	size_t		l1 = fst_ikey_build(k1, 1, "a", 1, 50);
	size_t		l2 = fst_ikey_build(k2, 2, "b", 1, 50);
	FstError	err;

	fst_manifest_init(&m);
	m.version = 3;
	m.next_file_id = 10;
	m.last_seq = 100;
	m.max_key_groups = 16;
	m.kg_lo = 0;
	m.kg_hi = 15;
	memset(&f, 0, sizeof(f));
	f.file_id = 7;
	f.size = 4096;
	f.num_entries = 1;
	f.seq_min = f.seq_max = 50;
	f.kg_min = 1;
	f.kg_max = 2;
	if (!fst_filemeta_set_range(&f, fst_slice(k1, l1), fst_slice(k2, l2)) ||
		fst_manifest_append_file(&m, 0, &f, NULL, &err) != FST_OK)
		abort();
	fst_filemeta_clear(&f);
	fst_buf_init(out);
	if (fst_manifest_encode(&m, out, &err) != FST_OK)
		fst_buf_reset(out);
	fst_manifest_free(&m);
}

/* Rewrites the header's version and the trailer's checksum. */
static void
reseal(FstBuf *obj, uint32 major, uint32 minor)
{
	fst_put_fixed32(obj->data + 8, major);
	fst_put_fixed32(obj->data + 12, minor);
	fst_put_fixed32(obj->data + obj->len - 4,
					fst_crc_mask(fst_crc32c(obj->data, obj->len - 4)));
}

static FstCode
decode(const FstBuf *obj, FstError *err)
{
	FstManifest m;
	FstCode		rc;

	fst_error_clear(err);
	rc = fst_manifest_decode(obj->data, obj->len, &m, err);
	fst_manifest_free(&m);
	return rc;
}

FST_TEST(format_manifest_reads_current_and_older_minor_versions)
{
	FstBuf		obj;
	FstError	err;
	uint32		minor;

	sample_manifest(&obj);
	CHECK(obj.len > 0);
	for (minor = 0; minor <= FST_MANIFEST_FORMAT_MINOR; minor++)
	{
		reseal(&obj, FST_MANIFEST_FORMAT_MAJOR, minor);
		CHECK_OK(decode(&obj, &err), &err);
	}
	/* a newer minor only adds what a reader may skip: read */
	reseal(&obj, FST_MANIFEST_FORMAT_MAJOR, FST_MANIFEST_FORMAT_MINOR + 5);
	CHECK_OK(decode(&obj, &err), &err);
	fst_buf_free(&obj);
}

FST_TEST(format_manifest_refuses_a_newer_major_naming_both)
{
	FstBuf		obj;
	FstError	err;

	sample_manifest(&obj);
	reseal(&obj, FST_MANIFEST_FORMAT_MAJOR + 1, 0);
	CHECK_EQ_INT(decode(&obj, &err), FST_NOT_SUPPORTED);
	CHECK_EQ_INT(err.cause, FST_CAUSE_NEWER_FORMAT);
	CHECK_MSG(strstr(err.msg, "manifest format version 2.0 is newer than this build reads (1.x)") != NULL,
			  "message: %s", err.msg);
	/* its length field means nothing to this build: still "newer" */
	fst_put_fixed64(obj.data + 16, 12345);
	CHECK_EQ_INT(decode(&obj, &err), FST_NOT_SUPPORTED);
	fst_buf_free(&obj);
}

FST_TEST(format_manifest_major_zero_is_corrupt)
{
	FstBuf		obj;
	FstError	err;

	sample_manifest(&obj);
	reseal(&obj, 0, 0);
	CHECK_EQ_INT(decode(&obj, &err), FST_CORRUPT);
	CHECK_EQ_INT(err.cause, FST_CAUSE_NONE);
	fst_buf_free(&obj);
}

/*
 * A file flag this build does not know: from a newer minor it announces
 * fields that cannot be skipped (not supported); in a known minor it is
 * corruption.  The flags are the last byte of the only file record, so the
 * byte before the trailer.
 */
FST_TEST(format_manifest_unknown_file_flag_of_a_newer_minor)
{
	FstBuf		obj;
	FstError	err;

	sample_manifest(&obj);
	CHECK_EQ_INT(obj.data[obj.len - 5], 0);
	obj.data[obj.len - 5] = 0x08;
	reseal(&obj, FST_MANIFEST_FORMAT_MAJOR, FST_MANIFEST_FORMAT_MINOR + 1);
	CHECK_EQ_INT(decode(&obj, &err), FST_NOT_SUPPORTED);
	CHECK_EQ_INT(err.cause, FST_CAUSE_NEWER_FORMAT);
	CHECK_MSG(strstr(err.msg, "file flags 0x8") != NULL, "message: %s", err.msg);
	reseal(&obj, FST_MANIFEST_FORMAT_MAJOR, FST_MANIFEST_FORMAT_MINOR);
	CHECK_EQ_INT(decode(&obj, &err), FST_CORRUPT);
	fst_buf_free(&obj);
}
