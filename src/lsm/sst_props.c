/*-------------------------------------------------------------------------
 *
 * sst_props.c
 *	  The properties block of an SST file: encoding, decoding and the
 *	  conversion to the manifest's per-file record.
 *
 * The block is a sequence of (varint tag, varint length, bytes) fields, so
 * that a reader skips tags it does not know; integers inside a field are
 * varints (signed ones zigzag-encoded), keys are raw bytes.  Each known tag
 * may appear once; the key range is mandatory for a non-empty file.
 *
 *-------------------------------------------------------------------------
 */
#include "sst_internal.h"

enum
{
	PROP_SMALLEST = 1,
	PROP_LARGEST,
	PROP_KG_MIN,
	PROP_KG_MAX,
	PROP_NUM_ENTRIES,
	PROP_NUM_TOMBSTONES,
	PROP_NUM_DATA_BLOCKS,
	PROP_RAW_KEY_BYTES,
	PROP_RAW_VALUE_BYTES,
	PROP_SEQ_MIN,
	PROP_SEQ_MAX,
	PROP_XID_MIN,
	PROP_XID_MAX,
	PROP_TTL_MIN,
	PROP_TTL_MAX,
	PROP_COMPRESSION,
	PROP_BLOCK_SIZE,
	PROP_BLOOM_BITS,
	PROP_CREATED_AT,
	PROP_RESTART_INTERVAL,
	PROP_PREFIX_ID,
	PROP_MAX_KNOWN = PROP_PREFIX_ID
};

static inline uint64
zigzag(int64 v)
{
	return ((uint64) v << 1) ^ (uint64) (v >> 63);
}

static inline int64
unzigzag(uint64 v)
{
	return (int64) (v >> 1) ^ -(int64) (v & 1);
}

void
fst_sst_props_init(FstSstProps *p)
{
	memset(p, 0, sizeof(*p));
	fst_buf_init(&p->smallest);
	fst_buf_init(&p->largest);
}

void
fst_sst_props_free(FstSstProps *p)
{
	fst_buf_free(&p->smallest);
	fst_buf_free(&p->largest);
}

static void
put_uint(FstBuf *b, int tag, uint64 v)
{
	fst_buf_put_varint(b, tag);
	fst_buf_put_varint(b, fst_varint_length(v));
	fst_buf_put_varint(b, v);
}

static void
put_bytes(FstBuf *b, int tag, const FstBuf *v)
{
	fst_buf_put_varint(b, tag);
	fst_buf_put_lenbytes(b, v->data, v->len);
}

void
fst_sst_props_encode(const FstSstProps *p, FstBuf *out)
{
	put_bytes(out, PROP_SMALLEST, &p->smallest);
	put_bytes(out, PROP_LARGEST, &p->largest);
	put_uint(out, PROP_KG_MIN, p->kg_min);
	put_uint(out, PROP_KG_MAX, p->kg_max);
	put_uint(out, PROP_NUM_ENTRIES, p->num_entries);
	put_uint(out, PROP_NUM_TOMBSTONES, p->num_tombstones);
	put_uint(out, PROP_NUM_DATA_BLOCKS, p->num_data_blocks);
	put_uint(out, PROP_RAW_KEY_BYTES, p->raw_key_bytes);
	put_uint(out, PROP_RAW_VALUE_BYTES, p->raw_value_bytes);
	put_uint(out, PROP_SEQ_MIN, p->seq_min);
	put_uint(out, PROP_SEQ_MAX, p->seq_max);
	put_uint(out, PROP_XID_MIN, p->xid_min);
	put_uint(out, PROP_XID_MAX, p->xid_max);
	if (p->has_ttl)
	{
		put_uint(out, PROP_TTL_MIN, zigzag(p->ttl_min));
		put_uint(out, PROP_TTL_MAX, zigzag(p->ttl_max));
	}
	put_uint(out, PROP_COMPRESSION, p->compression);
	put_uint(out, PROP_BLOCK_SIZE, p->block_size);
	put_uint(out, PROP_BLOOM_BITS, p->bloom_bits_per_key);
	put_uint(out, PROP_CREATED_AT, zigzag(p->created_at));
	put_uint(out, PROP_RESTART_INTERVAL, p->restart_interval);
	/* only when set: a file without it reads the same on older servers */
	if (p->prefix_id > 0)
		put_uint(out, PROP_PREFIX_ID, p->prefix_id);
}

