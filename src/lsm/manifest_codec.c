/*-------------------------------------------------------------------------
 *
 * manifest_codec.c
 *	  The byte encoding of a manifest object.
 *
 * Layout (all fixed-width integers little-endian):
 *
 *	 offset  size
 *		0	  8   magic "FSTMANI\0"
 *		8	  4   format major (readers refuse a newer one: FST_NOT_SUPPORTED
 *				  with the cause FST_CAUSE_NEWER_FORMAT; 0 is FST_CORRUPT)
 *	   12	  4   format minor (a newer minor only adds sections)
 *	   16	  8   total length of the object, trailer included
 *	   24	  n   sections: [tag: varint][length: varint][payload]
 *	  end-4	  4   masked CRC-32C of every byte before it
 *
 * Sections appear in strictly ascending tag order, each at most once, and a
 * section's payload must be consumed exactly.  A reader skips tags it does
 * not know (added by a newer minor version); an incompatible change bumps
 * the major version.  Version 1.0 sections:
 *
 *	 1 IDENTITY (required): table uuid (16 bytes), version, writer epoch,
 *	   lsn covered, next file id, last sequence (varints), created at
 *	   (zigzag varint)
 *	 2 KEY_GROUPS (required): max key groups, kg_lo, kg_hi (varints)
 *	 3 SCHEMA (optional; absent = empty, no TTL): schema (lenbytes), TTL
 *	   attnum and TTL interval (zigzag varints)
 *	 4 FILES (required): number of levels encoded (varint, at most
 *	   FST_NUM_LEVELS), then per level the file count and the files:
 *		 file id, size, smallest (lenbytes), largest (lenbytes), kg_min,
 *		 kg_max, entries, tombstones, seq_min, seq_max, xid_min, xid_max,
 *		 raw bytes, flags (varints; flag 1 = TTL range follows, 2 = owner
 *		 follows, 4 = pending xid range follows (since 1.1)), [ttl_min,
 *		 ttl_max (zigzag)], [owner (lenbytes)], [pending xid min, max
 *		 (varints)]
 *
 * Decoding never trusts a count: a level's file count is checked against
 * the bytes left before anything is allocated for it.
 *
 *-------------------------------------------------------------------------
 */
#include "manifest.h"

#include "coding.h"
#include "ikey.h"

#define MANIFEST_MAGIC		"FSTMANI\0"
#define MANIFEST_MAGIC_LEN	8
#define MANIFEST_HEADER_LEN 24
#define MANIFEST_TRAILER_LEN 4

#define SEC_IDENTITY	1
#define SEC_KEY_GROUPS	2
#define SEC_SCHEMA		3
#define SEC_FILES		4

#define FILE_FLAG_TTL	0x01
#define FILE_FLAG_OWNER 0x02
#define FILE_FLAG_PENDING 0x04
#define FILE_KNOWN_FLAGS (FILE_FLAG_TTL | FILE_FLAG_OWNER | FILE_FLAG_PENDING)

/* The fewest bytes one encoded file record can take. */
#define MIN_FILE_RECORD (2 * (1 + FST_IKEY_OVERHEAD) + 12)

static inline uint64
zigzag_encode(int64 v)
{
	return ((uint64) v << 1) ^ (uint64) (v >> 63);
}

static inline int64
zigzag_decode(uint64 u)
{
	return (int64) ((u >> 1) ^ (~(u & 1) + 1));
}

/* ----------------------------------------------------------------
 *		encoding
 * ----------------------------------------------------------------
 */

static void
put_section(FstBuf *out, uint64 tag, const FstBuf *payload)
{
	fst_buf_put_varint(out, tag);
	fst_buf_put_lenbytes(out, payload->data, payload->len);
}

