-- Planner statistics of forst tables: sizes, ANALYZE's row count (also
-- when it samples fewer pseudo-blocks than the table has), estimates.
CREATE EXTENSION forst;
CREATE TABLE st (k bigint PRIMARY KEY, v text) USING forst;
INSERT INTO st SELECT g, md5(g::text) || md5((g + 1)::text) FROM generate_series(1, 40000) g;

-- never analyzed: the estimate comes from the rows written
SELECT reltuples < 0 AS never_analyzed FROM pg_class WHERE relname = 'st';
EXPLAIN (COSTS OFF) SELECT * FROM st WHERE k = 42;

-- a statistics target of 1 samples 300 rows from 300 pseudo-blocks, fewer
-- than the table has: the row count must still be exact
SET default_statistics_target = 1;
ANALYZE st;
SELECT relpages > 300 AS more_pages_than_sampled, reltuples AS rows
  FROM pg_class WHERE relname = 'st';
DELETE FROM st WHERE k % 4 = 0;
ANALYZE st;
SELECT reltuples AS rows FROM pg_class WHERE relname = 'st';
RESET default_statistics_target;
ANALYZE st;
SELECT reltuples AS rows FROM pg_class WHERE relname = 'st';
SELECT n_live_tup > 0 AS counted, last_analyze IS NOT NULL AS analyzed
  FROM pg_stat_user_tables WHERE relname = 'st';

-- the planner's estimates follow: a whole-table scan, a key, a key range
EXPLAIN (COSTS OFF) SELECT * FROM st WHERE k = 42;
CREATE FUNCTION plan_rows(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN ' || q LOOP
    RETURN (regexp_match(line, 'rows=(\d+)'))[1]::int;
  END LOOP;
END $$;
SELECT plan_rows('SELECT * FROM st') BETWEEN 29000 AND 31000 AS all_rows_ok,
       plan_rows('SELECT * FROM st WHERE k = 42') = 1 AS key_ok,
       plan_rows('SELECT * FROM st WHERE k BETWEEN 1000 AND 2999') BETWEEN 1000 AND 2000 AS range_ok;
DROP FUNCTION plan_rows;
DROP TABLE st;

-- the memtable pool: DROP TABLE and DROP DATABASE give memtables back
SELECT slabs > 0 AS has_slabs, slab_bytes > 0 AS has_size FROM forst.memory();
SELECT current_database() AS regress_db \gset
CREATE DATABASE forst_dropme;
\c forst_dropme
CREATE EXTENSION forst;
CREATE TABLE d1 (k int PRIMARY KEY, v text) USING forst;
CREATE TABLE d2 (v text) USING forst;
INSERT INTO d1 SELECT g, 'x' FROM generate_series(1, 1000) g;
INSERT INTO d2 SELECT 'y' FROM generate_series(1, 1000) g;
SELECT count(*) AS tables_here FROM forst.tables WHERE memtables > 0;
SELECT tables AS tables_before FROM forst.memory() \gset
\c :regress_db
DROP DATABASE forst_dropme;
SELECT :tables_before - tables AS tables_freed FROM forst.memory();
DROP EXTENSION forst;
