/*-------------------------------------------------------------------------
 *
 * cursor.c
 *	  Visible rows of a forst table in key order, forward or backward (see
 *	  read/cursor.h).
 *
 * Positions a cursor's merge (seeks, turning around, moving to a new view
 * at the same position when a memtable of its view was reused) and reads
 * rows from it: each user part's versions walked newest first forward,
 * oldest first backward, the one the snapshot sees chosen, tombstones and
 * expired rows skipped.  A point cursor's row is a point lookup instead.
 * Opening a cursor and building its merge over a view of the table is
 * read/cursor_build.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "am/read/cursor.h"
#include "am/read/point.h"
#include "am/shmem/shmem.h"
#include "am/read/sst_readers.h"
#include "lsm/level_iter.h"
#include "lsm/merge_iter.h"

/* older versions of one row stepped over before the cursor seeks past */
#define FORST_CURSOR_SKIPS_BEFORE_SEEK 8

/*
 * Positions the merge at the first entry >= (user part up [+ a zero byte
 * with succ], sequence seq), or with before at the last entry < it.
 */
static void
merge_seek_to(ForstCursor *c, FstSlice up, bool succ, uint64 seq, bool before)
{
	char		stack_target[128];
	char	   *target = stack_target;
	size_t		len = up.len + (succ ? 1 : 0);

	if (len + FST_SEQ_BYTES > sizeof(stack_target))
		target = MemoryContextAlloc(c->mcxt, len + FST_SEQ_BYTES);
	memcpy(target, up.data, up.len);
	if (succ)
		target[up.len] = '\0';
	fst_put_be64(target + len, seq);
	if (before)
		fst_iter_seek_before(c->merge, fst_slice(target, len + FST_SEQ_BYTES));
	else
		fst_iter_seek(c->merge, fst_slice(target, len + FST_SEQ_BYTES));
	if (target != stack_target)
		pfree(target);
}

/* Positions the merge at the first entry >= (user part up, sequence seq). */
static void
merge_seek_at(ForstCursor *c, FstSlice up, uint64 seq)
{
	merge_seek_to(c, up, false, seq, false);
}

/* Positions the merge before the first entry of user part >= lo. */
static void
merge_seek(ForstCursor *c, FstSlice lo)
{
	if (lo.len == 0)
		fst_iter_seek_first(c->merge);
	else
		merge_seek_at(c, lo, FST_MAX_SEQ);	/* versions run newest first */
}

/* Positions the merge after the last possible version of user part up. */
static void
merge_seek_past(ForstCursor *c, FstSlice up)
{
	merge_seek_at(c, up, 0);
}

/*
 * Backward: positions the merge at the last entry of a user part below the
 * row last returned, or below hi before any was, or at the last entry.
 */
static void
back_position(ForstCursor *c)
{
	if (c->have_decided)
		merge_seek_to(c, fst_slice(c->decided.data, c->decided.len), false,
					  FST_MAX_SEQ, true);
	else if (c->hi.len > 0)
		merge_seek_to(c, fst_slice(c->hi.data, c->hi.len), false,
					  FST_MAX_SEQ, true);
	else
		fst_iter_seek_last(c->merge);
}

/*
 * This backend waited for memtable memory since the cursor last read, and
 * the flush worker reused a memtable slab of the cursor's view meanwhile
 * (shmem/slab_pins.c): its entries are in an SST file by now, so a new view holds
 * the same versions (and newer ones, which the snapshot judges as any
 * other).  The merge is rebuilt over a new view and positioned where the
 * old one was: on the row last returned, whose versions the cursor skips
 * as decided, or where the last seek put it.
 */
static void
cursor_refresh(ForstCursor *c)
{
	elog(DEBUG1, "forst: a cursor on \"%s\" moves to a new view: a memtable of its view was reused while this backend waited for memory",
		 RelationGetRelationName(c->rel));
	forst_cursor_rebuild(c);
	if (c->backward)
		back_position(c);
	else if (c->have_decided)
		merge_seek(c, fst_slice(c->decided.data, c->decided.len));
	else
		merge_seek(c, fst_slice(c->seek_lo.data, c->seek_lo.len));
	c->pending_next = false;
}

/*
 * Positions the cursor for [lo, hi), forward or backward: before the first
 * row, or after the last.
 */
