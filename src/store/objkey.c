/*-------------------------------------------------------------------------
 *
 * objkey.c
 *	  Building and parsing the object keys of forst's bucket layout (see
 *	  objkey.h, which states the layout).
 *
 * Building formats the fields with snprintf; parsing walks the key left to
 * right with a cursor, one field at a time, and takes only what building
 * makes, so that build(parse(key)) == key for every key parse accepts.
 *
 *-------------------------------------------------------------------------
 */
#include "objkey.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DIGITS20 20

unsigned int
fst_objkey_sst_spread(uint64 file_id)
{
	return (unsigned int) ((file_id * UINT64CONST(0x9E3779B1)) >> 24) & 0xff;
}

bool
fst_objkey_valid_name(const char *name)
{
	size_t		i;

	if (name == NULL || name[0] == '\0' || name[0] == '.')
		return false;
	for (i = 0; name[i] != '\0'; i++)
	{
		char		c = name[i];

		if (i >= FST_OBJKEY_NAME_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

/* ---------------------------------------------------------------------- */
/* Building                                                                */

/* snprintf into buf; the length, or -1 (and "") if it does not fit. */
static int
put(char *buf, size_t size, const char *fmt,...) pg_attribute_printf(3, 4);

static int
put(char *buf, size_t size, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (buf == NULL || size == 0)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t) n >= size)
	{
		buf[0] = '\0';
		return -1;
	}
	return n;
}

static int
fail(char *buf, size_t size)
{
	if (buf != NULL && size > 0)
		buf[0] = '\0';
	return -1;
}

/* "<c>" or "<c>/savepoints/<name>": where tables and pins of k live. */
static int
base(const FstObjKey *k, char *buf, size_t size)
{
	if (k->savepoint[0] == '\0')
		return put(buf, size, "%llu", (unsigned long long) k->cluster);
	if (!fst_objkey_valid_name(k->savepoint))
		return fail(buf, size);
	return put(buf, size, "%llu/savepoints/%s", (unsigned long long) k->cluster,
			   k->savepoint);
}

/* buf = base + formatted rest */
static int
after_base(const FstObjKey *k, char *buf, size_t size, const char *fmt,...) pg_attribute_printf(4, 5);

static int
after_base(const FstObjKey *k, char *buf, size_t size, const char *fmt,...)
{
	va_list		ap;
	int			b = base(k, buf, size);
	int			n;

	if (b < 0)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(buf + b, size - b, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t) n >= size - b)
		return fail(buf, size);
	return b + n;
}

int
fst_objkey_build(const FstObjKey *k, char *buf, size_t size)
{
	if (k == NULL)
		return fail(buf, size);
	switch (k->kind)
	{
		case FST_OBJKEY_TABLE:
			return after_base(k, buf, size, "/tables/%u.%u", k->db, k->rel);
		case FST_OBJKEY_MANIFEST:
			return after_base(k, buf, size, "/tables/%u.%u/manifest/%020llu",
							  k->db, k->rel, (unsigned long long) k->version);
		case FST_OBJKEY_SST:
			return after_base(k, buf, size, "/tables/%u.%u/sst/%02x/%020llu.sst",
							  k->db, k->rel, fst_objkey_sst_spread(k->file_id),
							  (unsigned long long) k->file_id);
		case FST_OBJKEY_PIN:
			return after_base(k, buf, size, "/pins/%llu.%u.%u.%u.%u",
							  (unsigned long long) k->other_cluster, k->db,
							  k->rel, k->src_db, k->src_rel);
		case FST_OBJKEY_CHECKPOINT:
			if (k->savepoint[0] != '\0')
				return fail(buf, size);
			return put(buf, size, "%llu/checkpoints/%020llu",
					   (unsigned long long) k->cluster,
					   (unsigned long long) k->checkpoint_id);
		case FST_OBJKEY_DISTRIBUTED:
			if (k->savepoint[0] != '\0')
				return fail(buf, size);
			return put(buf, size, "%llu/distributed/%020llu",
					   (unsigned long long) k->cluster,
					   (unsigned long long) k->checkpoint_id);
		case FST_OBJKEY_PINNED:
			if (k->savepoint[0] != '\0')
				return fail(buf, size);
			return put(buf, size, "%llu/pinned/%llu.%u.%u.%u.%u",
					   (unsigned long long) k->cluster,
					   (unsigned long long) k->other_cluster, k->db, k->rel,
					   k->src_db, k->src_rel);
		case FST_OBJKEY_SAVEPOINT:
			if (k->savepoint[0] == '\0')
				return fail(buf, size);
			return after_base(k, buf, size, "/checkpoint");
		case FST_OBJKEY_INVALID:
			break;
	}
	return fail(buf, size);
}

