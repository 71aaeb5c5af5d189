/*-------------------------------------------------------------------------
 *
 * replay.c
 *	  Applying forst's WAL records to memtables: the resource manager's
 *	  redo, desc and identify callbacks, and the catch-up reader that
 *	  re-reads forst's records from the slot's restart LSN (wal/wal.c
 *	  decides when).
 *
 * Applying a record is idempotent.  A PUT whose internal key (user part
 * and sequence, globally unique) is already in one of the table's
 * memtables is skipped; otherwise it is inserted exactly as the primary
 * inserted it, so applying records in WAL order rebuilds the same memtable
 * generations (readers look at a table's memtables newest first, so the
 * order matters across generations).  Replay also moves the global
 * sequence counter past what it saw (hidden row ids are sequence numbers).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xlog.h"
#include "storage/procarray.h"
#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "commands/dbcommands_xlog.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "am/keys/rel.h"
#include "am/read/mvcc.h"
#include "am/objects/store.h"
#include "am/wal/wal.h"
#include "am/read/sst_readers.h"

static void
advance_u64(pg_atomic_uint64 *a, uint64 v)
{
	uint64		cur = pg_atomic_read_u64(a);

	while (cur < v && !pg_atomic_compare_exchange_u64(a, &cur, v))
		;
}

/*
 * The catch-up's look-ahead (forst_replay_range): where, in the range it
 * replays, each table and database was last dropped.  A PUT logged before
 * a later DROP of its table (or of its database) belongs to a table that
 * is gone by the end of the range: the replay skips it instead of holding
 * it in a memtable until the DROP comes.  Those rows are in no SST file
 * any more once garbage collection has deleted the dropped table's
 * objects, so without this the replay rebuilt, in memory, every row the
 * table had after forst's slot -- more than the pool holds, with no flush
 * to make room before the catch-up ends.  NULL outside forst_replay_range.
 */
typedef struct DropSeen
{
	RelFileNode rnode;			/* key; relNode InvalidOid: a database */
	XLogRecPtr	lsn;			/* its last drop in the range */
} DropSeen;

static HTAB *drops_ahead = NULL;

static void
note_drop(Oid spc, Oid db, Oid rel, XLogRecPtr lsn)
{
	RelFileNode key;
	DropSeen   *d;
	bool		found;

	memset(&key, 0, sizeof(key));
	key.spcNode = OidIsValid(rel) ? spc : InvalidOid;
	key.dbNode = db;
	key.relNode = rel;
	d = hash_search(drops_ahead, &key, HASH_ENTER, &found);
	if (!found || lsn > d->lsn)
		d->lsn = lsn;
}

/* Is the table's (or its database's) drop still ahead of lsn? */
static bool
dropped_later(const RelFileNode *rnode, XLogRecPtr lsn)
{
	RelFileNode key;
	DropSeen   *d;

	if (drops_ahead == NULL)
		return false;
	d = hash_search(drops_ahead, rnode, HASH_FIND, NULL);
	if (d && d->lsn > lsn)
		return true;
	memset(&key, 0, sizeof(key));
	key.dbNode = rnode->dbNode;
	d = hash_search(drops_ahead, &key, HASH_FIND, NULL);
	return d && d->lsn > lsn;
}

/* Drops every table of database db (a DROP record with no relNode). */
static void
drop_database_tables(Oid db)
{
	RelFileNode rnodes[FORST_TABLES_BATCH];
	ForstTableScan scan;
	int			n,
				i;

	forst_tables_scan_begin(&scan, 0);
	while ((n = forst_tables_of_database(&scan, db, rnodes,
										 lengthof(rnodes))) > 0)
		for (i = 0; i < n; i++)
			forst_table_shared_drop(&rnodes[i]);
}

