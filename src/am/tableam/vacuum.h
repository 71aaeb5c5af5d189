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

#endif							/* FORST_VACUUM_H */
