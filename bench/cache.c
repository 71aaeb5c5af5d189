/*
 * bench/cache.c — the local disk cache (src/store/diskcache.c) under random
 * 4 KiB point reads with a skewed (Zipf) access pattern, over an origin that
 * mimics object storage: every request sleeps latency + bytes / bandwidth.
 *
 * For each caching unit (chunk sizes, whole files) it runs a cold cache of
 * cache-pct % of the data through a warm-up and a measured phase, and
 * compares with reading the origin directly ("no cache") and with a cache
 * that holds everything with the same unit ("all-cached", pre-admitted;
 * "ratio" is the cold 10% cache's throughput over that).
 *
 *	make bench-cache && build/bench_cache [options]
 *	  --objects N		objects (32)			--object-mib M	size each (4)
 *	  --latency-us U	per origin request (1000)
 *	  --bw-mbps B		origin bandwidth, MB/s (100; 0 = infinite)
 *	  --zipf S			skew (1.0)				--cache-pct P	(10)
 *	  --layout L		scattered|clustered: hot blocks spread over all
 *						objects (default) or adjacent in rank order
 *	  --units LIST		chunk sizes in KiB, 0 = whole file
 *						("4,16,32,64,256,1024,0")
 *	  --read-kib K		size of each read (4)
 *	  --unaligned 1		reads start at arbitrary offsets, like SST blocks
 *						(default 0: aligned to the read size)
 *	  --admit2 1		cache a chunk on its second miss (the server's
 *						setting; default 0: on every miss)
 *	  --ops N			measured reads (20000)	--warmup N		(20000)
 *	  --seconds S		cap on each phase (20)	--dir D			(/tmp)
 *
 * Results (dev box: 2 cores, ext4, entries in the page cache; one run per
 * configuration) and the decision (32 KiB chunks) are recorded in
 * src/store/diskcache.h and bench/results/cache-20261130.md.  Summary,
 * 4 KiB reads, 1 ms + 100 MB/s, 10% cache: no cache 849 ops/s, 4 KiB
 * chunks 2003, 32 KiB 1229, 64 KiB 725, 1 MiB 82, whole file 21; all-cached
 * 147k (4 KiB) .. 0.4k (whole file).  32 KiB reads: 32 KiB chunks 1472 vs
 * 64 KiB 1063 vs whole file 25 (no cache 660).
 */
#include "diskcache.h"
#include "rangesrc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static size_t BLOCK = 4096;

static int	n_objects = 32;
static int	object_mib = 4;
static long latency_us = 1000;
static double bw_mbps = 100;
static double zipf_s = 1.0;
static double cache_pct = 10;
static bool clustered = false;
static bool unaligned = false;
static bool admit2 = false;		/* admit_on_second_miss */
static const char *units = "4,16,32,64,256,1024,0";
static long n_ops = 20000;
static long n_warmup = 20000;
static double max_seconds = 20;
static const char *base_dir = "/tmp";

/* ---- the slow origin ---------------------------------------------------- */

typedef struct SlowSource
{
	FstRangeSource base;
	const char *data;
} SlowSource;

static uint64 origin_requests;

static FstCode
slow_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
		  FstError *err)
{
	SlowSource *s = (SlowSource *) src;
	long		us = latency_us;

	if (bw_mbps > 0)
		us += (long) ((double) len / bw_mbps);	/* bytes / (MB/s) = us */
	if (us > 0)
		usleep(us);
	memcpy(buf, s->data + offset, len);
	origin_requests++;
	return FST_OK;
}

static void
slow_close(FstRangeSource *src)
{
	free(src);
}

static FstRangeSource *
slow_source(const char *data, size_t len)
{
	SlowSource *s = calloc(1, sizeof(SlowSource));

	s->base.size = len;
	s->base.read = slow_read;
	s->base.close = slow_close;
	s->data = data;
	return &s->base;
}

/* ---- the access pattern ------------------------------------------------- */

static double *zipf_cdf;
static uint32 *rank_to_block;
static uint64 nblocks;

static uint64
rng_next(uint64 *st)
{
	uint64		x = *st;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*st = x;
	return x * UINT64CONST(2685821657736338717);
}

static void
pattern_init(void)
{
	double		sum = 0;
	uint64		i;
	uint64		st = 12345;

	zipf_cdf = malloc(nblocks * sizeof(double));
	rank_to_block = malloc(nblocks * sizeof(uint32));
	for (i = 0; i < nblocks; i++)
	{
		sum += 1.0 / pow((double) (i + 1), zipf_s);
		zipf_cdf[i] = sum;
		rank_to_block[i] = (uint32) i;
	}
	for (i = 0; i < nblocks; i++)
		zipf_cdf[i] /= sum;
	if (!clustered)
		for (i = nblocks - 1; i > 0; i--)
		{
			uint64		j = rng_next(&st) % (i + 1);
			uint32		t = rank_to_block[i];

			rank_to_block[i] = rank_to_block[j];
			rank_to_block[j] = t;
		}
}

