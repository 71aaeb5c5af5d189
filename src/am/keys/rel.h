/*-------------------------------------------------------------------------
 *
 * rel.h
 *	  Backend-local facts about forst relations: key columns, the key codec,
 *	  whether a relation is a forst table, and the user part of a row.
 *
 * Keys.  A forst table is keyed by its PRIMARY KEY (a forst_key index), or,
 * without one, by a hidden 64-bit row id.  The internal key of a row is
 * [key group][encoded key][sequence] (lsm/ikey.h); its "user part" is
 * [key group][encoded key].
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_KEYS_REL_H
#define FORST_KEYS_REL_H

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "utils/rel.h"
#include "am/keys/keycodec.h"
#include "am/keys/index_entry.h"
#include "am/shmem/shmem.h"

#define FORST_MAX_KEY_GROUPS_DEFAULT 128

/* Backend-local facts about one forst relation, rebuilt on invalidation. */
typedef struct ForstRelInfo
{
	Oid			relid;
	RelFileNode rnode;
	bool		valid;
	Oid			pkindex;		/* InvalidOid: keyed by hidden row id */
	char	   *pkname;
	int			nkeys;
	AttrNumber	keyattrs[INDEX_MAX_KEYS];
	ForstKeyCodec *codec;		/* NULL for row-id tables */
	uint16		max_key_groups;
	int			nsecondary;		/* secondary indexes (keys/index_entry.h) */
	ForstSecondary *secondary;
} ForstRelInfo;

/* keys/rel.c */
extern ForstRelInfo *forst_relinfo(Relation rel);

/* keys/rel.c: is rel a forst table (rd_tableam is forst_table_am)? */
extern const TableAmRoutine *forst_table_am;
extern bool forst_is_forst_relation(Relation rel);

/*
 * The index of partitioned table rel's primary key if its access method is
 * forst_key (the key is "forst's", ddl/partition.c), else InvalidOid.
 */
extern Oid	forst_partitioned_key(Relation rel);

/*
 * The access method of index indexoid as the catalog has it (pg_class.relam):
 * a relcache entry may say btree for the length of a statement
 * (write/routed_arbiters.c).
 */
extern Oid	forst_index_am(Oid indexoid);

/*
 * A key lender gives a transient table (of an ALTER that rewrites a table)
 * the primary key of the table it stands for, or InvalidOid.
 */
typedef Oid (*ForstKeyLender) (Relation rel);
extern void forst_register_key_lender(ForstKeyLender lender);
extern void forst_relinfo_init(void);

/* Whether a foreign key (of another table or of itself) references relid. */
extern bool forst_rel_is_referenced(Oid relid);
/* user part of a row (slot must have all attributes deformed) */
extern void forst_row_user_part(ForstRelInfo *info, TupleTableSlot *slot,
								ForstTableShared *ts, StringInfo out);
extern char *forst_user_part_to_text(ForstRelInfo *info, const char *up, int len);

#endif							/* FORST_KEYS_REL_H */
