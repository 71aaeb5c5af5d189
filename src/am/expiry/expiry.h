/*-------------------------------------------------------------------------
 *
 * expiry.h
 *	  Expiry of windowed state: a per-table TTL and/or watermark on one
 *	  timestamp column (docs/windowed-state.md).
 *
 * A row is expired when its TTL column is below the table's cutoff,
 *
 *		cutoff = max(watermark, statement start time - ttl),
 *
 * compared on the column's raw value (timestamp without time zone is read
 * as UTC).  A row whose TTL column is NULL never expires.  Expired rows are
 * invisible to every read path (scans, key lookups, fetches by TID, the
 * existence checks of INSERT and ON CONFLICT) and are removed by
 * compaction.  The cutoff only grows: changing or removing the TTL first
 * folds the cutoff reached so far into the watermark, so that no expired
 * row ever becomes visible again.
 *
 * The settings live in the catalog table forst.expiry (transactional,
 * WAL-logged by PostgreSQL, replicated, persisted).  Backends read it
 * (cached per relation until a relcache invalidation, which every change
 * sends) and push it into the table's shared state (ForstExpiryShared),
 * at commit of a change and whenever they find the shared copy older;
 * the flush worker, which has no catalog access, reads it from there.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FORST_EXPIRY_H
#define FORST_EXPIRY_H

#include "am/shmem/shmem.h"
#include "lsm/fst_common.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

typedef struct ForstExpiry
{
	bool		active;			/* rows of this table can expire */
	int16		attnum;
	bool		is_key;
	int64		cutoff;			/* rows with value < cutoff are expired */
	int16		attlen[FORST_EXPIRY_MAX_ATTNUM];
	char		attalign[FORST_EXPIRY_MAX_ATTNUM];
} ForstExpiry;

extern void forst_expiry_init(void);

/* OID of forst.expiry, or InvalidOid (extension being created or dropped). */
extern Oid	forst_expiry_catalog_oid(void);

/* rel's watermark in forst.expiry now (the catalog snapshot), uncached. */
extern void forst_expiry_watermark_now(Relation rel, bool *has_watermark,
									   TimestampTz *watermark);

/*
 * The table's expiry rule for the running statement (inactive if none),
 * copied into *out; pushes the settings to the table's shared state if
 * that has an older copy.
 */
extern void forst_expiry_get(Relation rel, ForstExpiry *out);

/*
 * The rule as the flush worker sees it (from shared memory) at time now;
 * false if the settings are not known or nothing expires (attnum is set
 * whenever the column is known, also then).
 */
extern bool forst_expiry_shared_rule(ForstTableShared *ts, TimestampTz now,
									 ForstExpiry *out);

/*
 * The TTL column of a row payload (a minimal tuple); false if it is NULL
 * or absent.  Never reads outside payload.
 */
extern bool forst_expiry_value(const ForstExpiry *x, FstSlice payload,
							   int64 *value);

/* Whether the row payload is expired under x. */
static inline bool
forst_row_expired(const ForstExpiry *x, FstSlice payload)
{
	int64		v;

	return x->active && forst_expiry_value(x, payload, &v) && v < x->cutoff;
}

#endif							/* FORST_EXPIRY_H */