/* Is the version (user_part, seq) already in one of ts's memtables? */
static bool
version_present(ForstTableShared *ts, FstSlice user_part, uint64 seq)
{
	int			slabs[FORST_MAX_IMMUTABLE + 1];
	int			n = forst_table_slabs(ts, slabs);
	int			i;

	for (i = 0; i < n; i++)
	{
		FstGetResult res;
		FstEntryHeader hdr;
		FstError	err;

		if (fst_memtable_get(forst_slab_memtable(slabs[i]), user_part, seq,
							 NULL, NULL, &res, &hdr, NULL, NULL, &err) != FST_OK)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: memtable lookup failed during WAL replay: %s",
							err.msg)));
		if (res != FST_GET_NONE && hdr.seq == seq)
			return true;
	}
	return false;
}

/*
 * Do the table's SST files hold the version (user_part, seq) or a newer
 * version of the key?  Replay starts at forst's slot, the oldest record
 * whose entry was not yet flushed when the slot last moved; records after
 * it are mostly flushed, and putting them into memtables again could need
 * more memory than the pool has (with the flush worker unable to help
 * during replay).
 *
 * A newer version in an SST file means the version was flushed too, and
 * compaction may have dropped it since as shadowed: it must not come back
 * into a memtable, where it would outlive its successor once compaction
 * drops that (a tombstone at the bottom level, say) and so resurrect a
 * deleted row.  Per key, WAL order is sequence order (writers hold the key
 * lock from logging to inserting), so nothing newer of the key is in the
 * memtables yet when a version is replayed.
 */
static bool
version_flushed(ForstTableShared *ts, FstSlice user_part, uint64 seq)
{
	ForstTableView view;
	StringInfoData target;
	char		seqb[FST_SEQ_BYTES];
	bool		found = false;
	int			level;

	forst_table_view(ts, &ts->rnode, &view);
	if (view.manifest == NULL)
		return false;
	initStringInfo(&target);
	appendBinaryStringInfo(&target, user_part.data, user_part.len);
	fst_put_be64(seqb, FST_MAX_SEQ);	/* the key's newest version first */
	appendBinaryStringInfo(&target, seqb, FST_SEQ_BYTES);
	for (level = 0; level < FST_NUM_LEVELS && !found; level++)
	{
		int			i;

		for (i = 0; i < view.manifest->levels[level].nfiles && !found; i++)
		{
			const FstFileMeta *f = &view.manifest->levels[level].files[i].meta;
			FstSstReader *r;
			FstIter    *it;
			FstError	err;
			FstCode		rc;

			if (f->seq_max < seq ||
				(r = forst_sst_reader_for_key(&ts->rnode, f, user_part, NULL)) == NULL)
				continue;
			it = fst_sst_iter_create(r);
			if (it == NULL)
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
			fst_iter_seek(it, fst_slice(target.data, target.len));
			found = fst_iter_valid(it) &&
				fst_slice_cmp(fst_ikey_user_part(fst_iter_key(it)), user_part) == 0 &&
				fst_ikey_seq(fst_iter_key(it)) >= seq;
			rc = fst_iter_status(it, &err);
			fst_iter_destroy(it);
			if (rc != FST_OK)
				forst_report(rc, &err, "reading an SST file during WAL replay");
		}
	}
	pfree(target.data);
	return found;
}

