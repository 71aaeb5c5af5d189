/*
 * test_rangesrc.c — the read window over another range source.
 */
#include "unit.h"
#include "rangesrc.h"

#define WIN_DATA_LEN 10000

static void
fill_pattern(char *data, size_t len)
{
	size_t		i;

	for (i = 0; i < len; i++)
		data[i] = (char) (i * 131 + i / 7);
}

FST_TEST(rangesrc_window_sequential_reads_fetch_whole_windows)
{
	static char data[WIN_DATA_LEN];
	char		buf[700];
	FstRangeSource *inner;
	FstRangeSource *w;
	FstError	err;
	uint64		off = 0;

	fill_pattern(data, sizeof(data));
	inner = fst_range_source_memory(data, sizeof(data), false);
	w = fst_range_source_window(inner, 1024);
	CHECK(w != NULL);
	CHECK(w->size == sizeof(data));

	/* consecutive blocks of 300 bytes, to the very end */
	while (off < sizeof(data))
	{
		size_t		len = (size_t) Min(300, sizeof(data) - off);

		memset(buf, 0, sizeof(buf));
		CHECK_OK(fst_range_read(w, off, len, buf, &err), &err);
		CHECK(memcmp(buf, data + off, len) == 0);
		off += len;
	}
	/*
	 * The first two reads go through alone; then each window of 1024 bytes
	 * is read once (a block crossing into the next window reads both).
	 */
	CHECK_MSG(inner->reads <= 2 + (sizeof(data) + 1023) / 1024 + 1,
			  "%llu inner reads", (unsigned long long) inner->reads);
	CHECK(inner->reads >= 5);

	/* what is held still reads right after a jump away and back */
	CHECK_OK(fst_range_read(w, 17, 5, buf, &err), &err);
	CHECK(memcmp(buf, data + 17, 5) == 0);
	fst_range_close(w);
}

FST_TEST(rangesrc_window_random_reads_go_straight_through)
{
	static char data[WIN_DATA_LEN];
	char		buf[2100];
	FstRangeSource *inner;
	FstRangeSource *w;
	FstError	err;
	uint64		offs[] = {5000, 100, 9000, 2000, 7777};
	uint64		before;
	int			i;

	fill_pattern(data, sizeof(data));
	inner = fst_range_source_memory(data, sizeof(data), false);
	w = fst_range_source_window(inner, 1024);
	CHECK(w != NULL);
	for (i = 0; i < (int) lengthof(offs); i++)
	{
		CHECK_OK(fst_range_read(w, offs[i], 200, buf, &err), &err);
		CHECK(memcmp(buf, data + offs[i], 200) == 0);
		/* exactly the bytes asked for: no window around a random read */
		CHECK(inner->bytes_read == (uint64) (i + 1) * 200);
	}
	/* a read on into the next block is exact too; the third one is not */
	before = inner->bytes_read;
	CHECK_OK(fst_range_read(w, 3000, 200, buf, &err), &err);
	CHECK_OK(fst_range_read(w, 3200, 200, buf, &err), &err);
	CHECK(memcmp(buf, data + 3200, 200) == 0);
	CHECK(inner->bytes_read == before + 400);
	CHECK_OK(fst_range_read(w, 3400, 200, buf, &err), &err);
	CHECK(memcmp(buf, data + 3400, 200) == 0);
	CHECK(inner->bytes_read == before + 400 + 1024);
	/* a sequential read as large as the window also goes straight through */
	before = inner->bytes_read;
	CHECK_OK(fst_range_read(w, 7977, 2000, buf, &err), &err);
	CHECK(memcmp(buf, data + 7977, 2000) == 0);
	CHECK(inner->bytes_read == before + 2000);
	/* reads past the end are refused, as by any source */
	CHECK(fst_range_read(w, 9990, 20, buf, &err) == FST_CORRUPT);
	fst_range_close(w);
}
