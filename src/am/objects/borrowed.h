/*-------------------------------------------------------------------------
 *
 * borrowed.h
 *	  Visibility rules of borrowed SST files: how a table reads files that
 *	  another table (perhaps on another server) wrote, as of one of that
 *	  table's checkpoints, limited to a key-group range.
 *
 * xids in such files mean nothing here.  The checkpoint that named them
 * settled every xid a reader would have had to look up (checkpoint/checkpoint.h):
 * an entry is visible iff its key group is in [kg_lo, kg_hi] and it is
 * frozen, or its xid is in [lo, xmax) and among the listed ranges, or its
 * xid is older than lo and it carries the committed flag.  An entry of a
 * secondary index (keys/index_entry.h) counts as in its row's key group,
 * and is visible only if the rule lists its entry id: the indexes that the
 * table has for the entries (forst.attach creates them with the source's
 * entry ids), not the source's others.  Readers get
 * visible entries as frozen and the others as aborted (xid 0, no flags),
 * by rewriting each block once as it is read (FstSstReadOptions
 * rewrite_entry); the rest of the table AM needs no notion of foreign
 * files.  Compaction reads them the same way, so its outputs -- the
 * table's own files -- hold only frozen rows of the owned key groups.
 *
 * A table's rules are kept in its manifest's schema blob, as text lines
 *
 *	forst-table 1
 *	vis <kg_lo> <kg_hi> <lo> <xmax> <first>-<last>,<first>-<last>...
 *	visidx <entry id>,<entry id>...
 *
 * ("-" when no xid of [lo, xmax) is visible; a visidx line, when the rule
 * shows index entries, belongs to the vis line before it, and a library
 * without it skips the line and shows none); a borrowed file's owner
 * string is "<rule>[+<rule>...]:<object key>": one rule, or several with
 * disjoint key-group ranges when a merge joined two tables that borrow
 * the same file (each key group is then read with its own rule; one entry
 * per file keeps every version once).  Rules are only ever appended.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_VIS_H
#define FORST_VIS_H

#include "lib/stringinfo.h"
#include "lsm/fst_common.h"

typedef struct ForstVis
{
	uint16		kg_lo;
	uint16		kg_hi;
	TransactionId lo;
	TransactionId xmax;
	int			nranges;
	uint32	   *ranges;			/* pairs of offsets from lo, ascending */
	int			nindexes;
	uint32	   *indexes;		/* entry ids shown, ascending */
} ForstVis;

typedef struct ForstVisList
{
	int			n;
	ForstVis   *items;
} ForstVisList;

/*
 * Parses a schema blob (empty: no rules) into *out, allocated in cxt;
 * false if it is malformed.
 */
extern bool forst_vis_parse(const char *blob, size_t len, ForstVisList *out,
							MemoryContext cxt);

/* Appends "vis ..." (and "visidx ...") for rule v to buf. */
extern void forst_vis_format(StringInfo buf, const ForstVis *v);

/*
 * Builds a rule from a checkpoint's snapshot ("first-last,..." text, as in
 * the schema blob, or "-") in CurrentMemoryContext; ERROR if malformed.
 * It shows the entries of the n indexes of ids (any order; copied).
 */
extern void forst_vis_build(ForstVis *v, uint16 kg_lo, uint16 kg_hi,
							TransactionId lo, TransactionId xmax,
							const char *ranges, const uint32 *ids, int n);

/*
 * Narrows v's index entry ids to those among the n of ids (any order), in
 * CurrentMemoryContext.
 */
extern void forst_vis_keep_indexes(ForstVis *v, const uint32 *ids, int n);

/* The rules of one borrowed file. */
#define FORST_VIS_MAX_PARTS 16

typedef struct ForstVisSet
{
	int			n;
	ForstVis	parts[FORST_VIS_MAX_PARTS];
} ForstVisSet;

/*
 * Parses the "<rule>[+<rule>...]" of an owner string against list into
 * *set; returns the object key after the colon, or NULL if malformed or
 * naming a rule the list lacks.
 */
extern const char *forst_vis_owner(const char *owner, const ForstVisList *list,
								   ForstVisSet *set);

/*
 * A set from forst_vis_owner points into its list's ranges: _own copies
 * them into cxt, for a set that outlives the list (an SST reader's, kept
 * across transactions, while the manifest it came from may be freed), and
 * _free frees such a set (palloc'd) with its copies.
 */
extern void forst_vis_set_own(ForstVisSet *set, MemoryContext cxt);
extern void forst_vis_set_free(ForstVisSet *set);

/* The SST reader hook (arg: a ForstVisSet). */
extern void forst_vis_rewrite(void *arg, FstSlice ikey, char *value, size_t len);

#endif							/* FORST_VIS_H */
