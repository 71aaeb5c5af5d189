/*-------------------------------------------------------------------------
 *
 * window.c
 *	  Window helpers for windowed state: tumbling and hopping (sliding)
 *	  window bounds, and the expansion of an event time into every hopping
 *	  window that contains it.
 *
 * Semantics (docs/windows.md has the user's version):
 *
 *	- Windows are half-open, [start, end).  A tumbling window of size S
 *	  starts at origin + k*S for every integer k (also negative: times
 *	  before the origin fall into windows before it, rounding down, never
 *	  towards the origin).  Hopping windows of size S and slide D start at
 *	  origin + k*D and last S; a time t is in every one with
 *	  start <= t < start + S, i.e. in floor(S/D) or ceil(S/D) of them.  S
 *	  need not be a multiple of D; D > S (gaps between windows) is refused.
 *	- Sizes and slides are fixed lengths.  An interval is converted to
 *	  microseconds with a day counted as exactly 24 hours; intervals with a
 *	  month or year part have no fixed length and are refused.  For
 *	  timestamptz the arithmetic is on the absolute time line, so the
 *	  result never depends on the TimeZone setting (the functions are
 *	  IMMUTABLE): a '1 day' window from the default origin is a UTC day.
 *	  Windows of local days are had with an origin at local midnight (they
 *	  stay 24 hours long across DST changes).  For timestamp without time
 *	  zone the same arithmetic runs on its wall-clock value.
 *	- The default origin is the Unix epoch, 1970-01-01 00:00:00 (UTC for
 *	  timestamptz), as in Flink; bigint variants use origin 0.
 *	- Infinite timestamps and results out of range are errors.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/int.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

/* at most this many hopping windows per event (size / slide) */
#define FORST_MAX_HOP_WINDOWS 100000

PG_FUNCTION_INFO_V1(forst_tumble_start_ts);
PG_FUNCTION_INFO_V1(forst_tumble_end_ts);
PG_FUNCTION_INFO_V1(forst_hop_start_ts);
PG_FUNCTION_INFO_V1(forst_hop_end_ts);
PG_FUNCTION_INFO_V1(forst_hop_windows_ts);
PG_FUNCTION_INFO_V1(forst_tumble_start_int8);
PG_FUNCTION_INFO_V1(forst_tumble_end_int8);
PG_FUNCTION_INFO_V1(forst_hop_start_int8);
PG_FUNCTION_INFO_V1(forst_hop_end_int8);
PG_FUNCTION_INFO_V1(forst_hop_windows_int8);

/* A window length as microseconds; refuses months and non-positive ones. */
static int64
interval_length(Interval *iv, const char *what)
{
	int64		us;

	if (iv->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window %s must not have a month or year part", what),
				 errdetail("Months and years have no fixed length."),
				 errhint("Use days (a day counts as 24 hours), e.g. '30 days'.")));
	if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, iv->time, &us))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("window %s is out of range", what)));
	if (us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window %s must be positive", what)));
	return us;
}

static int64
length_int8(int64 v, const char *what)
{
	if (v <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window %s must be positive", what)));
	return v;
}

static void
check_finite(Timestamp t)
{
	if (TIMESTAMP_NOT_FINITE(t))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range"),
				 errdetail("Infinite timestamps belong to no window.")));
}

static void
out_of_range(bool is_ts)
{
	ereport(ERROR,
			(errcode(is_ts ? ERRCODE_DATETIME_VALUE_OUT_OF_RANGE :
					 ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("window bound out of range")));
}

/*
 * origin + floor((t - origin) / step) * step: the start of the step-aligned
 * bucket holding t.
 */
static int64
align_down(int64 t, int64 step, int64 origin, bool is_ts)
{
	int64		d,
				q,
				r;

	if (pg_sub_s64_overflow(t, origin, &d))
		out_of_range(is_ts);
	q = d / step;
	if (d % step < 0)
		q--;					/* floor, also before the origin */
	if (pg_mul_s64_overflow(q, step, &r) || pg_add_s64_overflow(origin, r, &r))
		out_of_range(is_ts);
	if (is_ts && !IS_VALID_TIMESTAMP(r))
		out_of_range(is_ts);
	return r;
}

static int64
add_checked(int64 a, int64 b, bool is_ts)
{
	int64		r;

	if (pg_add_s64_overflow(a, b, &r) || (is_ts && !IS_VALID_TIMESTAMP(r)))
		out_of_range(is_ts);
	return r;
}

/* Hop parameters: slide <= size, and not absurdly many windows per event. */
static void
check_hop(int64 size, int64 slide)
{
	if (slide > size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("window slide must not be larger than the window size"),
				 errhint("A slide larger than the size leaves gaps between windows; "
						 "for slide = size use the tumble_* functions.")));
	if (size / slide >= FORST_MAX_HOP_WINDOWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many hopping windows per event"),
				 errdetail("size / slide must be below %d.", FORST_MAX_HOP_WINDOWS)));
}

/* ---- timestamp and timestamptz (same representation) ------------------ */

Datum
forst_tumble_start_ts(PG_FUNCTION_ARGS)
{
	Timestamp	t = PG_GETARG_TIMESTAMP(0);
	int64		size = interval_length(PG_GETARG_INTERVAL_P(1), "size");
	Timestamp	origin = PG_GETARG_TIMESTAMP(2);

	check_finite(t);
	check_finite(origin);
	PG_RETURN_TIMESTAMP(align_down(t, size, origin, true));
}

