/*-------------------------------------------------------------------------
 *
 * expiry.c
 *	  Expiry settings of forst tables: reading them from the catalog table
 *	  forst.expiry, the per-statement cutoff, finding the TTL column in a
 *	  stored row, pushing the settings to shared memory for the flush
 *	  worker, and the SQL helpers behind forst.set_ttl(),
 *	  forst.advance_watermark() and the expiry columns of forst.tables.
 *
 * See expiry/expiry.h for the rules and docs/windowed-state.md for the user's view.
 *
 * The TTL column must be a timestamp or timestamptz column among the first
 * FORST_EXPIRY_MAX_ATTNUM columns; it may be a key column or not.  The
 * flush worker finds it in a stored row (a minimal tuple) by walking the
 * lengths and alignments of the columns before it, which are pushed to
 * shared memory with the settings, so it needs no tuple descriptor.
 *
 * Cutoff consistency: a backend computes the cutoff from the settings it
 * has cached (refreshed by the relcache invalidation that a committed
 * change sends, which PostgreSQL processes when a statement locks the
 * table) and the statement's start time, so within a statement the cutoff
 * is fixed and a row never expires in the middle of a scan.  Compaction
 * uses the current time, so it may remove a row that expired after a
 * running statement began; that statement keeps reading the files its
 * scans opened, but a later scan in the same statement no longer finds
 * such a row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tupmacs.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "am/keys/rel.h"
#include "am/read/mvcc.h"
#include "am/expiry/expiry.h"
#include "am/base/privileges.h"

PG_FUNCTION_INFO_V1(forst_expiry_column);
PG_FUNCTION_INFO_V1(forst_ttl_cutoff);
PG_FUNCTION_INFO_V1(forst_expiry_note);
PG_FUNCTION_INFO_V1(forst_table_expiry);

/* Columns of forst.expiry. */
#define Anum_expiry_relid		1
#define Anum_expiry_attnum		2
#define Anum_expiry_ttl			3
#define Anum_expiry_watermark	4
#define Anum_expiry_version		5
#define Natts_expiry			5

/* A table's settings, as in forst.expiry plus the layout of its row. */
typedef struct ExpirySettings
{
	uint64		version;		/* 0: no row in forst.expiry */
	int16		attnum;
	bool		is_key;
	bool		has_ttl;
	int64		ttl_us;
	bool		has_watermark;
	int64		watermark;
	int16		attlen[FORST_EXPIRY_MAX_ATTNUM];
	char		attalign[FORST_EXPIRY_MAX_ATTNUM];
} ExpirySettings;

typedef struct CacheEntry
{
	Oid			relid;			/* hash key */
	bool		valid;
	RelFileNode pushed_to;		/* shared state known to be up to date */
	bool		pushed;
	ExpirySettings s;
} CacheEntry;

/* A change waiting for its transaction to commit. */
typedef struct PendingPush
{
	RelFileNode rnode;
	int			nest_level;
	ExpirySettings s;
	struct PendingPush *next;
} PendingPush;

static HTAB *expiry_cache = NULL;
static Oid	last_relid = InvalidOid;	/* cache_lookup's last answer */
static struct CacheEntry *last_entry = NULL;
static PendingPush *pending = NULL;
static char *scratch = NULL;	/* aligned copy of a row */
static size_t scratch_size = 0;

/* ---------------------------------------------------------------------- */

static void
expiry_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	CacheEntry *e;

	if (expiry_cache == NULL)
		return;
	hash_seq_init(&status, expiry_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		if (relid == InvalidOid || e->relid == relid)
			e->valid = false;
}

/* Copies the settings into the table's shared state unless it has newer. */
static void
push_shared(ForstTableShared *ts, const ExpirySettings *s)
{
	ForstExpiryShared *x = &ts->expiry;

	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	if (s->version > x->version)
	{
		x->version = s->version;
		x->attnum = s->attnum;
		x->is_key = s->is_key;
		x->has_ttl = s->has_ttl;
		x->ttl_us = s->ttl_us;
		x->has_watermark = s->has_watermark;
		x->watermark = s->watermark;
		memcpy(x->attlen, s->attlen, sizeof(x->attlen));
		memcpy(x->attalign, s->attalign, sizeof(x->attalign));
	}
	LWLockRelease(&ts->lock);
}

static void
pending_free(void)
{
	while (pending)
	{
		PendingPush *p = pending;

		pending = p->next;
		pfree(p);
	}
}