int
fst_objkey_dir(FstObjKeyDir dir, const FstObjKey *k, char *buf, size_t size)
{
	if (k == NULL)
		return fail(buf, size);
	switch (dir)
	{
		case FST_OBJDIR_TABLES:
			return after_base(k, buf, size, "/tables/");
		case FST_OBJDIR_TABLE:
			return after_base(k, buf, size, "/tables/%u.%u/", k->db, k->rel);
		case FST_OBJDIR_MANIFESTS:
			return after_base(k, buf, size, "/tables/%u.%u/manifest/", k->db, k->rel);
		case FST_OBJDIR_SSTS:
			return after_base(k, buf, size, "/tables/%u.%u/sst/", k->db, k->rel);
		case FST_OBJDIR_PINS:
			return after_base(k, buf, size, "/pins/");
		case FST_OBJDIR_CHECKPOINTS:
			if (k->savepoint[0] != '\0')
				return fail(buf, size);
			return put(buf, size, "%llu/checkpoints/", (unsigned long long) k->cluster);
		case FST_OBJDIR_PINNED:
			if (k->savepoint[0] != '\0')
				return fail(buf, size);
			return put(buf, size, "%llu/pinned/", (unsigned long long) k->cluster);
		case FST_OBJDIR_DISTRIBUTED:
			if (k->savepoint[0] != '\0')
				return fail(buf, size);
			return put(buf, size, "%llu/distributed/", (unsigned long long) k->cluster);
		case FST_OBJDIR_SAVEPOINT:
			if (k->savepoint[0] == '\0')
				return fail(buf, size);
			return after_base(k, buf, size, "/");
	}
	return fail(buf, size);
}

/* Copies a savepoint name into k (false if invalid; NULL or "": none). */
static bool
set_savepoint(FstObjKey *k, const char *savepoint)
{
	if (savepoint == NULL || savepoint[0] == '\0')
	{
		k->savepoint[0] = '\0';
		return true;
	}
	if (!fst_objkey_valid_name(savepoint))
		return false;
	strcpy(k->savepoint, savepoint);
	return true;
}

int
fst_objkey_table(uint64 cluster, const char *savepoint, uint32 db, uint32 rel,
				 char *buf, size_t size)
{
	FstObjKey	k;

	memset(&k, 0, sizeof(k));
	k.kind = FST_OBJKEY_TABLE;
	k.cluster = cluster;
	k.db = db;
	k.rel = rel;
	if (!set_savepoint(&k, savepoint))
		return fail(buf, size);
	return fst_objkey_build(&k, buf, size);
}

int
fst_objkey_manifest(const char *table, uint64 version, char *buf, size_t size)
{
	FstObjKey	k;

	if (table == NULL || !fst_objkey_parse(table, &k) || k.kind != FST_OBJKEY_TABLE)
		return fail(buf, size);
	k.kind = FST_OBJKEY_MANIFEST;
	k.version = version;
	return fst_objkey_build(&k, buf, size);
}

int
fst_objkey_sst(const char *table, uint64 file_id, char *buf, size_t size)
{
	FstObjKey	k;

	if (table == NULL || !fst_objkey_parse(table, &k) || k.kind != FST_OBJKEY_TABLE)
		return fail(buf, size);
	k.kind = FST_OBJKEY_SST;
	k.file_id = file_id;
	return fst_objkey_build(&k, buf, size);
}

