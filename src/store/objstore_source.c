/*-------------------------------------------------------------------------
 *
 * objstore_source.c
 *	  Byte-range source over an object (see objstore_source.h).
 *
 *-------------------------------------------------------------------------
 */
#include "objstore_source.h"

typedef struct ObjSource
{
	FstRangeSource base;
	FstObjStore *store;
	char	   *key;
} ObjSource;

static FstCode
obj_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
		 FstError *err)
{
	ObjSource  *o = (ObjSource *) src;
	size_t		got;
	FstCode		rc;

	rc = fst_objstore_get_range(o->store, o->key, offset, len, buf, &got, err);
	if (rc != FST_OK)
	{
		fst_error_prefix(err, "reading object \"%s\"", o->key);
		return rc;
	}
	if (got != len)
		return fst_error(err, FST_CORRUPT,
						 "object \"%s\" is shorter than its recorded size "
						 UINT64_FORMAT, o->key, src->size);
	return FST_OK;
}

static void
obj_close(FstRangeSource *src)
{
	ObjSource  *o = (ObjSource *) src;

	fst_free(o->key);
	fst_free(o);
}

FstCode
fst_range_source_object(FstObjStore *store, const char *key, uint64 size_hint,
						FstRangeSource **out, FstError *err)
{
	ObjSource  *o;
	uint64		size = size_hint;

	*out = NULL;
	if (size == 0)
	{
		FstObjInfo	info;
		FstCode		rc = fst_objstore_head(store, key, &info, err);

		if (rc != FST_OK)
			return rc;
		size = info.size;
	}
	o = fst_calloc(1, sizeof(ObjSource));
	if (o == NULL || (o->key = fst_strdup(key)) == NULL)
	{
		fst_free(o);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	o->base.size = size;
	o->base.read = obj_read;
	o->base.close = obj_close;
	o->store = store;
	*out = &o->base;
	return FST_OK;
}
