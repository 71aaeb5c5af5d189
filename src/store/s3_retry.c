/*-------------------------------------------------------------------------
 *
 * s3_retry.c
 *	  Retrying S3 requests: which failures are worth another attempt, the
 *	  backoff between attempts, and the loop that sends a request until it
 *	  succeeds, fails for good or runs out of attempts (one attempt is
 *	  s3_http.c's).
 *
 * Retry policy.  An attempt is retried when it failed in a way that a later
 * attempt may not: connection refused or reset, name resolution failure,
 * a timeout, an incomplete body, HTTP 5xx, 429, or S3 codes that mean
 * "slow down" or "try again" (SlowDown, RequestTimeout,
 * ConditionalRequestConflict, OperationAborted) or "the body arrived
 * damaged" (BadDigest, IncompleteBody, XAmzContentSHA256Mismatch).  At most 1 + max_retries
 * attempts are made, with an exponential backoff cap,
 *		cap = min(retry_max_ms, retry_base_ms * 2^attempt),
 * and a uniformly random ("full jitter") sleep in [0, cap] between them.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "s3_internal.h"

/* Does an S3 error code (with its HTTP status) say "try again"? */
bool
s3_retriable_status(long status, const char *code)
{
	if (status >= 500 || status == 429)
		return true;
	return strcmp(code, "SlowDown") == 0 ||
		strcmp(code, "RequestTimeout") == 0 ||
		strcmp(code, "Throttling") == 0 ||
		strcmp(code, "ConditionalRequestConflict") == 0 ||
		strcmp(code, "OperationAborted") == 0 ||
		strcmp(code, "InternalError") == 0 ||
	/* the body was damaged or cut on the way: send it again */
		strcmp(code, "BadDigest") == 0 ||
		strcmp(code, "IncompleteBody") == 0 ||
		strcmp(code, "XAmzContentSHA256Mismatch") == 0;
}

static AttemptResult
attempt(S3Store *s, const S3Request *req, S3Response *resp, FstError *err)
{
	S3Attempt  *x = s3_attempt_start(s, s->curl, req, resp, err);

	if (x == NULL)
		return ATTEMPT_FAIL;
	return s3_attempt_finish(x, (int) curl_easy_perform(s->curl), err);
}

FstCode
s3_backoff(S3Store *s, int attempt_no, FstError *err)
{
	uint64		cap = (uint64) s->retry_base_ms << Min(attempt_no, 30);
	uint64		ms;
	struct timespec ts = {0, 10 * 1000 * 1000};

	cap = Min(cap, (uint64) s->retry_max_ms);
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	ms = cap > 0 ? s->rng % (cap + 1) : 0;
	for (;;)
	{
		if (s3_interrupted(s))
			return fst_error(err, FST_INTERRUPTED,
							 "interrupted while waiting to retry");
		if (ms == 0)
			return FST_OK;
		if (ms < 10)
			ts.tv_nsec = (long) ms * 1000 * 1000;
		nanosleep(&ts, NULL);
		ms -= Min(ms, 10);
	}
}

FstCode
s3_request(S3Store *s, const S3Request *req, S3Response *resp, FstError *err)
{
	int			i;

	memset(resp, 0, sizeof(*resp));
	fst_buf_init(&resp->errbody);
	for (i = 0;; i++)
	{
		AttemptResult r;
		FstCode		code;

		if (s3_interrupted(s))
			return fst_error(err, FST_INTERRUPTED, "%s: interrupted",
							 req->what);
		fst_error_clear(err);
		r = attempt(s, req, resp, err);
		if (r == ATTEMPT_DONE)
			return FST_OK;
		if (r == ATTEMPT_FAIL)
			return err->code;
		if (i >= s->max_retries)
		{
			fst_error_prefix(err, "after %d attempts", i + 1);
			return err->code;
		}
		s->base.stats.retries++;
		code = s3_backoff(s, i, err);
		if (code != FST_OK)
			return code;
	}
}

