/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  Shared counters behind the forst.stats view (see base/stats.h; the
 *	  view, the publication of per-process counts and forst.stats_reset()
 *	  are in functions/stats_view.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "am/base/stats.h"

typedef struct ForstStatsShared
{
	pg_atomic_uint64 counters[FS_NUM_STATS];
	pg_atomic_uint64 reset_time;	/* TimestampTz */
} ForstStatsShared;

static ForstStatsShared *stats_shared = NULL;

/* What this process has published of its cumulative counts. */
static uint64 published[FS_NUM_STATS];

uint64		forst_local_bloom_checks = 0;
uint64		forst_local_bloom_negatives = 0;
uint64		forst_local_bloom_false_positives = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
stats_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(ForstStatsShared));
}

static void
stats_shmem_startup(void)
{
	bool		found;
	int			i;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	stats_shared = ShmemInitStruct("forst stats", sizeof(ForstStatsShared), &found);
	if (!found)
	{
		for (i = 0; i < FS_NUM_STATS; i++)
			pg_atomic_init_u64(&stats_shared->counters[i], 0);
		pg_atomic_init_u64(&stats_shared->reset_time, (uint64) GetCurrentTimestamp());
	}
	LWLockRelease(AddinShmemInitLock);
}

void
forst_stats_init(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stats_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stats_shmem_startup;
}

void
forst_stats_add(ForstStat which, uint64 n)
{
	if (stats_shared != NULL && n > 0)
		pg_atomic_fetch_add_u64(&stats_shared->counters[which], n);
}

uint64
forst_stats_get(ForstStat which)
{
	return stats_shared != NULL ? pg_atomic_read_u64(&stats_shared->counters[which]) : 0;
}

bool
forst_stats_loaded(void)
{
	return stats_shared != NULL;
}

void
forst_stats_publish_count(ForstStat which, uint64 cur)
{
	if (stats_shared != NULL && cur > published[which])
	{
		pg_atomic_fetch_add_u64(&stats_shared->counters[which], cur - published[which]);
		published[which] = cur;
	}
}

void
forst_stats_zero(void)
{
	for (int i = 0; i < FS_NUM_STATS; i++)
		pg_atomic_write_u64(&stats_shared->counters[i], 0);
	pg_atomic_write_u64(&stats_shared->reset_time, (uint64) GetCurrentTimestamp());
}

TimestampTz
forst_stats_reset_time(void)
{
	return (TimestampTz) pg_atomic_read_u64(&stats_shared->reset_time);
}
