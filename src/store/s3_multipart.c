/*-------------------------------------------------------------------------
 *
 * s3_multipart.c
 *	  Multipart upload for the s3:// store: CreateMultipartUpload, one
 *	  UploadPart per part_size bytes (each with its Content-MD5, its ETag
 *	  checked), CompleteMultipartUpload, and AbortMultipartUpload when
 *	  anything fails, so that no orphan parts are left (as far as the
 *	  server can be reached).
 *
 * The upload carries the writer id in x-amz-meta-forst-writer: if a retry
 * of CompleteMultipartUpload finds the upload gone (NoSuchUpload), the
 * object's id tells whether our earlier attempt completed it.  A
 * CompleteMultipartUpload answered with HTTP 200 can still have failed
 * (an <Error> body); such replies are retried like 5xx ones.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <stdio.h>

#include "s3_internal.h"

/* Best effort, not interruptible, one attempt: don't leave parts behind. */
static void
abort_upload(S3Store *s, const char *full, const char *upload_id)
{
	FstSigV4Pair q[] = {{"uploadId", upload_id}};
	S3Request	req = {0};
	S3Response	resp;
	FstError	ignore;
	FstObjInterruptFn fn = s->base.interrupt_fn;
	int			retries = s->max_retries;

	s->base.interrupt_fn = NULL;
	s->max_retries = 1;
	req.method = "DELETE";
	req.key = full;
	req.query = q;
	req.nquery = 1;
	req.what = "s3 AbortMultipartUpload";
	(void) s3_request(s, &req, &resp, &ignore);
	s3_response_free(&resp);
	s->base.interrupt_fn = fn;
	s->max_retries = retries;
}

