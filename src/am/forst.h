/*-------------------------------------------------------------------------
 *
 * forst.h
 *	  Declarations shared by the server-side (src/am) files of forst.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_H
#define FORST_H

/*
 * Version of the loadable module.  It equals the extension's SQL version
 * (default_version in forst.control) as long as there is only one script.
 */
#define FORST_VERSION "1.8"

/* forst.c */
extern bool forst_preloaded;

/*
 * base/compression.c: forst.compression, a codec (FST_COMPRESS_*) per
 * level, forst.block_size, a data block size per level, and
 * forst.block_restart_interval
 */
extern char *forst_compression;
extern char *forst_block_size;
extern int	forst_block_restart_interval;
extern void forst_define_compression_guc(void);
extern int	forst_compression_for_level(int level);
extern size_t forst_block_size_for_level(int level);
extern size_t forst_flush_block_size(void);

/* base/guc.c */
extern char *forst_remote_dir;
extern int	forst_compaction_workers;
extern int	forst_compaction_rate_limit_kb;
extern int	forst_memtable_size_kb;
extern int	forst_memtable_memory_kb;
extern int	forst_max_tables;
extern int	forst_max_row_size_kb;
extern int	forst_block_cache_size_kb;
extern int	forst_sst_reader_memory_kb;
extern int	forst_target_file_size_kb;
extern int	forst_shared_block_cache_size_kb;
extern int	forst_shared_metadata_memory_kb;
extern bool forst_scan_prefetch;
extern bool forst_batch_lookups;
extern int	forst_batch_lookup_rows;
extern int	forst_key_share_locks_per_table;
extern int	forst_batch_lookup_memory_kb;
extern int	forst_debug_slab_release_delay_ms;	/* developer option, tests */
extern int	forst_debug_gc_lock;	/* developer option, tests */

/* forst.mixed_durability: a transaction writing logged and unlogged forst tables */
typedef enum ForstMixedDurability
{
	FORST_MIXED_ALLOW,
	FORST_MIXED_WARNING,
	FORST_MIXED_ERROR
} ForstMixedDurability;
extern int	forst_mixed_durability;
extern char *forst_cache_dir;
extern int	forst_cache_size_kb;
extern int	forst_cache_chunk_size_kb;
extern int	forst_checkpoint_timeout_s;	/* defined by checkpoint/checkpoint.c */

extern void forst_define_gucs(void);

/* base/s3_guc.c: the forst.s3_* settings */
struct FstS3Config;
extern uint32 forst_s3_settings_generation;
extern void forst_define_s3_gucs(void);

/* The s3 store settings in effect (settings, then the AWS_* environment). */
extern void forst_s3_config(struct FstS3Config *cfg);
extern char *forst_remote_dir_url(void);

#endif							/* FORST_H */
