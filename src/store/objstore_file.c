/*-------------------------------------------------------------------------
 *
 * objstore_file.c
 *	  The file:// object store: objects are regular files under a root
 *	  directory, the key being the path relative to the root.
 *
 * Publishing.  Every write goes to a temporary file in the object's final
 * directory, named ".tmp.<base>.<pid>.<n>", which is written completely
 * and fsync'ed before it becomes visible under its key:
 *	  put			rename(temp, final): atomically replaces any old object.
 *	  put_if_absent	link(temp, final), which fails with EEXIST atomically if
 *					the name exists (also across processes and over NFS),
 *					then unlink(temp).
 * The directory is fsync'ed afterwards, and so are the parents of any
 * directories created on the way (mkdir -p).  Keys never have components
 * beginning with '.' (objstore.c refuses them), so temporary files left by
 * a crash can never be read, listed or overwritten as objects.  They are
 * not cleaned up here; a garbage collector may remove ".tmp.*" files older
 * than any plausible write.
 *
 * Limits of the mapping onto a file system (S3 has none of these):
 *	  - a key cannot be both an object and a directory prefix of another
 *		key ("a" and "a/b"); writing the second is FST_NOT_SUPPORTED, and
 *		reading "a/b" when "a" is an object is FST_NOT_FOUND.
 *	  - deleting an object leaves its (possibly empty) directories behind,
 *		so that concurrent writers into them never race with rmdir.
 *	  - deletions are not fsync'ed: after a crash a deleted object may
 *		reappear, and the garbage collector deletes it again.
 *	  - keys cannot escape the root through "..", but symbolic links inside
 *		the root are followed by reads and writes; the root is trusted
 *		(symlink escape is out of scope).  list ignores symbolic links and
 *		anything that is neither a regular file nor a directory.
 *	  - put_if_absent needs hard links (every local POSIX file system).
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd_cache.h"
#include "objstore.h"
#include "objstore_file_list.h"

/* root (bounded at open) + '/' + key + temp decoration fits in this */
#define FILE_IO_CHUNK	((size_t) 1 << 30)

typedef struct FileStore
{
	FstObjStore base;
	char	   *root;			/* absolute, no trailing '/'; "" for "/" */
	FstFdCache *fds;			/* open SST files (never rewritten), or NULL */
} FileStore;

#define FILE_FD_CACHE_SIZE 64

/* makes temporary names unique within a process (pid does across them) */
static uint64 tmp_counter;

/* ---- small helpers ----------------------------------------------------- */

/* path = root + '/' + key; keys are bounded so this always fits. */
static void
object_path(const FileStore *fs, const char *key, char *path)
{
	snprintf(path, FILE_PATH_MAX, "%s/%s", fs->root, key);
}

/*
 * Length of the directory part of path (up to, excluding, its last '/');
 * the root's keys always have one.
 */
static size_t
dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t) (slash - path) : 0;
}

static FstCode
write_all(int fd, const char *data, size_t len, const char *path,
		  FstError *err)
{
	while (len > 0)
	{
		ssize_t		n = write(fd, data, Min(len, FILE_IO_CHUNK));

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return fst_objstore_errno(err, errno, "could not write \"%s\"",
									  path);
		}
		if (n == 0)
			return fst_objstore_errno(err, ENOSPC, "could not write \"%s\"",
									  path);
		data += n;
		len -= n;
	}
	return FST_OK;
}

static int
fsync_retry(int fd)
{
	int			rc;

	do
		rc = fsync(fd);
	while (rc < 0 && errno == EINTR);
	return rc;
}

