/*-------------------------------------------------------------------------
 *
 * compaction.c
 *	  The compaction merge (see compaction.h).
 *
 * One pass over the input.  The user part of the current row is copied
 * once per row into a reused buffer (input keys are borrowed and die at
 * the next step); nothing else is allocated per entry.
 *
 *-------------------------------------------------------------------------
 */
#include "compaction.h"
#include "merge_iter.h"

typedef struct CompactState
{
	const FstCompactionParams *p;
	FstCompactionResult *res;
	FstSstWriter *w;			/* current output, NULL when none is open */
	uint64		file_id;
	FstBuf		row;			/* user part of the current row */
	FstBuf		frozen;			/* value of a version being frozen */
	bool		have_row;
	uint64		last_seq;		/* sequence of the row's previous entry */
	bool		below_seen;		/* row had a version at/below the horizon */
	bool		newest;			/* next entry is the row's first */
} CompactState;

void
fst_drop_policy_init(FstDropPolicy *p, uint64 horizon_seq, bool bottom_level)
{
	memset(p, 0, sizeof(*p));
	p->horizon_seq = horizon_seq;
	p->bottom_level = bottom_level;
}

void
fst_compaction_result_init(FstCompactionResult *r)
{
	memset(r, 0, sizeof(*r));
}

void
fst_compaction_result_free(FstCompactionResult *r)
{
	int			i;

	for (i = 0; i < r->nfiles; i++)
		fst_filemeta_clear(&r->files[i]);
	fst_free(r->files);
	fst_compaction_result_init(r);
}

static FstCode
open_output(CompactState *s, FstError *err)
{
	const FstOutputFactory *f = &s->p->output;
	FstWriteSink *sink = NULL;
	FstCode		rc;

	rc = f->open_output(f->arg, &s->file_id, &sink, err);
	if (rc != FST_OK)
		return rc;
	rc = fst_sst_writer_create(&s->p->sst, sink, &s->w, err);
	if (rc != FST_OK)
	{
		s->w = NULL;
		if (f->abandon_output)
			f->abandon_output(f->arg, s->file_id);
	}
	return rc;
}

static void
abandon_output(CompactState *s)
{
	const FstOutputFactory *f = &s->p->output;

	if (s->w == NULL)
		return;
	fst_sst_writer_destroy(s->w);
	s->w = NULL;
	if (f->abandon_output)
		f->abandon_output(f->arg, s->file_id);
}

