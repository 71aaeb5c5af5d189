-- scripts/pipeline-verify.sql -- checks the finished job of scripts/pipeline.sql
-- against a recomputation from the source log with plain SQL (no forst
-- window helpers, no state tables).  Prints one line per check, "ok" or
-- "FAIL", then "PASS" or "FAIL" alone on the last line.  The caller passes
-- the number of events generated as psql variable total.  After a failover
-- (scripts/demo.sh), it also passes
--   compare     a schema holding the output tables of an uninterrupted run
--               of the same job (same seed, same events): the outputs must
--               equal them row for row;
--   resumed_at  the offset the job resumed from after attaching the
--               checkpoint: it must lie inside the run (0 < it < total).
-- For the job on several servers (scripts/pipeline-servers.sql, on its
-- coordinator), it passes distributed=true: q7's state is then keyed by
-- auction (its bound is per auction and window), and every key group's
-- offset (pipeline.source_offsets) must be at total.
\set ON_ERROR_STOP 1
\if :{?distributed}
\else
\set distributed false
\endif
\pset format unaligned
\pset tuples_only on

CREATE TEMP TABLE expect_params AS
SELECT c.*, o.last_id, o.watermark, o.batches
  FROM pipeline.config c, pipeline.offsets o WHERE o.job = 'nexmark';

-- Every hopping window holding each bid: starts aligned to the slide from
-- the epoch, [start, start + size); plain date_bin and generate_series.
CREATE TEMP TABLE expect_q5 AS
WITH p AS (SELECT * FROM expect_params),
bid_windows AS (
    SELECT date_bin(p.hop_slide, e.at, 'epoch') - k * p.hop_slide AS window_start, e.auction, e.at
      FROM nexmark.events e, p,
           generate_series(0, ceil(extract(epoch FROM p.hop_size) / extract(epoch FROM p.hop_slide))::int - 1) k
     WHERE e.kind = 'bid' AND e.id <= p.last_id),
counts AS (
    SELECT window_start, auction, count(*) AS bids
      FROM bid_windows, p
     WHERE at < window_start + p.hop_size
     GROUP BY 1, 2)
SELECT window_start, window_start + p.hop_size AS window_end, auction, bids
  FROM (SELECT c.*, rank() OVER (PARTITION BY window_start ORDER BY bids DESC) AS r FROM counts c) ranked, p
 WHERE r = 1 AND window_start + p.hop_size <= p.watermark;

CREATE TEMP TABLE expect_q7 AS
WITH p AS (SELECT * FROM expect_params)
SELECT DISTINCT ON (1) date_bin(p.tumble_size, e.at, 'epoch') AS window_start,
       date_bin(p.tumble_size, e.at, 'epoch') + p.tumble_size AS window_end,
       e.price, e.id AS bid_id, e.auction, e.bidder
  FROM nexmark.events e, p
 WHERE e.kind = 'bid' AND e.id <= p.last_id
   AND date_bin(p.tumble_size, e.at, 'epoch') + p.tumble_size <= p.watermark
 ORDER BY 1, e.price DESC, e.id;

CREATE TEMP TABLE expect_seller AS
WITH p AS (SELECT * FROM expect_params)
SELECT date_bin(p.tumble_size, e.at, 'epoch') AS window_start,
       date_bin(p.tumble_size, e.at, 'epoch') + p.tumble_size AS window_end,
       e.seller, count(*) AS auctions, sum(e.reserve) AS reserve_sum
  FROM nexmark.events e, p
 WHERE e.kind = 'auction' AND e.id <= p.last_id
   AND date_bin(p.tumble_size, e.at, 'epoch') + p.tumble_size <= p.watermark
 GROUP BY 1, 2, 3;

-- Bounds on the live state: rows of open windows only.  After a step the
-- watermark is (newest event time - jitter), so open windows start after
-- watermark - size and at most at the newest event time: at most
-- ceil((size + jitter) / slide) + 1 of them, each with at most as many rows
-- as the fullest window ever had.  Without expiry the state would hold a
-- row for every window of the run.
CREATE TEMP TABLE expect_bounds AS
WITH p AS (SELECT * FROM expect_params),
q5_per_window AS (
    SELECT max(n) AS n FROM (
        SELECT count(DISTINCT auction) AS n
          FROM nexmark.events e, p,
               generate_series(0, ceil(extract(epoch FROM p.hop_size) / extract(epoch FROM p.hop_slide))::int - 1) k
         WHERE e.kind = 'bid' AND e.id <= p.last_id
           AND e.at < date_bin(p.hop_slide, e.at, 'epoch') - k * p.hop_slide + p.hop_size
         GROUP BY date_bin(p.hop_slide, e.at, 'epoch') - k * p.hop_slide) w),