FstCode
fst_sst_props_decode(FstSlice in, FstSstProps *p, FstError *err)
{
	FstReader	r;
	uint32		seen = 0;

	fst_reader_init(&r, in.data, in.len);
	while (fst_reader_left(&r) > 0)
	{
		uint64		tag;
		FstSlice	field;
		FstReader	fr;
		uint64		v = 0;

		if (!fst_get_varint(&r, &tag) || !fst_get_lenbytes(&r, &field))
			return fst_error(err, FST_CORRUPT, "malformed properties block");
		if (tag == 0)
			return fst_error(err, FST_CORRUPT, "properties block has tag 0");
		if (tag > PROP_MAX_KNOWN)
			continue;			/* a newer writer's field: skip */
		if (seen & (1U << tag))
			return fst_error(err, FST_CORRUPT,
							 "properties block repeats field %u", (unsigned) tag);
		seen |= 1U << tag;
		if (tag == PROP_SMALLEST || tag == PROP_LARGEST)
		{
			FstBuf	   *dst = tag == PROP_SMALLEST ? &p->smallest : &p->largest;

			fst_buf_reset(dst);
			fst_buf_append(dst, field.data, field.len);
			if (dst->oom)
				return fst_error(err, FST_NO_MEMORY, "out of memory");
			continue;
		}
		fst_reader_init(&fr, field.data, field.len);
		if (!fst_get_varint(&fr, &v) || fst_reader_left(&fr) != 0)
			return fst_error(err, FST_CORRUPT, "malformed property %u",
							 (unsigned) tag);
		switch (tag)
		{
			case PROP_KG_MIN:
			case PROP_KG_MAX:
				if (v >= FST_MAX_KEY_GROUPS && v != FST_KG_INDEX)
					return fst_error(err, FST_CORRUPT, "key group out of range");
				if (tag == PROP_KG_MIN)
					p->kg_min = (uint16) v;
				else
					p->kg_max = (uint16) v;
				break;
			case PROP_NUM_ENTRIES:
				p->num_entries = v;
				break;
			case PROP_NUM_TOMBSTONES:
				p->num_tombstones = v;
				break;
			case PROP_NUM_DATA_BLOCKS:
				p->num_data_blocks = v;
				break;
			case PROP_RAW_KEY_BYTES:
				p->raw_key_bytes = v;
				break;
			case PROP_RAW_VALUE_BYTES:
				p->raw_value_bytes = v;
				break;
			case PROP_SEQ_MIN:
				p->seq_min = v;
				break;
			case PROP_SEQ_MAX:
				p->seq_max = v;
				break;
			case PROP_XID_MIN:
			case PROP_XID_MAX:
				if (v > PG_UINT32_MAX)
					return fst_error(err, FST_CORRUPT, "xid out of range");
				if (tag == PROP_XID_MIN)
					p->xid_min = (uint32) v;
				else
					p->xid_max = (uint32) v;
				break;
			case PROP_TTL_MIN:
				p->ttl_min = unzigzag(v);
				p->has_ttl = true;
				break;
			case PROP_TTL_MAX:
				p->ttl_max = unzigzag(v);
				p->has_ttl = true;
				break;
			case PROP_COMPRESSION:
				if (v > FST_COMPRESS_MAX)
					return fst_error(err, FST_CORRUPT, "unknown compression");
				p->compression = (uint32) v;
				break;
			case PROP_BLOCK_SIZE:
			case PROP_BLOOM_BITS:
				if (v > PG_UINT32_MAX)
					return fst_error(err, FST_CORRUPT, "property out of range");
				if (tag == PROP_BLOCK_SIZE)
					p->block_size = (uint32) v;
				else
					p->bloom_bits_per_key = (uint32) v;
				break;
			case PROP_CREATED_AT:
				p->created_at = unzigzag(v);
				break;
			case PROP_RESTART_INTERVAL:
				if (v == 0 || v > 65536)
					return fst_error(err, FST_CORRUPT, "restart interval out of range");
				p->restart_interval = (uint32) v;
				break;
			case PROP_PREFIX_ID:
				if (v == 0 || v > PG_UINT32_MAX)
					return fst_error(err, FST_CORRUPT, "prefix rule out of range");
				p->prefix_id = (uint32) v;
				break;
		}
	}

	/* consistency of what was read */
	if (((seen >> PROP_TTL_MIN) & 1) != ((seen >> PROP_TTL_MAX) & 1))
		return fst_error(err, FST_CORRUPT, "properties have half a TTL range");
	if (p->num_entries > 0)
	{
		if (!(seen & (1U << PROP_SMALLEST)) || !(seen & (1U << PROP_LARGEST)) ||
			!fst_ikey_valid(fst_slice(p->smallest.data, p->smallest.len)) ||
			!fst_ikey_valid(fst_slice(p->largest.data, p->largest.len)) ||
			fst_ikey_cmp(fst_slice(p->smallest.data, p->smallest.len),
						 fst_slice(p->largest.data, p->largest.len)) > 0)
			return fst_error(err, FST_CORRUPT, "properties have a bad key range");
		if (p->kg_min > p->kg_max || p->seq_min > p->seq_max ||
			p->num_tombstones > p->num_entries ||
			(p->has_ttl && p->ttl_min > p->ttl_max) ||
			p->kg_min != fst_ikey_key_group(fst_slice(p->smallest.data, p->smallest.len)) ||
			p->kg_max != fst_ikey_key_group(fst_slice(p->largest.data, p->largest.len)))
			return fst_error(err, FST_CORRUPT, "properties are inconsistent");
	}
	return FST_OK;
}

bool
fst_sst_props_to_filemeta(const FstSstProps *p, FstFileMeta *m)
{
	if (!fst_filemeta_set_range(m, fst_slice(p->smallest.data, p->smallest.len),
								fst_slice(p->largest.data, p->largest.len)))
		return false;
	m->size = p->file_size;
	m->kg_min = p->kg_min;
	m->kg_max = p->kg_max;
	m->num_entries = p->num_entries;
	m->num_tombstones = p->num_tombstones;
	m->seq_min = p->seq_min;
	m->seq_max = p->seq_max;
	m->xid_min = p->xid_min;
	m->xid_max = p->xid_max;
	m->has_ttl = p->has_ttl;
	m->ttl_min = p->ttl_min;
	m->ttl_max = p->ttl_max;
	m->raw_bytes = p->raw_key_bytes + p->raw_value_bytes;
	return true;
}