static void
expiry_xact_callback(XactEvent event, void *arg)
{
	PendingPush *p;

	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (pending)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that changed forst expiry settings")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			for (p = pending; p; p = p->next)
			{
				ForstTableShared *ts = forst_table_shared(&p->rnode, false);

				if (ts)
					push_shared(ts, &p->s);
			}
			pending_free();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			pending_free();
			break;
		default:
			break;
	}
}

static void
expiry_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	PendingPush **pp = &pending;

	while (*pp)
	{
		PendingPush *p = *pp;

		if (p->nest_level >= level && event == SUBXACT_EVENT_ABORT_SUB)
		{
			*pp = p->next;
			pfree(p);
			continue;
		}
		if (p->nest_level >= level && event == SUBXACT_EVENT_COMMIT_SUB)
			p->nest_level = level - 1;
		pp = &p->next;
	}
}

void
forst_expiry_init(void)
{
	CacheRegisterRelcacheCallback(expiry_invalidate, (Datum) 0);
	RegisterXactCallback(expiry_xact_callback, NULL);
	RegisterSubXactCallback(expiry_subxact_callback, NULL);
}

/* ---------------------------------------------------------------------- */

/* An interval as a TTL in microseconds (a day is 24 hours). */
static int64
ttl_length(Interval *iv)
{
	int64		us;

	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a TTL must not have a month or year part"),
				 errdetail("Months and years have no fixed length."),
				 errhint("Use days (a day counts as 24 hours), e.g. '30 days'.")));
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("TTL out of range")));
	if (us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a TTL must be positive"),
				 errhint("Pass NULL to remove the TTL.")));
	return us;
}

/* time - ttl, saturating at -infinity */
static int64
time_minus(int64 t, int64 ttl_us)
{
	int64		r;

	if (pg_sub_s64_overflow(t, ttl_us, &r))
		return PG_INT64_MIN;
	return r;
}

static void
fill_layout(Relation rel, ExpirySettings *s)
{
	TupleDesc	desc = RelationGetDescr(rel);
	ForstRelInfo *info = forst_relinfo(rel);
	int			i;

	memset(s->attlen, 0, sizeof(s->attlen));
	memset(s->attalign, 0, sizeof(s->attalign));
	for (i = 0; i < s->attnum && i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		s->attlen[i] = att->attlen;
		s->attalign[i] = att->attalign;
	}
	s->is_key = false;
	for (i = 0; i < info->nkeys; i++)
		if (info->keyattrs[i] == s->attnum)
			s->is_key = true;
}

Oid
forst_expiry_catalog_oid(void)
{
	Oid			nsp = get_namespace_oid("forst", true);

	if (!OidIsValid(nsp))
		return InvalidOid;
	return get_relname_relid("expiry", nsp);
}

/* Reads rel's row of forst.expiry into *s; version 0 if it has none. */
static void
load_settings(Relation rel, ExpirySettings *s)
{
	Oid			cat = forst_expiry_catalog_oid();
	Relation	crel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	memset(s, 0, sizeof(*s));
	if (!OidIsValid(cat))
		return;
	crel = table_open(cat, AccessShareLock);
	ScanKeyInit(&key, Anum_expiry_relid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationGetRelid(rel)));
	scan = systable_beginscan(crel, InvalidOid, false, NULL, 1, &key);
	tup = systable_getnext(scan);
	/* columns after the first Natts_expiry are for dumps only (attname) */
	if (HeapTupleIsValid(tup) && RelationGetDescr(crel)->natts >= Natts_expiry)
	{
		Datum		values[Natts_expiry];
		bool		nulls[Natts_expiry];
		int			i;

		for (i = 0; i < Natts_expiry; i++)
			values[i] = heap_getattr(tup, i + 1, RelationGetDescr(crel), &nulls[i]);
		if (!nulls[Anum_expiry_attnum - 1] && !nulls[Anum_expiry_version - 1])
		{
			s->attnum = DatumGetInt16(values[Anum_expiry_attnum - 1]);
			s->version = (uint64) DatumGetInt64(values[Anum_expiry_version - 1]);
			if (!nulls[Anum_expiry_ttl - 1])
			{
				Interval   *iv = DatumGetIntervalP(values[Anum_expiry_ttl - 1]);

				s->has_ttl = iv->month == 0;
				if (s->has_ttl)
					s->ttl_us = iv->day * USECS_PER_DAY + iv->time;
			}
			if (!nulls[Anum_expiry_watermark - 1])
			{
				s->has_watermark = true;
				s->watermark = DatumGetTimestampTz(values[Anum_expiry_watermark - 1]);
			}
		}
	}
	systable_endscan(scan);
	table_close(crel, AccessShareLock);

	/* a column dropped or retyped since set_ttl: nothing expires */
	if (s->attnum > 0)
	{
		Form_pg_attribute att;

		if (s->attnum > RelationGetDescr(rel)->natts ||
			s->attnum > FORST_EXPIRY_MAX_ATTNUM)
			s->attnum = 0;
		else
		{
			att = TupleDescAttr(RelationGetDescr(rel), s->attnum - 1);
			if (att->attisdropped ||
				(att->atttypid != TIMESTAMPOID && att->atttypid != TIMESTAMPTZOID))
				s->attnum = 0;
		}
	}
	if (s->attnum > 0)
		fill_layout(rel, s);
}

