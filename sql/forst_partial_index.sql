-- Partial secondary indexes on forst tables: a row has an entry exactly
-- when the index's WHERE is true for it.  Each statement runs on a forst
-- table and on a heap twin with the same indexes; their contents, their
-- errors and what queries through the indexes return must be the same.
CREATE EXTENSION forst;
CREATE ROLE pi_owner;
GRANT CREATE ON SCHEMA public TO pi_owner;
SET ROLE pi_owner;

CREATE TABLE pf (k int PRIMARY KEY, a int, st text COLLATE "C", v text) USING forst;
CREATE TABLE ph (k int PRIMARY KEY, a int, st text COLLATE "C", v text) USING heap;
INSERT INTO pf SELECT g, g % 50, CASE WHEN g % 10 = 0 THEN 'open' ELSE 'closed' END, 'v' || g
  FROM generate_series(1, 500) g;
INSERT INTO ph SELECT * FROM pf;
-- built over existing rows: only the open ones get entries
CREATE INDEX pf_open ON pf (a) WHERE st = 'open';
CREATE INDEX ph_open ON ph (a) WHERE st = 'open';
-- a predicate on another column than the indexed one, and a NULL test
CREATE INDEX pf_vnull ON pf (k) WHERE v IS NULL;
CREATE INDEX ph_vnull ON ph (k) WHERE v IS NULL;
-- unique among the rows the predicate holds
CREATE UNIQUE INDEX pf_lead ON pf (a) WHERE st = 'lead';
CREATE UNIQUE INDEX ph_lead ON ph (a) WHERE st = 'lead';
\d pf
SELECT indexrelid::regclass, pg_get_indexdef(indexrelid)
FROM pg_index WHERE indrelid = 'pf'::regclass ORDER BY 1;

-- the planner uses a partial index only where the query implies its WHERE
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM pf WHERE st = 'open' AND a = 10;
EXPLAIN (COSTS OFF) SELECT k FROM pf WHERE st = 'open' ORDER BY a LIMIT 3;
EXPLAIN (COSTS OFF) SELECT k FROM pf WHERE a = 10;
EXPLAIN (COSTS OFF) SELECT k FROM pf WHERE v IS NULL;
RESET enable_seqscan;

-- rows of the twins that differ (none when they are equal)
CREATE FUNCTION twin_diff() RETURNS SETOF text LANGUAGE sql AS $$
  (SELECT 'forst only: ' || f::text FROM (SELECT * FROM pf EXCEPT SELECT * FROM ph) f)
  UNION ALL
  (SELECT 'heap only: ' || h::text FROM (SELECT * FROM ph EXCEPT SELECT * FROM pf) h)
