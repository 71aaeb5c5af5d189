/*-------------------------------------------------------------------------
 *
 * gc_pins.c
 *	  The pins this cluster wrote for its clones, dropped by garbage
 *	  collection (checkpoint/gc.c) once nothing reads through them.
 *
 * forst.attach in mode no_claim writes a pin "<source cluster>/pins/..."
 * that keeps the source checkpoint from retention, and so its files from
 * the source's collection, and a record of it under "<cluster>/pinned/"
 * (checkpoint/attach.c).  A pin goes, with its record, once the clone is
 * gone and no retained checkpoint of ours reads through it
 * (pin_still_needed).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "am/forst.h"
#include "am/checkpoint/checkpoint.h"
#include "am/checkpoint/gc_pins.h"
#include "am/checkpoint/gc_refs.h"
#include "am/objects/store.h"

/*
 * The keys of the files that a table's manifest lists and that live outside
 * this cluster's own tables (borrowed from another server, or from a
 * savepoint), added to set.
 */
static void
add_foreign_files(HTAB *set, const char *prefix, uint64 version)
{
	FstManifest m;
	FstObjKey	k;
	FstObjKey	owner;
	char		key[FORST_KEY_LEN];
	int			l,
				i;

	if (!forst_manifest_read(prefix, version, &m, true))
		return;
	forst_parse_table_prefix(prefix, &k);
	k.kind = FST_OBJKEY_SST;
	for (l = 0; l < FST_NUM_LEVELS; l++)
		for (i = 0; i < m.levels[l].nfiles; i++)
		{
			const char *fk = forst_gc_file_key(&k, prefix, &m.levels[l].files[i],
											   key, sizeof(key));

			if (!fst_objkey_parse_table_of(fk, &owner) ||
				owner.cluster != k.cluster || owner.savepoint[0] != '\0')
				forst_gc_ref_add(set, fk);
		}
	fst_manifest_free(&m);
}

/*
 * Whether a pin must stay although the clone that wrote it (the table at
 * clone_prefix) is gone: a retained checkpoint of ours names the clone,
 * with a manifest that lists a file of the pinned checkpoint ("checkpoint
 * <id>\nsource <table prefix>\n..."; a savepoint's pin names checkpoint 0
 * and its table's one manifest) that lives outside this cluster.
 *
 * Such a checkpoint can be attached on another server after the clone is
 * dropped (a rescale moves a shard on, and drops it), and it reads those
 * files through the pin: the source keeps its checkpoint, and its own pins
 * on files it borrowed in turn, only while the pin is there.  So a file
 * stays as long as a table or retained checkpoint reads it, however many
 * servers the chain of attaches went through.  Only checkpoints naming the
 * clone count, and only files outside this cluster: a file of ours that
 * the source borrowed from us is kept by our own references, and counting
 * it would let two servers' pins hold each other's checkpoints forever.
 * A source checkpoint or manifest that is gone needs no pin.
 */
static bool
pin_still_needed(List *named, const char *clone_prefix, const char *pin_text)
{
	const char *src;
	char	   *prefix;
	char	   *cluster;
	uint64		version = 0;
	uint64		ckpt;
	HTAB	   *foreign = NULL;
	FstManifest m;
	FstObjKey	k;
	char		key[FORST_KEY_LEN];
	ListCell   *lc;
	bool		needed = false;
	int			l,
				i;

	if (sscanf(pin_text, "checkpoint " UINT64_FORMAT, &ckpt) != 1 ||
		(src = strstr(pin_text, "\nsource ")) == NULL)
		return true;			/* not understood: kept, as unreadable ones */

	/* the files our retained checkpoints read through the clone */
	foreach(lc, named)
	{
		ForstCkptTableRef *r = lfirst(lc);

		if (strcmp(r->prefix, clone_prefix) != 0)
			continue;
		if (foreign == NULL)
			foreign = forst_gc_refs_create("forst gc pinned files");
		add_foreign_files(foreign, r->prefix, r->version);
	}
	if (foreign == NULL)
		return false;

	/* the pinned checkpoint's manifest of its table */
	src += strlen("\nsource ");
	prefix = pnstrdup(src, strcspn(src, "\n"));
	cluster = pnstrdup(prefix, strcspn(prefix, "/"));
	if (ckpt > 0)
	{
		char	   *ckey = forst_checkpoint_key(cluster, ckpt);
		char	   *json = ckey ? forst_checkpoint_get(ckey, true) : NULL;

		if (json == NULL)
			return false;
		foreach(lc, forst_checkpoint_tables(json))
		{
			ForstCkptTableRef *r = lfirst(lc);

			if (strcmp(r->prefix, prefix) == 0)
				version = r->version;
		}
	}
	else
		version = forst_newest_manifest_version(prefix);
	if (version == 0 || !forst_manifest_read(prefix, version, &m, true))
		return false;
	forst_parse_table_prefix(prefix, &k);
	k.kind = FST_OBJKEY_SST;
	for (l = 0; l < FST_NUM_LEVELS && !needed; l++)
		for (i = 0; i < m.levels[l].nfiles && !needed; i++)
			needed = forst_gc_ref_has(foreign, forst_gc_file_key(&k, prefix, &m.levels[l].files[i],
														key, sizeof(key)));
	fst_manifest_free(&m);
	return needed;
}

int
forst_gc_drop_stale_pins(ForstGcCloneGone gone, void *arg, List *named)
{
	FstObjKey	dir;
	ForstObjKeys keys;
	int			dropped = 0;
	int			i;

	forst_objkey_init(&dir, FST_OBJKEY_PINNED);
	forst_list_objects(forst_objkey_dir(FST_OBJDIR_PINNED, &dir), &keys);
	for (i = 0; i < keys.n; i++)
	{
		FstBuf		buf;
		FstError	err;
		char	   *pin = NULL;
		FstObjKey	table;
		char	   *text;
		char	   *by;

		/*
		 * A pin deleted since the listing pins nothing; one that cannot be
		 * read stops the collection (what it pins must not go).
		 */
		if (!forst_object_get(keys.keys[i], &buf, true))
			continue;
		text = pnstrdup(buf.data, buf.len);
		fst_buf_free(&buf);
		/* "pin <key>\nby <table prefix>\n" */
		if (strncmp(text, "pin ", 4) != 0 || (by = strstr(text, "\nby ")) == NULL)
			continue;
		pin = pnstrdup(text + 4, by - text - 4);
		by += 4;
		by[strcspn(by, "\n")] = '\0';
		if (!fst_objkey_parse_table_of(by, &table))
			continue;
		if (!gone(table.db, table.rel, arg))
			continue;
		/* the pin says which checkpoint it keeps (gone: nothing) */
		if (forst_object_get(pin, &buf, true))
		{
			text = pnstrdup(buf.data, buf.len);
			fst_buf_free(&buf);
			if (pin_still_needed(named, forst_objkey(&table), text))
				continue;
		}
		{
			const char *del[2] = {pin, keys.keys[i]};

			if (fst_objstore_delete_batch(forst_objstore(), del, 2, NULL, &err) == FST_OK)
				dropped++;
		}
	}
	return dropped;
}
