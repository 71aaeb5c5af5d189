/*-------------------------------------------------------------------------
 *
 * forst.c
 *	  Module entry point of the forst extension.
 *
 * forst keeps shared state (memtables, caches, background workers), so it
 * only works when loaded into the postmaster through
 * shared_preload_libraries.  When the module is loaded any other way (by
 * CREATE EXTENSION, LOAD or session_preload_libraries) _PG_init registers
 * nothing; the extension script then calls forst._check_preloaded(), which
 * refuses with a clear message (see functions/funcs.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "am/forst.h"
#include "am/tableam/secondary.h"
#include "am/read/stage.h"
#include "am/read/shared_blocks.h"
#include "am/read/shared_meta.h"
#include "am/checkpoint/checkpoint.h"
#include "am/checkpoint/crash_restore.h"
#include "am/base/progress.h"
#include "am/ddl/pending.h"
#include "am/ddl/utility.h"
#include "am/keys/rel.h"
#include "am/keys/slot.h"
#include "am/tableam/tableam.h"
#include "am/objects/disk_cache.h"
#include "am/expiry/expiry.h"
#include "am/flush/flush.h"
#include "am/write/batch_lookup.h"
#include "am/write/onconflict.h"
#include "am/shmem/shmem.h"
#include "am/base/stats.h"
#include "am/keys/index_entry.h"
#include "am/wal/unlogged.h"
#include "am/wal/wal.h"
#include "am/checkpoint/gc.h"
#include "am/ddl/migrate.h"
#include "am/ddl/rekey.h"
#include "am/compact/compact.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	/* before anything can fail: the AM hands this slot type out */
	forst_slot_init();
	forst_table_am = forst_table_am_routine();
	forst_index_options_init();

	if (!process_shared_preload_libraries_in_progress)
		return;

	forst_define_gucs();
	forst_checkpoint_define_gucs();
	forst_gc_init();
	/* after every forst.* setting is defined: removes unknown ones */
	MarkGUCPrefixReserved("forst");
	forst_shmem_init();
	forst_cache_init();
	forst_blockshare_init();
	forst_sharedmeta_init();
	forst_stats_init();
	forst_stats_view_init();
	forst_utility_init();
	forst_onconflict_init();
	forst_batch_lookup_init();
	forst_stage_init();
	forst_relinfo_init();
	forst_secondary_init();
	forst_register_key_lender(forst_migrate_borrowed_key);
	forst_register_key_lender(forst_rekey_borrowed_key);
	forst_pending_init();
	forst_slab_pins_init();
	forst_expiry_init();
	forst_checkpoint_init();
	forst_crash_restore_init();
	forst_progress_init();
	forst_flush_worker_register();
	forst_checkpoint_workers_register();
	forst_compaction_workers_register();
	forst_wal_init();
	forst_unlogged_init();
	forst_backup_init();
	forst_preloaded = true;
}