static uint64
pattern_next(uint64 *st)
{
	double		u = (double) (rng_next(st) >> 11) / (double) (UINT64CONST(1) << 53);
	uint64		lo = 0,
				hi = nblocks - 1;

	while (lo < hi)
	{
		uint64		mid = (lo + hi) / 2;

		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return rank_to_block[lo];
}

/* ---- runs --------------------------------------------------------------- */

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef struct RunResult
{
	double		ops_per_sec;
	double		hit_ratio;		/* of chunk lookups, measured phase */
	double		reqs_per_op;	/* origin requests per read */
	double		fetched_per_op; /* origin bytes per read */
	long		ops;
} RunResult;

/* Reads phase: up to n ops or max_seconds; returns ops done. */
static long
phase(FstRangeSource **srcs, long n, uint64 *st, double *elapsed)
{
	static char buf[1024 * 1024];
	FstError	err;
	double		t0 = now_sec();
	long		i;
	uint64		per_obj = (uint64) object_mib * 1024 * 1024 / BLOCK;

	for (i = 0; i < n; i++)
	{
		uint64		b = pattern_next(st);
		FstRangeSource *s = srcs[b / per_obj];

		uint64		off = (b % per_obj) * BLOCK;

		/* SST blocks sit at arbitrary offsets: a fixed shift per block */
		if (unaligned && (b % per_obj) != per_obj - 1)
			off += (b * UINT64CONST(2654435761)) % BLOCK;
		if (fst_range_read(s, off, BLOCK, buf, &err) != FST_OK)
		{
			fprintf(stderr, "read failed: %s\n", err.msg);
			exit(1);
		}
		if ((i & 63) == 0 && now_sec() - t0 > max_seconds)
		{
			i++;
			break;
		}
	}
	*elapsed = now_sec() - t0;
	return i;
}

/* unit_kib < 0: no cache; all: capacity for everything, pre-admitted */
static RunResult
run(char **objs, size_t objlen, long unit_kib, bool all)
{
	RunResult	r = {0};
	FstRangeSource **srcs = calloc(n_objects, sizeof(FstRangeSource *));
	FstDiskCache *cache = NULL;
	FstDiskCacheStats s0,
				s1;
	FstError	err;
	char		dir[512],
				cmd[600];
	uint64		total = (uint64) objlen * n_objects;
	uint64		st = 777;
	uint64		req0;
	double		el;
	int			i;

	snprintf(dir, sizeof(dir), "%s/forst-bench-cache-%d", base_dir, (int) getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		exit(1);
	if (unit_kib >= 0)
	{
		FstDiskCacheOptions o;
		uint64		cap = all ? total + total / 8 + 1024 * 1024
			: (uint64) (total * cache_pct / 100.0);

		fst_diskcache_options_default(&o);
		o.chunk_size = (uint32) unit_kib * 1024;
		o.admit_on_second_miss = admit2 && !all;
		if (fst_diskcache_open(dir, cap, &o, &cache, &err) != FST_OK)
		{
			fprintf(stderr, "open: %s\n", err.msg);
			exit(1);
		}
	}
	for (i = 0; i < n_objects; i++)
	{
		char		key[64];
		FstRangeSource *origin = slow_source(objs[i], objlen);

		snprintf(key, sizeof(key), "bench/sst/%02x/%06d.sst", i & 0xff, i);
		if (cache == NULL)
			srcs[i] = origin;
		else
		{
			if (all)
				fst_diskcache_admit(cache, key, objs[i], objlen, &err);
			if (fst_range_source_cached(cache, origin, key, objlen, &srcs[i], &err) != FST_OK)
			{
				fprintf(stderr, "source: %s\n", err.msg);
				exit(1);
			}
		}
	}
	if (!all)
		phase(srcs, n_warmup, &st, &el);
	if (cache)
		fst_diskcache_stats(cache, &s0);
	req0 = origin_requests;
	r.ops = phase(srcs, n_ops, &st, &el);
	r.ops_per_sec = r.ops / el;
	r.reqs_per_op = (double) (origin_requests - req0) / r.ops;
	if (cache)
	{
		uint64		h,
					m;

		fst_diskcache_stats(cache, &s1);
		h = s1.hits - s0.hits;
		m = s1.misses - s0.misses;
		r.hit_ratio = (h + m) ? (double) h / (h + m) : 0;
		r.fetched_per_op = (double) (s1.bytes_fetched - s0.bytes_fetched) / r.ops;
		if (s1.corrupt_entries)
		{
			fprintf(stderr, "corrupt entries?\n");
			exit(1);
		}
	}
	else
		r.fetched_per_op = BLOCK * r.reqs_per_op;
	for (i = 0; i < n_objects; i++)
		fst_range_close(srcs[i]);
	fst_diskcache_close(cache);
	free(srcs);
	if (system(cmd) != 0)
		exit(1);
	return r;
}

static void
print_row(const char *name, RunResult r, double all_ops)
{
	printf("| %-10s | %5.1f%% | %8.0f | %9.0f | %7.2f%% | %6.3f | %9.0f | %6ld |\n",
		   name, r.hit_ratio * 100, r.ops_per_sec, all_ops,
		   all_ops > 0 ? 100.0 * r.ops_per_sec / all_ops : 0,
		   r.reqs_per_op, r.fetched_per_op, r.ops);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	char	  **objs;
	size_t		objlen;
	RunResult	all,
				none;
	char	   *list,
			   *tok;
	int			i;

	for (i = 1; i + 1 < argc; i += 2)
	{
		const char *a = argv[i],
				   *v = argv[i + 1];

		if (!strcmp(a, "--objects"))
			n_objects = atoi(v);
		else if (!strcmp(a, "--object-mib"))
			object_mib = atoi(v);
		else if (!strcmp(a, "--latency-us"))
			latency_us = atol(v);
		else if (!strcmp(a, "--bw-mbps"))
			bw_mbps = atof(v);
		else if (!strcmp(a, "--zipf"))
			zipf_s = atof(v);
		else if (!strcmp(a, "--cache-pct"))
			cache_pct = atof(v);
		else if (!strcmp(a, "--layout"))
			clustered = !strcmp(v, "clustered");
		else if (!strcmp(a, "--units"))
			units = v;
		else if (!strcmp(a, "--ops"))
			n_ops = atol(v);
		else if (!strcmp(a, "--warmup"))
			n_warmup = atol(v);
		else if (!strcmp(a, "--seconds"))
			max_seconds = atof(v);
		else if (!strcmp(a, "--unaligned"))
			unaligned = atoi(v) != 0;
		else if (!strcmp(a, "--admit2"))
			admit2 = atoi(v) != 0;
		else if (!strcmp(a, "--read-kib"))
			BLOCK = (size_t) atol(v) * 1024;
		else if (!strcmp(a, "--dir"))
			base_dir = v;
		else
		{
			fprintf(stderr, "unknown option %s\n", a);
			return 2;
		}
	}
	objlen = (size_t) object_mib * 1024 * 1024;
	nblocks = (uint64) n_objects * objlen / BLOCK;
	objs = malloc(n_objects * sizeof(char *));
	for (i = 0; i < n_objects; i++)
	{
		uint64		st = 1000 + i;
		size_t		j;

		objs[i] = malloc(objlen);
		for (j = 0; j < objlen; j += 8)
		{
			uint64		x = rng_next(&st);

			memcpy(objs[i] + j, &x, 8);
		}
	}
	pattern_init();

	printf("# disk cache: %d objects x %d MiB, %zu KiB random %sreads, zipf %.2f (%s),"
		   " cache %.0f%%, origin %ld us + %.0f MB/s per request,"
		   " warm-up %ld, measured %ld reads (cap %.0f s per phase)\n\n",
		   n_objects, object_mib, BLOCK / 1024, unaligned ? "unaligned " : "", zipf_s, clustered ? "clustered" : "scattered",
		   cache_pct, latency_us, bw_mbps, n_warmup, n_ops, max_seconds);
	printf("| unit       |  hits  |  ops/s   | all-cached | ratio    | req/op | bytes/op  |  reads |\n");
	printf("|------------|--------|----------|------------|----------|--------|-----------|--------|\n");
	none = run(objs, objlen, -1, false);
	print_row("no cache", none, 0);
	list = strdup(units);
	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
	{
		long		kib = atol(tok);
		char		name[32];
		RunResult	r;

		if (kib == 0)
			snprintf(name, sizeof(name), "whole file");
		else
			snprintf(name, sizeof(name), "%ld KiB", kib);
		all = run(objs, objlen, kib, true);
		r = run(objs, objlen, kib, false);
		print_row(name, r, all.ops_per_sec);
	}
	free(list);
	for (i = 0; i < n_objects; i++)
		free(objs[i]);
	free(objs);
	return 0;
}