static void
apply_put(const RelFileNode *rnode, FstSlice ikey, FstSlice value,
		  XLogRecPtr lsn)
{
	FstEntry	e;
	ForstTableShared *ts;
	int			slab;
	uint32		ref;

	if (!fst_entry_decode(ikey, value, &e))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: malformed PUT record in WAL for relation %u/%u/%u",
						rnode->spcNode, rnode->dbNode, rnode->relNode)));
	advance_u64(&forst_shared->next_seq, e.hdr.seq);
	/* the catch-up: the table is dropped further on (see drops_ahead) */
	if (dropped_later(rnode, lsn))
		return;
	ts = forst_table_shared(rnode, true);

	if (version_present(ts, e.user_part, e.hdr.seq) ||
		version_flushed(ts, e.user_part, e.hdr.seq))
		return;

	/*
	 * After recovery, a transaction that neither committed nor runs has
	 * aborted: its versions would only be dropped by the next flush, and
	 * they could need more memory than the pool has.
	 */
	if (!RecoveryInProgress() &&
		!(e.hdr.flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)) &&
		!TransactionIdIsInProgress(e.hdr.xid) &&
		!TransactionIdDidCommit(e.hdr.xid))
		return;

	/*
	 * During recovery, a transaction whose abort is already in clog (it
	 * ended before the checkpoint recovery started from) is no different:
	 * a rolled-back transaction larger than the pool would otherwise fill
	 * it before the WAL says that its flushed part was dropped.
	 */
	if (RecoveryInProgress() &&
		!(e.hdr.flags & (FST_ENTRY_FROZEN | FST_ENTRY_COMMITTED)) &&
		TransactionIdDidAbort(e.hdr.xid))
		return;
	forst_memtable_put(ts, ikey, value, lsn, &slab, &ref);

	/* the planner's estimate: updates count as inserts here */
	if (e.hdr.flags & FST_ENTRY_TOMBSTONE)
	{
		uint64		cur = pg_atomic_read_u64(&ts->live_estimate);

		while (cur > 0 &&
			   !pg_atomic_compare_exchange_u64(&ts->live_estimate, &cur, cur - 1))
			;
	}
	else
		pg_atomic_fetch_add_u64(&ts->live_estimate, 1);
}

/*
 * MANIFEST: the primary's table is at a new manifest version.  A standby
 * takes that version for its readers (it does not list the store, whose
 * newest version may be ahead of its replay), if the version is in the
 * store it reads; either way it frees memtables that the version covers
 * only if it can read the version.  Crash recovery and catch-up replay
 * leave the version to forst_table_load, which lists this server's store:
 * a version written just before a crash has no record, and a promoted
 * standby's WAL names versions of its old primary's store.
 * Nothing here may fail on store errors: this runs in the startup process.
 */
static void
apply_manifest(const xl_forst_manifest *xlrec, bool new_rows)
{
	ForstTableShared *ts = forst_table_shared(&xlrec->rnode, true);
	bool		standby = AmStartupProcess() && StandbyMode;
	bool		visible = true;

	if (standby)
	{
		char		okey[FORST_KEY_LEN];
		FstObjInfo	info;
		FstError	err;
		FstCode		rc;

		forst_manifest_object_key(&xlrec->rnode, xlrec->version, okey, sizeof(okey));
		rc = fst_objstore_head(forst_objstore(), okey, &info, &err);
		if (rc != FST_OK)
		{
			visible = false;
			ereport(WARNING,
					(errmsg("forst: the standby cannot read manifest version " UINT64_FORMAT " of table %u/%u/%u: %s",
							xlrec->version, xlrec->rnode.spcNode,
							xlrec->rnode.dbNode, xlrec->rnode.relNode,
							rc == FST_NOT_FOUND ? "not found" : err.msg),
					 errdetail("The standby keeps the table's rows in memory until it can."),
					 errhint("Set forst.remote_dir on the standby to the primary's object store.")));
		}
	}
	LWLockAcquire(&ts->write_lock, LW_EXCLUSIVE);
	LWLockAcquire(&ts->lock, LW_EXCLUSIVE);
	if (visible && standby)
	{
		if (xlrec->version > ts->manifest_version)
			ts->manifest_version = xlrec->version;
		ts->loaded = true;
		/* a later version holds those rows too (or what became of them) */
		if (xlrec->version >= ts->unreadable_rows_version)
			ts->unreadable_rows_version = 0;
	}
	else if (standby && new_rows)
		ts->unreadable_rows_version = xlrec->version;
	/*
	 * Only a standby, which checked that it reads the version, frees what
	 * it covers.  Crash recovery and catch-up cannot tell a version of
	 * this server's own store from one of another server that the record
	 * names (a promoted standby's WAL names its old primary's, and its
	 * own store may hold a version of that number): they keep what they
	 * replay, which is little, as versions the SST files hold (or hold
	 * newer versions of) and those of aborted transactions are skipped.
	 */
	if (visible && standby && !XLogRecPtrIsInvalid(xlrec->covered_lsn))
		(void) forst_retire_covered(ts, xlrec->covered_lsn);
	LWLockRelease(&ts->lock);
	LWLockRelease(&ts->write_lock);
}

