/*
 * test_objkey.c — object keys of the bucket layout (src/store/objkey.c):
 * every kind built and parsed back to the same fields, the exact strings
 * the layout promises, and refusal of malformed keys and fields.
 */
#include "unit.h"
#include "manifest.h"
#include "objkey.h"

#include <string.h>

#define SYSID UINT64CONST(7312345678901234567)

static bool
same_key(const FstObjKey *a, const FstObjKey *b)
{
	return a->kind == b->kind && a->cluster == b->cluster &&
		strcmp(a->savepoint, b->savepoint) == 0 && a->db == b->db &&
		a->rel == b->rel && a->version == b->version &&
		a->file_id == b->file_id && a->checkpoint_id == b->checkpoint_id &&
		a->other_cluster == b->other_cluster && a->src_db == b->src_db &&
		a->src_rel == b->src_rel;
}

/* The fields of kind that build and parse: the others stay zero. */
static FstObjKey
make(FstObjKeyKind kind, uint64 cluster, const char *sp, uint64 a, uint64 b)
{
	FstObjKey	k;

	memset(&k, 0, sizeof(k));
	k.kind = kind;
	k.cluster = cluster;
	if (sp)
		strcpy(k.savepoint, sp);
	switch (kind)
	{
		case FST_OBJKEY_TABLE:
		case FST_OBJKEY_MANIFEST:
		case FST_OBJKEY_SST:
			k.db = (uint32) a;
			k.rel = (uint32) (a >> 32);
			if (kind == FST_OBJKEY_MANIFEST)
				k.version = b;
			if (kind == FST_OBJKEY_SST)
				k.file_id = b;
			break;
		case FST_OBJKEY_CHECKPOINT:
		case FST_OBJKEY_DISTRIBUTED:
			k.checkpoint_id = b;
			break;
		case FST_OBJKEY_PIN:
		case FST_OBJKEY_PINNED:
			k.other_cluster = b;
			k.db = (uint32) a;
			k.rel = (uint32) (a >> 32);
			k.src_db = (uint32) (a >> 16);
			k.src_rel = (uint32) (b >> 7);
			break;
		default:
			break;
	}
	return k;
}

static void
check_round_trip(const FstObjKey *k, const char *expect)
{
	char		buf[512];
	char		again[512];
	FstObjKey	p;
	int			n = fst_objkey_build(k, buf, sizeof(buf));

	CHECK_MSG(n > 0 && (size_t) n == strlen(buf), "build of kind %d failed", (int) k->kind);
	if (expect)
		CHECK_MSG(strcmp(buf, expect) == 0, "built \"%s\", expected \"%s\"", buf, expect);
	CHECK_MSG(fst_objkey_parse(buf, &p), "\"%s\" does not parse", buf);
	CHECK_MSG(same_key(k, &p), "\"%s\" parses to other fields", buf);
	CHECK_EQ_INT(fst_objkey_build(&p, again, sizeof(again)), n);
	CHECK(strcmp(buf, again) == 0);
	/* one byte short is an overflow, not a truncated key */
	CHECK_EQ_INT(fst_objkey_build(k, again, (size_t) n), -1);
	CHECK(again[0] == '\0');
	CHECK_EQ_INT(fst_objkey_build(k, again, (size_t) n + 1), n);
}

