/*-------------------------------------------------------------------------
 *
 * engine.c
 *	  Stand-alone benchmark of the forst SST layer, shaped like RocksDB's
 *	  db_bench so that the two can be run side by side
 *	  (bench/engine_vs_rocksdb.sh).
 *
 *	  build/bench_engine --num N --value-size 100 --key-size 16
 *		  --block-size 32768 --compression lz4|none --bloom-bits 10
 *		  --cache-mb M --small-cache-mb S --reads R --seed S --dir DIR
 *		  --benchmarks fillrandom,readrandom,readrandomsmall,readseq,readmissing
 *
 * Keys and values are generated the way db_bench generates them:
 *
 *	- A user key is the 8-byte big-endian encoding of an integer v in
 *	  [0, num), padded with '0' bytes to --key-size (db_bench's
 *	  GenerateKeyFromInt with keys_per_prefix = 0).  With --unique 1 (the
 *	  default) the num keys are a deterministic shuffle of 0..num-1, which
 *	  is db_bench's "filluniquerandom"; with --unique 0 every v is
 *	  random() % num, which is db_bench's "fillrandom" (about 37% of the
 *	  draws are duplicates; the newest version wins, as a flush would do).
 *
 *	- Values come from a replica of db_bench's RandomGenerator: a ~1 MiB
 *	  buffer built from 100-byte pieces, each made of
 *	  (100 * compression_ratio) random printable characters (' '..'~',
 *	  Park-Miller "Random" seeded with 301, exactly as RocksDB's
 *	  test::RandomString) repeated until the piece is full.  Values are
 *	  consecutive --value-size windows of that buffer (wrapping to the
 *	  start), so with --compression-ratio 0.5 a value is 50 random bytes
 *	  repeated twice and lz4 shrinks it to about half.
 *
 * In the SST file each entry is internal key = key group (2 bytes, always 0
 * here) + user key + sequence (8 bytes, = insertion index + 1), and value =
 * entry header (9 bytes: committed|frozen) + the db_bench value.  MB/s
 * figures count only user key + value bytes (key_size + value_size per
 * entry), as db_bench does.
 *
 * What each benchmark measures:
 *
 *	fillrandom	 the memtable's job reduced to its essence (sorting the keys,
 *				 reported separately as "sort") plus building SST files of
 *				 --target-file-mb through fst_sst_writer_* into an FstFdSink,
 *				 with fsync at the end of every file ("build").  The line's
 *				 time is sort + build; key generation is not counted.
 *	readrandom	 point lookups of existing keys with fst_lookup_get, the
 *				 server's read path (lookup.h), over a manifest whose level
 *				 1 holds the files (one sorted run: the file is chosen by
 *				 binary search over the key ranges), the value checked byte
 *				 for byte and its sequence number checked too.  A warm-up pass of the
 *				 same length runs first (reported as readrandom_warmup),
 *				 with a block cache of --cache-mb (big enough to hold every
 *				 block: "cached point lookups").
 *	readrandomsmall  the same with a fresh cache of --small-cache-mb.
 *	readmissing	 lookups of absent keys (the db_bench way: the key with one
 *				 more '0' byte), reporting how many the bloom filters
 *				 answered alone.
 *	readseq		 a full scan of all files with fst_sst_iter_create.
 *
 * Any mismatch is fatal (exit status 1).  Files are removed at the end
 * unless --keep.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"
#include "ikey.h"
#include "iter.h"
#include "block.h"
#include "rangesrc.h"
#include "sst.h"
#include "blockcache.h"
#include "lookup.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* options */

static int64 opt_num = 1000000;
static int	opt_value_size = 100;
static int	opt_key_size = 16;
static int	opt_block_size = 32768;
static int	opt_compression = FST_COMPRESS_LZ4;
static int	opt_bloom_bits = 10;
static int	opt_restart_interval = 0;	/* 0 = engine default */
static int64 opt_cache_mb = 512;
static int64 opt_small_cache_mb = 8;
static int64 opt_reads = -1;	/* -1 = num */
static uint64 opt_seed = 42;
static const char *opt_dir = "/tmp/forst-bench";
static const char *opt_benchmarks = "fillrandom,readrandom,readseq,readmissing";
static bool opt_keep = false;
static bool opt_unique = true;
static bool opt_warmup = true;
static double opt_compression_ratio = 0.5;
static int64 opt_target_file_mb = 64;
static bool opt_verify_checksums = true;

#define KG 0
#define ENTRY_XID 1000