void
forst_expiry_watermark_now(Relation rel, bool *has_watermark,
						   TimestampTz *watermark)
{
	ExpirySettings s;

	load_settings(rel, &s);
	*has_watermark = s.has_watermark;
	*watermark = s.has_watermark ? s.watermark : 0;
}

static CacheEntry *
cache_lookup(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	CacheEntry *e;
	bool		found;

	if (expiry_cache == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(CacheEntry);
		ctl.hcxt = CacheMemoryContext;
		expiry_cache = hash_create("forst expiry settings", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	/* entries are never removed, only invalidated: the last one stays put */
	if (relid == last_relid && last_entry != NULL)
		e = last_entry;
	else
	{
		e = hash_search(expiry_cache, &relid, HASH_ENTER, &found);
		if (!found)
		{
			e->valid = false;
			e->pushed = false;
		}
		last_relid = relid;
		last_entry = e;
	}
	if (!e->valid)
	{
		load_settings(rel, &e->s);
		e->valid = true;
		e->pushed = false;
	}
	return e;
}

static void
rule_from(const ExpirySettings *s, TimestampTz now, ForstExpiry *out)
{
	memset(out, 0, sizeof(*out));
	if (s->attnum <= 0)
		return;
	/* the column is known even without a TTL or watermark (SST ranges) */
	out->attnum = s->attnum;
	out->is_key = s->is_key;
	memcpy(out->attlen, s->attlen, sizeof(out->attlen));
	memcpy(out->attalign, s->attalign, sizeof(out->attalign));
	if (!s->has_ttl && !s->has_watermark)
		return;
	out->active = true;
	out->cutoff = s->has_watermark ? s->watermark : PG_INT64_MIN;
	if (s->has_ttl)
		out->cutoff = Max(out->cutoff, time_minus(now, s->ttl_us));
}

void
forst_expiry_get(Relation rel, ForstExpiry *out)
{
	CacheEntry *e;
	ForstTableShared *ts;

	/*
	 * The table's shared state first: after a crash, that may return the
	 * watermarks of unlogged tables to a checkpoint (checkpoint/
	 * crash_restore.h), and the settings read below must be those.
	 */
	ts = forst_table_shared(&rel->rd_node, false);
	e = cache_lookup(rel);
	if (e->s.version > 0 &&
		(!e->pushed || !RelFileNodeEquals(e->pushed_to, rel->rd_node)))
	{
		if (ts)
		{
			push_shared(ts, &e->s);
			e->pushed = true;
			e->pushed_to = rel->rd_node;
		}
	}
	rule_from(&e->s, GetCurrentStatementStartTimestamp(), out);
}

bool
forst_expiry_shared_rule(ForstTableShared *ts, TimestampTz now, ForstExpiry *out)
{
	ExpirySettings s;
	ForstExpiryShared *x = &ts->expiry;

	memset(&s, 0, sizeof(s));
	LWLockAcquire(&ts->lock, LW_SHARED);
	s.version = x->version;
	s.attnum = x->attnum;
	s.is_key = x->is_key;
	s.has_ttl = x->has_ttl;
	s.ttl_us = x->ttl_us;
	s.has_watermark = x->has_watermark;
	s.watermark = x->watermark;
	memcpy(s.attlen, x->attlen, sizeof(s.attlen));
	memcpy(s.attalign, x->attalign, sizeof(s.attalign));
	LWLockRelease(&ts->lock);
	if (s.version == 0)
		s.attnum = 0;			/* not known: nothing expires */
	rule_from(&s, now, out);
	return out->active;
}

/* ---------------------------------------------------------------------- */

bool
forst_expiry_value(const ForstExpiry *x, FstSlice payload, int64 *value)
{
	MinimalTuple mt;
	bits8	   *bp;
	bool		hasnulls;
	char	   *tp;
	size_t		hoff,
				datalen;
	uint32		off = 0;
	int			i;

	if (x->attnum <= 0 || payload.len < SizeofMinimalTupleHeader)
		return false;
	if (scratch_size < payload.len)
	{
		size_t		want = Max(payload.len, 1024);

		if (scratch)
			pfree(scratch);
		scratch = MemoryContextAlloc(TopMemoryContext, want);
		scratch_size = want;
	}
	memcpy(scratch, payload.data, payload.len);
	mt = (MinimalTuple) scratch;
	if (HeapTupleHeaderGetNatts(mt) < x->attnum)
		return false;			/* added after the row was written: NULL */
	hasnulls = (mt->t_infomask & HEAP_HASNULL) != 0;
	bp = mt->t_bits;
	if (hasnulls && att_isnull(x->attnum - 1, bp))
		return false;
	if (mt->t_hoff < MINIMAL_TUPLE_OFFSET)
		return false;
	hoff = mt->t_hoff - MINIMAL_TUPLE_OFFSET;
	if (hoff > payload.len)
		return false;
	tp = scratch + hoff;
	datalen = payload.len - hoff;
	for (i = 0; i < x->attnum - 1; i++)
	{
		if (hasnulls && att_isnull(i, bp))
			continue;
		if (off >= datalen)
			return false;
		if (x->attlen[i] == -1)
			off = att_align_pointer(off, x->attalign[i], -1, tp + off);
		else
			off = att_align_nominal(off, x->attalign[i]);
		if (off >= datalen)
			return false;
		off = att_addlength_pointer(off, x->attlen[i], tp + off);
	}
	off = att_align_nominal(off, x->attalign[x->attnum - 1]);
	if ((size_t) off + sizeof(int64) > datalen)
		return false;
	memcpy(value, tp + off, sizeof(int64));
	return true;
}

/* ---------------------------------------------------------------------- */

/*
 * Opens tbl as a forst table whose owner called forst.set_ttl or
 * forst.advance_watermark.  Those entry points check ownership as their
 * caller and then run their body with the extension owner's rights, which
 * would pass any ownership check here; so inside a SECURITY DEFINER
 * function these internal functions act only on the table an entry point
 * checked (base/privileges.h), however EXECUTE on them was granted.
 * Outside one (the SQL functions of version 1.0 of the extension, before
 * ALTER EXTENSION forst UPDATE, call them as the caller), the caller must
 * own the table.
 */
static Relation
open_owned_forst(Oid relid)
{
	Relation	rel;

	if (relid != forst_expiry_checked_relid && InLocalUserIdChange())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("forst's internal expiry functions may only be called through forst.set_ttl and forst.advance_watermark")));
	rel = relation_open(relid, AccessShareLock);

	if (!forst_is_forst_relation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a forst table", RelationGetRelationName(rel)),
				 errhint("Expiry settings apply to tables created USING forst.")));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	return rel;
}

