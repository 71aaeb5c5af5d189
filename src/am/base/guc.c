/*-------------------------------------------------------------------------
 *
 * guc.c
 *	  The forst.* configuration parameters.
 *
 * Every parameter defined here is documented in docs/configuration.md.
 *
 * forst.remote_dir is PGC_POSTMASTER.  PostgreSQL reads postgresql.conf
 * before it loads shared_preload_libraries, so a value given there is held
 * as a placeholder and only checked when DefineCustomStringVariable()
 * applies it; a value that fails the check hook at that point only draws a
 * WARNING and the default is used instead.  Silently storing state
 * somewhere other than where the administrator said is worse than not
 * starting, so forst_define_gucs() notices the rejection and refuses to
 * start (an ERROR in the postmaster is FATAL).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/guc.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/checkpoint/gc.h"

static const char remote_dir_forms[] =
	"forst.remote_dir must be empty (the default), file:///absolute/path or s3://bucket/prefix.";

char	   *forst_remote_dir = NULL;
/* True in the postmaster and, by inheritance, in every backend it forks. */
bool		forst_preloaded = false;
int			forst_shared_block_cache_size_kb = 64 * 1024;
int			forst_shared_metadata_memory_kb = 64 * 1024;
int			forst_checkpoint_timeout_s = 300;
int			forst_compaction_workers = 1;
int			forst_compaction_rate_limit_kb = 0;
int			forst_memtable_size_kb = 8 * 1024;
int			forst_memtable_memory_kb = 128 * 1024;
int			forst_max_tables = 1024;
int			forst_max_row_size_kb = 1024;
int			forst_block_cache_size_kb = 16 * 1024;
int			forst_sst_reader_memory_kb = 64 * 1024;
int			forst_mixed_durability = FORST_MIXED_WARNING;

static const struct config_enum_entry mixed_durability_options[] = {
	{"allow", FORST_MIXED_ALLOW, false},
	{"warning", FORST_MIXED_WARNING, false},
	{"error", FORST_MIXED_ERROR, false},
	{NULL, 0, false}
};
int			forst_target_file_size_kb = 64 * 1024;
bool		forst_scan_prefetch = true;
bool		forst_batch_lookups = true;
int			forst_batch_lookup_rows = 8192;
int			forst_key_share_locks_per_table = 256;
int			forst_batch_lookup_memory_kb = 16384;
int			forst_debug_slab_release_delay_ms = 0;
int			forst_debug_gc_lock = 0;
char	   *forst_cache_dir = NULL;
int			forst_cache_size_kb = -1;
int			forst_cache_chunk_size_kb = 8;

/* Set while forst_define_gucs() applies values from the configuration. */
static bool defining_gucs = false;
static bool remote_dir_rejected = false;
static char rejected_value[MAXPGPATH];
static const char *rejected_detail = NULL;

/*
 * Returns NULL when "url" is an acceptable forst.remote_dir, else a
 * sentence saying what is wrong with it.
 */
static const char *
remote_dir_problem(const char *url)
{
	const char *p;

	for (p = url; *p; p++)
	{
		if ((unsigned char) *p < 0x20 || *p == 0x7f)
			return "forst.remote_dir must not contain control characters.";
	}

	if (url[0] == '\0')
		return NULL;

	if (strncmp(url, "file://", 7) == 0)
	{
		const char *path = url + 7;
		size_t		len = strlen(path);

		if (path[0] != '/')
			return "A file:// URL must name an absolute path, as in file:///var/lib/forst.";
		if (strstr(path, "/../") != NULL ||
			(len >= 3 && strcmp(path + len - 3, "/..") == 0))
			return "A file:// URL must not contain \"..\" components.";
		return NULL;
	}

	if (strncmp(url, "s3://", 5) == 0)
	{
		const char *bucket = url + 5;
		size_t		blen = strcspn(bucket, "/");
		size_t		i;

		if (blen < 3 || blen > 63)
			return "An s3:// URL must name a bucket of 3 to 63 characters, as in s3://bucket/prefix.";
		for (i = 0; i < blen; i++)
		{
			char		c = bucket[i];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
				  c == '-' || c == '.'))
				return "An S3 bucket name may contain only lower-case letters, digits, \"-\" and \".\".";
		}
		if (bucket[0] == '-' || bucket[0] == '.' ||
			bucket[blen - 1] == '-' || bucket[blen - 1] == '.')
			return "An S3 bucket name must begin and end with a letter or digit.";
		if (strchr(bucket, '?') != NULL)
			return "An s3:// forst.remote_dir takes no URL parameters: set forst.s3_endpoint, forst.s3_region and forst.s3_path_style instead.";
		return NULL;
	}

	return remote_dir_forms;
}

