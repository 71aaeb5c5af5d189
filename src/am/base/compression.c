/*-------------------------------------------------------------------------
 *
 * compression.c
 *	  How newly written SST data blocks are laid out: per level,
 *	  forst.compression (the codec) and forst.block_size (the uncompressed
 *	  size a block is cut at); and forst.block_restart_interval.
 *
 * Each value is one entry for every level, or a comma-separated list, the
 * first for level 0 (flushes), the next for level 1, and so on; the last
 * one also applies to every deeper level.
 *
 * The default codecs, 'lz4, lz4, zstd', keep lz4 where files are rewritten
 * most often and read hottest (flushes, and level 1, which every level-0
 * compaction rewrites) and use zstd from level 2 down, where nearly all of
 * a large table lives and is rewritten rarely: a third to two fifths fewer
 * bytes in the object store, in the disk cache and in the page cache, for
 * some CPU on each block a read decompresses.  (RocksDB's advice is the
 * same: lz4 above, zstd at the bottom.)
 *
 * The default block sizes, '8kB, 8kB, 4kB', follow the codecs.  A point
 * read decompresses the whole block its key lies in, and zstd decodes about
 * a quarter as fast as lz4 (its entropy coding is what makes it smaller):
 * an 8 kB zstd block took 13-16 us here against 4 us for lz4, most of a
 * point read at the bottom level.  Halving the block halves what a lookup
 * decodes (10 us) for about 3% more bytes, since each block carries its own
 * entropy tables.  Level 0 stays at 8 kB so that a flush of the largest
 * memtable still fits the blocks a TID can address (and flush_block_size
 * raises it where it would not).
 *
 * forst.block_restart_interval: every how many entries a block's key is
 * stored whole (a restart point; the keys between share the prefix of the
 * one before).  A read from a cached block binary-searches the restart
 * points and then decodes entries one by one; a block in a large cache is
 * rarely in the CPU's caches, so each decoded entry (rows of ~150 bytes:
 * two or three cache lines) is a wait on memory.  4 instead of LevelDB's
 * and RocksDB's 16 took ten-row index ranges from 0.78x to 0.81x of heap's
 * (single rows unchanged, within noise) for 6.5% bigger files of very
 * compressible rows (8 kB blocks; the restart array grows by a byte per
 * entry and fewer keys share a prefix).  A hash index in the blocks
 * (RocksDB's data block hash index) gained nothing more over 16 or over 4:
 * an 8 kB block has few restart points to search.
 *
 * A file is written with the settings of the level it is written into;
 * files already written keep theirs until compaction rewrites them, and
 * readers read every codec and block size whatever the settings.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"
#include "utils/varlena.h"

#include "lsm/block.h"
#include "lsm/filemeta.h"
#include "am/forst.h"
#include "am/keys/tid.h"

/* forst.block_size's bounds, in kB (see forst_block_size_for_level) */
#define BLOCK_SIZE_MIN_KB	4
#define BLOCK_SIZE_MAX_KB	64

#define CODEC_HINT	"Codecs are lz4, zstd and none, for example 'lz4, lz4, zstd'."
#define SIZE_HINT	"Sizes are in kB unless a unit is given, for example '8kB, 8kB, 4kB'."

char	   *forst_compression = NULL;
char	   *forst_block_size = NULL;
int			forst_block_restart_interval = 4;

/* One value per level, as assigned. */
typedef struct LevelValues
{
	int			v[FST_NUM_LEVELS];
} LevelValues;

/* before any assignment: lz4 everywhere, 8 kB blocks */
static LevelValues codecs = {{FST_COMPRESS_LZ4, FST_COMPRESS_LZ4,
		FST_COMPRESS_LZ4, FST_COMPRESS_LZ4, FST_COMPRESS_LZ4, FST_COMPRESS_LZ4,
FST_COMPRESS_LZ4}};
static LevelValues block_kb = {{8, 8, 8, 8, 8, 8, 8}};

/* Parses one list entry into *value, or says why not (GUC_check_*). */
typedef bool (*EntryParser) (const char *entry, int *value);

static bool
codec_of(const char *name, int *codec)
{
	if (pg_strcasecmp(name, "lz4") == 0)
		*codec = FST_COMPRESS_LZ4;
	else if (pg_strcasecmp(name, "zstd") == 0)
		*codec = FST_COMPRESS_ZSTD;
	else if (pg_strcasecmp(name, "none") == 0)
		*codec = FST_COMPRESS_NONE;
	else
	{
		GUC_check_errdetail("\"%s\" is not a compression codec.", name);
		GUC_check_errhint(CODEC_HINT);
		return false;
	}
	return true;
}

static bool
block_size_of(const char *entry, int *kb)
{
	const char *hint = NULL;

	if (!parse_int(entry, kb, GUC_UNIT_KB, &hint))
	{
		GUC_check_errdetail("\"%s\" is not a size.", entry);
		GUC_check_errhint("%s", hint ? hint : SIZE_HINT);
		return false;
	}
	if (*kb < BLOCK_SIZE_MIN_KB || *kb > BLOCK_SIZE_MAX_KB)
	{
		GUC_check_errdetail("A block size of %d kB is outside %d kB .. %d kB.",
							*kb, BLOCK_SIZE_MIN_KB, BLOCK_SIZE_MAX_KB);
		GUC_check_errhint("Smaller blocks need more blocks per file than a TID can address; larger ones hold more entries than a TID can number.");
		return false;
	}
	return true;
}

