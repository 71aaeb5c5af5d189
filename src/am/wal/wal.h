/*-------------------------------------------------------------------------
 *
 * wal.h
 *	  forst's WAL: a custom resource manager whose records rebuild
 *	  memtables on redo, and the forst-owned replication slot that keeps
 *	  the WAL of every entry not yet in an SST file.
 *
 * Records (all carry the table's RelFileNode; none touches a buffer):
 *
 *	PUT		xl_forst_put, then the internal key (klen bytes: key group,
 *			encoded key, sequence big-endian) and the value (vlen bytes:
 *			9-byte entry header flags/xid/cid, then the minimal tuple or
 *			nothing for a tombstone).  One entry version.  Written by
 *			put_version() before the memtable insert, under the key lock.
 *			Usually in a short form, PUT_SHORT or PUT_ROW, that leaves out
 *			what redo recomputes (wal/wal_put.c); redo rebuilds the same
 *			key and value from any form.
 *	CREATE	xl_forst_rel.  A new relfilenode was created for a forst table
 *			(CREATE TABLE, TRUNCATE, rewrites): whatever state a replay
 *			may have built for that number belongs to an earlier, dropped
 *			relation and is forgotten.
 *	DROP	xl_forst_rel.  The table's state is gone: written after the
 *			commit of a DROP TABLE/TRUNCATE (for the old relfilenode) and by
 *			a non-transactional truncate.  Redo forgets the state.
 *	MANIFEST xl_forst_manifest.  The table is at manifest version V in the
 *			object store (after a flush or a compaction), and every entry
 *			whose PUT record lies before covered_lsn is in it (Invalid: a
 *			compaction, which changes no memtable).  A standby switches its
 *			readers to V and frees its memtables that hold only entries
 *			before covered_lsn; it reads the SSTs from the same store and
 *			never writes there.  Crash recovery and forst's catch-up keep
 *			the version to the store's listing and free nothing on it.
 *	MANIFEST_ROWS xl_forst_manifest, as MANIFEST, for a version with rows
 *			that no PUT record carries (VACUUM FULL's rewrite into a new
 *			relfilenode, forst.attach).  A standby that cannot read the
 *			version then refuses reads of the table (it would answer from
 *			its memtables without those rows) until it reads a later one.
 *
 * Redo is idempotent: every version has a unique global sequence number
 * in its key, and a version already present is skipped.
 *
 * The resource manager ID is defined here and nowhere else; it is listed
 * in docs/wal.md (the design and its guarantees) and docs/configuration.md.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_WAL_H
#define FORST_WAL_H

#include "access/xlogdefs.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "storage/relfilenode.h"

#include "am/shmem/shmem.h"

/* The custom resource manager ID of forst (128 is RM_EXPERIMENTAL_ID). */
#define FORST_RMGR_ID			163
#define FORST_RMGR_NAME			"forst"

/* Name of the physical replication slot forst owns. */
#define FORST_SLOT_NAME			"forst"

/* Record types (high bits of xl_info) */
#define XLOG_FORST_PUT			0x00
#define XLOG_FORST_CREATE		0x10
#define XLOG_FORST_DROP			0x20
#define XLOG_FORST_MANIFEST		0x30
#define XLOG_FORST_PUT_SHORT	0x40	/* PUT without xid and lengths */
#define XLOG_FORST_PUT_ROW		0x50	/* ... and without a row's prefix */
#define XLOG_FORST_MANIFEST_ROWS 0x60	/* MANIFEST with rows no PUT carries */

typedef struct xl_forst_put
{
	RelFileNode rnode;
	uint32		klen;			/* internal key length */
	uint32		vlen;			/* value length (entry header + row) */
	/* internal key, then value, follow */
} xl_forst_put;

#define SizeOfForstPut	(offsetof(xl_forst_put, vlen) + sizeof(uint32))

typedef struct xl_forst_rel
{
	RelFileNode rnode;
} xl_forst_rel;

typedef struct xl_forst_manifest
{
	RelFileNode rnode;
	uint64		version;		/* manifest version now current */
	XLogRecPtr	covered_lsn;	/* entries logged before it are flushed */
} xl_forst_manifest;

/*
 * wal/wal_put.c: a PUT in its shortest form (returns the record's start
 * LSN), and any form decoded into the internal key and value (false if
 * the record is malformed; *owned, if not NULL, is a palloc'd copy that
 * value points into, for the caller to free).
 */
extern XLogRecPtr forst_wal_insert_put(const RelFileNode *rnode, FstSlice ikey,
									   FstSlice value);
extern bool forst_wal_decode_put(XLogReaderState *record, RelFileNode *rnode,
								 FstSlice *ikey, FstSlice *value, char **owned);

/* wal/wal.c: set-up, logging, slot, readiness */
extern void forst_wal_init(void);
extern XLogRecPtr forst_wal_log_put(ForstTableShared *ts, FstSlice ikey,
								   FstSlice value);
extern void forst_wal_log_rel(uint8 info, const RelFileNode *rnode);
extern void forst_wal_log_manifest(const RelFileNode *rnode, uint64 version,
								   XLogRecPtr covered_lsn);
/* MANIFEST_ROWS: a version that brings rows no PUT record carries */
extern void forst_wal_log_manifest_rows(const RelFileNode *rnode,
										uint64 version,
										XLogRecPtr covered_lsn);
extern void forst_wal_ensure_ready(void);
extern bool forst_wal_ready(void);
extern void forst_wal_advance_slot(XLogRecPtr flushed_upto);
extern void forst_wal_catchup_before(XLogRecPtr upto);
extern void forst_wal_redo_ensure_slot(void);

/*
 * checkpoint/backup.c: base backups.  When a backup starts (BASE_BACKUP or
 * pg_backup_start), every forst row logged so far is flushed to SST files
 * and writers wait ("the gate") until the backup's checkpoint has begun,
 * so that the backup's WAL, from its redo pointer, holds every row the
 * SST files it copies lack.  A writer calls forst_backup_gate_wait()
 * before logging a row when forst_backup_gate_closed(), holding no LWLock.
 * forst_backup_in_progress(): the pid of a backup that may still be copying
 * files (no object may be deleted), or 0.  forst_backup_take_file(): at the
 * catch-up, the position before which a backup start flushed every row,
 * from forst/backup_start (a server started from that backup has a copy),
 * or Invalid.  (forst_backup_restored() in objects/store.h.)
 */
extern void forst_backup_init(void);
extern bool forst_backup_gate_closed(void);
extern void forst_backup_gate_wait(void);
extern int	forst_backup_in_progress(void);
extern XLogRecPtr forst_backup_take_file(bool slot_missing);

/* wal/replay.c: applying records (redo and catch-up) */
extern void forst_redo(XLogReaderState *record);
extern void forst_desc(StringInfo buf, XLogReaderState *record);
extern const char *forst_identify(uint8 info);
extern uint64 forst_replay_range(XLogRecPtr from, XLogRecPtr upto,
								 XLogRecPtr *end);

#endif							/* FORST_WAL_H */