static bool
check_remote_dir(char **newval, void **extra, GucSource source)
{
	const char *problem = remote_dir_problem(*newval);

	if (problem == NULL)
		return true;

	GUC_check_errdetail("%s", problem);
	if (problem != remote_dir_forms)
		GUC_check_errhint("%s", remote_dir_forms);

	if (defining_gucs)
	{
		remote_dir_rejected = true;
		strlcpy(rejected_value, *newval, sizeof(rejected_value));
		rejected_detail = problem;
	}
	return false;
}

static bool
check_cache_dir(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || (*newval)[0] == '\0' || (*newval)[0] == '/')
		return true;
	GUC_check_errdetail("forst.cache_dir must be an absolute path or empty.");
	return false;
}

void
forst_define_gucs(void)
{
	defining_gucs = true;

	DefineCustomStringVariable("forst.remote_dir",
							   "Object-store location of forst's SST files, manifests and checkpoints.",
							   "file:///absolute/path or s3://bucket/prefix; "
							   "empty means file://<data directory>/forst/remote.",
							   &forst_remote_dir,
							   "",
							   PGC_POSTMASTER,
							   GUC_SUPERUSER_ONLY,
							   check_remote_dir, NULL, NULL);

	forst_define_compression_guc();

	DefineCustomIntVariable("forst.memtable_size",
							"Size of one memtable (one slab of the memtable pool).",
							"A table's active memtable is frozen and a new one started "
							"when it fills.",
							&forst_memtable_size_kb,
							8 * 1024, 1024, 64 * 1024,
							PGC_POSTMASTER,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.memtable_memory",
							"Shared memory for all memtables of all forst tables.",
							"Divided into slabs of forst.memtable_size; at most 1024 slabs.",
							&forst_memtable_memory_kb,
							128 * 1024, 2 * 1024, PG_INT32_MAX / 2,
							PGC_POSTMASTER,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	/*
	 * A developer option, as PostgreSQL's own (not in the sample file, not
	 * in SHOW ALL): widens the moment in which the flush worker gives a
	 * freed memtable's pages back, so that tests of readers that waited for
	 * memory meet it every time (t/020).
	 */
	DefineCustomIntVariable("forst.debug_slab_release_delay",
							"Sleeps this long after a freed memtable's pages are given back (developer option).",
							NULL,
							&forst_debug_slab_release_delay_ms,
							0, 0, 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);

	/*
	 * A developer option: forst.gc() waits for the advisory lock with this
	 * key after it lists the objects, so that a test holding the lock can
	 * drop a table and publish under it in between (t/014).
	 */
	DefineCustomIntVariable("forst.debug_gc_lock",
							"Garbage collection waits for the session advisory lock with this key after it lists the objects (developer option).",
							NULL,
							&forst_debug_gc_lock,
							0, 0, INT_MAX,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.max_tables",
							"Number of forst tables (relfilenodes) that can hold memtables at once.",
							NULL,
							&forst_max_tables,
							1024, 16, 1024 * 1024,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.max_row_size",
							"Largest row a forst table accepts (rows are stored whole, never TOASTed).",
							NULL,
							&forst_max_row_size_kb,
							1024, 1, 256 * 1024,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.block_cache_size",
							"Decoded SST blocks each backend keeps in its own memory.",
							"Above forst.shared_block_cache_size: a hit here costs no copy.",
							&forst_block_cache_size_kb,
							16 * 1024, 256, PG_INT32_MAX / 2,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.sst_reader_memory",
							"Memory each backend keeps for open SST files.",
							"Their block indexes, bloom filters and read windows.  Scans hold "
							"one file of each level below level 0 at a time and close the files "
							"they are done with while over this; the least recently used of the "
							"others are closed at the start of the next transaction.  0 closes "
							"all that can be.",
							&forst_sst_reader_memory_kb,
							64 * 1024, 0, PG_INT32_MAX / 2,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.target_file_size",
							"Size at which compaction finishes an SST file and starts the next.",
							"Files of levels 1 and deeper are read one at a time by scans; "
							"smaller files mean more objects and manifest entries.",
							&forst_target_file_size_kb,
							64 * 1024, 64, 1024 * 1024,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.shared_block_cache_size",
							"Decoded SST blocks kept in shared memory for all backends.",
							"0 turns the shared block cache off.",
							&forst_shared_block_cache_size_kb,
							64 * 1024, 0, PG_INT32_MAX / 2,
							PGC_POSTMASTER,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.shared_metadata_memory",
							"Shared memory for the bloom filters and block indexes of SST files, one copy for all backends.",
							"0 turns it off: each backend then keeps its own copy of what it reads.",
							&forst_shared_metadata_memory_kb,
							64 * 1024, 0, PG_INT32_MAX / 2,
							PGC_POSTMASTER,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("forst.scan_prefetch",
							 "Range scans fetch the blocks they start in, and the metadata "
							 "of files not open yet, in parallel before reading.",
							 "Applies to s3:// stores with a disk cache (forst.cache_size > 0): "
							 "a scan over many key groups otherwise waits for one ranged GET "
							 "after another.",
							 &forst_scan_prefetch,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("forst.mixed_durability",
							 "What a transaction that writes both logged and unlogged "
							 "(checkpoint-durable) forst tables gets: allow, warning or error.",
							 "After a crash the unlogged tables return to their last "
							 "checkpoint while the logged ones keep the transaction: its "
							 "writes are no longer one unit.",
							 &forst_mixed_durability,
							 FORST_MIXED_WARNING,
							 mixed_durability_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("forst.batch_lookups",
							 "INSERT ... ON CONFLICT into a forst table reads its input ahead "
							 "in batches and fetches the blocks of the batch's keys in parallel.",
							 "Applies to s3:// stores with a disk cache (forst.cache_size > 0): "
							 "otherwise each key whose block is not cached waits for one ranged "
							 "GET after another.  Taken at planning and at the start of execution.",
							 &forst_batch_lookups,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("forst.key_share_locks_per_table",
							"FOR KEY SHARE row locks a transaction holds one by one on a "
							"forst table before it holds further ones by bucket.",
							"Foreign key checks take such a lock on every referenced row. "
							"Beyond this number, each further lock covers one of 128 buckets "
							"of the table's keys, so that the lock table does not run out; "
							"a writer of another key of a locked bucket then waits too.",
							&forst_key_share_locks_per_table,
							256, 0, 1000000,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.batch_lookup_rows",
							"Input rows an INSERT ... ON CONFLICT reads ahead per batch "
							"(forst.batch_lookups).",
							"A batch also ends when its rows take work_mem.",
							&forst_batch_lookup_rows,
							8192, 1, 65536,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.batch_lookup_memory",
							"Memory a batch of INSERT ... ON CONFLICT lookups may hold the "
							"blocks it fetched ahead in, when the disk cache is too small "
							"to hold them (forst.batch_lookups).",
							"Per backend, for one batch at a time; 0 keeps batches to "
							"what an eighth of the disk cache holds.",
							&forst_batch_lookup_memory_kb,
							16384, 0, MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.compaction_workers",
							"Background workers that compact SST files.",
							"With 0, the flush worker compacts between flushes, so that "
							"flushes wait for compactions.",
							&forst_compaction_workers,
							1, 0, 8,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.compaction_rate_limit",
							"Bytes per second that compaction may write to the object store, 0 for no limit.",
							"Applies to each compaction worker; the unit is kB per second.",
							&forst_compaction_rate_limit_kb,
							0, 0, PG_INT32_MAX / 2,
							PGC_SIGHUP,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	forst_define_s3_gucs();

	DefineCustomStringVariable("forst.cache_dir",
							   "Directory of the local disk cache of SST files.",
							   "An absolute path; empty means <data directory>/forst/cache.  "
							   "It must be empty, absent or a forst cache directory.",
							   &forst_cache_dir,
							   "",
							   PGC_POSTMASTER,
							   0,
							   check_cache_dir, NULL, NULL);

	DefineCustomIntVariable("forst.cache_chunk_size",
							"Unit of the local disk cache: what it reads from the store, keeps and evicts.",
							"Point reads of scattered hot keys keep more of them per cached byte "
							"in smaller units; scans need fewer requests with larger ones.  Entries "
							"cached under another size are read again from the store.",
							&forst_cache_chunk_size_kb,
							8, 4, 1024,
							PGC_POSTMASTER,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("forst.cache_size",
							"Bound on the local disk cache of SST files, for the whole server.",
							"0 turns the cache off; -1 (the default) means 1GB with an s3:// "
							"store and off with file://, whose files are local already.",
							&forst_cache_size_kb,
							-1, -1, PG_INT32_MAX,
							PGC_POSTMASTER,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	if (forst_memtable_memory_kb / forst_memtable_size_kb > 1024)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("forst.memtable_memory is more than 1024 times forst.memtable_size"),
				 errhint("Raise forst.memtable_size or lower forst.memtable_memory.")));

	defining_gucs = false;

	if (remote_dir_rejected)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"",
						"forst.remote_dir", rejected_value),
				 errdetail("%s", rejected_detail),
				 errhint("Correct forst.remote_dir in the server's configuration and start the server again.")));
}

/*
 * The object-store URL in effect, palloc'd: forst.remote_dir, or for the
 * default (empty) value the file:// URL of <data directory>/forst/remote.
 */
char *
forst_remote_dir_url(void)
{
	if (forst_remote_dir == NULL || forst_remote_dir[0] == '\0')
		return psprintf("file://%s/forst/remote", DataDir);
	return pstrdup(forst_remote_dir);
}
