/*-------------------------------------------------------------------------
 *
 * wal_put.c
 *	  The PUT record's forms (see wal/wal.h): logging one entry version
 *	  in as few bytes as its redo needs, and decoding any form back into
 *	  the internal key and value that go into a memtable.
 *
 * A PUT is most of forst's WAL: one per row written, next to the commit
 * record.  Its long form logs the entry as it is stored, behind a 20-byte
 * header.  The short forms leave out what redo can recompute:
 *
 *	- the xid of the entry header, which the record's own header carries
 *	  (XLogInsert stores the current transaction's xid, which is the one
 *	  put_entry writes into the entry: the short form is only used when
 *	  the two are equal);
 *	- the value length, which is what is left of the record;
 *	- for a row (PUT_ROW), the first 10 bytes of the minimal tuple: its
 *	  length, which is the payload's, and 6 bytes of padding, which
 *	  heap_form_minimal_tuple zeroes (the short form is only used when they
 *	  are zero and the length matches).
 *
 *		rnode (12) | klen (2) | flags (1) | cid (4) | internal key | payload
 *
 * With the record header's 8-byte alignment, an upsert of a 3-column row
 * logs 128 bytes instead of 152.  Redo rebuilds the stored bytes exactly,
 * so memtables, flushes and standbys see no difference between the forms.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xloginsert.h"

#include "am/wal/wal.h"
#include "lsm/ikey.h"

/* bytes of a minimal tuple that PUT_ROW leaves out: t_len and padding */
#define ROW_PREFIX		offsetof(MinimalTupleData, t_infomask2)

#define SHORT_HDR		(sizeof(RelFileNode) + 2 + 1 + 4)

/* Whether payload is a minimal tuple whose prefix redo can rebuild. */
static bool
row_prefix_implied(uint8 flags, FstSlice payload)
{
	uint32		t_len;
	Size		i;

	if ((flags & FST_ENTRY_TOMBSTONE) || payload.len < ROW_PREFIX)
		return false;
	memcpy(&t_len, payload.data, sizeof(t_len));
	if (t_len != payload.len)
		return false;
	for (i = sizeof(t_len); i < ROW_PREFIX; i++)
		if (payload.data[i] != 0)
			return false;
	return true;
}

XLogRecPtr
forst_wal_insert_put(const RelFileNode *rnode, FstSlice ikey, FstSlice value)
{
	FstEntry	e;
	char		hdr[SHORT_HDR];
	uint16		klen16;
	uint8		info;
	FstSlice	payload;

	if (!fst_entry_decode(ikey, value, &e))
		elog(ERROR, "forst: logging a malformed entry");

	/* XLogInsert puts GetCurrentTransactionIdIfAny() in the record header */
	if (ikey.len > PG_UINT16_MAX || e.hdr.xid != GetCurrentTransactionIdIfAny())
	{
		/* the long form: the entry as stored */
		xl_forst_put xlrec;

		memset(&xlrec, 0, sizeof(xlrec));
		xlrec.rnode = *rnode;
		xlrec.klen = (uint32) ikey.len;
		xlrec.vlen = (uint32) value.len;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfForstPut);
		XLogRegisterData((char *) ikey.data, ikey.len);
		XLogRegisterData((char *) value.data, value.len);
		(void) XLogInsert(FORST_RMGR_ID, XLOG_FORST_PUT);
		return ProcLastRecPtr;
	}

	payload = e.payload;
	info = XLOG_FORST_PUT_SHORT;
	if (row_prefix_implied(e.hdr.flags, payload))
	{
		info = XLOG_FORST_PUT_ROW;
		payload = fst_slice(payload.data + ROW_PREFIX, payload.len - ROW_PREFIX);
	}
	klen16 = (uint16) ikey.len;
	memcpy(hdr, rnode, sizeof(RelFileNode));
	memcpy(hdr + sizeof(RelFileNode), &klen16, 2);
	hdr[sizeof(RelFileNode) + 2] = (char) e.hdr.flags;
	memcpy(hdr + sizeof(RelFileNode) + 3, &e.hdr.cid, 4);
	XLogBeginInsert();
	XLogRegisterData(hdr, SHORT_HDR);
	XLogRegisterData((char *) ikey.data, ikey.len);
	if (payload.len > 0)
		XLogRegisterData((char *) payload.data, payload.len);
	(void) XLogInsert(FORST_RMGR_ID, info);
	return ProcLastRecPtr;
}

bool
forst_wal_decode_put(XLogReaderState *record, RelFileNode *rnode,
					 FstSlice *ikey, FstSlice *value, char **owned)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	char	   *data = XLogRecGetData(record);
	Size		len = XLogRecGetDataLen(record);
	uint16		klen;
	uint8		flags;
	uint32		cid;
	Size		plen;
	Size		prefix;
	char	   *v;

	*owned = NULL;
	if (info == XLOG_FORST_PUT)
	{
		xl_forst_put xlrec;

		if (len < SizeOfForstPut)
			return false;
		memcpy(&xlrec, data, SizeOfForstPut);
		if (len != SizeOfForstPut + (Size) xlrec.klen + xlrec.vlen)
			return false;
		*rnode = xlrec.rnode;
		*ikey = fst_slice(data + SizeOfForstPut, xlrec.klen);
		*value = fst_slice(data + SizeOfForstPut + xlrec.klen, xlrec.vlen);
		return true;
	}
	if ((info != XLOG_FORST_PUT_SHORT && info != XLOG_FORST_PUT_ROW) ||
		len < SHORT_HDR)
		return false;
	memcpy(rnode, data, sizeof(RelFileNode));
	memcpy(&klen, data + sizeof(RelFileNode), 2);
	flags = (uint8) data[sizeof(RelFileNode) + 2];
	memcpy(&cid, data + sizeof(RelFileNode) + 3, 4);
	if (len < SHORT_HDR + (Size) klen)
		return false;
	plen = len - SHORT_HDR - klen;
	prefix = info == XLOG_FORST_PUT_ROW ? ROW_PREFIX : 0;
	/* a row has at least a minimal tuple's header */
	if (prefix > 0 && ((flags & FST_ENTRY_TOMBSTONE) ||
					   prefix + plen < SizeofMinimalTupleHeader))
		return false;

	/* the value as stored: entry header, then the payload */
	v = palloc(FST_ENTRY_HEADER_SIZE + prefix + plen);
	fst_entry_header_encode(v, flags, XLogRecGetXid(record), cid);
	if (prefix > 0)
	{
		uint32		t_len = (uint32) (prefix + plen);

		memcpy(v + FST_ENTRY_HEADER_SIZE, &t_len, sizeof(t_len));
		memset(v + FST_ENTRY_HEADER_SIZE + sizeof(t_len), 0,
			   prefix - sizeof(t_len));
	}
	memcpy(v + FST_ENTRY_HEADER_SIZE + prefix, data + SHORT_HDR + klen, plen);
	*ikey = fst_slice(data + SHORT_HDR, klen);
	*value = fst_slice(v, FST_ENTRY_HEADER_SIZE + prefix + plen);
	*owned = v;
	return true;
}