FST_TEST(objkey_layout_strings)
{
	FstObjKey	k;

	k = make(FST_OBJKEY_TABLE, SYSID, NULL, 5 | ((uint64) 16384 << 32), 0);
	check_round_trip(&k, "7312345678901234567/tables/5.16384");
	if (fst_test_failed())
		return;
	k = make(FST_OBJKEY_MANIFEST, SYSID, NULL, 5 | ((uint64) 16384 << 32), 42);
	check_round_trip(&k, "7312345678901234567/tables/5.16384/manifest/00000000000000000042");
	if (fst_test_failed())
		return;
	/* spread of 7: bits 24..31 of 7 * 0x9E3779B1 */
	k = make(FST_OBJKEY_SST, SYSID, NULL, 5 | ((uint64) 16384 << 32), 7);
	CHECK_EQ_INT(fst_objkey_sst_spread(7), (unsigned) ((UINT64CONST(7) * 0x9E3779B1U) >> 24) & 0xff);
	{
		char		expect[128];

		snprintf(expect, sizeof(expect),
				 "7312345678901234567/tables/5.16384/sst/%02x/00000000000000000007.sst",
				 fst_objkey_sst_spread(7));
		check_round_trip(&k, expect);
		if (fst_test_failed())
			return;
	}
	k = make(FST_OBJKEY_CHECKPOINT, SYSID, NULL, 0, 3);
	check_round_trip(&k, "7312345678901234567/checkpoints/00000000000000000003");
	if (fst_test_failed())
		return;
	k = make(FST_OBJKEY_DISTRIBUTED, SYSID, NULL, 0, 12);
	check_round_trip(&k, "7312345678901234567/distributed/00000000000000000012");
	if (fst_test_failed())
		return;
	memset(&k, 0, sizeof(k));
	k.kind = FST_OBJKEY_PIN;
	k.cluster = 11;
	k.other_cluster = 22;
	k.db = 5;
	k.rel = 16384;
	k.src_db = 1;
	k.src_rel = 16390;
	check_round_trip(&k, "11/pins/22.5.16384.1.16390");
	if (fst_test_failed())
		return;
	strcpy(k.savepoint, "nightly-1.a_b");
	check_round_trip(&k, "11/savepoints/nightly-1.a_b/pins/22.5.16384.1.16390");
	if (fst_test_failed())
		return;
	k.savepoint[0] = '\0';
	k.kind = FST_OBJKEY_PINNED;
	check_round_trip(&k, "11/pinned/22.5.16384.1.16390");
	if (fst_test_failed())
		return;
	k = make(FST_OBJKEY_SAVEPOINT, 11, "sp", 0, 0);
	check_round_trip(&k, "11/savepoints/sp/checkpoint");
	if (fst_test_failed())
		return;
	k = make(FST_OBJKEY_SST, 11, "sp", 1 | ((uint64) 2 << 32), 0);
	{
		char		expect[128];

		snprintf(expect, sizeof(expect),
				 "11/savepoints/sp/tables/1.2/sst/%02x/00000000000000000000.sst",
				 fst_objkey_sst_spread(0));
		check_round_trip(&k, expect);
	}
}

FST_TEST(objkey_round_trip_random)
{
	static const FstObjKeyKind kinds[] = {
		FST_OBJKEY_TABLE, FST_OBJKEY_MANIFEST, FST_OBJKEY_SST,
		FST_OBJKEY_CHECKPOINT, FST_OBJKEY_PIN, FST_OBJKEY_PINNED,
		FST_OBJKEY_SAVEPOINT, FST_OBJKEY_DISTRIBUTED
	};
	static const char *const names[] = {NULL, "a", "x.y-z_1", "0"};
	uint64		state = fst_test_seed();
	int			i;

	for (i = 0; i < 20000; i++)
	{
		FstObjKeyKind kind = kinds[fst_rand_range(&state, lengthof(kinds))];
		const char *sp = names[fst_rand_range(&state, lengthof(names))];
		uint64		a = fst_rand_next(&state);
		uint64		b = fst_rand_next(&state);
		uint64		c = fst_rand_next(&state);
		FstObjKey	k;

		/* small and extreme values too */
		if (i % 5 == 1)
			a = 0, b = 0, c = 0;
		else if (i % 5 == 2)
			a = PG_UINT64_MAX, b = PG_UINT64_MAX, c = PG_UINT64_MAX;
		else if (i % 5 == 3)
			a %= 1000, b %= 1000, c %= 1000;
		if (kind == FST_OBJKEY_CHECKPOINT || kind == FST_OBJKEY_PINNED ||
			kind == FST_OBJKEY_DISTRIBUTED)
			sp = NULL;
		if (kind == FST_OBJKEY_SAVEPOINT && sp == NULL)
			sp = "sp";
		k = make(kind, c, sp, a, b);
		check_round_trip(&k, NULL);
		if (fst_test_failed())
			return;
	}
}