/* fsync the directory whose path is the first len bytes of path ("" = "/") */
static FstCode
fsync_dir(const char *path, size_t len, FstError *err)
{
	char		dir[FILE_PATH_MAX];
	int			fd;
	int			save;

	if (len == 0)
		strcpy(dir, "/");
	else
	{
		memcpy(dir, path, len);
		dir[len] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fst_objstore_errno(err, errno, "could not open directory \"%s\"",
								  dir);
	if (fsync_retry(fd) < 0 && errno != EINVAL && errno != EBADF)
	{
		save = errno;
		close(fd);
		return fst_objstore_errno(err, save,
								  "could not fsync directory \"%s\"", dir);
	}
	close(fd);
	return FST_OK;
}

/*
 * mkdir -p for the directories of path below the root (rootlen bytes),
 * fsyncing the parent of every directory created.  A component that exists
 * but is not a directory means the key collides with an object.
 */
static FstCode
make_parents(const char *path, size_t rootlen, FstError *err)
{
	char		dir[FILE_PATH_MAX];
	size_t		dlen = dir_len(path);
	struct stat st;
	size_t		i;
	FstCode		code;

	memcpy(dir, path, dlen);
	dir[dlen] = '\0';
	if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return FST_OK;			/* the common case */

	for (i = rootlen + 1; i <= dlen; i++)
	{
		if (i < dlen && dir[i] != '/')
			continue;
		dir[i] = '\0';
		if (mkdir(dir, 0700) == 0)
		{
			code = fsync_dir(dir, dir_len(dir), err);
			if (code != FST_OK)
				return code;
		}
		else if (errno == EEXIST)
		{
			if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
				return fst_error(err, FST_NOT_SUPPORTED,
								 "\"%s\" is an object, so it cannot also be a key prefix ending in '/' in a file:// store",
								 dir);
		}
		else if (errno == ENOTDIR)
			return fst_error(err, FST_NOT_SUPPORTED,
							 "a prefix of \"%s\" is an object, so it cannot also be a directory in a file:// store",
							 dir);
		else
			return fst_objstore_errno(err, errno,
									  "could not create directory \"%s\"", dir);
		if (i < dlen)
			dir[i] = '/';
	}
	return FST_OK;
}

/* The piece size in which a source's body is copied to a file. */
#define COPY_CHUNK (256 * 1024)

/* Writes the body of src to fd (a new file named path). */
static FstCode
write_source(int fd, const FstPutSource *src, const char *path, FstError *err)
{
	char	   *chunk;
	uint64		off = 0;
	FstCode		code = FST_OK;

	if (src->len == 0)
		return FST_OK;
	chunk = fst_malloc((size_t) Min(src->len, (uint64) COPY_CHUNK));
	if (chunk == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	while (code == FST_OK && off < src->len)
	{
		size_t		n = (size_t) Min(src->len - off, (uint64) COPY_CHUNK);

		code = src->read(src->arg, off, chunk, n, err);
		if (code == FST_OK)
			code = write_all(fd, chunk, n, path, err);
		off += n;
	}
	fst_free(chunk);
	return code;
}

/*
 * Write the body of src to a new temporary file next to path (creating
 * directories as needed), fsync and close it.  On success tmp holds its
 * name.  A body in memory is written at once, any other through a buffer.
 */
static FstCode
write_temp(const FileStore *fs, const char *path, const FstPutSource *src,
		   const void *data, char *tmp, FstError *err)
{
	size_t		dlen = dir_len(path);
	int			fd;
	int			attempts = 0;
	FstCode		code;

	code = make_parents(path, strlen(fs->root), err);
	if (code != FST_OK)
		return code;

	for (;;)
	{
		snprintf(tmp, FILE_PATH_MAX, "%.*s/.tmp.%s.%d." UINT64_FORMAT,
				 (int) dlen, path, path + dlen + 1, (int) getpid(),
				 ++tmp_counter);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0)
			break;
		/* a leftover of a crashed process that had our pid: next name */
		if ((errno == EEXIST || errno == EINTR) && ++attempts < 100)
			continue;
		return fst_objstore_errno(err, errno, "could not create \"%s\"", tmp);
	}

	if (data != NULL)
		code = write_all(fd, data, (size_t) src->len, tmp, err);
	else
		code = write_source(fd, src, tmp, err);
	if (code == FST_OK && fsync_retry(fd) < 0)
		code = fst_objstore_errno(err, errno, "could not fsync \"%s\"", tmp);
	if (close(fd) < 0 && code == FST_OK)
		code = fst_objstore_errno(err, errno, "could not close \"%s\"", tmp);
	if (code != FST_OK)
		unlink(tmp);
	return code;
}

/*
 * Open an object for reading.  A missing object, a missing or non-directory
 * parent, and something that is not a regular file are all FST_NOT_FOUND.
 */
static FstCode
open_object(const char *path, const char *key, int *fd_out, struct stat *st,
			FstError *err)
{
	int			fd;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
	{
		if (errno == ENOENT || errno == ENOTDIR)
			return fst_error(err, FST_NOT_FOUND, "object \"%s\" not found",
							 key);
		return fst_objstore_errno(err, errno, "could not open \"%s\"", path);
	}
	if (fstat(fd, st) < 0)
	{
		int			save = errno;

		close(fd);
		return fst_objstore_errno(err, save, "could not stat \"%s\"", path);
	}
	if (!S_ISREG(st->st_mode))
	{
		close(fd);
		return fst_error(err, FST_NOT_FOUND, "object \"%s\" not found", key);
	}
	*fd_out = fd;
	return FST_OK;
}

/* ---- requests ---------------------------------------------------------- */

static FstCode
file_put(FstObjStore *store, const char *key, const void *data, size_t len,
		 FstError *err)
{
	FileStore  *fs = (FileStore *) store;
	char		path[FILE_PATH_MAX];
	char		tmp[FILE_PATH_MAX];
	FstCode		code;

	FstPutSource src;

	object_path(fs, key, path);
	fst_put_source_memory(&src, data, len);
	code = write_temp(fs, path, &src, data ? data : "", tmp, err);
	if (code != FST_OK)
		return code;
	if (rename(tmp, path) < 0)
	{
		int			save = errno;

		unlink(tmp);
		if (save == EISDIR || save == ENOTEMPTY || save == EEXIST)
			return fst_error(err, FST_NOT_SUPPORTED,
							 "key \"%s\" is a prefix of other keys, so it cannot be an object in a file:// store",
							 key);
		return fst_objstore_errno(err, save, "could not rename \"%s\" to \"%s\"",
								  tmp, path);
	}
	return fsync_dir(path, dir_len(path), err);
}

/* put_if_absent of src's body, from data when it is in memory there */
static FstCode
put_if_absent_common(FstObjStore *store, const char *key,
					 const FstPutSource *src, const void *data, FstError *err)
{
	FileStore  *fs = (FileStore *) store;
	char		path[FILE_PATH_MAX];
	char		tmp[FILE_PATH_MAX];
	struct stat st;
	int			save;
	FstCode		code;

	object_path(fs, key, path);

	/* cheap early answer; link() below is what decides */
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		return fst_error(err, FST_ALREADY_EXISTS,
						 "object \"%s\" already exists", key);

	code = write_temp(fs, path, src, data, tmp, err);
	if (code != FST_OK)
		return code;
	save = (link(tmp, path) < 0) ? errno : 0;
	unlink(tmp);
	if (save == EEXIST)
	{
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return fst_error(err, FST_NOT_SUPPORTED,
							 "key \"%s\" is a prefix of other keys, so it cannot be an object in a file:// store",
							 key);
		return fst_error(err, FST_ALREADY_EXISTS,
						 "object \"%s\" already exists", key);
	}
	if (save != 0)
		return fst_objstore_errno(err, save, "could not link \"%s\" to \"%s\"",
								  tmp, path);
	return fsync_dir(path, dir_len(path), err);
}

static FstCode
file_put_if_absent(FstObjStore *store, const char *key, const void *data,
				   size_t len, FstError *err)
{
	FstPutSource src;

	fst_put_source_memory(&src, data, len);
	return put_if_absent_common(store, key, &src, data ? data : "", err);
}

static FstCode
file_put_if_absent_source(FstObjStore *store, const char *key,
						  const FstPutSource *src, FstError *err)
{
	return put_if_absent_common(store, key, src, NULL, err);
}

static FstCode
file_get(FstObjStore *store, const char *key, FstBuf *out, FstError *err)
{
	FileStore  *fs = (FileStore *) store;
	char		path[FILE_PATH_MAX];
	struct stat st;
	int			fd;
	FstCode		code;

	object_path(fs, key, path);
	code = open_object(path, key, &fd, &st, err);
	if (code != FST_OK)
		return code;
	/* the size is a hint: read until EOF whatever it says */
	if (!fst_buf_reserve(out, (size_t) st.st_size + 1))
	{
		close(fd);
		return fst_error(err, FST_NO_MEMORY,
						 "out of memory reading \"%s\" (%lld bytes)", key,
						 (long long) st.st_size);
	}
	for (;;)
	{
		size_t		room = out->cap - out->len;
		ssize_t		n;

		if (room == 0)
		{
			if (!fst_buf_reserve(out, 65536))
			{
				code = fst_error(err, FST_NO_MEMORY,
								 "out of memory reading \"%s\"", key);
				break;
			}
			room = out->cap - out->len;
		}
		n = read(fd, out->data + out->len, Min(room, FILE_IO_CHUNK));
		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			code = fst_objstore_errno(err, errno, "could not read \"%s\"",
									  path);
			break;
		}
		if (n == 0)
			break;
		out->len += n;
	}
	close(fd);
	return code;
}

