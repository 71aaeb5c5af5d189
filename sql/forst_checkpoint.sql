-- Checkpoints and attach: restore, clone, time travel, split and merge by
-- key groups, on one server (t/013 does it across servers).
CREATE EXTENSION forst;
\set VERBOSITY default
CREATE TABLE ck (k bigint, w text COLLATE "C", v text NOT NULL DEFAULT 'none',
                 gone int, n int CHECK (n >= 0), PRIMARY KEY (k, w)) USING forst;
ALTER TABLE ck DROP COLUMN gone;   -- stored rows keep the dropped column's slot
INSERT INTO ck (k, w, v, n) SELECT g, 'w' || (g % 3), md5(g::text), g FROM generate_series(1, 5000) g;
INSERT INTO ck (k, w, n) VALUES (0, 'default', 0);

-- rows of a transaction that is still running when a checkpoint flushes
-- them, and that commits before the next checkpoint
BEGIN;
INSERT INTO ck (k, w, v, n) SELECT g, 'late', 'late', 1 FROM generate_series(1, 300) g;
SELECT forst.checkpoint() > 0 AS checkpoint_inside_transaction;
COMMIT;
-- rows of a transaction that aborts, and of one still running at the cut
BEGIN;
INSERT INTO ck (k, w, v, n) VALUES (-1, 'aborted', 'x', 1);
ROLLBACK;
CREATE TEMP TABLE expected AS
  SELECT count(*) AS n, md5(string_agg(ck::text, ',' ORDER BY k, w)) AS sum FROM ck;
BEGIN;
INSERT INTO ck (k, w, v, n) VALUES (-2, 'running', 'x', 1);
SELECT forst.checkpoint() AS c1 \gset
COMMIT;

SELECT status, database, tables, state_bytes > 0 AS has_state, error
  FROM forst.checkpoints WHERE id = :c1;
SELECT jsonb_path_query_array(forst.checkpoint_read(:c1), '$.tables[*].name') AS tables;

-- the live table moves on
UPDATE ck SET v = 'changed' WHERE k <= 100;
DELETE FROM ck WHERE k > 4000;

-- restore the checkpoint as a new table: the rows of the cut, nothing else
SELECT forst.attach('ck', :c1, as_table => 'ck_c1');
SELECT (SELECT n FROM expected) AS expected_rows,
       count(*) AS rows,
       md5(string_agg(ck_c1::text, ',' ORDER BY k, w)) = (SELECT sum FROM expected) AS same_rows
  FROM ck_c1;
SELECT count(*) FILTER (WHERE w = 'late') AS late,
       count(*) FILTER (WHERE k < 0) AS aborted_or_running
  FROM ck_c1;
-- the definition came along (dropped column, default, check, key, collation)
SELECT attname, format_type(atttypid, atttypmod), attnotnull, attisdropped
  FROM pg_attribute WHERE attrelid = 'ck_c1'::regclass AND attnum > 0 ORDER BY attnum;
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'ck_c1'::regclass ORDER BY 1;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid IN ('ck_c1'::regclass, 'ck_c1_pkey'::regclass) ORDER BY 1;

-- time travel: the checkpoint next to the live table
SELECT count(*) AS changed_since FROM ck JOIN ck_c1 USING (k, w) WHERE ck.v <> ck_c1.v;

-- the clone is a table of its own: writes on either side stay there
INSERT INTO ck_c1 (k, w, v, n) VALUES (5, 'w2', 'clone', 1)
  ON CONFLICT (k, w) DO UPDATE SET v = 'clone';
UPDATE ck_c1 SET n = n + 1 WHERE k BETWEEN 10 AND 20;
DELETE FROM ck_c1 WHERE k > 4990;
INSERT INTO ck (k, w, v, n) VALUES (5, 'w9', 'live', 1);
SELECT v FROM ck_c1 WHERE k = 5 AND w = 'w2';
SELECT v FROM ck WHERE k = 5 AND w = 'w2';
SELECT count(*) FROM ck_c1 WHERE k = 5;
SELECT count(*) FROM ck WHERE k > 4990;
INSERT INTO ck_c1 (k, w, v, n) VALUES (0, 'default', 'dup', 0);  -- unique violation

