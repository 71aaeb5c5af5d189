/*-------------------------------------------------------------------------
 *
 * objstore_file_list.c
 *	  Listing the keys of a file:// object store: a sorted walk of its
 *	  directory tree (see objstore_file_list.h).
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "objstore.h"
#include "objstore_file_list.h"

/* ---- list -------------------------------------------------------------- */

/*
 * The walk visits directories depth-first with each directory's entries
 * sorted by name, a subdirectory's name compared as if it ended in '/'.
 * All keys below entry e begin with e's name (plus '/'), and no such name
 * is a prefix of another except a file's of a longer name's (whose keys it
 * precedes anyway), so the walk meets keys in increasing byte order and can
 * stop as soon as it has one more key than the page holds.  Subtrees that
 * cannot hold a key matching the prefix or following start_after are not
 * entered.
 */
typedef struct ListEntry
{
	char	   *name;
	bool		is_dir;
} ListEntry;

typedef struct ListWalk
{
	const char *prefix;
	size_t		plen;
	const char *start_after;
	int			max_keys;
	FstObjList *out;
	int			cap;
	bool		done;			/* page full and one more key seen */
	size_t		rootlen;		/* path = root '/' key */
	char		path[FILE_PATH_MAX];
} ListWalk;

static int
list_entry_cmp(const void *a, const void *b)
{
	const ListEntry *x = (const ListEntry *) a;
	const ListEntry *y = (const ListEntry *) b;
	const unsigned char *p = (const unsigned char *) x->name;
	const unsigned char *q = (const unsigned char *) y->name;
	int			cp,
				cq;

	for (;;)
	{
		/* past the name: '/' for a directory, end (-1) for a file */
		cp = *p ? *p++ : (x->is_dir ? '/' : -1);
		cq = *q ? *q++ : (y->is_dir ? '/' : -1);
		if (cp != cq || cp < 0)
			return (cp > cq) - (cp < cq);
		if (cp == '/')
			return 0;			/* both directories of the same name */
	}
}

static void
free_entries(ListEntry *ents, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		fst_free(ents[i].name);
	fst_free(ents);
}

/* Read the entries of the directory at w->path, sorted for the walk. */
static FstCode
read_dir(ListWalk *w, ListEntry **ents_out, int *n_out, FstError *err)
{
	DIR		   *dir;
	struct dirent *de;
	ListEntry  *ents = NULL;
	int			n = 0;
	int			cap = 0;
	size_t		pathlen = strlen(w->path);
	FstCode		code = FST_OK;

	dir = opendir(w->path);
	if (dir == NULL)
	{
		if (errno == ENOENT || errno == ENOTDIR)
			return FST_OK;		/* nothing under this prefix */
		return fst_objstore_errno(err, errno, "could not open directory \"%s\"",
								  w->path);
	}
	while (code == FST_OK)
	{
		struct stat st;
		unsigned char type;

		errno = 0;
		if ((de = readdir(dir)) == NULL)
		{
			if (errno != 0)
				code = fst_objstore_errno(err, errno,
										  "could not read directory \"%s\"",
										  w->path);
			break;
		}
		/* ".", "..", temporary files and anything a key can't name */
		if (fst_objstore_validate_key(de->d_name, NULL) != FST_OK ||
			pathlen + strlen(de->d_name) + 2 > sizeof(w->path))
			continue;
		type = de->d_type;
		if (type == DT_UNKNOWN)
		{
			strcpy(w->path + pathlen, de->d_name);
			if (lstat(w->path, &st) == 0)
				type = S_ISREG(st.st_mode) ? DT_REG :
					S_ISDIR(st.st_mode) ? DT_DIR : DT_UNKNOWN;
			w->path[pathlen] = '\0';
		}
		if (type != DT_REG && type != DT_DIR)
			continue;			/* symbolic links, devices, sockets ... */
		if (n == cap)
		{
			int			ncap = cap ? cap * 2 : 64;
			ListEntry  *ne = fst_realloc(ents, sizeof(ListEntry) * ncap);

			if (ne == NULL)
			{
				code = fst_error(err, FST_NO_MEMORY, "out of memory");
				break;
			}
			ents = ne;
			cap = ncap;
		}
		ents[n].is_dir = (type == DT_DIR);
		if ((ents[n].name = fst_strdup(de->d_name)) == NULL)
			code = fst_error(err, FST_NO_MEMORY, "out of memory");
		else
			n++;
	}
	closedir(dir);
	if (code != FST_OK)
	{
		free_entries(ents, n);
		return code;
	}
	if (n > 1)
		qsort(ents, n, sizeof(ListEntry), list_entry_cmp);
	*ents_out = ents;
	*n_out = n;
	return FST_OK;
}