seller_per_window AS (
    SELECT max(n) AS n FROM (
        SELECT count(DISTINCT seller) AS n FROM nexmark.events e, p
         WHERE e.kind = 'auction' AND e.id <= p.last_id
         GROUP BY date_bin(p.tumble_size, e.at, 'epoch')) w)
SELECT (ceil(extract(epoch FROM p.hop_size + p.jitter_us * interval '1 microsecond')
             / extract(epoch FROM p.hop_slide)) + 1)::bigint * q5.n AS q5_bound,
       (ceil(extract(epoch FROM p.tumble_size + p.jitter_us * interval '1 microsecond')
             / extract(epoch FROM p.tumble_size)) + 1)::bigint AS q7_bound,
       (ceil(extract(epoch FROM p.tumble_size + p.jitter_us * interval '1 microsecond')
             / extract(epoch FROM p.tumble_size)) + 1)::bigint * s.n AS seller_bound
  FROM p, q5_per_window q5, seller_per_window s;
-- keyed by auction, q7's state holds a row per auction bid on in each open
-- tumbling window
UPDATE expect_bounds
   SET q7_bound = q7_bound * (SELECT max(n) FROM (
           SELECT count(DISTINCT e.auction) AS n FROM nexmark.events e, expect_params p
            WHERE e.kind = 'bid' AND e.id <= p.last_id
            GROUP BY date_bin(p.tumble_size, e.at, 'epoch')) w)
 WHERE :distributed;

CREATE TEMP TABLE checks (ok bool, what text);

INSERT INTO checks
SELECT n_missing = 0 AND n_extra = 0 AND n_out > 0,
       format('q5 hot items: %s rows in %s windows emitted; %s expected rows missing, %s unexpected or duplicated',
              n_out, n_win, n_missing, n_extra)
  FROM (SELECT (SELECT count(*) FROM pipeline.q5_hot_items) AS n_out,
               (SELECT count(DISTINCT window_start) FROM pipeline.q5_hot_items) AS n_win,
               (SELECT count(*) FROM (SELECT * FROM expect_q5 EXCEPT ALL
                                      SELECT * FROM pipeline.q5_hot_items) x) AS n_missing,
               (SELECT count(*) FROM (SELECT * FROM pipeline.q5_hot_items EXCEPT ALL
                                      SELECT * FROM expect_q5) x) AS n_extra) c;

INSERT INTO checks
SELECT n_missing = 0 AND n_extra = 0 AND n_out > 0,
       format('q7 highest bid: %s windows emitted; %s expected rows missing, %s unexpected or duplicated',
              n_out, n_missing, n_extra)
  FROM (SELECT (SELECT count(*) FROM pipeline.q7_highest_bid) AS n_out,
               (SELECT count(*) FROM (SELECT * FROM expect_q7 EXCEPT ALL
                                      SELECT * FROM pipeline.q7_highest_bid) x) AS n_missing,
               (SELECT count(*) FROM (SELECT * FROM pipeline.q7_highest_bid EXCEPT ALL
                                      SELECT * FROM expect_q7) x) AS n_extra) c;

INSERT INTO checks
SELECT n_missing = 0 AND n_extra = 0 AND n_out > 0,
       format('seller activity: %s rows in %s windows emitted; %s expected rows missing, %s unexpected or duplicated',
              n_out, n_win, n_missing, n_extra)
  FROM (SELECT (SELECT count(*) FROM pipeline.seller_activity) AS n_out,
               (SELECT count(DISTINCT window_start) FROM pipeline.seller_activity) AS n_win,
               (SELECT count(*) FROM (SELECT * FROM expect_seller EXCEPT ALL
                                      SELECT * FROM pipeline.seller_activity) x) AS n_missing,
               (SELECT count(*) FROM (SELECT * FROM pipeline.seller_activity EXCEPT ALL
                                      SELECT * FROM expect_seller) x) AS n_extra) c;

INSERT INTO checks
SELECT p.last_id = :total AND n_events = :total AND p.batches > 0,
       format('offset %s after %s batches; %s events generated, %s in the log', p.last_id, p.batches,
              :total, n_events)
  FROM expect_params p, (SELECT count(*) AS n_events FROM nexmark.events) e;

