/*-------------------------------------------------------------------------
 *
 * prefetch.c
 *	  Parallel fetch-ahead into the disk cache (see read/prefetch.h).
 *
 * A range scan over all key groups opens one cursor per key group, and each
 * seeks in every file that overlaps its range: on a fresh backend that is a
 * file open (its tail) per file and a block per (key group, file), each a
 * ranged GET made one after another when the store is S3.  Here the scan
 * first names all of them, and fst_diskcache_prefetch fetches the missing
 * ones in parallel; the cursors' reads then hit the disk cache.
 *
 * A batch of point lookups (an INSERT ... ON CONFLICT of many rows,
 * write/batch_lookup.c) works the same way, in the engine's two phases
 * (lsm/lookup_plan.h): the files its keys may be in, whose metadata is
 * fetched first, then the block each key's lookup will read first.
 *
 * The metadata of a file is its tail: footer, index, properties and bloom
 * filter, about 1% of a file of 200-byte rows (a filter of 10 bits and an
 * index entry per 8 kB block).  Its size is not known before the footer is
 * read, so the tail fetched is max(64 kB, size / 64): it holds the whole
 * metadata of every file forst writes; whatever it misses is read when the
 * file is opened.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/rel.h"

#include "am/forst.h"
#include "am/objects/disk_cache.h"
#include "am/read/point.h"
#include "am/read/prefetch.h"
#include "am/shmem/shmem.h"
#include "am/objects/store.h"
#include "am/read/sst_readers.h"
#include "am/read/stage.h"
#include "lsm/lookup_plan.h"

#define TAIL_MIN	(64 * 1024)

static uint64 cache_budget(void);

bool
forst_prefetch_possible(void)
{
	return forst_disk_cache() != NULL &&
		fst_objstore_parallel_reads(forst_objstore());
}

void
forst_prefetch_ranges(const RelFileNode *rnode, const ForstPrefetchRange *ranges,
					  int n)
{
	FstDcPrefetch *items;
	char	   *keys;
	FstError	err;
	FstCode		rc;
	int			i;

	if (n <= 0 || !forst_prefetch_possible())
		return;
	items = palloc(sizeof(FstDcPrefetch) * n);
	keys = palloc((Size) FORST_KEY_LEN * n);
	for (i = 0; i < n; i++)
	{
		char	   *k = keys + (Size) FORST_KEY_LEN * i;

		forst_file_object_key(rnode, ranges[i].file, k, FORST_KEY_LEN);
		items[i].key = k;
		items[i].object_size = ranges[i].file->meta.size;
		items[i].offset = ranges[i].offset;
		items[i].len = ranges[i].len;
	}
	rc = fst_diskcache_prefetch(forst_disk_cache(), forst_objstore(), items, n, &err);
	pfree(items);
	pfree(keys);
	if (rc == FST_INTERRUPTED)
		CHECK_FOR_INTERRUPTS();
	if (rc != FST_OK && rc != FST_INTERRUPTED)
		forst_report(rc, &err, "prefetching SST blocks");
}

void
forst_prefetch_metadata(const RelFileNode *rnode,
						const FstManifestFile *const *files, int n)
{
	ForstPrefetchRange *r;
	int			i,
				m = 0;

	if (n <= 0 || !forst_prefetch_possible())
		return;
	r = palloc(sizeof(ForstPrefetchRange) * n);
	for (i = 0; i < n; i++)
	{
		uint64		size = files[i]->meta.size;
		uint64		tail = Min(size, Max((uint64) TAIL_MIN, size / 64));

		if (forst_sst_reader_is_open(rnode, files[i]->meta.file_id))
			continue;
		r[m].file = files[i];
		r[m].offset = size - tail;
		r[m].len = tail;
		m++;
	}
	forst_prefetch_ranges(rnode, r, m);
	pfree(r);
}

/* kg|part into buf (FST_KG_BYTES + part.len bytes) */
static FstSlice
with_kg(char *buf, int kg, FstSlice part)
{
	fst_put_be16(buf, (uint16) kg);
	memcpy(buf + FST_KG_BYTES, part.data, part.len);
	return fst_slice(buf, FST_KG_BYTES + part.len);
}

/* Adds [off, off + len) of file to *blocks (grown as needed). */
static void
add_range(ForstPrefetchRange **blocks, int *n, int *cap,
		  const FstManifestFile *file, uint64 off, uint64 len)
{
	if (*n == *cap)
	{
		*cap *= 2;
		*blocks = repalloc(*blocks, sizeof(ForstPrefetchRange) * *cap);
	}
	(*blocks)[*n].file = file;
	(*blocks)[*n].offset = off;
	(*blocks)[*n].len = len;
	(*n)++;
}

