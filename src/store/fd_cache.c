/*-------------------------------------------------------------------------
 *
 * fd_cache.c
 *	  A small LRU of read-only file descriptors (see fd_cache.h).
 *
 * A linear array: capacities are a few dozen, and a lookup's string
 * compares cost far less than the open() and fstat() they save.
 *
 *-------------------------------------------------------------------------
 */
#include "fd_cache.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How often a cached descriptor is checked for a deleted file (seconds). */
#define FD_RECHECK_SECONDS 1

typedef struct FdSlot
{
	char	   *path;			/* NULL: free */
	int			fd;
	uint64		size;
	uint64		used;			/* tick of the last use */
	time_t		checked;		/* when it was last seen linked */
} FdSlot;

struct FstFdCache
{
	int			capacity;
	uint64		tick;
	FdSlot	   *slots;
};

FstFdCache *
fst_fd_cache_create(int capacity)
{
	FstFdCache *c = fst_calloc(1, sizeof(FstFdCache));

	if (c == NULL)
		return NULL;
	c->capacity = capacity < 1 ? 1 : capacity;
	c->slots = fst_calloc(c->capacity, sizeof(FdSlot));
	if (c->slots == NULL)
	{
		fst_free(c);
		return NULL;
	}
	return c;
}

static void
slot_clear(FdSlot *s)
{
	if (s->path != NULL)
	{
		close(s->fd);
		fst_free(s->path);
		s->path = NULL;
	}
}

void
fst_fd_cache_destroy(FstFdCache *c)
{
	int			i;

	if (c == NULL)
		return;
	for (i = 0; i < c->capacity; i++)
		slot_clear(&c->slots[i]);
	fst_free(c->slots);
	fst_free(c);
}

static FdSlot *
find(FstFdCache *c, const char *path)
{
	int			i;

	for (i = 0; i < c->capacity; i++)
		if (c->slots[i].path != NULL && strcmp(c->slots[i].path, path) == 0)
			return &c->slots[i];
	return NULL;
}

static time_t
now_coarse(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return 0;
	return ts.tv_sec;
}

bool
fst_fd_cache_lookup(FstFdCache *c, const char *path, int *fd, uint64 *size)
{
	FdSlot	   *s = find(c, path);
	time_t		now;

	if (s == NULL)
		return false;

	/*
	 * A deleted file's space stays in use while it is open: a file deleted
	 * meanwhile (garbage collection) is let go, and the caller's reopen
	 * finds it gone.
	 */
	now = now_coarse();
	if (now - s->checked >= FD_RECHECK_SECONDS)
	{
		struct stat st;

		if (fstat(s->fd, &st) != 0 || st.st_nlink == 0)
		{
			slot_clear(s);
			return false;
		}
		s->checked = now;
	}
	s->used = ++c->tick;
	*fd = s->fd;
	*size = s->size;
	return true;
}

void
fst_fd_cache_insert(FstFdCache *c, const char *path, int fd, uint64 size)
{
	FdSlot	   *victim = find(c, path);
	size_t		len = strlen(path);
	int			i;

	if (victim == NULL)
	{
		victim = &c->slots[0];
		for (i = 0; i < c->capacity; i++)
		{
			if (c->slots[i].path == NULL)
			{
				victim = &c->slots[i];
				break;
			}
			if (c->slots[i].used < victim->used)
				victim = &c->slots[i];
		}
	}
	slot_clear(victim);
	victim->path = fst_malloc(len + 1);
	if (victim->path == NULL)
	{
		close(fd);
		return;
	}
	memcpy(victim->path, path, len + 1);
	victim->fd = fd;
	victim->size = size;
	victim->used = ++c->tick;
	victim->checked = now_coarse();
}

void
fst_fd_cache_forget(FstFdCache *c, const char *path)
{
	FdSlot	   *s = find(c, path);

	if (s != NULL)
		slot_clear(s);
}
