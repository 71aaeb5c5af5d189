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
#define FORST_VERSION "1.0"

/* forst.c */
extern bool forst_preloaded;

/* forst_guc.c */
typedef enum ForstCompression
{
	FORST_COMPRESSION_NONE,
	FORST_COMPRESSION_LZ4
} ForstCompression;

extern char *forst_remote_dir;
extern int	forst_compression;
extern int	forst_memtable_size_kb;
extern int	forst_memtable_memory_kb;
extern int	forst_max_tables;
extern int	forst_max_row_size_kb;
extern int	forst_block_cache_size_kb;
extern char *forst_cache_dir;
extern int	forst_cache_size_kb;

extern void forst_define_gucs(void);
extern char *forst_remote_dir_url(void);

#endif							/* FORST_H */