static void
forst_replay_record(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	char	   *data = XLogRecGetData(record);
	Size		len = XLogRecGetDataLen(record);

	switch (info)
	{
		case XLOG_FORST_PUT:
		case XLOG_FORST_PUT_SHORT:
		case XLOG_FORST_PUT_ROW:
			{
				RelFileNode rnode;
				FstSlice	ikey;
				FstSlice	value;
				char	   *owned;

				if (!forst_wal_decode_put(record, &rnode, &ikey, &value, &owned))
					goto bad;
				apply_put(&rnode, ikey, value, record->ReadRecPtr);
				if (owned)
					pfree(owned);
				break;
			}
		case XLOG_FORST_MANIFEST:
		case XLOG_FORST_MANIFEST_ROWS:
			{
				xl_forst_manifest xlrec;

				if (len != sizeof(xl_forst_manifest))
					goto bad;
				memcpy(&xlrec, data, sizeof(xlrec));
				apply_manifest(&xlrec, info == XLOG_FORST_MANIFEST_ROWS);
				break;
			}
		case XLOG_FORST_CREATE:
		case XLOG_FORST_DROP:
			{
				xl_forst_rel xlrec;

				if (len != sizeof(xl_forst_rel))
					goto bad;
				memcpy(&xlrec, data, sizeof(xlrec));
				/* DROP DATABASE: every table of the database */
				if (info == XLOG_FORST_DROP && !OidIsValid(xlrec.rnode.relNode))
					drop_database_tables(xlrec.rnode.dbNode);
				else
					forst_table_shared_drop(&xlrec.rnode);
				break;
			}
		default:
			/* a type a newer forst added (as PUT_SHORT was): not corruption */
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("forst: WAL record at %X/%X has type 0x%02X, which this build does not know",
							LSN_FORMAT_ARGS(record->ReadRecPtr), info),
					 errdetail("This build reads forst WAL record types 0x00 to 0x%02X.",
							   XLOG_FORST_PUT_ROW),
					 errhint("A newer version of forst wrote the WAL: install that version "
							 "or a later one on this server (standbys before their primary).")));
	}
	return;

bad:
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("forst: malformed WAL record at %X/%X (info 0x%02X, %zu bytes)",
					LSN_FORMAT_ARGS(record->ReadRecPtr), info, len)));
}

/* rm_redo: PostgreSQL's own redo (crash recovery, standby). */
void
forst_redo(XLogReaderState *record)
{
	/* first, what lies between the slot and here (see wal/wal.c) */
	forst_wal_catchup_before(record->ReadRecPtr);
	/* a standby keeps the WAL its memtables need with a slot of its own */
	forst_wal_redo_ensure_slot();
	forst_replay_record(record);
}

const char *
forst_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_FORST_PUT:
		case XLOG_FORST_PUT_SHORT:
		case XLOG_FORST_PUT_ROW:
			return "PUT";
		case XLOG_FORST_CREATE:
			return "CREATE";
		case XLOG_FORST_DROP:
			return "DROP";
		case XLOG_FORST_MANIFEST:
			return "MANIFEST";
		case XLOG_FORST_MANIFEST_ROWS:
			return "MANIFEST_ROWS";
	}
	return NULL;
}