uint64
forst_prefetch_scan(Relation rel, int kg_first, int kg_last,
					FstSlice lo, FstSlice hi)
{
	ForstTableView view;
	const FstManifestFile **files;
	ForstPrefetchRange *starts;
	ForstPrefetchRange *whole;
	char	   *lobuf;
	char	   *hibuf;
	uint64		whole_bytes = 0;
	uint64		generation = 0;
	int			nfiles = 0,
				nstarts = 0,
				nwhole = 0,
				cap_starts = 64,
				cap_whole = 64,
				level,
				i,
				kg;

	if (!forst_scan_prefetch || !forst_prefetch_possible())
		return 0;
	forst_table_view(forst_table_shared(&rel->rd_node, true), &rel->rd_node, &view);
	if (view.manifest == NULL)
		return 0;
	lobuf = palloc(FST_KG_BYTES + lo.len);
	hibuf = palloc(FST_KG_BYTES + Max(hi.len, 1));
	files = palloc(sizeof(FstManifestFile *) * Max(fst_manifest_total_files(view.manifest), 1));
	for (level = 0; level < FST_NUM_LEVELS; level++)
		for (i = 0; i < view.manifest->levels[level].nfiles; i++)
		{
			const FstManifestFile *mf = &view.manifest->levels[level].files[i];

			if (mf->meta.kg_max >= kg_first && mf->meta.kg_min <= kg_last)
				files[nfiles++] = mf;
		}
	forst_prefetch_metadata(&rel->rd_node, files, nfiles);

	starts = palloc(sizeof(ForstPrefetchRange) * cap_starts);
	whole = palloc(sizeof(ForstPrefetchRange) * cap_whole);
	for (i = 0; i < nfiles; i++)
	{
		const FstFileMeta *f = &files[i]->meta;
		FstSlice	fsmall = fst_ikey_user_part(fst_filemeta_smallest(f));
		FstSlice	flarge = fst_ikey_user_part(fst_filemeta_largest(f));
		FstSstReader *r = NULL;
		uint64		last_off = 0,
					last_len = 0;
		bool		have_last = false;

		for (kg = Max(kg_first, f->kg_min); kg <= Min(kg_last, f->kg_max); kg++)
		{
			FstSlice	klo = with_kg(lobuf, kg, lo);
			FstSlice	khi;
			uint64		off,
						len,
						end_off,
						end_len;

			if (hi.len > 0)
				khi = with_kg(hibuf, kg, hi);
			else
			{
				fst_put_be16(hibuf, (uint16) (kg + 1));
				khi = fst_slice(hibuf, kg + 1 < FST_MAX_KEY_GROUPS ? FST_KG_BYTES : 0);
			}
			/* the file overlaps [klo, khi)? */
			if (fst_slice_cmp(flarge, klo) < 0 ||
				(khi.len > 0 && fst_slice_cmp(fsmall, khi) >= 0))
				continue;
			/* pinned for this loop only: see forst_sst_reader_pin */
			if (r == NULL)
				r = forst_sst_reader_pin(&rel->rd_node, f);
			if (!fst_sst_block_for(r, fst_slice_cmp(klo, fsmall) < 0 ? fsmall : klo,
								   &off, &len))
				continue;
			add_range(&starts, &nstarts, &cap_starts, files[i], off, len);

			/*
			 * The scan reads on to the block a seek to khi lands in, or to
			 * the file's last block.
			 */
			if (khi.len > 0 && fst_sst_block_for(r, khi, &end_off, &end_len))
				;
			else if (have_last)
			{
				end_off = last_off;
				end_len = last_len;
			}
			else if (fst_sst_block_for(r, flarge, &end_off, &end_len))
			{
				last_off = end_off;
				last_len = end_len;
				have_last = true;
			}
			else
				continue;
			if (end_off + end_len <= off)
				continue;
			add_range(&whole, &nwhole, &cap_whole, files[i], off, end_off + end_len - off);
			whole_bytes += end_off + end_len - off;
		}
		if (r != NULL)
			forst_sst_reader_release(&rel->rd_node, f->file_id);
	}

	/*
	 * All of it ahead when it fits: into the disk cache if its share
	 * allows, else into the stage; else only where each range starts.
	 */
	if (whole_bytes <= cache_budget())
		forst_prefetch_ranges(&rel->rd_node, whole, nwhole);
	else if (whole_bytes <= (uint64) forst_batch_lookup_memory_kb * 1024)
	{
		ForstStageFetch sf;

		forst_stage_fetch(&rel->rd_node, whole, nwhole, &sf);
		generation = sf.generation;
	}
	else
		forst_prefetch_ranges(&rel->rd_node, starts, nstarts);
	pfree(starts);
	pfree(whole);
	pfree(files);
	pfree(lobuf);
	pfree(hibuf);
	return generation;
}

