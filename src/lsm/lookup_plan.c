/*-------------------------------------------------------------------------
 *
 * lookup_plan.c
 *	  The reads of a batch of point lookups, named ahead (see lookup_plan.h).
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include "lookup_plan.h"
#include "bloom.h"

#define PLAN_STACK_FILES 32

/* Whether any memtable of lk holds a version of user_part. */
static FstCode
held_by_memtable(FstLookup *lk, FstSlice user_part, bool *held, FstError *err)
{
	*held = false;
	for (int i = 0; i < lk->nmemtables && !*held; i++)
	{
		FstGetResult res;
		FstEntryHeader hdr;
		FstSlice	value;
		uint32		ref;
		FstCode		rc;

		rc = fst_memtable_get(lk->memtables[i], user_part, FST_MAX_SEQ, NULL,
							  NULL, &res, &hdr, &value, &ref, err);
		if (rc != FST_OK)
			return rc;
		*held = res != FST_GET_NONE;
	}
	return FST_OK;
}

/* Room for the candidate files of one key: the stack's, or malloc'ed. */
static const FstFileMeta **
candidates_buffer(const FstManifest *m, const FstFileMeta **stack_files)
{
	int			total = fst_manifest_total_files(m);

	if (total <= PLAN_STACK_FILES)
		return stack_files;
	return fst_malloc(sizeof(FstFileMeta *) * total);
}