static FstCode
file_get_range(FstObjStore *store, const char *key, uint64 offset, size_t len,
			   char *buf, size_t *got, FstError *err)
{
	FileStore  *fs = (FileStore *) store;
	char		path[FILE_PATH_MAX];
	struct stat st;
	int			fd;
	size_t		done = 0;
	FstCode		code;

	size_t		klen = strlen(key);
	bool		keep = fs->fds != NULL && klen > 4 &&
		strcmp(key + klen - 4, ".sst") == 0;
	uint64		size;

	object_path(fs, key, path);

	/*
	 * SST files are written once under a name never reused: keep them open
	 * (a point read would otherwise open and stat its file for every block).
	 */
	if (!keep || !fst_fd_cache_lookup(fs->fds, path, &fd, &size))
	{
		code = open_object(path, key, &fd, &st, err);
		if (code != FST_OK)
			return code;
		size = (uint64) st.st_size;
		if (keep)
			fst_fd_cache_insert(fs->fds, path, fd, size);
	}
	/* an offset at or past the end is a short (empty) read, not an error */
	if (offset >= size)
		len = 0;
	while (done < len)
	{
		ssize_t		n = pread(fd, buf + done, Min(len - done, FILE_IO_CHUNK),
							  (off_t) (offset + done));

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			code = fst_objstore_errno(err, errno, "could not read \"%s\"",
									  path);
			done = 0;
			break;
		}
		if (n == 0)
			break;
		done += n;
	}
	if (!keep)
		close(fd);
	else if (code != FST_OK)
		fst_fd_cache_forget(fs->fds, path);
	*got = done;
	return code;
}

