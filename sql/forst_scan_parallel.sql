--
-- A parallel sequential scan of a forst table: its participants split the
-- table by key group (each claims the next one left), so together they
-- return every row once, and each of them returns some.
--
CREATE EXTENSION forst;
CREATE TABLE ps (k bigint PRIMARY KEY, v int NOT NULL) USING forst;
CREATE TABLE ps_h (k bigint PRIMARY KEY, v int NOT NULL);
INSERT INTO ps SELECT i, i % 1000 FROM generate_series(1, 100000) i;
INSERT INTO ps_h SELECT * FROM ps;
SELECT forst.checkpoint() > 0 AS checkpointed;
-- and rows in memtables: new, updated, deleted
INSERT INTO ps SELECT i, 7 FROM generate_series(100001, 110000) i;
INSERT INTO ps_h SELECT i, 7 FROM generate_series(100001, 110000) i;
UPDATE ps SET v = v + 1 WHERE k % 10 = 0;
UPDATE ps_h SET v = v + 1 WHERE k % 10 = 0;
DELETE FROM ps WHERE k % 13 = 0;
DELETE FROM ps_h WHERE k % 13 = 0;
-- a table keyed by hidden row ids
CREATE TABLE ps_rowid (v int) USING forst;
INSERT INTO ps_rowid SELECT i FROM generate_series(1, 30000) i;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v), sum(k) FROM ps;
SELECT (SELECT (count(*), sum(v), sum(k)) FROM ps) = (SELECT (count(*), sum(v), sum(k)) FROM ps_h)
  AS same_as_heap;
SELECT count(*), sum(v) FROM ps_rowid;
-- no row twice
SET enable_indexscan = off;
SET enable_sort = off;
EXPLAIN (COSTS OFF) SELECT k FROM ps GROUP BY k HAVING count(*) > 1;
SELECT k FROM ps GROUP BY k HAVING count(*) > 1;

-- the workers, without the leader, return every row between them, and
-- both return some: a row in a hundred takes a moment, so that neither
-- can claim every key group before the other starts
CREATE FUNCTION scan_split(q text, expected bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
    scan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO plan;
    scan := jsonb_path_query_first(plan, 'strict $.**?(@."Node Type" == "Seq Scan")');
    RETURN format('parallel %s, workers launched %s, workers that returned rows %s, rows as expected %s',
                  scan->'Parallel Aware',
                  jsonb_path_query_first(plan, 'strict $.**."Workers Launched"'),
                  (SELECT count(*) FROM jsonb_array_elements(scan->'Workers') w
                    WHERE (w->>'Actual Rows')::bigint > 0),
                  (SELECT sum((w->>'Actual Rows')::bigint) FROM jsonb_array_elements(scan->'Workers') w)
                    = expected);
END $$;
SET parallel_leader_participation = off;
SELECT scan_split('SELECT count(*) FROM ps WHERE CASE WHEN k % 100 = 0 THEN pg_sleep(0.001) IS NOT NULL ELSE true END',
                  (SELECT count(*) FROM ps_h));
SELECT (SELECT (count(*), sum(v), sum(k)) FROM ps) = (SELECT (count(*), sum(v), sum(k)) FROM ps_h)
  AS same_as_heap;

RESET parallel_leader_participation;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET enable_indexscan;
RESET enable_sort;
DROP TABLE ps, ps_h, ps_rowid;
DROP FUNCTION scan_split(text, bigint);
DROP EXTENSION forst;
