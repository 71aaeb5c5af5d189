/*-------------------------------------------------------------------------
 *
 * size.c
 *	  How big a forst table is, to PostgreSQL: the relation size it
 *	  reports (in blocks it does not have) and the planner's estimates.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "optimizer/plancat.h"
#include "storage/bufmgr.h"

#include "am/forst.h"
#include "am/tableam/size.h"
#include "am/objects/store.h"
#include "am/shmem/shmem.h"
#include "lsm/manifest.h"
#include "lsm/memtable.h"

/*
 * What relation_size reports, in blocks, at most: PostgreSQL code outside
 * the table AM asks the storage manager about the blocks it is told of --
 * ANALYZE prefetches the blocks it samples -- and a forst table's main
 * fork is one empty segment, so a block past the first segment is an
 * error ("previous segment is only 0 blocks") where one in it is not.
 * The planner gets the true size from forst_relation_estimate_size.
 */
#define FORST_REPORTED_BLOCKS_MAX ((BlockNumber) (RELSEG_SIZE - 1))

/*
 * The size in blocks relation_size last reported, and of which relation:
 * ANALYZE asks before it begins its scan and extrapolates with that
 * number, which its scan must then use too (the table may grow between).
 */
static RelFileNode last_size_node;
static BlockNumber last_size_blocks = InvalidBlockNumber;

/*
 * Bytes of the table's memtables and of the SST files of its manifest;
 * with load, also of a table no one has read or written since start-up.
 */
static uint64
forst_table_bytes(Relation rel, bool load)
{
	ForstTableShared *ts;
	int			slabs[FORST_MAX_IMMUTABLE + 1];
	int			n,
				i;
	uint64		bytes = 0;

	ts = forst_table_shared(&rel->rd_node, load);
	if (ts == NULL)
		return 0;
	n = forst_table_slabs(ts, slabs);
	for (i = 0; i < n; i++)
	{
		FstMemtableStats st;

		fst_memtable_stats(forst_slab_memtable(slabs[i]), &st);
		bytes += st.bytes_used;
	}
	forst_table_load(ts);
	if (ts->manifest_version > 0)
	{
		const FstManifest *m = forst_manifest_at(&rel->rd_node,
												 ts->manifest_version);
		int			level;

		for (level = 0; level < FST_NUM_LEVELS; level++)
			for (i = 0; i < m->levels[level].nfiles; i++)
				bytes += m->levels[level].files[i].meta.size;
	}
	return bytes;
}

uint64
forst_relation_size(Relation rel, ForkNumber forkNumber)
{
	uint64		bytes;

	if (forkNumber != MAIN_FORKNUM && forkNumber != InvalidForkNumber)
		return 0;
	/* ANALYZE asks first thing after a restart: not 0 for a table not read yet */
	bytes = Min(forst_table_bytes(rel, true), (uint64) FORST_REPORTED_BLOCKS_MAX * BLCKSZ);
	last_size_node = rel->rd_node;
	/* as RelationGetNumberOfBlocksInFork rounds */
	last_size_blocks = (BlockNumber) ((bytes + BLCKSZ - 1) / BLCKSZ);
	return bytes;
}

BlockNumber
forst_reported_blocks(Relation rel)
{
	if (last_size_blocks != InvalidBlockNumber &&
		RelFileNodeEquals(last_size_node, rel->rd_node))
		return last_size_blocks;
	return RelationGetNumberOfBlocks(rel);
}

void
forst_relation_estimate_size(Relation rel, int32 *attr_widths,
							 BlockNumber *pages, double *tuples,
							 double *allvisfrac)
{
	ForstTableShared *ts = forst_table_shared(&rel->rd_node, false);
	uint64		bytes = forst_table_bytes(rel, false);
	BlockNumber relpages = rel->rd_rel->relpages;
	double		reltuples = rel->rd_rel->reltuples;

	*pages = (BlockNumber) Min((bytes + BLCKSZ - 1) / BLCKSZ, (uint64) MaxBlockNumber);
	*allvisfrac = 0;
	if (reltuples >= 0 && relpages > 0)
	{
		/*
		 * analyzed: its row density, applied to today's size (as heap).
		 * relpages is the reported size; capped, it says nothing of the
		 * density, and ANALYZE's exact count stands.
		 */
		if (relpages < FORST_REPORTED_BLOCKS_MAX)
			*tuples = rint(reltuples / (double) relpages * (double) *pages);
		else
			*tuples = reltuples;
		return;
	}

	/* never analyzed: rows written since start-up, or a density guess */
	*tuples = ts ? (double) (int64) pg_atomic_read_u64(&ts->live_estimate) : 0;
	if (*tuples <= 0 && *pages > 0)
	{
		int32		width = get_rel_data_width(rel, attr_widths);

		*tuples = rint((double) bytes / (double) (width + 32));
	}
	if (*tuples < 0)
		*tuples = 0;
}
