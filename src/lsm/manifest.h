/*-------------------------------------------------------------------------
 *
 * manifest.h
 *	  A table's manifest: a full, checksummed, versioned snapshot of the
 *	  table's file set, and the edits that lead from one version to the next.
 *
 * A manifest says everything needed to reopen a table from object storage
 * (docs/architecture.md): the table's identity, the writer epoch used for
 * fencing, the WAL position it covers, the sequence and file-id counters,
 * the key-group range the table owns, the SQL layer's schema description
 * (opaque bytes here), the TTL setting, and per level the SST files.
 * Version N is stored, create-if-absent, as the object
 * "<table prefix>/manifest/<N as 20 zero-padded digits>".
 *
 * Files.  Level 0 holds files in the order "newest first"; they may overlap.
 * Levels 1.. hold files sorted by smallest key whose internal-key ranges do
 * not overlap (one user key may still span two adjacent files, with its
 * newer versions in the first).  A file is identified by (owner, file id):
 * owner NULL means the file lives under this table's own prefix; otherwise
 * owner is the prefix of the table that owns the file (the store layer
 * interprets it) and the file is only borrowed, read-only, by a no-claim
 * restore or clone.  Such files are never deleted on this table's behalf.
 *
 * Invariants (fst_manifest_validate; decode reports a violation as
 * FST_CORRUPT, apply and encode as FST_INVALID_ARGUMENT):
 *	- 1 <= max_key_groups <= FST_MAX_KEY_GROUPS, kg_lo <= kg_hi < max;
 *	- ttl_attnum is -1 (no TTL, interval 0) or >= 1 (interval > 0);
 *	- per file: level field equals its level; size > 0; both keys are
 *	  internal keys (>= FST_IKEY_OVERHEAD bytes) and smallest <= largest;
 *	  kg_min/kg_max are the key groups of smallest/largest and below
 *	  max_key_groups (files may hold key groups outside [kg_lo, kg_hi]:
 *	  that is how a rescale attaches a part of a table); seq_min <=
 *	  seq_max <= last_seq; num_tombstones <= num_entries; ttl_min <=
 *	  ttl_max when has_ttl; owner, if set, is 1..FST_MANIFEST_MAX_OWNER
 *	  bytes;
 *	- own files (owner NULL) have file_id < next_file_id;
 *	- no (owner, file id) appears twice in the whole manifest;
 *	- in levels >= 1, each file's largest key < the next file's smallest.
 *
 * Memory: everything a manifest points to is malloc'ed and owned by it;
 * fst_manifest_free releases it.  Functions that fill an output manifest
 * (decode, apply, copy) initialize it first, and leave it empty on failure,
 * so it is always safe to free.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FST_MANIFEST_H
#define FST_MANIFEST_H

#include "fst_common.h"
#include "filemeta.h"

#define FST_MANIFEST_FORMAT_MAJOR	1	/* readers refuse a newer major */
#define FST_MANIFEST_FORMAT_MINOR	1	/* newer minors only add sections
										 * (skipped) and file flags (refused
										 * where a file uses one) */
#define FST_MANIFEST_UUID_LEN		16
#define FST_DEFAULT_MAX_KEY_GROUPS	128
#define FST_MANIFEST_MAX_OWNER		1024

/* "manifest/" + 20 digits + NUL */
#define FST_MANIFEST_OBJECT_NAME_SIZE 30

typedef struct FstManifestFile
{
	FstFileMeta meta;
	char	   *owner;			/* NULL: our own file; else owning prefix */
} FstManifestFile;

typedef struct FstManifestLevel
{
	FstManifestFile *files;
	int			nfiles;
	int			cap;			/* allocated slots */
} FstManifestLevel;

typedef struct FstManifest
{
	/* format the manifest was decoded from; encode always writes current */
	uint16		format_major;
	uint16		format_minor;

	uint8		table_uuid[FST_MANIFEST_UUID_LEN];
	uint64		version;		/* object manifest/<version> */
	uint64		writer_epoch;	/* fencing: highest epoch wins */
	uint64		lsn_covered;	/* WAL up to here is in the files */
	uint64		next_file_id;	/* next id to allocate for our own files */
	uint64		last_seq;		/* highest sequence number used */
	int64		created_at;		/* microseconds since the Unix epoch */

	uint16		max_key_groups; /* fixed per table */
	uint16		kg_lo;			/* owned key-group range, inclusive */
	uint16		kg_hi;

	char	   *schema;			/* opaque description from the SQL layer */
	size_t		schema_len;
	int16		ttl_attnum;		/* -1: no TTL */
	int64		ttl_interval_us;

	FstManifestLevel levels[FST_NUM_LEVELS];
} FstManifest;

/*
 * An edit: files to remove and to add, and optional new counter values.
 * Apply produces base's successor (version + 1).  L0 files added by an edit
 * go before all of base's L0 files; among themselves, a file added later to
 * the edit is newer and comes first.  Files added to levels >= 1 are sorted
 * in.  Counters may not go backwards.
 */