/* An eighth of the disk cache (see prefetch.h). */
static uint64
cache_budget(void)
{
	return forst_cache_capacity() / 8;
}

uint64
forst_prefetch_budget(void)
{
	if (!forst_prefetch_possible())
		return 0;
	return Max(cache_budget(), (uint64) forst_batch_lookup_memory_kb * 1024);
}

void
forst_prefetch_keys(Relation rel, const FstSlice *keys, int n,
					ForstPrefetchKeysStats *st)
{
	ForstTableView view;
	FstMemtable *mts[lengthof(view.slabs)];
	FstLookup	lk;
	FstLookupPlan plan;
	FstError	err;
	FstCode		rc;

	if (n <= 0 || !forst_prefetch_possible())
		return;
	forst_table_view(forst_table_shared(&rel->rd_node, true), &rel->rd_node, &view);
	for (int i = 0; i < view.nslabs; i++)
		mts[i] = forst_slab_memtable(view.slabs[i]);
	fst_lookup_init(&lk);
	lk.memtables = mts;
	lk.nmemtables = view.nslabs;
	lk.manifest = view.manifest;
	lk.reader = forst_view_reader;
	lk.reader_arg = &view;

	memset(&plan, 0, sizeof(plan));
	PG_TRY();
	{
		uint64		bytes = 0;
		uint64		planned = 0;
		int			over = 0;

		rc = fst_lookup_plan_files(&lk, keys, n, &plan, &err);
		if (rc != FST_OK)
			forst_report(rc, &err, "planning a batch of key lookups");
		/* FstManifestFile begins with its FstFileMeta */
		forst_prefetch_metadata(&rel->rd_node,
								(const FstManifestFile *const *) plan.files,
								plan.nfiles);
		rc = fst_lookup_plan_blocks(&lk, keys, &plan, &err);
		if (rc != FST_OK)
			forst_report(rc, &err, "planning a batch of key lookups");
		if (plan.nblocks > 0)
		{
			ForstPrefetchRange *ranges = palloc(sizeof(ForstPrefetchRange) * plan.nblocks);
			uint64		budget = cache_budget();
			bool		staged;
			int			m = 0;

			for (int i = 0; i < plan.nblocks; i++)
				planned += plan.blocks[i].len;
			/* more than the disk cache keeps for it: into the stage */
			staged = planned > budget &&
				(uint64) forst_batch_lookup_memory_kb * 1024 > budget;
			if (staged)
				budget = (uint64) forst_batch_lookup_memory_kb * 1024;
			for (int i = 0; i < plan.nblocks; i++)
			{
				if (bytes + plan.blocks[i].len > budget)
					break;
				bytes += plan.blocks[i].len;
				ranges[m].file = (const FstManifestFile *) plan.blocks[i].file;
				ranges[m].offset = plan.blocks[i].offset;
				ranges[m].len = plan.blocks[i].len;
				m++;
			}
			over = plan.nblocks - m;
			if (staged)
			{
				ForstStageFetch sf;

				forst_stage_fetch(&rel->rd_node, ranges, m, &sf);
				if (st != NULL)
				{
					st->staged_batches++;
					st->staged_bytes += sf.bytes;
					st->staged_requests += sf.requests;
				}
			}
			else
			{
				/* the previous batch's stage is of no use to this one */
				forst_stage_reset();
				forst_prefetch_ranges(&rel->rd_node, ranges, m);
			}
			pfree(ranges);
		}
		if (st != NULL)
		{
			st->batches++;
			st->keys += n;
			st->keys_held += plan.keys_held;
			st->keys_absent += plan.keys_absent;
			st->files += plan.nfiles;
			st->blocks += plan.nblocks;
			st->bytes_planned += planned;
			st->bytes += bytes;
			st->blocks_over_budget += over;
		}
	}
	PG_FINALLY();
	{
		fst_lookup_plan_free(&plan);
	}
	PG_END_TRY();
}
