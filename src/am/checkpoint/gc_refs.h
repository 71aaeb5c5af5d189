/*-------------------------------------------------------------------------
 *
 * gc_refs.h
 *	  The object keys a garbage collection keeps (checkpoint/gc.c, and the
 *	  pins it drops, checkpoint/gc_pins.c).
 *
 * A set of keys is a hash table in CurrentMemoryContext.  The key of a
 * file that a manifest lists is under its table's prefix for the table's
 * own files, and the key its owner string names for a borrowed one
 * (objects/borrowed.h), whichever cluster or savepoint that is under.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_GC_REFS_H
#define FORST_GC_REFS_H

#include "utils/hsearch.h"

#include "am/objects/store.h"

/* An empty set of object keys, named name (in CurrentMemoryContext). */
extern HTAB *forst_gc_refs_create(const char *name);
extern void forst_gc_ref_add(HTAB *refs, const char *key);
extern bool forst_gc_ref_has(HTAB *refs, const char *key);

/*
 * The object key of file f of the manifest of the table at prefix; tk is
 * that table's key with kind FST_OBJKEY_SST (its file id is overwritten),
 * buf of len bytes holds a key built for an own file.
 */
extern const char *forst_gc_file_key(FstObjKey *tk, const char *prefix,
									 const FstManifestFile *f, char *buf, size_t len);

/* Adds the manifest (prefix, version) and every file m lists to refs. */
extern void forst_gc_keep_manifest(HTAB *refs, const char *prefix, uint64 version,
								   const FstManifest *m);

#endif							/* FORST_GC_REFS_H */
