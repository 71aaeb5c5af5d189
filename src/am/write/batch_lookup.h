/*-------------------------------------------------------------------------
 *
 * batch_lookup.h
 *	  Batched key lookups for INSERT ... ON CONFLICT into a forst table (see
 *	  write/batch_lookup.c): a plan node, "Custom Scan (ForstBatchLookup)",
 *	  between the statement's ModifyTable and its input that reads the
 *	  input ahead in batches and fetches the blocks the batch's key lookups
 *	  will read, together and in parallel, before ModifyTable looks the
 *	  keys up one by one.
 *
 * Planned only where it can pay (an object store with parallel reads and
 * the disk cache on: forst_prefetch_possible) and while forst.batch_lookups
 * is on; the node passes rows through unbatched when the setting is off
 * at execution time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_BATCH_LOOKUP_H
#define FORST_BATCH_LOOKUP_H

/* Registers the plan node and the planner hook (from _PG_init). */
extern void forst_batch_lookup_init(void);

#endif							/* FORST_BATCH_LOOKUP_H */
