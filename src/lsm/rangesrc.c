/*-------------------------------------------------------------------------
 *
 * rangesrc.c
 *	  In-memory and local-file byte-range sources, and the read window
 *	  over another source (see rangesrc.h).
 *
 *-------------------------------------------------------------------------
 */
#include "rangesrc.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct MemSource
{
	FstRangeSource base;
	const char *data;
	bool		owned;
} MemSource;

static FstCode
mem_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
		 FstError *err)
{
	MemSource  *m = (MemSource *) src;

	if (len)
		memcpy(buf, m->data + offset, len);
	return FST_OK;
}

static void
mem_close(FstRangeSource *src)
{
	MemSource  *m = (MemSource *) src;

	if (m->owned)
		fst_free((void *) m->data);
	fst_free(m);
}

FstRangeSource *
fst_range_source_memory(const char *data, size_t len, bool copy)
{
	MemSource  *m = fst_calloc(1, sizeof(MemSource));

	if (m == NULL)
		return NULL;
	if (copy)
	{
		char	   *p = fst_malloc(len);

		if (p == NULL)
		{
			fst_free(m);
			return NULL;
		}
		if (len)
			memcpy(p, data, len);
		data = p;
	}
	m->base.size = len;
	m->base.read = mem_read;
	m->base.close = mem_close;
	m->data = data;
	m->owned = copy;
	return &m->base;
}

typedef struct FileSource
{
	FstRangeSource base;
	int			fd;
} FileSource;

static FstCode
file_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
		  FstError *err)
{
	FileSource *f = (FileSource *) src;
	size_t		done = 0;

	while (done < len)
	{
		ssize_t		n = pread(f->fd, buf + done, len - done, (off_t) (offset + done));

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return fst_error(err, FST_IO_ERROR, "could not read file: %s",
							 strerror(errno));
		}
		if (n == 0)
			return fst_error(err, FST_CORRUPT, "file is shorter than expected");
		done += (size_t) n;
	}
	return FST_OK;
}

static void
file_close(FstRangeSource *src)
{
	FileSource *f = (FileSource *) src;

	close(f->fd);
	fst_free(f);
}

FstCode
fst_range_source_file(const char *path, FstRangeSource **out, FstError *err)
{
	FileSource *f;
	struct stat st;
	int			fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fst_error(err, errno == ENOENT ? FST_NOT_FOUND :
						 (errno == EACCES ? FST_ACCESS_DENIED : FST_IO_ERROR),
						 "could not open file \"%s\": %s", path, strerror(errno));
	if (fstat(fd, &st) != 0)
	{
		int			save = errno;

		close(fd);
		return fst_error(err, FST_IO_ERROR, "could not stat file \"%s\": %s",
						 path, strerror(save));
	}
	f = fst_calloc(1, sizeof(FileSource));
	if (f == NULL)
	{
		close(fd);
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	}
	f->base.size = (uint64) st.st_size;
	f->base.read = file_read;
	f->base.close = file_close;
	f->fd = fd;
	*out = &f->base;
	return FST_OK;
}

typedef struct WindowSource
{
	FstRangeSource base;
	FstRangeSource *inner;
	size_t		window;
	char	   *held;			/* inner's bytes [held_off, held_off + held_len) */
	size_t		held_cap;
	uint64		held_off;
	size_t		held_len;
	uint64		last_end;		/* where the previous read ended */
	int			run;			/* reads in a row, each starting where the
								 * one before it ended */
} WindowSource;

static FstCode
window_read(FstRangeSource *src, uint64 offset, size_t len, char *buf,
			FstError *err)
{
	WindowSource *w = (WindowSource *) src;
	uint64		start,
				end;
	size_t		n;
	FstCode		rc;
	bool		follows = offset == w->last_end;

	w->last_end = offset + len;
	w->run = follows ? w->run + 1 : 0;
	if (w->held_len > 0 && offset >= w->held_off &&
		offset + len <= w->held_off + w->held_len)
	{
		memcpy(buf, w->held + (offset - w->held_off), len);
		return FST_OK;
	}
	/*
	 * A window from the third block of a run: a seek that reads on into
	 * the next block only (a short range ending at a block's end) reads
	 * what it needs.
	 */
	if (w->run < 2 || len >= w->window)
		return fst_range_read(w->inner, offset, len, buf, err);

	start = offset - offset % w->window;
	end = offset + len + (w->window - (offset + len) % w->window) % w->window;
	end = Min(end, w->base.size);
	n = (size_t) (end - start);
	w->held_len = 0;
	if (n > w->held_cap)
	{
		char	   *p = fst_realloc(w->held, n);

		if (p == NULL)
			return fst_range_read(w->inner, offset, len, buf, err);
		w->held = p;
		w->held_cap = n;
	}
	rc = fst_range_read(w->inner, start, n, w->held, err);
	if (rc != FST_OK)
		return rc;
	w->held_off = start;
	w->held_len = n;
	memcpy(buf, w->held + (offset - start), len);
	return FST_OK;
}

static void
window_close(FstRangeSource *src)
{
	WindowSource *w = (WindowSource *) src;

	fst_range_close(w->inner);
	fst_free(w->held);
	fst_free(w);
}

FstRangeSource *
fst_range_source_window(FstRangeSource *inner, size_t window)
{
	WindowSource *w = fst_calloc(1, sizeof(WindowSource));

	if (w == NULL)
	{
		fst_range_close(inner);
		return NULL;
	}
	w->base.size = inner->size;
	w->base.read = window_read;
	w->base.close = window_close;
	w->inner = inner;
	w->window = Max(window, 1);
	w->last_end = PG_UINT64_MAX;	/* the first read is not "sequential" */
	return &w->base;
}
