/*-------------------------------------------------------------------------
 *
 * block_write.c
 *	  Building blocks, and storing them: compression, the trailer and its
 *	  checksum, and decoding a stored block back (see block.h).
 *
 *-------------------------------------------------------------------------
 */
#include "block.h"

#include <lz4.h>
#include <zstd.h>

/* Largest raw block either codec handles (lz4's limit, about 2 GB). */
#define MAX_RAW_BLOCK	((size_t) LZ4_MAX_INPUT_SIZE)

/* This process's zstd contexts, created at first use (block.h). */
static ZSTD_CCtx *zstd_cctx;
static ZSTD_DCtx *zstd_dctx;

void
fst_block_handle_encode(FstBuf *b, FstBlockHandle h)
{
	fst_buf_put_varint(b, h.offset);
	fst_buf_put_varint(b, h.size);
}

bool
fst_block_handle_decode(FstSlice in, FstBlockHandle *h)
{
	FstReader	r;

	fst_reader_init(&r, in.data, in.len);
	fst_get_varint(&r, &h->offset);
	fst_get_varint(&r, &h->size);
	return !r.bad && fst_reader_left(&r) == 0;
}

/* ---------------------------------------------------------------------- */

void
fst_block_builder_init(FstBlockBuilder *bb, int restart_interval)
{
	fst_buf_init(&bb->buf);
	fst_buf_init(&bb->restarts);
	fst_buf_init(&bb->last_key);
	bb->restart_interval = Max(restart_interval, 1);
	fst_block_builder_reset(bb);
}

void
fst_block_builder_free(FstBlockBuilder *bb)
{
	fst_buf_free(&bb->buf);
	fst_buf_free(&bb->restarts);
	fst_buf_free(&bb->last_key);
}

void
fst_block_builder_reset(FstBlockBuilder *bb)
{
	fst_buf_reset(&bb->buf);
	fst_buf_reset(&bb->restarts);
	fst_buf_reset(&bb->last_key);
	fst_buf_put_fixed32(&bb->restarts, 0);
	bb->counter = 0;
	bb->num_entries = 0;
}

bool
fst_block_builder_oom(const FstBlockBuilder *bb)
{
	return bb->buf.oom || bb->restarts.oom || bb->last_key.oom;
}

void
fst_block_builder_add(FstBlockBuilder *bb, FstSlice key, FstSlice value)
{
	size_t		shared = 0;

	if (bb->counter < bb->restart_interval)
	{
		size_t		n = Min(bb->last_key.len, key.len);

		while (shared < n && bb->last_key.data[shared] == key.data[shared])
			shared++;
	}
	else
	{
		fst_buf_put_fixed32(&bb->restarts, (uint32) bb->buf.len);
		bb->counter = 0;
	}
	if (!fst_buf_reserve(&bb->buf, 3 * FST_MAX_VARINT64 + key.len - shared + value.len))
		return;
	fst_buf_put_varint(&bb->buf, shared);
	fst_buf_put_varint(&bb->buf, key.len - shared);
	fst_buf_put_varint(&bb->buf, value.len);
	fst_buf_append(&bb->buf, key.data + shared, key.len - shared);
	fst_buf_append(&bb->buf, value.data, value.len);

	bb->last_key.len = shared;
	fst_buf_append(&bb->last_key, key.data + shared, key.len - shared);
	bb->counter++;
	bb->num_entries++;
}

size_t
fst_block_builder_size_estimate(const FstBlockBuilder *bb)
{
	return bb->buf.len + bb->restarts.len + 4;
}

FstSlice
fst_block_builder_finish(FstBlockBuilder *bb)
{
	uint32		n = (uint32) (bb->restarts.len / 4);

	fst_buf_append(&bb->buf, bb->restarts.data, bb->restarts.len);
	fst_buf_put_fixed32(&bb->buf, n);
	return fst_slice(bb->buf.data, bb->buf.len);
}

/*
 * Compresses src into dst (room for cap bytes) with the given codec.
 * Returns the compressed length, 0 if the codec could not (no memory for
 * zstd's context, or no room): the block is then stored uncompressed.
 */
static size_t
compress_block(int compression, FstSlice src, char *dst, size_t cap)
{
	if (compression == FST_COMPRESS_LZ4)
	{
		int			n = LZ4_compress_default(src.data, dst, (int) src.len, (int) cap);

		return n > 0 ? (size_t) n : 0;
	}
	if (compression == FST_COMPRESS_ZSTD)
	{
		size_t		n;

		if (zstd_cctx == NULL && (zstd_cctx = ZSTD_createCCtx()) == NULL)
			return 0;
		n = ZSTD_compressCCtx(zstd_cctx, dst, cap, src.data, src.len, FST_ZSTD_LEVEL);
		return ZSTD_isError(n) ? 0 : n;
	}
	return 0;
}

