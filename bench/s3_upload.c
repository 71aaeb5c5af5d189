/*
 * bench/s3_upload.c -- upload throughput of forst's object store
 * (src/store/objstore_s3.c, the code path of flushes and compactions): puts
 * every regular file of a directory, one after the other as forst's flush
 * worker does, and prints the MB/s.  bench/s3_upload.sh runs it next to
 * `aws s3 cp` of the same files to the same server.
 *
 *	make bench-s3-upload && build/bench_s3_upload URL DIR [--if-absent]
 *
 * URL is a store URL as forst's tests use them, e.g.
 * s3://bucket/prefix?endpoint=http://127.0.0.1:54420 (credentials from
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY); each file goes to
 * <prefix>/<file name>.  --if-absent uploads with create-if-absent, as
 * flushes do (a single PUT with If-None-Match: *, whatever the size);
 * otherwise plain puts (multipart from forst.s3_multipart_threshold on, as
 * compaction output).  Files are read into memory before the clock starts.
 * Output, one line:
 *	files N bytes B seconds S MB/s M
 */
#include "fst_common.h"
#include "objstore.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct UpFile
{
	char		name[256];
	char	   *data;
	size_t		len;
} UpFile;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(((const UpFile *) a)->name, ((const UpFile *) b)->name);
}

/* Reads path whole into *f; false on failure (reported). */
static bool
load_file(const char *path, UpFile *f)
{
	FILE	   *fp = fopen(path, "rb");
	struct stat st;

	if (fp == NULL || fstat(fileno(fp), &st) != 0)
	{
		perror(path);
		if (fp)
			fclose(fp);
		return false;
	}
	f->len = (size_t) st.st_size;
	f->data = malloc(f->len ? f->len : 1);
	if (f->data == NULL || fread(f->data, 1, f->len, fp) != f->len)
	{
		fprintf(stderr, "%s: cannot read\n", path);
		fclose(fp);
		return false;
	}
	fclose(fp);
	return true;
}

int
main(int argc, char **argv)
{
	const char *url;
	const char *dir;
	bool		if_absent = false;
	DIR		   *d;
	struct dirent *de;
	UpFile	   *files = NULL;
	int			nfiles = 0;
	int			cap = 0;
	uint64		bytes = 0;
	FstObjStore *store;
	FstError	err;
	double		t0,
				secs;
	int			i;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--if-absent") != 0))
	{
		fprintf(stderr, "usage: %s URL DIR [--if-absent]\n", argv[0]);
		return 2;
	}
	url = argv[1];
	dir = argv[2];
	if_absent = argc == 4;

	d = opendir(dir);
	if (d == NULL)
	{
		perror(dir);
		return 1;
	}
	while ((de = readdir(d)) != NULL)
	{
		char		path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (strlen(de->d_name) >= sizeof(files[0].name))
			continue;
		if (nfiles == cap)
		{
			cap = cap ? 2 * cap : 64;
			files = realloc(files, sizeof(UpFile) * cap);
			if (files == NULL)
			{
				fprintf(stderr, "out of memory\n");
				return 1;
			}
		}
		strcpy(files[nfiles].name, de->d_name);
		if (!load_file(path, &files[nfiles]))
			return 1;
		bytes += files[nfiles].len;
		nfiles++;
	}
	closedir(d);
	if (nfiles == 0)
	{
		fprintf(stderr, "%s: no files\n", dir);
		return 1;
	}
	qsort(files, nfiles, sizeof(UpFile), cmp_name);

	if (fst_objstore_open(url, &store, &err) != FST_OK)
	{
		fprintf(stderr, "opening %s: %s\n", url, err.msg);
		return 1;
	}
	t0 = now_s();
	for (i = 0; i < nfiles; i++)
	{
		FstCode		rc;

		rc = if_absent
			? fst_objstore_put_if_absent(store, files[i].name, files[i].data,
										 files[i].len, &err)
			: fst_objstore_put(store, files[i].name, files[i].data,
							   files[i].len, &err);
		if (rc != FST_OK)
		{
			fprintf(stderr, "uploading %s: %s\n", files[i].name, err.msg);
			return 1;
		}
	}
	secs = now_s() - t0;
	printf("files %d bytes " UINT64_FORMAT " seconds %.3f MB/s %.1f\n",
		   nfiles, bytes, secs, bytes / 1e6 / secs);
	fst_objstore_close(store);
	for (i = 0; i < nfiles; i++)
		free(files[i].data);
	free(files);
	return 0;
}
