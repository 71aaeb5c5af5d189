/*-------------------------------------------------------------------------
 *
 * dc_entry.c
 *	  Entry files of the disk cache: their names, their header, writing
 *	  one (through the index, so that the bound holds) and reading one
 *	  back with every check (see diskcache.h for the format).
 *
 *-------------------------------------------------------------------------
 */
#include "dc_internal.h"
#include "coding.h"

#include "common/hashfn.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

uint64
dc_hash_key(const char *key, size_t len)
{
	return hash_bytes_extended((const unsigned char *) key, (int) len, 0);
}

void
dc_path(const FstDiskCache *c, uint64 hash, uint64 chunk, char *path,
		size_t pathlen)
{
	snprintf(path, pathlen, "%s/%02x/%016llx.%llx", c->dir,
			 (unsigned) (hash >> 56), (unsigned long long) hash,
			 (unsigned long long) chunk);
}

/* Parses "<16 hex>.<hex>"; false for any other name. */
bool
dc_parse_entry_name(const char *name, uint64 *hash, uint64 *chunk)
{
	char	   *end;
	int			i;

	for (i = 0; i < 16; i++)
		if (!isxdigit((unsigned char) name[i]) || isupper((unsigned char) name[i]))
			return false;
	if (name[16] != '.' || !isxdigit((unsigned char) name[17]))
		return false;
	*hash = strtoull(name, NULL, 16);
	errno = 0;
	*chunk = strtoull(name + 17, &end, 16);
	return *end == '\0' && errno == 0;
}

bool
dc_grow_buf(char **buf, size_t *cap, size_t need)
{
	char	   *p;

	if (*cap >= need)
		return true;
	p = fst_realloc(*buf, need);
	if (p == NULL)
		return false;
	*buf = p;
	*cap = need;
	return true;
}

ssize_t
dc_pread_all(int fd, char *buf, size_t len, off_t off)
{
	size_t		done = 0;

	while (done < len)
	{
		ssize_t		n = pread(fd, buf + done, len - done, off + done);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += n;
	}
	return (ssize_t) done;
}

void
dc_unlink_entry(void *arg, uint64 hash, uint64 chunk)
{
	char		path[DC_PATH_MAX];

	dc_path((FstDiskCache *) arg, hash, chunk, path, sizeof(path));
	(void) unlink(path);
}

static void
encode_header(char *h, const char *key, size_t keylen, uint64 object_size,
			  uint64 chunk, uint32 chunk_size, const char *payload,
			  size_t plen)
{
	uint32		crc;

	memcpy(h, DC_MAGIC, 8);
	fst_put_fixed32(h + 8, DC_VERSION);
	fst_put_fixed32(h + 12, (uint32) keylen);
	fst_put_fixed64(h + 16, object_size);
	fst_put_fixed64(h + 24, chunk);
	fst_put_fixed32(h + 32, chunk_size);
	fst_put_fixed32(h + 36, (uint32) plen);
	fst_put_fixed32(h + 40, fst_crc32c(payload, plen));
	crc = fst_crc32c(h, 44);
	crc = fst_crc32c_extend(crc, key, keylen);
	fst_put_fixed32(h + 44, crc);
}

/* Checks a header alone (and the key bytes after it); payload not read. */
bool
dc_header_valid(const char *h, const char *key_bytes, uint32 chunk_size)
{
	uint32		keylen;
	uint32		crc;

	if (memcmp(h, DC_MAGIC, 8) != 0 || fst_get_fixed32(h + 8) != DC_VERSION)
		return false;
	keylen = fst_get_fixed32(h + 12);
	if (keylen == 0 || keylen > DC_KEY_MAX)
		return false;
	if (fst_get_fixed32(h + 32) != chunk_size)
		return false;
	crc = fst_crc32c(h, 44);
	crc = fst_crc32c_extend(crc, key_bytes, keylen);
	return crc == fst_get_fixed32(h + 44);
}

