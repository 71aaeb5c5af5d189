/*
 * test_s3.c — the s3:// backend against a real S3-compatible server.
 *
 * These tests ("s3it_*") exist only when FORST_S3_TEST_URL names a store,
 * such as s3://forst-test/it?endpoint=http://127.0.0.1:7480, with
 * credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; without it
 * they are not registered (and say so on stderr), so that "make unit"
 * never counts them as passed.  scripts/test.sh --only s3 runs them
 * against Ceph RGW (see scripts/rgw.sh).
 *
 * Every test works under its own prefix, <url prefix>/<run>/<test>, <run>
 * being FORST_S3_TEST_RUN or the process id.
 *	  FORST_S3_TEST_SERVER=s3rver	the server is s3rver (scripts/
 *									s3-server.sh): it ignores If-None-Match
 *									and signatures, and answers a range of
 *									an empty object with a broken reply, so
 *									the tests of those are not run
 *	  FORST_S3_TEST_CLI_DIR=dir		run only s3it_cli_interop (scripts/
 *									s3-cli-check.sh drives it)
 *
 * Failures (bad credentials, missing bucket, refused connections, unknown
 * hosts, timeouts, interrupts) are tested in test_s3_faults.c.
 */
#include "s3_testutil.h"
#include "s3_internal.h"
#include "source_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void
s3it_put_get_roundtrip(void)
{
	FstObjStore *store;
	FstError	err;
	FstBuf		b;
	char	   *big;

	if (!open_named("roundtrip", &store))
		return;
	fst_buf_init(&b);
	CHECK(put_str(store, "a/b/c.sst", "hello"));
	CHECK_OK(fst_objstore_get(store, "a/b/c.sst", &b, &err), &err);
	CHECK(buf_is(&b, "hello", 5));
	/* overwrite */
	CHECK(put_str(store, "a/b/c.sst", "bye"));
	CHECK_OK(fst_objstore_get(store, "a/b/c.sst", &b, &err), &err);
	CHECK(buf_is(&b, "bye", 3));
	/* empty object; a key with characters that need encoding */
	CHECK_OK(fst_objstore_put(store, "empty", "", 0, &err), &err);
	CHECK_OK(fst_objstore_get(store, "empty", &b, &err), &err);
	CHECK(b.len == 0);
	CHECK(put_str(store, "odd/a b+c=d&e%f$g'h(i)~j", "odd"));
	CHECK_OK(fst_objstore_get(store, "odd/a b+c=d&e%f$g'h(i)~j", &b, &err), &err);
	CHECK(buf_is(&b, "odd", 3));
	/* binary, 300 KB */
	big = malloc(300000);
	fill_random(big, 300000, 42);
	CHECK_OK(fst_objstore_put(store, "bin", big, 300000, &err), &err);
	CHECK_OK(fst_objstore_get(store, "bin", &b, &err), &err);
	CHECK(buf_is(&b, big, 300000));
	free(big);
	fst_buf_free(&b);
	fst_objstore_close(store);
}

static void
s3it_get_range_and_head(void)
{
	FstObjStore *store;
	FstError	err;
	FstObjInfo	info;
	char		buf[64];
	size_t		got;
	time_t		now = time(NULL);

	if (!open_named("range", &store))
		return;
	CHECK(put_str(store, "r/obj", "0123456789abcdef"));
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 4, 6, buf, &got, &err), &err);
	CHECK(got == 6 && memcmp(buf, "456789", 6) == 0);
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 10, 6, buf, &got, &err), &err);
	CHECK(got == 6 && memcmp(buf, "abcdef", 6) == 0);
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 12, 30, buf, &got, &err), &err);
	CHECK(got == 4 && memcmp(buf, "cdef", 4) == 0);
	got = 99;
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 16, 4, buf, &got, &err), &err);
	CHECK(got == 0);
	got = 99;
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 1000, 4, buf, &got, &err), &err);
	CHECK(got == 0);
	CHECK_OK(fst_objstore_get_range(store, "r/obj", 3, 0, buf, &got, &err), &err);
	CHECK(got == 0);

	CHECK_OK(fst_objstore_head(store, "r/obj", &info, &err), &err);
	CHECK(info.size == 16);
	CHECK_MSG(info.mtime >= (int64) now - 120 && info.mtime <= (int64) now + 120,
			  "mtime %lld, now %lld", (long long) info.mtime, (long long) now);
	CHECK_OK(fst_objstore_put(store, "r/empty", "", 0, &err), &err);
	CHECK_OK(fst_objstore_head(store, "r/empty", &info, &err), &err);
	CHECK(info.size == 0);
	if (!lenient_server())
	{
		got = 99;
		CHECK_OK(fst_objstore_get_range(store, "r/empty", 0, 4, buf, &got, &err), &err);
		CHECK(got == 0);
	}
	fst_objstore_close(store);
}