typedef struct FstManifestRemoval
{
	int			level;
	uint64		file_id;
	char	   *owner;			/* NULL for our own file */
} FstManifestRemoval;

typedef struct FstManifestEdit
{
	FstManifestFile *adds;		/* level is adds[i].meta.level */
	int			nadds;
	int			adds_cap;
	FstManifestRemoval *removes;
	int			nremoves;
	int			removes_cap;

	bool		has_lsn_covered;
	uint64		lsn_covered;
	bool		has_last_seq;
	uint64		last_seq;
	bool		has_next_file_id;
	uint64		next_file_id;
	bool		has_writer_epoch;
	uint64		writer_epoch;
	bool		has_created_at;
	int64		created_at;
} FstManifestEdit;

/* Lifecycle. init gives an empty, valid manifest (version 0, 128 groups). */
extern void fst_manifest_init(FstManifest *m);
extern void fst_manifest_free(FstManifest *m);
extern FstCode fst_manifest_copy(FstManifest *dst, const FstManifest *src,
								 FstError *err);

/* Replaces the schema blob (copied). */
extern FstCode fst_manifest_set_schema(FstManifest *m, const void *data,
									   size_t len, FstError *err);

/*
 * Appends a deep copy of meta (and owner, may be NULL) at the end of
 * level's array, setting its level field.  No ordering is checked: this is
 * for building a manifest piece by piece (restore); validate afterwards.
 */
extern FstCode fst_manifest_append_file(FstManifest *m, int level,
										const FstFileMeta *meta,
										const char *owner, FstError *err);

/* Checks every invariant listed above; returns OK or fail_code. */
extern FstCode fst_manifest_validate(const FstManifest *m, FstCode fail_code,
									 FstError *err);

/* Field-by-field equality (format version excluded). */
extern bool fst_manifest_equal(const FstManifest *a, const FstManifest *b);

/*
 * Encoding.  encode validates first (FST_INVALID_ARGUMENT) and appends the
 * object to *out; decode accepts exactly one whole object.  Decode fails
 * with FST_NOT_SUPPORTED for another major format version and FST_CORRUPT
 * for anything else malformed.
 */
extern FstCode fst_manifest_encode(const FstManifest *m, FstBuf *out,
								   FstError *err);
extern FstCode fst_manifest_decode(const char *data, size_t len,
								   FstManifest *out, FstError *err);

/* For tests: encodes without validating (so that bad content can be built). */
extern FstCode fst_manifest_encode_unchecked(const FstManifest *m, FstBuf *out,
											 FstError *err);

/* Edits. */
extern void fst_manifest_edit_init(FstManifestEdit *e);
extern void fst_manifest_edit_free(FstManifestEdit *e);
extern FstCode fst_manifest_edit_add(FstManifestEdit *e, int level,
									 const FstFileMeta *meta,
									 const char *owner, FstError *err);
extern FstCode fst_manifest_edit_remove(FstManifestEdit *e, int level,
										uint64 file_id, const char *owner,
										FstError *err);

/*
 * Forgets e's removals; its additions and counters stay (a compaction's
 * outputs given to another table than its inputs', VACUUM FULL's).
 */
extern void fst_manifest_edit_drop_removals(FstManifestEdit *e);

/*
 * Produces *next = base + edit, version base->version + 1.  Refuses with
 * FST_INVALID_ARGUMENT (base untouched, *next empty) an edit that removes a
 * file base does not have at that level, adds a file already present, moves
 * a counter backwards, or whose result breaks an invariant.
 */
extern FstCode fst_manifest_apply(const FstManifest *base,
								  const FstManifestEdit *edit,
								  FstManifest *next, FstError *err);

/* Utilities. */
extern uint64 fst_manifest_level_bytes(const FstManifest *m, int level);
extern int	fst_manifest_level_files(const FstManifest *m, int level);
extern int	fst_manifest_total_files(const FstManifest *m);
extern uint64 fst_manifest_total_bytes(const FstManifest *m);

/* Finds a file by identity; returns NULL if absent (sets *level if found). */
extern const FstManifestFile *fst_manifest_find_file(const FstManifest *m,
													 uint64 file_id,
													 const char *owner,
													 int *level);

/*
 * Writes "manifest/<version, 20 digits zero-padded>" into buf; returns
 * false if size is below FST_MANIFEST_OBJECT_NAME_SIZE.  parse accepts
 * exactly that form.
 */
extern bool fst_manifest_object_name(uint64 version, char *buf, size_t size);
extern bool fst_manifest_parse_object_name(const char *name, uint64 *version);

/*
 * Files of a level whose key range meets the user-part range [begin, end]
 * (user part = key group + user key, as fst_ikey_user_part returns; a NULL
 * bound is unbounded).  *out is a malloc'ed array of pointers into m (free
 * with fst_free; NULL when *nout is 0), in level order.  Levels >= 1 are
 * searched by binary search.
 */
extern FstCode fst_manifest_overlapping(const FstManifest *m, int level,
										const FstSlice *begin,
										const FstSlice *end,
										const FstManifestFile ***out,
										int *nout, FstError *err);

#endif							/* FST_MANIFEST_H */
