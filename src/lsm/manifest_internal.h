/*-------------------------------------------------------------------------
 *
 * manifest_internal.h
 *	  The order of file identities, shared by manifest.c (edits, equality,
 *	  look-ups) and manifest_check.c (the duplicate check).  Not for use
 *	  outside src/lsm/manifest*.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_MANIFEST_INTERNAL_H
#define FST_MANIFEST_INTERNAL_H

#include "manifest.h"

/* Orders owners: NULL (our own files) first, then by strcmp. */
extern int	fst_manifest_owner_cmp(const char *a, const char *b);

/*
 * qsort comparator over pointers to FstManifestFile: by file id, then by
 * owner.  Two files are the same file when it returns 0.
 */
extern int	fst_manifest_file_identity_cmp(const void *pa, const void *pb);

#endif							/* FST_MANIFEST_INTERNAL_H */
