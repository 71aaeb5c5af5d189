/*-------------------------------------------------------------------------
 *
 * sst_writer.c
 *	  Streams sorted entries into an SST file (format in sst.h).
 *
 * Data blocks are cut when their uncompressed size reaches the target and
 * handed to the sink at once; the writer keeps only the current block, the
 * index entries, the key hashes for the filter and the running properties.
 *
 *-------------------------------------------------------------------------
 */
#include "sst_internal.h"
#include "bloom.h"

#include <errno.h>
#include <sys/time.h>
#include <unistd.h>

struct FstSstWriter
{
	FstSstOptions opt;
	FstWriteSink *sink;
	uint64		offset;			/* bytes handed to the sink */
	FstBlockBuilder data;
	FstBlockBuilder index;
	FstBloomBuilder bloom;
	FstBuf		scratch;		/* stored form of one block */
	FstBuf		last_key;
	FstBuf		last_prefix;	/* the prefix the filter got last */
	FstSstProps props;
	bool		ttl_seen;
	bool		finished;
	bool		failed;
};

void
fst_sst_options_default(FstSstOptions *opt)
{
	opt->block_size = 32 * 1024;
	opt->restart_interval = 16;
	opt->compression = FST_COMPRESS_LZ4;
	opt->bloom_bits_per_key = 10;
	opt->prefix_of = NULL;
	opt->prefix_id = 0;
}

static FstCode
buf_sink_append(FstWriteSink *sink, const char *data, size_t len, FstError *err)
{
	FstBufSink *s = (FstBufSink *) sink;

	fst_buf_append(s->buf, data, len);
	if (s->buf->oom)
		return fst_error(err, FST_NO_MEMORY, "out of memory buffering a file");
	return FST_OK;
}

void
fst_buf_sink_init(FstBufSink *s, FstBuf *buf)
{
	s->base.append = buf_sink_append;
	s->buf = buf;
}

static FstCode
fd_sink_append(FstWriteSink *sink, const char *data, size_t len, FstError *err)
{
	FstFdSink  *s = (FstFdSink *) sink;

	while (len > 0)
	{
		ssize_t		n = write(s->fd, data, len);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return fst_error(err, errno == ENOSPC ? FST_IO_ERROR : FST_IO_ERROR,
							 "could not write file: %s", strerror(errno));
		}
		data += n;
		len -= (size_t) n;
	}
	return FST_OK;
}

void
fst_fd_sink_init(FstFdSink *s, int fd)
{
	s->base.append = fd_sink_append;
	s->fd = fd;
}

