/*-------------------------------------------------------------------------
 *
 * objkey.h
 *	  Object keys of forst's bucket layout: the one place that builds and
 *	  parses them.  Server-independent (plain C, like the rest of
 *	  src/store): the server, tools and unit tests share it.
 *
 * The layout (under forst.remote_dir) is the contract:
 *
 *	<c>/tables/<db>.<rel>                                 TABLE (a prefix)
 *	<c>/tables/<db>.<rel>/manifest/<20-digit version>     MANIFEST
 *	<c>/tables/<db>.<rel>/sst/<2 hex>/<20-digit id>.sst   SST
 *	<c>/checkpoints/<20-digit id>                         CHECKPOINT
 *	<c>/distributed/<20-digit id>                         DISTRIBUTED
 *	<c>/pins/<p>.<db>.<rel>.<sdb>.<srel>                  PIN
 *	<c>/pinned/<s>.<db>.<rel>.<sdb>.<srel>                PINNED
 *	<c>/savepoints/<name>/checkpoint                      SAVEPOINT
 *	<c>/savepoints/<name>/tables/<db>.<rel>[/...]         TABLE, MANIFEST, SST
 *	<c>/savepoints/<name>/pins/<p>.<db>.<rel>.<sdb>.<srel> PIN
 *
 *	<c>			the cluster: a system identifier, decimal
 *	<db>.<rel>	a table: database oid and relfilenode, decimal
 *	<2 hex>		the SST spread: bits 24..31 of id * 0x9E3779B1 (mod 2^64),
 *				two lowercase hex digits, a function of the id
 *	<20-digit>	zero-padded decimal, so that listings sort numerically
 *	<name>		a savepoint name: 1 to FST_OBJKEY_NAME_MAX letters, digits,
 *				'_', '-' and '.', not beginning with '.'
 *	PIN			a clone's pin of the checkpoint (or savepoint) its table was
 *				attached from, in the source's namespace <c>: <p> is the
 *				pinning cluster, <db>.<rel> its table, <sdb>.<srel> the
 *				source table
 *	PINNED		the pinning cluster's record of such a pin, in its own
 *				namespace <c>: <s> is the source cluster
 *	DISTRIBUTED	a checkpoint of a table spread over several servers, as
 *				the coordinator <c> recorded it: the layout and the
 *				checkpoint of each server
 *
 * Decimal numbers are canonical (no sign, no leading zeros: "0" alone is
 * zero) and within their type (uint64 clusters, uint32 oids); the 20-digit
 * numbers have exactly 20 digits and fit in a uint64.  Parsing takes
 * exactly the keys building makes: anything else -- another prefix, a
 * missing or empty field, a non-digit, an overflow, a spread that does not
 * match the id, trailing bytes -- is not a key of the layout.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_OBJKEY_H
#define FST_OBJKEY_H

#include "fst_common.h"

/* The longest savepoint name. */
#define FST_OBJKEY_NAME_MAX 100

typedef enum FstObjKeyKind
{
	FST_OBJKEY_INVALID = 0,		/* not a key of the layout */
	FST_OBJKEY_TABLE,			/* a table's prefix */
	FST_OBJKEY_MANIFEST,
	FST_OBJKEY_SST,
	FST_OBJKEY_CHECKPOINT,
	FST_OBJKEY_PIN,
	FST_OBJKEY_PINNED,
	FST_OBJKEY_SAVEPOINT,		/* a savepoint's checkpoint object */
	FST_OBJKEY_DISTRIBUTED		/* a distributed table's checkpoint */
} FstObjKeyKind;

/*
 * A key's fields; which ones a kind uses is in the comments.  Zero the
 * struct before filling it in for fst_objkey_build.
 */
