/*-------------------------------------------------------------------------
 *
 * sst_reader.c
 *	  Opens SST files over a byte-range source and serves iterators and
 *	  point lookups (format in sst.h).
 *
 * The iterator over a whole file is in sst_iter.c.
 *
 * Opening reads the file's tail in one request (footer and, for files whose
 * metadata is small, the index, filter and properties too), which matters
 * when every read is a round trip to object storage.  A bloom filter that
 * the tail does not hold is read at the first lookup that asks it: a range
 * scan never does, and in a 64 MB file the filter is most of the metadata
 * (about 10 bits per key against an index entry per data block).  Every
 * structure is validated before use, so a corrupt file yields FST_CORRUPT,
 * never a crash or an out-of-bounds read.
 *
 *-------------------------------------------------------------------------
 */
#include "sst_internal.h"
#include "blockcache.h"
#include "bloom.h"

/* How much of the tail to read at open in one request. */
#define TAIL_PREFETCH	(64 * 1024)


void
fst_sst_read_options_default(FstSstReadOptions *opt)
{
	opt->verify_checksums = true;
	opt->cache = NULL;
	opt->cache_id = 0;
	opt->rewrite_entry = NULL;
	opt->rewrite_arg = NULL;
	opt->shared_get = NULL;
	opt->shared_put = NULL;
	opt->shared_peek = NULL;
	opt->meta_get = NULL;
	opt->meta_put = NULL;
	opt->meta_release = NULL;
	opt->meta_region = NULL;
	opt->meta_region_arg = NULL;
	opt->shared_arg = NULL;
}

