/*-------------------------------------------------------------------------
 *
 * utility.h
 *	  The ProcessUtility hook: DDL on forst tables (ddl/utility.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_DDL_UTILITY_H
#define FORST_DDL_UTILITY_H



/* ddl/utility.c */
extern void forst_utility_init(void);
/* Whether relid is a plain forst table (false if it does not exist). */
extern bool forst_relid_is_forst_table(Oid relid);

#endif							/* FORST_DDL_UTILITY_H */