static void
die(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench_engine: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void
check(FstCode c, const FstError *err, const char *what)
{
	if (c != FST_OK)
		die("%s failed: %s: %s", what, fst_code_name(c),
			err ? err->msg : "");
}

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------------- */
/* random numbers */

/* splitmix64: the benchmark's own PRNG (keys, lookups). */
typedef struct Rng
{
	uint64		s;
} Rng;

static inline uint64
rng_next(Rng *r)
{
	uint64		z = (r->s += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static inline uint64
rng_uniform(Rng *r, uint64 n)
{
	return rng_next(r) % n;
}

/* RocksDB's util/random.h Random (Park-Miller minimal standard). */
typedef struct PmRandom
{
	uint32		seed;
} PmRandom;

static void
pm_init(PmRandom *r, uint32 s)
{
	r->seed = s & 0x7fffffffu;
	if (r->seed == 0 || r->seed == 2147483647u)
		r->seed = 1;
}

static uint32
pm_next(PmRandom *r)
{
	const uint32 M = 2147483647u;
	const uint64 A = 16807;
	uint64		product = r->seed * A;

	r->seed = (uint32) ((product >> 31) + (product & M));
	if (r->seed > M)
		r->seed -= M;
	return r->seed;
}

/* ---------------------------------------------------------------------- */
/* db_bench's value generator (tools/db_bench_tool.cc RandomGenerator) */

static char *gen_data;
static size_t gen_size;

static void
gen_init(void)
{
	PmRandom	rnd;
	size_t		want = Max((size_t) 1048576, (size_t) opt_value_size);
	size_t		cap = want + 200;
	int			raw = (int) (100 * opt_compression_ratio);
	char		piece[100];
	char		rawbuf[100];

	if (raw < 1)
		raw = 1;
	if (raw > 100)
		raw = 100;
	gen_data = malloc(cap);
	if (!gen_data)
		die("out of memory");
	pm_init(&rnd, 301);
	gen_size = 0;
	while (gen_size < want)
	{
		/* test::CompressibleString(&rnd, ratio, 100, &piece) */
		for (int i = 0; i < raw; i++)
			rawbuf[i] = (char) (' ' + pm_next(&rnd) % 95);
		for (int i = 0; i < 100; i++)
			piece[i] = rawbuf[i % raw];
		if (gen_size + 100 > cap)
		{
			cap *= 2;
			gen_data = realloc(gen_data, cap);
			if (!gen_data)
				die("out of memory");
		}
		memcpy(gen_data + gen_size, piece, 100);
		gen_size += 100;
	}
}

/* Generate(len): the offset of the next value in gen_data. */
static size_t gen_pos = 0;

static uint32
gen_next_offset(void)
{
	size_t		len = (size_t) opt_value_size;

	if (gen_pos + len > gen_size)
		gen_pos = 0;
	gen_pos += len;
	return (uint32) (gen_pos - len);
}

/* ---------------------------------------------------------------------- */
/* keys */

/* db_bench GenerateKeyFromInt (keys_per_prefix == 0). */
static void
make_key(char *dst, uint64 v, int key_size)
{
	int			n = Min(key_size, 8);

	for (int i = 0; i < n; i++)
		dst[i] = (char) ((v >> ((n - i - 1) * 8)) & 0xFF);
	if (key_size > n)
		memset(dst + n, '0', key_size - n);
}

/* user part = key group (2 bytes BE) + user key */
static size_t
make_user_part(char *dst, uint64 v, int key_size)
{
	fst_put_be16(dst, KG);
	make_key(dst + FST_KG_BYTES, v, key_size);
	return FST_KG_BYTES + key_size;
}

/* The data set: what was inserted, in insertion order. */
static uint64 *ins_v;			/* key integer of insertion i */
static uint32 *ins_off;			/* value offset in gen_data of insertion i */
static int64 *latest;			/* v -> newest insertion index, -1 if absent */
static int64 num_distinct;

/* ---------------------------------------------------------------------- */
/* files */

typedef struct BenchFile
{
	char	   *path;
	uint64		id;
	uint64		size;
	uint64		entries;
	char	   *smallest_up;	/* user parts (internal key minus seq) */
	size_t		smallest_len;
	char	   *largest_up;
	size_t		largest_len;
	/* open state */
	FstRangeSource *src;
	FstSstReader *reader;
} BenchFile;

static double fsync_secs;		/* time spent in fsync during fillrandom */
static BenchFile *files;
static int	nfiles;
static uint64 total_file_bytes;

static char *
dup_bytes(const char *p, size_t n)
{
	char	   *d = malloc(n ? n : 1);

	if (!d)
		die("out of memory");
	memcpy(d, p, n);
	return d;
}

/* ---------------------------------------------------------------------- */
/* reporting */

static void
report(const char *name, double secs, int64 ops, double bytes,
	   const char *extra)
{
	double		us = ops > 0 ? secs * 1e6 / (double) ops : 0;
	double		opsps = secs > 0 ? (double) ops / secs : 0;

	printf("%-12s : %11.3f micros/op %.0f ops/sec %.3f seconds %lld operations;",
		   name, us, opsps, secs, (long long) ops);
	if (bytes > 0)
		printf(" %6.1f MB/s", bytes / 1048576.0 / secs);
	if (extra && *extra)
		printf(" %s", extra);
	printf("\n");
	fflush(stdout);
}

/* ---------------------------------------------------------------------- */
/* fillrandom */

static size_t rec_size;			/* key bytes + 4-byte index + 4-byte value
								 * offset, 8-aligned */
static int	sort_key_size;

static int
rec_cmp(const void *a, const void *b)
{
	int			r = memcmp(a, b, sort_key_size);
	uint32		ia,
				ib;

	if (r != 0)
		return r;
	memcpy(&ia, (const char *) a + sort_key_size, 4);
	memcpy(&ib, (const char *) b + sort_key_size, 4);
	/* newest first, as internal keys order versions */
	return (ia > ib) ? -1 : (ia < ib) ? 1 : 0;
}

static void
generate_keys(void)
{
	Rng			rng = {opt_seed * UINT64CONST(0x2545F4914F6CDD1D) + 1};

	ins_v = malloc(sizeof(uint64) * opt_num);
	ins_off = malloc(sizeof(uint32) * opt_num);
	latest = malloc(sizeof(int64) * opt_num);
	if (!ins_v || !ins_off || !latest)
		die("out of memory");
	if (opt_unique)
	{
		for (int64 i = 0; i < opt_num; i++)
			ins_v[i] = (uint64) i;
		for (int64 i = opt_num - 1; i > 0; i--)
		{
			int64		j = (int64) rng_uniform(&rng, (uint64) i + 1);
			uint64		t = ins_v[i];

			ins_v[i] = ins_v[j];
			ins_v[j] = t;
		}
	}
	else
	{
		for (int64 i = 0; i < opt_num; i++)
			ins_v[i] = rng_uniform(&rng, (uint64) opt_num);
	}
	for (int64 i = 0; i < opt_num; i++)
		latest[i] = -1;
	num_distinct = 0;
	gen_pos = 0;
	for (int64 i = 0; i < opt_num; i++)
	{
		ins_off[i] = gen_next_offset();
		if (latest[ins_v[i]] < 0)
			num_distinct++;
		latest[ins_v[i]] = i;
	}
}

static void
file_path(char *buf, size_t n, uint64 id)
{
	snprintf(buf, n, "%s/%06llu.sst", opt_dir, (unsigned long long) id);
}

static void
fill_options(FstSstOptions *o)
{
	fst_sst_options_default(o);
	o->block_size = (size_t) opt_block_size;
	o->compression = opt_compression;
	o->bloom_bits_per_key = opt_bloom_bits;
	if (opt_restart_interval > 0)
		o->restart_interval = opt_restart_interval;
}

/* Finishes the open SST file: metadata, footer, fsync, close. */
static void
finish_file(FstSstWriter **wp, int *fdp, const char *path, uint64 *next_id,
			int *files_capp)
{
	FstSstWriter *w = *wp;
	int			fd = *fdp;
	int			files_cap = *files_capp;
	FstError	err;
	FstSstProps props;
	BenchFile  *f;

	fst_sst_props_init(&props);
	check(fst_sst_writer_finish(w, &props, &err), &err,
		  "fst_sst_writer_finish");
	fst_sst_writer_destroy(w);
	w = NULL;
	{
		double		t = now_sec();

		if (fsync(fd) != 0)
			die("fsync: %s", strerror(errno));
		fsync_secs += now_sec() - t;
	}
	if (close(fd) != 0)
		die("close: %s", strerror(errno));
	fd = -1;
	if (nfiles == files_cap)
	{
		files_cap *= 2;
		files = realloc(files, files_cap * sizeof(BenchFile));
		if (!files)
			die("out of memory");
	}
	f = &files[nfiles++];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	f->id = (*next_id)++;
	f->entries = props.num_entries;
	if (props.smallest.len < FST_IKEY_OVERHEAD ||
		props.largest.len < FST_IKEY_OVERHEAD)
		die("file %s has no key range in its properties", path);
	f->smallest_len = props.smallest.len - FST_SEQ_BYTES;
	f->smallest_up = dup_bytes(props.smallest.data, f->smallest_len);
	f->largest_len = props.largest.len - FST_SEQ_BYTES;
	f->largest_up = dup_bytes(props.largest.data, f->largest_len);
	{
		struct stat st;

		if (stat(path, &st) != 0)
			die("stat %s: %s", path, strerror(errno));
		f->size = (uint64) st.st_size;
		if (props.file_size && props.file_size != f->size)
			die("file %s: props say %llu bytes, stat says %llu", path,
				(unsigned long long) props.file_size,
				(unsigned long long) f->size);
	}
	total_file_bytes += f->size;
	fst_sst_props_free(&props);
	*wp = NULL;
	*fdp = -1;
	*files_capp = files_cap;
}

static void
bench_fillrandom(void)
{
	char	   *recs;
	double		t0,
				t1,
				t2;
	FstSstOptions sopt;
	FstSstWriter *w = NULL;
	FstFdSink	sink;
	int			fd = -1;
	uint64		next_id = 1;
	uint64		target = (uint64) opt_target_file_mb * 1024 * 1024;
	char		path[1024];
	char	   *ikey;
	char	   *val;
	size_t		vlen = FST_ENTRY_HEADER_SIZE + opt_value_size;
	FstError	err;
	int64		written = 0;
	const char *prev = NULL;
	char		extra[512];
	int			files_cap = 16;

	fill_options(&sopt);
	files = calloc(files_cap, sizeof(BenchFile));
	nfiles = 0;
	total_file_bytes = 0;

	/* the "memtable": key bytes + insertion index, sorted */
	sort_key_size = opt_key_size;
	rec_size = TYPEALIGN(8, opt_key_size + 8);
	recs = malloc(rec_size * opt_num);
	ikey = malloc(opt_key_size + FST_IKEY_OVERHEAD);
	val = malloc(vlen);
	if (!recs || !ikey || !val || !files)
		die("out of memory");

	t0 = now_sec();
	for (int64 i = 0; i < opt_num; i++)
	{
		char	   *r = recs + rec_size * i;
		uint32		idx = (uint32) i;

		make_key(r, ins_v[i], opt_key_size);
		memcpy(r + opt_key_size, &idx, 4);
		memcpy(r + opt_key_size + 4, &ins_off[i], 4);
	}
	qsort(recs, opt_num, rec_size, rec_cmp);
	t1 = now_sec();

	fst_entry_header_encode(val, FST_ENTRY_COMMITTED | FST_ENTRY_FROZEN,
							ENTRY_XID, 0);
	for (int64 i = 0; i < opt_num; i++)
	{
		const char *r = recs + rec_size * i;
		uint32		idx,
					off;
		size_t		klen;
		FstCode		c;

		if (prev && memcmp(prev, r, opt_key_size) == 0)
			continue;			/* an older version: a flush drops it */
		prev = r;
		memcpy(&idx, r + opt_key_size, 4);
		memcpy(&off, r + opt_key_size + 4, 4);

		if (w == NULL)
		{
			file_path(path, sizeof(path), next_id);
			fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0)
				die("could not create \"%s\": %s", path, strerror(errno));
			fst_fd_sink_init(&sink, fd);
			check(fst_sst_writer_create(&sopt, &sink.base, &w, &err), &err,
				  "fst_sst_writer_create");
		}
		klen = fst_ikey_build(ikey, KG, r, opt_key_size, (uint64) idx + 1);
		/* the value travels with the key, as in a memtable entry */
		memcpy(val + FST_ENTRY_HEADER_SIZE, gen_data + off, opt_value_size);
		c = fst_sst_writer_add(w, fst_slice(ikey, klen), fst_slice(val, vlen),
							   &err);
		check(c, &err, "fst_sst_writer_add");
		written++;

		if (fst_sst_writer_estimated_size(w) >= target)
			finish_file(&w, &fd, path, &next_id, &files_cap);
	}
	if (w != NULL)
		finish_file(&w, &fd, path, &next_id, &files_cap);
	/* directory entry durability, as a flush would do */
	{
		int			dfd = open(opt_dir, O_RDONLY | O_DIRECTORY);

		if (dfd >= 0)
		{
			(void) fsync(dfd);
			close(dfd);
		}
	}
	t2 = now_sec();

	if (written != num_distinct)
		die("wrote %lld entries, expected %lld distinct keys",
			(long long) written, (long long) num_distinct);

	{
		double		user_bytes = (double) opt_num * (opt_key_size + opt_value_size);
		double		sst_user_bytes = (double) written * (opt_key_size + opt_value_size);

		snprintf(extra, sizeof(extra),
				 "(sort %.3f s, build %.3f s = %.0f entries/s %.1f MB/s, "
				 "of which fsync %.3f s; "
				 "%lld distinct; %d files, %.1f MB on disk, %.3f of raw)",
				 t1 - t0, t2 - t1, (double) written / (t2 - t1),
				 sst_user_bytes / 1048576.0 / (t2 - t1), fsync_secs,
				 (long long) written, nfiles,
				 (double) total_file_bytes / 1048576.0,
				 (double) total_file_bytes / sst_user_bytes);
		report("fillrandom", t2 - t0, opt_num, user_bytes, extra);
	}
	free(recs);
	free(ikey);
	free(val);
}

/* ---------------------------------------------------------------------- */
/* opening */

static FstBlockCache *cache;
static FstManifest manifest;	/* level 1: the files; file_id = index */
static FstBuf lookup_entry;		/* the winner's entry, reused */

/* fst_lookup_get's reader callback: the open reader of files[file_id]. */
static FstCode
lookup_reader(void *arg, const FstFileMeta *f, FstSstReader **r, FstError *err)
{
	*r = files[f->file_id].reader;
	return FST_OK;
}

/* fst_lookup_get's alloc callback: one buffer, reused for every lookup. */
static void *
lookup_alloc(void *arg, size_t n)
{
	fst_buf_reset(&lookup_entry);
	if (!fst_buf_reserve(&lookup_entry, n))
		return NULL;
	return lookup_entry.data;
}

static void
lookup_setup(FstLookup *lk, bool want_entry)
{
	fst_lookup_init(lk);
	lk->manifest = &manifest;
	lk->reader = lookup_reader;
	lk->want_entry = want_entry;
	lk->alloc = lookup_alloc;
}

static void
open_all(int64 cache_mb)
{
	FstError	err;

	cache = cache_mb > 0 ? fst_block_cache_create((size_t) cache_mb * 1024 * 1024) : NULL;
	if (cache_mb > 0 && cache == NULL)
		die("fst_block_cache_create failed");
	for (int i = 0; i < nfiles; i++)
	{
		BenchFile  *f = &files[i];
		FstSstReadOptions ro;

		check(fst_range_source_file(f->path, &f->src, &err), &err,
			  "fst_range_source_file");
		fst_sst_read_options_default(&ro);
		ro.verify_checksums = opt_verify_checksums;
		ro.cache = cache;
		ro.cache_id = f->id;
		check(fst_sst_open(f->src, &ro, &f->reader, &err), &err, "fst_sst_open");
	}

	/* the files as one sorted run, for fst_lookup_get */
	fst_manifest_init(&manifest);
	for (int i = 0; i < nfiles; i++)
	{
		FstFileMeta meta;

		memset(&meta, 0, sizeof(meta));
		if (!fst_sst_props_to_filemeta(fst_sst_props(files[i].reader), &meta))
			die("out of memory");
		meta.file_id = (uint64) i;
		check(fst_manifest_append_file(&manifest, 1, &meta, NULL, &err), &err,
			  "fst_manifest_append_file");
		fst_filemeta_clear(&meta);
	}
}

static void
close_all(void)
{
	for (int i = 0; i < nfiles; i++)
	{
		fst_sst_close(files[i].reader);
		files[i].reader = NULL;
		fst_range_close(files[i].src);
		files[i].src = NULL;
	}
	if (cache)
		fst_block_cache_destroy(cache);
	cache = NULL;
	fst_manifest_free(&manifest);
	fst_buf_free(&lookup_entry);
}

static void
sum_stats(FstSstReaderStats *s, uint64 *src_reads)
{
	memset(s, 0, sizeof(*s));
	*src_reads = 0;
	for (int i = 0; i < nfiles; i++)
	{
		const FstSstReaderStats *r = fst_sst_reader_stats(files[i].reader);

		s->bloom_checks += r->bloom_checks;
		s->bloom_negatives += r->bloom_negatives;
		s->block_reads += r->block_reads;
		s->cache_hits += r->cache_hits;
		*src_reads += files[i].src->reads;
	}
}

/* The file whose [smallest, largest] holds the user part, or -1. */
static int
find_file(FstSlice up)
{
	int			lo = 0,
				hi = nfiles;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (fst_slice_cmp(fst_slice(files[mid].largest_up,
									files[mid].largest_len), up) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == nfiles)
		return -1;
	if (fst_slice_cmp(up, fst_slice(files[lo].smallest_up,
									files[lo].smallest_len)) < 0)
		return -1;
	return lo;
}

/* ---------------------------------------------------------------------- */
/* readrandom / readmissing */

static void
stats_extra(char *buf, size_t n, const FstSstReaderStats *a,
			const FstSstReaderStats *b, uint64 ra, uint64 rb)
{
	FstBlockCacheStats cs;

	memset(&cs, 0, sizeof(cs));
	if (cache)
		fst_block_cache_stats(cache, &cs);
	snprintf(buf, n,
			 "[bloom %llu checks %llu negatives; %llu block reads, "
			 "%llu cache hits, %llu source reads; cache %.1f/%.1f MB %zu blocks]",
			 (unsigned long long) (b->bloom_checks - a->bloom_checks),
			 (unsigned long long) (b->bloom_negatives - a->bloom_negatives),
			 (unsigned long long) (b->block_reads - a->block_reads),
			 (unsigned long long) (b->cache_hits - a->cache_hits),
			 (unsigned long long) (rb - ra),
			 cs.charge / 1048576.0, cs.capacity / 1048576.0, cs.entries);
}

static int64
read_pass(const char *name, int64 reads, uint64 seed, bool print)
{
	Rng			rng = {seed};
	char		up[FST_KG_BYTES + 64];
	FstLookup	lk;
	FstError	err;
	int64		found = 0,
				mismatches = 0,
				nofile = 0;
	size_t		vlen = FST_ENTRY_HEADER_SIZE + opt_value_size;
	FstSstReaderStats s0,
				s1;
	uint64		r0,
				r1;
	double		t0,
				t1;
	char		extra[640];
	char		st[400];

	lookup_setup(&lk, true);
	sum_stats(&s0, &r0);
	t0 = now_sec();
	for (int64 i = 0; i < reads; i++)
	{
		uint64		v;
		int64		idx;
		size_t		uplen;
		FstLookupHit hit;
		FstCode		c;

		do
		{
			v = rng_uniform(&rng, (uint64) opt_num);
			idx = latest[v];
		} while (idx < 0);
		uplen = make_user_part(up, v, opt_key_size);
		c = fst_lookup_get(&lk, fst_slice(up, uplen), &hit, &err);
		check(c, &err, "fst_lookup_get");
		if (!hit.found || (hit.hdr.flags & FST_ENTRY_TOMBSTONE))
		{
			if (find_file(fst_slice(up, uplen)) < 0)
				nofile++;
			mismatches++;
			continue;
		}
		found++;
		if (hit.hdr.seq != (uint64) idx + 1 || hit.value.len != vlen ||
			memcmp(hit.value.data + FST_ENTRY_HEADER_SIZE, gen_data + ins_off[idx],
				   opt_value_size) != 0)
			mismatches++;
	}
	t1 = now_sec();
	sum_stats(&s1, &r1);

	if (mismatches)
	{
		fprintf(stderr, "bench_engine: %s: %lld of %lld lookups wrong "
				"(%lld outside every file's range)\n", name,
				(long long) mismatches, (long long) reads, (long long) nofile);
		exit(1);
	}
	if (print)
	{
		stats_extra(st, sizeof(st), &s0, &s1, r0, r1);
		snprintf(extra, sizeof(extra), "(%lld of %lld found) %s",
				 (long long) found, (long long) reads, st);
		report(name, t1 - t0, reads,
			   (double) found * (opt_key_size + opt_value_size), extra);
	}
	return found;
}

static void
bench_readrandom(const char *name, int64 cache_mb)
{
	int64		reads = opt_reads < 0 ? opt_num : opt_reads;
	char		wname[64];

	open_all(cache_mb);
	if (opt_warmup)
	{
		snprintf(wname, sizeof(wname), "%s_warmup", name);
		read_pass(wname, reads, opt_seed * 31 + 7, true);
	}
	read_pass(name, reads, opt_seed * 31 + 11, true);
	close_all();
}

static void
bench_readmissing(void)
{
	int64		reads = opt_reads < 0 ? opt_num : opt_reads;
	Rng			rng = {opt_seed * 31 + 13};
	char		up[FST_KG_BYTES + 65];
	FstLookup	lk;
	FstError	err;
	int64		found = 0,
				nofile = 0;
	FstSstReaderStats s0,
				s1;
	uint64		r0,
				r1;
	double		t0,
				t1;
	char		extra[700];
	char		st[400];

	open_all(opt_cache_mb);
	lookup_setup(&lk, false);
	sum_stats(&s0, &r0);
	t0 = now_sec();
	for (int64 i = 0; i < reads; i++)
	{
		uint64		v = rng_uniform(&rng, (uint64) opt_num);
		size_t		uplen;
		FstLookupHit hit;
		uint64		checks = lk.stats.bloom_checks;

		/* db_bench readmissing: the key one byte longer (another '0') */
		uplen = make_user_part(up, v, opt_key_size);
		up[uplen++] = '0';
		check(fst_lookup_get(&lk, fst_slice(up, uplen), &hit, &err), &err,
			  "fst_lookup_get");
		if (lk.stats.bloom_checks == checks)
			nofile++;			/* no file's range holds it */
		if (hit.found)
			found++;
	}
	t1 = now_sec();
	sum_stats(&s1, &r1);
	if (found)
		die("readmissing: %lld absent keys were found", (long long) found);
	stats_extra(st, sizeof(st), &s0, &s1, r0, r1);
	{
		uint64		checks = s1.bloom_checks - s0.bloom_checks;
		uint64		neg = s1.bloom_negatives - s0.bloom_negatives;

		snprintf(extra, sizeof(extra),
				 "(0 of %lld found; %lld outside all ranges; bloom negative "
				 "rate %.2f%% of %llu checked, false positive rate %.2f%%) %s",
				 (long long) reads, (long long) nofile,
				 checks ? 100.0 * neg / checks : 0.0,
				 (unsigned long long) checks,
				 checks ? 100.0 * (checks - neg) / checks : 0.0, st);
	}
	report("readmissing", t1 - t0, reads, 0, extra);
	close_all();
}

/* ---------------------------------------------------------------------- */
/* readseq */

static void
bench_readseq(void)
{
	int64		n = 0;
	double		bytes = 0;
	double		t0,
				t1;
	FstError	err;
	char		extra[128];
	uint64		ukey_len = opt_key_size;

	open_all(opt_cache_mb);
	t0 = now_sec();
	for (int i = 0; i < nfiles; i++)
	{
		FstIter    *it = fst_sst_iter_create(files[i].reader);

		if (it == NULL)
			die("fst_sst_iter_create failed");
		for (fst_iter_seek_first(it); fst_iter_valid(it); fst_iter_next(it))
		{
			FstSlice	k = fst_iter_key(it);
			FstSlice	v = fst_iter_value(it);

			n++;
			bytes += (double) (k.len - FST_IKEY_OVERHEAD) +
				(double) (v.len - FST_ENTRY_HEADER_SIZE);
			if (k.len != ukey_len + FST_IKEY_OVERHEAD)
				die("readseq: key of %zu bytes", k.len);
		}
		check(fst_iter_status(it, &err), &err, "readseq iterator");
		fst_iter_destroy(it);
	}
	t1 = now_sec();
	if (n != num_distinct)
		die("readseq: %lld entries, expected %lld", (long long) n,
			(long long) num_distinct);
	snprintf(extra, sizeof(extra), "(%lld entries, %d files)", (long long) n,
			 nfiles);
	report("readseq", t1 - t0, n, bytes, extra);
	close_all();
}

/* ---------------------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr,
			"usage: bench_engine [--num N] [--value-size 100] [--key-size 16]\n"
			"  [--block-size 32768] [--compression lz4|none] [--bloom-bits 10]\n"
			"  [--restart-interval K] [--cache-mb 512] [--small-cache-mb 8]\n"
			"  [--reads R] [--seed S] [--dir DIR] [--target-file-mb 64]\n"
			"  [--compression-ratio 0.5] [--unique 0|1] [--no-warmup] [--keep]\n"
			"  [--no-verify-checksums]\n"
			"  [--benchmarks fillrandom,readrandom,readrandomsmall,readseq,readmissing]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static struct option longopts[] = {
		{"num", required_argument, NULL, 'n'},
		{"value-size", required_argument, NULL, 'v'},
		{"key-size", required_argument, NULL, 'k'},
		{"block-size", required_argument, NULL, 'b'},
		{"compression", required_argument, NULL, 'c'},
		{"bloom-bits", required_argument, NULL, 'f'},
		{"restart-interval", required_argument, NULL, 'i'},
		{"cache-mb", required_argument, NULL, 'm'},
		{"small-cache-mb", required_argument, NULL, 'M'},
		{"reads", required_argument, NULL, 'r'},
		{"seed", required_argument, NULL, 's'},
		{"dir", required_argument, NULL, 'd'},
		{"benchmarks", required_argument, NULL, 'B'},
		{"target-file-mb", required_argument, NULL, 't'},
		{"compression-ratio", required_argument, NULL, 'R'},
		{"unique", required_argument, NULL, 'u'},
		{"no-warmup", no_argument, NULL, 'W'},
		{"keep", no_argument, NULL, 'K'},
		{"no-verify-checksums", no_argument, NULL, 'X'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	int			ch;
	char	   *list;
	char	   *tok;
	bool		filled = false;

	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		switch (ch)
		{
			case 'n':
				opt_num = atoll(optarg);
				break;
			case 'v':
				opt_value_size = atoi(optarg);
				break;
			case 'k':
				opt_key_size = atoi(optarg);
				break;
			case 'b':
				opt_block_size = atoi(optarg);
				break;
			case 'c':
				if (strcmp(optarg, "lz4") == 0)
					opt_compression = FST_COMPRESS_LZ4;
				else if (strcmp(optarg, "none") == 0)
					opt_compression = FST_COMPRESS_NONE;
				else
					die("unknown compression \"%s\" (lz4 or none)", optarg);
				break;
			case 'f':
				opt_bloom_bits = atoi(optarg);
				break;
			case 'i':
				opt_restart_interval = atoi(optarg);
				break;
			case 'm':
				opt_cache_mb = atoll(optarg);
				break;
			case 'M':
				opt_small_cache_mb = atoll(optarg);
				break;
			case 'r':
				opt_reads = atoll(optarg);
				break;
			case 's':
				opt_seed = strtoull(optarg, NULL, 10);
				break;
			case 'd':
				opt_dir = optarg;
				break;
			case 'B':
				opt_benchmarks = optarg;
				break;
			case 't':
				opt_target_file_mb = atoll(optarg);
				break;
			case 'R':
				opt_compression_ratio = atof(optarg);
				break;
			case 'u':
				opt_unique = atoi(optarg) != 0;
				break;
			case 'W':
				opt_warmup = false;
				break;
			case 'K':
				opt_keep = true;
				break;
			case 'X':
				opt_verify_checksums = false;
				break;
			default:
				usage();
		}
	}
	if (optind < argc || opt_num <= 0 || opt_num > (int64) PG_UINT32_MAX ||
		opt_value_size <= 0 || opt_key_size < 8 || opt_key_size > 64 ||
		opt_block_size <= 0 || opt_target_file_mb <= 0)
		usage();

	if (mkdir(opt_dir, 0755) != 0 && errno != EEXIST)
		die("could not create \"%s\": %s", opt_dir, strerror(errno));

	printf("forst bench_engine: num %lld, key %d, value %d, block %d, %s, "
		   "bloom %d bits/key, cache %lld MB (small %lld MB), reads %lld, "
		   "seed %llu, %s keys, target file %lld MB, dir %s\n",
		   (long long) opt_num, opt_key_size, opt_value_size, opt_block_size,
		   opt_compression == FST_COMPRESS_LZ4 ? "lz4" : "none", opt_bloom_bits,
		   (long long) opt_cache_mb, (long long) opt_small_cache_mb,
		   (long long) (opt_reads < 0 ? opt_num : opt_reads),
		   (unsigned long long) opt_seed, opt_unique ? "unique" : "random",
		   (long long) opt_target_file_mb, opt_dir);
	printf("------------------------------------------------\n");

	gen_init();
	generate_keys();

	list = strdup(opt_benchmarks);
	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
	{
		if (strcmp(tok, "fillrandom") == 0)
		{
			if (filled)
				die("fillrandom can run only once");
			bench_fillrandom();
			filled = true;
			continue;
		}
		if (!filled)
			die("%s needs fillrandom first", tok);
		if (strcmp(tok, "readrandom") == 0)
			bench_readrandom("readrandom", opt_cache_mb);
		else if (strcmp(tok, "readrandomsmall") == 0)
			bench_readrandom("readrandomsmall", opt_small_cache_mb);
		else if (strcmp(tok, "readmissing") == 0)
			bench_readmissing();
		else if (strcmp(tok, "readseq") == 0)
			bench_readseq();
		else
			die("unknown benchmark \"%s\"", tok);
	}
	free(list);

	for (int i = 0; i < nfiles; i++)
	{
		if (!opt_keep && unlink(files[i].path) != 0)
			fprintf(stderr, "bench_engine: could not remove %s: %s\n",
					files[i].path, strerror(errno));
		free(files[i].path);
		free(files[i].smallest_up);
		free(files[i].largest_up);
	}
	if (!opt_keep)
		(void) rmdir(opt_dir);	/* only if empty */
	free(files);
	free(ins_v);
	free(ins_off);
	free(latest);
	free(gen_data);
	return 0;
}