static FstCode
finish_output(CompactState *s, FstError *err)
{
	const FstOutputFactory *f = &s->p->output;
	FstCompactionResult *res = s->res;
	FstSstProps props;
	FstFileMeta *m;
	FstCode		rc;

	fst_sst_props_init(&props);
	rc = fst_sst_writer_finish(s->w, &props, err);
	if (rc == FST_OK)
		rc = f->finish_output(f->arg, s->file_id, &props, err);
	if (rc != FST_OK)
	{
		fst_sst_props_free(&props);
		abandon_output(s);
		return rc;
	}
	fst_sst_writer_destroy(s->w);
	s->w = NULL;

	/* the file is durable now: list it even if the rest fails */
	if (res->nfiles == res->capacity)
	{
		int			cap = res->capacity ? res->capacity * 2 : 8;
		FstFileMeta *files = fst_realloc(res->files, sizeof(FstFileMeta) * cap);

		if (files == NULL)
		{
			fst_sst_props_free(&props);
			return fst_error(err, FST_NO_MEMORY, "out of memory");
		}
		res->files = files;
		res->capacity = cap;
	}
	m = &res->files[res->nfiles];
	memset(m, 0, sizeof(*m));
	if (!fst_sst_props_to_filemeta(&props, m))
	{
		fst_sst_props_free(&props);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	m->file_id = s->file_id;
	m->level = s->p->output_level;
	res->nfiles++;
	res->stats.file_bytes_out += props.file_size;
	fst_sst_props_free(&props);
	return FST_OK;
}

static FstCode
emit(CompactState *s, FstSlice key, FstSlice value, const FstEntry *e,
	 FstError *err)
{
	const FstDropPolicy *pol = &s->p->policy;
	FstCode		rc;
	int64		ttl;

	if (s->w == NULL)
	{
		rc = open_output(s, err);
		if (rc != FST_OK)
			return rc;
	}
	rc = fst_sst_writer_add(s->w, key, value, err);
	if (rc != FST_OK)
		return rc;
	if (pol->ttl_of != NULL &&
		!(e->hdr.flags & FST_ENTRY_TOMBSTONE) &&
		pol->ttl_of(pol->ttl_arg, e->payload, &ttl))
		fst_sst_writer_note_ttl(s->w, ttl);
	s->res->stats.entries_out++;
	if (e->key_group == FST_KG_INDEX)
		s->res->stats.index_entries_out++;
	s->res->stats.bytes_out += key.len + value.len;
	return FST_OK;
}

/*
 * Judges one entry of the current row and writes what survives.
 */
static FstCode
process_entry(CompactState *s, FstSlice key, FstSlice value,
			  const FstEntry *e, FstError *err)
{
	const FstDropPolicy *pol = &s->p->policy;
	FstCompactionStats *st = &s->res->stats;
	bool		below = e->hdr.seq <= pol->horizon_seq;
	bool		newest = s->newest;
	FstDropDecision d = FST_DROP_DEFAULT;
	bool		keep = false;
	bool		to_tombstone = false;
	bool		freeze = false;
	int64		ttl;

	s->newest = false;
	if (pol->kg_filter && e->key_group != FST_KG_INDEX &&
		(e->key_group < pol->kg_lo || e->key_group > pol->kg_hi))
	{
		st->dropped_key_group++;
		return FST_OK;
	}
	if (pol->custom != NULL)
		d = pol->custom(pol->custom_arg, e, newest);

	if (d == FST_DROP_KEEP)
		keep = true;
	else if (d == FST_DROP_FREEZE)
		keep = freeze = true;
	else if (d == FST_DROP_DROP)
		st->dropped_custom++;
	else if (d == FST_DROP_TOMBSTONE)
	{
		st->expired_to_tombstone++;
		keep = to_tombstone = true;
	}
	else if (!below)
		keep = true;
	else if (s->below_seen)
		st->dropped_shadowed++;
	else if (e->hdr.flags & FST_ENTRY_TOMBSTONE)
	{
		if (pol->bottom_level)
			st->dropped_tombstones++;
		else
			keep = true;
	}
	else if (pol->ttl_enabled && pol->ttl_of != NULL &&
			 pol->ttl_of(pol->ttl_arg, e->payload, &ttl) &&
			 ttl < pol->ttl_cutoff)
	{
		if (pol->bottom_level)
			st->dropped_expired++;
		else
		{
			st->expired_to_tombstone++;
			keep = to_tombstone = true;
		}
	}
	else
		keep = true;
	if (below)
		s->below_seen = true;
	if (!keep)
		return FST_OK;

	if (to_tombstone)
	{
		char		tv[FST_ENTRY_HEADER_SIZE];
		FstEntry	te = *e;

		te.hdr.flags = (uint8) ((e->hdr.flags & ~FST_ENTRY_SPECULATIVE) |
								FST_ENTRY_TOMBSTONE);
		te.payload = fst_slice(tv + FST_ENTRY_HEADER_SIZE, 0);
		fst_entry_header_encode(tv, te.hdr.flags, e->hdr.xid, e->hdr.cid);
		return emit(s, key, fst_slice(tv, sizeof(tv)), &te, err);
	}
	if (freeze)
	{
		FstEntry	fe = *e;

		fe.hdr.flags |= FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED;
		fe.hdr.xid = fe.hdr.cid = 0;
		fst_buf_reset(&s->frozen);
		fst_buf_append(&s->frozen, value.data, value.len);
		if (s->frozen.oom)
			return fst_error(err, FST_NO_MEMORY, "out of memory freezing a version");
		fst_entry_header_encode(s->frozen.data, fe.hdr.flags, 0, 0);
		st->frozen++;
		return emit(s, key, fst_slice(s->frozen.data, value.len), &fe, err);
	}
	return emit(s, key, value, e, err);
}

static FstCode
compaction_loop(CompactState *s, FstIter *input, FstError *err)
{
	const FstCompactionParams *p = s->p;
	FstCompactionStats *st = &s->res->stats;
	int			interval = p->check_interval > 0 ? p->check_interval : 1024;
	int			countdown = interval;
	FstCode		rc;

	for (fst_iter_seek_first(input); fst_iter_valid(input);
		 fst_iter_next(input))
	{
		FstSlice	key = fst_iter_key(input);
		FstSlice	value = fst_iter_value(input);
		FstEntry	e;

		if (p->should_stop != NULL && --countdown <= 0)
		{
			countdown = interval;
			if (p->should_stop(p->stop_arg))
				return fst_error(err, FST_INTERRUPTED, "compaction interrupted");
		}
		st->entries_in++;
		st->bytes_in += key.len + value.len;
		if (!fst_entry_decode(key, value, &e))
			return fst_error(err, FST_CORRUPT,
							 "compaction input entry with a malformed key or header");

		if (!s->have_row || e.user_part.len != s->row.len ||
			memcmp(e.user_part.data, s->row.data, s->row.len) != 0)
		{
			/* a new row */
			if (s->have_row &&
				fst_slice_cmp(e.user_part, fst_slice(s->row.data, s->row.len)) < 0)
				return fst_error(err, FST_INVALID_ARGUMENT,
								 "compaction input out of order");
			fst_buf_reset(&s->row);
			fst_buf_append(&s->row, e.user_part.data, e.user_part.len);
			if (s->row.oom)
				return fst_error(err, FST_NO_MEMORY, "out of memory");
			s->have_row = true;
			s->below_seen = false;
			s->newest = true;
			/* between rows: the only place an output may end */
			if (s->w != NULL &&
				(fst_sst_writer_estimated_size(s->w) >= p->target_file_size ||
				 (p->max_file_blocks > 0 &&
				  fst_sst_writer_num_data_blocks(s->w) >= p->max_file_blocks)))
			{
				rc = finish_output(s, err);
				if (rc != FST_OK)
					return rc;
			}
		}
		else if (e.hdr.seq >= s->last_seq)
		{
			if (e.hdr.seq > s->last_seq)
				return fst_error(err, FST_INVALID_ARGUMENT,
								 "compaction input out of order");
			/* the same internal key again, from an older source */
			st->dropped_shadowed++;
			continue;
		}
		s->last_seq = e.hdr.seq;

		rc = process_entry(s, key, value, &e, err);
		if (rc != FST_OK)
			return rc;
	}
	rc = fst_iter_status(input, err);
	if (rc != FST_OK)
		return rc;
	if (s->w != NULL)
		return finish_output(s, err);
	return FST_OK;
}

FstCode
fst_compaction_run(FstIter *input, const FstCompactionParams *params,
				   FstCompactionResult *result, FstError *err)
{
	CompactState s;
	FstCode		rc;

	if (params->output.open_output == NULL ||
		params->output.finish_output == NULL)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "compaction needs an output factory");
	memset(&s, 0, sizeof(s));
	s.p = params;
	s.res = result;
	fst_buf_init(&s.row);
	fst_buf_init(&s.frozen);
	rc = compaction_loop(&s, input, err);
	abandon_output(&s);
	fst_buf_free(&s.row);
	fst_buf_free(&s.frozen);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* the compaction job */

typedef struct MvccState
{
	FstCompactionJob *job;
	bool		bottom;
	bool		settled;		/* the key's all-visible version was seen */
} MvccState;

static FstDropDecision
mvcc_decide(MvccState *ms, const FstEntry *e, bool newest_of_key)
{
	const FstMvccRules *mv = &ms->job->mvcc;
	bool		all_visible;

	if (newest_of_key)
		ms->settled = false;
	if (ms->settled)
		return FST_DROP_DROP;	/* shadowed for every snapshot */
	if (e->hdr.flags & FST_ENTRY_FROZEN)
		all_visible = true;
	else if (e->hdr.flags & FST_ENTRY_COMMITTED)
		all_visible = mv->before_horizon(mv->arg, e->hdr.xid);
	else
	{
		switch (mv->xid_state(mv->arg, e->hdr.xid))
		{
			case FST_XID_COMMITTED:
				all_visible = mv->before_horizon(mv->arg, e->hdr.xid);
				break;
			case FST_XID_RUNNING:
				return FST_DROP_KEEP;
			default:
				return FST_DROP_DROP;	/* aborted */
		}
	}
	if (!all_visible)
		return FST_DROP_KEEP;
	ms->settled = true;
	if (e->hdr.flags & FST_ENTRY_TOMBSTONE)
		return ms->bottom ? FST_DROP_DROP : FST_DROP_FREEZE;
	if (mv->expired && mv->expired(mv->arg, e->payload))
	{
		ms->job->expired_rows++;
		ms->job->expired_bytes += e->user_part.len + FST_SEQ_BYTES +
			FST_ENTRY_HEADER_SIZE + e->payload.len;
		return ms->bottom ? FST_DROP_DROP : FST_DROP_TOMBSTONE;
	}
	return FST_DROP_FREEZE;
}

/*
 * The drop policy's hook: mvcc_decide's answer, noting the xids of the
 * entries it keeps without the committed flag (the outputs' pending xid
 * range, which checkpoints resolve).
 */
static FstDropDecision
mvcc_drop(void *arg, const FstEntry *e, bool newest_of_key)
{
	MvccState  *ms = arg;
	FstDropDecision d = mvcc_decide(ms, e, newest_of_key);

	if (d == FST_DROP_KEEP &&
		!(e->hdr.flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)))
		fst_xid_range_note(&ms->job->pending_xid_min, &ms->job->pending_xid_max,
						   e->hdr.xid);
	return d;
}

