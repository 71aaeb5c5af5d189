/*-------------------------------------------------------------------------
 *
 * ikey.h
 *	  Internal keys and entry headers: the order and the meaning of every
 *	  entry in memtables and SST files.
 *
 * An internal key is
 *
 *		[key group: 2 bytes big-endian][user key: n bytes][sequence: 8 bytes BE]
 *
 * and internal keys sort by (key group, user key) in memcmp order, then by
 * sequence *descending*, so that a key's versions come newest first.  The
 * key group leads so that a key-group range is one contiguous key range
 * (what lets a table be split or merged without copying data).  The user
 * key is opaque bytes (the am layer's memcomparable encoding); it need not
 * be prefix-free, which is why the comparator splits off the sequence
 * instead of comparing whole keys with memcmp.
 *
 * "User part" below means key group + user key: the part that names a row.
 *
 * Every value starts with an entry header
 *
 *		[flags: 1 byte][xid: 4 bytes LE][command id: 4 bytes LE]
 *
 * followed by the payload (the row; empty for a tombstone).  Flags say
 * whether the entry is a tombstone, whether its transaction is known
 * committed (always so in SST files), whether its xid is frozen (visible to
 * everyone; xids of data restored elsewhere mean nothing), and whether it is
 * a speculative insertion not yet confirmed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_IKEY_H
#define FST_IKEY_H

#include "coding.h"

#define FST_KG_BYTES		2
#define FST_SEQ_BYTES		8
#define FST_IKEY_OVERHEAD	(FST_KG_BYTES + FST_SEQ_BYTES)
#define FST_MAX_SEQ			PG_UINT64_MAX
#define FST_MAX_KEY_GROUPS	32768

/*
 * The key group of a table's secondary index entries: above every key group
 * a row can have, so index entries sort after all rows.  It belongs to no
 * key-group range (a manifest's max_key_groups, a compaction's key-group
 * filter): the entries name their rows, whose key groups decide.
 */
#define FST_KG_INDEX		0xFFFF

#define FST_ENTRY_TOMBSTONE		0x01
#define FST_ENTRY_COMMITTED		0x02
#define FST_ENTRY_FROZEN		0x04
#define FST_ENTRY_SPECULATIVE	0x08
#define FST_ENTRY_MOVED			0x10	/* a tombstone left by an update that
										 * moved the row to another key; its
										 * payload is that key's user part */
#define FST_ENTRY_KNOWN_FLAGS	0x1F

#define FST_ENTRY_HEADER_SIZE	9

typedef struct FstEntryHeader
{
	uint64		seq;			/* from the internal key */
	uint32		xid;			/* inserting transaction */
	uint32		cid;			/* command id within it */
	uint8		flags;			/* FST_ENTRY_* */
} FstEntryHeader;

/* A decoded entry: header, user part and payload, all borrowed. */
typedef struct FstEntry
{
	FstEntryHeader hdr;
	uint16		key_group;
	FstSlice	user_key;		/* without key group and sequence */
	FstSlice	user_part;		/* key group + user key */
	FstSlice	payload;		/* value after the header */
} FstEntry;

/* Builds an internal key into buf (room for ukey_len + FST_IKEY_OVERHEAD). */
static inline size_t
fst_ikey_build(char *buf, uint16 kg, const char *ukey, size_t ukey_len,
			   uint64 seq)
{
	fst_put_be16(buf, kg);
	if (ukey_len)
		memcpy(buf + FST_KG_BYTES, ukey, ukey_len);
	fst_put_be64(buf + FST_KG_BYTES + ukey_len, seq);
	return ukey_len + FST_IKEY_OVERHEAD;
}

static inline bool
fst_ikey_valid(FstSlice ikey)
{
	return ikey.len >= FST_IKEY_OVERHEAD;
}

static inline FstSlice
fst_ikey_user_part(FstSlice ikey)
{
	return fst_slice(ikey.data, ikey.len - FST_SEQ_BYTES);
}

static inline uint64
fst_ikey_seq(FstSlice ikey)
{
	return fst_get_be64(ikey.data + ikey.len - FST_SEQ_BYTES);
}

static inline uint16
fst_ikey_key_group(FstSlice ikey)
{
	return fst_get_be16(ikey.data);
}

/*
 * The comparator: user part ascending, then sequence descending.  Keys too
 * short to be internal keys (only in corrupt input) compare as plain bytes,
 * so that the comparator stays total and never reads out of bounds.
 */
static inline int
fst_ikey_cmp(FstSlice a, FstSlice b)
{
	int			r;
	uint64		sa,
				sb;

	if (unlikely(a.len < FST_SEQ_BYTES || b.len < FST_SEQ_BYTES))
		return fst_slice_cmp(a, b);
	r = fst_slice_cmp(fst_ikey_user_part(a), fst_ikey_user_part(b));
	if (r != 0)
		return r;
	sa = fst_ikey_seq(a);
	sb = fst_ikey_seq(b);
	return (sa > sb) ? -1 : (sa < sb) ? 1 : 0;
}

static inline void
fst_entry_header_encode(char *buf, uint8 flags, uint32 xid, uint32 cid)
{
	buf[0] = (char) flags;
	fst_put_fixed32(buf + 1, xid);
	fst_put_fixed32(buf + 5, cid);
}

/*
 * Decodes internal key + value into *e.  Returns false if either is too
 * short or the flags carry unknown bits (a corrupt entry).
 */
static inline bool
fst_entry_decode(FstSlice ikey, FstSlice value, FstEntry *e)
{
	if (ikey.len < FST_IKEY_OVERHEAD || value.len < FST_ENTRY_HEADER_SIZE)
		return false;
	e->hdr.seq = fst_ikey_seq(ikey);
	e->hdr.flags = (uint8) value.data[0];
	if (e->hdr.flags & ~FST_ENTRY_KNOWN_FLAGS)
		return false;
	e->hdr.xid = fst_get_fixed32(value.data + 1);
	e->hdr.cid = fst_get_fixed32(value.data + 5);
	e->key_group = fst_get_be16(ikey.data);
	e->user_part = fst_ikey_user_part(ikey);
	e->user_key = fst_slice(ikey.data + FST_KG_BYTES,
							ikey.len - FST_IKEY_OVERHEAD);
	e->payload = fst_slice(value.data + FST_ENTRY_HEADER_SIZE,
						   value.len - FST_ENTRY_HEADER_SIZE);
	return true;
}

/*
 * Transaction ids compare modulo 2^32, as PostgreSQL's TransactionIdPrecedes
 * does for normal xids: a precedes b when b - a, as a signed 32-bit number,
 * is positive.  That holds for xids less than 2^31 apart, which is what
 * relfrozenxid guarantees of every xid left unfrozen in a table.
 */
#define FST_FIRST_NORMAL_XID	3

static inline bool
fst_xid_precedes(uint32 a, uint32 b)
{
	return (int32) (a - b) < 0;
}

/*
 * Widens the range [*lo, *hi] (0/0: empty) to take in xid, in that
 * order.  Special xids (invalid, bootstrap, frozen) need no clog and are
 * not noted.
 */
static inline void
fst_xid_range_note(uint32 *lo, uint32 *hi, uint32 xid)
{
	if (xid < FST_FIRST_NORMAL_XID)
		return;
	if (*lo == 0 && *hi == 0)
		*lo = *hi = xid;
	else
	{
		if (fst_xid_precedes(xid, *lo))
			*lo = xid;
		if (fst_xid_precedes(*hi, xid))
			*hi = xid;
	}
}

#endif							/* FST_IKEY_H */