int
fst_objkey_checkpoint(uint64 cluster, uint64 id, char *buf, size_t size)
{
	FstObjKey	k;

	memset(&k, 0, sizeof(k));
	k.kind = FST_OBJKEY_CHECKPOINT;
	k.cluster = cluster;
	k.checkpoint_id = id;
	return fst_objkey_build(&k, buf, size);
}

int
fst_objkey_savepoint(uint64 cluster, const char *name, char *buf, size_t size)
{
	FstObjKey	k;

	memset(&k, 0, sizeof(k));
	k.kind = FST_OBJKEY_SAVEPOINT;
	k.cluster = cluster;
	if (name == NULL || name[0] == '\0' || !set_savepoint(&k, name))
		return fail(buf, size);
	return fst_objkey_build(&k, buf, size);
}

/* ---------------------------------------------------------------------- */
/* Parsing: each step takes a field at p and returns the rest, or NULL     */

/* A literal. */
static const char *
lit(const char *p, const char *s)
{
	size_t		n = strlen(s);

	if (p == NULL || strncmp(p, s, n) != 0)
		return NULL;
	return p + n;
}

/* A canonical decimal number up to max. */
static const char *
dec(const char *p, uint64 max, uint64 *out)
{
	uint64		v = 0;
	const char *start = p;

	if (p == NULL || *p < '0' || *p > '9')
		return NULL;
	if (*p == '0' && p[1] >= '0' && p[1] <= '9')
		return NULL;			/* leading zero */
	for (; *p >= '0' && *p <= '9'; p++)
	{
		uint64		d = (uint64) (*p - '0');

		if (v > (max - d) / 10)
			return NULL;		/* overflow */
		v = v * 10 + d;
	}
	*out = v;
	return p > start ? p : NULL;
}

static const char *
dec32(const char *p, uint32 *out)
{
	uint64		v = 0;

	p = dec(p, PG_UINT32_MAX, &v);
	*out = (uint32) v;
	return p;
}