static void
cursor_seek(ForstCursor *c, FstSlice lo, FstSlice hi, bool backward)
{
	resetStringInfo(&c->hi);
	appendBinaryStringInfo(&c->hi, hi.data, hi.len);
	resetStringInfo(&c->seek_lo);
	appendBinaryStringInfo(&c->seek_lo, lo.data, lo.len);
	c->have_decided = false;
	c->valid = false;
	c->pending_next = false;
	c->backward = backward && !c->point;
	c->exhausted = false;
	if (c->point)
	{
		c->point_done = false;
		return;
	}
	if (c->waits_seen != forst_memory_waits &&
		forst_table_view_stale(&c->view))
		cursor_refresh(c);		/* positions as below */
	else if (backward)
		back_position(c);
	else
		merge_seek(c, lo);
}

void
forst_cursor_seek(ForstCursor *c, FstSlice lo, FstSlice hi)
{
	cursor_seek(c, lo, hi, false);
}

void
forst_cursor_seek_back(ForstCursor *c, FstSlice lo, FstSlice hi)
{
	cursor_seek(c, lo, hi, true);
}

/*
 * A point cursor's one row: the newest version of its user part the
 * snapshot sees, looked up without a merge (read/point.h), over a view
 * taken now.
 */
static bool
point_next(ForstCursor *c)
{
	ForstPointHit hit;
	ForstVisArg ctx;
	FstSlice	key;
	MemoryContext old;

	if (c->point_done)
		return false;
	c->point_done = true;
	key = c->seek_lo.len > 0 ? fst_slice(c->seek_lo.data, c->seek_lo.len) :
		fst_slice(c->range_lo.data, c->range_lo.len);
	if (c->hi.len > 0 && fst_slice_cmp(key, fst_slice(c->hi.data, c->hi.len)) >= 0)
		return false;
	if (c->ts == NULL)
		return false;			/* the table never wrote */
	ctx.snapshot = c->snapshot;
	ctx.rel = c->rel;
	old = MemoryContextSwitchTo(c->mcxt);
	forst_table_view(c->ts, &c->rel->rd_node, &c->view);
	forst_point_get(&c->view, key, forst_version_visible_cb, &ctx, true, &hit);
	MemoryContextSwitchTo(old);
	if (!hit.found)
		return false;
	if (!fst_entry_decode(hit.ikey, hit.value, &c->cur.entry))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: malformed entry in table \"%s\"",
						RelationGetRelationName(c->rel))));
	if (c->cur.entry.hdr.flags & FST_ENTRY_TOMBSTONE)
		return false;
	if (c->expiry.active && forst_row_expired(&c->expiry, c->cur.entry.payload))
		return false;
	c->cur.loc = hit.loc;
	c->cur.hint = hit.hint;
	c->valid = true;
	/* the executor fetches this version by TID next */
	if (hit.loc.in_sst)
		forst_note_sst_version(c->rel, &hit.loc, hit.ikey, hit.value);
	return true;
}

/*
 * Whether the merge's current entry e (from child ci) is visible to the
 * cursor's snapshot; if so, sets *loc to where it lives (for an SST entry
 * only in_sst: merge_sst_position completes it) and *hint.
 */
static bool
merge_version_visible(ForstCursor *c, const FstEntry *e, int ci,
					  ForstLoc *loc, uint8 *hint)
{
	memset(loc, 0, sizeof(*loc));
	if (ci < c->view.nslabs)
	{
		FstIter    *child = fst_merge_iter_child(c->merge, ci);
		uint32		ref = fst_memtable_iter_ref(child);
		uint8		h = fst_memtable_iter_hint(child);

		if (!forst_version_visible(c->snapshot, c->rel, &e->hdr,
								   forst_slab_memtable(c->view.slabs[ci]), ref, h))
			return false;
		loc->slab = c->view.slabs[ci];
		loc->ref = ref;
		*hint = h;
		return true;
	}
	if (!forst_version_visible(c->snapshot, c->rel, &e->hdr, NULL, 0, 0))
		return false;
	loc->in_sst = true;
	*hint = 0;
	return true;
}

/* The file slot, block and entry of the merge's current SST entry. */
static void
merge_sst_position(ForstCursor *c, int ci, ForstLoc *loc)
{
	FstIter    *child = fst_merge_iter_child(c->merge, ci);
	const FstFileMeta *f;

	if (ci < c->view.nslabs + c->nl0)
		f = c->files[ci];
	else
	{
		ForstCursorLevel *lv = &c->levels[ci - c->view.nslabs - c->nl0];

		f = lv->files[fst_level_iter_current_file(child)];
		child = fst_level_iter_current(child);
	}
	loc->file_slot = forst_tid_file_slot(&c->rel->rd_node, f->file_id,
										 c->view.manifest_version);
	fst_sst_iter_position(child, &loc->block, &loc->entry);
}

