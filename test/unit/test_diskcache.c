/*
 * test_diskcache.c — the local disk cache of SST chunks: hits and misses
 * over a counted origin, chunk-spanning and edge reads, SSTs read through
 * the cache, the byte bound (measured on disk), LRU under a scan, restart,
 * corruption, write-through admission, evict_key, and two processes
 * sharing a directory.
 */
#include "sst_testutil.h"
#include "diskcache.h"
#include "source_testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define KiB 1024

static void
dc_dir(const char *name, char *dir, size_t len)
{
	snprintf(dir, len, "%s/dc_%s", fst_test_tmpdir(), name);
}

static char *
dc_data(size_t len, uint64 seed)
{
	char	   *d = fst_malloc(len ? len : 1);
	uint64		st = seed | 1;
	size_t		i;

	for (i = 0; i < len; i++)
		d[i] = (char) (fst_rand_next(&st) >> 56);
	return d;
}

/* Bytes of every regular file under dir and its subdirectories. */
static uint64
dir_bytes(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	uint64		total = 0;
	char		path[1024];

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
	{
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			total += dir_bytes(path);
		else if (S_ISREG(st.st_mode))
			total += (uint64) st.st_size;
	}
	closedir(d);
	return total;
}

static FstDiskCache *
dc_open(const char *dir, uint64 cap, uint32 chunk, FstError *err)
{
	FstDiskCacheOptions o;
	FstDiskCache *c = NULL;

	fst_diskcache_options_default(&o);
	o.chunk_size = chunk;
	if (fst_diskcache_open(dir, cap, &o, &c, err) != FST_OK)
		return NULL;
	return c;
}

/* A cached source over data (an in-memory origin, counted). */
static FstRangeSource *
dc_source(FstDiskCache *c, const char *key, const char *data, size_t len,
		  FstRangeSource **origin_out, FstError *err)
{
	FstRangeSource *origin = fst_range_source_memory(data, len, false);
	FstRangeSource *src = NULL;

	if (origin == NULL)
		return NULL;
	if (fst_range_source_cached(c, origin, key, 0, &src, err) != FST_OK)
	{
		fst_range_close(origin);
		return NULL;
	}
	*origin_out = origin;
	return src;
}

static bool
read_check(FstRangeSource *src, const char *data, uint64 off, size_t len,
		   FstError *err)
{
	char	   *buf = fst_malloc(len ? len : 1);
	bool		ok;

	ok = fst_range_read(src, off, len, buf, err) == FST_OK &&
		(len == 0 || memcmp(buf, data + off, len) == 0);
	fst_free(buf);
	return ok;
}

