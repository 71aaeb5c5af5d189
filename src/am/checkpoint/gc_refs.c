/*-------------------------------------------------------------------------
 *
 * gc_refs.c
 *	  The object keys a garbage collection keeps (checkpoint/gc.c): a set
 *	  of keys, and the keys of the files a manifest lists.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/hsearch.h"

#include "am/checkpoint/gc_refs.h"

typedef struct RefEntry
{
	char		key[FORST_KEY_LEN];
} RefEntry;

HTAB *
forst_gc_refs_create(const char *name)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = FORST_KEY_LEN;
	ctl.entrysize = sizeof(RefEntry);
	ctl.hcxt = CurrentMemoryContext;
	return hash_create(name, 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

void
forst_gc_ref_add(HTAB *refs, const char *key)
{
	RefEntry	e;
	bool		found;

	memset(e.key, 0, sizeof(e.key));
	strlcpy(e.key, key, sizeof(e.key));
	(void) hash_search(refs, e.key, HASH_ENTER, &found);
}

bool
forst_gc_ref_has(HTAB *refs, const char *key)
{
	char		k[FORST_KEY_LEN];

	memset(k, 0, sizeof(k));
	strlcpy(k, key, sizeof(k));
	return hash_search(refs, k, HASH_FIND, NULL) != NULL;
}

/*
 * The object key of a file that the manifest of the table at prefix lists
 * (tk: that table's key, kind SST): under the table for its own files, the
 * key its owner string names for a borrowed one.
 */
const char *
forst_gc_file_key(FstObjKey *tk, const char *prefix, const FstManifestFile *f,
				  char *buf, size_t len)
{
	const char *colon;

	if (f->owner != NULL)
	{
		colon = strchr(f->owner, ':');
		return colon ? colon + 1 : f->owner;
	}
	tk->file_id = f->meta.file_id;
	if (fst_objkey_build(tk, buf, len) < 0)
		elog(ERROR, "forst: no key for file " UINT64_FORMAT " of \"%s\"",
			 tk->file_id, prefix);
	return buf;
}

/* Marks a manifest and every file it lists as needed. */
void
forst_gc_keep_manifest(HTAB *refs, const char *prefix, uint64 version, const FstManifest *m)
{
	FstObjKey	k;
	char		key[FORST_KEY_LEN];
	int			l,
				i;

	forst_parse_table_prefix(prefix, &k);
	k.kind = FST_OBJKEY_MANIFEST;
	k.version = version;
	forst_gc_ref_add(refs, forst_objkey(&k));
	k.kind = FST_OBJKEY_SST;
	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < m->levels[l].nfiles; i++)
			forst_gc_ref_add(refs, forst_gc_file_key(&k, prefix, &m->levels[l].files[i],
													  key, sizeof(key)));
}
