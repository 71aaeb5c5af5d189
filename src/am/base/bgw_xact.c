/*-------------------------------------------------------------------------
 *
 * bgw_xact.c
 *	  One unit of a background worker's work in a transaction of its own
 *	  (see base/bgw_xact.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
