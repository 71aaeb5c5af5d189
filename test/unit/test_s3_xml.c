/*
 * test_s3_xml.c — parsing S3's XML replies (s3_xml.c) from canned
 * documents: error bodies, ListObjectsV2, DeleteObjects, multipart
 * upload replies, and malformed or hostile XML, which must be FST_CORRUPT.
 */
#include "unit.h"
#include "s3_internal.h"

#define NS "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\""

static FstCode
parse_error(const char *doc, char *code, char *msg, FstError *err)
{
	return s3_xml_error(doc, strlen(doc), code, 64, msg, 160, err);
}

FST_TEST(s3xml_error_bodies)
{
	char		code[64];
	char		msg[160];
	FstError	err;

	CHECK_OK(parse_error("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
						 "<Error><Code>NoSuchKey</Code>"
						 "<Message>The resource you requested does not exist</Message>"
						 "<Resource>/mybucket/myfoto.jpg</Resource>"
						 "<RequestId>4442587FB7D0A2F9</RequestId></Error>",
						 code, msg, &err), &err);
	CHECK(strcmp(code, "NoSuchKey") == 0);
	CHECK(strcmp(msg, "The resource you requested does not exist") == 0);

	/* escaped text; a long message is truncated, not overflowed */
	CHECK_OK(parse_error("<Error><Code>SlowDown</Code><Message>a &lt;b&gt; &amp; "
						 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
						 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
						 "</Message></Error>", code, msg, &err), &err);
	CHECK(strcmp(code, "SlowDown") == 0);
	CHECK(strncmp(msg, "a <b> & xxx", 11) == 0 && strlen(msg) == 159);

	/* malformed or unexpected documents */
	CHECK(parse_error("<Error><Code>Slow", code, msg, &err) == FST_CORRUPT);
	CHECK(strstr(err.msg, "malformed XML") != NULL);
	CHECK(parse_error("not xml at all", code, msg, &err) == FST_CORRUPT);
	CHECK(parse_error("", code, msg, &err) == FST_CORRUPT);
	CHECK(parse_error("<Foo><Code>X</Code></Foo>", code, msg, &err) == FST_CORRUPT);
	CHECK(parse_error("<Error><Message>m</Message></Error>", code, msg, &err) == FST_CORRUPT);

	/* external entities are never loaded, internal ones never expanded */
	CHECK(parse_error("<!DOCTYPE e [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
					  "<Error><Code>&x;</Code></Error>", code, msg, &err) == FST_CORRUPT);
	CHECK(strstr(code, "root") == NULL);
}