static FstCode
list_add(ListWalk *w, const char *key, FstError *err)
{
	FstObjList *out = w->out;
	struct stat st;

	if (out->nentries == w->max_keys)
	{
		/* one key more than the page holds: there is a next page */
		out->truncated = true;
		out->next = fst_strdup(out->entries[out->nentries - 1].key);
		w->done = true;
		if (out->next == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory");
		return FST_OK;
	}
	if (stat(w->path, &st) < 0)
	{
		if (errno == ENOENT)
			return FST_OK;		/* deleted meanwhile */
		return fst_objstore_errno(err, errno, "could not stat \"%s\"",
								  w->path);
	}
	if (out->nentries == w->cap)
	{
		int			ncap = w->cap ? w->cap * 2 : 64;
		FstObjEntry *ne;

		ncap = Min(ncap, w->max_keys);
		ne = fst_realloc(out->entries, sizeof(FstObjEntry) * ncap);
		if (ne == NULL)
			return fst_error(err, FST_NO_MEMORY, "out of memory");
		out->entries = ne;
		w->cap = ncap;
	}
	out->entries[out->nentries].key = fst_strdup(key);
	if (out->entries[out->nentries].key == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	out->entries[out->nentries].size = (uint64) st.st_size;
	out->nentries++;
	return FST_OK;
}

/* Walk the directory whose key prefix (ending in '/', or "") is in w->path. */
static FstCode
list_walk(ListWalk *w, FstError *err)
{
	ListEntry  *ents = NULL;
	int			n = 0;
	int			i;
	size_t		pathlen = strlen(w->path);
	char	   *key = w->path + w->rootlen + 1;
	FstCode		code;

	code = read_dir(w, &ents, &n, err);
	if (code != FST_OK)
		return code;
	for (i = 0; i < n && !w->done && code == FST_OK; i++)
	{
		size_t		nlen = strlen(ents[i].name);
		size_t		klen;
		int			rel;

		if (pathlen + nlen + 2 > sizeof(w->path) ||
			(size_t) (key - w->path) + FST_OBJ_KEY_MAX < pathlen + nlen)
			continue;			/* longer than any key */
		memcpy(w->path + pathlen, ents[i].name, nlen);
		klen = pathlen + nlen - (key - w->path);
		if (ents[i].is_dir)
		{
			w->path[pathlen + nlen] = '/';
			w->path[pathlen + nlen + 1] = '\0';
			klen++;
		}
		else
			w->path[pathlen + nlen] = '\0';

		/* does the prefix agree with this entry on their common length? */
		rel = memcmp(key, w->prefix, Min(klen, w->plen));
		if (rel > 0)
			break;				/* this and all later entries sort after */
		if (rel < 0)
			continue;

		if (ents[i].is_dir)
		{
			size_t		slen = strlen(w->start_after);

			/* every key below sorts at or before start_after: skip */
			if (strcmp(key, w->start_after) < 0 &&
				(slen < klen || memcmp(key, w->start_after, klen) != 0))
				continue;
			code = list_walk(w, err);
		}
		else if (klen >= w->plen && strcmp(key, w->start_after) > 0)
			code = list_add(w, key, err);
	}
	w->path[pathlen] = '\0';
	free_entries(ents, n);
	return code;
}

FstCode
fst_file_list_keys(const char *root, const char *prefix, const char *start_after,
				   int max_keys, FstObjList *out, FstError *err)
{
	ListWalk   *w;
	const char *slash;
	size_t		dlen;
	FstCode		code;

	w = fst_calloc(1, sizeof(ListWalk));
	if (w == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	w->prefix = prefix;
	w->plen = strlen(prefix);
	w->start_after = start_after;
	w->max_keys = max_keys;
	w->out = out;
	w->rootlen = strlen(root);

	/* start in the deepest directory the prefix names completely */
	slash = strrchr(prefix, '/');
	dlen = slash ? (size_t) (slash - prefix) + 1 : 0;
	snprintf(w->path, sizeof(w->path), "%s/%.*s", root, (int) dlen,
			 prefix);
	code = list_walk(w, err);
	fst_free(w);
	return code;
}