/*
 * A per-level list into a malloc'd LevelValues in *extra (PostgreSQL frees
 * it with free()), or false with the reason set.
 */
static bool
check_levels(const char *name, const char *noun, const char *hint,
			 const char *value, EntryParser parse, void **extra)
{
	LevelValues parsed;
	char	   *copy;
	List	   *entries;
	ListCell   *lc;
	int			n = 0;
	bool		ok = true;

	copy = pstrdup(value ? value : "");
	if (!SplitGUCList(copy, ',', &entries) || entries == NIL)
	{
		GUC_check_errdetail("%s must be a %s or a comma-separated list of %ss, one per level.",
							name, noun, noun);
		GUC_check_errhint("%s", hint);
		ok = false;
	}
	foreach(lc, entries)
	{
		if (!ok)
			break;
		if (n == FST_NUM_LEVELS)
		{
			GUC_check_errdetail("%s names more than %d levels.", name,
								FST_NUM_LEVELS);
			GUC_check_errhint("The last %s listed also applies to every deeper level.",
							  noun);
			ok = false;
			break;
		}
		ok = parse((const char *) lfirst(lc), &parsed.v[n]);
		n++;
	}
	pfree(copy);
	list_free(entries);
	if (!ok)
		return false;
	for (; n < FST_NUM_LEVELS; n++)
		parsed.v[n] = parsed.v[n - 1];

	*extra = malloc(sizeof(LevelValues));
	if (*extra == NULL)
	{
		GUC_check_errdetail("out of memory");
		return false;
	}
	memcpy(*extra, &parsed, sizeof(parsed));
	return true;
}

static bool
check_compression(char **newval, void **extra, GucSource source)
{
	return check_levels("forst.compression", "codec", CODEC_HINT, *newval,
						codec_of, extra);
}

static void
assign_compression(const char *newval, void *extra)
{
	if (extra != NULL)
		memcpy(&codecs, extra, sizeof(codecs));
}

static bool
check_block_size(char **newval, void **extra, GucSource source)
{
	return check_levels("forst.block_size", "size", SIZE_HINT, *newval,
						block_size_of, extra);
}

static void
assign_block_size(const char *newval, void *extra)
{
	if (extra != NULL)
		memcpy(&block_kb, extra, sizeof(block_kb));
}

void
forst_define_compression_guc(void)
{
	DefineCustomStringVariable("forst.compression",
							   "Compression of the data blocks of newly written SST files, per level.",
							   "A codec (lz4, zstd, none) for every level, or a list: level 0 "
							   "(flushes) first; the last one listed applies to every deeper level.",
							   &forst_compression,
							   "lz4, lz4, zstd",
							   PGC_SIGHUP,
							   GUC_LIST_INPUT,
							   check_compression, assign_compression, NULL);
	DefineCustomStringVariable("forst.block_size",
							   "Uncompressed size of the data blocks of newly written SST files, per level.",
							   "A size (4kB .. 64kB) for every level, or a list: level 0 (flushes) "
							   "first; the last one listed applies to every deeper level.  A point "
							   "read decompresses one block.",
							   &forst_block_size,
							   "8kB, 8kB, 4kB",
							   PGC_SIGHUP,
							   GUC_LIST_INPUT,
							   check_block_size, assign_block_size, NULL);
	DefineCustomIntVariable("forst.block_restart_interval",
							"Entries between restart points in the data blocks of newly written SST files.",
							"A restart point stores its key whole; a read searches them and decodes "
							"the entries after one.  Fewer entries between them make reads from "
							"cached blocks quicker and files a little larger.",
							&forst_block_restart_interval,
							4, 1, 64,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);
}

static int
level_index(int level)
{
	if (level < 0)
		return 0;
	if (level >= FST_NUM_LEVELS)
		return FST_NUM_LEVELS - 1;
	return level;
}

int
forst_compression_for_level(int level)
{
	return codecs.v[level_index(level)];
}

size_t
forst_block_size_for_level(int level)
{
	return (size_t) block_kb.v[level_index(level)] * 1024;
}

/*
 * The block size of a flush: level 0's, raised where a full memtable of
 * forst.memtable_size would be cut into more blocks than a TID addresses
 * (compaction cuts its outputs at FORST_SST_MAX_BLOCKS instead; a flush
 * writes one file).  A memtable's bytes include its index, so its entries
 * take fewer blocks than this assumes.
 */
size_t
forst_flush_block_size(void)
{
	size_t		size = forst_block_size_for_level(0);
	size_t		need = ((size_t) forst_memtable_size_kb * 1024 +
						FORST_SST_MAX_BLOCKS - 1) / FORST_SST_MAX_BLOCKS;

	return Max(size, need);
}