/* Runs the rewrite_entry option over every entry of a fresh block. */
static FstCode
rewrite_block(FstSstReader *r, FstBlock *b, FstError *err)
{
	FstIter    *it = fst_block_ikey_iter_create(b);
	FstCode		rc;

	if (it == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
	{
		FstSlice	v = fst_iter_value(it);

		if (v.len < FST_ENTRY_HEADER_SIZE)
		{
			fst_iter_destroy(it);
			return fst_error(err, FST_CORRUPT, "SST entry without a header");
		}
		/* values are stored verbatim in the block's own (malloc'ed) bytes */
		r->opt.rewrite_entry(r->opt.rewrite_arg, fst_iter_key(it),
							 (char *) v.data, v.len);
	}
	rc = fst_iter_status(it, err);
	fst_iter_destroy(it);
	return rc;
}

const FstSstProps *
fst_sst_props(const FstSstReader *r)
{
	return &r->props;
}

const FstSstReaderStats *
fst_sst_reader_stats(const FstSstReader *r)
{
	return &r->stats;
}

/*
 * Reads the stored block at h (payload + trailer), using tail bytes when
 * they cover it, and returns its decoded contents (malloc'ed).
 */
static FstCode
read_block_contents(FstSstReader *r, FstBlockHandle h, const char *tail,
					uint64 tail_off, char **out, size_t *out_len, FstError *err)
{
	size_t		n = (size_t) h.size + FST_BLOCK_TRAILER_SIZE;
	char	   *stored;
	FstCode		rc;

	if (tail != NULL && h.offset >= tail_off)
		return fst_block_decode_stored(tail + (h.offset - tail_off), (size_t) h.size,
									   r->opt.verify_checksums, out, out_len, err);
	stored = fst_malloc(n);
	if (stored == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory reading a block");
	rc = fst_range_read(r->src, h.offset, n, stored, err);
	if (rc == FST_OK && (uint8) stored[h.size] == FST_COMPRESS_NONE)
	{
		/*
		 * Uncompressed (index, filter, properties: up to hundreds of kB):
		 * checked in place and handed over, not copied into another buffer.
		 */
		if (r->opt.verify_checksums)
			rc = fst_block_check_stored(stored, (size_t) h.size, err);
		if (rc == FST_OK)
		{
			*out = stored;
			*out_len = (size_t) h.size;
			return FST_OK;
		}
	}
	else if (rc == FST_OK)
		rc = fst_block_decode_stored(stored, (size_t) h.size,
									 r->opt.verify_checksums, out, out_len, err);
	fst_free(stored);
	return rc;
}

static bool
get_handle(const char *p, FstBlockHandle *h)
{
	h->offset = fst_get_fixed64(p);
	h->size = fst_get_fixed32(p + 8);
	return true;
}

/* Checks that a metadata block lies in [lo, hi) with its trailer. */
static bool
handle_within(FstBlockHandle h, uint64 lo, uint64 hi)
{
	return h.offset >= lo && h.offset <= hi &&
		h.size + FST_BLOCK_TRAILER_SIZE <= hi - h.offset;
}

/* Validates every index entry: ascending keys, contiguous data blocks. */
static FstCode
check_index(FstSstReader *r, FstError *err)
{
	FstIter    *it = fst_block_ikey_iter_create(r->index);
	uint64		expect_off = 0;
	uint64		nblocks = 0;
	FstBuf		prev;
	FstCode		rc = FST_OK;

	if (it == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	fst_buf_init(&prev);
	for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
	{
		FstBlockHandle h;
		FstSlice	k = fst_iter_key(it);

		if (!fst_ikey_valid(k) ||
			(nblocks > 0 && fst_ikey_cmp(fst_slice(prev.data, prev.len), k) >= 0) ||
			!fst_block_handle_decode(fst_iter_value(it), &h) ||
			h.offset != expect_off || h.size > r->data_end ||
			h.size + FST_BLOCK_TRAILER_SIZE > r->data_end - h.offset)
		{
			rc = fst_error(err, FST_CORRUPT, "malformed SST index");
			break;
		}
		expect_off = h.offset + h.size + FST_BLOCK_TRAILER_SIZE;
		prev.len = 0;
		fst_buf_append(&prev, k.data, k.len);
		nblocks++;
	}
	if (rc == FST_OK)
		rc = fst_iter_status(it, err);
	if (rc == FST_OK && (expect_off != r->data_end || nblocks != r->props.num_data_blocks))
		rc = fst_error(err, FST_CORRUPT, "SST index does not cover the data region");
	if (rc == FST_OK && nblocks > 0 &&
		fst_slice_cmp(fst_slice(prev.data, prev.len),
					  fst_slice(r->props.largest.data, r->props.largest.len)) != 0)
		rc = fst_error(err, FST_CORRUPT, "SST index disagrees with the key range");
	fst_buf_free(&prev);
	fst_iter_destroy(it);
	return rc;
}

/* Takes a filter of the shared store (see FstSstReadOptions.meta_get). */
static void
use_shared_filter(FstSstReader *r, const char *filter, size_t len, uint64 handle)
{
	r->filter = (char *) filter;	/* never written: see sst_internal.h */
	r->filter_len = len;
	r->filter_shared = true;
	r->filter_handle = handle;
	r->stats.filter_shared = 1;
}

/*
 * Reads, decodes and validates the bloom filter (tail: as for blocks), or
 * takes the copy of the shared store, where a process reading the file
 * before put it.
 */
static FstCode
load_filter(FstSstReader *r, const char *tail, uint64 tail_off, FstError *err)
{
	FstCode		rc;
	const char *shared;
	uint64		handle;

	if (r->opt.meta_get != NULL && r->filter_h.size > 0 &&
		(shared = r->opt.meta_get(r->opt.shared_arg, r->opt.cache_id, FST_META_FILTER,
								  r->filter_h.offset, (size_t) r->filter_h.size,
								  &handle)) != NULL)
	{
		use_shared_filter(r, shared, (size_t) r->filter_h.size, handle);
		r->filter_loaded = true;
		return FST_OK;
	}
	rc = read_block_contents(r, r->filter_h, tail, tail_off,
							 &r->filter, &r->filter_len, err);
	if (rc != FST_OK)
		return rc;
	if (r->filter_len > 0 && !fst_bloom_valid(fst_slice(r->filter, r->filter_len)))
	{
		fst_free(r->filter);
		r->filter = NULL;
		r->filter_len = 0;
		return fst_error(err, FST_CORRUPT, "SST bloom filter is malformed");
	}
	r->filter_loaded = true;
	r->stats.filter_loads++;
	if (r->opt.meta_put != NULL && r->filter_len > 0 &&
		(shared = r->opt.meta_put(r->opt.shared_arg, r->opt.cache_id, FST_META_FILTER,
								  r->filter_h.offset, r->filter, r->filter_len,
								  &handle)) != NULL)
	{
		fst_free(r->filter);
		use_shared_filter(r, shared, r->filter_len, handle);
	}
	return FST_OK;
}

/*
 * Opens the index over the copy of the shared store, if a process put it
 * there (it checked it then); false if none is there.
 */
static bool
open_shared_index(FstSstReader *r, FstBlockHandle h)
{
	const char *shared;
	uint64		handle;
	FstError	ignored;

	if (r->opt.meta_get == NULL ||
		(shared = r->opt.meta_get(r->opt.shared_arg, r->opt.cache_id, FST_META_INDEX,
								  h.offset, (size_t) h.size, &handle)) == NULL)
		return false;
	if (fst_block_open(shared, (size_t) h.size, false, &r->index, &ignored) != FST_OK)
	{
		r->opt.meta_release(r->opt.shared_arg, handle);
		r->index = NULL;
		return false;
	}
	r->index_shared = true;
	r->index_handle = handle;
	r->stats.index_shared = 1;
	return true;
}

/* Offers the checked index to the shared store, and reads that copy. */
static void
share_index(FstSstReader *r, FstBlockHandle h)
{
	const char *shared;
	uint64		handle;
	FstBlock   *b;
	FstError	ignored;

	if (r->opt.meta_put == NULL ||
		(shared = r->opt.meta_put(r->opt.shared_arg, r->opt.cache_id, FST_META_INDEX,
								  h.offset, r->index->data, r->index->contents_size,
								  &handle)) == NULL)
		return;
	if (fst_block_open(shared, r->index->contents_size, false, &b, &ignored) != FST_OK)
	{
		r->opt.meta_release(r->opt.shared_arg, handle);
		return;
	}
	b->restart_interval = r->index->restart_interval;
	fst_block_release(r->index);
	r->index = b;
	r->index_shared = true;
	r->index_handle = handle;
	r->stats.index_shared = 1;
}

FstCode
fst_sst_open(FstRangeSource *src, const FstSstReadOptions *opt,
			 FstSstReader **out, FstError *err)
{
	FstSstReader *r;
	uint64		size = src->size;
	uint64		tail_off;
	size_t		tail_len;
	char	   *tail = NULL;
	const char *footer;
	FstBlockHandle filter_h,
				props_h,
				index_h;
	char	   *contents;
	size_t		clen;
	FstCode		rc;
	uint32		version;
	int			i;

	*out = NULL;
	if (size < FST_SST_FOOTER_SIZE)
		return fst_error(err, FST_CORRUPT, "file of " UINT64_FORMAT
						 " bytes is too short to be an SST", size);
	tail_len = (size_t) Min(size, (uint64) TAIL_PREFETCH);
	tail_off = size - tail_len;
	r = fst_calloc(1, sizeof(FstSstReader));
	tail = fst_malloc(tail_len);
	if (r == NULL || tail == NULL)
	{
		fst_free(r);
		fst_free(tail);
		return fst_error(err, FST_NO_MEMORY, "out of memory opening an SST");
	}
	r->src = src;
	if (opt)
		r->opt = *opt;
	else
		fst_sst_read_options_default(&r->opt);
	fst_sst_props_init(&r->props);

	rc = fst_range_read(src, tail_off, tail_len, tail, err);
	if (rc != FST_OK)
		goto fail;
	footer = tail + tail_len - FST_SST_FOOTER_SIZE;
	if (memcmp(footer + FOOTER_MAGIC_OFF, FST_SST_MAGIC, 8) != 0)
	{
		rc = fst_error(err, FST_CORRUPT, "not an SST file (bad magic number)");
		goto fail;
	}
	if (r->opt.verify_checksums &&
		fst_crc_unmask(fst_get_fixed32(footer + FOOTER_CRC_OFF)) !=
		fst_crc32c(footer, FOOTER_CRC_OFF))
	{
		rc = fst_error(err, FST_CORRUPT, "SST footer checksum mismatch");
		goto fail;
	}
	/* checked after the checksum: a damaged version is corruption */
	version = fst_get_fixed32(footer + FOOTER_VERSION_OFF);
	if (version < FST_SST_FORMAT_OLDEST)
	{
		rc = fst_error(err, FST_CORRUPT, "SST footer has format version %u, which no forst writes",
					   version);
		goto fail;
	}
	if (version > FST_SST_FORMAT_NEWEST)
	{
		rc = fst_error(err, FST_NOT_SUPPORTED,
					   "SST format version %u is newer than this build reads (versions %d to %d)",
					   version, FST_SST_FORMAT_OLDEST, FST_SST_FORMAT_NEWEST);
		fst_error_cause(err, FST_CAUSE_NEWER_FORMAT);
		goto fail;
	}
	for (i = FOOTER_RESERVED_OFF; i < FOOTER_CRC_OFF; i++)
	{
		if (footer[i] != 0)
		{
			rc = fst_error(err, FST_CORRUPT, "SST footer has non-zero reserved bytes");
			goto fail;
		}
	}
	get_handle(footer + FOOTER_FILTER_OFF, &filter_h);
	get_handle(footer + FOOTER_PROPS_OFF, &props_h);
	get_handle(footer + FOOTER_INDEX_OFF, &index_h);
	/* data < filter < properties < index < footer, each adjacent */
	if (!handle_within(index_h, 0, size - FST_SST_FOOTER_SIZE) ||
		index_h.offset + index_h.size + FST_BLOCK_TRAILER_SIZE != size - FST_SST_FOOTER_SIZE ||
		!handle_within(props_h, 0, index_h.offset) ||
		props_h.offset + props_h.size + FST_BLOCK_TRAILER_SIZE != index_h.offset ||
		!handle_within(filter_h, 0, props_h.offset) ||
		filter_h.offset + filter_h.size + FST_BLOCK_TRAILER_SIZE != props_h.offset)
	{
		rc = fst_error(err, FST_CORRUPT, "SST footer has invalid block handles");
		goto fail;
	}
	r->data_end = filter_h.offset;
	if (r->opt.meta_region != NULL)
		r->opt.meta_region(r->opt.meta_region_arg, filter_h.offset);

	/* properties */
	rc = read_block_contents(r, props_h, tail, tail_off, &contents, &clen, err);
	if (rc != FST_OK)
		goto fail;
	rc = fst_sst_props_decode(fst_slice(contents, clen), &r->props, err);
	fst_free(contents);
	if (rc != FST_OK)
		goto fail;
	r->props.file_size = size;

	/* filter: now if the tail holds it, else at the first lookup */
	r->filter_h = filter_h;
	if (filter_h.offset >= tail_off)
	{
		rc = load_filter(r, tail, tail_off, err);
		if (rc != FST_OK)
			goto fail;
	}

	/* index: the shared store's copy was checked by whoever put it there */
	r->index_offset = index_h.offset;
	if (open_shared_index(r, index_h))
		r->index->restart_interval = FST_INDEX_RESTART_INTERVAL;
	else
	{
		rc = read_block_contents(r, index_h, tail, tail_off, &contents, &clen, err);
		if (rc != FST_OK)
			goto fail;
		rc = fst_block_open(contents, clen, true, &r->index, err);
		if (rc != FST_OK)
			goto fail;
		r->index->restart_interval = FST_INDEX_RESTART_INTERVAL;
		rc = check_index(r, err);
		if (rc != FST_OK)
			goto fail;
		share_index(r, index_h);
	}
	if ((r->props.num_entries == 0) != (r->props.num_data_blocks == 0))
	{
		rc = fst_error(err, FST_CORRUPT, "SST entry and block counts disagree");
		goto fail;
	}

	fst_free(tail);
	*out = r;
	return FST_OK;

fail:
	fst_free(tail);
	fst_sst_close(r);
	return rc;
}

void
fst_sst_close(FstSstReader *r)
{
	if (r == NULL)
		return;
	if (r->peek_data_it)
		fst_iter_destroy(r->peek_data_it);
	if (r->peek_index_it)
		fst_iter_destroy(r->peek_index_it);
	if (r->fences_shared)
		r->opt.meta_release(r->opt.shared_arg, r->fences_handle);
	else
		fst_free(r->fences);
	/* no iterator outlives its reader: the index goes with it */
	fst_block_release(r->index);
	if (r->index_shared)
		r->opt.meta_release(r->opt.shared_arg, r->index_handle);
	if (r->filter_shared)
		r->opt.meta_release(r->opt.shared_arg, r->filter_handle);
	else
		fst_free(r->filter);
	fst_sst_props_free(&r->props);
	fst_free(r);
}

size_t
fst_sst_memory(const FstSstReader *r)
{
	size_t		n = sizeof(*r);

	if (r->index != NULL)
		n += sizeof(FstBlock) + (r->index_shared ? 0 : r->index->contents_size);
	if (r->filter_loaded && !r->filter_shared)
		n += r->filter_len;
	if (!r->fences_shared)
		n += (size_t) r->nfences * 2 * sizeof(uint64);
	return n;
}

bool
fst_sst_block_for(FstSstReader *r, FstSlice user_part, uint64 *offset,
				  uint64 *len)
{
	char		stackbuf[256];
	char	   *target;
	FstIter    *it;
	FstBlockHandle h;
	bool		found = false;

	if (r->props.num_entries == 0)
		return false;
	target = user_part.len + FST_SEQ_BYTES <= sizeof(stackbuf) ? stackbuf :
		fst_malloc(user_part.len + FST_SEQ_BYTES);
	if (target == NULL)
		return false;
	memcpy(target, user_part.data, user_part.len);
	fst_put_be64(target + user_part.len, FST_MAX_SEQ);
	it = fst_block_ikey_iter_create(r->index);
	if (it != NULL)
	{
		fst_iter_seek(it, fst_slice(target, user_part.len + FST_SEQ_BYTES));
		if (fst_iter_valid(it) && fst_block_handle_decode(fst_iter_value(it), &h))
		{
			*offset = h.offset;
			*len = h.size + FST_BLOCK_TRAILER_SIZE;
			found = true;
		}
		fst_iter_destroy(it);
	}
	if (target != stackbuf)
		fst_free(target);
	return found;
}

uint32
fst_sst_num_blocks(const FstSstReader *r)
{
	/*
	 * The properties count the data blocks (an empty index block still has
	 * one restart); the index, checked at open, has an entry for each.
	 */
	return (uint32) Min(r->props.num_data_blocks, (uint64) r->index->num_restarts);
}

bool
fst_sst_block_last_key(FstSstReader *r, uint32 block_no, FstBuf *key)
{
	FstIter    *it;
	bool		found = false;

	fst_buf_reset(key);
	if (block_no >= fst_sst_num_blocks(r))
		return false;
	it = fst_block_ikey_iter_create(r->index);
	if (it == NULL)
		return false;
	fst_block_iter_seek_to_index(it, block_no);
	if (fst_iter_valid(it))
	{
		FstSlice	k = fst_iter_key(it);

		fst_buf_append(key, k.data, k.len);
		found = !key->oom;
	}
	fst_iter_destroy(it);
	return found;
}

FstCode
fst_sst_load_filter(FstSstReader *r, FstError *err)
{
	return r->filter_loaded ? FST_OK : load_filter(r, NULL, 0, err);
}

FstCode
fst_sst_may_contain(FstSstReader *r, FstSlice user_part, bool *may,
					FstError *err)
{
	return fst_sst_may_contain_hash(r, fst_bloom_hash(user_part), may, err);
}

FstCode
fst_sst_may_contain_hash(FstSstReader *r, uint64 hash, bool *may, FstError *err)
{
	*may = true;
	if (!r->filter_loaded)
	{
		FstCode		rc = load_filter(r, NULL, 0, err);

		if (rc != FST_OK)
			return rc;
	}
	if (r->filter_len == 0)
		return FST_OK;
	r->stats.bloom_checks++;
	*may = fst_bloom_may_contain(fst_slice(r->filter, r->filter_len), hash);
	if (!*may)
		r->stats.bloom_negatives++;
	return FST_OK;
}

FstCode
fst_sst_may_contain_prefix(FstSstReader *r, uint32 prefix_id, FstSlice prefix,
						   bool *may, FstError *err)
{
	*may = true;
	if (prefix_id == 0 || r->props.prefix_id != prefix_id)
		return FST_OK;
	return fst_sst_may_contain_hash(r, fst_bloom_hash(prefix), may, err);
}

/* Returns the data block at h with a reference the caller releases. */
FstCode
fst_sst_load_data_block(FstSstReader *r, FstBlockHandle h, FstBlock **out,
						FstError *err)
{
	char	   *contents;
	size_t		clen;
	FstCode		rc;

	if (r->opt.cache)
	{
		*out = fst_block_cache_lookup(r->opt.cache, r->opt.cache_id, h.offset);
		if (*out)
		{
			r->stats.cache_hits++;
			return FST_OK;
		}
	}
	if (r->opt.shared_get &&
		r->opt.shared_get(r->opt.shared_arg, r->opt.cache_id, h.offset,
						  &contents, &clen))
	{
		/* as read and rewritten by whoever put it there */
		rc = fst_block_open(contents, clen, true, out, err);
		if (rc != FST_OK)
			return rc;
		(*out)->restart_interval = r->props.restart_interval;
		r->stats.shared_hits++;
		/* not into cache: the shared cache holds it (see sst.h) */
		return FST_OK;
	}
	r->stats.block_reads++;
	rc = read_block_contents(r, h, NULL, 0, &contents, &clen, err);
	if (rc != FST_OK)
		return rc;
	rc = fst_block_open(contents, clen, true, out, err);
	if (rc != FST_OK)
		return rc;
	(*out)->restart_interval = r->props.restart_interval;
	if (r->opt.rewrite_entry)
	{
		rc = rewrite_block(r, *out, err);
		if (rc != FST_OK)
		{
			fst_block_release(*out);
			*out = NULL;
			return rc;
		}
	}
	/* kept once: in the shared cache if it takes the block (see sst.h) */
	if (r->opt.shared_put &&
		r->opt.shared_put(r->opt.shared_arg, r->opt.cache_id, h.offset,
						  (*out)->data, (*out)->contents_size))
		return FST_OK;
	if (r->opt.cache)
		fst_block_cache_insert(r->opt.cache, r->opt.cache_id, h.offset, *out);
	return FST_OK;
}

/* ---------------------------------------------------------------------- */

FstCode
fst_sst_read_at(FstSstReader *r, uint32 block_no, uint32 entry_no,
				FstBuf *key, FstBuf *value, FstError *err)
{
	FstIter    *index_it;
	FstIter    *data_it;
	FstBlockHandle h;
	FstBlock   *b;
	FstCode		rc;

	if (r->props.restart_interval == 0)
		return fst_error(err, FST_NOT_SUPPORTED, "SST has no restart interval property");
	if (block_no >= r->props.num_data_blocks)
		return fst_error(err, FST_NOT_FOUND, "SST has no data block %u", block_no);
	index_it = fst_block_ikey_iter_create(r->index);
	if (index_it == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	fst_block_iter_seek_to_index(index_it, block_no);
	if (!fst_iter_valid(index_it) ||
		!fst_block_handle_decode(fst_iter_value(index_it), &h))
	{
		rc = fst_iter_status(index_it, err);
		fst_iter_destroy(index_it);
		return rc != FST_OK ? rc : fst_error(err, FST_CORRUPT, "malformed SST index entry");
	}
	fst_iter_destroy(index_it);
	rc = fst_sst_load_data_block(r, h, &b, err);
	if (rc != FST_OK)
		return rc;
	data_it = fst_block_ikey_iter_create(b);
	fst_block_release(b);
	if (data_it == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	fst_block_iter_seek_to_index(data_it, entry_no);
	if (!fst_iter_valid(data_it))
	{
		rc = fst_iter_status(data_it, err);
		fst_iter_destroy(data_it);
		return rc != FST_OK ? rc : fst_error(err, FST_NOT_FOUND,
											 "SST block %u has no entry %u", block_no, entry_no);
	}
	fst_buf_reset(key);
	fst_buf_append(key, fst_iter_key(data_it).data, fst_iter_key(data_it).len);
	fst_buf_reset(value);
	fst_buf_append(value, fst_iter_value(data_it).data, fst_iter_value(data_it).len);
	fst_iter_destroy(data_it);
	if (key->oom || value->oom)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	return FST_OK;
}