-- split by key groups: two tables, each owning half, zero bytes copied
SELECT forst.attach('ck', :c1, as_table => 'ck_lo', key_groups => '[0,64)');
SELECT forst.attach('ck', :c1, as_table => 'ck_hi', key_groups => '[64,128)');
SELECT (SELECT count(*) FROM ck_lo) + (SELECT count(*) FROM ck_hi) = (SELECT n FROM expected) AS halves_add_up,
       (SELECT count(*) FROM ck_lo WHERE forst.key_group(k) >= 64) AS lo_foreign,
       (SELECT count(*) FROM ck_hi WHERE forst.key_group(k) < 64) AS hi_foreign,
       (SELECT md5(string_agg(u::text, ',' ORDER BY k, w))
          FROM (SELECT * FROM ck_lo UNION ALL SELECT * FROM ck_hi) u) = (SELECT sum FROM expected) AS union_equal;
-- each half takes the keys of its own key groups only
INSERT INTO ck_lo (k, w, n) SELECT g, 'new', 1 FROM generate_series(10001, 10100) g
 WHERE forst.key_group(g::bigint) < 64;
INSERT INTO ck_hi (k, w, n) SELECT g, 'new', 1 FROM generate_series(10001, 10100) g
 WHERE forst.key_group(g::bigint) >= 64;
INSERT INTO ck_lo (k, w, n) SELECT g, 'new', 1 FROM generate_series(10001, 10100) g
 WHERE forst.key_group(g::bigint) >= 64 LIMIT 1;
-- merge the halves back (their files are shared, each read for its half)
SELECT forst.checkpoint() AS c2 \gset
SELECT forst.attach('ck_lo', :c2, as_table => 'ck_m', key_groups => '[0,64)');
SELECT forst.attach('ck_hi', :c2, as_table => 'ck_m', key_groups => '[64,128)', into_existing => true);
SELECT count(*) = (SELECT n FROM expected) + 100 AS merged_rows,
       md5(string_agg(ck_m::text, ',' ORDER BY k, w)) =
       (SELECT md5(string_agg(u::text, ',' ORDER BY k, w))
          FROM (SELECT * FROM ck_lo UNION ALL SELECT * FROM ck_hi) u) AS union_equal
  FROM ck_m;
INSERT INTO ck_m (k, w, n) VALUES (10001, 'any', 1), (10002, 'any', 1);  -- owns all now