FST_TEST(diskcache_hit_miss_edges)
{
	char		dir[600];
	FstError	err;
	size_t		len = 1000003;	/* not a multiple of the chunk */
	char	   *data = dc_data(len, 1);
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;
	FstDiskCacheStats st;
	uint64		rs = fst_test_seed();
	char		b;
	int			i;

	dc_dir("hitmiss", dir, sizeof(dir));
	c = dc_open(dir, 4 * 1024 * KiB, 64 * KiB, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	src = dc_source(c, "t/sst/00/1.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(src->size == len);

	/* a miss, then the same range is a hit: no second origin read */
	CHECK(read_check(src, data, 100, 4900, &err));
	CHECK_EQ_INT(origin->reads, 1);
	CHECK_EQ_INT(origin->bytes_read, 64 * KiB);
	CHECK(read_check(src, data, 100, 4900, &err));
	CHECK(read_check(src, data, 0, 64 * KiB, &err));
	CHECK_EQ_INT(origin->reads, 1);
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.hits, 2);
	CHECK_EQ_INT(st.misses, 1);

	/* spanning chunks 0 (cached) and 1 (not): one origin read */
	CHECK(read_check(src, data, 60000, 10000, &err));
	CHECK_EQ_INT(origin->reads, 2);
	/* spanning 3 missing chunks: one origin read for the run */
	CHECK(read_check(src, data, 3 * 64 * KiB - 10, 2 * 64 * KiB + 20, &err));
	CHECK_EQ_INT(origin->reads, 3);
	CHECK(read_check(src, data, 2 * 64 * KiB, 3 * 64 * KiB, &err));
	CHECK_EQ_INT(origin->reads, 3);

	/* the short last chunk, the last byte, the whole file */
	CHECK(read_check(src, data, len - 100, 100, &err));
	CHECK(read_check(src, data, len - 1, 1, &err));
	CHECK(read_check(src, data, 0, len, &err));
	{
		uint64		r = origin->reads;

		CHECK(read_check(src, data, 0, len, &err));
		CHECK_EQ_INT(origin->reads, r);
	}
	/* zero-length reads, also at the end; past the end is refused */
	CHECK(read_check(src, data, 0, 0, &err));
	CHECK(read_check(src, data, len, 0, &err));
	CHECK(fst_range_read(src, len, 1, &b, &err) == FST_CORRUPT);
	CHECK(fst_range_read(src, len - 1, 2, &b, &err) == FST_CORRUPT);

	/* random reads, all correct */
	for (i = 0; i < 300; i++)
	{
		uint64		off = fst_rand_range(&rs, len);
		uint64		lim = Min(len - off, 200000);
		size_t		n = (size_t) fst_rand_range(&rs, lim + 1);

		CHECK_MSG(read_check(src, data, off, n, &err), "read %d", i);
	}
	fst_diskcache_stats(c, &st);
	CHECK(st.bytes_used == dir_bytes(dir));
	CHECK_EQ_INT(st.corrupt_entries, 0);
	CHECK(st.bytes_fetched == origin->bytes_read);

	/* a bad size is refused, the origin stays the caller's */
	{
		FstRangeSource *o2 = fst_range_source_memory(data, 10, false);
		FstRangeSource *s2;

		CHECK(fst_range_source_cached(c, o2, "k", 11, &s2, &err) == FST_INVALID_ARGUMENT);
		fst_range_close(o2);
	}
	fst_range_close(src);
	fst_diskcache_close(c);
	fst_free(data);
}

FST_TEST(diskcache_whole_file_mode)
{
	char		dir[600];
	FstError	err;
	size_t		len = 300000;
	char	   *data = dc_data(len, 2);
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;

	dc_dir("whole", dir, sizeof(dir));
	c = dc_open(dir, 1024 * KiB, 0, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	src = dc_source(c, "t/whole.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, data, 5000, 4096, &err));
	CHECK_EQ_INT(origin->reads, 1);
	CHECK_EQ_INT(origin->bytes_read, len);
	CHECK(read_check(src, data, len - 4096, 4096, &err));
	CHECK(read_check(src, data, 0, len, &err));
	CHECK_EQ_INT(origin->reads, 1);
	fst_range_close(src);
	fst_diskcache_close(c);

	/* an object larger than the cache: bypassed, only the asked bytes read */
	dc_dir("whole_small", dir, sizeof(dir));
	c = dc_open(dir, 100 * KiB, 0, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	src = dc_source(c, "t/whole.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, data, 5000, 4096, &err));
	CHECK(read_check(src, data, 5000, 4096, &err));
	CHECK_EQ_INT(origin->reads, 2);
	CHECK_EQ_INT(origin->bytes_read, 2 * 4096);
	CHECK_EQ_INT(dir_bytes(dir), 0);
	fst_range_close(src);
	fst_diskcache_close(c);
	fst_free(data);
}

FST_TEST(diskcache_sst_through_cache)
{
	int			n = 1500;
	TestEntry  *ents = fst_calloc(n, sizeof(TestEntry));
	FstSstOptions o;
	FstBuf		file;
	FstError	err;
	char		dir[600];
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;
	FstSstReader *r;
	FstIter    *it;
	int			i,
				pass;

	fst_sst_options_default(&o);
	o.block_size = 1024;
	for (i = 0; i < n; i++)
		test_entry_numbered(&ents[i], i, 50, 60);
	CHECK_OK(test_build_sst(ents, n, &o, &file, NULL, &err), &err);
	dc_dir("sst", dir, sizeof(dir));
	c = dc_open(dir, 16 * 1024 * KiB, 16 * KiB, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);

	for (pass = 0; pass < 2; pass++)
	{
		src = dc_source(c, "c1/tables/t1/sst/0a/000000000010.sst",
						file.data, file.len, &origin, &err);
		CHECK(src != NULL);
		CHECK_OK(fst_sst_open(src, NULL, &r, &err), &err);
		it = fst_sst_iter_create(r);
		for (fst_iter_seek_first(it), i = 0; fst_iter_valid(it); fst_iter_next(it), i++)
		{
			CHECK(i < n);
			CHECK(fst_iter_key(it).len == ents[i].klen);
			CHECK(memcmp(fst_iter_key(it).data, ents[i].key, ents[i].klen) == 0);
			CHECK(fst_iter_value(it).len == ents[i].vlen);
			CHECK(memcmp(fst_iter_value(it).data, ents[i].val, ents[i].vlen) == 0);
		}
		CHECK_OK(fst_iter_status(it, &err), &err);
		CHECK_EQ_INT(i, n);
		fst_iter_destroy(it);
		fst_sst_close(r);
		if (pass == 0)
			CHECK(origin->reads > 0);
		else
			CHECK_EQ_INT(origin->reads, 0); /* all from the cache */
		fst_range_close(src);
	}
	fst_diskcache_close(c);
	fst_buf_free(&file);
	fst_free(ents);
}

FST_TEST(diskcache_bound_on_disk)
{
	char		dir[600];
	FstError	err;
	uint64		cap = 256 * KiB;
	uint32		chunk = 16 * KiB;
	size_t		len = 10 * cap;		/* working set 10x the capacity */
	char	   *data = dc_data(len, 3);
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;
	FstDiskCacheStats st;
	uint64		rs = fst_test_seed() ^ 3;
	uint64		maxseen = 0;
	uint64		off;
	int			i;

	dc_dir("bound", dir, sizeof(dir));
	c = dc_open(dir, cap, chunk, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	src = dc_source(c, "t/big.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	/* a sequential stream, then random reads of assorted sizes */
	for (off = 0; off < len; off += 5000)
	{
		uint64		used;

		CHECK(read_check(src, data, off, Min(5000, len - off), &err));
		used = dir_bytes(dir);
		maxseen = Max(maxseen, used);
		CHECK_MSG(used <= cap + chunk, "dir holds " UINT64_FORMAT " bytes", used);
	}
	for (i = 0; i < 400; i++)
	{
		uint64		o = fst_rand_range(&rs, len);
		uint64		r = fst_rand_range(&rs, 3 * chunk) + 1;
		size_t		n = (size_t) Min(len - o, r);
		uint64		used;

		CHECK_MSG(read_check(src, data, o, n, &err), "o=%llu n=%zu i=%d err=%s", (unsigned long long) o, n, i, err.msg);
		used = dir_bytes(dir);
		maxseen = Max(maxseen, used);
		CHECK_MSG(used <= cap + chunk, "dir holds " UINT64_FORMAT " bytes", used);
	}
	fst_diskcache_stats(c, &st);
	CHECK(st.bytes_used == dir_bytes(dir));
	CHECK(st.bytes_used <= cap);
	CHECK(st.evictions > 0);
	CHECK(maxseen > cap / 2);
	fst_range_close(src);
	fst_diskcache_close(c);

	/* reopening with a smaller capacity evicts down to it */
	c = dc_open(dir, cap / 4, chunk, &err);
	CHECK_MSG(c != NULL, "reopen: %s", err.msg);
	fst_diskcache_stats(c, &st);
	CHECK(st.bytes_used <= cap / 4);
	CHECK(dir_bytes(dir) == st.bytes_used);
	fst_diskcache_close(c);
	fst_free(data);
}

FST_TEST(diskcache_lru_keeps_hot_range)
{
	char		dir[600];
	FstError	err;
	uint32		chunk = 16 * KiB;
	uint64		cap = 8 * (chunk + 100);
	size_t		len = 200 * chunk;
	char	   *data = dc_data(len, 4);
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;
	uint64		before;
	int			i;

	dc_dir("lru", dir, sizeof(dir));
	c = dc_open(dir, cap, chunk, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	src = dc_source(c, "t/lru.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	/* hot: chunk 0; a cold scan over chunks 1..199 with the hot read between */
	for (i = 1; i < 200; i++)
	{
		CHECK(read_check(src, data, (uint64) i * chunk + 7, 1000, &err));
		if (i % 3 == 0)
		{
			before = origin->reads;
			CHECK(read_check(src, data, 100, 4000, &err));
			if (i > 3)
				CHECK_MSG(origin->reads == before, "hot range evicted at %d", i);
		}
	}
	before = origin->reads;
	CHECK(read_check(src, data, 100, 4000, &err));
	CHECK_EQ_INT(origin->reads, before);
	/* the oldest cold chunk is gone */
	before = origin->reads;
	CHECK(read_check(src, data, (uint64) chunk + 7, 10, &err));
	CHECK_EQ_INT(origin->reads, before + 1);
	fst_range_close(src);
	fst_diskcache_close(c);
	fst_free(data);
}

FST_TEST(diskcache_restart)
{
	char		dir[600];
	char		junk[700];
	FstError	err;
	uint32		chunk = 32 * KiB;
	size_t		len = 20 * chunk + 5;
	char	   *data = dc_data(len, 5);
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;
	FstDiskCacheStats st1,
				st2;
	int			fd;

	dc_dir("restart", dir, sizeof(dir));
	c = dc_open(dir, 64 * 1024 * KiB, chunk, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	src = dc_source(c, "t/restart.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, data, 0, len, &err));
	fst_range_close(src);
	fst_diskcache_stats(c, &st1);
	CHECK_EQ_INT(st1.entries, 21);
	fst_diskcache_close(c);

	/* garbage: a dead process's temp file, an unknown file */
	snprintf(junk, sizeof(junk), "%s/00/.tmp.999999999.1", dir);
	fd = open(junk, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, "partial", 7) == 7);
	close(fd);
	snprintf(junk, sizeof(junk), "%s/01/garbage", dir);
	fd = open(junk, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, "xx", 2) == 2);
	close(fd);

	c = dc_open(dir, 64 * 1024 * KiB, chunk, &err);
	CHECK_MSG(c != NULL, "reopen: %s", err.msg);
	fst_diskcache_stats(c, &st2);
	CHECK_EQ_INT(st2.entries, st1.entries);
	CHECK(st2.bytes_used == st1.bytes_used);
	CHECK(dir_bytes(dir) == st2.bytes_used);	/* garbage deleted */
	src = dc_source(c, "t/restart.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, data, 0, len, &err));
	CHECK_EQ_INT(origin->reads, 0);
	fst_range_close(src);
	fst_diskcache_close(c);

	/* a different chunk size makes the old entries garbage */
	c = dc_open(dir, 64 * 1024 * KiB, chunk * 2, &err);
	CHECK_MSG(c != NULL, "reopen: %s", err.msg);
	fst_diskcache_stats(c, &st2);
	CHECK_EQ_INT(st2.entries, 0);
	CHECK_EQ_INT(dir_bytes(dir), 0);
	fst_diskcache_close(c);

	/* a directory that is not a cache is refused */
	snprintf(junk, sizeof(junk), "%s/notacache", fst_test_tmpdir());
	mkdir(junk, 0700);
	snprintf(junk, sizeof(junk), "%s/notacache/precious", fst_test_tmpdir());
	fd = open(junk, O_WRONLY | O_CREAT, 0600);
	close(fd);
	snprintf(junk, sizeof(junk), "%s/notacache", fst_test_tmpdir());
	CHECK(dc_open(junk, 1024 * KiB, chunk, &err) == NULL);
	CHECK(err.code == FST_INVALID_ARGUMENT);
	fst_free(data);
}

/* Damage the entry file of (key, chunk) with fn; then read it back. */
static void
corrupt_file(const char *path, int how)
{
	int			fd = open(path, O_RDWR);
	struct stat st;
	char		b;

	if (fd < 0)
		return;
	fstat(fd, &st);
	if (how == 0)				/* flip a payload byte */
	{
		off_t		o = st.st_size - 1000;

		if (pread(fd, &b, 1, o) == 1)
		{
			b ^= 0x10;
			if (pwrite(fd, &b, 1, o) != 1)
				abort();
		}
	}
	else if (how == 1)			/* truncate */
	{
		if (ftruncate(fd, st.st_size / 2) != 0)
			abort();
	}
	else						/* flip a header byte (the object size) */
	{
		if (pread(fd, &b, 1, 17) == 1)
		{
			b ^= 0x01;
			if (pwrite(fd, &b, 1, 17) != 1)
				abort();
		}
	}
	close(fd);
}

FST_TEST(diskcache_corruption_refetched)
{
	char		dir[600];
	char		path[1500];
	FstError	err;
	uint32		chunk = 16 * KiB;
	size_t		len = 8 * chunk;
	char	   *data = dc_data(len, 6);
	const char *key = "t/corrupt.sst";
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;
	FstDiskCacheStats st;
	int			how;

	dc_dir("corrupt", dir, sizeof(dir));
	c = dc_open(dir, 1024 * KiB, chunk, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	src = dc_source(c, key, data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, data, 0, len, &err));
	CHECK_EQ_INT(origin->reads, 1);
	for (how = 0; how < 3; how++)
	{
		uint64		ch = 2 + how;
		uint64		before = origin->reads;
		struct stat s1;

		fst_diskcache_entry_path(c, key, ch, path, sizeof(path));
		corrupt_file(path, how);
		/* the whole chunk, and a part of it */
		CHECK_MSG(read_check(src, data, ch * chunk, chunk, &err), "how %d", how);
		CHECK_EQ_INT(origin->reads, before + 1);
		fst_diskcache_stats(c, &st);
		CHECK_EQ_INT(st.corrupt_entries, how + 1);
		/* the bad file was replaced by a good one: a hit now */
		CHECK(stat(path, &s1) == 0);
		CHECK(s1.st_size == (off_t) (FST_DISKCACHE_ENTRY_HEADER + strlen(key) + chunk));
		CHECK(read_check(src, data, ch * chunk + 5, 100, &err));
		CHECK_EQ_INT(origin->reads, before + 1);
	}
	fst_diskcache_stats(c, &st);
	CHECK(st.bytes_used == dir_bytes(dir));
	fst_range_close(src);
	fst_diskcache_close(c);

	/* corruption found after a restart: the same */
	c = dc_open(dir, 1024 * KiB, chunk, &err);
	CHECK_MSG(c != NULL, "reopen: %s", err.msg);
	fst_diskcache_entry_path(c, key, 7, path, sizeof(path));
	corrupt_file(path, 0);
	src = dc_source(c, key, data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, data, 0, len, &err));
	CHECK_EQ_INT(origin->reads, 1);
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.corrupt_entries, 1);
	fst_range_close(src);
	fst_diskcache_close(c);
	fst_free(data);
}

FST_TEST(diskcache_admit_and_evict_key)
{
	char		dir[600];
	char		path[1500];
	FstError	err;
	uint32		chunk = 16 * KiB;
	size_t		len = 5 * chunk + 77;
	char	   *a = dc_data(len, 7);
	char	   *b = dc_data(len, 8);
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;
	FstDiskCacheStats st,
				st0;
	struct stat sb;

	dc_dir("admit", dir, sizeof(dir));
	c = dc_open(dir, 1024 * KiB, chunk, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	CHECK_OK(fst_diskcache_admit(c, "t/a.sst", a, len, &err), &err);
	CHECK_OK(fst_diskcache_admit(c, "t/b.sst", b, len, &err), &err);
	fst_diskcache_stats(c, &st0);
	CHECK_EQ_INT(st0.admissions, 12);

	/* read without any origin read */
	src = dc_source(c, "t/a.sst", a, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, a, 0, len, &err));
	CHECK(read_check(src, a, len - 64 * KiB, 64 * KiB, &err));
	CHECK_EQ_INT(origin->reads, 0);
	fst_range_close(src);

	/* evict a: its files are gone, b stays */
	fst_diskcache_evict_key(c, "t/a.sst");
	fst_diskcache_entry_path(c, "t/a.sst", 0, path, sizeof(path));
	CHECK(stat(path, &sb) != 0);
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.entries, 6);
	CHECK(st.bytes_used == dir_bytes(dir));
	src = dc_source(c, "t/a.sst", a, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, a, 0, 100, &err));
	CHECK_EQ_INT(origin->reads, 1);
	fst_range_close(src);
	src = dc_source(c, "t/b.sst", b, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, b, 0, len, &err));
	CHECK_EQ_INT(origin->reads, 0);
	fst_range_close(src);
	/* bad arguments */
	CHECK(fst_diskcache_admit(c, "", a, 1, &err) == FST_INVALID_ARGUMENT);
	/* admitted from a source, a chunk at a time: reads hit as above */
	{
		TestSource	t;

		test_source_init(&t, a, len);
		CHECK_OK(fst_diskcache_admit_source(c, "t/s.sst", &t.src, &err), &err);
		CHECK(t.largest <= chunk);
		CHECK_EQ_INT(t.reads, (int) ((len + chunk - 1) / chunk));
		src = dc_source(c, "t/s.sst", a, len, &origin, &err);
		CHECK(src != NULL);
		CHECK(read_check(src, a, 0, len, &err));
		CHECK_EQ_INT(origin->reads, 0);
		fst_range_close(src);
		CHECK(fst_diskcache_admit_source(c, "", &t.src, &err) == FST_INVALID_ARGUMENT);
	}
	fst_diskcache_close(c);

	/* evict_key also deletes entries this process never indexed */
	c = dc_open(dir, 1024 * KiB, chunk, &err);
	CHECK_MSG(c != NULL, "reopen: %s", err.msg);
	{
		FstDiskCache *c2 = dc_open(dir, 1024 * KiB, chunk, &err);

		CHECK(c2 != NULL);
		CHECK_OK(fst_diskcache_admit(c2, "t/c.sst", a, len, &err), &err);
		fst_diskcache_evict_key(c, "t/c.sst");
		fst_diskcache_entry_path(c, "t/c.sst", 0, path, sizeof(path));
		CHECK(stat(path, &sb) != 0);
		fst_diskcache_close(c2);
	}
	fst_diskcache_close(c);
	fst_free(a);
	fst_free(b);
}

/* fst_diskcache_get: whole objects from the cache alone, or NOT_FOUND. */
FST_TEST(diskcache_get_whole_object)
{
	char		dir[600];
	char		path[1500];
	FstError	err;
	uint32		chunk = 16 * KiB;
	size_t		len = 3 * chunk + 5;
	char	   *a = dc_data(len, 9);
	char	   *small = dc_data(100, 10);
	FstDiskCache *c;
	FstDiskCacheStats st;
	FstBuf		out;
	int			how;

	dc_dir("get", dir, sizeof(dir));
	c = dc_open(dir, 1024 * KiB, chunk, &err);
	CHECK_MSG(c != NULL, "open: %s", err.msg);
	fst_buf_init(&out);
	CHECK(fst_diskcache_get(c, "t/m/1", &out, &err) == FST_NOT_FOUND);
	CHECK(fst_diskcache_get(c, "", &out, &err) == FST_INVALID_ARGUMENT);

	CHECK_OK(fst_diskcache_admit(c, "t/m/1", a, len, &err), &err);
	CHECK_OK(fst_diskcache_admit(c, "t/m/2", small, 100, &err), &err);
	CHECK_OK(fst_diskcache_get(c, "t/m/1", &out, &err), &err);
	CHECK(out.len == len && memcmp(out.data, a, len) == 0);
	CHECK_OK(fst_diskcache_get(c, "t/m/2", &out, &err), &err);
	CHECK(out.len == 100 && memcmp(out.data, small, 100) == 0);
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.hits, 5);
	CHECK_EQ_INT(st.misses, 0);

	/* a missing chunk (evicted) or a damaged one is a miss, never data */
	fst_diskcache_entry_path(c, "t/m/1", 1, path, sizeof(path));
	CHECK(unlink(path) == 0);
	CHECK(fst_diskcache_get(c, "t/m/1", &out, &err) == FST_NOT_FOUND);
	for (how = 0; how < 3; how++)
	{
		CHECK_OK(fst_diskcache_admit(c, "t/m/1", a, len, &err), &err);
		CHECK_OK(fst_diskcache_get(c, "t/m/1", &out, &err), &err);
		fst_diskcache_entry_path(c, "t/m/1", how == 2 ? 0 : 2, path, sizeof(path));
		corrupt_file(path, how);
		CHECK(fst_diskcache_get(c, "t/m/1", &out, &err) == FST_NOT_FOUND);
	}
	fst_diskcache_stats(c, &st);
	CHECK(st.corrupt_entries >= 2);
	/* re-admitted, it is whole again */
	CHECK_OK(fst_diskcache_admit(c, "t/m/1", a, len, &err), &err);
	CHECK_OK(fst_diskcache_get(c, "t/m/1", &out, &err), &err);
	CHECK(out.len == len && memcmp(out.data, a, len) == 0);

	fst_buf_free(&out);
	fst_diskcache_close(c);
	fst_free(a);
	fst_free(small);
}

/* A child: open the shared cache, random reads, verify. 0 = all correct. */
static int
fork_child(const char *dir, const char *data, size_t len, uint64 seed)
{
	FstError	err;
	FstDiskCache *c = dc_open(dir, 512 * KiB, 16 * KiB, &err);
	FstRangeSource *origin = fst_range_source_memory(data, len, false);
	FstRangeSource *src = NULL;
	char	   *buf = fst_malloc(64 * KiB);
	int			bad = 0;
	int			i;

	if (c == NULL || origin == NULL ||
		fst_range_source_cached(c, origin, "t/shared.sst", 0, &src, &err) != FST_OK)
		return 2;
	for (i = 0; i < 3000; i++)
	{
		uint64		off = fst_rand_range(&seed, len);
		uint64		r = fst_rand_range(&seed, 64 * KiB) + 1;
		size_t		n = (size_t) Min(len - off, r);

		if (fst_range_read(src, off, n, buf, &err) != FST_OK ||
			memcmp(buf, data + off, n) != 0)
			bad++;
	}
	fst_range_close(src);
	fst_diskcache_close(c);
	fst_free(buf);
	return bad ? 1 : 0;
}

FST_TEST(diskcache_two_processes)
{
	char		dir[600];
	FstError	err;
	size_t		len = 2 * 1024 * KiB;
	char	   *data = dc_data(len, 9);
	pid_t		pids[2];
	int			i;
	FstDiskCache *c;
	FstRangeSource *src,
			   *origin;
	FstDiskCacheStats st;

	dc_dir("fork", dir, sizeof(dir));
	/* both children create the directory (racing for the marker) */
	fflush(NULL);
	for (i = 0; i < 2; i++)
	{
		pids[i] = fork();
		CHECK(pids[i] >= 0);
		if (pids[i] == 0)
			_exit(fork_child(dir, data, len, fst_test_seed() + 17 * (i + 1)));
	}
	for (i = 0; i < 2; i++)
	{
		int			status;

		CHECK(waitpid(pids[i], &status, 0) == pids[i]);
		CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				  "child %d: status %d", i, status);
	}
	/* what they left behind is valid: every read is correct, none corrupt */
	c = dc_open(dir, 4 * 1024 * KiB, 16 * KiB, &err);
	CHECK_MSG(c != NULL, "reopen: %s", err.msg);
	fst_diskcache_stats(c, &st);
	CHECK(st.entries > 0);
	src = dc_source(c, "t/shared.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, data, 0, len, &err));
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.corrupt_entries, 0);
	CHECK(st.hits > 0);
	fst_range_close(src);
	fst_diskcache_close(c);
	fst_free(data);
}

/* Two handles on one directory (as two backends): one fills, the other hits. */
FST_TEST(diskcache_adopts_other_handles_entries)
{
	char		dir[600];
	FstError	err;
	uint32		chunk = 16 * KiB;
	size_t		len = 10 * chunk;
	char	   *data = dc_data(len, 10);
	FstDiskCache *c1,
			   *c2;
	FstRangeSource *s1,
			   *s2,
			   *o1,
			   *o2;
	FstDiskCacheStats st;

	dc_dir("adopt", dir, sizeof(dir));
	c1 = dc_open(dir, 1024 * KiB, chunk, &err);
	CHECK_MSG(c1 != NULL, "open: %s", err.msg);
	c2 = dc_open(dir, 1024 * KiB, chunk, &err);
	CHECK_MSG(c2 != NULL, "open: %s", err.msg);
	s1 = dc_source(c1, "t/adopt.sst", data, len, &o1, &err);
	s2 = dc_source(c2, "t/adopt.sst", data, len, &o2, &err);
	CHECK(s1 != NULL && s2 != NULL);
	CHECK(read_check(s1, data, 0, len, &err));
	CHECK_EQ_INT(o1->reads, 1);
	CHECK(read_check(s2, data, 0, len, &err));
	CHECK_EQ_INT(o2->reads, 0);
	fst_diskcache_stats(c2, &st);
	CHECK_EQ_INT(st.adoptions, 10);
	CHECK_EQ_INT(st.entries, 10);
	CHECK(st.bytes_used == dir_bytes(dir));
	/* c1 evicts the object: c2's entries vanish under it, reads still work */
	fst_diskcache_evict_key(c1, "t/adopt.sst");
	CHECK(read_check(s2, data, 3 * chunk + 1, 2 * chunk, &err));
	CHECK_EQ_INT(o2->reads, 1);
	fst_diskcache_stats(c2, &st);
	CHECK_EQ_INT(st.corrupt_entries, 0);
	fst_range_close(s1);
	fst_range_close(s2);
	fst_diskcache_close(c1);
	fst_diskcache_close(c2);
	fst_free(data);
}

/* ---- one index shared by processes (as the server's backends) ---------- */

#include <sys/mman.h>

static volatile char *shared_lock_word;

static void
spin_lock(void *arg, bool exclusive)
{
	while (__atomic_test_and_set((char *) shared_lock_word, __ATOMIC_ACQUIRE))
		;
}

static void
spin_unlock(void *arg)
{
	__atomic_clear((char *) shared_lock_word, __ATOMIC_RELEASE);
}

static FstDiskCache *
shared_attach(const char *dir, void *region, uint32 chunk, FstError *err)
{
	FstDiskCacheOptions o;
	FstDiskCache *c = NULL;

	fst_diskcache_options_default(&o);
	o.chunk_size = chunk;
	o.account_block = 4096;
	o.lock = spin_lock;
	o.unlock = spin_unlock;
	if (fst_diskcache_attach(dir, region, &o, &c, err) != FST_OK)
		return NULL;
	return c;
}

/* Bytes the regular files under dir occupy, in 4 KiB blocks. */
static uint64
dir_blocks_bytes(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	uint64		total = 0;
	char		path[1024];

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
	{
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			total += dir_blocks_bytes(path);
		else if (S_ISREG(st.st_mode))
			total += ((uint64) st.st_size + 4095) / 4096 * 4096;
	}
	closedir(d);
	return total;
}

FST_TEST(diskcache_shared_index_bounds_all_processes)
{
	char		dir[600];
	FstError	err;
	uint32		chunk = 16 * KiB;
	uint64		cap = 320 * KiB;
	size_t		len = 12 * cap;
	char	   *data = dc_data(len, 11);
	size_t		rsize = fst_diskcache_region_size(cap);
	void	   *region;
	FstDiskCache *c;
	FstDiskCacheStats st;
	pid_t		pids[3];
	uint64		maxseen = 0;
	int			running = 3;
	int			i;

	dc_dir("sharedidx", dir, sizeof(dir));
	region = mmap(NULL, rsize + 64, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(region != MAP_FAILED);
	shared_lock_word = (char *) region + rsize;
	fst_diskcache_region_init(region, cap);
	c = shared_attach(dir, region, chunk, &err);
	CHECK_MSG(c != NULL, "attach: %s", err.msg);
	/* not ready: reads work, nothing is written */
	{
		FstRangeSource *src,
				   *origin;

		src = dc_source(c, "t/shared-idx.sst", data, len, &origin, &err);
		CHECK(src != NULL);
		CHECK(read_check(src, data, 0, 3 * chunk, &err));
		CHECK_EQ_INT(dir_bytes(dir), 0);
		fst_range_close(src);
	}
	CHECK_OK(fst_diskcache_rebuild(c, &err), &err);
	fflush(NULL);
	for (i = 0; i < 3; i++)
	{
		pids[i] = fork();
		CHECK(pids[i] >= 0);
		if (pids[i] == 0)
		{
			FstDiskCache *cc = shared_attach(dir, region, chunk, &err);
			FstRangeSource *src,
					   *origin;
			uint64		seed = fst_test_seed() + 31 * (i + 1);
			int			bad = 0;
			int			j;

			if (cc == NULL)
				_exit(2);
			src = dc_source(cc, "t/shared-idx.sst", data, len, &origin, &err);
			if (src == NULL)
				_exit(2);
			for (j = 0; j < 1500; j++)
			{
				uint64		off = fst_rand_range(&seed, len);
				uint64		r = fst_rand_range(&seed, 3 * chunk) + 1;
				size_t		n = (size_t) Min(len - off, r);

				if (!read_check(src, data, off, n, &err))
				{
					fprintf(stderr, "child %d: read %llu+%zu: %s\n", i,
							(unsigned long long) off, n, err.msg);
					bad++;
				}
			}
			fst_range_close(src);
			fst_diskcache_close(cc);
			_exit(bad ? 1 : 0);
		}
	}
	/* sample the directory while they run: within the bound, blocks counted */
	while (running > 0)
	{
		uint64		used = dir_blocks_bytes(dir);

		maxseen = Max(maxseen, used);
		CHECK_MSG(used <= cap, "dir holds " UINT64_FORMAT " bytes", used);
		for (i = 0; i < 3; i++)
		{
			int			status;

			if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG) == pids[i])
			{
				CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
						  "child %d: status %d", i, status);
				pids[i] = 0;
				running--;
			}
		}
	}
	fst_diskcache_stats(c, &st);
	CHECK(maxseen > cap / 2);
	CHECK(st.bytes_used <= cap);
	CHECK(st.bytes_used == dir_blocks_bytes(dir));
	CHECK(st.evictions > 0);
	CHECK(st.hits > 0);
	CHECK_EQ_INT(st.corrupt_entries, 0);
	CHECK_EQ_INT(st.adoptions, 0);
	fst_diskcache_close(c);

	/* a restart: a fresh region rebuilt from the files has the same count */
	fst_diskcache_region_init(region, cap);
	c = shared_attach(dir, region, chunk, &err);
	CHECK(c != NULL);
	CHECK_OK(fst_diskcache_rebuild(c, &err), &err);
	{
		FstDiskCacheStats st2;

		fst_diskcache_stats(c, &st2);
		CHECK(st2.ready);
		CHECK_EQ_INT(st2.entries, st.entries);
		CHECK(st2.bytes_used == st.bytes_used);
	}
	fst_diskcache_close(c);
	munmap(region, rsize + 64);
	fst_free(data);
}

/* admit_on_second_miss: one-off reads do not fill, repeated ones do. */
FST_TEST(diskcache_admission_filter)
{
	char		dir[600];
	char		path[1500];
	FstError	err;
	uint32		chunk = 16 * KiB;
	size_t		len = 40 * chunk;
	char	   *data = dc_data(len, 12);
	FstDiskCacheOptions o;
	FstDiskCache *c = NULL;
	FstRangeSource *src,
			   *origin;
	FstDiskCacheStats st;
	struct stat sb;
	int			i;

	dc_dir("filter", dir, sizeof(dir));
	fst_diskcache_options_default(&o);
	o.chunk_size = chunk;
	o.admit_on_second_miss = true;
	CHECK_OK(fst_diskcache_open(dir, 8 * (chunk + 100), &o, &c, &err), &err);
	src = dc_source(c, "t/filter.sst", data, len, &origin, &err);
	CHECK(src != NULL);

	/* a one-off read of chunk 3: fetched, not cached */
	CHECK(read_check(src, data, 3 * chunk + 10, 100, &err));
	fst_diskcache_entry_path(c, "t/filter.sst", 3, path, sizeof(path));
	CHECK(stat(path, &sb) != 0);
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.not_admitted, 1);
	CHECK_EQ_INT(st.entries, 0);
	/* its second miss caches it; the third read is a hit */
	CHECK(read_check(src, data, 3 * chunk + 10, 100, &err));
	CHECK(stat(path, &sb) == 0);
	CHECK(read_check(src, data, 3 * chunk + 10, 100, &err));
	CHECK_EQ_INT(origin->reads, 2);

	/* a hot chunk read between one-off reads of 36 others stays cached */
	for (i = 4; i < 40; i++)
	{
		CHECK(read_check(src, data, (uint64) i * chunk, 10, &err));
		CHECK(read_check(src, data, 3 * chunk, 10, &err));
	}
	fst_diskcache_stats(c, &st);
	CHECK(stat(path, &sb) == 0);
	CHECK_EQ_INT(st.not_admitted, 1 + 36);
	CHECK_EQ_INT(st.entries, 1);
	CHECK_EQ_INT(st.evictions, 0);

	/* write-through admission is not filtered */
	CHECK_OK(fst_diskcache_admit(c, "t/fresh.sst", data, 2 * chunk, &err), &err);
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.entries, 3);
	fst_range_close(src);

	/* nor are the reads of a source told to admit all (prewarm) */
	src = dc_source(c, "t/warm.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	fst_range_source_cached_admit_all(src);
	CHECK(read_check(src, data, 5 * chunk, 2 * chunk, &err));
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.entries, 5);
	CHECK_EQ_INT(st.not_admitted, 1 + 36);
	CHECK(read_check(src, data, 5 * chunk, 2 * chunk, &err));
	CHECK_EQ_INT(origin->reads, 1);
	fst_range_close(src);

	/*
	 * nor, for a source told where an SST's metadata starts, the chunks
	 * that reach past it (the one it starts in included); those before it
	 * still wait for a second miss
	 */
	src = dc_source(c, "t/meta.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	fst_range_source_cached_admit_from(src, 30 * chunk + 100);
	CHECK(read_check(src, data, 29 * chunk, 10, &err));
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.not_admitted, 1 + 36 + 1);
	CHECK(read_check(src, data, 30 * chunk, 2 * chunk + 10, &err));
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.not_admitted, 1 + 36 + 1);
	CHECK(read_check(src, data, 30 * chunk, 2 * chunk + 10, &err));
	CHECK_EQ_INT(origin->reads, 2);
	fst_range_close(src);
	fst_diskcache_close(c);
	fst_free(data);
}