/* The TTL column of an output row; a row without one never expires. */
static bool
job_ttl_of(void *arg, FstSlice payload, int64 *ttl)
{
	const FstMvccRules *mv = arg;

	if (!mv->ttl_of(mv->arg, payload, ttl))
		*ttl = PG_INT64_MAX;
	return true;
}

void
fst_compaction_job_init(FstCompactionJob *job, const FstCompactionPick *pick)
{
	memset(job, 0, sizeof(*job));
	job->pick = pick;
	fst_sst_options_default(&job->params.sst);
	fst_compaction_result_init(&job->result);
}

void
fst_compaction_job_free(FstCompactionJob *job)
{
	fst_compaction_result_free(&job->result);
}

static inline const FstManifestFile *
job_mfile(const FstFileMeta *meta)
{
	StaticAssertStmt(offsetof(FstManifestFile, meta) == 0,
					 "FstFileMeta must be the first member of FstManifestFile");
	return (const FstManifestFile *) meta;
}

/* Merges the inputs into outputs (not a trivial move). */
static FstCode
job_merge(FstCompactionJob *job, FstError *err)
{
	const FstCompactionPick *pick = job->pick;
	int			total = pick->ninputs[0] + pick->ninputs[1];
	FstIter   **children;
	FstIter    *merged;
	MvccState	ms;
	int			n = 0;
	FstCode		rc;

	/* every input's reader first: nothing is held when one fails */
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < pick->ninputs[s]; i++)
		{
			FstSstReader *r;

			rc = job->reader(job->reader_arg, pick->inputs[s][i], &r, err);
			if (rc != FST_OK)
				return rc;
		}
	children = fst_malloc(sizeof(FstIter *) * Max(total, 1));
	if (children == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < pick->ninputs[s]; i++)
		{
			FstSstReader *r = NULL;

			rc = job->reader(job->reader_arg, pick->inputs[s][i], &r, err);
			children[n++] = rc == FST_OK && r ? fst_sst_iter_create(r) : NULL;
			if (rc != FST_OK)
				break;
		}
	merged = fst_merge_iter_create(children, n);	/* owns the children */
	fst_free(children);
	if (rc != FST_OK)
	{
		fst_iter_destroy(merged);
		return rc;
	}
	if (merged == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");

	ms.job = job;
	ms.bottom = pick->bottom_level;
	ms.settled = false;
	fst_drop_policy_init(&job->params.policy, 0, pick->bottom_level);
	job->params.policy.custom = mvcc_drop;
	job->params.policy.custom_arg = &ms;
	if (job->mvcc.ttl_of)
	{
		job->params.policy.ttl_of = job_ttl_of;
		job->params.policy.ttl_arg = &job->mvcc;
	}
	job->params.output_level = pick->output_level;
	rc = fst_compaction_run(merged, &job->params, &job->result, err);
	fst_iter_destroy(merged);
	return rc;
}