/*
 * A batch of ranged reads over several objects (sent in parallel): every
 * range as a get_range of its own would read it, a missing object's range
 * FST_NOT_FOUND and the others still read, counted as one request each.
 */
static void
s3it_get_ranges(void)
{
	enum
	{
		NOBJ = 12, OBJ_SIZE = 200 * 1000, NR = 40
	};
	FstObjStore *store;
	FstError	err;
	char	   *data[NOBJ];
	char		keys[NOBJ + 1][32];
	FstObjRange r[NR];
	uint64		gets_before;
	int			i;

	if (!open_named("ranges", &store))
		return;
	for (i = 0; i < NOBJ; i++)
	{
		data[i] = malloc(OBJ_SIZE);
		fill_random(data[i], OBJ_SIZE, 100 + i);
		snprintf(keys[i], sizeof(keys[i]), "g/obj%02d", i);
		CHECK_OK(fst_objstore_put(store, keys[i], data[i], OBJ_SIZE, &err), &err);
	}
	snprintf(keys[NOBJ], sizeof(keys[NOBJ]), "g/missing");
	for (i = 0; i < NR; i++)
	{
		r[i].key = keys[i % NOBJ];
		r[i].offset = (uint64) (i * 7919) % OBJ_SIZE;
		r[i].len = 1000 + (size_t) (i * 3001) % 60000;
		r[i].buf = malloc(r[i].len);
	}
	r[5].offset = OBJ_SIZE - 100;	/* short at the end */
	r[6].offset = OBJ_SIZE + 10;	/* past the end: empty */
	r[7].len = 0;				/* nothing to read */
	gets_before = fst_objstore_stats(store)->requests[FST_OBJ_OP_GET_RANGE];
	CHECK_OK(fst_objstore_get_ranges(store, r, NR, &err), &err);
	CHECK(fst_objstore_stats(store)->requests[FST_OBJ_OP_GET_RANGE] == gets_before + NR);
	CHECK(((S3Store *) store)->multi != NULL);	/* the parallel path ran */
	for (i = 0; i < NR; i++)
	{
		int			o = i % NOBJ;
		size_t		want = r[i].offset >= OBJ_SIZE ? 0 :
			Min(r[i].len, (size_t) (OBJ_SIZE - r[i].offset));

		CHECK_MSG(r[i].code == FST_OK, "range %d: %s", i, fst_code_name(r[i].code));
		CHECK_MSG(r[i].got == want, "range %d: got %zu, want %zu", i, r[i].got, want);
		CHECK_MSG(want == 0 || memcmp(r[i].buf, data[o] + r[i].offset, want) == 0,
				  "range %d: wrong bytes", i);
	}

	/* a missing object: its range fails, the others are read */
	r[9].key = keys[NOBJ];
	CHECK(fst_objstore_get_ranges(store, r, NR, &err) == FST_NOT_FOUND);
	CHECK(r[9].code == FST_NOT_FOUND && r[9].got == 0);
	CHECK(r[10].code == FST_OK && r[10].got > 0 &&
		  memcmp(r[10].buf, data[10] + r[10].offset, r[10].got) == 0);

	for (i = 0; i < NR; i++)
		free(r[i].buf);
	for (i = 0; i < NOBJ; i++)
		free(data[i]);
	fst_objstore_close(store);
}