/*
 * forst._expiry_column(tbl, column) -- checks that tbl is a forst table the
 * user owns and, if column is not NULL, that it can be a TTL column;
 * returns its attribute number (NULL without a column).
 */
Datum
forst_expiry_column(PG_FUNCTION_ARGS)
{
	Relation	rel;
	AttrNumber	attnum;
	Oid			typid;
	char	   *colname;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table must not be NULL")));
	rel = open_owned_forst(PG_GETARG_OID(0));
	/* before set_ttl or advance_watermark lock the table's forst.expiry row */
	(void) forst_table_shared(&rel->rd_node, false);
	if (PG_ARGISNULL(1))
	{
		relation_close(rel, AccessShareLock);
		PG_RETURN_NULL();
	}
	/* expired rows would leave the rows that reference them dangling */
	if (forst_rel_is_referenced(RelationGetRelid(rel)))
	{
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("rows of forst table \"%s\" cannot expire while foreign keys reference it",
						RelationGetRelationName(rel)),
				 errdetail("Rows that expire would leave the rows referencing them dangling."),
				 errhint("Drop the foreign keys that reference it first.")));
	}
	colname = NameStr(*PG_GETARG_NAME(1));
	attnum = get_attnum(RelationGetRelid(rel), colname);
	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						colname, RelationGetRelationName(rel))));
	if (attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a system column cannot be a TTL column")));
	typid = TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid;
	if (typid != TIMESTAMPTZOID && typid != TIMESTAMPOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("TTL column \"%s\" must be of type timestamptz or timestamp, not %s",
						colname, format_type_be(typid)),
				 errhint("Keep the event or window time of each row in a timestamp column.")));
	if (attnum > FORST_EXPIRY_MAX_ATTNUM)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("TTL column \"%s\" is column %d; it must be among the first %d columns",
						colname, attnum, FORST_EXPIRY_MAX_ATTNUM),
				 errhint("Put the timestamp column nearer the start of the table.")));
	relation_close(rel, AccessShareLock);
	PG_RETURN_INT16(attnum);
}

