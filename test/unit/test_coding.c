/*
 * test_coding.c — varints, fixed-width integers, CRC masking, internal keys.
 */
#include "unit.h"
#include "ikey.h"

FST_TEST(coding_varint_roundtrip)
{
	uint64		vals[] = {0, 1, 127, 128, 255, 300, 16383, 16384,
		PG_UINT32_MAX, (uint64) PG_UINT32_MAX + 1, PG_UINT64_MAX};
	int			i;

	for (i = 0; i < (int) lengthof(vals); i++)
	{
		char		buf[FST_MAX_VARINT64];
		int			n = fst_encode_varint64(buf, vals[i]);
		const char *p = buf;
		uint64		out;

		CHECK_EQ_INT(n, fst_varint_length(vals[i]));
		CHECK(fst_decode_varint64(&p, buf + n, &out));
		CHECK(out == vals[i]);
		CHECK(p == buf + n);
		/* every truncation is refused */
		p = buf;
		CHECK(n == 1 || !fst_decode_varint64(&p, buf + n - 1, &out));
	}
}

FST_TEST(coding_varint_rejects_overlong)
{
	char		buf[11];
	const char *p = buf;
	uint64		out;

	memset(buf, 0xff, sizeof(buf));
	CHECK(!fst_decode_varint64(&p, buf + sizeof(buf), &out));
	/* 10th byte may only hold one bit */
	memset(buf, 0x80, 9);
	buf[9] = 0x02;
	p = buf;
	CHECK(!fst_decode_varint64(&p, buf + 10, &out));
	buf[9] = 0x01;
	p = buf;
	CHECK(fst_decode_varint64(&p, buf + 10, &out));
	CHECK(out == (UINT64CONST(1) << 63));
}

FST_TEST(coding_reader_bounds)
{
	FstBuf		b;
	FstReader	r;
	FstSlice	s;
	uint64		v;

	fst_buf_init(&b);
	fst_buf_put_varint(&b, 42);
	fst_buf_put_lenbytes(&b, "hello", 5);
	fst_reader_init(&r, b.data, b.len);
	CHECK(fst_get_varint(&r, &v) && v == 42);
	CHECK(fst_get_lenbytes(&r, &s) && s.len == 5 && memcmp(s.data, "hello", 5) == 0);
	CHECK(fst_reader_left(&r) == 0);
	CHECK(!fst_get_varint(&r, &v));
	CHECK(r.bad);
	/* a length that points past the end is refused */
	fst_reader_init(&r, b.data + 1, b.len - 2);
	CHECK(!fst_get_lenbytes(&r, &s));
	fst_buf_free(&b);
}

FST_TEST(coding_crc_known_value)
{
	/* CRC-32C("123456789") = 0xE3069283 (RFC 3720 check value) */
	CHECK(fst_crc32c("123456789", 9) == 0xE3069283U);
	CHECK(fst_crc32c_extend(fst_crc32c("1234", 4), "56789", 5) == 0xE3069283U);
	CHECK(fst_crc_unmask(fst_crc_mask(0xE3069283U)) == 0xE3069283U);
	CHECK(fst_crc_mask(0xE3069283U) != 0xE3069283U);
}

FST_TEST(ikey_order)
{
	char		a[32],
				b[32];
	size_t		la,
				lb;

	/* key group dominates */
	la = fst_ikey_build(a, 1, "zzz", 3, 5);
	lb = fst_ikey_build(b, 2, "aaa", 3, 5);
	CHECK(fst_ikey_cmp(fst_slice(a, la), fst_slice(b, lb)) < 0);
	/* a proper prefix sorts first, whatever the sequence */
	la = fst_ikey_build(a, 1, "ab", 2, 0);
	lb = fst_ikey_build(b, 1, "abc", 3, PG_UINT64_MAX);
	CHECK(fst_ikey_cmp(fst_slice(a, la), fst_slice(b, lb)) < 0);
	/* same user key: newer first */
	la = fst_ikey_build(a, 1, "k", 1, 10);
	lb = fst_ikey_build(b, 1, "k", 1, 9);
	CHECK(fst_ikey_cmp(fst_slice(a, la), fst_slice(b, lb)) < 0);
	CHECK(fst_ikey_cmp(fst_slice(a, la), fst_slice(a, la)) == 0);
	CHECK(fst_ikey_seq(fst_slice(a, la)) == 10);
	CHECK(fst_ikey_key_group(fst_slice(a, la)) == 1);
}

FST_TEST(entry_decode_rejects_unknown_flags)
{
	char		k[16],
				v[FST_ENTRY_HEADER_SIZE + 3];
	size_t		kl = fst_ikey_build(k, 7, "key", 3, 99);
	FstEntry	e;

	fst_entry_header_encode(v, FST_ENTRY_COMMITTED, 1234, 5);
	memcpy(v + FST_ENTRY_HEADER_SIZE, "row", 3);
	CHECK(fst_entry_decode(fst_slice(k, kl), fst_slice(v, sizeof(v)), &e));
	CHECK(e.hdr.seq == 99 && e.hdr.xid == 1234 && e.hdr.cid == 5);
	CHECK(e.key_group == 7 && e.user_key.len == 3 && e.payload.len == 3);
	v[0] = (char) 0x80;
	CHECK(!fst_entry_decode(fst_slice(k, kl), fst_slice(v, sizeof(v)), &e));
	CHECK(!fst_entry_decode(fst_slice(k, 9), fst_slice(v, sizeof(v)), &e));
}
