/*
 * test_objstore.c — the object-store interface and its file:// backend:
 * URLs, key validation, put/get/range/head, create-if-absent (also under
 * concurrent processes), listing order and pagination, batch deletes,
 * temporary files, counters and permission errors.
 */
#include "unit.h"
#include "objstore.h"
#include "source_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A fresh, empty store directory per test: <tmpdir>/<name>. */
static bool
open_store(const char *name, FstObjStore **store, char *root, size_t rootsize)
{
	char		url[1024];
	FstError	err;

	snprintf(root, rootsize, "%s/%s", fst_test_tmpdir(), name);
	if (mkdir(root, 0755) < 0)
	{
		fst_test_fail(__FILE__, __LINE__, "mkdir %s: %s", root, strerror(errno));
		return false;
	}
	snprintf(url, sizeof(url), "file://%s", root);
	if (fst_objstore_open(url, store, &err) != FST_OK)
	{
		fst_test_fail(__FILE__, __LINE__, "open %s: %s", url, err.msg);
		return false;
	}
	return true;
}

static bool
put_str(FstObjStore *store, const char *key, const char *s)
{
	FstError	err;

	if (fst_objstore_put(store, key, s, strlen(s), &err) != FST_OK)
	{
		fst_test_fail(__FILE__, __LINE__, "put %s: %s", key, err.msg);
		return false;
	}
	return true;
}

static bool
buf_is(const FstBuf *b, const void *data, size_t len)
{
	return b->len == len && (len == 0 || memcmp(b->data, data, len) == 0);
}