$$;
-- a statement on both twins (@T@ is the table): each outcome
CREATE FUNCTION twins(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	rf text;
	rh text;
BEGIN
	BEGIN
		EXECUTE replace(q, '@T@', 'pf');
		rf := 'ok';
	EXCEPTION WHEN OTHERS THEN
		rf := SQLSTATE || ' ' || replace(SQLERRM, 'pf', '@T@');
	END;
	BEGIN
		EXECUTE replace(q, '@T@', 'ph');
		rh := 'ok';
	EXCEPTION WHEN OTHERS THEN
		rh := SQLSTATE || ' ' || replace(SQLERRM, 'ph', '@T@');
	END;
	RETURN CASE WHEN rf = rh THEN rf ELSE 'DIFFERENT forst: ' || rf || ' heap: ' || rh END;
END $$;
-- queries through the partial indexes, on both twins, compared; a row
-- that left an index's WHERE without a tombstone over its entry would be
-- returned here (the planner does not check a condition the WHERE implies)
CREATE FUNCTION through_indexes() RETURNS TABLE (q text, same boolean, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
	f text;
	h text;
BEGIN
	SET LOCAL enable_seqscan = off;
	FOR q IN SELECT x FROM (VALUES
		('SELECT k, a FROM @T@ WHERE st = ''open'' AND a = 10 ORDER BY k'),
		('SELECT a, k FROM @T@ WHERE st = ''open'' AND a BETWEEN 5 AND 20 ORDER BY a, k'),
		('SELECT count(*) FROM @T@ WHERE st = ''open'''),
		('SELECT k FROM @T@ WHERE v IS NULL ORDER BY k'),
		('SELECT a, k FROM @T@ WHERE st = ''lead'' ORDER BY a')) v(x)
	LOOP
		EXECUTE format('SELECT count(*)::text || string_agg(r::text, '','') FROM (%s) r', replace(q, '@T@', 'pf')) INTO f;
		EXECUTE format('SELECT count(*)::text || string_agg(r::text, '','') FROM (%s) r', replace(q, '@T@', 'ph')) INTO h;
		same := f IS NOT DISTINCT FROM h;
		EXECUTE format('SELECT count(*) FROM (%s) r', replace(q, '@T@', 'pf')) INTO n;
		RETURN NEXT;
	END LOOP;
END $$;
SELECT * FROM through_indexes();

-- rows enter and leave the predicates: by insert, update of the
-- predicate's column only, of the indexed column, of the key, by delete
SELECT twins($$INSERT INTO @T@ VALUES (1001, 10, 'open', NULL), (1002, 11, 'closed', NULL)$$);
SELECT twins($$UPDATE @T@ SET st = 'closed' WHERE k IN (10, 20, 30)$$);
SELECT twins($$UPDATE @T@ SET st = 'open' WHERE k IN (11, 21, 1002)$$);
SELECT twins($$UPDATE @T@ SET a = a + 1 WHERE st = 'open' AND k < 100$$);
SELECT twins($$UPDATE @T@ SET k = k + 2000 WHERE k IN (40, 50, 1001)$$);
SELECT twins($$UPDATE @T@ SET v = 'set' WHERE k = 1002$$);
SELECT twins($$UPDATE @T@ SET v = NULL WHERE k BETWEEN 100 AND 103$$);
SELECT twins($$DELETE FROM @T@ WHERE k IN (60, 70, 101)$$);
-- rolled back: the entries go with the rows
BEGIN;
SELECT twins($$UPDATE @T@ SET st = 'open' WHERE k BETWEEN 200 AND 230$$);
SELECT twins($$DELETE FROM @T@ WHERE st = 'open' AND a < 5$$);
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT twins($$UPDATE @T@ SET st = 'closed' WHERE st = 'open'$$);
ROLLBACK TO s;
COMMIT;
SELECT * FROM twin_diff();
SELECT * FROM through_indexes();

-- a partial UNIQUE index: values must differ among the rows it holds only
SELECT twins($$UPDATE @T@ SET st = 'lead' WHERE k IN (1, 2, 3)$$);
SELECT twins($$INSERT INTO @T@ VALUES (5001, 1, 'lead', 'dup of k=1')$$);
SELECT twins($$INSERT INTO @T@ VALUES (5001, 1, 'closed', 'same a, not a lead')$$);
-- an update that moves a row into the predicate is checked, one that
-- moves the other out frees the value
SELECT twins($$UPDATE @T@ SET st = 'lead' WHERE k = 5001$$);
SELECT twins($$UPDATE @T@ SET st = 'closed' WHERE k = 1$$);
SELECT twins($$UPDATE @T@ SET st = 'lead' WHERE k = 5001$$);
-- ON CONFLICT infers the partial index from the statement's WHERE
SELECT twins($$INSERT INTO @T@ VALUES (5002, 2, 'lead', 'upsert') ON CONFLICT (a) WHERE st = 'lead' DO UPDATE SET v = 'upserted ' || excluded.k$$);
SELECT twins($$INSERT INTO @T@ VALUES (5003, 3, 'lead', 'nothing') ON CONFLICT (a) WHERE st = 'lead' DO NOTHING$$);
SELECT twins($$INSERT INTO @T@ VALUES (5004, 4, 'lead', 'new lead') ON CONFLICT (a) WHERE st = 'lead' DO NOTHING$$);
-- without the WHERE there is no arbiter to infer, as on heap
SELECT twins($$INSERT INTO @T@ VALUES (5005, 4, 'lead', 'x') ON CONFLICT (a) DO NOTHING$$);
SELECT * FROM twin_diff();
SELECT * FROM through_indexes();
SELECT k, a, st, v FROM pf WHERE st = 'lead' ORDER BY a;

-- a duplicate among the rows the predicate holds fails the build
CREATE UNIQUE INDEX pf_open_u ON pf (a) WHERE st = 'open';
CREATE UNIQUE INDEX pf_open_u ON pf (k) WHERE st = 'open';
-- REINDEX builds again with the predicate
REINDEX TABLE pf;
SELECT * FROM through_indexes();
-- dropped: its entries with it, the others stay
DROP INDEX pf_vnull;
SELECT * FROM through_indexes();
RESET ROLE;
DROP TABLE pf, ph;
DROP FUNCTION twin_diff(), twins(text), through_indexes();
REVOKE CREATE ON SCHEMA public FROM pi_owner;
DROP ROLE pi_owner;
DROP EXTENSION forst;