FstCode
fst_sst_writer_create(const FstSstOptions *opt, FstWriteSink *sink,
					  FstSstWriter **out, FstError *err)
{
	FstSstWriter *w;
	struct timeval tv;

	*out = NULL;
	if (opt->block_size < 256 || opt->block_size > 16 * 1024 * 1024 ||
		opt->restart_interval < 1 || opt->restart_interval > 65536 ||
		opt->compression < FST_COMPRESS_NONE || opt->compression > FST_COMPRESS_MAX ||
		opt->bloom_bits_per_key < 0 || opt->bloom_bits_per_key > 64 ||
		(opt->prefix_of != NULL) != (opt->prefix_id > 0))
		return fst_error(err, FST_INVALID_ARGUMENT, "invalid SST writer options");
	w = fst_calloc(1, sizeof(FstSstWriter));
	if (w == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	w->opt = *opt;
	w->sink = sink;
	fst_block_builder_init(&w->data, opt->restart_interval);
	fst_block_builder_init(&w->index, FST_INDEX_RESTART_INTERVAL);
	fst_bloom_builder_init(&w->bloom, opt->bloom_bits_per_key);
	fst_buf_init(&w->scratch);
	fst_buf_init(&w->last_key);
	fst_buf_init(&w->last_prefix);
	fst_sst_props_init(&w->props);
	w->props.compression = (uint32) opt->compression;
	w->props.block_size = (uint32) opt->block_size;
	w->props.bloom_bits_per_key = (uint32) opt->bloom_bits_per_key;
	w->props.restart_interval = (uint32) opt->restart_interval;
	if (opt->bloom_bits_per_key > 0)
		w->props.prefix_id = opt->prefix_id;
	gettimeofday(&tv, NULL);
	w->props.created_at = (int64) tv.tv_sec * 1000000 + tv.tv_usec;
	*out = w;
	return FST_OK;
}

static FstCode
emit_block(FstSstWriter *w, FstSlice contents, int compression,
		   FstBlockHandle *handle, FstError *err)
{
	FstCode		rc;

	fst_buf_reset(&w->scratch);
	rc = fst_block_write(&w->scratch, w->offset, contents, compression, handle, err);
	if (rc != FST_OK)
		return rc;
	rc = w->sink->append(w->sink, w->scratch.data, w->scratch.len, err);
	if (rc != FST_OK)
		return rc;
	w->offset += w->scratch.len;
	return FST_OK;
}

static FstCode
flush_data_block(FstSstWriter *w, FstError *err)
{
	FstBlockHandle h;
	FstBuf		hbuf;
	FstCode		rc;

	if (w->data.num_entries == 0)
		return FST_OK;
	rc = emit_block(w, fst_block_builder_finish(&w->data), w->opt.compression,
					&h, err);
	if (rc != FST_OK)
		return rc;
	fst_buf_init(&hbuf);
	fst_block_handle_encode(&hbuf, h);
	fst_block_builder_add(&w->index, fst_slice(w->last_key.data, w->last_key.len),
						  fst_slice(hbuf.data, hbuf.len));
	fst_buf_free(&hbuf);
	fst_block_builder_reset(&w->data);
	w->props.num_data_blocks++;
	if (fst_block_builder_oom(&w->index))
		return fst_error(err, FST_NO_MEMORY, "out of memory building an index");
	return FST_OK;
}

FstCode
fst_sst_writer_add(FstSstWriter *w, FstSlice ikey, FstSlice value, FstError *err)
{
	FstEntry	e;
	FstCode		rc;

	if (w->finished || w->failed)
		return fst_error(err, FST_INVALID_ARGUMENT, "SST writer is finished or failed");
	if (!fst_entry_decode(ikey, value, &e))
		return fst_error(err, FST_INVALID_ARGUMENT, "entry has a malformed key or header");
	if (w->props.num_entries > 0 &&
		fst_ikey_cmp(fst_slice(w->last_key.data, w->last_key.len), ikey) >= 0)
		return fst_error(err, FST_INVALID_ARGUMENT, "keys added out of order");

	if (w->props.num_entries == 0)
	{
		fst_buf_append(&w->props.smallest, ikey.data, ikey.len);
		w->props.kg_min = e.key_group;
		w->props.seq_min = w->props.seq_max = e.hdr.seq;
	}
	/* one filter key per user part; versions of a key are adjacent */
	if (w->opt.bloom_bits_per_key > 0 &&
		(w->props.num_entries == 0 ||
		 fst_slice_cmp(fst_ikey_user_part(fst_slice(w->last_key.data, w->last_key.len)),
					   e.user_part) != 0))
		fst_bloom_builder_add(&w->bloom, fst_bloom_hash(e.user_part));
	/* and one per prefix; user parts with one prefix are adjacent too */
	if (w->opt.bloom_bits_per_key > 0 && w->opt.prefix_of)
	{
		size_t		plen = w->opt.prefix_of(e.user_part);

		if (plen > 0 && plen <= e.user_part.len &&
			fst_slice_cmp(fst_slice(w->last_prefix.data, w->last_prefix.len),
						  fst_slice(e.user_part.data, plen)) != 0)
		{
			fst_bloom_builder_add(&w->bloom,
								  fst_bloom_hash(fst_slice(e.user_part.data, plen)));
			fst_buf_reset(&w->last_prefix);
			fst_buf_append(&w->last_prefix, e.user_part.data, plen);
		}
	}

	fst_block_builder_add(&w->data, ikey, value);
	w->last_key.len = 0;
	fst_buf_append(&w->last_key, ikey.data, ikey.len);

	w->props.num_entries++;
	if (e.hdr.flags & FST_ENTRY_TOMBSTONE)
		w->props.num_tombstones++;
	w->props.raw_key_bytes += ikey.len;
	w->props.raw_value_bytes += value.len;
	w->props.kg_max = e.key_group;
	w->props.seq_min = Min(w->props.seq_min, e.hdr.seq);
	w->props.seq_max = Max(w->props.seq_max, e.hdr.seq);
	if (!(e.hdr.flags & FST_ENTRY_FROZEN))
		fst_xid_range_note(&w->props.xid_min, &w->props.xid_max, e.hdr.xid);
	if (fst_block_builder_oom(&w->data) || w->last_key.oom || w->bloom.oom ||
		w->last_prefix.oom)
	{
		w->failed = true;
		return fst_error(err, FST_NO_MEMORY, "out of memory building an SST");
	}
	if (fst_block_builder_size_estimate(&w->data) >= w->opt.block_size)
	{
		rc = flush_data_block(w, err);
		if (rc != FST_OK)
		{
			w->failed = true;
			return rc;
		}
	}
	return FST_OK;
}

void
fst_sst_writer_note_ttl(FstSstWriter *w, int64 ttl)
{
	if (!w->ttl_seen)
	{
		w->props.ttl_min = w->props.ttl_max = ttl;
		w->ttl_seen = true;
		w->props.has_ttl = true;
		return;
	}
	w->props.ttl_min = Min(w->props.ttl_min, ttl);
	w->props.ttl_max = Max(w->props.ttl_max, ttl);
}

uint64
fst_sst_writer_estimated_size(const FstSstWriter *w)
{
	return w->offset + fst_block_builder_size_estimate(&w->data);
}

uint64
fst_sst_writer_num_data_blocks(const FstSstWriter *w)
{
	return w->props.num_data_blocks;
}

static void
put_handle(char *p, FstBlockHandle h)
{
	fst_put_fixed64(p, h.offset);
	fst_put_fixed32(p + 8, (uint32) h.size);
}

FstCode
fst_sst_writer_finish(FstSstWriter *w, FstSstProps *props, FstError *err)
{
	FstBlockHandle filter_h,
				props_h,
				index_h;
	FstBuf		tmp;
	char		footer[FST_SST_FOOTER_SIZE];
	FstCode		rc;

	if (w->finished || w->failed)
		return fst_error(err, FST_INVALID_ARGUMENT, "SST writer is finished or failed");
	rc = flush_data_block(w, err);
	if (rc != FST_OK)
		goto fail;

	fst_buf_init(&tmp);
	if (w->opt.bloom_bits_per_key > 0)
		fst_bloom_builder_finish(&w->bloom, &tmp);
	rc = tmp.oom ? fst_error(err, FST_NO_MEMORY, "out of memory") :
		emit_block(w, fst_slice(tmp.data, tmp.len), FST_COMPRESS_NONE, &filter_h, err);
	if (rc != FST_OK)
	{
		fst_buf_free(&tmp);
		goto fail;
	}

	fst_buf_append(&w->props.largest, w->last_key.data, w->last_key.len);
	fst_buf_reset(&tmp);
	fst_sst_props_encode(&w->props, &tmp);
	rc = tmp.oom ? fst_error(err, FST_NO_MEMORY, "out of memory") :
		emit_block(w, fst_slice(tmp.data, tmp.len), FST_COMPRESS_NONE, &props_h, err);
	fst_buf_free(&tmp);
	if (rc != FST_OK)
		goto fail;

	rc = emit_block(w, fst_block_builder_finish(&w->index), FST_COMPRESS_NONE,
					&index_h, err);
	if (rc != FST_OK)
		goto fail;

	memset(footer, 0, sizeof(footer));
	fst_put_fixed32(footer + FOOTER_VERSION_OFF,
					w->opt.compression == FST_COMPRESS_ZSTD ?
					FST_SST_FORMAT_ZSTD : FST_SST_FORMAT_VERSION);
	put_handle(footer + FOOTER_FILTER_OFF, filter_h);
	put_handle(footer + FOOTER_PROPS_OFF, props_h);
	put_handle(footer + FOOTER_INDEX_OFF, index_h);
	fst_put_fixed32(footer + FOOTER_CRC_OFF,
					fst_crc_mask(fst_crc32c(footer, FOOTER_CRC_OFF)));
	memcpy(footer + FOOTER_MAGIC_OFF, FST_SST_MAGIC, 8);
	rc = w->sink->append(w->sink, footer, sizeof(footer), err);
	if (rc != FST_OK)
		goto fail;
	w->offset += sizeof(footer);
	w->props.file_size = w->offset;
	w->finished = true;

	if (props)
	{
		FstSstProps *src = &w->props;

		fst_sst_props_free(props);
		*props = *src;
		fst_buf_init(&props->smallest);
		fst_buf_init(&props->largest);
		fst_buf_append(&props->smallest, src->smallest.data, src->smallest.len);
		fst_buf_append(&props->largest, src->largest.data, src->largest.len);
		if (props->smallest.oom || props->largest.oom)
			return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	return FST_OK;

fail:
	w->failed = true;
	return rc;
}

void
fst_sst_writer_destroy(FstSstWriter *w)
{
	if (w == NULL)
		return;
	fst_block_builder_free(&w->data);
	fst_block_builder_free(&w->index);
	fst_bloom_builder_free(&w->bloom);
	fst_buf_free(&w->scratch);
	fst_buf_free(&w->last_key);
	fst_buf_free(&w->last_prefix);
	fst_sst_props_free(&w->props);
	fst_free(w);
}
