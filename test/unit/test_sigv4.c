/*
 * test_sigv4.c — AWS Signature Version 4 and URI encoding.
 *
 * The four worked examples of the Amazon S3 API reference, "Authenticating
 * Requests: Using the Authorization Header (AWS Signature Version 4)",
 * section "Examples: Signature Calculations"
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html),
 * are reproduced byte for byte: canonical request, string to sign,
 * signature and Authorization header.  They all use
 *	  access key	AKIAIOSFODNN7EXAMPLE
 *	  secret key	wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
 *	  date			20130524T000000Z, region us-east-1, service s3
 *	  host			examplebucket.s3.amazonaws.com
 * and the published results are:
 *	  GET /test.txt, Range: bytes=0-9
 *		string to sign hash 7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
 *		signature f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41
 *	  PUT /test$file.text, "Welcome to Amazon S3.", x-amz-storage-class
 *		string to sign hash 9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d
 *		signature 98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd
 *	  GET /?lifecycle
 *		string to sign hash 9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca
 *		signature fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543
 *	  GET /?max-keys=2&prefix=J (Get Bucket, List Objects)
 *		string to sign hash df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7
 *		signature 34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7
 */
#include "unit.h"
#include "sigv4.h"

#define EX_HOST "examplebucket.s3.amazonaws.com"
#define EX_DATE "20130524T000000Z"
#define EX_CRED "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"

static const FstSigV4Key ex_key = {
	"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"us-east-1", "s3"
};

/*
 * Sign req and compare every intermediate result with the published one;
 * returns false (after recording the failure) on the first difference.
 */
static bool
check_example(const char *name, const FstSigV4Request *req,
			  const char *want_creq, const char *want_sts,
			  const char *want_sig, const char *want_auth)
{
	FstBuf		creq;
	FstBuf		sts;
	FstBuf		auth;
	FstError	err;
	char		sig[FST_SHA256_HEX_LEN + 1];
	bool		ok = false;

	fst_buf_init(&creq);
	fst_buf_init(&sts);
	fst_buf_init(&auth);
	if (fst_sigv4_canonical_request(req, &creq, NULL, &err) != FST_OK)
		fst_test_fail(__FILE__, __LINE__, "%s: %s", name, err.msg);
	else if (strcmp(creq.data, want_creq) != 0)
		fst_test_fail(__FILE__, __LINE__, "%s: canonical request\n%s\n--- expected\n%s",
					  name, creq.data, want_creq);
	else if (fst_sigv4_string_to_sign(EX_DATE, "us-east-1", "s3", creq.data,
									  &sts, &err) != FST_OK)
		fst_test_fail(__FILE__, __LINE__, "%s: %s", name, err.msg);
	else if (strcmp(sts.data, want_sts) != 0)
		fst_test_fail(__FILE__, __LINE__, "%s: string to sign\n%s\n--- expected\n%s",
					  name, sts.data, want_sts);
	else if (fst_sigv4_authorization(req, &ex_key, EX_DATE, &auth, sig,
									 &err) != FST_OK)
		fst_test_fail(__FILE__, __LINE__, "%s: %s", name, err.msg);
	else if (strcmp(sig, want_sig) != 0)
		fst_test_fail(__FILE__, __LINE__, "%s: signature %s, expected %s",
					  name, sig, want_sig);
	else if (strcmp(auth.data, want_auth) != 0)
		fst_test_fail(__FILE__, __LINE__, "%s: Authorization\n%s\n--- expected\n%s",
					  name, auth.data, want_auth);
	else
		ok = true;
	fst_buf_free(&creq);
	fst_buf_free(&sts);
	fst_buf_free(&auth);
	return ok;
}

FST_TEST(sigv4_aws_example_get_object)
{
	FstSigV4Pair h[] = {
		{"Host", EX_HOST},
		{"Range", "bytes=0-9"},
		{"x-amz-content-sha256", FST_SHA256_EMPTY},
		{"x-amz-date", EX_DATE},
	};
	FstSigV4Request req = {"GET", "/test.txt", "", h, lengthof(h),
	FST_SHA256_EMPTY};

	CHECK(check_example("GET object", &req,
						"GET\n"
						"/test.txt\n"
						"\n"
						"host:examplebucket.s3.amazonaws.com\n"
						"range:bytes=0-9\n"
						"x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
						"x-amz-date:20130524T000000Z\n"
						"\n"
						"host;range;x-amz-content-sha256;x-amz-date\n"
						"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
						"AWS4-HMAC-SHA256\n"
						"20130524T000000Z\n"
						"20130524/us-east-1/s3/aws4_request\n"
						"7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
						"f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
						EX_CRED "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
						"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"));
}

