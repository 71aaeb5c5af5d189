/*-------------------------------------------------------------------------
 *
 * shmem_internal.h
 *	  What the files of shmem/ share and nothing else sees: the table
 *	  registry's hash and slots (shmem/shmem.c owns them).
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

#endif							/* FORST_SHMEM_INTERNAL_H */