/* forst._ttl_cutoff(ttl) -- statement start - ttl, as readers compute it. */
Datum
forst_ttl_cutoff(PG_FUNCTION_ARGS)
{
	int64		ttl_us = ttl_length(PG_GETARG_INTERVAL_P(0));

	PG_RETURN_TIMESTAMPTZ(time_minus(GetCurrentStatementStartTimestamp(), ttl_us));
}

/*
 * forst._expiry_note(tbl, attnum, ttl, watermark, version) -- called by
 * set_ttl and advance_watermark after they changed tbl's row of
 * forst.expiry: other backends re-read it (relcache invalidation at
 * commit) and the table's shared state gets it at commit.
 */
Datum
forst_expiry_note(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	PendingPush *p;

	rel = open_owned_forst(relid);
	p = MemoryContextAllocZero(TopMemoryContext, sizeof(PendingPush));
	p->rnode = rel->rd_node;
	p->nest_level = GetCurrentTransactionNestLevel();
	p->s.attnum = PG_GETARG_INT16(1);
	if (!PG_ARGISNULL(2))
	{
		p->s.has_ttl = true;
		p->s.ttl_us = ttl_length(PG_GETARG_INTERVAL_P(2));
	}
	if (!PG_ARGISNULL(3))
	{
		p->s.has_watermark = true;
		p->s.watermark = PG_GETARG_TIMESTAMPTZ(3);
	}
	p->s.version = (uint64) PG_GETARG_INT64(4);
	fill_layout(rel, &p->s);
	/* the shared entry exists at commit, when no error may be raised */
	(void) forst_table_shared(&rel->rd_node, true);
	p->next = pending;
	pending = p;
	CacheInvalidateRelcache(rel);
	relation_close(rel, AccessShareLock);
	PG_RETURN_VOID();
}

/*
 * forst.table_expiry(tbl) -- the expiry columns of forst.tables: settings
 * as this statement sees them, and what expiry reclaimed since start-up.
 */
Datum
forst_table_expiry(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	TupleDesc	tupdesc;
	Datum		values[7];
	bool		nulls[7] = {0};
	CacheEntry *e;
	ForstExpiry rule;
	ForstTableShared *ts;

	forst_require_table_read(relid, "forst.table_expiry");
	rel = relation_open(relid, AccessShareLock);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (!forst_is_forst_relation(rel))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a forst table", RelationGetRelationName(rel))));
	forst_expiry_get(rel, &rule);
	e = cache_lookup(rel);
	if (e->s.attnum > 0)
		values[0] = CStringGetDatum(get_attname(relid, e->s.attnum, false));
	else
		nulls[0] = true;
	if (e->s.has_ttl)
	{
		Interval   *iv = palloc0(sizeof(Interval));

		iv->day = e->s.ttl_us / USECS_PER_DAY;
		iv->time = e->s.ttl_us % USECS_PER_DAY;
		values[1] = IntervalPGetDatum(iv);
	}
	else
		nulls[1] = true;
	values[2] = TimestampTzGetDatum(e->s.watermark);
	nulls[2] = !e->s.has_watermark;
	values[3] = TimestampTzGetDatum(rule.cutoff);
	nulls[3] = !rule.active;
	ts = forst_table_shared(&rel->rd_node, false);
	values[4] = Int64GetDatum(ts ? (int64) pg_atomic_read_u64(&ts->expiry.reclaimed_bytes) : 0);
	values[5] = Int64GetDatum(ts ? (int64) pg_atomic_read_u64(&ts->expiry.reclaimed_rows) : 0);
	values[6] = Int64GetDatum(ts ? (int64) pg_atomic_read_u64(&ts->expiry.dropped_files) : 0);
	if (!nulls[0])
	{
		/* name datum: a NameData copy */
		Name		n = palloc0(NAMEDATALEN);

		namestrcpy(n, DatumGetCString(values[0]));
		values[0] = NameGetDatum(n);
	}
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