FST_TEST(s3xml_list_bucket_result)
{
	const char *doc =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<ListBucketResult " NS ">"
		"<Name>bucket</Name><Prefix>p/</Prefix><KeyCount>3</KeyCount>"
		"<MaxKeys>3</MaxKeys><IsTruncated>true</IsTruncated>"
		"<Contents><Key>p/a</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>"
		"<ETag>\"fba9dede5f27731c9771645a39863328\"</ETag><Size>434234</Size>"
		"<StorageClass>STANDARD</StorageClass></Contents>"
		"<Contents><Key>p/b&amp;c</Key><Size>0</Size></Contents>"
		"<Contents><Key>p/\xc3\xa9</Key><Size>18446744073709551615</Size></Contents>"
		"<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>"
		"</ListBucketResult>";
	S3ListPage	page;
	FstError	err;

	CHECK_OK(s3_xml_list(doc, strlen(doc), &page, &err), &err);
	CHECK_EQ_INT(page.nentries, 3);
	CHECK(strcmp(page.entries[0].key, "p/a") == 0 && page.entries[0].size == 434234);
	CHECK(strcmp(page.entries[1].key, "p/b&c") == 0 && page.entries[1].size == 0);
	CHECK(strcmp(page.entries[2].key, "p/\xc3\xa9") == 0);
	CHECK(page.entries[2].size == UINT64CONST(18446744073709551615));
	CHECK(page.truncated);
	CHECK(strcmp(page.next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=") == 0);
	s3_list_page_free(&page);

	/* an empty, complete listing */
	doc = "<ListBucketResult><Name>b</Name><KeyCount>0</KeyCount>"
		"<IsTruncated>false</IsTruncated></ListBucketResult>";
	CHECK_OK(s3_xml_list(doc, strlen(doc), &page, &err), &err);
	CHECK(page.nentries == 0 && !page.truncated && page.next_token == NULL);
	s3_list_page_free(&page);

	/* broken ones */
	doc = "<ListBucketResult><Contents><Key>a</Key><Size>12x</Size></Contents></ListBucketResult>";
	CHECK(s3_xml_list(doc, strlen(doc), &page, &err) == FST_CORRUPT);
	doc = "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>";
	CHECK(s3_xml_list(doc, strlen(doc), &page, &err) == FST_CORRUPT);
	doc = "<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents></ListBucketResult>";
	CHECK(s3_xml_list(doc, strlen(doc), &page, &err) == FST_CORRUPT);
	doc = "<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>";
	CHECK(s3_xml_list(doc, strlen(doc), &page, &err) == FST_CORRUPT);
	doc = "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>";
	CHECK(s3_xml_list(doc, strlen(doc), &page, &err) == FST_CORRUPT);
	doc = "<Error><Code>NoSuchBucket</Code></Error>";
	CHECK(s3_xml_list(doc, strlen(doc), &page, &err) == FST_CORRUPT);
	doc = "<ListBucketResult><Contents><Key>a</Key>";
	CHECK(s3_xml_list(doc, strlen(doc), &page, &err) == FST_CORRUPT);
	CHECK(page.entries == NULL && page.nentries == 0);
}

FST_TEST(s3xml_delete_result)
{
	const char *doc =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
		"<DeleteResult " NS ">"
		"<Deleted><Key>p/sample1.txt</Key></Deleted>"
		"<Error><Key>p/sample2.txt</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
		"<Error><Key>p/&lt;3</Key><Code>InternalError</Code><Message>oops</Message></Error>"
		"</DeleteResult>";
	S3DeleteError *errs;
	int			n;
	FstError	err;

	CHECK_OK(s3_xml_delete_result(doc, strlen(doc), &errs, &n, &err), &err);
	CHECK_EQ_INT(n, 2);
	CHECK(strcmp(errs[0].key, "p/sample2.txt") == 0);
	CHECK(strcmp(errs[0].code, "AccessDenied") == 0);
	CHECK(strcmp(errs[0].message, "Access Denied") == 0);
	CHECK(strcmp(errs[1].key, "p/<3") == 0 && strcmp(errs[1].code, "InternalError") == 0);
	s3_delete_errors_free(errs, n);

	doc = "<DeleteResult/>";
	CHECK_OK(s3_xml_delete_result(doc, strlen(doc), &errs, &n, &err), &err);
	CHECK(n == 0);
	s3_delete_errors_free(errs, n);

	doc = "<DeleteResult><Error><Code>X</Code></Error></DeleteResult>";
	CHECK(s3_xml_delete_result(doc, strlen(doc), &errs, &n, &err) == FST_CORRUPT);
	doc = "<DeleteResult><Error>";
	CHECK(s3_xml_delete_result(doc, strlen(doc), &errs, &n, &err) == FST_CORRUPT);
	CHECK(errs == NULL && n == 0);
}

FST_TEST(s3xml_multipart_replies)
{
	const char *doc =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
		"<InitiateMultipartUploadResult " NS "><Bucket>b</Bucket><Key>k</Key>"
		"<UploadId>VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA</UploadId>"
		"</InitiateMultipartUploadResult>";
	char	   *id;
	char		code[64];
	char		msg[160];
	FstError	err;

	CHECK_OK(s3_xml_upload_id(doc, strlen(doc), &id, &err), &err);
	CHECK(strcmp(id, "VXBsb2FkIElEIGZvciA2aWWpbmcncyBteS1tb3ZpZS5tMnRzIHVwbG9hZA") == 0);
	fst_free(id);
	doc = "<InitiateMultipartUploadResult><UploadId></UploadId></InitiateMultipartUploadResult>";
	CHECK(s3_xml_upload_id(doc, strlen(doc), &id, &err) == FST_CORRUPT);
	doc = "<InitiateMultipartUploadResult><Key>k</Key></InitiateMultipartUploadResult>";
	CHECK(s3_xml_upload_id(doc, strlen(doc), &id, &err) == FST_CORRUPT);
	CHECK(id == NULL);

	doc = "<CompleteMultipartUploadResult " NS "><Location>http://x/b/k</Location>"
		"<Bucket>b</Bucket><Key>k</Key><ETag>\"3858f62230ac3c915f300c664312c11f-9\"</ETag>"
		"</CompleteMultipartUploadResult>";
	CHECK_OK(s3_xml_complete(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg), &err), &err);
	CHECK(code[0] == '\0');
	/* HTTP 200 with an error inside */
	doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n"
		"<Error><Code>InternalError</Code><Message>We encountered an internal error. Please try again.</Message></Error>";
	CHECK_OK(s3_xml_complete(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg), &err), &err);
	CHECK(strcmp(code, "InternalError") == 0);
	CHECK(strncmp(msg, "We encountered", 14) == 0);
	doc = "<Complete";
	CHECK(s3_xml_complete(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg), &err) == FST_CORRUPT);
	doc = "<Other/>";
	CHECK(s3_xml_complete(doc, strlen(doc), code, sizeof(code), msg, sizeof(msg), &err) == FST_CORRUPT);
}

FST_TEST(s3xml_escape)
{
	FstBuf		b;

	fst_buf_init(&b);
	s3_xml_escape(&b, "a&b<c>d\"e'f/g");
	fst_buf_putc(&b, '\0');
	CHECK(strcmp(b.data, "a&amp;b&lt;c&gt;d&quot;e&apos;f/g") == 0);
	fst_buf_free(&b);
}