/* Write the file of an entry to tmp, whole; false on any failure. */
static bool
write_file(const char *tmp, const char *hdr, const char *key, size_t keylen,
		   const char *payload, size_t plen)
{
	struct iovec iov[3];
	size_t		bytes = DC_HDR + keylen + plen;
	size_t		total = 0;
	int			fd;

	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	iov[0].iov_base = (void *) hdr;
	iov[0].iov_len = DC_HDR;
	iov[1].iov_base = (void *) key;
	iov[1].iov_len = keylen;
	iov[2].iov_base = (void *) payload;
	iov[2].iov_len = plen;
	while (total < bytes)
	{
		struct iovec v[3];
		size_t		skip = total;
		int			nv = 0;
		int			i;
		ssize_t		n;

		for (i = 0; i < 3; i++)
		{
			if (skip >= iov[i].iov_len)
			{
				skip -= iov[i].iov_len;
				continue;
			}
			v[nv].iov_base = (char *) iov[i].iov_base + skip;
			v[nv].iov_len = iov[i].iov_len - skip;
			skip = 0;
			nv++;
		}
		n = writev(fd, v, nv);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	if (close(fd) != 0 || total != bytes)
	{
		(void) unlink(tmp);
		return false;
	}
	return true;
}

bool
dc_write_entry(FstDiskCache *c, const char *key, size_t keylen, uint64 hash,
			   uint64 object_size, uint64 chunk, const char *payload,
			   size_t plen)
{
	DcIndex    *idx = c->idx;
	char		hdr[DC_HDR];
	char		path[DC_PATH_MAX];
	char		tmp[DC_PATH_MAX];
	uint64		bytes = dc_accounted(c, DC_HDR + keylen + plen);
	int32		slot;
	bool		ok;

	if (plen > UINT32_MAX || bytes > idx->capacity ||
		!__atomic_load_n(&idx->ready, __ATOMIC_ACQUIRE))
		return false;

	/*
	 * Reserve the bytes before the file exists, evicting as needed: the
	 * directory, temp files included, never holds more than the capacity.
	 * An entry that is already there (or being written by another
	 * process) is left alone: objects are immutable, it holds these bytes.
	 */
	dc_lock(c, true);
	if (dc_index_find(idx, hash, chunk) >= 0)
		slot = -1;
	else
		slot = dc_index_reserve(idx, hash, chunk, bytes, dc_unlink_entry, c);
	dc_unlock(c);
	if (slot < 0)
		return false;

	encode_header(hdr, key, keylen, object_size, chunk, c->opt.chunk_size,
				  payload, plen);
	snprintf(tmp, sizeof(tmp), "%s/%02x/.tmp.%d.%llu", c->dir,
			 (unsigned) (hash >> 56), (int) getpid(),
			 (unsigned long long) ++c->tmp_counter);
	dc_path(c, hash, chunk, path, sizeof(path));
	ok = write_file(tmp, hdr, key, keylen, payload, plen);
	if (ok && rename(tmp, path) != 0)
	{
		(void) unlink(tmp);
		ok = false;
	}

	dc_lock(c, true);
	if (ok)
		dc_index_publish(idx, slot, false);
	else
		dc_index_remove(idx, slot);
	dc_unlock(c);
	if (ok)
	{
		dc_count(idx, DC_ADMISSIONS, 1);
		dc_count(idx, DC_BYTES_ADMITTED, plen);
	}
	else
		dc_count(idx, DC_WRITE_ERRORS, 1);
	return ok;
}

DcLookup
dc_read_entry(FstDiskCache *c, const char *key, size_t keylen, uint64 hash,
			  uint64 object_size, uint64 chunk, size_t plen, char **scratch,
			  size_t *scratch_cap)
{
	char		path[DC_PATH_MAX];
	size_t		need = DC_HDR + keylen + plen;
	struct stat st;
	const char *h;
	int			fd;
	ssize_t		n;

	if (!dc_grow_buf(scratch, scratch_cap, need))
		return DC_LOOKUP_MISS;
	dc_path(c, hash, chunk, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return DC_LOOKUP_MISS;	/* absent, or evicted under us */
	if (fstat(fd, &st) != 0)
	{
		close(fd);
		return DC_LOOKUP_MISS;
	}
	if ((uint64) st.st_size != need)
	{
		/*
		 * Either truncated/extended, or the entry of a colliding key
		 * (different key length): read its header to tell.
		 */
		char		hk[DC_HDR + DC_KEY_MAX];

		n = dc_pread_all(fd, hk, sizeof(hk), 0);
		close(fd);
		if (n >= DC_HDR && fst_get_fixed32(hk + 12) <= DC_KEY_MAX &&
			(size_t) n >= DC_HDR + fst_get_fixed32(hk + 12) &&
			dc_header_valid(hk, hk + DC_HDR, c->opt.chunk_size) &&
			(fst_get_fixed32(hk + 12) != keylen ||
			 memcmp(hk + DC_HDR, key, keylen) != 0))
			return DC_LOOKUP_MISS;	/* a colliding key's entry */
		return DC_LOOKUP_CORRUPT;
	}
	n = dc_pread_all(fd, *scratch, need, 0);
	close(fd);
	if (n < 0 || (size_t) n != need)
		return DC_LOOKUP_CORRUPT;
	h = *scratch;
	if (fst_get_fixed32(h + 12) != keylen ||
		!dc_header_valid(h, h + DC_HDR, c->opt.chunk_size))
		return DC_LOOKUP_CORRUPT;
	if (memcmp(h + DC_HDR, key, keylen) != 0)
		return DC_LOOKUP_MISS;	/* a colliding key's entry */
	if (fst_get_fixed64(h + 16) != object_size ||
		fst_get_fixed64(h + 24) != chunk ||
		fst_get_fixed32(h + 36) != plen ||
		fst_crc32c(h + DC_HDR + keylen, plen) != fst_get_fixed32(h + 40))
		return DC_LOOKUP_CORRUPT;
	return DC_LOOKUP_HIT;
}