FST_TEST(objstore_url_parsing)
{
	FstObjUrl	u;
	FstObjStore *store;
	FstError	err;
	char		url[1024];

	CHECK_OK(fst_objstore_parse_url("file:///var/lib/forst/remote/", &u, &err),
			 &err);
	CHECK(strcmp(u.scheme, "file") == 0);
	CHECK(strcmp(u.path, "/var/lib/forst/remote") == 0);
	CHECK_OK(fst_objstore_parse_url("FILE://localhost/x", &u, &err), &err);
	CHECK(strcmp(u.scheme, "file") == 0 && strcmp(u.path, "/x") == 0);
	CHECK_OK(fst_objstore_parse_url("file:///", &u, &err), &err);
	CHECK(strcmp(u.path, "/") == 0);
	CHECK_OK(fst_objstore_parse_url("s3://bucket/some/prefix/?region=x", &u,
									&err), &err);
	CHECK(strcmp(u.host, "bucket") == 0);
	CHECK(strcmp(u.path, "some/prefix") == 0);
	CHECK(strcmp(u.query, "region=x") == 0);

	CHECK(fst_objstore_parse_url("file://relative", &u, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_parse_url("file://relative/dir", &u, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_parse_url("file://", &u, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_parse_url("/plain/path", &u, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_parse_url("", &u, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_parse_url("s3:///prefix", &u, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_parse_url("file:///a\nb", &u, &err) == FST_INVALID_ARGUMENT);

	/* the dispatcher */
	CHECK(fst_objstore_open("gopher://host/x", &store, &err) == FST_INVALID_ARGUMENT);
	CHECK(store == NULL);
	CHECK(fst_objstore_open("file://relative", &store, &err) == FST_INVALID_ARGUMENT);
	/* s3:// opens without a request; settings come from the environment */
	CHECK_OK(fst_objstore_open("s3://bucket/p?endpoint=http://127.0.0.1:1&region=x", &store, &err), &err);
	CHECK(strcmp(store->ops->name, "s3") == 0);
	fst_objstore_close(store);
	CHECK(fst_objstore_open("s3://bucket/p?bogus=1", &store, &err) == FST_INVALID_ARGUMENT);
	CHECK(strstr(err.msg, "bogus") != NULL);
	CHECK(fst_objstore_open("s3://bucket/p?endpoint=ftp://h", &store, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_open("s3://bucket/a//b", &store, &err) == FST_INVALID_ARGUMENT);
	snprintf(url, sizeof(url), "file://%s/does-not-exist", fst_test_tmpdir());
	CHECK(fst_objstore_open(url, &store, &err) == FST_NOT_FOUND);
	snprintf(url, sizeof(url), "file://%s?x=1", fst_test_tmpdir());
	CHECK(fst_objstore_open(url, &store, &err) == FST_INVALID_ARGUMENT);
	snprintf(url, sizeof(url), "file://%s/", fst_test_tmpdir());
	CHECK_OK(fst_objstore_open(url, &store, &err), &err);
	CHECK(strcmp(store->ops->name, "file") == 0);
	fst_objstore_close(store);
}

FST_TEST(objstore_key_validation)
{
	const char *bad[] = {"", "/abs", "../x", "a/../b", "a//b", "a/./b", ".",
		"a/", "x/.hidden", "a\nb", "a\tb", "a\x7f"};
	const char *good[] = {"a", "a/b", "cluster/tables/0a1b/sst/ab/000123.sst",
		"a..b/c.d", "x-y_z/1"};
	char		longkey[FST_OBJ_KEY_MAX + 2];
	char		root[512];
	FstObjStore *store;
	FstError	err;
	FstBuf		b;
	FstObjInfo	info;
	size_t		got;
	char		c;
	int			i;

	for (i = 0; i < (int) lengthof(bad); i++)
		CHECK_MSG(fst_objstore_validate_key(bad[i], &err) == FST_INVALID_ARGUMENT,
				  "key %d accepted", i);
	for (i = 0; i < (int) lengthof(good); i++)
		CHECK_OK(fst_objstore_validate_key(good[i], &err), &err);
	memset(longkey, 'k', sizeof(longkey));
	for (i = 100; i < FST_OBJ_KEY_MAX; i += 100)
		longkey[i] = '/';
	longkey[FST_OBJ_KEY_MAX] = '\0';
	CHECK_OK(fst_objstore_validate_key(longkey, &err), &err);
	longkey[FST_OBJ_KEY_MAX] = 'k';
	longkey[FST_OBJ_KEY_MAX + 1] = '\0';
	CHECK(fst_objstore_validate_key(longkey, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_validate_prefix("", &err) == FST_OK);
	CHECK(fst_objstore_validate_prefix("a/b", &err) == FST_OK);
	CHECK(fst_objstore_validate_prefix("a/", &err) == FST_OK);
	CHECK(fst_objstore_validate_prefix("../a", &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_validate_prefix("/a", &err) == FST_INVALID_ARGUMENT);

	/* every request refuses them, and nothing escapes the root */
	if (!open_store("keys", &store, root, sizeof(root)))
		return;
	fst_buf_init(&b);
	for (i = 0; i < (int) lengthof(bad); i++)
	{
		CHECK(fst_objstore_put(store, bad[i], "x", 1, &err) == FST_INVALID_ARGUMENT);
		CHECK(fst_objstore_put_if_absent(store, bad[i], "x", 1, &err) == FST_INVALID_ARGUMENT);
		CHECK(fst_objstore_get(store, bad[i], &b, &err) == FST_INVALID_ARGUMENT);
		CHECK(fst_objstore_get_range(store, bad[i], 0, 1, &c, &got, &err) == FST_INVALID_ARGUMENT);
		CHECK(fst_objstore_head(store, bad[i], &info, &err) == FST_INVALID_ARGUMENT);
	}
	{
		char		escaped[600];

		snprintf(escaped, sizeof(escaped), "%s/../x", root);
		CHECK(access(escaped, F_OK) != 0);
	}
	CHECK(fst_objstore_stats(store)->errors[FST_OBJ_OP_PUT] == lengthof(bad));
	fst_buf_free(&b);
	fst_objstore_close(store);
}

FST_TEST(objstore_put_get_roundtrip)
{
	char		root[512];
	FstObjStore *store;
	FstError	err;
	FstBuf		b;
	size_t		big_len = 5 * 1024 * 1024;
	char	   *big;
	uint64		rng = fst_test_seed();
	size_t		i;

	if (!open_store("roundtrip", &store, root, sizeof(root)))
		return;
	fst_buf_init(&b);

	/* empty object: exists, zero bytes */
	CHECK_OK(fst_objstore_put(store, "e/empty", NULL, 0, &err), &err);
	fst_buf_append(&b, "junk", 4);
	CHECK_OK(fst_objstore_get(store, "e/empty", &b, &err), &err);
	CHECK(b.len == 0);

	/* 5 MiB of pseudo-random bytes, nested directories created on the way */
	big = malloc(big_len);
	CHECK(big != NULL);
	for (i = 0; i < big_len; i++)
		big[i] = (char) fst_rand_next(&rng);
	CHECK_OK(fst_objstore_put(store, "c/tables/t1/sst/ab/000123.sst", big,
							  big_len, &err), &err);
	CHECK_OK(fst_objstore_get(store, "c/tables/t1/sst/ab/000123.sst", &b, &err),
			 &err);
	CHECK(buf_is(&b, big, big_len));

	/* overwrite replaces the whole object, shorter or longer */
	CHECK(put_str(store, "k", "first version, long"));
	CHECK(put_str(store, "k", "second"));
	CHECK_OK(fst_objstore_get(store, "k", &b, &err), &err);
	CHECK(buf_is(&b, "second", 6));
	CHECK_OK(fst_objstore_put(store, "k", big, 100000, &err), &err);
	CHECK_OK(fst_objstore_get(store, "k", &b, &err), &err);
	CHECK(buf_is(&b, big, 100000));

	free(big);
	fst_buf_free(&b);
	fst_objstore_close(store);
}

FST_TEST(objstore_get_range_and_head)
{
	char		root[512];
	FstObjStore *store;
	FstError	err;
	FstObjInfo	info;
	char		buf[64];
	size_t		got;
	time_t		now = time(NULL);

	if (!open_store("range", &store, root, sizeof(root)))
		return;
	CHECK(put_str(store, "r/obj", "0123456789abcdef"));

	/* middle */
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 4, 6, buf, &got, &err), &err);
	CHECK(got == 6 && memcmp(buf, "456789", 6) == 0);
	/* exactly the end */
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 10, 6, buf, &got, &err), &err);
	CHECK(got == 6 && memcmp(buf, "abcdef", 6) == 0);
	/* running past the end: what exists */
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 12, 30, buf, &got, &err), &err);
	CHECK(got == 4 && memcmp(buf, "cdef", 4) == 0);
	/* starting at or past the end: an empty read, not an error */
	got = 99;
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 16, 4, buf, &got, &err), &err);
	CHECK(got == 0);
	got = 99;
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 1000, 4, buf, &got, &err), &err);
	CHECK(got == 0);
	/* zero length */
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 3, 0, buf, &got, &err), &err);
	CHECK(got == 0);

	CHECK_OK(fst_objstore_head(store, "r/obj", &info, &err), &err);
	CHECK(info.size == 16);
	CHECK(info.mtime >= (int64) now - 5 && info.mtime <= (int64) now + 5);
	CHECK_OK(fst_objstore_put(store, "r/empty", "", 0, &err), &err);
	CHECK_OK(fst_objstore_head(store, "r/empty", &info, &err), &err);
	CHECK(info.size == 0);
	fst_objstore_close(store);
}