FST_TEST(objkey_shorthands)
{
	char		t[256];
	char		buf[256];
	char		name[FST_MANIFEST_OBJECT_NAME_SIZE];
	FstObjKey	k;
	int			n;

	n = fst_objkey_table(SYSID, NULL, 5, 16384, t, sizeof(t));
	CHECK(n > 0 && strcmp(t, "7312345678901234567/tables/5.16384") == 0);
	/* the manifest's name is the engine's (manifest.c) */
	CHECK(fst_manifest_object_name(UINT64CONST(1234567), name, sizeof(name)));
	CHECK(fst_objkey_manifest(t, UINT64CONST(1234567), buf, sizeof(buf)) > 0);
	CHECK(strcmp(buf + strlen(t) + 1, name) == 0);
	CHECK(fst_objkey_parse(buf, &k) && k.kind == FST_OBJKEY_MANIFEST && k.version == 1234567);
	CHECK(fst_objkey_sst(t, 99, buf, sizeof(buf)) > 0);
	CHECK(fst_objkey_parse(buf, &k) && k.kind == FST_OBJKEY_SST && k.file_id == 99 &&
		  k.db == 5 && k.rel == 16384 && k.cluster == SYSID);
	CHECK(fst_objkey_table(11, "sp", 1, 2, t, sizeof(t)) > 0);
	CHECK(strcmp(t, "11/savepoints/sp/tables/1.2") == 0);
	CHECK(fst_objkey_sst(t, 1, buf, sizeof(buf)) > 0);
	CHECK(fst_objkey_parse(buf, &k) && strcmp(k.savepoint, "sp") == 0 && k.file_id == 1);
	CHECK(fst_objkey_checkpoint(11, 7, buf, sizeof(buf)) > 0);
	CHECK(strcmp(buf, "11/checkpoints/00000000000000000007") == 0);
	CHECK(fst_objkey_savepoint(11, "sp", buf, sizeof(buf)) > 0);
	CHECK(strcmp(buf, "11/savepoints/sp/checkpoint") == 0);

	/* table-relative builders want a table prefix */
	CHECK_EQ_INT(fst_objkey_manifest("11/tables/1.2/", 1, buf, sizeof(buf)), -1);
	CHECK_EQ_INT(fst_objkey_sst("11/checkpoints/00000000000000000007", 1, buf, sizeof(buf)), -1);
	CHECK_EQ_INT(fst_objkey_sst(NULL, 1, buf, sizeof(buf)), -1);
	/* bad savepoint names, and kinds that do not live in savepoints */
	CHECK_EQ_INT(fst_objkey_table(11, ".hidden", 1, 2, buf, sizeof(buf)), -1);
	CHECK_EQ_INT(fst_objkey_table(11, "a/b", 1, 2, buf, sizeof(buf)), -1);
	CHECK_EQ_INT(fst_objkey_savepoint(11, "", buf, sizeof(buf)), -1);
	CHECK_EQ_INT(fst_objkey_savepoint(11, NULL, buf, sizeof(buf)), -1);
	memset(&k, 0, sizeof(k));
	k.kind = FST_OBJKEY_CHECKPOINT;
	strcpy(k.savepoint, "sp");
	CHECK_EQ_INT(fst_objkey_build(&k, buf, sizeof(buf)), -1);
	k.kind = FST_OBJKEY_INVALID;
	CHECK_EQ_INT(fst_objkey_build(&k, buf, sizeof(buf)), -1);
	CHECK_EQ_INT(fst_objkey_build(&k, NULL, 0), -1);
}