INSERT INTO checks
SELECT s.q5 <= b.q5_bound AND s.q7 <= b.q7_bound AND s.seller <= b.seller_bound AND s.n > 0,
       format('state bounded: live rows at most q5 %s (bound %s), q7 %s (bound %s), seller %s (bound %s) over %s samples; without expiry: q5 %s, q7 %s, seller %s',
              s.q5, b.q5_bound, s.q7, b.q7_bound, s.seller, b.seller_bound, s.n,
              w.q5, w.q7, w.seller)
  FROM expect_bounds b,
       (SELECT max(q5_rows) AS q5, max(q7_rows) AS q7, max(seller_rows) AS seller, count(*) AS n
          FROM pipeline.samples) s,
       (SELECT (SELECT count(*) FROM (SELECT DISTINCT date_bin(p.hop_slide, e.at, 'epoch') - k * p.hop_slide, e.auction
                                        FROM nexmark.events e, expect_params p,
                                             generate_series(0, ceil(extract(epoch FROM p.hop_size) / extract(epoch FROM p.hop_slide))::int - 1) k
                                       WHERE e.kind = 'bid' AND e.at < date_bin(p.hop_slide, e.at, 'epoch') - k * p.hop_slide + p.hop_size) x) AS q5,
               (SELECT count(DISTINCT (date_bin(p.tumble_size, e.at, 'epoch'), CASE WHEN :distributed THEN e.auction END))
                  FROM nexmark.events e, expect_params p WHERE e.kind = 'bid') AS q7,
               (SELECT count(*) FROM (SELECT DISTINCT date_bin(p.tumble_size, e.at, 'epoch'), e.seller
                                        FROM nexmark.events e, expect_params p WHERE e.kind = 'auction') x) AS seller) w;

\if :{?compare}
-- The failover run emitted exactly what the uninterrupted run emitted.
INSERT INTO checks
SELECT n_missing = 0 AND n_extra = 0 AND n_other > 0,
       format('equal to the uninterrupted run: %s of its %s output rows (q5, q7, seller) missing here, %s here not in it',
              n_missing, n_other, n_extra)
  FROM (SELECT (SELECT count(*) FROM :"compare".q5_hot_items)
             + (SELECT count(*) FROM :"compare".q7_highest_bid)
             + (SELECT count(*) FROM :"compare".seller_activity) AS n_other,
               (SELECT count(*) FROM (SELECT * FROM :"compare".q5_hot_items EXCEPT ALL
                                      SELECT * FROM pipeline.q5_hot_items) x)
             + (SELECT count(*) FROM (SELECT * FROM :"compare".q7_highest_bid EXCEPT ALL
                                      SELECT * FROM pipeline.q7_highest_bid) x)
             + (SELECT count(*) FROM (SELECT * FROM :"compare".seller_activity EXCEPT ALL
                                      SELECT * FROM pipeline.seller_activity) x) AS n_missing,
               (SELECT count(*) FROM (SELECT * FROM pipeline.q5_hot_items EXCEPT ALL
                                      SELECT * FROM :"compare".q5_hot_items) x)
             + (SELECT count(*) FROM (SELECT * FROM pipeline.q7_highest_bid EXCEPT ALL
                                      SELECT * FROM :"compare".q7_highest_bid) x)
             + (SELECT count(*) FROM (SELECT * FROM pipeline.seller_activity EXCEPT ALL
                                      SELECT * FROM :"compare".seller_activity) x) AS n_extra) c;
\endif

\if :distributed
-- Every key group was applied to the end of the log, each exactly once
-- (its offset moved with its state through the rescales).
INSERT INTO checks
SELECT n = 128 AND lo = :total AND hi = :total,
       format('key groups: %s offsets, from event %s to %s', n, lo, hi)
  FROM (SELECT count(*) AS n, min(last_id) AS lo, max(last_id) AS hi FROM pipeline.source_offsets) o;
\endif

\if :{?resumed_at}
-- The server died while the job ran: part of the outputs came through the
-- checkpoint, the rest was emitted after resuming.
INSERT INTO checks
SELECT :resumed_at > 0 AND :resumed_at < :total AND p.last_id = :total,
       format('failover: resumed from offset %s of %s (%s%%) and finished at %s',
              :resumed_at, :total, round(100.0 * :resumed_at / :total), p.last_id)
  FROM expect_params p;
\endif

-- Nothing of a closed window is visible in the state any more.
INSERT INTO checks
SELECT n = 0, format('expired windows invisible: %s state rows of emitted windows still visible', n)
  FROM (SELECT (SELECT count(*) FROM pipeline.q5_state, expect_params p WHERE window_start <= p.watermark - p.hop_size)
             + (SELECT count(*) FROM pipeline.q7_state, expect_params p WHERE window_start <= p.watermark - p.tumble_size)
             + (SELECT count(*) FROM pipeline.seller_state, expect_params p WHERE window_start <= p.watermark - p.tumble_size) AS n) x;

SELECT CASE WHEN ok THEN 'ok     ' ELSE 'FAIL   ' END || what FROM checks;
SELECT CASE WHEN bool_and(ok) THEN 'PASS' ELSE 'FAIL' END FROM checks;
