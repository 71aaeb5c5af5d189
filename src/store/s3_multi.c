/*-------------------------------------------------------------------------
 *
 * s3_multi.c
 *	  get_ranges of the s3:// store: a batch of ranged GETs sent in
 *	  parallel, at most parallel_gets (forst.s3_parallel_gets) at a time, over one curl multi
 *	  handle (its easy handles and their connections are kept by the store
 *	  between batches).
 *
 * Each request's first attempt runs in the multi handle.  A reply that is
 * the range asked for (206 from the right offset, a 200 sliced on arrival,
 * or 416: an empty read) completes it.  Anything else -- a retriable
 * failure, an error status, a short body -- is sent again afterwards by
 * s3_get_range, one at a time, which owns the retry policy (backoff,
 * attempts) and the mapping of failures to codes and messages: the
 * parallel path never decides an error on its own.  So a batch behaves
 * like the same reads made one after another, only faster when the store
 * answers.
 *
 * Interrupts: the progress callback of every transfer polls the store's
 * interrupt callback (s3_http.c), and so does the wait loop here between
 * polls of at most 100 ms; an interrupt ends the batch with
 * FST_INTERRUPTED for every range not finished.
 *
 *-------------------------------------------------------------------------
 */
#include "fst_common.h"

#include <stdio.h>

#include <curl/curl.h>

#include "s3_internal.h"

/* One request in flight. */
typedef struct Slot
{
	int			idx;			/* range index, -1 when free */
	CURL	   *easy;
	S3Attempt  *attempt;
	S3RangeGet	get;
	S3Response	resp;
	char	   *full;
} Slot;

void
s3_multi_close(S3Store *s)
{
	int			i;

	for (i = 0; i < FST_S3_MAX_PARALLEL_GETS; i++)
	{
		if (s->easies[i])
			curl_easy_cleanup(s->easies[i]);
		s->easies[i] = NULL;
	}
	if (s->multi)
		curl_multi_cleanup(s->multi);
	s->multi = NULL;
}

static bool
ensure_handles(S3Store *s)
{
	int			i;

	if (s->multi == NULL && (s->multi = curl_multi_init()) == NULL)
		return false;
	for (i = 0; i < s->parallel_gets; i++)
		if (s->easies[i] == NULL && (s->easies[i] = curl_easy_init()) == NULL)
			return false;
	return true;
}

/* Starts range r in slot sl; false if it must go the sequential way. */
static bool
start(S3Store *s, Slot *sl, int idx, FstObjRange *r)
{
	FstError	ignore;

	if (r->len == 0)
		return false;			/* a HEAD, in s3_get_range */
	sl->full = s3_full_key(s, r->key);
	if (sl->full == NULL)
		return false;
	s3_range_get_init(&sl->get, sl->full, r->key, r->offset, r->len, r->buf);
	memset(&sl->resp, 0, sizeof(sl->resp));
	fst_buf_init(&sl->resp.errbody);
	sl->attempt = s3_attempt_start(s, sl->easy, &sl->get.req, &sl->resp, &ignore);
	if (sl->attempt == NULL ||
		curl_multi_add_handle(s->multi, sl->easy) != CURLM_OK)
	{
		s3_attempt_free(sl->attempt);
		sl->attempt = NULL;
		s3_response_free(&sl->resp);
		fst_free(sl->full);
		sl->full = NULL;
		return false;
	}
	sl->idx = idx;
	return true;
}

/*
 * Ends slot sl's transfer with curl code rc: true if its range is done
 * (code and got set), false if it is to be sent again sequentially.
 */