/*
 * Prefetch: the chunks covering a batch of ranges are fetched from the
 * store (once, however the ranges overlap), admitted past the admission
 * filter, and then read from the cache alone; a second prefetch fetches
 * nothing; a missing object and a range past the end are no error.
 */
FST_TEST(diskcache_prefetch_batch)
{
	char		dir[600],
				sdir[700],
				url[800];
	FstError	err;
	uint32		chunk = 16 * KiB;
	size_t		len = 10 * chunk + 1000;
	char	   *data = dc_data(len, 77);
	FstDiskCacheOptions o;
	FstDiskCache *c = NULL;
	FstObjStore *store;
	FstRangeSource *src,
			   *origin;
	FstDiskCacheStats st;
	uint64		gets;
	FstDcPrefetch items[] = {
		{"t/p.sst", 0, chunk + 5, 2 * chunk},	/* chunks 1-3 */
		{"t/p.sst", 0, 2 * chunk, 3 * chunk},	/* 2-4: 2, 3 again */
		{"t/p.sst", 0, len - 10, 100},	/* the partial last chunk */
		{"t/p.sst", 0, len + 5, 10},	/* past the end: nothing */
		{"t/none.sst", 5000, 0, 100},	/* not in the store */
	};
	int			i;

	dc_dir("prefetch", dir, sizeof(dir));
	snprintf(sdir, sizeof(sdir), "%s/store", dir);
	snprintf(url, sizeof(url), "file://%s", sdir);
	mkdir(dir, 0700);
	mkdir(sdir, 0700);
	CHECK_OK(fst_objstore_open(url, &store, &err), &err);
	CHECK_OK(fst_objstore_put(store, "t/p.sst", data, len, &err), &err);
	for (i = 0; i < (int) lengthof(items); i++)
		if (items[i].object_size == 0)
			items[i].object_size = len;
	fst_diskcache_options_default(&o);
	o.chunk_size = chunk;
	o.admit_on_second_miss = true;
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/cache");
	CHECK_OK(fst_diskcache_open(dir, 64 * (chunk + 200), &o, &c, &err), &err);

	gets = fst_objstore_stats(store)->requests[FST_OBJ_OP_GET_RANGE];
	CHECK_OK(fst_diskcache_prefetch(c, store, items, lengthof(items), &err), &err);
	fst_diskcache_stats(c, &st);
	CHECK_EQ_INT(st.entries, 5);	/* chunks 1, 2, 3, 4 and 10 */
	CHECK_EQ_INT(st.bytes_fetched, 4 * chunk + 1000);
	/* runs: chunks 1-4 in one request, chunk 10, the missing object */
	CHECK_EQ_INT(fst_objstore_stats(store)->requests[FST_OBJ_OP_GET_RANGE] - gets, 3);

	/* read from the cache alone */
	src = dc_source(c, "t/p.sst", data, len, &origin, &err);
	CHECK(src != NULL);
	CHECK(read_check(src, data, chunk, 4 * chunk, &err));
	CHECK(read_check(src, data, len - 1000, 1000, &err));
	CHECK_EQ_INT(origin->reads, 0);
	fst_range_close(src);

	/* again: nothing left to fetch but the missing object */
	gets = fst_objstore_stats(store)->requests[FST_OBJ_OP_GET_RANGE];
	CHECK_OK(fst_diskcache_prefetch(c, store, items, lengthof(items), &err), &err);
	CHECK_EQ_INT(fst_objstore_stats(store)->requests[FST_OBJ_OP_GET_RANGE] - gets, 1);

	fst_diskcache_close(c);
	fst_objstore_close(store);
	fst_free(data);
}