static void
put_file(FstBuf *b, const FstManifestFile *f)
{
	const FstFileMeta *m = &f->meta;
	uint64		flags = 0;

	fst_buf_put_varint(b, m->file_id);
	fst_buf_put_varint(b, m->size);
	fst_buf_put_lenbytes(b, m->smallest, m->smallest_len);
	fst_buf_put_lenbytes(b, m->largest, m->largest_len);
	fst_buf_put_varint(b, m->kg_min);
	fst_buf_put_varint(b, m->kg_max);
	fst_buf_put_varint(b, m->num_entries);
	fst_buf_put_varint(b, m->num_tombstones);
	fst_buf_put_varint(b, m->seq_min);
	fst_buf_put_varint(b, m->seq_max);
	fst_buf_put_varint(b, m->xid_min);
	fst_buf_put_varint(b, m->xid_max);
	fst_buf_put_varint(b, m->raw_bytes);
	if (m->has_ttl)
		flags |= FILE_FLAG_TTL;
	if (f->owner != NULL)
		flags |= FILE_FLAG_OWNER;
	if (m->pending_xid_min != 0 || m->pending_xid_max != 0)
		flags |= FILE_FLAG_PENDING;
	fst_buf_put_varint(b, flags);
	if (m->has_ttl)
	{
		fst_buf_put_varint(b, zigzag_encode(m->ttl_min));
		fst_buf_put_varint(b, zigzag_encode(m->ttl_max));
	}
	if (f->owner != NULL)
		fst_buf_put_lenbytes(b, f->owner, strlen(f->owner));
	if (flags & FILE_FLAG_PENDING)
	{
		fst_buf_put_varint(b, m->pending_xid_min);
		fst_buf_put_varint(b, m->pending_xid_max);
	}
}

FstCode
fst_manifest_encode_unchecked(const FstManifest *m, FstBuf *out, FstError *err)
{
	FstBuf		sec;
	size_t		start = out->len;
	int			nlevels = 0;
	int			l,
				i;
	char		hdr[MANIFEST_HEADER_LEN];
	bool		oom;

	memcpy(hdr, MANIFEST_MAGIC, MANIFEST_MAGIC_LEN);
	fst_put_fixed32(hdr + 8, FST_MANIFEST_FORMAT_MAJOR);
	fst_put_fixed32(hdr + 12, FST_MANIFEST_FORMAT_MINOR);
	fst_put_fixed64(hdr + 16, 0);	/* patched below */
	fst_buf_append(out, hdr, sizeof(hdr));

	fst_buf_init(&sec);
	fst_buf_append(&sec, m->table_uuid, FST_MANIFEST_UUID_LEN);
	fst_buf_put_varint(&sec, m->version);
	fst_buf_put_varint(&sec, m->writer_epoch);
	fst_buf_put_varint(&sec, m->lsn_covered);
	fst_buf_put_varint(&sec, m->next_file_id);
	fst_buf_put_varint(&sec, m->last_seq);
	fst_buf_put_varint(&sec, zigzag_encode(m->created_at));
	put_section(out, SEC_IDENTITY, &sec);

	fst_buf_reset(&sec);
	fst_buf_put_varint(&sec, m->max_key_groups);
	fst_buf_put_varint(&sec, m->kg_lo);
	fst_buf_put_varint(&sec, m->kg_hi);
	put_section(out, SEC_KEY_GROUPS, &sec);

	fst_buf_reset(&sec);
	fst_buf_put_lenbytes(&sec, m->schema, m->schema_len);
	fst_buf_put_varint(&sec, zigzag_encode(m->ttl_attnum));
	fst_buf_put_varint(&sec, zigzag_encode(m->ttl_interval_us));
	put_section(out, SEC_SCHEMA, &sec);

	fst_buf_reset(&sec);
	for (l = 0; l < FST_NUM_LEVELS; l++)
		if (m->levels[l].nfiles > 0)
			nlevels = l + 1;
	fst_buf_put_varint(&sec, nlevels);
	for (l = 0; l < nlevels; l++)
	{
		fst_buf_put_varint(&sec, m->levels[l].nfiles);
		for (i = 0; i < m->levels[l].nfiles; i++)
			put_file(&sec, &m->levels[l].files[i]);
	}
	put_section(out, SEC_FILES, &sec);
	oom = sec.oom;
	fst_buf_free(&sec);

	if (oom || out->oom || !fst_buf_reserve(out, MANIFEST_TRAILER_LEN))
	{
		out->len = start;
		return fst_error(err, FST_NO_MEMORY, "out of memory encoding manifest");
	}
	fst_put_fixed64(out->data + start + 16,
					(uint64) (out->len - start + MANIFEST_TRAILER_LEN));
	fst_buf_put_fixed32(out, fst_crc_mask(fst_crc32c(out->data + start,
													 out->len - start)));
	return FST_OK;
}