void
forst_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	char	   *data = XLogRecGetData(record);
	Size		len = XLogRecGetDataLen(record);

	if (info == XLOG_FORST_PUT || info == XLOG_FORST_PUT_SHORT ||
		info == XLOG_FORST_PUT_ROW)
	{
		RelFileNode rnode;
		FstSlice	ikey;
		FstSlice	value;
		FstEntry	e;
		char	   *owned = NULL;

		if (forst_wal_decode_put(record, &rnode, &ikey, &value, &owned) &&
			fst_entry_decode(ikey, value, &e))
			appendStringInfo(buf, "rel %u/%u/%u; seq " UINT64_FORMAT "; xid %u; cid %u; %s; key group %u; key %u bytes; row %u bytes",
							 rnode.spcNode, rnode.dbNode, rnode.relNode,
							 e.hdr.seq, e.hdr.xid, e.hdr.cid,
							 (e.hdr.flags & FST_ENTRY_TOMBSTONE) ? "tombstone" : "row",
							 e.key_group, (unsigned) e.user_key.len,
							 (unsigned) e.payload.len);
		else
			appendStringInfo(buf, "malformed (info 0x%02X, %zu bytes)", info, len);
		if (owned)
			pfree(owned);
	}
	else if ((info == XLOG_FORST_CREATE || info == XLOG_FORST_DROP) &&
			 len == sizeof(xl_forst_rel))
	{
		xl_forst_rel xlrec;

		memcpy(&xlrec, data, sizeof(xlrec));
		appendStringInfo(buf, "rel %u/%u/%u", xlrec.rnode.spcNode,
						 xlrec.rnode.dbNode, xlrec.rnode.relNode);
	}
	else if ((info == XLOG_FORST_MANIFEST || info == XLOG_FORST_MANIFEST_ROWS) &&
			 len == sizeof(xl_forst_manifest))
	{
		xl_forst_manifest xlrec;

		memcpy(&xlrec, data, sizeof(xlrec));
		appendStringInfo(buf, "rel %u/%u/%u; version " UINT64_FORMAT "; covers %X/%X",
						 xlrec.rnode.spcNode, xlrec.rnode.dbNode,
						 xlrec.rnode.relNode, xlrec.version,
						 LSN_FORMAT_ARGS(xlrec.covered_lsn));
	}
	else
		appendStringInfo(buf, "malformed (info 0x%02X, %zu bytes)", info, len);
}

/*
 * A reader positioned at the first record at or after from, or NULL when
 * the WAL ends before one.
 */
static XLogReaderState *
open_reader(XLogRecPtr from)
{
	ReadLocalXLogPageNoWaitPrivate *priv;
	XLogReaderState *reader;

	priv = palloc0(sizeof(ReadLocalXLogPageNoWaitPrivate));
	reader = XLogReaderAllocate(wal_segment_size, NULL,
								XL_ROUTINE(.page_read = &read_local_xlog_page_no_wait,
										   .segment_open = &wal_segment_open,
										   .segment_close = &wal_segment_close),
								priv);
	if (reader == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Failed while allocating a WAL reading processor.")));

	if (XLogRecPtrIsInvalid(XLogFindNextRecord(reader, from)))
	{
		if (!priv->end_of_wal)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("forst: could not find a valid WAL record at or after %X/%X",
							LSN_FORMAT_ARGS(from)),
					 errdetail("forst replays its WAL records from the restart LSN of replication slot \"%s\".",
							   FORST_SLOT_NAME)));
		XLogReaderFree(reader);
		return NULL;
	}
	return reader;
}

/* The next record before upto, or NULL at the end of the range. */
static XLogRecord *
next_record(XLogReaderState *reader, XLogRecPtr upto)
{
	ReadLocalXLogPageNoWaitPrivate *priv = reader->private_data;
	char	   *errormsg = NULL;
	XLogRecord *rec;

	CHECK_FOR_INTERRUPTS();
	rec = XLogReadRecord(reader, &errormsg);
	if (rec == NULL)
	{
		if (priv->end_of_wal)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("forst: could not read WAL at %X/%X: %s",
						LSN_FORMAT_ARGS(reader->EndRecPtr),
						errormsg ? errormsg : "unknown error")));
	}
	if (!XLogRecPtrIsInvalid(upto) && reader->ReadRecPtr >= upto)
		return NULL;
	return rec;
}