FST_TEST(objkey_dirs)
{
	FstObjKey	k;
	char		buf[256];
	char		key[256];

	memset(&k, 0, sizeof(k));
	k.cluster = 11;
	k.db = 1;
	k.rel = 2;
	CHECK(fst_objkey_dir(FST_OBJDIR_TABLES, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/tables/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_TABLE, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/tables/1.2/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_MANIFESTS, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/tables/1.2/manifest/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_SSTS, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/tables/1.2/sst/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_CHECKPOINTS, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/checkpoints/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_PINS, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/pins/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_PINNED, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/pinned/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_DISTRIBUTED, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/distributed/") == 0);
	CHECK_EQ_INT(fst_objkey_dir(FST_OBJDIR_SAVEPOINT, &k, buf, sizeof(buf)), -1);
	strcpy(k.savepoint, "sp");
	CHECK(fst_objkey_dir(FST_OBJDIR_SAVEPOINT, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/savepoints/sp/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_PINS, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/savepoints/sp/pins/") == 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_TABLES, &k, buf, sizeof(buf)) > 0 && strcmp(buf, "11/savepoints/sp/tables/") == 0);
	CHECK_EQ_INT(fst_objkey_dir(FST_OBJDIR_CHECKPOINTS, &k, buf, sizeof(buf)), -1);
	CHECK_EQ_INT(fst_objkey_dir(FST_OBJDIR_DISTRIBUTED, &k, buf, sizeof(buf)), -1);
	CHECK_EQ_INT(fst_objkey_dir(FST_OBJDIR_PINS, &k, buf, 10), -1);

	/* every key of a kind starts with its directory */
	k.kind = FST_OBJKEY_SST;
	k.file_id = 12345;
	CHECK(fst_objkey_build(&k, key, sizeof(key)) > 0);
	CHECK(fst_objkey_dir(FST_OBJDIR_SSTS, &k, buf, sizeof(buf)) > 0);
	CHECK(strncmp(key, buf, strlen(buf)) == 0);
}

FST_TEST(objkey_table_of)
{
	FstObjKey	k;

	CHECK(fst_objkey_parse_table_of("11/tables/1.2", &k));
	CHECK(k.kind == FST_OBJKEY_TABLE && k.cluster == 11 && k.db == 1 && k.rel == 2);
	CHECK(fst_objkey_parse_table_of("11/tables/1.2/manifest/00000000000000000001", &k));
	CHECK(k.kind == FST_OBJKEY_TABLE && k.version == 0 && k.db == 1 && k.rel == 2);
	CHECK(fst_objkey_parse_table_of("11/tables/1.2/anything/else", &k) && k.rel == 2);
	CHECK(fst_objkey_parse_table_of("11/savepoints/sp/tables/1.2/sst/x", &k));
	CHECK(strcmp(k.savepoint, "sp") == 0);
	CHECK(!fst_objkey_parse_table_of("11/tables/1.2x", &k) && k.kind == FST_OBJKEY_INVALID);
	CHECK(!fst_objkey_parse_table_of("11/tables/1", &k));
	CHECK(!fst_objkey_parse_table_of("11/tables/01.2/", &k));
	CHECK(!fst_objkey_parse_table_of("11/checkpoints/00000000000000000001", &k));
	CHECK(!fst_objkey_parse_table_of("", &k));
	CHECK(!fst_objkey_parse_table_of(NULL, &k));
}

FST_TEST(objkey_rejects)
{
	static const char *const bad[] = {
		"",
		"/",
		"11",
		"11/",
		"x/tables/1.2",
		"+11/tables/1.2",
		"-1/tables/1.2",
		" 11/tables/1.2",
		"011/tables/1.2",			/* leading zero */
		"18446744073709551616/tables/1.2",	/* cluster overflows uint64 */
		"11/table/1.2",
		"11/tables/",
		"11/tables/1",
		"11/tables/1.",
		"11/tables/.2",
		"11/tables/1..2",
		"11/tables/1.2.3",
		"11/tables/1.2/",
		"11/tables/4294967296.2",	/* oid overflows uint32 */
		"11/tables/1.02",
		"11/tables/1.2 ",
		"11//tables/1.2",
		"11/tables/1.2/manifest/",
		"11/tables/1.2/manifest/42",
		"11/tables/1.2/manifest/0000000000000000004x",
		"11/tables/1.2/manifest/000000000000000000042",
		"11/tables/1.2/manifest/99999999999999999999",	/* > uint64 */
		"11/tables/1.2/manifest/00000000000000000042/",
		"11/tables/1.2/manifests/00000000000000000042",
		"11/tables/1.2/sst/00000000000000000007.sst",
		"11/tables/1.2/sst//00000000000000000007.sst",
		"11/tables/1.2/sst/zz/00000000000000000007.sst",
		"11/tables/1.2/sst/0/00000000000000000007.sst",
		"11/tables/1.2/sst/000/00000000000000000007.sst",
		"11/tables/1.2/sst/00/0000000000000000000.sst",
		"11/checkpoints/",
		"11/checkpoints/1",
		"11/checkpoints/0000000000000000000a",
		"11/checkpoints/00000000000000000001x",
		"11/checkpoints/00000000000000000001/",
		"11/checkpoints/18446744073709551616",
		"11/pins/",
		"11/pins/22.5.16384.1",
		"11/pins/22.5.16384.1.",
		"11/pins/22.5.16384.1.16390.7",
		"11/pins/22.5.16384.1.16390/",
		"11/pins/22.05.16384.1.16390",
		"11/pins/22.5.16384.1.4294967296",
		"11/pinned/22.5.16384.1",
		"11/pinned/x.5.16384.1.16390",
		"11/savepoints/",
		"11/savepoints/sp",
		"11/savepoints/sp/",
		"11/savepoints//checkpoint",
		"11/savepoints/.sp/checkpoint",
		"11/savepoints/s p/checkpoint",
		"11/savepoints/sp/checkpoint/",
		"11/savepoints/sp/checkpoints",
		"11/savepoints/sp/checkpoints/00000000000000000001",
		"11/savepoints/sp/pinned/22.5.16384.1.16390",
		"11/savepoints/sp/pins/22.5.16384.1",
		"11/savepoints/sp/tables/1.2/manifest/42",
		"11/savepoints/sp/tables/",
		"11/savepoints/a/b/checkpoint",
		"11/other/00000000000000000001",
	};
	char		longname[FST_OBJKEY_NAME_MAX + 64];
	char		key[FST_OBJKEY_NAME_MAX + 128];
	FstObjKey	k;
	int			i;

	for (i = 0; i < (int) lengthof(bad); i++)
		CHECK_MSG(!fst_objkey_parse(bad[i], &k) && k.kind == FST_OBJKEY_INVALID,
				  "\"%s\" parsed as kind %d", bad[i], (int) k.kind);
	CHECK(!fst_objkey_parse(NULL, &k));

	/* a spread that does not match the id */
	{
		char		good[128];
		char		wrong[128];

		CHECK(fst_objkey_sst("11/tables/1.2", 7, good, sizeof(good)) > 0);
		CHECK(fst_objkey_parse(good, &k));
		snprintf(wrong, sizeof(wrong), "11/tables/1.2/sst/%02x/00000000000000000007.sst",
				 (fst_objkey_sst_spread(7) + 1) & 0xff);
		CHECK(!fst_objkey_parse(wrong, &k));
		/* uppercase hex is not what building writes */
		snprintf(wrong, sizeof(wrong), "11/tables/1.2/sst/%02X/00000000000000000007.sst",
				 fst_objkey_sst_spread(7));
		if (strcmp(wrong, good) != 0)
			CHECK(!fst_objkey_parse(wrong, &k));
	}

	/* savepoint names: the longest valid one, and one more byte */
	memset(longname, 'n', FST_OBJKEY_NAME_MAX);
	longname[FST_OBJKEY_NAME_MAX] = '\0';
	CHECK(fst_objkey_valid_name(longname));
	snprintf(key, sizeof(key), "11/savepoints/%s/checkpoint", longname);
	CHECK(fst_objkey_parse(key, &k) && k.kind == FST_OBJKEY_SAVEPOINT);
	longname[FST_OBJKEY_NAME_MAX] = 'n';
	longname[FST_OBJKEY_NAME_MAX + 1] = '\0';
	CHECK(!fst_objkey_valid_name(longname));
	snprintf(key, sizeof(key), "11/savepoints/%s/checkpoint", longname);
	CHECK(!fst_objkey_parse(key, &k));
	CHECK(!fst_objkey_valid_name(""));
	CHECK(!fst_objkey_valid_name(NULL));
	CHECK(!fst_objkey_valid_name("."));
	CHECK(!fst_objkey_valid_name("a/b"));
	CHECK(!fst_objkey_valid_name("a\xc3\xa9"));
	CHECK(fst_objkey_valid_name("a.b-c_D9"));
}

FST_TEST(objkey_cluster)
{
	uint64		c;

	CHECK(fst_objkey_parse_cluster("7312345678901234567", &c) && c == SYSID);
	CHECK(fst_objkey_parse_cluster("0", &c) && c == 0);
	CHECK(fst_objkey_parse_cluster("18446744073709551615", &c) && c == PG_UINT64_MAX);
	CHECK(!fst_objkey_parse_cluster("18446744073709551616", &c));
	CHECK(!fst_objkey_parse_cluster("", &c));
	CHECK(!fst_objkey_parse_cluster(NULL, &c));
	CHECK(!fst_objkey_parse_cluster("01", &c));
	CHECK(!fst_objkey_parse_cluster("1/", &c));
	CHECK(!fst_objkey_parse_cluster("-1", &c));
	CHECK(!fst_objkey_parse_cluster("abc", &c));
}
