/*-------------------------------------------------------------------------
 *
 * tableam.h
 *	  The forst table access method (tableam/tableam.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_TABLEAM_TABLEAM_H
#define FORST_TABLEAM_TABLEAM_H

#include "access/tableam.h"

/* tableam/tableam.c */
extern const TableAmRoutine *forst_table_am_routine(void);
extern bool forst_relation_has_rows(Relation rel);

#endif							/* FORST_TABLEAM_TABLEAM_H */