/*
 * SST objects stay open between range reads (fd_cache.c): a second after
 * the file is deleted behind the store's back the cache has let it go (a
 * deleted non-SST object is gone at once); more SSTs than the cache holds
 * all read correctly, evicted ones reopened.
 */
FST_TEST(objstore_file_keeps_sst_files_open)
{
	char		root[512];
	char		path[700];
	char		key[64];
	char		buf[64];
	FstObjStore *store;
	FstError	err;
	size_t		got;
	int			i,
				round;

	if (!open_store("fdcache", &store, root, sizeof(root)))
		return;
	CHECK(put_str(store, "t/1.sst", "sst-one-content"));
	CHECK(put_str(store, "t/manifest", "manifest-content"));
	CHECK_OK(fst_objstore_get_range(store, "t/1.sst", 4, 3, buf, &got, &err), &err);
	CHECK(got == 3 && memcmp(buf, "one", 3) == 0);
	CHECK_OK(fst_objstore_get_range(store, "t/manifest", 0, 8, buf, &got, &err), &err);

	snprintf(path, sizeof(path), "%s/t/1.sst", root);
	CHECK(unlink(path) == 0);
	snprintf(path, sizeof(path), "%s/t/manifest", root);
	CHECK(unlink(path) == 0);
	CHECK(fst_objstore_get_range(store, "t/manifest", 0, 8, buf, &got, &err) == FST_NOT_FOUND);
	/* a cached SST may read on for up to about a second, then it is let go */
	sleep(2);
	CHECK(fst_objstore_get_range(store, "t/1.sst", 8, 7, buf, &got, &err) == FST_NOT_FOUND);

	for (i = 0; i < 150; i++)
	{
		char		val[32];

		snprintf(key, sizeof(key), "m/%03d.sst", i);
		snprintf(val, sizeof(val), "value %03d", i);
		CHECK(put_str(store, key, val));
	}
	for (round = 0; round < 2; round++)
		for (i = 0; i < 150; i++)
		{
			char		want[8];

			snprintf(key, sizeof(key), "m/%03d.sst", i);
			snprintf(want, sizeof(want), "%03d", i);
			CHECK_OK(fst_objstore_get_range(store, key, 6, 3, buf, &got, &err), &err);
			CHECK_MSG(got == 3 && memcmp(buf, want, 3) == 0, "%s read back wrong", key);
		}
	fst_objstore_close(store);
}

