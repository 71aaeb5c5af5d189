/*-------------------------------------------------------------------------
 *
 * vacuum.h
 *	  VACUUM of a forst table: keeping relfrozenxid honest (tableam/vacuum.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_VACUUM_H
#define FORST_VACUUM_H

#include "commands/vacuum.h"
#include "utils/rel.h"

/* The table AM's relation_vacuum. */
extern void forst_relation_vacuum(Relation rel, struct VacuumParams *params,
								  BufferAccessStrategy bstrategy);

/*
 * The oldest xid the table may still look up: the oldest unfrozen xid of
 * its memtables and of its own SST files (InvalidTransactionId if none).
 * *mt_oldest gets the oldest of the memtables alone.
 */
extern TransactionId forst_table_oldest_xid(Relation rel,
											TransactionId *mt_oldest);

#endif							/* FORST_VACUUM_H */
