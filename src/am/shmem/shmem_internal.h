/*-------------------------------------------------------------------------
 *
 * shmem_internal.h
 *	  What the files of shmem/ share and nothing else sees: the table
 *	  registry's hash and slots (shmem/shmem.c lays them out at start-up,
 *	  shmem/registry.c adds and removes their entries), and the slab
 *	  pool's frees that removing an entry takes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_SHMEM_INTERNAL_H
#define FORST_SHMEM_INTERNAL_H

#include "utils/hsearch.h"

#include "am/shmem/shmem.h"

/* RelFileNode -> ForstTableShared; forst_shared->lock protects it. */
extern HTAB *forst_tables;

/*
 * The registry's slots (forst_tables_next): ts[i] is the entry in slot i
 * or NULL; slots below used were handed out, free[0..nfree) of them are
 * free again.  forst_shared->lock protects them as the hash.
 */
typedef struct ForstTableSlots
{
	int			used;
	int			nfree;
	int		   *free;			/* forst.max_tables of them */
	ForstTableShared *ts[FLEXIBLE_ARRAY_MEMBER];	/* as many */
} ForstTableSlots;

extern ForstTableSlots *table_slots;

/*
 * The slab pool's (shmem/shmem.c), for shmem/registry.c, which frees the
 * slabs of a table it forgets.  forst_slab_release_pages gives a slab's
 * pages back to the kernel; forst_slab_free_locked returns a slab to the
 * pool, forst_shared->lock held exclusively (advanced: the caller has
 * advanced its generation already).
 */
extern void forst_slab_release_pages(int slab);
extern void forst_slab_free_locked(int slab, bool advanced);

#endif							/* FORST_SHMEM_INTERNAL_H */