FST_TEST(objstore_not_found)
{
	char		root[512];
	FstObjStore *store;
	FstError	err;
	FstObjInfo	info;
	FstBuf		b;
	char		buf[8];
	size_t		got = 5;

	if (!open_store("notfound", &store, root, sizeof(root)))
		return;
	fst_buf_init(&b);
	CHECK(fst_objstore_get(store, "no/such", &b, &err) == FST_NOT_FOUND);
	CHECK(strstr(err.msg, "no/such") != NULL);
	CHECK(fst_objstore_head(store, "no/such", &info, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_get_range(store, "no/such", 0, 4, buf, &got, &err) == FST_NOT_FOUND);
	CHECK(got == 0);

	/* a directory prefix is not an object */
	CHECK(put_str(store, "d/sub/obj", "x"));
	CHECK(fst_objstore_get(store, "d/sub", &b, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_head(store, "d", &info, &err) == FST_NOT_FOUND);
	/* below an object: not found on read, not supported on write */
	CHECK(fst_objstore_get(store, "d/sub/obj/deeper", &b, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_put(store, "d/sub/obj/deeper", "y", 1, &err) == FST_NOT_SUPPORTED);
	CHECK(fst_objstore_put(store, "d/sub", "y", 1, &err) == FST_NOT_SUPPORTED);
	CHECK(fst_objstore_put_if_absent(store, "d/sub", "y", 1, &err) == FST_NOT_SUPPORTED);
	CHECK(fst_objstore_stats(store)->not_found >= 6);
	fst_buf_free(&b);
	fst_objstore_close(store);
}

FST_TEST(objstore_put_if_absent)
{
	char		root[512];
	FstObjStore *store;
	FstError	err;
	FstBuf		b;

	if (!open_store("ifabsent", &store, root, sizeof(root)))
		return;
	fst_buf_init(&b);
	CHECK_OK(fst_objstore_put_if_absent(store, "m/manifest/0001", "first", 5,
										&err), &err);
	CHECK(fst_objstore_put_if_absent(store, "m/manifest/0001", "second", 6,
									 &err) == FST_ALREADY_EXISTS);
	CHECK_OK(fst_objstore_get(store, "m/manifest/0001", &b, &err), &err);
	CHECK(buf_is(&b, "first", 5));
	/* an empty object exists too */
	CHECK_OK(fst_objstore_put_if_absent(store, "m/e", NULL, 0, &err), &err);
	CHECK(fst_objstore_put_if_absent(store, "m/e", "x", 1, &err) == FST_ALREADY_EXISTS);
	CHECK(fst_objstore_stats(store)->already_exists == 2);
	CHECK(fst_objstore_stats(store)->errors[FST_OBJ_OP_PUT_IF_ABSENT] == 0);
	fst_buf_free(&b);
	fst_objstore_close(store);
}

/*
 * A body read from a source in pieces: stored whole, through a buffer
 * smaller than the body, once; a failing source leaves nothing.
 */
FST_TEST(objstore_put_if_absent_source)
{
	char		root[512];
	FstObjStore *store;
	FstError	err;
	TestSource	t;
	FstObjInfo	info;

	if (!open_store("ifabsent_source", &store, root, sizeof(root)))
		return;
	test_source_put_contract(store, 3 * 256 * 1024 + 4321, 7);
	CHECK(fst_objstore_stats(store)->bytes_written == 3 * 256 * 1024 + 4321);
	/* a taken key is refused before the body is read */
	test_source_init(&t, "other", 5);
	CHECK(fst_objstore_put_if_absent_source(store, "s/big", &t.src, &err) == FST_ALREADY_EXISTS);
	CHECK(t.reads == 0);
	/* an empty body */
	test_source_init(&t, NULL, 0);
	CHECK_OK(fst_objstore_put_if_absent_source(store, "s/empty", &t.src, &err), &err);
	CHECK_OK(fst_objstore_head(store, "s/empty", &info, &err), &err);
	CHECK(info.size == 0);
	fst_objstore_close(store);
}

#define RACERS 8
#define RACE_ROUNDS 4
#define RACE_LEN (256 * 1024)

static void
race_content(char *buf, int who)
{
	int			i;

	for (i = 0; i < RACE_LEN; i++)
		buf[i] = (char) ('A' + who + (i % 7));
}

/* Child: wait at the barrier, then try to create key; exit 0 won, 1 lost. */
static void
race_child(const char *url, const char *key, int who, int barrier)
{
	FstObjStore *store;
	FstError	err;
	char	   *buf = malloc(RACE_LEN);
	char		c;
	FstCode		code;

	if (buf == NULL || fst_objstore_open(url, &store, &err) != FST_OK)
		_exit(3);
	race_content(buf, who);
	if (read(barrier, &c, 1) != 0)
		_exit(4);
	code = fst_objstore_put_if_absent(store, key, buf, RACE_LEN, &err);
	if (code != FST_OK && code != FST_ALREADY_EXISTS)
		fprintf(stderr, "racer %d: %s\n", who, err.msg);
	_exit(code == FST_OK ? 0 : code == FST_ALREADY_EXISTS ? 1 : 2);
}

FST_TEST(objstore_put_if_absent_concurrent)
{
	char		root[512];
	char		url[600];
	FstObjStore *store;
	FstError	err;
	FstBuf		b;
	char	   *expect = malloc(RACE_LEN);
	int			round;

	CHECK(expect != NULL);
	if (!open_store("race", &store, root, sizeof(root)))
		return;
	snprintf(url, sizeof(url), "file://%s", root);
	fst_buf_init(&b);
	for (round = 0; round < RACE_ROUNDS; round++)
	{
		char		key[64];
		int			barrier[2];
		pid_t		pids[RACERS];
		int			winners = 0;
		int			losers = 0;
		int			winner = -1;
		int			i;

		snprintf(key, sizeof(key), "race/round%d/manifest", round);
		CHECK(pipe(barrier) == 0);
		fflush(NULL);
		for (i = 0; i < RACERS; i++)
		{
			pids[i] = fork();
			CHECK(pids[i] >= 0);
			if (pids[i] == 0)
			{
				close(barrier[1]);
				race_child(url, key, i, barrier[0]);
			}
		}
		close(barrier[0]);
		close(barrier[1]);		/* everyone goes */
		for (i = 0; i < RACERS; i++)
		{
			int			status;

			CHECK(waitpid(pids[i], &status, 0) == pids[i]);
			CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) <= 1,
					  "racer %d ended with status %d", i, status);
			if (WEXITSTATUS(status) == 0)
			{
				winners++;
				winner = i;
			}
			else
				losers++;
		}
		CHECK_EQ_INT(winners, 1);
		CHECK_EQ_INT(losers, RACERS - 1);
		CHECK_OK(fst_objstore_get(store, key, &b, &err), &err);
		race_content(expect, winner);
		CHECK_MSG(buf_is(&b, expect, RACE_LEN),
				  "round %d: object is not the winner's (%d) content", round,
				  winner);
	}
	free(expect);
	fst_buf_free(&b);
	fst_objstore_close(store);
}

static int
cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* List all pages of prefix with page size max_keys into keys[]. */
static int
list_all(FstObjStore *store, const char *prefix, int max_keys, char **keys,
		 int maxn, int *pages)
{
	char	   *after = NULL;
	int			n = 0;

	*pages = 0;
	for (;;)
	{
		FstObjList l;
		FstError	err;
		int			i;

		if (fst_objstore_list(store, prefix, after, max_keys, &l, &err) != FST_OK)
		{
			fprintf(stderr, "list: %s\n", err.msg);
			free(after);
			return -1;
		}
		(*pages)++;
		for (i = 0; i < l.nentries && n < maxn; i++)
			keys[n++] = fst_strdup(l.entries[i].key);
		free(after);
		after = l.truncated ? fst_strdup(l.next) : NULL;
		fst_objstore_list_free(&l);
		if (after == NULL || *pages > 100)
			break;
	}
	free(after);
	return n;
}

static void
free_keys(char **keys, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		free(keys[i]);
}

FST_TEST(objstore_list_order_prefix_pagination)
{
	const char *keys[] = {"o/x/b/c", "o/y", "o/x0", "o/x-1", "o/x/a",
		"o/x/b-d", "p/1", "p/2", "p/3", "p/4", "p/5"};
	const char *sorted_o[6];
	char	   *got[32];
	char		root[512];
	FstObjStore *store;
	FstError	err;
	FstObjList	l;
	int			pages;
	int			n;
	int			i;

	if (!open_store("list", &store, root, sizeof(root)))
		return;
	for (i = 0; i < (int) lengthof(keys); i++)
		CHECK(put_str(store, keys[i], keys[i]));
	memcpy(sorted_o, keys, sizeof(sorted_o));
	qsort(sorted_o, 6, sizeof(char *), cmp_strp);
	/* '-' (0x2d) sorts before '/' (0x2f), which sorts before '0' */
	CHECK(strcmp(sorted_o[0], "o/x-1") == 0);
	CHECK(strcmp(sorted_o[2], "o/x/b-d") == 0);
	CHECK(strcmp(sorted_o[3], "o/x/b/c") == 0);

	/* one page, byte order across directory levels, sizes */
	CHECK_OK(fst_objstore_list(store, "o/", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 6);
	CHECK(!l.truncated && l.next == NULL);
	for (i = 0; i < 6; i++)
	{
		CHECK_MSG(strcmp(l.entries[i].key, sorted_o[i]) == 0,
				  "entry %d is %s, expected %s", i, l.entries[i].key,
				  sorted_o[i]);
		CHECK(l.entries[i].size == strlen(sorted_o[i]));
	}
	fst_objstore_list_free(&l);

	/* pagination: max_keys = 2 over 5 keys */
	n = list_all(store, "p/", 2, got, lengthof(got), &pages);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(pages, 3);
	for (i = 0; i < 5; i++)
		CHECK(strcmp(got[i], keys[6 + i]) == 0);
	free_keys(got, n);
	CHECK_OK(fst_objstore_list(store, "p/", NULL, 2, &l, &err), &err);
	CHECK(l.nentries == 2 && l.truncated && strcmp(l.next, "p/2") == 0);
	fst_objstore_list_free(&l);
	/* exactly a full last page is not truncated */
	CHECK_OK(fst_objstore_list(store, "p/", "p/3", 2, &l, &err), &err);
	CHECK(l.nentries == 2 && !l.truncated);
	fst_objstore_list_free(&l);

	/* pages of 1 across nested directories give the same order */
	n = list_all(store, "o", 1, got, lengthof(got), &pages);
	CHECK_EQ_INT(n, 6);
	for (i = 0; i < 6; i++)
		CHECK(strcmp(got[i], sorted_o[i]) == 0);
	free_keys(got, n);

	/* a prefix that is not a directory boundary */
	n = list_all(store, "o/x", 1000, got, lengthof(got), &pages);
	CHECK_EQ_INT(n, 5);
	CHECK(strcmp(got[0], "o/x-1") == 0 && strcmp(got[4], "o/x0") == 0);
	free_keys(got, n);
	n = list_all(store, "o/x/b", 1000, got, lengthof(got), &pages);
	CHECK_EQ_INT(n, 2);
	CHECK(strcmp(got[0], "o/x/b-d") == 0 && strcmp(got[1], "o/x/b/c") == 0);
	free_keys(got, n);

	/* start_after inside a subtree, whole store, nothing */
	CHECK_OK(fst_objstore_list(store, "o/", "o/x/b-d", 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 3);
	CHECK(strcmp(l.entries[0].key, "o/x/b/c") == 0);
	fst_objstore_list_free(&l);
	n = list_all(store, "", 3, got, lengthof(got), &pages);
	CHECK_EQ_INT(n, (int) lengthof(keys));
	for (i = 1; i < n; i++)
		CHECK(strcmp(got[i - 1], got[i]) < 0);
	free_keys(got, n);
	CHECK_OK(fst_objstore_list(store, "nope/", NULL, 0, &l, &err), &err);
	CHECK(l.nentries == 0 && !l.truncated);
	fst_objstore_list_free(&l);
	CHECK_OK(fst_objstore_list(store, "o/y/", NULL, 0, &l, &err), &err);
	CHECK(l.nentries == 0);
	fst_objstore_list_free(&l);
	CHECK(fst_objstore_list(store, "../", NULL, 0, &l, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_stats(store)->keys_listed > 0);
	fst_objstore_close(store);
}

FST_TEST(objstore_temp_files_invisible)
{
	char		root[512];
	char		path[700];
	FstObjStore *store;
	FstError	err;
	FstObjList	l;
	FstObjInfo	info;
	int			fd;

	if (!open_store("temps", &store, root, sizeof(root)))
		return;
	CHECK(put_str(store, "t/obj", "visible"));
	/* what a writer that crashed before its rename leaves behind */
	snprintf(path, sizeof(path), "%s/t/.tmp.obj2.12345.1", root);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, "partial", 7) == 7);
	close(fd);
	snprintf(path, sizeof(path), "%s/.tmp.top.1.1", root);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	close(fd);

	CHECK_OK(fst_objstore_list(store, "", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 1);
	CHECK(strcmp(l.entries[0].key, "t/obj") == 0);
	fst_objstore_list_free(&l);
	CHECK_OK(fst_objstore_list(store, "t/", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 1);
	fst_objstore_list_free(&l);
	/* and no key can name them */
	CHECK(fst_objstore_head(store, "t/.tmp.obj2.12345.1", &info, &err) == FST_INVALID_ARGUMENT);
	CHECK(fst_objstore_validate_key("t/.tmp.obj2.12345.1", &err) == FST_INVALID_ARGUMENT);
	/* a successful put leaves no temporary file behind */
	CHECK(put_str(store, "t/obj3", "x"));
	CHECK(fst_objstore_put_if_absent(store, "t/obj3", "y", 1, &err) == FST_ALREADY_EXISTS);
	CHECK_OK(fst_objstore_put_if_absent(store, "t/obj4", "y", 1, &err), &err);
	{
		char		cmd[800];

		snprintf(cmd, sizeof(cmd),
				 "test $(ls -A '%s/t' | grep -c '^\\.tmp\\.') -eq 1", root);
		CHECK_MSG(system(cmd) == 0, "stray temporary files in %s/t", root);
	}
	fst_objstore_close(store);
}

FST_TEST(objstore_delete_batch)
{
	const char *keys[] = {"d/1", "d/sub/2", "d/missing", "never/existed", "d/3"};
	FstCode		codes[lengthof(keys)];
	char		root[512];
	FstObjStore *store;
	FstError	err;
	FstObjList	l;
	FstObjInfo	info;
	const char *badbatch[] = {"d/3", "../evil"};
	int			i;

	if (!open_store("delete", &store, root, sizeof(root)))
		return;
	CHECK(put_str(store, "d/1", "1"));
	CHECK(put_str(store, "d/sub/2", "2"));
	CHECK(put_str(store, "d/3", "3"));
	CHECK(put_str(store, "d/keep", "k"));

	/* an invalid key refuses the whole batch */
	CHECK(fst_objstore_delete_batch(store, badbatch, 2, codes, &err) == FST_INVALID_ARGUMENT);
	CHECK(codes[1] == FST_INVALID_ARGUMENT);
	CHECK_OK(fst_objstore_head(store, "d/3", &info, &err), &err);

	for (i = 0; i < (int) lengthof(codes); i++)
		codes[i] = FST_IO_ERROR;
	CHECK_OK(fst_objstore_delete_batch(store, keys, lengthof(keys), codes, &err),
			 &err);
	for (i = 0; i < (int) lengthof(codes); i++)
		CHECK_EQ_INT(codes[i], FST_OK);
	CHECK(fst_objstore_head(store, "d/1", &info, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_head(store, "d/sub/2", &info, &err) == FST_NOT_FOUND);
	CHECK_OK(fst_objstore_list(store, "", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 1);
	CHECK(strcmp(l.entries[0].key, "d/keep") == 0);
	fst_objstore_list_free(&l);
	/* again: everything is missing now, still fine; codes may be NULL */
	CHECK_OK(fst_objstore_delete_batch(store, keys, lengthof(keys), NULL, &err),
			 &err);
	CHECK_OK(fst_objstore_delete_batch(store, NULL, 0, NULL, &err), &err);
	/* a deleted key can be created again */
	CHECK_OK(fst_objstore_put_if_absent(store, "d/1", "new", 3, &err), &err);
	CHECK_EQ_INT(fst_objstore_stats(store)->keys_deleted, 2 * lengthof(keys));
	fst_objstore_close(store);
}

FST_TEST(objstore_stats)
{
	char		root[512];
	FstObjStore *store;
	FstError	err;
	const FstObjStats *st;
	FstBuf		b;
	FstObjInfo	info;
	FstObjList	l;
	char		buf[4];
	size_t		got;
	const char *del[] = {"s/a"};

	if (!open_store("stats", &store, root, sizeof(root)))
		return;
	st = fst_objstore_stats(store);
	CHECK(st->requests[FST_OBJ_OP_PUT] == 0 && st->bytes_written == 0);
	fst_buf_init(&b);
	CHECK(put_str(store, "s/a", "hello"));
	CHECK_OK(fst_objstore_put_if_absent(store, "s/b", "abc", 3, &err), &err);
	CHECK_OK(fst_objstore_get(store, "s/a", &b, &err), &err);
	CHECK_OK(fst_objstore_get_range(store, "s/a", 1, 4, buf, &got, &err), &err);
	CHECK_OK(fst_objstore_head(store, "s/a", &info, &err), &err);
	CHECK(fst_objstore_get(store, "s/zz", &b, &err) == FST_NOT_FOUND);
	CHECK_OK(fst_objstore_list(store, "s/", NULL, 0, &l, &err), &err);
	fst_objstore_list_free(&l);
	CHECK_OK(fst_objstore_delete_batch(store, del, 1, NULL, &err), &err);
	CHECK(fst_objstore_put(store, "/bad", "x", 1, &err) == FST_INVALID_ARGUMENT);

	CHECK_EQ_INT(st->requests[FST_OBJ_OP_PUT], 2);
	CHECK_EQ_INT(st->errors[FST_OBJ_OP_PUT], 1);
	CHECK_EQ_INT(st->requests[FST_OBJ_OP_PUT_IF_ABSENT], 1);
	CHECK_EQ_INT(st->requests[FST_OBJ_OP_GET], 2);
	CHECK_EQ_INT(st->errors[FST_OBJ_OP_GET], 0);
	CHECK_EQ_INT(st->not_found, 1);
	CHECK_EQ_INT(st->requests[FST_OBJ_OP_GET_RANGE], 1);
	CHECK_EQ_INT(st->requests[FST_OBJ_OP_HEAD], 1);
	CHECK_EQ_INT(st->requests[FST_OBJ_OP_LIST], 1);
	CHECK_EQ_INT(st->keys_listed, 2);
	CHECK_EQ_INT(st->requests[FST_OBJ_OP_DELETE], 1);
	CHECK_EQ_INT(st->keys_deleted, 1);
	CHECK_EQ_INT(st->bytes_written, 5 + 3);
	CHECK_EQ_INT(st->bytes_read, 5 + 4);
	CHECK(strcmp(fst_objstore_op_name(FST_OBJ_OP_GET_RANGE), "get_range") == 0);
	/* wall time is counted per kind (a put writes and renames a file) */
	CHECK(st->request_usec[FST_OBJ_OP_PUT] > 0 || st->request_usec[FST_OBJ_OP_PUT_IF_ABSENT] > 0);
	CHECK_EQ_INT(st->retries, 0);
	fst_buf_free(&b);
	fst_objstore_close(store);
}

/*
 * Permission errors.  Root ignores file modes, so when running as root the
 * requests are made by a child that first drops to an unprivileged uid.
 */
FST_TEST(objstore_access_denied)
{
	char		root[512];
	char		path[700];
	FstObjStore *store;
	FstError	err;
	FstObjInfo	info;
	pid_t		pid;
	int			status;

	if (!open_store("denied", &store, root, sizeof(root)))
		return;
	CHECK(put_str(store, "ro/obj", "secret"));
	snprintf(path, sizeof(path), "%s/ro/obj", root);
	CHECK(chmod(path, 0) == 0);
	snprintf(path, sizeof(path), "%s/ro", root);
	CHECK(chmod(path, 0555) == 0);

	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
	{
		FstBuf		b;
		FstCode		c1,
					c2;

		if (geteuid() == 0 &&
			(setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
			 setuid(65534) != 0))
			_exit(77);
		fst_buf_init(&b);
		c1 = fst_objstore_put(store, "ro/new", "x", 1, &err);
		c2 = fst_objstore_get(store, "ro/obj", &b, &err);
		if (c1 != FST_ACCESS_DENIED)
			_exit(10 + c1);
		if (c2 != FST_ACCESS_DENIED)
			_exit(40 + c2);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(chmod(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/ro/obj", root);
	CHECK(chmod(path, 0600) == 0);
	CHECK(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		printf("     (skipped: running as root and could not drop privileges)\n");
	else
		CHECK_MSG(WEXITSTATUS(status) == 0,
				  "child saw put code %d / get code %d, expected access denied",
				  WEXITSTATUS(status) < 40 ? WEXITSTATUS(status) - 10 : 0,
				  WEXITSTATUS(status) >= 40 ? WEXITSTATUS(status) - 40 : 0);
	/* the parent still can, and the failed put left nothing behind */
	CHECK(put_str(store, "ro/new2", "ok"));
	CHECK(fst_objstore_head(store, "ro/new", &info, &err) == FST_NOT_FOUND);
	fst_objstore_close(store);
}
