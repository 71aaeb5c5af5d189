/*-------------------------------------------------------------------------
 *
 * level_iter.h
 *	  One level's files as one sorted source that opens a file only while
 *	  it is positioned in it.
 *
 * The files of a level >= 1 hold disjoint key ranges.  A level iterator
 * yields their entries in fst_ikey_cmp order, like a merge of one iterator
 * per file would, but keeps one file's iterator at a time: it opens a
 * file's iterator when it is positioned in that file (through the caller's
 * open function) and destroys it when it leaves the file (then calls the
 * caller's release function).  So whatever opening a file costs (a reader
 * with its block index, a read window) is held for one file per level, not
 * for every file the range covers, and a merge over the levels has one
 * child per level instead of one per file.  This is LevelDB's two-level
 * iterator over a version's level, with the open done by the caller.
 *
 * files[0..n-1] are the level's files (or those of a key range), sorted
 * by smallest key, disjoint; the array and what it points to must outlive
 * the iterator.  open(arg, i, err) returns an iterator over file i, or
 * NULL with *err set; it may also leave by a non-local exit (an ereport in
 * the server), after which the level iterator is safe to destroy.
 * release(arg, i), which may be NULL, is called after file i's iterator
 * has been destroyed.  Keys and values are borrowed from the current
 * file's iterator: valid until the next positioning call, as iter.h says.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_LEVEL_ITER_H
#define FST_LEVEL_ITER_H

#include "filemeta.h"
#include "iter.h"

typedef FstIter *(*FstLevelOpenFn) (void *arg, int i, FstError *err);
typedef void (*FstLevelReleaseFn) (void *arg, int i);

/* NULL when out of memory. */
extern FstIter *fst_level_iter_create(const FstFileMeta *const *files, int n,
									  FstLevelOpenFn open,
									  FstLevelReleaseFn release, void *arg);

/*
 * The file the level iterator is positioned in (-1 when it is not valid),
 * and that file's iterator (NULL then): callers use them to learn where
 * an entry lives.  The file's iterator stays owned by the level iterator.
 */
extern int	fst_level_iter_current_file(FstIter *it);
extern FstIter *fst_level_iter_current(FstIter *it);

/* Whether it is a level iterator. */
extern bool fst_is_level_iter(FstIter *it);

#endif							/* FST_LEVEL_ITER_H */
