/*
 * gen_corpus.c — writes the seed corpus of fuzz_sst: small valid SST files
 * (compressed and not, with and without filter, empty), each prefixed with
 * the fuzz target's mode byte.  Run by "make fuzz-corpus"; the output is
 * checked in under test/fuzz/corpus/sst.
 */
#include "sst.h"

#include <stdio.h>

static void
write_seed(const char *dir, const char *name, int nkeys, int compression,
		   int bloom_bits, size_t block_size)
{
	FstSstOptions o;
	FstBuf		file;
	FstBufSink	sink;
	FstSstWriter *w;
	FstError	err;
	char		path[512];
	FILE	   *f;
	int			i;

	fst_sst_options_default(&o);
	o.compression = compression;
	o.bloom_bits_per_key = bloom_bits;
	o.block_size = block_size;
	fst_buf_init(&file);
	fst_buf_putc(&file, 0);		/* mode byte: verify checksums */
	fst_buf_sink_init(&sink, &file);
	if (fst_sst_writer_create(&o, &sink.base, &w, &err) != FST_OK)
		exit(1);
	for (i = 0; i < nkeys; i++)
	{
		char		k[64],
					v[64];
		char		ukey[16];
		int			ul = snprintf(ukey, sizeof(ukey), "k%05d", i);
		size_t		kl = fst_ikey_build(k, (uint16) (i / 10), ukey, ul, 1000 - i);

		fst_entry_header_encode(v, (i % 5 == 0) ? FST_ENTRY_COMMITTED | FST_ENTRY_TOMBSTONE :
								FST_ENTRY_COMMITTED, 100 + i, 0);
		memset(v + FST_ENTRY_HEADER_SIZE, 'a' + i % 26, 20);
		if (fst_sst_writer_add(w, fst_slice(k, kl),
							   fst_slice(v, FST_ENTRY_HEADER_SIZE + (i % 5 == 0 ? 0 : 20)),
							   &err) != FST_OK)
			exit(1);
		if (i % 3 == 0)
			fst_sst_writer_note_ttl(w, i * 1000);
	}
	if (fst_sst_writer_finish(w, NULL, &err) != FST_OK)
		exit(1);
	fst_sst_writer_destroy(w);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(file.data, 1, file.len, f) != file.len || fclose(f) != 0)
		exit(1);
	/* the same file in no-checksum mode */
	file.data[0] = 1;
	snprintf(path, sizeof(path), "%s/%s-nocrc", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(file.data, 1, file.len, f) != file.len || fclose(f) != 0)
		exit(1);
	fst_buf_free(&file);
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "test/fuzz/corpus/sst";

	write_seed(dir, "empty", 0, FST_COMPRESS_LZ4, 10, 4096);
	write_seed(dir, "small-lz4", 40, FST_COMPRESS_LZ4, 10, 256);
	write_seed(dir, "small-zstd", 40, FST_COMPRESS_ZSTD, 10, 256);
	write_seed(dir, "small-plain", 40, FST_COMPRESS_NONE, 10, 256);
	write_seed(dir, "nofilter", 30, FST_COMPRESS_NONE, 0, 300);
	write_seed(dir, "one-block", 12, FST_COMPRESS_LZ4, 8, 8192);
	return 0;
}