/* Raises the merge's error, if it stopped on one. */
static void
merge_check_status(ForstCursor *c)
{
	FstError	err;

	if (fst_iter_status(c->merge, &err) != FST_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: reading table \"%s\" failed: %s",
						RelationGetRelationName(c->rel), err.msg)));
}

/* Seeks again to the whole range, forward or backward. */
static void
seek_range_again(ForstCursor *c, bool backward)
{
	char	   *lo = pnstrdup(c->seek_lo.data, c->seek_lo.len);
	char	   *hi = pnstrdup(c->hi.data, c->hi.len);
	FstSlice	los = fst_slice(lo, c->seek_lo.len);
	FstSlice	his = fst_slice(hi, c->hi.len);

	if (backward)
		forst_cursor_seek_back(c, los, his);
	else
		forst_cursor_seek(c, los, his);
	pfree(lo);
	pfree(hi);
}

/*
 * Turns the cursor around (see cursor.h): from the row returned last, in
 * decided, or from the end of the range when there is none.
 */
static void
cursor_turn(ForstCursor *c, bool backward)
{
	if (c->exhausted || !c->have_decided)
	{
		seek_range_again(c, backward);
		return;
	}
	c->backward = backward;
	c->pending_next = false;
	if (backward)
		back_position(c);
	else
		merge_seek_past(c, fst_slice(c->decided.data, c->decided.len));
}

bool
forst_cursor_next(ForstCursor *c)
{
	c->valid = false;
	if (c->point)
		return point_next(c);
	if (c->backward)
		cursor_turn(c, false);
	if (c->waits_seen != forst_memory_waits)
	{
		c->waits_seen = forst_memory_waits;
		if (forst_table_view_stale(&c->view))
			cursor_refresh(c);
	}
	if (c->pending_next)
	{
		c->pending_next = false;
		fst_iter_next(c->merge);
	}
	for (bool advance = false;;)
	{
		FstSlice	k;
		FstSlice	v;
		FstEntry	e;
		int			ci;

		if (advance)
			fst_iter_next(c->merge);
		advance = true;
		if (!fst_iter_valid(c->merge))
			break;
		k = fst_iter_key(c->merge);
		v = fst_iter_value(c->merge);

		if (!fst_entry_decode(k, v, &e))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: malformed entry in table \"%s\"",
							RelationGetRelationName(c->rel))));
		if (c->hi.len > 0 &&
			fst_slice_cmp(e.user_part, fst_slice(c->hi.data, c->hi.len)) >= 0)
		{
			c->exhausted = true;
			return false;
		}
		if (c->have_decided &&
			fst_slice_cmp(e.user_part, fst_slice(c->decided.data, c->decided.len)) == 0)
		{
			/*
			 * An older version of a decided row.  A key updated again and
			 * again has many in a memtable: past a few, one seek beyond
			 * them is cheaper than stepping over each.
			 */
			if (++c->skipped >= FORST_CURSOR_SKIPS_BEFORE_SEEK)
			{
				c->skipped = 0;
				merge_seek_past(c, e.user_part);
				advance = false;
			}
			continue;
		}
		c->skipped = 0;

		ci = fst_merge_iter_current_child(c->merge);
		if (!merge_version_visible(c, &e, ci, &c->cur.loc, &c->cur.hint))
			continue;
		resetStringInfo(&c->decided);
		appendBinaryStringInfo(&c->decided, e.user_part.data, e.user_part.len);
		c->have_decided = true;
		if ((e.hdr.flags & FST_ENTRY_TOMBSTONE) && !c->with_tombstones)
			continue;
		if (c->expiry.active && forst_row_expired(&c->expiry, e.payload))
			continue;
		if (c->cur.loc.in_sst)
			merge_sst_position(c, ci, &c->cur.loc);
		c->cur.entry = e;
		c->valid = true;
		/* SST entries live in the child's block: advance on the next call */
		c->pending_next = true;
		return true;
	}
	merge_check_status(c);
	c->exhausted = true;
	return false;
}

/*
 * Backward, a row's versions come oldest first: each one the snapshot
 * sees replaces the one kept before it (copied, with where it lives: the
 * merge moves on into other blocks and files), and the row is decided
 * when the merge reaches the next user part down, which stays unread for
 * the next call.
 */