static bool
finish(S3Store *s, Slot *sl, FstObjRange *r, int rc, bool *interrupted)
{
	FstError	e;
	AttemptResult ar;
	bool		done = false;

	curl_multi_remove_handle(s->multi, sl->easy);
	ar = s3_attempt_finish(sl->attempt, rc, &e);
	sl->attempt = NULL;
	if (ar == ATTEMPT_FAIL && e.code == FST_INTERRUPTED)
		*interrupted = true;
	else if (ar == ATTEMPT_DONE)
	{
		S3Response *resp = &sl->resp;

		if (resp->status == 206 &&
			(resp->range_start < 0 || (uint64) resp->range_start == r->offset))
			done = true;
		else if (resp->status == 200)
			done = true;		/* the whole object, sliced on arrival */
		if (done)
		{
			r->got = resp->received;
			r->code = FST_OK;
		}
		else if (resp->status == 416)
		{
			r->got = 0;
			r->code = FST_OK;
			done = true;
		}
	}
	s3_response_free(&sl->resp);
	fst_free(sl->full);
	sl->full = NULL;
	sl->idx = -1;
	return done;
}

FstCode
s3_get_ranges(FstObjStore *store, FstObjRange *ranges, int n, FstError *err)
{
	S3Store    *s = (S3Store *) store;
	Slot		slots[FST_S3_MAX_PARALLEL_GETS];
	bool	   *again;
	bool		interrupted = false;
	FstCode		first = FST_OK;
	int			next = 0,
				active = 0,
				i;

	again = fst_calloc(Max(n, 1), sizeof(bool));
	if (again == NULL)
		return fst_error(err, FST_NO_MEMORY, "out of memory");
	if (!ensure_handles(s))
	{
		/* no multi handle: all of them the sequential way */
		for (i = 0; i < n; i++)
			again[i] = true;
		next = n;
	}
	for (i = 0; i < s->parallel_gets; i++)
	{
		memset(&slots[i], 0, sizeof(Slot));
		slots[i].idx = -1;
		slots[i].easy = s->easies[i];
	}

	while (!interrupted)
	{
		CURLMsg    *msg;
		int			running,
					left;

		/* fill free slots */
		for (i = 0; i < s->parallel_gets && next < n; i++)
		{
			if (slots[i].idx >= 0)
				continue;
			if (start(s, &slots[i], next, &ranges[next]))
				active++;
			else
				again[next] = true;
			next++;
		}
		if (active == 0)
			break;
		if (curl_multi_perform(s->multi, &running) != CURLM_OK)
			break;				/* what is left goes the sequential way */
		while ((msg = curl_multi_info_read(s->multi, &left)) != NULL)
		{
			if (msg->msg != CURLMSG_DONE)
				continue;
			for (i = 0; i < s->parallel_gets; i++)
			{
				Slot	   *sl = &slots[i];

				if (sl->idx < 0 || sl->easy != msg->easy_handle)
					continue;
				{
					int			idx = sl->idx;

					if (!finish(s, sl, &ranges[idx], (int) msg->data.result,
								&interrupted))
						again[idx] = true;
				}
				active--;
				break;
			}
		}
		if (s3_interrupted(s))
			interrupted = true;
		if (!interrupted && active > 0)
			curl_multi_poll(s->multi, NULL, 0, 100, NULL);
	}

	/* transfers still in the multi handle: stopped, sent again or dropped */
	for (i = 0; i < s->parallel_gets; i++)
	{
		bool		ignore = false;

		if (slots[i].idx < 0)
			continue;
		again[slots[i].idx] = true;
		(void) finish(s, &slots[i], &ranges[slots[i].idx],
					  CURLE_ABORTED_BY_CALLBACK, &ignore);
	}
	for (; next < n; next++)
		again[next] = true;

	for (i = 0; i < n; i++)
	{
		FstError	e;

		if (!again[i])
			continue;
		if (interrupted)
		{
			ranges[i].code = FST_INTERRUPTED;
			ranges[i].got = 0;
			continue;
		}
		fst_error_clear(&e);
		ranges[i].code = s3_get_range(store, ranges[i].key, ranges[i].offset,
									  ranges[i].len, ranges[i].buf,
									  &ranges[i].got, &e);
		if (ranges[i].code == FST_INTERRUPTED)
			interrupted = true;
		if (ranges[i].code != FST_OK && first == FST_OK)
		{
			first = ranges[i].code;
			*err = e;
		}
	}
	fst_free(again);
	if (interrupted)
		return fst_error(err, FST_INTERRUPTED, "s3 GET (ranges): interrupted");
	return FST_OK;
}
