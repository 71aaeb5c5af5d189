/*-------------------------------------------------------------------------
 *
 * flush_build.c
 *	  The SST file of a flush from a memtable (see flush_build.h).
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include "flush_build.h"
#include "ikey.h"
#include "iter.h"

void
fst_flush_build_init(FstFlushBuild *fb)
{
	memset(fb, 0, sizeof(*fb));
	fst_sst_options_default(&fb->opt);
}

FstCode
fst_flush_build(FstMemtable *mt, FstFlushBuild *fb, FstWriteSink *sink,
				FstSstProps *props, FstError *err)
{
	FstSstWriter *w;
	FstIter    *it;
	FstCode		rc;
	FstBuf		value;

	fb->max_seq = 0;
	fb->pending_xid_min = fb->pending_xid_max = 0;
	fb->dropped = 0;
	rc = fst_sst_writer_create(&fb->opt, sink, &w, err);
	if (rc != FST_OK)
		return rc;
	it = fst_memtable_iter_create(mt);
	if (it == NULL)
	{
		fst_sst_writer_destroy(w);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	fst_buf_init(&value);
	for (fst_iter_seek_first(it); fst_iter_valid(it) && rc == FST_OK; fst_iter_next(it))
	{
		FstSlice	k = fst_iter_key(it);
		FstSlice	v = fst_iter_value(it);
		uint8		hint = fst_memtable_iter_hint(it);
		uint8		flags;
		FstEntry	e;

		if (!fst_entry_decode(k, v, &e))
		{
			rc = fst_error(err, FST_CORRUPT, "malformed memtable entry");
			break;
		}
		fb->max_seq = Max(fb->max_seq, e.hdr.seq);
		flags = e.hdr.flags;
		if (!(flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)))
		{
			FstFlushFate fate;

			if (hint & FST_MT_HINT_ABORTED)
				fate = FST_FLUSH_DROP;
			else if (hint & FST_MT_HINT_COMMITTED)
				fate = FST_FLUSH_COMMITTED;
			else
				fate = fb->fate(fb->arg, e.hdr.xid);
			if (fate == FST_FLUSH_DROP)
			{
				fb->dropped++;
				continue;
			}
			if (fate == FST_FLUSH_COMMITTED)
				flags |= FST_ENTRY_COMMITTED;
			else
				fst_xid_range_note(&fb->pending_xid_min, &fb->pending_xid_max,
								   e.hdr.xid);
		}
		fst_buf_reset(&value);
		fst_buf_append(&value, v.data, v.len);
		if (value.oom)
		{
			rc = fst_error(err, FST_NO_MEMORY, "out of memory");
			break;
		}
		if ((flags & FST_ENTRY_COMMITTED) && !(flags & FST_ENTRY_FROZEN) &&
			fb->frozen && fb->frozen(fb->arg, e.hdr.xid))
		{
			/* seen by every snapshot: frozen, as compaction would */
			flags |= FST_ENTRY_FROZEN;
			fst_entry_header_encode(value.data, flags, 0, 0);
		}
		value.data[0] = (char) flags;
		rc = fst_sst_writer_add(w, k, fst_slice(value.data, value.len), err);
		if (rc == FST_OK && fb->ttl && !(flags & FST_ENTRY_TOMBSTONE))
		{
			int64		ttl;

			if (!fb->ttl(fb->arg, e.payload, &ttl))
				ttl = PG_INT64_MAX;
			fst_sst_writer_note_ttl(w, ttl);
		}
	}
	fst_iter_destroy(it);
	fst_buf_free(&value);
	if (rc == FST_OK)
		rc = fst_sst_writer_finish(w, props, err);
	fst_sst_writer_destroy(w);
	return rc;
}