/*
 * The look-ahead (see drops_ahead): the drops of tables and databases in
 * [from, upto).  forst's DROP records, and PostgreSQL's own record of a
 * dropped database, for WAL in which DROP DATABASE logged no forst record
 * for tables that had no shared state yet.
 */
static void
scan_drops(XLogRecPtr from, XLogRecPtr upto)
{
	XLogReaderState *reader = open_reader(from);

	if (reader == NULL)
		return;
	while (next_record(reader, upto) != NULL)
	{
		RmgrId		rmid = XLogRecGetRmid(reader);
		uint8		info = XLogRecGetInfo(reader) & ~XLR_INFO_MASK;

		if (rmid == FORST_RMGR_ID && info == XLOG_FORST_DROP &&
			XLogRecGetDataLen(reader) == sizeof(xl_forst_rel))
		{
			xl_forst_rel xlrec;

			memcpy(&xlrec, XLogRecGetData(reader), sizeof(xlrec));
			note_drop(xlrec.rnode.spcNode, xlrec.rnode.dbNode,
					  xlrec.rnode.relNode, reader->ReadRecPtr);
		}
		else if (rmid == RM_DBASE_ID && info == XLOG_DBASE_DROP &&
				 XLogRecGetDataLen(reader) >= MinSizeOfDbaseDropRec)
		{
			Oid			db;

			memcpy(&db, XLogRecGetData(reader) + offsetof(xl_dbase_drop_rec, db_id),
				   sizeof(Oid));
			note_drop(InvalidOid, db, InvalidOid, reader->ReadRecPtr);
		}
	}
	XLogReaderFree(reader);
}

/* Both passes over [from, upto) (see forst_replay_range). */
static uint64
replay_passes(XLogRecPtr from, XLogRecPtr upto, XLogRecPtr *end,
			  MemoryContext cxt)
{
	XLogReaderState *reader;
	uint64		n = 0;
	HASHCTL		info;

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(RelFileNode);
	info.entrysize = sizeof(DropSeen);
	info.hcxt = cxt;
	drops_ahead = hash_create("forst drops ahead", 64, &info,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/*
	 * Without an end (the catch-up reads to the end of the WAL flushed) the
	 * second pass could read further than the first: fix the end.
	 */
	if (XLogRecPtrIsInvalid(upto) && !RecoveryInProgress())
		upto = GetFlushRecPtr(NULL);
	scan_drops(from, upto);

	reader = open_reader(from);
	if (reader == NULL)
		return 0;
	while (next_record(reader, upto) != NULL)
	{
		*end = reader->EndRecPtr;
		if (XLogRecGetRmid(reader) == FORST_RMGR_ID)
		{
			forst_replay_record(reader);
			n++;
		}
	}
	XLogReaderFree(reader);
	return n;
}

/*
 * Applies every forst record that starts in [from, upto) (upto invalid:
 * to the end of the WAL flushed, or replayed on a standby).  Returns how
 * many forst records it applied; *end is where reading stopped.  A first
 * pass over the range finds the drops in it (see drops_ahead).
 */
uint64
forst_replay_range(XLogRecPtr from, XLogRecPtr upto, XLogRecPtr *end)
{
	uint64		n = 0;
	MemoryContext cxt;
	MemoryContext old;

	*end = from;
	if (from < XLOG_BLCKSZ)
		from = XLOG_BLCKSZ;
	if (!XLogRecPtrIsInvalid(upto) && from >= upto)
		return 0;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "forst WAL replay",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		n = replay_passes(from, upto, end, cxt);
	}
	PG_FINALLY();
	{
		drops_ahead = NULL;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	return n;
}
