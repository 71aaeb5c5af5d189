/*-------------------------------------------------------------------------
 *
 * objstore_source.h
 *	  A byte-range source (rangesrc.h) over one object of an object store,
 *	  so that the SST reader reads remote files with ranged GETs.
 *
 * The object's size comes from the caller (the manifest records it, saving
 * a HEAD per file) or, when size_hint is 0, from a HEAD request.  A ranged
 * read that returns fewer bytes than asked means the object is not the file
 * the manifest describes: FST_CORRUPT.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_OBJSTORE_SOURCE_H
#define FST_OBJSTORE_SOURCE_H

#include "objstore.h"
#include "rangesrc.h"

/* store is borrowed and must outlive the source; key is copied. */
extern FstCode fst_range_source_object(FstObjStore *store, const char *key,
									   uint64 size_hint,
									   FstRangeSource **out, FstError *err);

#endif							/* FST_OBJSTORE_SOURCE_H */
