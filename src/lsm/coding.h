/*-------------------------------------------------------------------------
 *
 * coding.h
 *	  Byte-level encodings shared by every on-disk format of forst.
 *
 * Fixed-width integers are little-endian unless the name says "be"
 * (big-endian is used inside keys, where byte order must equal numeric
 * order).  Varints are LEB128 (7 bits a byte, low group first).
 *
 * Decoders take a cursor (FstReader) that never reads past its end: every
 * get_* returns false on a short or malformed input, and the cursor's
 * "bad" flag then stays set, so a decoder can do many gets and check once.
 *
 * Checksums are CRC-32C (PostgreSQL's pg_crc32c, hardware-accelerated where
 * the CPU has it), stored "masked" so that the CRC of data that itself
 * contains CRCs stays well distributed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_CODING_H
#define FST_CODING_H

#include "fst_common.h"
#include "port/pg_crc32c.h"

#define FST_MAX_VARINT64 10

static inline void
fst_put_fixed32(char *p, uint32 v)
{
	p[0] = (char) (v);
	p[1] = (char) (v >> 8);
	p[2] = (char) (v >> 16);
	p[3] = (char) (v >> 24);
}

static inline void
fst_put_fixed64(char *p, uint64 v)
{
	fst_put_fixed32(p, (uint32) v);
	fst_put_fixed32(p + 4, (uint32) (v >> 32));
}

static inline uint32
fst_get_fixed32(const char *p)
{
	const unsigned char *u = (const unsigned char *) p;

	return (uint32) u[0] | ((uint32) u[1] << 8) |
		((uint32) u[2] << 16) | ((uint32) u[3] << 24);
}

static inline uint64
fst_get_fixed64(const char *p)
{
	return (uint64) fst_get_fixed32(p) | ((uint64) fst_get_fixed32(p + 4) << 32);
}

static inline void
fst_put_be16(char *p, uint16 v)
{
	p[0] = (char) (v >> 8);
	p[1] = (char) v;
}

static inline uint16
fst_get_be16(const char *p)
{
	const unsigned char *u = (const unsigned char *) p;

	return (uint16) ((u[0] << 8) | u[1]);
}

static inline void
fst_put_be64(char *p, uint64 v)
{
	int			i;

	for (i = 7; i >= 0; i--)
	{
		p[i] = (char) v;
		v >>= 8;
	}
}

static inline uint64
fst_get_be64(const char *p)
{
	const unsigned char *u = (const unsigned char *) p;
	uint64		v = 0;
	int			i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | u[i];
	return v;
}

/* Writes a varint into p (room for FST_MAX_VARINT64 bytes); returns length. */
static inline int
fst_encode_varint64(char *p, uint64 v)
{
	int			n = 0;

	while (v >= 0x80)
	{
		p[n++] = (char) (v | 0x80);
		v >>= 7;
	}
	p[n++] = (char) v;
	return n;
}

