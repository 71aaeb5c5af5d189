/*-------------------------------------------------------------------------
 *
 * bloom.c
 *	  Bloom filter build and probe (see bloom.h).
 *
 *-------------------------------------------------------------------------
 */
#include "bloom.h"

#include "common/hashfn.h"

#define BLOOM_SEED	UINT64CONST(0x666f727374424c4d)	/* "forstBLM" */
#define BLOOM_MAX_PROBES 30

uint64
fst_bloom_hash(FstSlice user_part)
{
	return hash_bytes_extended((const unsigned char *) user_part.data,
							   (int) user_part.len, BLOOM_SEED);
}

void
fst_bloom_builder_init(FstBloomBuilder *bb, int bits_per_key)
{
	bb->hashes = NULL;
	bb->n = 0;
	bb->cap = 0;
	bb->bits_per_key = Max(bits_per_key, 1);
	bb->oom = false;
}

void
fst_bloom_builder_free(FstBloomBuilder *bb)
{
	fst_free(bb->hashes);
	bb->hashes = NULL;
	bb->n = bb->cap = 0;
}

void
fst_bloom_builder_add(FstBloomBuilder *bb, uint64 hash)
{
	if (bb->oom || (bb->n > 0 && bb->hashes[bb->n - 1] == hash))
		return;
	if (bb->n == bb->cap)
	{
		size_t		ncap = bb->cap ? bb->cap * 2 : 1024;
		uint64	   *p = fst_realloc(bb->hashes, ncap * sizeof(uint64));

		if (p == NULL)
		{
			bb->oom = true;
			return;
		}
		bb->hashes = p;
		bb->cap = ncap;
	}
	bb->hashes[bb->n++] = hash;
}

static inline void
probe_init(uint64 hash, uint32 *h, uint32 *delta)
{
	*h = (uint32) hash;
	*delta = (uint32) (hash >> 32) | 1;
}

void
fst_bloom_builder_finish(FstBloomBuilder *bb, FstBuf *out)
{
	uint64		nbits = (uint64) bb->n * bb->bits_per_key;
	size_t		nbytes;
	int			k;
	size_t		start;
	size_t		i;

	/* k = ln 2 * bits/key, clamped */
	k = (int) (bb->bits_per_key * 0.69);
	k = Max(k, 1);
	k = Min(k, BLOOM_MAX_PROBES);
	if (nbits < 64)
		nbits = 64;
	nbytes = (size_t) ((nbits + 7) / 8);
	nbits = (uint64) nbytes * 8;

	start = out->len;
	if (!fst_buf_reserve(out, nbytes + 1))
		return;
	memset(out->data + start, 0, nbytes);
	for (i = 0; i < bb->n; i++)
	{
		uint32		h,
					delta;
		int			j;

		probe_init(bb->hashes[i], &h, &delta);
		for (j = 0; j < k; j++)
		{
			uint32		bit = (uint32) (h % nbits);

			out->data[start + bit / 8] |= (char) (1 << (bit % 8));
			h += delta;
		}
	}
	out->data[start + nbytes] = (char) k;
	out->len = start + nbytes + 1;
}

bool
fst_bloom_valid(FstSlice filter)
{
	int			k;

	if (filter.len < 2 || filter.len - 1 > (size_t) PG_INT32_MAX / 8)
		return false;
	k = (uint8) filter.data[filter.len - 1];
	return k >= 1 && k <= BLOOM_MAX_PROBES;
}

bool
fst_bloom_may_contain(FstSlice filter, uint64 hash)
{
	uint32		nbits;
	int			k;
	uint32		h,
				delta;
	int			j;

	if (filter.len < 2)
		return true;			/* no usable filter: cannot exclude */
	nbits = (uint32) ((filter.len - 1) * 8);
	k = (uint8) filter.data[filter.len - 1];
	if (k < 1 || k > BLOOM_MAX_PROBES)
		return true;
	probe_init(hash, &h, &delta);
	for (j = 0; j < k; j++)
	{
		uint32		bit = h % nbits;

		if ((filter.data[bit / 8] & (1 << (bit % 8))) == 0)
			return false;
		h += delta;
	}
	return true;
}