FstCode
fst_manifest_encode(const FstManifest *m, FstBuf *out, FstError *err)
{
	FstCode		rc = fst_manifest_validate(m, FST_INVALID_ARGUMENT, err);

	if (rc != FST_OK)
	{
		fst_error_prefix(err, "manifest not encoded");
		return rc;
	}
	return fst_manifest_encode_unchecked(m, out, err);
}

/* ----------------------------------------------------------------
 *		decoding
 * ----------------------------------------------------------------
 */

static bool
get_u16(FstReader *r, uint16 *out)
{
	uint64		v;

	if (!fst_get_varint(r, &v) || v > PG_UINT16_MAX)
	{
		r->bad = true;
		*out = 0;
		return false;
	}
	*out = (uint16) v;
	return true;
}

static bool
get_zigzag(FstReader *r, int64 *out)
{
	uint64		v;

	if (!fst_get_varint(r, &v))
	{
		*out = 0;
		return false;
	}
	*out = zigzag_decode(v);
	return true;
}

static FstCode
decode_identity(FstReader *r, FstManifest *m, FstError *err)
{
	const char *uuid;

	if (fst_get_bytes(r, FST_MANIFEST_UUID_LEN, &uuid))
		memcpy(m->table_uuid, uuid, FST_MANIFEST_UUID_LEN);
	fst_get_varint(r, &m->version);
	fst_get_varint(r, &m->writer_epoch);
	fst_get_varint(r, &m->lsn_covered);
	fst_get_varint(r, &m->next_file_id);
	fst_get_varint(r, &m->last_seq);
	get_zigzag(r, &m->created_at);
	if (r->bad || fst_reader_left(r) != 0)
		return fst_error(err, FST_CORRUPT, "malformed identity section");
	return FST_OK;
}

static FstCode
decode_key_groups(FstReader *r, FstManifest *m, FstError *err)
{
	get_u16(r, &m->max_key_groups);
	get_u16(r, &m->kg_lo);
	get_u16(r, &m->kg_hi);
	if (r->bad || fst_reader_left(r) != 0)
		return fst_error(err, FST_CORRUPT, "malformed key-group section");
	return FST_OK;
}

static FstCode
decode_schema(FstReader *r, FstManifest *m, FstError *err)
{
	FstSlice	schema;
	int64		attnum;

	fst_get_lenbytes(r, &schema);
	get_zigzag(r, &attnum);
	get_zigzag(r, &m->ttl_interval_us);
	if (r->bad || fst_reader_left(r) != 0 ||
		attnum < PG_INT16_MIN || attnum > PG_INT16_MAX)
		return fst_error(err, FST_CORRUPT, "malformed schema section");
	m->ttl_attnum = (int16) attnum;
	return fst_manifest_set_schema(m, schema.data, schema.len, err);
}

/*
 * Decodes one file record into *f (zeroed by the caller); minor is the
 * manifest's format minor version.
 */