static void
s3it_not_found(void)
{
	FstObjStore *store;
	FstError	err;
	FstObjInfo	info;
	FstBuf		b;
	char		buf[8];
	size_t		got;
	const char *keys[] = {"nope/1", "nope/2"};

	if (!open_named("notfound", &store))
		return;
	fst_buf_init(&b);
	CHECK(fst_objstore_get(store, "nope", &b, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_head(store, "nope", &info, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_get_range(store, "nope", 0, 8, buf, &got, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_get_range(store, "nope", 0, 0, buf, &got, &err) == FST_NOT_FOUND);
	/* deleting what is not there is success */
	CHECK_OK(fst_objstore_delete_batch(store, keys, 2, NULL, &err), &err);
	CHECK(fst_objstore_stats(store)->not_found == 4);
	fst_buf_free(&b);
	fst_objstore_close(store);
}

static void
s3it_put_if_absent(void)
{
	FstObjStore *store;
	FstError	err;
	FstBuf		b;

	if (!open_named("ifabsent", &store))
		return;
	fst_buf_init(&b);
	CHECK_OK(fst_objstore_put_if_absent(store, "m/0001", "first", 5, &err), &err);
	CHECK(fst_objstore_put_if_absent(store, "m/0001", "second", 6, &err) == FST_ALREADY_EXISTS);
	CHECK_MSG(strstr(err.msg, "already exists") != NULL, "%s", err.msg);
	CHECK_OK(fst_objstore_get(store, "m/0001", &b, &err), &err);
	CHECK(buf_is(&b, "first", 5));
	CHECK(fst_objstore_stats(store)->already_exists == 1);
	fst_buf_free(&b);
	fst_objstore_close(store);
}

/*
 * A body read from a source in pieces (a compaction's spooled output): one
 * conditional PUT, signed over the streamed body's SHA-256 (RGW checks
 * it), stored byte for byte; taken keys refused; a source failing half way
 * fails the put without a retry and leaves no object.
 */
static void
s3it_put_if_absent_source(void)
{
	FstObjStore *store;

	if (!open_named("ifabsent_source", &store))
		return;
	test_source_put_contract(store, 5 * 256 * 1024 + 999, 11);
	/* the failing source failed in the digest pass, before any request */
	CHECK(fst_objstore_stats(store)->retries == 0);
	fst_objstore_close(store);
}

/* Forked writers race for one key: exactly one wins. */
static void
s3it_put_if_absent_race(void)
{
	enum
	{
	NPROC = 6, ROUNDS = 3};
	FstObjStore *store;
	FstError	err;
	FstBuf		b;
	int			round;

	if (!open_named("race", &store))
		return;
	fst_buf_init(&b);
	for (round = 0; round < ROUNDS; round++)
	{
		pid_t		pids[NPROC];
		int			winners = 0;
		int			winner = -1;
		int			i;
		char		key[32];
		char		want[32];

		snprintf(key, sizeof(key), "race/%d", round);
		for (i = 0; i < NPROC; i++)
		{
			pids[i] = fork();
			if (pids[i] == 0)
			{
				FstObjStore *mine;
				FstError	e;
				char		val[32];
				FstCode		c;

				if (!open_named("race", &mine))
					_exit(3);
				snprintf(val, sizeof(val), "writer %d", i);
				c = fst_objstore_put_if_absent(mine, key, val, strlen(val), &e);
				fst_objstore_close(mine);
				if (c != FST_OK && c != FST_ALREADY_EXISTS)
					fprintf(stderr, "    child %d: %s\n", i, e.msg);
				_exit(c == FST_OK ? 0 : c == FST_ALREADY_EXISTS ? 1 : 2);
			}
		}
		for (i = 0; i < NPROC; i++)
		{
			int			st;

			CHECK(waitpid(pids[i], &st, 0) == pids[i]);
			CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) <= 1,
					  "child %d failed (status %d)", i, st);
			if (WEXITSTATUS(st) == 0)
			{
				winners++;
				winner = i;
			}
		}
		CHECK_EQ_INT(winners, 1);
		snprintf(want, sizeof(want), "writer %d", winner);
		CHECK_OK(fst_objstore_get(store, key, &b, &err), &err);
		CHECK(buf_is(&b, want, strlen(want)));
	}
	fst_buf_free(&b);
	fst_objstore_close(store);
}

/*
 * The lost-reply resolution of create-if-absent: an object written with a
 * writer id (as the first, unanswered attempt would have) is recognized as
 * ours by that id, and as someone else's by any other.
 */
static void
s3it_lost_reply_resolution(void)
{
	FstObjStore *store;
	S3Store    *s;
	FstError	err;
	FstSigV4Pair h[] = {
		{"If-None-Match", "*"},
		{S3_WRITER_META, "0123456789abcdef0123456789abcdef"},
	};
	S3Request	req = {0};
	S3Response	resp;
	char	   *full;

	if (!open_named("lostreply", &store))
		return;
	s = (S3Store *) store;
	full = s3_full_key(s, "manifest/1");
	req.method = "PUT";
	req.key = full;
	req.headers = h;
	req.nheaders = lengthof(h);
	req.body = "m";
	req.body_len = 1;
	req.what = "test PUT";
	CHECK_OK(s3_request(s, &req, &resp, &err), &err);
	CHECK_EQ_INT(resp.status, 200);
	s3_response_free(&resp);
	/* the same request again: 412 */
	CHECK_OK(s3_request(s, &req, &resp, &err), &err);
	CHECK_EQ_INT(resp.status, 412);
	s3_response_free(&resp);
	CHECK_OK(s3_resolve_lost_reply(s, full, "manifest/1",
								   "0123456789abcdef0123456789abcdef", &err), &err);
	CHECK(s3_resolve_lost_reply(s, full, "manifest/1",
								"ffffffffffffffffffffffffffffffff", &err) == FST_ALREADY_EXISTS);
	free(full);
	fst_objstore_close(store);
}

static void
s3it_list_pagination(void)
{
	FstObjStore *store;
	FstError	err;
	FstObjList	l;
	const char *keys[] = {
		"l/a", "l/ab/1", "l/ab/2", "l/b", "l/c/d/e", "l/c0", "l/d", "l/e",
		"l/f", "l/g", "l/h", "l/i", "m/outside", "k/outside"
	};
	int			nl = 12;
	char	   *next = NULL;
	int			seen = 0;
	int			pages = 0;
	int			i;

	if (!open_named("list", &store))
		return;
	for (i = 0; i < (int) lengthof(keys); i++)
		CHECK(put_str(store, keys[i], keys[i]));

	/* pages of 5: every "l/" key once, in order */
	do
	{
		CHECK_OK(fst_objstore_list(store, "l/", next, 5, &l, &err), &err);
		pages++;
		CHECK(l.nentries <= 5);
		for (i = 0; i < l.nentries; i++)
		{
			CHECK_MSG(seen < nl && strcmp(l.entries[i].key, keys[seen]) == 0,
					  "entry %d: %s", seen, l.entries[i].key);
			CHECK(l.entries[i].size == strlen(keys[seen]));
			seen++;
		}
		free(next);
		next = l.next ? strdup(l.next) : NULL;
		CHECK(l.truncated == (next != NULL));
		fst_objstore_list_free(&l);
	} while (next);
	CHECK_EQ_INT(seen, nl);
	CHECK(pages >= 3);

	/* a prefix that is not at a '/' boundary */
	CHECK_OK(fst_objstore_list(store, "l/a", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 3);
	CHECK(!l.truncated && l.next == NULL);
	fst_objstore_list_free(&l);
	CHECK_OK(fst_objstore_list(store, "l/c", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 2);
	fst_objstore_list_free(&l);
	/* start_after in the middle, also a key that does not exist */
	CHECK_OK(fst_objstore_list(store, "l/", "l/c0", 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 6);
	CHECK(strcmp(l.entries[0].key, "l/d") == 0);
	fst_objstore_list_free(&l);
	CHECK_OK(fst_objstore_list(store, "l/", "l/c1", 0, &l, &err), &err);
	CHECK(l.nentries == 6 && strcmp(l.entries[0].key, "l/d") == 0);
	fst_objstore_list_free(&l);
	/* everything; nothing */
	CHECK_OK(fst_objstore_list(store, "", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, (int) lengthof(keys));
	CHECK(strcmp(l.entries[0].key, "k/outside") == 0);
	fst_objstore_list_free(&l);
	CHECK_OK(fst_objstore_list(store, "zzz", NULL, 0, &l, &err), &err);
	CHECK(l.nentries == 0 && !l.truncated);
	fst_objstore_list_free(&l);
	fst_objstore_close(store);
}

/* More keys than one ListObjectsV2 page and one DeleteObjects request. */
static void
s3it_many_keys(void)
{
	enum
	{
	N = 1100};
	FstObjStore *store;
	FstError	err;
	FstObjList	l;
	char	  **keys = calloc(N, sizeof(char *));
	FstCode    *codes = calloc(N, sizeof(FstCode));
	int			i;

	if (!open_named("many", &store))
		return;
	for (i = 0; i < N; i++)
	{
		char		k[32];

		snprintf(k, sizeof(k), "k/%05d", i);
		keys[i] = strdup(k);
		CHECK(put_str(store, k, "x"));
	}
	CHECK_OK(fst_objstore_list(store, "k/", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 1000);
	CHECK(l.truncated && strcmp(l.next, "k/00999") == 0);
	fst_objstore_list_free(&l);
	CHECK_OK(fst_objstore_list(store, "k/", "k/00999", 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 100);
	CHECK(!l.truncated);
	fst_objstore_list_free(&l);

	CHECK_OK(fst_objstore_delete_batch(store, (const char *const *) keys, N,
									   codes, &err), &err);
	for (i = 0; i < N; i++)
		CHECK(codes[i] == FST_OK);
	CHECK(fst_objstore_stats(store)->keys_deleted == N);
	CHECK_OK(fst_objstore_list(store, "k/", NULL, 0, &l, &err), &err);
	CHECK_EQ_INT(l.nentries, 0);
	fst_objstore_list_free(&l);
	for (i = 0; i < N; i++)
		free(keys[i]);
	free(keys);
	free(codes);
	fst_objstore_close(store);
}

static void
s3it_delete_batch(void)
{
	FstObjStore *store;
	FstError	err;
	FstObjInfo	info;
	const char *keys[] = {"d/1", "d/missing", "d/2", "d/&<odd>'\""};
	FstCode		codes[4];

	if (!open_named("delete", &store))
		return;
	CHECK(put_str(store, "d/1", "1"));
	CHECK(put_str(store, "d/2", "2"));
	CHECK(put_str(store, "d/3", "3"));
	CHECK(put_str(store, "d/&<odd>'\"", "4"));
	CHECK_OK(fst_objstore_delete_batch(store, keys, 4, codes, &err), &err);
	CHECK(codes[0] == FST_OK && codes[1] == FST_OK && codes[2] == FST_OK &&
		  codes[3] == FST_OK);
	CHECK(fst_objstore_head(store, "d/1", &info, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_head(store, "d/2", &info, &err) == FST_NOT_FOUND);
	CHECK(fst_objstore_head(store, "d/&<odd>'\"", &info, &err) == FST_NOT_FOUND);
	CHECK_OK(fst_objstore_head(store, "d/3", &info, &err), &err);
	fst_objstore_close(store);
}

static void
s3it_multipart(void)
{
	FstS3Config cfg;
	FstObjStore *store;
	FstError	err;
	FstBuf		b;
	size_t		n = (size_t) 20 << 20;
	char	   *data = malloc(n);
	char	   *buf = malloc(1 << 20);
	size_t		got;
	FstObjInfo	info;

	fst_s3_config_defaults(&cfg);
	cfg.multipart_threshold = (uint64) 6 << 20;
	cfg.part_size = (uint64) 5 << 20;
	CHECK_MSG(open_cfg("multipart", &cfg, NULL, &store, &err), "open: %s", err.msg);
	fill_random(data, n, 7);
	CHECK_OK(fst_objstore_put(store, "big.sst", data, n, &err), &err);
	CHECK_OK(fst_objstore_head(store, "big.sst", &info, &err), &err);
	CHECK(info.size == n);
	fst_buf_init(&b);
	CHECK_OK(fst_objstore_get(store, "big.sst", &b, &err), &err);
	CHECK(buf_is(&b, data, n));
	/* a range across the first part boundary */
	CHECK_OK(fst_objstore_get_range(store, "big.sst", (5 << 20) - 1000, 1 << 20,
									buf, &got, &err), &err);
	CHECK(got == (1 << 20) && memcmp(buf, data + (5 << 20) - 1000, got) == 0);
	fst_buf_free(&b);
	free(data);
	free(buf);
	fst_objstore_close(store);
}


/* Read/write files of FORST_S3_TEST_CLI_DIR for scripts/s3-cli-check.sh. */
static bool
read_file(const char *path, FstBuf *out)
{
	char		chunk[65536];
	FILE	   *f = fopen(path, "rb");
	size_t		n;

	if (f == NULL)
		return false;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fst_buf_append(out, chunk, n);
	fclose(f);
	return !out->oom;
}

static bool
write_file(const char *path, const void *data, size_t len)
{
	FILE	   *f = fopen(path, "wb");
	bool		ok;

	if (f == NULL)
		return false;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/*
 * Interoperability with the aws CLI: read what it uploaded (from-aws/blob,
 * also in <dir>/from-aws.bin), write objects for it to download and check
 * (to-aws/<name>, also in <dir>/to-aws/<name>).
 */
static void
s3it_cli_interop(void)
{
	const char *dir = getenv("FORST_S3_TEST_CLI_DIR");
	const size_t sizes[] = {0, 1, 65536 + 7, (size_t) 20 << 20};
	const char *names[] = {"empty", "one", "small.sst", "big.sst"};
	FstS3Config cfg;
	FstObjStore *store;
	FstError	err;
	FstBuf		want;
	FstBuf		got;
	char		path[1024];
	int			i;

	fst_s3_config_defaults(&cfg);
	cfg.multipart_threshold = (uint64) 8 << 20;
	cfg.part_size = (uint64) 5 << 20;
	CHECK_MSG(open_cfg(NULL, &cfg, NULL, &store, &err), "open: %s", err.msg);
	fst_buf_init(&want);
	fst_buf_init(&got);
	snprintf(path, sizeof(path), "%s/from-aws.bin", dir);
	CHECK_MSG(read_file(path, &want), "cannot read %s", path);
	CHECK_OK(fst_objstore_get(store, "from-aws/blob", &got, &err), &err);
	CHECK(buf_is(&got, want.data, want.len));

	snprintf(path, sizeof(path), "%s/to-aws", dir);
	CHECK(mkdir(path, 0755) == 0 || errno == EEXIST);
	for (i = 0; i < (int) lengthof(sizes); i++)
	{
		char	   *data = malloc(Max(sizes[i], 1));
		char		key[64];

		fill_random(data, sizes[i], 100 + i);
		snprintf(key, sizeof(key), "to-aws/%s", names[i]);
		CHECK_OK(fst_objstore_put(store, key, data, sizes[i], &err), &err);
		snprintf(path, sizeof(path), "%s/to-aws/%s", dir, names[i]);
		CHECK(write_file(path, data, sizes[i]));
		free(data);
	}
	fst_buf_free(&want);
	fst_buf_free(&got);
	fst_objstore_close(store);
}

static void __attribute__((constructor))
register_s3_tests(void)
{
	if (!env_set("FORST_S3_TEST_URL"))
	{
		fprintf(stderr, "note: s3 integration tests (s3it_*) not run: FORST_S3_TEST_URL is not set\n");
		return;
	}
	if (env_set("FORST_S3_TEST_CLI_DIR"))
	{
		/* only the interop test: the script gives it its own prefix */
		fst_test_register("s3it_cli_interop", s3it_cli_interop);
		return;
	}
	fst_test_register("s3it_put_get_roundtrip", s3it_put_get_roundtrip);
	fst_test_register("s3it_get_range_and_head", s3it_get_range_and_head);
	fst_test_register("s3it_get_ranges", s3it_get_ranges);
	fst_test_register("s3it_not_found", s3it_not_found);
	fst_test_register("s3it_list_pagination", s3it_list_pagination);
	fst_test_register("s3it_many_keys", s3it_many_keys);
	fst_test_register("s3it_delete_batch", s3it_delete_batch);
	fst_test_register("s3it_multipart", s3it_multipart);
	if (!lenient_server())
	{
		fst_test_register("s3it_put_if_absent", s3it_put_if_absent);
		fst_test_register("s3it_put_if_absent_source", s3it_put_if_absent_source);
		fst_test_register("s3it_put_if_absent_race", s3it_put_if_absent_race);
		fst_test_register("s3it_lost_reply_resolution", s3it_lost_reply_resolution);
	}
	else
		fprintf(stderr, "note: s3it_put_if_absent, s3it_put_if_absent_race, s3it_lost_reply_resolution not run: s3rver has no conditional writes\n");
}
