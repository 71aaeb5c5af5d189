-- forst tables: DDL, DML with heap semantics, MVCC within one session,
-- and what is refused.
CREATE EXTENSION forst;

CREATE TABLE clicks (user_id bigint, w timestamptz, n bigint NOT NULL,
                     PRIMARY KEY (user_id, w)) USING forst;
\d clicks
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('clicks', 'clicks_pkey') ORDER BY 1;

INSERT INTO clicks VALUES (1, '2026-01-01', 5), (2, '2026-01-01', 7),
                          (1, '2026-01-02', 1);
SELECT * FROM clicks ORDER BY user_id, w;
SELECT * FROM clicks WHERE user_id = 1 ORDER BY w;
EXPLAIN (COSTS OFF) SELECT * FROM clicks WHERE user_id = 1;
SELECT n FROM clicks WHERE user_id = 1 AND w = '2026-01-02';
SELECT n FROM clicks WHERE user_id = 1::int AND w = '2026-01-02';  -- cross-type

-- unique violations
INSERT INTO clicks VALUES (1, '2026-01-01', 9);
INSERT INTO clicks VALUES (4, '2026-01-01', 1), (4, '2026-01-01', 2);
SELECT count(*) FROM clicks WHERE user_id = 4;

-- update, key-changing update, delete, RETURNING
UPDATE clicks SET n = n + 10 WHERE user_id = 1 RETURNING *;
UPDATE clicks SET user_id = 3 WHERE user_id = 2 RETURNING user_id, n;
UPDATE clicks SET user_id = 1, w = '2026-01-01' WHERE user_id = 3;  -- collides
DELETE FROM clicks WHERE user_id = 3 RETURNING *;
SELECT * FROM clicks ORDER BY user_id, w;

-- transactions, rollback, savepoints
BEGIN;
INSERT INTO clicks VALUES (10, '2026-01-01', 1);
SAVEPOINT s1;
INSERT INTO clicks VALUES (11, '2026-01-01', 1);
UPDATE clicks SET n = 100 WHERE user_id = 10;
ROLLBACK TO s1;
SELECT user_id, n FROM clicks WHERE user_id >= 10 ORDER BY 1;
DELETE FROM clicks WHERE user_id = 10;
SELECT count(*) FROM clicks WHERE user_id >= 10;
ROLLBACK;
SELECT count(*) FROM clicks WHERE user_id >= 10;
-- a key deleted and inserted again in one transaction
BEGIN;
DELETE FROM clicks WHERE user_id = 1 AND w = '2026-01-01';
INSERT INTO clicks VALUES (1, '2026-01-01', 42);
COMMIT;
SELECT n FROM clicks WHERE user_id = 1 AND w = '2026-01-01';

-- ranges and ordering through the key
INSERT INTO clicks SELECT g, '2026-02-01', g FROM generate_series(100, 199) g;
SELECT count(*), min(user_id), max(user_id) FROM clicks WHERE user_id BETWEEN 120 AND 129;
SELECT user_id FROM clicks WHERE user_id > 195 ORDER BY user_id;
SELECT user_id FROM clicks ORDER BY user_id, w LIMIT 5;
EXPLAIN (COSTS OFF) SELECT user_id FROM clicks WHERE user_id > 195 ORDER BY user_id;

-- text keys are compared as bytes (COLLATE "C" by default)
CREATE TABLE words (w text PRIMARY KEY, n int) USING forst;
SELECT collname FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
 WHERE attrelid = 'words'::regclass AND attname = 'w';
INSERT INTO words VALUES ('b', 2), ('a', 1), ('B', 3), ('ab', 4), ('', 0);
SELECT * FROM words ORDER BY w;
SELECT n FROM words WHERE w = 'ab';
CREATE TABLE words_fr (w text COLLATE "und-x-icu" PRIMARY KEY) USING forst;

-- tables without a primary key have a hidden row id
CREATE TABLE events (id int, payload text) USING forst;
INSERT INTO events SELECT g, repeat('x', g % 50) FROM generate_series(1, 2000) g;
SELECT count(*), sum(id), sum(length(payload)) FROM events;
UPDATE events SET payload = 'updated' WHERE id % 100 = 0;
DELETE FROM events WHERE id > 1000;
SELECT count(*), count(*) FILTER (WHERE payload = 'updated') FROM events;

-- large values are stored whole (no TOAST), within forst.max_row_size
INSERT INTO events VALUES (5000, repeat('y', 100000));
SELECT length(payload) FROM events WHERE id = 5000;
INSERT INTO events VALUES (5001, repeat('z', 2000000));