static FstCode
decode_file(FstReader *r, FstManifestFile *f, int level, uint16 minor,
			FstError *err)
{
	FstFileMeta *m = &f->meta;
	FstSlice	smallest,
				largest;
	uint64		flags;

	m->level = level;
	fst_get_varint(r, &m->file_id);
	fst_get_varint(r, &m->size);
	fst_get_lenbytes(r, &smallest);
	fst_get_lenbytes(r, &largest);
	get_u16(r, &m->kg_min);
	get_u16(r, &m->kg_max);
	fst_get_varint(r, &m->num_entries);
	fst_get_varint(r, &m->num_tombstones);
	fst_get_varint(r, &m->seq_min);
	fst_get_varint(r, &m->seq_max);
	fst_get_u32(r, &m->xid_min);
	fst_get_u32(r, &m->xid_max);
	fst_get_varint(r, &m->raw_bytes);
	fst_get_varint(r, &flags);
	if (!r->bad && (flags & ~(uint64) FILE_KNOWN_FLAGS) != 0 &&
		minor > FST_MANIFEST_FORMAT_MINOR)
	{
		/* a newer minor's flag announces fields this build cannot skip */
		FstCode		rc = fst_error(err, FST_NOT_SUPPORTED,
								   "manifest format version %d.%u has file flags 0x%llx, "
								   "which this build (format %d.%d) does not know",
								   FST_MANIFEST_FORMAT_MAJOR, minor,
								   (unsigned long long) (flags & ~(uint64) FILE_KNOWN_FLAGS),
								   FST_MANIFEST_FORMAT_MAJOR, FST_MANIFEST_FORMAT_MINOR);

		fst_error_cause(err, FST_CAUSE_NEWER_FORMAT);
		return rc;
	}
	if (r->bad || (flags & ~(uint64) FILE_KNOWN_FLAGS) != 0)
		return fst_error(err, FST_CORRUPT, "malformed file record");
	if (flags & FILE_FLAG_TTL)
	{
		m->has_ttl = true;
		get_zigzag(r, &m->ttl_min);
		get_zigzag(r, &m->ttl_max);
	}
	if (flags & FILE_FLAG_OWNER)
	{
		FstSlice	owner;

		if (!fst_get_lenbytes(r, &owner) || owner.len == 0 ||
			owner.len > FST_MANIFEST_MAX_OWNER ||
			memchr(owner.data, '\0', owner.len) != NULL)
			return fst_error(err, FST_CORRUPT, "malformed file owner");
		if ((f->owner = fst_malloc(owner.len + 1)) == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory decoding manifest");
		memcpy(f->owner, owner.data, owner.len);
		f->owner[owner.len] = '\0';
	}
	if (flags & FILE_FLAG_PENDING)
	{
		fst_get_u32(r, &m->pending_xid_min);
		fst_get_u32(r, &m->pending_xid_max);
	}
	if (r->bad)
		return fst_error(err, FST_CORRUPT, "malformed file record");
	if (!fst_ikey_valid(smallest) || !fst_ikey_valid(largest))
		return fst_error(err, FST_CORRUPT,
						 "file %llu: key shorter than an internal key",
						 (unsigned long long) m->file_id);
	if (!fst_filemeta_set_range(m, smallest, largest))
		return fst_error(err, FST_NO_MEMORY, "out of memory decoding manifest");
	return FST_OK;
}

static FstCode
decode_files(FstReader *r, FstManifest *m, FstError *err)
{
	uint64		nlevels;
	int			l;

	if (!fst_get_varint(r, &nlevels) || nlevels > FST_NUM_LEVELS)
		return fst_error(err, FST_CORRUPT, "bad level count in manifest");
	for (l = 0; l < (int) nlevels; l++)
	{
		FstManifestLevel *lv = &m->levels[l];
		uint64		nfiles;
		uint64		i;

		if (!fst_get_varint(r, &nfiles) ||
			nfiles > fst_reader_left(r) / MIN_FILE_RECORD)
			return fst_error(err, FST_CORRUPT,
							 "level %d: file count larger than the manifest", l);
		if (nfiles == 0)
			continue;
		lv->files = fst_calloc((size_t) nfiles, sizeof(FstManifestFile));
		if (lv->files == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory decoding manifest");
		lv->cap = (int) nfiles;
		for (i = 0; i < nfiles; i++)
		{
			FstManifestFile *f = &lv->files[lv->nfiles];
			FstCode		rc;

			/* count the slot first so that free releases a partial record */
			lv->nfiles++;
			if ((rc = decode_file(r, f, l, m->format_minor, err)) != FST_OK)
				return rc;
		}
	}
	if (r->bad || fst_reader_left(r) != 0)
		return fst_error(err, FST_CORRUPT, "malformed files section");
	return FST_OK;
}

static FstCode
decode_body(const char *p, size_t len, FstManifest *m, FstError *err)
{
	FstReader	r;
	uint64		last_tag = 0;
	bool		seen_identity = false,
				seen_kg = false,
				seen_files = false;

	fst_reader_init(&r, p, len);
	while (fst_reader_left(&r) > 0)
	{
		uint64		tag;
		FstSlice	payload;
		FstReader	sr;
		FstCode		rc = FST_OK;

		if (!fst_get_varint(&r, &tag) || !fst_get_lenbytes(&r, &payload))
			return fst_error(err, FST_CORRUPT, "malformed manifest section header");
		if (tag <= last_tag)
			return fst_error(err, FST_CORRUPT,
							 "manifest section %llu out of order",
							 (unsigned long long) tag);
		last_tag = tag;
		fst_reader_init(&sr, payload.data, payload.len);
		switch (tag)
		{
			case SEC_IDENTITY:
				rc = decode_identity(&sr, m, err);
				seen_identity = true;
				break;
			case SEC_KEY_GROUPS:
				rc = decode_key_groups(&sr, m, err);
				seen_kg = true;
				break;
			case SEC_SCHEMA:
				rc = decode_schema(&sr, m, err);
				break;
			case SEC_FILES:
				rc = decode_files(&sr, m, err);
				seen_files = true;
				break;
			default:
				/* added by a newer minor version: skip */
				break;
		}
		if (rc != FST_OK)
			return rc;
	}
	if (!seen_identity || !seen_kg || !seen_files)
		return fst_error(err, FST_CORRUPT, "manifest lacks a required section");
	return FST_OK;
}

FstCode
fst_manifest_decode(const char *data, size_t len, FstManifest *out,
					FstError *err)
{
	uint32		major;
	uint64		total;
	uint32		stored_crc;
	FstCode		rc;

	fst_manifest_init(out);
	if (data == NULL || len < MANIFEST_HEADER_LEN + MANIFEST_TRAILER_LEN)
		return fst_error(err, FST_CORRUPT, "manifest truncated (%zu bytes)", len);
	if (memcmp(data, MANIFEST_MAGIC, MANIFEST_MAGIC_LEN) != 0)
		return fst_error(err, FST_CORRUPT, "not a manifest (bad magic)");
	major = fst_get_fixed32(data + 8);
	if (major == 0)
		return fst_error(err, FST_CORRUPT,
						 "manifest has format version 0.%u, which no forst writes",
						 fst_get_fixed32(data + 12));
	if (major > FST_MANIFEST_FORMAT_MAJOR)
	{
		/* its layout may differ: not even the length or checksum is known */
		rc = fst_error(err, FST_NOT_SUPPORTED,
					   "manifest format version %u.%u is newer than this build reads (%d.x)",
					   major, fst_get_fixed32(data + 12), FST_MANIFEST_FORMAT_MAJOR);
		fst_error_cause(err, FST_CAUSE_NEWER_FORMAT);
		return rc;
	}
	total = fst_get_fixed64(data + 16);
	if (total != (uint64) len)
		return fst_error(err, FST_CORRUPT,
						 "manifest length %zu, header says %llu (%s)", len,
						 (unsigned long long) total,
						 total > (uint64) len ? "truncated" : "trailing bytes");
	stored_crc = fst_crc_unmask(fst_get_fixed32(data + len - MANIFEST_TRAILER_LEN));
	if (stored_crc != fst_crc32c(data, len - MANIFEST_TRAILER_LEN))
		return fst_error(err, FST_CORRUPT, "manifest checksum mismatch");

	out->format_minor = (uint16) Min(fst_get_fixed32(data + 12), PG_UINT16_MAX);
	rc = decode_body(data + MANIFEST_HEADER_LEN,
					 len - MANIFEST_HEADER_LEN - MANIFEST_TRAILER_LEN, out, err);
	if (rc == FST_OK)
		rc = fst_manifest_validate(out, FST_CORRUPT, err);
	if (rc != FST_OK)
	{
		fst_manifest_free(out);
		return rc;
	}
	return FST_OK;
}
