/*-------------------------------------------------------------------------
 *
 * index_entry.h
 *	  Secondary index entries of a forst table: what they are and how their
 *	  keys are encoded.
 *
 * A secondary index (a forst_key index that is not the primary key) stores
 * its entries in the table's own LSM tree, next to the rows, written by the
 * transaction and command that write the row (write/index_entries.c), so
 * they share the rows' WAL records, memtables, checkpoints and MVCC: an
 * entry is visible to a snapshot exactly when the row version it was
 * written with is.  An entry's user part is
 *
 *	[FST_KG_INDEX 2B][entry id 4B][column 1]...[column n][row][row length 2B]
 *
 * where the entry id is the index's OID, or the entry_id storage parameter
 * of an index that forst.attach created for the entries of a checkpointed
 * table's index (then the source index's entry id, which its entries in
 * the borrowed files carry: see forst_index_entry_id),
 * where each column is 0x01 and the value's key encoding
 * (keys/keycodec.h), or 0x02 for NULL (NULLs last, as btree's default
 * order), "row" is the user part of the row (key group and primary key, or
 * row id) and the last two bytes its length, so the row is found from the
 * end.  The columns' encodings are prefix-free, so entries sort by the
 * indexed values in btree order, then by row; an entry has no payload, and
 * a tombstone of the same user part removes it.
 *
 * Strings sort by their bytes (collation "C").  A column of another
 * deterministic collation may be indexed too: equal strings have equal
 * bytes in it, so equality finds them, but the index's order is not the
 * collation's, and the planner is told the index gives no order
 * (tableam/secondary.c).
 *
 * Entries sort after every row (FST_KG_INDEX is above every key group), in
 * one range per index: a lookup reads one range, whatever key group its rows
 * are in.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_INDEX_ENTRY_H
#define FORST_INDEX_ENTRY_H

#include "access/attnum.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/rel.h"

#include "am/keys/keycodec.h"
#include "lsm/fst_common.h"

#define FORST_INDEX_ENTRY_HEAD	(2 + 4)	/* key group and index OID */
#define FORST_INDEX_NOTNULL		0x01
#define FORST_INDEX_NULL		0x02

/* One secondary index of a forst table, as its writers need it. */
typedef struct ForstSecondary
{
	Oid			indexoid;
	NameData	name;			/* for error reports */
	bool		valid;			/* pg_index.indisvalid when described */
	bool		ready;			/* pg_index.indisready when described */
	uint32		entry_id;		/* what its entries carry (forst_index_entry_id) */
	int			natts;
	AttrNumber	attnums[INDEX_MAX_KEYS];	/* table columns, 1-based; 0:
											 * an expression */
	Oid			typids[INDEX_MAX_KEYS];	/* their base types */
	ForstKeyEncodeFn encode[INDEX_MAX_KEYS];	/* their types' encoders */
	bool		bytewise[INDEX_MAX_KEYS];	/* the index's collation orders
											 * as the encoding does */
	bool		unique;			/* UNIQUE (write/index_entries.h) */
	bool		nulls_not_distinct; /* UNIQUE NULLS NOT DISTINCT */
	bool		has_exprs;		/* a column is an expression (attnum 0) */
	struct ForstIndexEval *eval;	/* its WHERE and expressions, ready to
									 * evaluate (keys/index_eval.c); NULL
									 * if it has neither or is not
									 * prepared */
	MemoryContext eval_cxt;		/* what eval lives in, or NULL */
} ForstSecondary;

/*
 * The secondary indexes of rel (forst_key indexes other than its primary
 * key), in a palloc'd array in mcxt, prepared (forst_secondary_prepare);
 * returns how many.  forst_secondaries_free frees the array and what was
 * prepared.
 */
extern int	forst_secondaries_of(Relation rel, Oid pkindex, MemoryContext mcxt,
								 ForstSecondary **out);
extern void forst_secondaries_free(ForstSecondary *s, int n);

/*
 * Partial indexes and indexes on expressions (keys/index_eval.c).
 *
 * A row has an entry in a partial index exactly when the index's
 * predicate (its WHERE, an immutable condition on the row's columns) is
 * true for it: an insert puts an entry only then, a delete removes one only
 * then, and an update whose row enters or leaves the predicate puts or
 * removes the entry (write/index_entries.c).  An expression column's value
 * is computed from the row by whoever builds an entry: writers, CREATE
 * INDEX, and scans and unique checks that compare a row with its entry.
 * The entries are ordinary puts and tombstones, so replay, standbys and
 * checkpoints never evaluate either; the planner uses a partial index only
 * for queries whose conditions imply its predicate, and an expression
 * index for conditions on the same expression, as for a btree.
 *
 * forst_secondary_prepare makes s's predicate and expressions ready to be
 * evaluated, in a context of its own under mcxt (s->eval_cxt), which
 * forst_secondary_release deletes; nothing for an index with neither.
 * values and isnull are by attnum - 1 (a slot's tts_values).
 */
