-- Expiry of windowed state: TTL and watermark on a timestamp column.
CREATE EXTENSION forst;
SET TimeZone = 'UTC';

-- windowed state keyed by window start (a key TTL column)
CREATE TABLE w (k int, ws timestamptz, n bigint, PRIMARY KEY (k, ws)) USING forst;
INSERT INTO w VALUES
  (1, '2024-01-01 00:00:00', 10), (2, '2024-01-01 00:00:00', 20),
  (1, '2024-01-01 00:00:59.999999', 11),
  (1, '2024-01-01 00:01:00', 12), (2, '2024-01-01 00:01:00', 22),
  (1, '2024-01-01 00:02:00', 13);

-- refused settings
SELECT forst.advance_watermark('w', '2024-01-01 00:01:00');
CREATE TABLE heap_t (ts timestamptz);
SELECT forst.set_ttl('heap_t', 'ts', '1 hour');
SELECT forst.set_ttl('w', 'nope', '1 hour');
SELECT forst.set_ttl('w', 'n', '1 hour');
SELECT forst.set_ttl('w', 'ws', '1 month');
SELECT forst.set_ttl('w', 'ws', '-1 hour');
SELECT forst.set_ttl('w', NULL, '1 hour');

-- a watermark without TTL; expired: ws < watermark
SELECT forst.set_ttl('w', 'ws', NULL);
SELECT "table", ttl_column, ttl, watermark FROM forst.tables WHERE "table" = 'w'::regclass;
SELECT forst.advance_watermark('w', '2024-01-01 00:01:00');
SELECT * FROM w ORDER BY k, ws;
-- monotonic: going back is ignored and returns the watermark in effect
SELECT forst.advance_watermark('w', '2023-01-01');
SELECT count(*) FROM w;
-- key lookups and ranges skip expired rows too
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM w WHERE k = 1 AND ws = '2024-01-01 00:00:00';
SELECT * FROM w WHERE k = 1 AND ws = '2024-01-01 00:00:00';
SELECT * FROM w WHERE k = 1 AND ws >= '2023-01-01' ORDER BY ws;
RESET enable_seqscan;
-- UPDATE and DELETE do not see expired rows
UPDATE w SET n = -1 WHERE ws < '2024-01-01 00:01:00';
DELETE FROM w WHERE ws < '2024-01-01 00:01:00';
-- an expired key is absent: a plain INSERT writes a new row, no unique violation
INSERT INTO w VALUES (1, '2024-01-01 00:00:00', 100);
-- ... which is expired itself, so it is invisible at once
SELECT count(*) FROM w WHERE ws < '2024-01-01 00:01:00';
-- ON CONFLICT over an expired key inserts
INSERT INTO w VALUES (2, '2024-01-01 00:00:00', 200)
  ON CONFLICT (k, ws) DO UPDATE SET n = w.n + excluded.n RETURNING *;
INSERT INTO w VALUES (2, '2024-01-01 00:01:00', 5)
  ON CONFLICT (k, ws) DO UPDATE SET n = w.n + excluded.n RETURNING *;
-- a rolled back watermark changes nothing
BEGIN;
SELECT forst.advance_watermark('w', '2030-01-01');
SELECT count(*) FROM w;
ROLLBACK;
SELECT count(*) FROM w;
-- in a subtransaction that rolls back, too
BEGIN;
SAVEPOINT s;
SELECT forst.advance_watermark('w', '2030-01-01');
ROLLBACK TO s;
COMMIT;
SELECT * FROM w ORDER BY k, ws;
-- the TTL column cannot change
SELECT forst.set_ttl('w', 'ws', NULL);
ALTER TABLE w ADD COLUMN ts2 timestamptz;
SELECT forst.set_ttl('w', 'ts2', '1 hour');
-- everything below the watermark: the boundary is exclusive
SELECT forst.advance_watermark('w', '2024-01-01 00:02:00');
SELECT * FROM w ORDER BY k, ws;

-- a TTL on a non-key column, relative to the statement's start time
CREATE TABLE s (id int PRIMARY KEY, seen timestamptz, v text) USING forst;
INSERT INTO s VALUES (1, now() - interval '2 hours', 'old'),
                     (2, now() - interval '30 minutes', 'recent'),
                     (3, NULL, 'no time: never expires'),
                     (4, now() + interval '1 day', 'future');
SELECT forst.set_ttl('s', 'seen', '1 hour');
SELECT id, v FROM s ORDER BY id;
SELECT ttl_column, ttl, watermark IS NULL AS no_watermark,
       expiry_cutoff BETWEEN now() - interval '61 minutes' AND now() - interval '59 minutes' AS cutoff_ok
  FROM forst.tables WHERE "table" = 's'::regclass;
