-- Window helpers: half-open windows aligned to an origin, fixed lengths,
-- independent of TimeZone for timestamptz.
CREATE EXTENSION forst;
SET TimeZone = 'America/New_York';

-- tumbling: boundaries are half-open [start, end)
SELECT ts, forst.tumble_start(ts, '1 hour') AS s, forst.tumble_end(ts, '1 hour') AS e
  FROM unnest(ARRAY['2024-03-10 00:59:59.999999+00', '2024-03-10 01:00:00+00',
                    '2024-03-10 01:00:00.000001+00']::timestamptz[]) ts;
-- a day is a UTC day from the default origin, whatever the TimeZone
SELECT forst.tumble_start('2024-03-10 12:00 America/New_York'::timestamptz, '1 day') AT TIME ZONE 'UTC';
-- local days: an origin at local midnight; windows stay 24 hours long, so
-- after a DST change they start at 01:00 local time
SELECT forst.tumble_start('2024-03-09 23:30'::timestamptz, '1 day', '2024-01-01 00:00'::timestamptz),
       forst.tumble_start('2024-03-11 12:00'::timestamptz, '1 day', '2024-01-01 00:00'::timestamptz);
-- before the origin: round down, not towards it
SELECT forst.tumble_start(-1::bigint, 10), forst.tumble_end(-1::bigint, 10),
       forst.tumble_start(-10::bigint, 10), forst.tumble_start(-11::bigint, 10),
       forst.tumble_start(9::bigint, 10), forst.tumble_start(10::bigint, 10);
SELECT forst.tumble_start('1969-12-31 23:59:59+00'::timestamptz, '1 minute') AT TIME ZONE 'UTC';
SELECT forst.tumble_start(7::bigint, 5, 3), forst.tumble_start(2::bigint, 5, 3);
-- timestamp without time zone works on the wall clock
SELECT forst.tumble_start('2024-05-05 10:17:00'::timestamp, '15 minutes'),
       forst.tumble_end('2024-05-05 10:17:00'::timestamp, '15 minutes');

-- hopping: size 10, slide 5 -> each time is in two windows
SELECT * FROM forst.hop_windows(12::bigint, 10, 5);
SELECT * FROM forst.hop_windows(10::bigint, 10, 5);
SELECT * FROM forst.hop_windows(-1::bigint, 10, 5);
-- size not a multiple of slide: 2 or 3 windows
SELECT * FROM forst.hop_windows(10::bigint, 10, 4);
SELECT * FROM forst.hop_windows(8::bigint, 10, 4);
-- slide = size: the tumbling window
SELECT * FROM forst.hop_windows(17::bigint, 5, 5);
SELECT forst.hop_start(12::bigint, 10, 5), forst.hop_end(12::bigint, 10, 5);
SELECT * FROM forst.hop_windows('2024-01-01 10:07+00'::timestamptz, '10 minutes', '5 minutes');
SELECT forst.hop_start('2024-01-01 10:07'::timestamp, '1 hour', '15 minutes'),
       forst.hop_end('2024-01-01 10:07'::timestamp, '1 hour', '15 minutes');
-- every window holds the time, and no other window does
SELECT bool_and(w.window_start <= t AND t < w.window_end) AS all_hold,
       count(*) AS windows
  FROM generate_series(-40, 40) t, forst.hop_windows(t::bigint, 7, 3) w;
SELECT t FROM generate_series(-40, 40) t
 WHERE (SELECT count(*) FROM forst.hop_windows(t::bigint, 7, 3)) <>
       (SELECT count(*) FROM generate_series(-100, 100) k WHERE k * 3 <= t AND t < k * 3 + 7);

-- refused
SELECT forst.tumble_start(now(), '1 month');
SELECT forst.tumble_start(now(), '0 seconds');
SELECT forst.tumble_start(now(), '-1 hour');
SELECT forst.tumble_start('infinity'::timestamptz, '1 hour');
SELECT * FROM forst.hop_windows(1::bigint, 5, 10);
SELECT * FROM forst.hop_windows(now(), '1 day', '1 microsecond');
SELECT forst.tumble_end(9223372036854775807, 10);
SELECT forst.tumble_start(1::bigint, 0);
-- NULL in, NULL out
SELECT forst.tumble_start(NULL::timestamptz, '1 hour') IS NULL;

-- immutable and parallel safe
SELECT p.proname, pg_get_function_identity_arguments(p.oid), p.provolatile, p.proparallel
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = 'forst' AND p.proname ~ '^(tumble|hop)_'
 ORDER BY 1, 2;
RESET TimeZone;
DROP EXTENSION forst;