FstCode
fst_compaction_job_run(FstCompactionJob *job, FstManifestEdit *edit,
					   FstError *err)
{
	const FstCompactionPick *pick = job->pick;
	FstCode		rc;

	job->expired_rows = job->expired_bytes = 0;
	job->pending_xid_min = job->pending_xid_max = 0;
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < pick->ninputs[s]; i++)
		{
			rc = fst_manifest_edit_remove(edit, s == 0 ? pick->level : pick->output_level,
										  pick->inputs[s][i]->file_id,
										  job_mfile(pick->inputs[s][i])->owner, err);
			if (rc != FST_OK)
				return rc;
		}

	if (pick->trivial_move)
	{
		FstFileMeta moved;

		if (!fst_filemeta_copy(&moved, pick->inputs[0][0]))
			return fst_error(err, FST_NO_MEMORY, "out of memory");
		moved.level = pick->output_level;
		/* a borrowed file stays borrowed (and keeps its visibility rule) */
		rc = fst_manifest_edit_add(edit, pick->output_level, &moved,
								   job_mfile(pick->inputs[0][0])->owner, err);
		fst_filemeta_clear(&moved);
		return rc;
	}

	rc = job_merge(job, err);
	if (rc != FST_OK)
		return rc;
	for (int i = 0; i < job->result.nfiles; i++)
	{
		/* the range over all outputs: wider than some need, never narrower */
		job->result.files[i].pending_xid_min = job->pending_xid_min;
		job->result.files[i].pending_xid_max = job->pending_xid_max;
		rc = fst_manifest_edit_add(edit, pick->output_level, &job->result.files[i],
								   NULL, err);
		if (rc != FST_OK)
			return rc;
	}
	return FST_OK;
}

FstCode
fst_compaction_expired_files(const FstManifest *m, int64 cutoff,
							 bool ttl_is_key, FstManifestEdit *edit,
							 int *nfiles, uint64 *bytes, uint64 *rows,
							 FstError *err)
{
	int			deepest = -1;

	*nfiles = 0;
	*bytes = *rows = 0;
	for (int l = 0; l < FST_NUM_LEVELS; l++)
		if (m->levels[l].nfiles > 0)
			deepest = l;
	for (int l = 0; l < FST_NUM_LEVELS; l++)
	{
		if (!ttl_is_key && (l == 0 || l != deepest))
			continue;
		for (int i = 0; i < m->levels[l].nfiles; i++)
		{
			const FstManifestFile *mf = &m->levels[l].files[i];
			const FstFileMeta *f = &mf->meta;
			FstCode		rc;

			if (!f->has_ttl || f->ttl_max >= cutoff || f->num_tombstones > 0)
				continue;
			rc = fst_manifest_edit_remove(edit, l, f->file_id, mf->owner, err);
			if (rc != FST_OK)
				return rc;
			*bytes += f->size;
			*rows += f->num_entries;
			(*nfiles)++;
		}
	}
	return FST_OK;
}