extern void forst_secondary_prepare(Relation heap, Relation index,
									MemoryContext mcxt, ForstSecondary *s);
extern void forst_secondary_release(ForstSecondary *s);
/* Whether the row belongs in s: true unless s is partial and it does not. */
extern bool forst_secondary_holds(const ForstSecondary *s, Datum *values,
								  bool *isnull);
/*
 * The row's values of s's columns, in the index's column order: table
 * columns copied, expressions evaluated.  What an expression returns by
 * reference is valid until the next call for s.
 */
extern void forst_secondary_values(const ForstSecondary *s, Datum *values,
								   bool *isnull, Datum *out, bool *outnull);

/* *s for index, a secondary index of heap. */
extern void forst_secondary_describe(Relation heap, Relation index,
									 ForstSecondary *s);

/*
 * Refuses what a secondary index of a forst table cannot be (0A000):
 * deferrable unique, exclusion, on columns or expressions of types forst
 * cannot encode or of nondeterministic collations.
 */
extern void forst_check_index_columns(Relation heap, Relation index);

/* Appends [FST_KG_INDEX][entry id] to out. */
extern void forst_index_entry_head(StringInfo out, uint32 entry_id);

/*
 * Storage parameters of forst_key indexes: entry_id, the id a secondary
 * index's entries carry, when not its OID; and btree's fillfactor and
 * deduplicate_items, accepted so that an index declared for btree (which
 * CREATE INDEX on a forst table makes a forst index) is taken as it is,
 * with no effect: forst's entries have no pages to fill, and each is one
 * row's.  forst.attach sets it on the
 * indexes it creates for a checkpoint's indexes, so that they read the
 * entries in the attached files; nothing else should (ddl/utility.c
 * refuses changing it, and CREATE INDEX refuses one that another index of
 * the table has).  forst_index_options_init registers it (_PG_init, every
 * process); forst_index_options parses a reloptions array (amoptions).
 */
typedef struct ForstIndexOptions
{
	int32		vl_len_;		/* varlena header */
	double		entry_id;		/* 0: the index's OID */
	int			fillfactor;		/* btree's, accepted and ignored */
	bool		deduplicate_items;	/* btree's, accepted and ignored */
} ForstIndexOptions;

extern void forst_index_options_init(void);
extern bytea *forst_index_options(Datum reloptions, bool validate);

/* The entry id of a secondary index (its entry_id, or its OID). */
extern uint32 forst_index_entry_id(Relation index);

/* The same from the catalog, for an index not open. */
extern uint32 forst_index_entry_id_of(Oid indexoid);

/*
 * Refuses (42710) a secondary index whose entry id another secondary index
 * of heap has: they would read and write each other's entries.
 */
extern void forst_check_entry_id(Relation heap, Relation index);

/*
 * Appends the encoded columns of s for a row, values and isnull indexed by
 * attnum - 1 (a slot's tts_values); expressions are evaluated (s must be
 * prepared).
 */
extern void forst_index_entry_columns(const ForstSecondary *s, Datum *values,
									  bool *isnull, StringInfo out);

/* The whole user part of an entry: head, columns, row and its length. */
extern void forst_index_entry_build(const ForstSecondary *s, Datum *values,
									bool *isnull, FstSlice row, StringInfo out);

/*
 * The prefix rule of SST files' bloom filters (lsm/sst.h FstPrefixFn): an
 * entry's user part up to the end of its columns, so that a lookup of
 * every column by equality skips the files without that value.  Rows and
 * malformed entries have no prefix.  forst_index_prefix_options sets it in
 * the options of the files that flushes and compactions write.
 */
#define FORST_PREFIX_RULE_INDEX_COLUMNS 1
extern size_t forst_index_entry_prefix_len(FstSlice user_part);
struct FstSstOptions;
extern void forst_index_prefix_options(struct FstSstOptions *opt);

/*
 * The parts of an entry's user key (its user part after the key group, as
 * a cursor returns it): the row it names and the encoded columns between
 * the index OID and the row.  Returns false if the entry is malformed.
 */
extern bool forst_index_entry_split(FstSlice user_key, FstSlice *columns,
									FstSlice *row);

#endif							/* FORST_INDEX_ENTRY_H */