Datum
forst_tumble_end_ts(PG_FUNCTION_ARGS)
{
	Timestamp	t = PG_GETARG_TIMESTAMP(0);
	int64		size = interval_length(PG_GETARG_INTERVAL_P(1), "size");
	Timestamp	origin = PG_GETARG_TIMESTAMP(2);

	check_finite(t);
	check_finite(origin);
	PG_RETURN_TIMESTAMP(add_checked(align_down(t, size, origin, true), size, true));
}

Datum
forst_hop_start_ts(PG_FUNCTION_ARGS)
{
	Timestamp	t = PG_GETARG_TIMESTAMP(0);
	int64		size = interval_length(PG_GETARG_INTERVAL_P(1), "size");
	int64		slide = interval_length(PG_GETARG_INTERVAL_P(2), "slide");
	Timestamp	origin = PG_GETARG_TIMESTAMP(3);

	check_finite(t);
	check_finite(origin);
	check_hop(size, slide);
	PG_RETURN_TIMESTAMP(align_down(t, slide, origin, true));
}

Datum
forst_hop_end_ts(PG_FUNCTION_ARGS)
{
	Timestamp	t = PG_GETARG_TIMESTAMP(0);
	int64		size = interval_length(PG_GETARG_INTERVAL_P(1), "size");
	int64		slide = interval_length(PG_GETARG_INTERVAL_P(2), "slide");
	Timestamp	origin = PG_GETARG_TIMESTAMP(3);

	check_finite(t);
	check_finite(origin);
	check_hop(size, slide);
	PG_RETURN_TIMESTAMP(add_checked(align_down(t, slide, origin, true), size, true));
}

/*
 * Every window [s, s + size) with s = origin + k*slide holding t, earliest
 * first, into the SRF's tuplestore.
 */
static void
emit_hop_windows(FunctionCallInfo fcinfo, int64 t, int64 size, int64 slide,
				 int64 origin, bool is_ts)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		last = align_down(t, slide, origin, is_ts);
	int64		first = last;
	int64		s;
	int64		lim;

	/*
	 * The executor knows the result's row type: copying its descriptor is
	 * far cheaper than building it from the catalog on every call (a
	 * pipeline calls this once per event).
	 */
	InitMaterializedSRF(fcinfo,
						rsinfo && IsA(rsinfo, ReturnSetInfo) && rsinfo->expectedDesc ?
						MAT_SRF_USE_EXPECTED_DESC : 0);
	if (pg_sub_s64_overflow(t, size, &lim))
		lim = PG_INT64_MIN;
	/* the earliest start whose window still reaches past t */
	while (true)
	{
		int64		prev;

		if (pg_sub_s64_overflow(first, slide, &prev) ||
			(is_ts && !IS_VALID_TIMESTAMP(prev)))
			break;
		if (prev > lim)	/* prev + size > t */
			first = prev;
		else
			break;
	}
	for (s = first;; s += slide)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		values[0] = Int64GetDatum(s);
		values[1] = Int64GetDatum(add_checked(s, size, is_ts));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		if (s == last)
			break;
	}
}

Datum
forst_hop_windows_ts(PG_FUNCTION_ARGS)
{
	Timestamp	t = PG_GETARG_TIMESTAMP(0);
	int64		size = interval_length(PG_GETARG_INTERVAL_P(1), "size");
	int64		slide = interval_length(PG_GETARG_INTERVAL_P(2), "slide");
	Timestamp	origin = PG_GETARG_TIMESTAMP(3);

	check_finite(t);
	check_finite(origin);
	check_hop(size, slide);
	emit_hop_windows(fcinfo, t, size, slide, origin, true);
	return (Datum) 0;
}

/* ---- bigint ----------------------------------------------------------- */

Datum
forst_tumble_start_int8(PG_FUNCTION_ARGS)
{
	int64		size = length_int8(PG_GETARG_INT64(1), "size");

	PG_RETURN_INT64(align_down(PG_GETARG_INT64(0), size, PG_GETARG_INT64(2), false));
}

Datum
forst_tumble_end_int8(PG_FUNCTION_ARGS)
{
	int64		size = length_int8(PG_GETARG_INT64(1), "size");

	PG_RETURN_INT64(add_checked(align_down(PG_GETARG_INT64(0), size,
										   PG_GETARG_INT64(2), false),
								size, false));
}

Datum
forst_hop_start_int8(PG_FUNCTION_ARGS)
{
	int64		size = length_int8(PG_GETARG_INT64(1), "size");
	int64		slide = length_int8(PG_GETARG_INT64(2), "slide");

	check_hop(size, slide);
	PG_RETURN_INT64(align_down(PG_GETARG_INT64(0), slide, PG_GETARG_INT64(3), false));
}

Datum
forst_hop_end_int8(PG_FUNCTION_ARGS)
{
	int64		size = length_int8(PG_GETARG_INT64(1), "size");
	int64		slide = length_int8(PG_GETARG_INT64(2), "slide");

	check_hop(size, slide);
	PG_RETURN_INT64(add_checked(align_down(PG_GETARG_INT64(0), slide,
										   PG_GETARG_INT64(3), false),
								size, false));
}

Datum
forst_hop_windows_int8(PG_FUNCTION_ARGS)
{
	int64		size = length_int8(PG_GETARG_INT64(1), "size");
	int64		slide = length_int8(PG_GETARG_INT64(2), "slide");

	check_hop(size, slide);
	emit_hop_windows(fcinfo, PG_GETARG_INT64(0), size, slide,
					 PG_GETARG_INT64(3), false);
	return (Datum) 0;
}