typedef struct FstObjKey
{
	FstObjKeyKind kind;
	uint64		cluster;		/* every kind: the namespace <c> */
	char		savepoint[FST_OBJKEY_NAME_MAX + 1]; /* SAVEPOINT; "" or the
													 * savepoint a TABLE,
													 * MANIFEST, SST or PIN
													 * lies in */
	uint32		db;				/* TABLE, MANIFEST, SST, PIN, PINNED */
	uint32		rel;			/* TABLE, MANIFEST, SST, PIN, PINNED */
	uint64		version;		/* MANIFEST */
	uint64		file_id;		/* SST */
	uint64		checkpoint_id;	/* CHECKPOINT, DISTRIBUTED */
	uint64		other_cluster;	/* PIN: <p>; PINNED: <s> */
	uint32		src_db;			/* PIN, PINNED */
	uint32		src_rel;		/* PIN, PINNED */
} FstObjKey;

/* Directories to list: the prefix (ending in '/') of a group of keys. */
typedef enum FstObjKeyDir
{
	FST_OBJDIR_TABLES,			/* <c>[/savepoints/<name>]/tables/ */
	FST_OBJDIR_TABLE,			/* <table>/: everything of one table */
	FST_OBJDIR_MANIFESTS,		/* <table>/manifest/ */
	FST_OBJDIR_SSTS,			/* <table>/sst/ */
	FST_OBJDIR_CHECKPOINTS,		/* <c>/checkpoints/ */
	FST_OBJDIR_PINS,			/* <c>[/savepoints/<name>]/pins/ */
	FST_OBJDIR_PINNED,			/* <c>/pinned/ */
	FST_OBJDIR_SAVEPOINT,		/* <c>/savepoints/<name>/: all of it */
	FST_OBJDIR_DISTRIBUTED		/* <c>/distributed/ */
} FstObjKeyDir;

/*
 * Building.  Each function writes the key and a NUL into buf and returns
 * its length, or -1 (buf then holds "" if size > 0) when a field is
 * invalid (a bad savepoint name, an unknown kind) or the key does not fit
 * in size bytes.
 *
 * fst_objkey_build builds k->kind from k's fields; the others are
 * shorthands.  The manifest and SST builders take a table prefix as built
 * by fst_objkey_table (and -1 if table is not one).  fst_objkey_dir builds
 * a listing prefix from the fields of k that dir needs (cluster and
 * savepoint; db and rel for a table's directories).
 */
extern int	fst_objkey_build(const FstObjKey *k, char *buf, size_t size);
extern int	fst_objkey_dir(FstObjKeyDir dir, const FstObjKey *k, char *buf,
						   size_t size);
extern int	fst_objkey_table(uint64 cluster, const char *savepoint, uint32 db,
							 uint32 rel, char *buf, size_t size);
extern int	fst_objkey_manifest(const char *table, uint64 version, char *buf,
								size_t size);
extern int	fst_objkey_sst(const char *table, uint64 file_id, char *buf,
						   size_t size);
extern int	fst_objkey_checkpoint(uint64 cluster, uint64 id, char *buf,
								  size_t size);
extern int	fst_objkey_savepoint(uint64 cluster, const char *name, char *buf,
								 size_t size);

/*
 * Parsing: classifies key and fills *out (zeroed first) with its fields;
 * false (and out->kind FST_OBJKEY_INVALID) for anything that is not a key
 * of the layout.  fst_objkey_parse_table_of takes a key under a table
 * prefix -- the prefix itself, or the prefix, '/' and anything -- and
 * fills *out with that TABLE; GC groups objects by table that way.
 */
extern bool fst_objkey_parse(const char *key, FstObjKey *out);
extern bool fst_objkey_parse_table_of(const char *key, FstObjKey *out);

/* A cluster id as text (canonical decimal uint64), or false. */
extern bool fst_objkey_parse_cluster(const char *s, uint64 *cluster);

/* Whether name is a valid savepoint name (see the layout above). */
extern bool fst_objkey_valid_name(const char *name);

/* The two hex digits an SST's key spreads it by. */
extern unsigned int fst_objkey_sst_spread(uint64 file_id);

#endif							/* FST_OBJKEY_H */