static int
cmp_file_ptr(const void *a, const void *b)
{
	uintptr_t	x = (uintptr_t) *(const FstFileMeta *const *) a;
	uintptr_t	y = (uintptr_t) *(const FstFileMeta *const *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

/* Sorts files by address and drops repeats; returns how many are left. */
static int
dedup_files(const FstFileMeta **files, int n)
{
	int			u = 0;

	qsort(files, n, sizeof(FstFileMeta *), cmp_file_ptr);
	for (int i = 0; i < n; i++)
		if (u == 0 || files[u - 1] != files[i])
			files[u++] = files[i];
	return u;
}

static int
cmp_file_newest(const void *a, const void *b)
{
	const FstFileMeta *x = *(const FstFileMeta *const *) a;
	const FstFileMeta *y = *(const FstFileMeta *const *) b;

	if (x->seq_max != y->seq_max)
		return x->seq_max > y->seq_max ? -1 : 1;
	return x->file_id < y->file_id ? -1 : x->file_id > y->file_id ? 1 : 0;
}

FstCode
fst_lookup_plan_files(FstLookup *lk, const FstSlice *keys, int nkeys,
					  FstLookupPlan *plan, FstError *err)
{
	const FstManifest *m = lk->manifest;
	const FstFileMeta *stack_files[PLAN_STACK_FILES];
	const FstFileMeta **cand;
	int			total = m ? fst_manifest_total_files(m) : 0;
	int			cap = 0;
	FstCode		rc = FST_OK;

	memset(plan, 0, sizeof(*plan));
	plan->nkeys = nkeys;
	if (nkeys <= 0)
		return FST_OK;
	plan->held = fst_calloc(nkeys, sizeof(bool));
	if (plan->held == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	cand = total > 0 ? candidates_buffer(m, stack_files) : stack_files;
	if (cand == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");

	for (int k = 0; k < nkeys; k++)
	{
		int			n;

		rc = held_by_memtable(lk, keys[k], &plan->held[k], err);
		if (rc != FST_OK)
			break;
		if (plan->held[k])
		{
			plan->keys_held++;
			continue;
		}
		if (total == 0)
			continue;
		n = fst_lookup_candidates(m, keys[k], cand);
		if (plan->nfiles + n > cap)
		{
			/* at most every file once each after deduplication below */
			int			want = Max(cap * 2, plan->nfiles + n + 16);
			const FstFileMeta **grown;

			grown = fst_realloc(plan->files, sizeof(FstFileMeta *) * want);
			if (grown == NULL)
			{
				rc = fst_error(err, FST_NO_MEMORY, "out of memory");
				break;
			}
			plan->files = grown;
			cap = want;
		}
		memcpy(plan->files + plan->nfiles, cand, sizeof(FstFileMeta *) * n);
		plan->nfiles += n;

		/* keep the list short: deduplicate whenever it outgrows the files */
		if (plan->nfiles > 2 * total)
			plan->nfiles = dedup_files(plan->files, plan->nfiles);
	}
	if (cand != stack_files)
		fst_free(cand);
	if (rc != FST_OK)
		return rc;

	if (plan->nfiles > 0)
	{
		plan->nfiles = dedup_files(plan->files, plan->nfiles);
		qsort(plan->files, plan->nfiles, sizeof(FstFileMeta *), cmp_file_newest);
	}
	return FST_OK;
}

static int
cmp_block(const void *a, const void *b)
{
	const FstLookupBlock *x = a;
	const FstLookupBlock *y = b;

	if (x->file->file_id != y->file->file_id)
		return x->file->file_id < y->file->file_id ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len ? 1 : 0;
}

/* The first block key's lookup reads, if a file admits it: *found. */
static FstCode
first_block(FstLookup *lk, FstLookupPlan *plan, FstSlice key,
			const FstFileMeta **cand, FstLookupBlock *out, bool *found,
			FstError *err)
{
	int			n = fst_lookup_candidates(lk->manifest, key, cand);
	uint64		hash = n > 0 ? fst_bloom_hash(key) : 0;

	*found = false;
	for (int i = 0; i < n; i++)
	{
		FstSstReader *r = NULL;
		bool		may;
		FstCode		rc;

		rc = lk->reader(lk->reader_arg, cand[i], &r, err);
		if (rc != FST_OK)
			return rc;
		if (r == NULL)
			continue;
		rc = fst_sst_may_contain_hash(r, hash, &may, err);
		if (rc != FST_OK)
			return rc;
		plan->bloom_checks++;
		if (!may)
		{
			plan->bloom_negatives++;
			continue;
		}
		if (!fst_sst_block_for(r, key, &out->offset, &out->len))
			continue;
		out->file = cand[i];
		*found = true;
		return FST_OK;
	}
	return FST_OK;
}

FstCode
fst_lookup_plan_blocks(FstLookup *lk, const FstSlice *keys,
					   FstLookupPlan *plan, FstError *err)
{
	const FstFileMeta *stack_files[PLAN_STACK_FILES];
	const FstFileMeta **cand;
	int			cap = 0;
	FstCode		rc = FST_OK;

	plan->nblocks = 0;
	if (lk->manifest == NULL || fst_manifest_total_files(lk->manifest) == 0 ||
		plan->nkeys == 0)
	{
		for (int k = 0; k < plan->nkeys; k++)
			if (!plan->held[k])
				plan->keys_absent++;
		return FST_OK;
	}
	cand = candidates_buffer(lk->manifest, stack_files);
	if (cand == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");

	for (int k = 0; k < plan->nkeys; k++)
	{
		FstLookupBlock b;
		bool		found;

		if (plan->held[k])
			continue;
		rc = first_block(lk, plan, keys[k], cand, &b, &found, err);
		if (rc != FST_OK)
			break;
		if (!found)
		{
			plan->keys_absent++;
			continue;
		}
		if (plan->nblocks == cap)
		{
			int			want = Max(16, cap * 2);
			FstLookupBlock *grown;

			grown = fst_realloc(plan->blocks, sizeof(FstLookupBlock) * want);
			if (grown == NULL)
			{
				rc = fst_error(err, FST_NO_MEMORY, "out of memory");
				break;
			}
			plan->blocks = grown;
			cap = want;
		}
		plan->blocks[plan->nblocks++] = b;
	}
	if (cand != stack_files)
		fst_free(cand);
	if (rc != FST_OK)
		return rc;

	if (plan->nblocks > 1)
	{
		int			u = 0;

		qsort(plan->blocks, plan->nblocks, sizeof(FstLookupBlock), cmp_block);
		for (int i = 0; i < plan->nblocks; i++)
			if (u == 0 || cmp_block(&plan->blocks[u - 1], &plan->blocks[i]) != 0)
				plan->blocks[u++] = plan->blocks[i];
		plan->nblocks = u;
	}
	return FST_OK;
}

void
fst_lookup_plan_free(FstLookupPlan *plan)
{
	fst_free(plan->held);
	fst_free(plan->files);
	fst_free(plan->blocks);
	memset(plan, 0, sizeof(*plan));
}