-- errors (the first and the last name this cluster's random id: codes only)
\set VERBOSITY sqlstate
SELECT forst.attach('ck', 999999);
SELECT forst.checkpoint_read(:c1, 'no-such-cluster');
\set VERBOSITY default
SELECT forst.attach('nosuch', :c1);
SELECT forst.attach('ck', :c1, as_table => 'ck_c1');
SELECT forst.attach('ck', :c1, as_table => 'ck_x', mode => 'steal');
SELECT forst.attach('ck', :c1, as_table => 'ck_x', key_groups => '[5,)');
SELECT forst.attach('ck', :c1, as_table => 'ck_x', key_groups => '[0,200)');
SELECT forst.attach('ck', :c1, as_table => 'ck_m', key_groups => '[0,10)', into_existing => true);
SELECT forst.attach('ck', :c1, as_table => 'ck_lo', key_groups => '[100,128)', into_existing => true);
SELECT count(*) FROM pg_class WHERE relname = 'ck_x';

-- expiry settings come along: the TTL column, TTL and watermark the
-- source had at the checkpoint, not those it has now
SET TimeZone = 'UTC';
CREATE TABLE ex (k int, w timestamptz, v text, PRIMARY KEY (k, w)) USING forst;
INSERT INTO ex SELECT k, timestamptz '2100-01-01' + h * interval '1 hour', 'v'
  FROM generate_series(1, 20) k, generate_series(0, 9) h;
SELECT forst.set_ttl('ex', 'w', '2 days 03:00:00.5');
SELECT forst.advance_watermark('ex', '2100-01-01 03:30:00.123456');
CREATE TABLE ex_nottl (k int, w timestamp, PRIMARY KEY (k, w)) USING forst;
SELECT forst.set_ttl('ex_nottl', 'w', NULL);
CREATE TABLE ex_none (k int PRIMARY KEY, v text) USING forst;
-- a dropped TTL column expires nothing: nothing to carry over
CREATE TABLE ex_drop (k int PRIMARY KEY, x timestamptz) USING forst;
SELECT forst.set_ttl('ex_drop', 'x', '1 day');
ALTER TABLE ex_drop DROP COLUMN x;
SELECT forst.checkpoint() AS c3 \gset
SELECT forst.advance_watermark('ex', '2100-01-01 06:00:00');
SELECT t->>'name' AS name, t->'watermark_us' AS watermark_us, t->'expiry' AS expiry
  FROM jsonb_array_elements(forst.checkpoint_read(:c3)->'tables') t
 WHERE t->>'name' LIKE 'public.ex%' ORDER BY 1;
SELECT forst.attach('ex', :c3, as_table => 'ex_c3');
SELECT forst.attach('ex_nottl', :c3, as_table => 'ex_nottl_c3');
SELECT forst.attach('ex_none', :c3, as_table => 'ex_none_c3');
SELECT forst.attach('ex_drop', :c3, as_table => 'ex_drop_c3');
SELECT r AS tbl, e.ttl_column, e.ttl, e.watermark
  FROM unnest(ARRAY['ex', 'ex_c3', 'ex_nottl_c3', 'ex_none_c3', 'ex_drop_c3']::regclass[]) r,
       forst.table_expiry(r) e;
SELECT (SELECT count(*) FROM ex) AS source_rows, (SELECT count(*) FROM ex_c3) AS attached_rows,
       (SELECT min(w) FROM ex_c3) AS first_window;
-- merged into an existing table, the table keeps its own settings
CREATE TABLE ex_m (k int, w timestamptz, v text, PRIMARY KEY (k, w)) USING forst;
SELECT forst.attach('ex', :c3, as_table => 'ex_m', into_existing => true);
SELECT ttl_column, ttl, watermark FROM forst.table_expiry('ex_m');
SELECT count(*) AS merged_rows FROM ex_m;
DROP TABLE ex, ex_c3, ex_nottl, ex_nottl_c3, ex_none, ex_none_c3, ex_drop, ex_drop_c3, ex_m;
RESET TimeZone;

-- savepoints: a copy that outlives the source and its checkpoints
SELECT forst.savepoint('sp-1') LIKE '%/savepoints/sp-1' AS savepoint_taken;
CREATE TEMP TABLE sp_expected AS
  SELECT count(*) AS n, md5(string_agg(ck_m::text, ',' ORDER BY k, w)) AS sum FROM ck_m;
SELECT forst.savepoint('sp-1');                 -- exists
SELECT forst.savepoint('../x');                 -- bad name
SELECT jsonb_path_query_array(forst.savepoint_read('sp-1'), '$.tables[*].name') AS tables;
DROP TABLE ck, ck_c1, ck_lo, ck_hi, ck_m;
SELECT forst.checkpoint() > 0 AS retire FROM generate_series(1, 3);
SET forst.gc_grace = 0;
SELECT objects_deleted > 0 AS collected FROM forst.gc();
SELECT forst.attach('ck_m', savepoint => 'sp-1', as_table => 'ck_back');
SELECT count(*) = (SELECT n FROM sp_expected) AS same_count,
       md5(string_agg(ck_back::text, ',' ORDER BY k, w)) = (SELECT sum FROM sp_expected) AS same_rows
  FROM ck_back;
SELECT forst.attach('ck_m', savepoint => 'sp-1', checkpoint => 1, as_table => 'ck_x');
\set VERBOSITY terse
SELECT forst.drop_savepoint('sp-1');            -- in use
\set VERBOSITY default
DROP TABLE ck_back;
SELECT pins_dropped FROM forst.gc();
SELECT forst.drop_savepoint('sp-1') > 0 AS dropped;
SELECT forst.drop_savepoint('sp-1');            -- gone
SELECT count(*) FROM forst.progress;            -- nothing running now
RESET forst.gc_grace;

DROP EXTENSION forst;