FstCode
s3_put_multipart(S3Store *s, const char *key, const char *full,
				 const char *data, size_t len, FstError *err)
{
	char		what[128];
	char		writer_id[2 * WRITER_ID_BYTES + 1];
	char	   *upload_id = NULL;
	char	  (*etags)[80] = NULL;
	int			nparts = (int) ((len + s->part_size - 1) / s->part_size);
	FstBuf		body;
	S3Response	resp;
	FstCode		code;
	int			i;

	s3_describe(what, sizeof(what), "CreateMultipartUpload", key);
	s3_random_hex(writer_id, WRITER_ID_BYTES);
	fst_buf_init(&body);
	memset(&resp, 0, sizeof(resp));

	/* initiate */
	{
		FstSigV4Pair q[] = {{"uploads", ""}};
		FstSigV4Pair h[] = {
			{"Content-Type", "application/octet-stream"},
			{S3_WRITER_META, writer_id},
		};
		S3Request	req = {0};

		req.method = "POST";
		req.key = full;
		req.query = q;
		req.nquery = 1;
		req.headers = h;
		req.nheaders = lengthof(h);
		req.out = &body;
		req.what = what;
		code = s3_request(s, &req, &resp, err);
		if (code == FST_OK && resp.status == 200)
			code = s3_xml_upload_id(body.data, body.len, &upload_id, err);
		else if (code == FST_OK)
			code = s3_status_error(s, &req, &resp, err);
		s3_response_free(&resp);
		if (code != FST_OK)
			goto done;
	}

	etags = fst_calloc(nparts, sizeof(*etags));
	if (etags == NULL)
	{
		code = fst_error(err, FST_NO_MEMORY, "out of memory");
		goto done;
	}
	for (i = 0; i < nparts; i++)
	{
		size_t		off = (size_t) i * s->part_size;
		size_t		n = Min(len - off, (size_t) s->part_size);
		char		partno[16];
		char		md5b64[MD5_B64_LEN];
		char		md5hex[MD5_HEX_LEN];
		FstSigV4Pair q[2];
		FstSigV4Pair h[] = {{"Content-MD5", md5b64}};
		S3Request	req = {0};

		snprintf(partno, sizeof(partno), "%d", i + 1);
		q[0] = (FstSigV4Pair) {"partNumber", partno};
		q[1] = (FstSigV4Pair) {"uploadId", upload_id};
		fst_md5_base64_hex(data + off, n, md5b64, md5hex);
		s3_describe(what, sizeof(what), "UploadPart", key);
		req.method = "PUT";
		req.key = full;
		req.query = q;
		req.nquery = 2;
		req.headers = h;
		req.nheaders = 1;
		req.body = data + off;
		req.body_len = n;
		req.what = what;
		code = s3_request(s, &req, &resp, err);
		if (code == FST_OK && resp.status == 200)
		{
			if (resp.etag[0] == '\0')
				code = fst_error(err, FST_CORRUPT,
								 "%s: part %d stored without an ETag", what, i + 1);
			else if (strlen(resp.etag) == 32 &&
					 pg_strcasecmp(resp.etag, md5hex) != 0)
				code = fst_error(err, FST_CORRUPT,
								 "%s: part %d stored with ETag %s, not the MD5 %s of the data sent",
								 what, i + 1, resp.etag, md5hex);
			snprintf(etags[i], sizeof(etags[i]), "%s", resp.etag);
		}
		else if (code == FST_OK)
			code = s3_status_error(s, &req, &resp, err);
		s3_response_free(&resp);
		if (code != FST_OK)
			goto done;
	}

	/* complete; a 200 reply may still carry an <Error>, retried here */
	fst_buf_reset(&body);
	fst_buf_append(&body, "<CompleteMultipartUpload>", 25);
	for (i = 0; i < nparts; i++)
	{
		char		part[160];

		snprintf(part, sizeof(part),
				 "<Part><PartNumber>%d</PartNumber><ETag>\"%s\"</ETag></Part>",
				 i + 1, etags[i]);
		fst_buf_append(&body, part, strlen(part));
	}
	fst_buf_append(&body, "</CompleteMultipartUpload>", 26);
	if (body.oom)
	{
		code = fst_error(err, FST_NO_MEMORY, "out of memory");
		goto done;
	}
	s3_describe(what, sizeof(what), "CompleteMultipartUpload", key);
	for (i = 0;; i++)
	{
		FstSigV4Pair q[] = {{"uploadId", upload_id}};
		FstSigV4Pair h[] = {{"Content-Type", "application/xml"}};
		S3Request	req = {0};
		FstBuf		reply;
		char		xcode[64];
		char		xmsg[160];

		fst_buf_init(&reply);
		req.method = "POST";
		req.key = full;
		req.query = q;
		req.nquery = 1;
		req.headers = h;
		req.nheaders = 1;
		req.body = body.data;
		req.body_len = body.len;
		req.out = &reply;
		req.what = what;
		code = s3_request(s, &req, &resp, err);
		if (code == FST_OK && resp.status == 200)
		{
			code = s3_xml_complete(reply.data, reply.len, xcode, sizeof(xcode),
								   xmsg, sizeof(xmsg), err);
			if (code == FST_OK && xcode[0] != '\0')
			{
				bool		again = strcmp(xcode, "InternalError") == 0 ||
					strcmp(xcode, "SlowDown") == 0 ||
					strcmp(xcode, "ServiceUnavailable") == 0;

				code = fst_error(err, again ? FST_TRANSIENT : FST_IO_ERROR,
								 "%s: %s: %.100s", what, xcode, xmsg);
				if (again && i < s->max_retries)
				{
					fst_buf_free(&reply);
					s3_response_free(&resp);
					code = s3_backoff(s, i, err);
					if (code != FST_OK)
						goto done;
					continue;
				}
			}
		}
		else if (code == FST_OK && resp.attempts > 1 &&
				 strcmp(resp.code, "NoSuchUpload") == 0)
		{
			/* an earlier attempt may have completed it: ours? */
			code = s3_resolve_lost_reply(s, full, key, writer_id, err);
			if (code == FST_ALREADY_EXISTS)
				code = s3_status_error(s, &req, &resp, err);
		}
		else if (code == FST_OK)
			code = s3_status_error(s, &req, &resp, err);
		fst_buf_free(&reply);
		s3_response_free(&resp);
		break;
	}

done:
	if (code != FST_OK && upload_id != NULL)
		abort_upload(s, full, upload_id);
	fst_free(upload_id);
	fst_free(etags);
	fst_buf_free(&body);
	return code;
}