FST_TEST(sigv4_aws_example_put_object)
{
	const char *body = "Welcome to Amazon S3.";
	char		hash[FST_SHA256_HEX_LEN + 1];
	FstBuf		path;
	FstSigV4Request req;

	fst_sha256_hex(body, strlen(body), hash);
	CHECK(strcmp(hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072") == 0);
	{
		FstSigV4Pair h[] = {
			{"x-amz-storage-class", "REDUCED_REDUNDANCY"},
			{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
			{"Host", EX_HOST},
			{"x-amz-date", EX_DATE},
			{"x-amz-content-sha256", hash},
		};

		/* the key is encoded by the same function the backend uses */
		fst_buf_init(&path);
		fst_buf_putc(&path, '/');
		fst_sigv4_uri_encode(&path, "test$file.text", 14, true);
		fst_buf_putc(&path, '\0');
		req.method = "PUT";
		req.path = path.data;
		req.query = "";
		req.headers = h;
		req.nheaders = lengthof(h);
		req.payload_hash = hash;
		if (!check_example("PUT object", &req,
						   "PUT\n"
						   "/test%24file.text\n"
						   "\n"
						   "date:Fri, 24 May 2013 00:00:00 GMT\n"
						   "host:examplebucket.s3.amazonaws.com\n"
						   "x-amz-content-sha256:44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072\n"
						   "x-amz-date:20130524T000000Z\n"
						   "x-amz-storage-class:REDUCED_REDUNDANCY\n"
						   "\n"
						   "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class\n"
						   "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
						   "AWS4-HMAC-SHA256\n"
						   "20130524T000000Z\n"
						   "20130524/us-east-1/s3/aws4_request\n"
						   "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
						   "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
						   EX_CRED "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
						   "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"))
		{
			fst_buf_free(&path);
			return;
		}
		fst_buf_free(&path);
	}
}

FST_TEST(sigv4_aws_example_get_bucket_lifecycle)
{
	FstSigV4Pair q[] = {{"lifecycle", ""}};
	FstSigV4Pair h[] = {
		{"Host", EX_HOST},
		{"x-amz-date", EX_DATE},
		{"x-amz-content-sha256", FST_SHA256_EMPTY},
	};
	FstBuf		query;
	FstSigV4Request req;
	bool		ok;

	fst_buf_init(&query);
	CHECK(fst_sigv4_query(q, lengthof(q), &query));
	CHECK(strcmp(query.data, "lifecycle=") == 0);
	req.method = "GET";
	req.path = "/";
	req.query = query.data;
	req.headers = h;
	req.nheaders = lengthof(h);
	req.payload_hash = FST_SHA256_EMPTY;
	ok = check_example("GET bucket lifecycle", &req,
					   "GET\n"
					   "/\n"
					   "lifecycle=\n"
					   "host:examplebucket.s3.amazonaws.com\n"
					   "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
					   "x-amz-date:20130524T000000Z\n"
					   "\n"
					   "host;x-amz-content-sha256;x-amz-date\n"
					   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
					   "AWS4-HMAC-SHA256\n"
					   "20130524T000000Z\n"
					   "20130524/us-east-1/s3/aws4_request\n"
					   "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
					   "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
					   EX_CRED "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
					   "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
	fst_buf_free(&query);
	CHECK(ok);
}

FST_TEST(sigv4_aws_example_list_objects)
{
	/* deliberately out of order: the query is sorted */
	FstSigV4Pair q[] = {{"prefix", "J"}, {"max-keys", "2"}};
	FstSigV4Pair h[] = {
		{"x-amz-date", EX_DATE},
		{"x-amz-content-sha256", FST_SHA256_EMPTY},
		{"host", EX_HOST},
	};
	FstBuf		query;
	FstSigV4Request req;
	bool		ok;

	fst_buf_init(&query);
	CHECK(fst_sigv4_query(q, lengthof(q), &query));
	CHECK(strcmp(query.data, "max-keys=2&prefix=J") == 0);
	req.method = "GET";
	req.path = "/";
	req.query = query.data;
	req.headers = h;
	req.nheaders = lengthof(h);
	req.payload_hash = FST_SHA256_EMPTY;
	ok = check_example("Get Bucket (List Objects)", &req,
					   "GET\n"
					   "/\n"
					   "max-keys=2&prefix=J\n"
					   "host:examplebucket.s3.amazonaws.com\n"
					   "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
					   "x-amz-date:20130524T000000Z\n"
					   "\n"
					   "host;x-amz-content-sha256;x-amz-date\n"
					   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
					   "AWS4-HMAC-SHA256\n"
					   "20130524T000000Z\n"
					   "20130524/us-east-1/s3/aws4_request\n"
					   "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
					   "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
					   EX_CRED "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
					   "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
	fst_buf_free(&query);
	CHECK(ok);
}

static bool
encodes_to(const char *in, bool keep_slash, const char *want)
{
	FstBuf		b;
	bool		ok;

	fst_buf_init(&b);
	fst_sigv4_uri_encode(&b, in, strlen(in), keep_slash);
	fst_buf_putc(&b, '\0');
	ok = strcmp(b.data, want) == 0;
	if (!ok)
		fst_test_fail(__FILE__, __LINE__, "encode(\"%s\") = \"%s\", expected \"%s\"",
					  in, b.data, want);
	fst_buf_free(&b);
	return ok;
}

FST_TEST(sigv4_uri_encoding)
{
	FstSigV4Pair q[] = {
		{"start-after", "a b+c/d"},
		{"list-type", "2"},
		{"continuation-token", "x=y&z%"},
		{"delete", NULL},
	};
	FstBuf		query;
	bool		ok;

	CHECK(encodes_to("A-Z_a.z~09", false, "A-Z_a.z~09"));
	CHECK(encodes_to("a b", false, "a%20b"));
	CHECK(encodes_to("a+b", false, "a%2Bb"));
	CHECK(encodes_to("100%", false, "100%25"));
	CHECK(encodes_to("a/b", true, "a/b"));
	CHECK(encodes_to("a/b", false, "a%2Fb"));
	CHECK(encodes_to("=&?#*!'()$,;:@[]", true,
					 "%3D%26%3F%23%2A%21%27%28%29%24%2C%3B%3A%40%5B%5D"));
	/* UTF-8 bytes, upper-case hex */
	CHECK(encodes_to("\xc3\xa9t\xc3\xa9", true, "%C3%A9t%C3%A9"));
	CHECK(encodes_to("\xff", true, "%FF"));

	fst_buf_init(&query);
	ok = fst_sigv4_query(q, lengthof(q), &query);
	if (ok)
		ok = strcmp(query.data,
					"continuation-token=x%3Dy%26z%25&delete=&list-type=2&start-after=a%20b%2Bc%2Fd") == 0;
	if (!ok)
		fst_test_fail(__FILE__, __LINE__, "query: %s", query.data ? query.data : "(null)");
	fst_buf_free(&query);
}

FST_TEST(sigv4_header_canonicalization)
{
	/* names lower-cased, values trimmed and inner spaces collapsed */
	FstSigV4Pair h[] = {
		{"X-Amz-Meta-Note", "  two   words  "},
		{"Host", "h"},
		{"x-amz-date", EX_DATE},
	};
	FstSigV4Request req = {"HEAD", "/k", "", h, lengthof(h), FST_SHA256_EMPTY};
	FstBuf		creq;
	FstBuf		sh;
	FstError	err;
	bool		ok;

	fst_buf_init(&creq);
	fst_buf_init(&sh);
	CHECK_OK(fst_sigv4_canonical_request(&req, &creq, &sh, &err), &err);
	ok = strcmp(creq.data,
				"HEAD\n/k\n\nhost:h\nx-amz-date:20130524T000000Z\n"
				"x-amz-meta-note:two words\n\n"
				"host;x-amz-date;x-amz-meta-note\n" FST_SHA256_EMPTY) == 0 &&
		strcmp(sh.data, "host;x-amz-date;x-amz-meta-note") == 0;
	if (!ok)
		fst_test_fail(__FILE__, __LINE__, "canonical request:\n%s", creq.data);
	fst_buf_free(&creq);
	fst_buf_free(&sh);
}

FST_TEST(sigv4_digests)
{
	char		b64[25];
	char		hex[33];
	char		date[FST_AMZ_DATE_LEN + 1];
	char		sha[FST_SHA256_HEX_LEN + 1];

	/* RFC 1321 test vector; base64 of the same 16 bytes */
	fst_md5_hex("abc", 3, hex);
	CHECK(strcmp(hex, "900150983cd24fb0d6963f7d28e17f72") == 0);
	fst_md5_base64("abc", 3, b64);
	CHECK(strcmp(b64, "kAFQmDzST7DWlj99KOF/cg==") == 0);
	memset(b64, 0, sizeof(b64));
	memset(hex, 0, sizeof(hex));
	fst_md5_base64_hex("abc", 3, b64, hex);
	CHECK(strcmp(hex, "900150983cd24fb0d6963f7d28e17f72") == 0);
	CHECK(strcmp(b64, "kAFQmDzST7DWlj99KOF/cg==") == 0);
	fst_sha256_hex("", 0, sha);
	CHECK(strcmp(sha, FST_SHA256_EMPTY) == 0);
	fst_sigv4_amz_date(1369353600, date);	/* 2013-05-24 00:00:00 UTC */
	CHECK(strcmp(date, EX_DATE) == 0);
}