static inline int
fst_varint_length(uint64 v)
{
	int			n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * Decodes a varint from [*p, limit); advances *p.  Returns false on a
 * truncated or over-long (more than 64 bits) encoding.
 */
static inline bool
fst_decode_varint64(const char **p, const char *limit, uint64 *out)
{
	const unsigned char *u = (const unsigned char *) *p;
	const unsigned char *l = (const unsigned char *) limit;
	uint64		v = 0;
	int			shift;

	/* one byte: most lengths in blocks */
	if (likely(u < l && *u < 0x80))
	{
		*out = *u;
		*p = (const char *) (u + 1);
		return true;
	}
	for (shift = 0; shift <= 63 && u < l; shift += 7)
	{
		uint64		b = *u++;

		if (shift == 63 && b > 1)
			return false;
		v |= (b & 0x7f) << shift;
		if (b < 0x80)
		{
			*out = v;
			*p = (const char *) u;
			return true;
		}
	}
	return false;
}

static inline bool
fst_decode_varint32(const char **p, const char *limit, uint32 *out)
{
	uint64		v;

	if (!fst_decode_varint64(p, limit, &v) || v > PG_UINT32_MAX)
		return false;
	*out = (uint32) v;
	return true;
}

/* Appenders onto an FstBuf. */
static inline void
fst_buf_put_varint(FstBuf *b, uint64 v)
{
	char		tmp[FST_MAX_VARINT64];

	fst_buf_append(b, tmp, fst_encode_varint64(tmp, v));
}

static inline void
fst_buf_put_fixed32(FstBuf *b, uint32 v)
{
	char		tmp[4];

	fst_put_fixed32(tmp, v);
	fst_buf_append(b, tmp, 4);
}

static inline void
fst_buf_put_fixed64(FstBuf *b, uint64 v)
{
	char		tmp[8];

	fst_put_fixed64(tmp, v);
	fst_buf_append(b, tmp, 8);
}

/* varint length followed by the bytes */
static inline void
fst_buf_put_lenbytes(FstBuf *b, const void *p, size_t n)
{
	fst_buf_put_varint(b, n);
	fst_buf_append(b, p, n);
}

/* Bounded decoding cursor. */
typedef struct FstReader
{
	const char *p;
	const char *end;
	bool		bad;
} FstReader;

static inline void
fst_reader_init(FstReader *r, const char *p, size_t len)
{
	r->p = p;
	r->end = p + len;
	r->bad = false;
}

static inline size_t
fst_reader_left(const FstReader *r)
{
	return r->bad ? 0 : (size_t) (r->end - r->p);
}

static inline bool
fst_get_varint(FstReader *r, uint64 *out)
{
	if (r->bad || !fst_decode_varint64(&r->p, r->end, out))
	{
		r->bad = true;
		*out = 0;
		return false;
	}
	return true;
}

static inline bool
fst_get_u32(FstReader *r, uint32 *out)
{
	uint64		v;

	if (!fst_get_varint(r, &v) || v > PG_UINT32_MAX)
	{
		r->bad = true;
		*out = 0;
		return false;
	}
	*out = (uint32) v;
	return true;
}

static inline bool
fst_get_bytes(FstReader *r, size_t n, const char **out)
{
	if (r->bad || (size_t) (r->end - r->p) < n)
	{
		r->bad = true;
		*out = NULL;
		return false;
	}
	*out = r->p;
	r->p += n;
	return true;
}

/* varint length + bytes, as written by fst_buf_put_lenbytes */
static inline bool
fst_get_lenbytes(FstReader *r, FstSlice *out)
{
	uint64		n;
	const char *p;

	out->data = NULL;
	out->len = 0;
	if (!fst_get_varint(r, &n) || n > (uint64) (r->end - r->p))
	{
		r->bad = true;
		return false;
	}
	if (!fst_get_bytes(r, (size_t) n, &p))
		return false;
	*out = fst_slice(p, (size_t) n);
	return true;
}

static inline bool
fst_get_fixed32_r(FstReader *r, uint32 *out)
{
	const char *p;

	if (!fst_get_bytes(r, 4, &p))
	{
		*out = 0;
		return false;
	}
	*out = fst_get_fixed32(p);
	return true;
}

static inline bool
fst_get_fixed64_r(FstReader *r, uint64 *out)
{
	const char *p;

	if (!fst_get_bytes(r, 8, &p))
	{
		*out = 0;
		return false;
	}
	*out = fst_get_fixed64(p);
	return true;
}

/* CRC-32C with masking (rotate and add a constant), as stored on disk. */
static inline uint32
fst_crc32c(const void *data, size_t len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return (uint32) crc;
}

static inline uint32
fst_crc32c_extend(uint32 crc_in, const void *data, size_t len)
{
	pg_crc32c	crc = ~crc_in;

	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return (uint32) crc;
}

#define FST_CRC_MASK_DELTA 0xa282ead8U

static inline uint32
fst_crc_mask(uint32 crc)
{
	return ((crc >> 15) | (crc << 17)) + FST_CRC_MASK_DELTA;
}

static inline uint32
fst_crc_unmask(uint32 masked)
{
	uint32		rot = masked - FST_CRC_MASK_DELTA;

	return (rot >> 17) | (rot << 15);
}

#endif							/* FST_CODING_H */