-- TRUNCATE is transactional
BEGIN;
TRUNCATE events;
SELECT count(*) FROM events;
ROLLBACK;
SELECT count(*) FROM events;
TRUNCATE events;
SELECT count(*) FROM events;
INSERT INTO events VALUES (1, 'again');
SELECT * FROM events;

-- COPY in and out
COPY clicks (user_id, w, n) FROM stdin;
500	2026-03-01 00:00:00+00	5
501	2026-03-01 00:00:00+00	6
\.
COPY (SELECT * FROM clicks WHERE user_id >= 500 ORDER BY user_id) TO stdout;

-- refused, with reasons
CREATE INDEX ON clicks USING hash (n);
CREATE TABLE t_inet (k inet PRIMARY KEY) USING forst;
CREATE TEMP TABLE t_tmp (k int PRIMARY KEY) USING forst;
-- under default_table_access_method = forst: a temporary table (also by
-- CREATE TABLE AS and SELECT INTO) is a heap table, with a NOTICE; a
-- partitioned table gets no access method, as PostgreSQL gives it none,
-- and its partitions are forst tables
SET default_table_access_method = forst;
CREATE TEMP TABLE t_tmp_default (k int PRIMARY KEY, v text);
INSERT INTO t_tmp_default VALUES (1, 'a') ON CONFLICT (k) DO NOTHING;
CREATE TEMP TABLE t_tmp_ctas AS SELECT 1 AS k;
SELECT 1 AS k INTO TEMP t_tmp_into;
CREATE TABLE pg_temp.t_tmp_schema (k int PRIMARY KEY);
CREATE TABLE t_perm_ctas AS SELECT 1 AS k;
CREATE TABLE t_parted (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE t_parted_1 PARTITION OF t_parted (PRIMARY KEY (k)) FOR VALUES FROM (0) TO (100);
INSERT INTO t_parted VALUES (1, 'a'), (50, 'b');
SELECT c.relname, c.relkind, c.relpersistence, a.amname
  FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('t_tmp_default', 't_tmp_default_pkey', 't_tmp_ctas', 't_tmp_into', 't_tmp_schema', 't_perm_ctas',
                     't_parted', 't_parted_1', 't_parted_1_pkey') ORDER BY 1;
SELECT * FROM t_parted ORDER BY k;
CREATE TABLE t_parted_at (k int) PARTITION BY RANGE (k) USING forst;
RESET default_table_access_method;
DROP TABLE t_tmp_default, t_tmp_ctas, t_tmp_into, t_tmp_schema, t_perm_ctas, t_parted;
-- serial key columns (serial is no type: CREATE TABLE makes it one)
CREATE TABLE t_serial (id bigserial, n smallserial, v text, PRIMARY KEY (id, n)) USING forst;
CREATE TABLE t_serial1 (id serial PRIMARY KEY, v text) USING forst;
INSERT INTO t_serial (v) VALUES ('a'), ('b');
INSERT INTO t_serial1 (v) VALUES ('a'), ('b');
SELECT * FROM t_serial ORDER BY id;
SELECT * FROM t_serial1 ORDER BY id;
DROP TABLE t_serial, t_serial1;
-- numeric keys: equal values of any scale are one key
CREATE TABLE t_numkey (k numeric PRIMARY KEY, v text) USING forst;
INSERT INTO t_numkey VALUES (1.5, 'a'), (-2, 'b'), (0, 'c'), ('NaN', 'd'), (1e20, 'e'),
  (0.001, 'f'), ('-Infinity', 'g'), (-0.5, 'h');
INSERT INTO t_numkey VALUES (1.50, 'again');
INSERT INTO t_numkey VALUES (1.500, 'updated') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM t_numkey WHERE k BETWEEN 0 AND 2;
SELECT * FROM t_numkey WHERE k BETWEEN 0 AND 2 ORDER BY k;
SELECT * FROM t_numkey WHERE k = 1.5000;
SELECT * FROM t_numkey WHERE k < 0 ORDER BY k DESC;
SELECT * FROM t_numkey ORDER BY k DESC LIMIT 2;
RESET enable_seqscan;
DROP TABLE t_numkey;
-- INCLUDE columns of the key are accepted (and stored nowhere but the row)
CREATE TABLE t_incl (k int, w int, v text, PRIMARY KEY (k, w) INCLUDE (v)) USING forst;
INSERT INTO t_incl SELECT g % 10, g, 'v' || g FROM generate_series(1, 100) g;
INSERT INTO t_incl VALUES (1, 1, 'x') ON CONFLICT (k, w) DO UPDATE SET v = 'updated';
SELECT pg_get_indexdef('t_incl_pkey'::regclass);
SELECT * FROM t_incl WHERE k = 1 AND w IN (1, 11) ORDER BY w;
DROP TABLE t_incl;
-- UNLOGGED: checkpoint-durable (no WAL per row; t/033_checkpoint_durable.pl)
CREATE UNLOGGED TABLE t_unl (k int PRIMARY KEY, v text) USING forst;
INSERT INTO t_unl VALUES (1, 'a'), (2, 'b');
ALTER TABLE t_unl SET LOGGED;       -- written again, as a logged table
SELECT c.relpersistence, t.* FROM t_unl t, pg_class c WHERE c.relname = 't_unl' ORDER BY k;
ALTER TABLE t_unl SET UNLOGGED;
SELECT c.relpersistence, t.* FROM t_unl t, pg_class c WHERE c.relname = 't_unl' ORDER BY k;
-- a transaction that writes logged and unlogged forst tables is told so
CREATE TABLE t_log (k int PRIMARY KEY) USING forst;
BEGIN;
INSERT INTO t_unl VALUES (3, 'c');
INSERT INTO t_log VALUES (3);          -- WARNING, once
INSERT INTO t_log VALUES (4);
COMMIT;
SET forst.mixed_durability = error;
INSERT INTO t_unl SELECT k + 10, 'd' FROM t_log;   -- reads t_log: fine
BEGIN;
INSERT INTO t_log VALUES (5);
INSERT INTO t_unl VALUES (5, 'e');     -- ERROR
ROLLBACK;
SET forst.mixed_durability = allow;
BEGIN;
INSERT INTO t_log VALUES (6);
INSERT INTO t_unl VALUES (6, 'f');
COMMIT;
RESET forst.mixed_durability;
SELECT (SELECT array_agg(k ORDER BY k) FROM t_unl) AS unlogged,
       (SELECT array_agg(k ORDER BY k) FROM t_log) AS logged;
DROP TABLE t_unl, t_log;
CLUSTER clicks USING clicks_pkey;
VACUUM FULL clicks;
SELECT * FROM clicks TABLESAMPLE SYSTEM (10);
-- a key added to a table with rows: the table is written again under it
-- (sql/forst_rekey.sql)
ALTER TABLE events ADD PRIMARY KEY (id);
SELECT * FROM events WHERE id = 1;
CREATE TABLE later (k int NOT NULL, v int) USING forst;
ALTER TABLE later ADD PRIMARY KEY (k);
INSERT INTO later VALUES (1, 1);
INSERT INTO later VALUES (1, 2);

-- what the tables hold (forst.tables, forst.files)
SELECT "table", memtables, memtable_entries > 0 AS has_entries, sst_files,
       array_length(level_files, 1) AS levels, key_groups
  FROM forst.tables ORDER BY "table"::text;
SELECT count(*) FROM forst.files;
SELECT * FROM forst.table_info('pg_class');

-- VACUUM and ANALYZE run
VACUUM clicks;
ANALYZE clicks;
SELECT reltuples > 0 FROM pg_class WHERE relname = 'clicks';

-- backward key scans: max(), ORDER BY ... DESC (the cursors read backward)
CREATE TABLE desc_t (a int, b int, v text, PRIMARY KEY (a, b)) USING forst;
INSERT INTO desc_t SELECT g % 7, g, 'v' || g FROM generate_series(1, 500) g;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT max(a) FROM desc_t;
SELECT max(a), min(a) FROM desc_t;
SELECT max(b) FROM desc_t WHERE a = 3;
SELECT a, b FROM desc_t WHERE a = 3 ORDER BY a DESC, b DESC LIMIT 4;
SELECT a, b FROM desc_t WHERE a BETWEEN 2 AND 4 AND b < 20 ORDER BY a DESC, b DESC;
RESET enable_seqscan;
SELECT (SELECT string_agg(a || ':' || b, ',' ORDER BY a DESC, b DESC) FROM desc_t) =
       (SELECT string_agg(a || ':' || b, ',' ORDER BY a DESC, b DESC)
          FROM (SELECT a, b FROM desc_t OFFSET 0) s) AS desc_matches;
DROP TABLE desc_t;

DROP TABLE clicks, words, events, later;
DROP EXTENSION forst;
