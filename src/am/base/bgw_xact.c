/*-------------------------------------------------------------------------
 *
 * bgw_xact.c
 *	  One unit of a background worker's work in a transaction of its own
 *	  (see base/bgw_xact.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "access/xact.h"
#include "pgstat.h"
#include "utils/backend_status.h"
#include "utils/snapmgr.h"

#include "am/base/bgw_xact.h"

bool
forst_run_in_xact(const char *activity, ForstXactWork work, void *arg)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool ok = true;

	Assert(!IsTransactionState());
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (activity != NULL)
		pgstat_report_activity(STATE_RUNNING, activity);
	PG_TRY();
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		work(arg);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		ok = false;
	}
	PG_END_TRY();
	if (activity != NULL)
		pgstat_report_activity(STATE_IDLE, NULL);
	return ok;
}

/*
 * glibc serves large requests with mmap, and gives the memory back when
 * they are freed, until the first such free: it then raises its mmap
 * threshold to the size freed (up to 32 MB) and its trim threshold to
 * twice that, so that the next output file's buffer, grown by doubling,
 * lies in the heap, and up to 64 MB of it stays there once freed.
 * malloc_trim returns what is free, wherever it lies in the heap.
 */
void
forst_bgw_release_memory(void)
{
#ifdef __GLIBC__
	(void) malloc_trim(0);
#endif
}
