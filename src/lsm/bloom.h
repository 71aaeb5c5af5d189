/*-------------------------------------------------------------------------
 *
 * bloom.h
 *	  Whole-file bloom filters over user parts (key group + user key).
 *
 * A filter is a bit array followed by one byte holding the number of probes.
 * Probes use double hashing of one 64-bit hash (PostgreSQL's
 * hash_bytes_extended), so building costs one hash per key.  With 10 bits a
 * key the false-positive rate is about 1%.  A filter never answers "absent"
 * for a key that was added.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_BLOOM_H
#define FST_BLOOM_H

#include "fst_common.h"

typedef struct FstBloomBuilder
{
	uint64	   *hashes;
	size_t		n;
	size_t		cap;
	int			bits_per_key;
	bool		oom;
} FstBloomBuilder;

extern uint64 fst_bloom_hash(FstSlice user_part);

extern void fst_bloom_builder_init(FstBloomBuilder *bb, int bits_per_key);
extern void fst_bloom_builder_free(FstBloomBuilder *bb);
/* Adds a key hash; consecutive duplicates are skipped. */
extern void fst_bloom_builder_add(FstBloomBuilder *bb, uint64 hash);
/* Appends the filter to out; an empty builder gives a filter that says no. */
extern void fst_bloom_builder_finish(FstBloomBuilder *bb, FstBuf *out);

/* Validates a filter's shape (probe count, size). */
extern bool fst_bloom_valid(FstSlice filter);
extern bool fst_bloom_may_contain(FstSlice filter, uint64 hash);

#endif							/* FST_BLOOM_H */