-- a row updated into the past expires; one updated into the present returns
UPDATE s SET seen = now() - interval '3 hours' WHERE id = 2;
SELECT id, v FROM s ORDER BY id;
INSERT INTO s VALUES (1, now(), 'again') ON CONFLICT (id) DO UPDATE SET v = 'updated';
SELECT id, v FROM s ORDER BY id;
-- lengthening or removing the TTL does not bring expired rows back
SELECT forst.set_ttl('s', 'seen', '1 day');
SELECT id, v FROM s ORDER BY id;
SELECT forst.set_ttl('s', 'seen', NULL);
SELECT id, v FROM s ORDER BY id;
SELECT ttl IS NULL AS ttl_removed, watermark BETWEEN now() - interval '61 minutes' AND now() - interval '59 minutes' AS folded
  FROM forst.tables WHERE "table" = 's'::regclass;

-- timestamp without time zone is compared as UTC
CREATE TABLE t (id int PRIMARY KEY, at timestamp) USING forst;
INSERT INTO t VALUES (1, '2024-06-01 11:59:59'), (2, '2024-06-01 12:00:00');
SELECT forst.set_ttl('t', 'at', NULL);
SELECT forst.advance_watermark('t', '2024-06-01 12:00:00+00');
SELECT * FROM t;
SET TimeZone = 'Asia/Tokyo';
SELECT * FROM t;
RESET TimeZone;

-- only the owner changes settings
CREATE ROLE forst_expiry_other;
GRANT USAGE ON SCHEMA forst TO forst_expiry_other;
SET ROLE forst_expiry_other;
SELECT forst.advance_watermark('t', '2025-01-01');
SELECT forst.set_ttl('t', 'at', '1 hour');
-- it may read the settings (as reloptions), not write them
SELECT relid, attnum, attname FROM forst.expiry ORDER BY relid::text;
UPDATE forst.expiry SET ttl = '1 second' WHERE relid = 't'::regclass;
RESET ROLE;
REVOKE USAGE ON SCHEMA forst FROM forst_expiry_other;
DROP ROLE forst_expiry_other;

-- PREPARE of a transaction that changed settings is refused
BEGIN;
SELECT forst.advance_watermark('t', '2024-06-02');
PREPARE TRANSACTION 'p';
SELECT * FROM t;

-- a range over a table whose TTL column is its first key column starts at
-- the cutoff: the same rows as reading through the expired ones, and no
-- expired rows' blocks read once they are in SST files
CREATE TABLE lead (w timestamptz, k int, v text, PRIMARY KEY (w, k)) USING forst;
INSERT INTO lead SELECT timestamptz '2100-01-01 00:00+00' + h * interval '1 hour', k, repeat('x', 40)
  FROM generate_series(0, 9) h, generate_series(1, 2000) k;
SELECT forst.set_ttl('lead', 'w', NULL);
SELECT forst.advance_watermark('lead', '2100-01-01 05:00+00');
SELECT forst.checkpoint() > 0 AS flushed;
SET enable_seqscan = off;
SET TimeZone = 'UTC';
SELECT count(*), min(w), max(w) FROM lead WHERE w <= '2100-01-01 08:00+00';
SELECT count(*), min(w) FROM lead WHERE w >= '2100-01-01 02:00+00';
SELECT count(*) FROM lead WHERE w < '2100-01-01 05:00+00';
SELECT count(*) FROM lead WHERE w <= '2100-01-01 05:00+00';
SELECT w, k FROM lead ORDER BY w, k LIMIT 1;
SELECT w, k FROM lead WHERE w <= '2100-01-01 07:00+00' ORDER BY w DESC, k DESC LIMIT 1;
SELECT count(*) FROM lead WHERE k = 7;
-- blocks read: as many as for the live range stated outright
SELECT forst.stats_reset();
SELECT count(*) FROM lead WHERE w BETWEEN '2100-01-01 05:00+00' AND '2100-01-01 06:00+00';
SELECT block_cache_hits + block_cache_misses AS live_reads FROM forst.stats \gset
SELECT forst.stats_reset();
SELECT count(*) FROM lead WHERE w <= '2100-01-01 06:00+00';
SELECT block_cache_hits + block_cache_misses <= :live_reads + 10 AS no_expired_blocks_read FROM forst.stats;
RESET enable_seqscan;
RESET TimeZone;
DROP TABLE lead;

DROP TABLE w, s, t, heap_t;
-- the settings of dropped tables go with them
SELECT count(*) FROM forst.expiry;
DROP EXTENSION forst;
