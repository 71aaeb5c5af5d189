/*-------------------------------------------------------------------------
 *
 * forst_compression.c
 *	  forst.compression: the codec of newly written SST data blocks, per
 *	  level.
 *
 * The value is one codec (lz4, zstd or none) for every level, or a
 * comma-separated list of them, the first for level 0 (flushes), the next
 * for level 1, and so on; the last one also applies to every deeper level.
 * The default, 'lz4, lz4, zstd', keeps lz4 where files are rewritten most
 * often and read hottest (flushes, and level 1, which every level-0
 * compaction rewrites) and uses zstd from level 2 down, where nearly all
 * of a large table lives and is rewritten rarely: a third to two fifths
 * fewer bytes in the object store, in the disk cache and in the page
 * cache, for some CPU on each block a read decompresses.  (RocksDB's
 * advice is the same: lz4 above, zstd at the bottom.)
 *
 * A file is compressed with the codec of the level it is written into;
 * files already written keep theirs until compaction rewrites them, and
 * readers read every codec whatever the setting.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/guc.h"
#include "utils/varlena.h"

#include "block.h"
#include "filemeta.h"
#include "forst.h"

char	   *forst_compression = NULL;

typedef struct CompressionLevels
{
	int			codec[FST_NUM_LEVELS];
} CompressionLevels;

/* as assigned; before any assignment, lz4 everywhere */
static CompressionLevels current = {{FST_COMPRESS_LZ4, FST_COMPRESS_LZ4,
		FST_COMPRESS_LZ4, FST_COMPRESS_LZ4, FST_COMPRESS_LZ4, FST_COMPRESS_LZ4,
FST_COMPRESS_LZ4}};

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
		return false;
	return true;
}

static bool
check_compression(char **newval, void **extra, GucSource source)
{
	CompressionLevels parsed;
	char	   *copy;
	List	   *names;
	ListCell   *lc;
	int			n = 0;

	copy = pstrdup(*newval ? *newval : "");
	if (!SplitIdentifierString(copy, ',', &names) || names == NIL)
	{
		GUC_check_errdetail("forst.compression must be a codec or a comma-separated list of codecs, one per level.");
		GUC_check_errhint("Codecs are lz4, zstd and none, for example 'lz4, lz4, zstd'.");
		pfree(copy);
		list_free(names);
		return false;
	}
	foreach(lc, names)
	{
		const char *name = (const char *) lfirst(lc);

		if (n == FST_NUM_LEVELS)
		{
			GUC_check_errdetail("forst.compression names more than %d levels.",
								FST_NUM_LEVELS);
			GUC_check_errhint("The last codec listed also applies to every deeper level.");
			pfree(copy);
			list_free(names);
			return false;
		}
		if (!codec_of(name, &parsed.codec[n]))
		{
			GUC_check_errdetail("\"%s\" is not a compression codec.", name);
			GUC_check_errhint("Codecs are lz4, zstd and none, for example 'lz4, lz4, zstd'.");
			pfree(copy);
			list_free(names);
			return false;
		}
		n++;
	}
	for (; n < FST_NUM_LEVELS; n++)
		parsed.codec[n] = parsed.codec[n - 1];
	pfree(copy);
	list_free(names);

	/* PostgreSQL frees extra with free() */
	*extra = malloc(sizeof(CompressionLevels));
	if (*extra == NULL)
	{
		GUC_check_errdetail("out of memory");
		return false;
	}
	memcpy(*extra, &parsed, sizeof(parsed));
	return true;
}

static void
assign_compression(const char *newval, void *extra)
{
	if (extra != NULL)
		memcpy(&current, extra, sizeof(current));
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
}

int
forst_compression_for_level(int level)
{
	if (level < 0)
		level = 0;
	if (level >= FST_NUM_LEVELS)
		level = FST_NUM_LEVELS - 1;
	return current.codec[level];
}