bool
forst_cursor_prev(ForstCursor *c)
{
	bool		collecting = false;
	bool		found = false;
	ForstLoc	loc;
	uint8		hint = 0;

	c->valid = false;
	if (c->point)
		return point_next(c);
	if (!c->backward)
		cursor_turn(c, true);
	if (c->waits_seen != forst_memory_waits)
	{
		c->waits_seen = forst_memory_waits;
		if (forst_table_view_stale(&c->view))
			cursor_refresh(c);
	}
	memset(&loc, 0, sizeof(loc));
	for (;;)
	{
		FstEntry	e;
		bool		at_end = !fst_iter_valid(c->merge);
		int			ci;
		ForstLoc	vloc;
		uint8		vhint;

		if (!at_end)
		{
			if (!fst_entry_decode(fst_iter_key(c->merge), fst_iter_value(c->merge), &e))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("forst: malformed entry in table \"%s\"",
								RelationGetRelationName(c->rel))));
			if (c->seek_lo.len > 0 &&
				fst_slice_cmp(e.user_part, fst_slice(c->seek_lo.data, c->seek_lo.len)) < 0)
				at_end = true;
		}
		if (collecting &&
			(at_end || fst_slice_cmp(e.user_part, fst_slice(c->decided.data, c->decided.len)) != 0))
		{
			/* every version of the row in decided was seen */
			collecting = false;
			if (found)
			{
				FstEntry	kept;

				if (!fst_entry_decode(fst_slice(c->back_key.data, c->back_key.len),
									  fst_slice(c->back_val.data, c->back_val.len),
									  &kept))
					elog(ERROR, "forst: a kept version does not decode");
				if (!(kept.hdr.flags & FST_ENTRY_TOMBSTONE) &&
					!(c->expiry.active && forst_row_expired(&c->expiry, kept.payload)))
				{
					c->cur.entry = kept;
					c->cur.loc = loc;
					c->cur.hint = hint;
					c->have_decided = true;
					c->valid = true;
					return true;
				}
			}
		}
		if (at_end)
			break;
		if (!collecting)
		{
			resetStringInfo(&c->decided);
			appendBinaryStringInfo(&c->decided, e.user_part.data, e.user_part.len);
			collecting = true;
			found = false;
		}
		ci = fst_merge_iter_current_child(c->merge);
		if (merge_version_visible(c, &e, ci, &vloc, &vhint))
		{
			FstSlice	k = fst_iter_key(c->merge);
			FstSlice	v = fst_iter_value(c->merge);

			if (vloc.in_sst)
				merge_sst_position(c, ci, &vloc);
			loc = vloc;
			hint = vhint;
			resetStringInfo(&c->back_key);
			appendBinaryStringInfo(&c->back_key, k.data, k.len);
			resetStringInfo(&c->back_val);
			appendBinaryStringInfo(&c->back_val, v.data, v.len);
			found = true;
		}
		fst_iter_prev(c->merge);
		CHECK_FOR_INTERRUPTS();
	}
	merge_check_status(c);
	c->exhausted = true;
	return false;
}

bool
forst_cursor_revalidate(ForstCursor *c)
{
	if (!c->valid || c->point || forst_memory_waits == c->waits_seen)
		return c->valid;
	c->waits_seen = forst_memory_waits;
	if (!forst_table_view_stale(&c->view))
		return true;
	elog(DEBUG1, "forst: a cursor on \"%s\" reads its current row again: its memtable was reused while this backend waited for memory",
		 RelationGetRelationName(c->rel));
	forst_cursor_rebuild(c);
	/* the current row's user part is decided: find its version again */
	c->have_decided = false;
	c->pending_next = false;
	if (c->backward)
	{
		/* at the row's last entry (its oldest version), to read it again */
		merge_seek_to(c, fst_slice(c->decided.data, c->decided.len), true,
					  FST_MAX_SEQ, true);
		return forst_cursor_prev(c);
	}
	merge_seek(c, fst_slice(c->decided.data, c->decided.len));
	return forst_cursor_next(c);
}

void
forst_cursor_note_current(ForstCursor *c)
{
	const FstEntry *e = &c->cur.entry;

	if (!c->valid || !c->cur.loc.in_sst)
		return;
	/* an entry's key and value are contiguous where the cursor decoded them */
	forst_note_sst_version(c->rel, &c->cur.loc,
						   fst_slice(e->user_part.data, e->user_part.len + FST_SEQ_BYTES),
						   fst_slice(e->payload.data - FST_ENTRY_HEADER_SIZE,
									 e->payload.len + FST_ENTRY_HEADER_SIZE));
}
