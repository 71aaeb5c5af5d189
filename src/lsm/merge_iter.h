/*-------------------------------------------------------------------------
 *
 * merge_iter.h
 *	  Merging many sorted sources into one, and the MVCC view on top of it.
 *
 * A merging iterator yields every entry of its children in fst_ikey_cmp
 * order: user parts ascending, and a key's versions newest first; or in
 * the reverse order, after seek_last, seek_before or prev (turning around
 * repositions every child on the other side of the current entry).  Should
 * two children hold the very same internal key (same user part and same
 * sequence, which the engine never writes), the child with the lower index
 * comes first; so callers pass children newest source first (memtable,
 * level 0 newest to oldest, then levels 1..n).  The children sit in a binary
 * min-heap; positioning costs O(log n) comparisons per entry and nothing
 * is allocated after creation.  An error from any child stops the merge:
 * the iterator becomes invalid and status() reports the child's error.
 *
 * A visible iterator (forward only: seek_last, seek_before and prev make
 * it fail with FST_INVALID_ARGUMENT) turns a (merged) stream of versions
 * into rows: for each user part it yields only the newest version with
 * seq <= max_seq that visible() accepts (NULL accepts all), and nothing
 * at all for the
 * user part when that version is a tombstone.  Its key() and value() are
 * the chosen version's internal key and value.  seek() takes an internal
 * key: pass a user part with sequence FST_MAX_SEQ to start at a row (a
 * smaller sequence starts among that row's versions, ignoring newer ones).
 * An entry whose value has no valid entry header is FST_CORRUPT.
 *
 * Both take ownership of the iterators given to them and destroy them with
 * themselves, also when creation fails.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_MERGE_ITER_H
#define FST_MERGE_ITER_H

#include "iter.h"
#include "sst.h"

/*
 * Merges children[0..n-1] (n >= 0; the array itself is copied).  Returns
 * NULL when out of memory or when a child is NULL (a failed creation the
 * caller passed on); every non-NULL child is then destroyed.
 */
extern FstIter *fst_merge_iter_create(FstIter **children, int n);

/*
 * Which child the merging iterator's current entry comes from (-1 when it
 * is not valid), and that child: callers use them to learn where an entry
 * lives (a memtable entry's ref, say).  The child stays owned by the merge.
 */
extern int	fst_merge_iter_current_child(FstIter *it);
extern FstIter *fst_merge_iter_child(FstIter *it, int i);

/*
 * Rows as of max_seq under visible() (see above) over merged.  NULL when
 * out of memory or merged is NULL; merged is then destroyed.
 */
extern FstIter *fst_visible_iter_create(FstIter *merged, uint64 max_seq,
										FstVisibleFn visible, void *arg);

#endif							/* FST_MERGE_ITER_H */