/* Exactly 20 decimal digits, within a uint64. */
static const char *
dec20(const char *p, uint64 *out)
{
	uint64		v = 0;
	int			i;

	if (p == NULL)
		return NULL;
	for (i = 0; i < DIGITS20; i++)
	{
		uint64		d;

		if (p[i] < '0' || p[i] > '9')
			return NULL;
		d = (uint64) (p[i] - '0');
		if (v > (PG_UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	if (p[i] >= '0' && p[i] <= '9')
		return NULL;
	*out = v;
	return p + DIGITS20;
}

/* Two lowercase hex digits. */
static const char *
hex2(const char *p, unsigned int *out)
{
	unsigned int v = 0;
	int			i;

	if (p == NULL)
		return NULL;
	for (i = 0; i < 2; i++)
	{
		char		c = p[i];

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned int) (c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned int) (c - 'a' + 10);
		else
			return NULL;
	}
	*out = v;
	return p + 2;
}

/* A savepoint name, up to the next '/'. */
static const char *
name(const char *p, char *out)
{
	const char *slash;
	size_t		n;

	if (p == NULL || (slash = strchr(p, '/')) == NULL)
		return NULL;
	n = (size_t) (slash - p);
	if (n == 0 || n > FST_OBJKEY_NAME_MAX)
		return NULL;
	memcpy(out, p, n);
	out[n] = '\0';
	if (!fst_objkey_valid_name(out))
	{
		out[0] = '\0';
		return NULL;
	}
	return slash;
}

/* "<p>.<db>.<rel>.<sdb>.<srel>" of a pin or pinned record. */
static const char *
pin_fields(const char *p, FstObjKey *k)
{
	p = dec(p, PG_UINT64_MAX, &k->other_cluster);
	p = dec32(lit(p, "."), &k->db);
	p = dec32(lit(p, "."), &k->rel);
	p = dec32(lit(p, "."), &k->src_db);
	p = dec32(lit(p, "."), &k->src_rel);
	return p;
}

/*
 * "<c>[/savepoints/<name>]/tables/<db>.<rel>": the table prefix at the
 * start of key; the rest, or NULL.
 */
static const char *
table_prefix(const char *key, FstObjKey *k)
{
	const char *p = dec(key, PG_UINT64_MAX, &k->cluster);
	const char *sp = lit(p, "/savepoints/");

	if (sp != NULL)
		p = name(sp, k->savepoint);
	p = dec32(lit(p, "/tables/"), &k->db);
	p = dec32(lit(p, "."), &k->rel);
	if (p != NULL)
		k->kind = FST_OBJKEY_TABLE;
	return p;
}

static bool
parse_key(const char *key, FstObjKey *k)
{
	const char *p;
	const char *rest;

	if (key == NULL)
		return false;
	/* under a table prefix: the table, its manifests and SST files */
	if ((p = table_prefix(key, k)) != NULL)
	{
		unsigned int spread = 0;

		if (*p == '\0')
			return true;
		if ((rest = dec20(lit(p, "/manifest/"), &k->version)) != NULL)
		{
			k->kind = FST_OBJKEY_MANIFEST;
			return *rest == '\0';
		}
		rest = hex2(lit(p, "/sst/"), &spread);
		rest = dec20(lit(rest, "/"), &k->file_id);
		rest = lit(rest, ".sst");
		k->kind = FST_OBJKEY_SST;
		return rest != NULL && *rest == '\0' &&
			spread == fst_objkey_sst_spread(k->file_id);
	}
	memset(k, 0, sizeof(*k));

	p = lit(dec(key, PG_UINT64_MAX, &k->cluster), "/");
	if (p == NULL)
		return false;
	if ((rest = lit(p, "checkpoints/")) != NULL)
	{
		k->kind = FST_OBJKEY_CHECKPOINT;
		rest = dec20(rest, &k->checkpoint_id);
	}
	else if ((rest = lit(p, "distributed/")) != NULL)
	{
		k->kind = FST_OBJKEY_DISTRIBUTED;
		rest = dec20(rest, &k->checkpoint_id);
	}
	else if ((rest = lit(p, "pinned/")) != NULL)
	{
		k->kind = FST_OBJKEY_PINNED;
		rest = pin_fields(rest, k);
	}
	else if ((rest = lit(p, "pins/")) != NULL)
	{
		k->kind = FST_OBJKEY_PIN;
		rest = pin_fields(rest, k);
	}
	else if ((rest = lit(p, "savepoints/")) != NULL)
	{
		rest = lit(name(rest, k->savepoint), "/");
		if (lit(rest, "pins/") != NULL)
		{
			k->kind = FST_OBJKEY_PIN;
			rest = pin_fields(lit(rest, "pins/"), k);
		}
		else
		{
			k->kind = FST_OBJKEY_SAVEPOINT;
			rest = lit(rest, "checkpoint");
		}
	}
	return rest != NULL && *rest == '\0';
}

bool
fst_objkey_parse(const char *key, FstObjKey *out)
{
	memset(out, 0, sizeof(*out));
	if (parse_key(key, out))
		return true;
	memset(out, 0, sizeof(*out));
	return false;
}

bool
fst_objkey_parse_table_of(const char *key, FstObjKey *out)
{
	const char *p;

	memset(out, 0, sizeof(*out));
	p = key ? table_prefix(key, out) : NULL;
	if (p != NULL && (*p == '\0' || *p == '/'))
		return true;
	memset(out, 0, sizeof(*out));
	return false;
}

bool
fst_objkey_parse_cluster(const char *s, uint64 *cluster)
{
	uint64		v;
	const char *p = s ? dec(s, PG_UINT64_MAX, &v) : NULL;

	if (p == NULL || *p != '\0')
		return false;
	*cluster = v;
	return true;
}