static size_t
compress_bound(int compression, size_t len)
{
	if (compression == FST_COMPRESS_LZ4)
		return (size_t) LZ4_compressBound((int) len);
	return ZSTD_compressBound(len);
}

FstCode
fst_block_write(FstBuf *out, uint64 base_offset, FstSlice contents,
				int compression, FstBlockHandle *handle, FstError *err)
{
	size_t		start = out->len;
	uint8		type = FST_COMPRESS_NONE;
	char		trailer[FST_BLOCK_TRAILER_SIZE];
	uint32		crc;

	if ((compression == FST_COMPRESS_LZ4 || compression == FST_COMPRESS_ZSTD) &&
		contents.len > 64 && contents.len < MAX_RAW_BLOCK)
	{
		size_t		bound = compress_bound(compression, contents.len);
		int			hdr;
		size_t		clen;

		if (!fst_buf_reserve(out, FST_MAX_VARINT64 + bound + FST_BLOCK_TRAILER_SIZE))
			return fst_error(err, FST_NO_MEMORY, "out of memory compressing a block");
		hdr = fst_encode_varint64(out->data + start, contents.len);
		clen = compress_block(compression, contents, out->data + start + hdr, bound);
		if (clen > 0 && hdr + clen <= contents.len - contents.len / 8)
		{
			out->len = start + hdr + clen;
			type = (uint8) compression;
		}
	}
	if (type == FST_COMPRESS_NONE)
		fst_buf_append(out, contents.data, contents.len);

	handle->offset = base_offset + start;
	handle->size = out->len - start;
	trailer[0] = (char) type;
	crc = fst_crc32c(out->data + start, out->len - start);
	crc = fst_crc32c_extend(crc, trailer, 1);
	fst_put_fixed32(trailer + 1, fst_crc_mask(crc));
	fst_buf_append(out, trailer, sizeof(trailer));
	if (out->oom)
		return fst_error(err, FST_NO_MEMORY, "out of memory writing a block");
	return FST_OK;
}

FstCode
fst_block_check_stored(const char *stored, size_t payload_size, FstError *err)
{
	uint32		expect = fst_crc_unmask(fst_get_fixed32(stored + payload_size + 1));
	uint32		crc = fst_crc32c(stored, payload_size);

	crc = fst_crc32c_extend(crc, stored + payload_size, 1);
	if (crc != expect)
		return fst_error(err, FST_CORRUPT, "block checksum mismatch");
	return FST_OK;
}

FstCode
fst_block_decode_stored(const char *stored, size_t payload_size,
						bool verify_checksum, char **out, size_t *out_len,
						FstError *err)
{
	uint8		type = (uint8) stored[payload_size];
	char	   *buf;

	*out = NULL;
	*out_len = 0;
	if (verify_checksum && fst_block_check_stored(stored, payload_size, err) != FST_OK)
		return err->code;
	if (type == FST_COMPRESS_NONE)
	{
		buf = fst_malloc(payload_size);
		if (buf == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory reading a block");
		memcpy(buf, stored, payload_size);
		*out = buf;
		*out_len = payload_size;
		return FST_OK;
	}
	if (type == FST_COMPRESS_LZ4 || type == FST_COMPRESS_ZSTD)
	{
		const char *p = stored;
		const char *end = stored + payload_size;
		uint64		raw_len;
		bool		ok;

		if (!fst_decode_varint64(&p, end, &raw_len) || raw_len > MAX_RAW_BLOCK)
			return fst_error(err, FST_CORRUPT, "bad compressed block header");
		if (type == FST_COMPRESS_ZSTD &&
			ZSTD_getFrameContentSize(p, end - p) != raw_len)
			return fst_error(err, FST_CORRUPT, "zstd block does not match its length");
		if (type == FST_COMPRESS_ZSTD && zstd_dctx == NULL &&
			(zstd_dctx = ZSTD_createDCtx()) == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory decompressing a block");
		buf = fst_malloc(raw_len > 0 ? (size_t) raw_len : 1);
		if (buf == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory decompressing a block");
		if (type == FST_COMPRESS_LZ4)
		{
			int			n = LZ4_decompress_safe(p, buf, (int) (end - p), (int) raw_len);

			ok = n >= 0 && (uint64) n == raw_len;
		}
		else
		{
			size_t		n = ZSTD_decompressDCtx(zstd_dctx, buf, (size_t) raw_len,
											   p, end - p);

			ok = !ZSTD_isError(n) && n == raw_len;
		}
		if (!ok)
		{
			fst_free(buf);
			return fst_error(err, FST_CORRUPT, "%s block does not decompress",
							 type == FST_COMPRESS_LZ4 ? "lz4" : "zstd");
		}
		*out = buf;
		*out_len = (size_t) raw_len;
		return FST_OK;
	}
	return fst_error(err, FST_CORRUPT, "unknown block compression type %u", type);
}
