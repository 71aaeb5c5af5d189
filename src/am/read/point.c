/*-------------------------------------------------------------------------
 *
 * point.c
 *	  Point lookups across memtables and SST files (see read/point.h): the
 *	  engine's fst_lookup_get (src/lsm/lookup.c) over a table view, with
 *	  the view's readers, errors reported with ereport, and the backend's
 *	  bloom filter counters.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/read/point.h"
#include "lsm/bloom.h"
#include "am/shmem/shmem.h"
#include "am/base/stats.h"
#include "am/read/sst_readers.h"

/* The view's reader of a file (opened and cached by read/sst_readers.c). */
FstCode
forst_view_reader(void *arg, const FstFileMeta *f, FstSstReader **r, FstError *err)
{
	const ForstTableView *view = arg;

	*r = forst_sst_reader(&view->rnode, f);
	return FST_OK;
}

/* An SST winner's entry lives in the caller's memory context. */
static void *
point_alloc(void *arg, size_t n)
{
	return palloc(n);
}

static void
point_get(const ForstTableView *view, FstSlice user_part,
		  ForstPointAcceptFn accept, void *arg, bool want_entry,
		  bool expect_found, ForstPointHit *out)
{
	FstMemtable *mts[lengthof(view->slabs)];
	FstLookup	lk;
	FstLookupHit hit;
	FstError	err;
	FstCode		rc;
	int			i;

	for (i = 0; i < view->nslabs; i++)
		mts[i] = forst_slab_memtable(view->slabs[i]);
	fst_lookup_init(&lk);
	lk.memtables = mts;
	lk.nmemtables = view->nslabs;
	lk.manifest = view->manifest;
	lk.reader = forst_view_reader;
	lk.reader_arg = (void *) view;
	lk.accept = accept;
	lk.accept_arg = arg;
	lk.want_entry = want_entry;
	lk.expect_found = expect_found;
	lk.alloc = point_alloc;

	rc = fst_lookup_get(&lk, user_part, &hit, &err);
	forst_local_bloom_checks += lk.stats.bloom_checks;
	forst_local_bloom_negatives += lk.stats.bloom_negatives;
	forst_local_bloom_false_positives += lk.stats.bloom_false_positives;
	if (rc != FST_OK)
		forst_report(rc, &err, psprintf("point lookup in relation %u",
										view->rnode.relNode));

	memset(out, 0, sizeof(*out));
	if (!hit.found)
		return;
	out->found = true;
	out->hdr = hit.hdr;
	out->hint = hit.hint;
	out->ikey = hit.ikey;
	out->value = hit.value;
	if (hit.in_sst)
	{
		out->loc.in_sst = true;
		out->loc.file_slot = forst_tid_file_slot(&view->rnode, hit.file->file_id,
											 view->manifest_version);
		out->loc.block = hit.block;
		out->loc.entry = hit.entry;
	}
	else
	{
		out->loc.slab = view->slabs[hit.memtable];
		out->loc.ref = hit.ref;
	}
}

void
forst_point_get(const ForstTableView *view, FstSlice user_part,
				ForstPointAcceptFn accept, void *arg, bool want_entry,
				ForstPointHit *out)
{
	point_get(view, user_part, accept, arg, want_entry, false, out);
}

void
forst_point_get_expected(const ForstTableView *view, FstSlice user_part,
						 ForstPointAcceptFn accept, void *arg,
						 bool want_entry, ForstPointHit *out)
{
	point_get(view, user_part, accept, arg, want_entry, true, out);
}