static FstCode
file_head(FstObjStore *store, const char *key, FstObjInfo *info,
		  FstError *err)
{
	FileStore  *fs = (FileStore *) store;
	char		path[FILE_PATH_MAX];
	struct stat st;

	object_path(fs, key, path);
	if (stat(path, &st) < 0)
	{
		if (errno == ENOENT || errno == ENOTDIR)
			return fst_error(err, FST_NOT_FOUND, "object \"%s\" not found",
							 key);
		return fst_objstore_errno(err, errno, "could not stat \"%s\"", path);
	}
	if (!S_ISREG(st.st_mode))
		return fst_error(err, FST_NOT_FOUND, "object \"%s\" not found", key);
	info->size = (uint64) st.st_size;
	info->mtime = (int64) st.st_mtime;
	return FST_OK;
}

/* ---- list (objstore_file_list.c) --------------------------------------- */

static FstCode
file_list(FstObjStore *store, const char *prefix, const char *start_after,
		  int max_keys, FstObjList *out, FstError *err)
{
	return fst_file_list_keys(((FileStore *) store)->root, prefix, start_after,
							  max_keys, out, err);
}

/* ---- delete, open, close ----------------------------------------------- */

static FstCode
file_delete_batch(FstObjStore *store, const char *const *keys, int nkeys,
				  FstCode *codes, FstError *err)
{
	FileStore  *fs = (FileStore *) store;
	char		path[FILE_PATH_MAX];
	FstError	first;
	int			nfailed = 0;
	int			i;

	fst_error_clear(&first);
	for (i = 0; i < nkeys; i++)
	{
		object_path(fs, keys[i], path);
		if (unlink(path) == 0 || errno == ENOENT || errno == ENOTDIR ||
			errno == EISDIR)
		{
			/* a missing key (or a mere directory prefix) is "deleted" */
			codes[i] = FST_OK;
			continue;
		}
		codes[i] = fst_objstore_errno(nfailed == 0 ? &first : NULL, errno,
									  "could not delete \"%s\"", path);
		nfailed++;
	}
	if (nfailed == 0)
		return FST_OK;
	return fst_error(err, first.code,
					 "could not delete %d of %d objects; first failure: %s",
					 nfailed, nkeys, first.msg);
}

static void
file_close(FstObjStore *store)
{
	FileStore  *fs = (FileStore *) store;

	fst_fd_cache_destroy(fs->fds);
	fst_free(fs->root);
	fst_free(fs);
}

static const FstObjStoreOps file_ops = {
	.name = "file",
	.put = file_put,
	.put_if_absent = file_put_if_absent,
	.put_if_absent_source = file_put_if_absent_source,
	.get = file_get,
	.get_range = file_get_range,
	.head = file_head,
	.list = file_list,
	.delete_batch = file_delete_batch,
	.close = file_close,
};

FstCode
fst_objstore_file_open(const FstObjUrl *url, const char *url_text,
					   FstObjStore **out, FstError *err)
{
	FileStore  *fs;
	struct stat st;
	const char *root = url->path;

	*out = NULL;
	if (url->query[0] != '\0')
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "file URL \"%s\" takes no query parameters", url_text);
	if (strlen(root) > FILE_ROOT_MAX)
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "file store root is longer than %d bytes",
						 FILE_ROOT_MAX);
	if (stat(root, &st) < 0)
	{
		if (errno == ENOENT)
			return fst_error(err, FST_NOT_FOUND,
							 "object store directory \"%s\" does not exist",
							 root);
		return fst_objstore_errno(err, errno,
								  "could not access object store directory \"%s\"",
								  root);
	}
	if (!S_ISDIR(st.st_mode))
		return fst_error(err, FST_INVALID_ARGUMENT,
						 "object store root \"%s\" is not a directory", root);

	fs = fst_calloc(1, sizeof(FileStore));
	if (fs == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	if (!fst_objstore_init_base(&fs->base, &file_ops, url_text) ||
		(fs->root = fst_strdup(strcmp(root, "/") == 0 ? "" : root)) == NULL)
	{
		fst_free(fs->base.url);
		fst_free(fs);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	fs->fds = fst_fd_cache_create(FILE_FD_CACHE_SIZE);	/* NULL: no caching */
	*out = &fs->base;
	return FST_OK;
}
