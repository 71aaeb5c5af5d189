-- Secondary indexes on expressions: an entry holds the expression's value,
-- computed from the row by whoever writes the entry.  Each statement runs
-- on a forst table and on a heap twin with the same indexes; contents,
-- errors and what queries through the indexes return must be the same.
CREATE EXTENSION forst;
CREATE ROLE ei_owner;
GRANT CREATE ON SCHEMA public TO ei_owner;
SET ROLE ei_owner;

CREATE TABLE ef (k int PRIMARY KEY, email text COLLATE "C", a int, b int, ts timestamptz) USING forst;
CREATE TABLE eh (k int PRIMARY KEY, email text COLLATE "C", a int, b int, ts timestamptz) USING heap;
INSERT INTO ef SELECT g, CASE WHEN g % 9 = 0 THEN NULL ELSE 'User' || g || '@Example.com' END,
  g % 20, g % 7, '2026-01-01'::timestamptz + g * interval '1 hour'
  FROM generate_series(1, 300) g;
INSERT INTO eh SELECT * FROM ef;
-- built over existing rows
CREATE INDEX ef_lower ON ef (lower(email));
CREATE INDEX eh_lower ON eh (lower(email));
-- an expression next to a column, and an expression of two columns
CREATE INDEX ef_ab ON ef (a, (a * 10 + b));
CREATE INDEX eh_ab ON eh (a, (a * 10 + b));
-- unique on an expression, and partial too
CREATE UNIQUE INDEX ef_email_u ON ef (lower(email));
CREATE UNIQUE INDEX eh_email_u ON eh (lower(email));
CREATE UNIQUE INDEX ef_day_u ON ef ((timezone('UTC', ts)::date)) WHERE b = 0 AND a = 0;
CREATE UNIQUE INDEX eh_day_u ON eh ((timezone('UTC', ts)::date)) WHERE b = 0 AND a = 0;
\d ef

SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM ef WHERE lower(email) = 'user7@example.com';
EXPLAIN (COSTS OFF) SELECT k FROM ef WHERE a = 3 AND a * 10 + b BETWEEN 30 AND 33;
EXPLAIN (COSTS OFF) SELECT lower(email) FROM ef WHERE lower(email) > 'user9' ORDER BY lower(email) LIMIT 3;
RESET enable_seqscan;

CREATE FUNCTION twin_diff() RETURNS SETOF text LANGUAGE sql AS $$
  (SELECT 'forst only: ' || f::text FROM (SELECT * FROM ef EXCEPT SELECT * FROM eh) f)
  UNION ALL
  (SELECT 'heap only: ' || h::text FROM (SELECT * FROM eh EXCEPT SELECT * FROM ef) h)
$$;
CREATE FUNCTION twins(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	rf text;
	rh text;
BEGIN
	BEGIN
		EXECUTE replace(q, '@T@', 'ef');
		rf := 'ok';
	EXCEPTION WHEN OTHERS THEN
		rf := SQLSTATE || ' ' || replace(SQLERRM, 'ef', '@T@');
	END;
	BEGIN
		EXECUTE replace(q, '@T@', 'eh');
		rh := 'ok';
	EXCEPTION WHEN OTHERS THEN
		rh := SQLSTATE || ' ' || replace(SQLERRM, 'eh', '@T@');
	END;
	RETURN CASE WHEN rf = rh THEN rf ELSE 'DIFFERENT forst: ' || rf || ' heap: ' || rh END;
END $$;
-- queries through the expression indexes on both twins, compared
CREATE FUNCTION through_indexes() RETURNS TABLE (q text, same boolean, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
	f text;
	h text;
BEGIN
	SET LOCAL enable_seqscan = off;
	FOR q IN SELECT x FROM (VALUES
		('SELECT k FROM @T@ WHERE lower(email) = ''user7@example.com'''),
		('SELECT lower(email), k FROM @T@ WHERE lower(email) BETWEEN ''user10'' AND ''user19'' ORDER BY 1'),
		('SELECT k FROM @T@ WHERE lower(email) IS NULL ORDER BY k'),
		('SELECT a, a * 10 + b, k FROM @T@ WHERE a = 3 AND a * 10 + b BETWEEN 30 AND 33 ORDER BY 2, 3'),
		('SELECT timezone(''UTC'', ts)::date, k FROM @T@ WHERE b = 0 AND a = 0 ORDER BY 1')) v(x)
	LOOP
		EXECUTE format('SELECT count(*)::text || string_agg(r::text, '','') FROM (%s) r', replace(q, '@T@', 'ef')) INTO f;
		EXECUTE format('SELECT count(*)::text || string_agg(r::text, '','') FROM (%s) r', replace(q, '@T@', 'eh')) INTO h;
		same := f IS NOT DISTINCT FROM h;
		EXECUTE format('SELECT count(*) FROM (%s) r', replace(q, '@T@', 'ef')) INTO n;
		RETURN NEXT;
	END LOOP;
END $$;
SELECT * FROM through_indexes();

-- writes that change an expression's value, or keep it while the
-- column changes (same lower()), or change the key
SELECT twins($$UPDATE @T@ SET email = upper(email) WHERE k BETWEEN 1 AND 20$$);
SELECT twins($$UPDATE @T@ SET email = 'renamed' || k || '@example.com' WHERE k BETWEEN 21 AND 30$$);
SELECT twins($$UPDATE @T@ SET b = b + 1 WHERE a = 3$$);
SELECT twins($$UPDATE @T@ SET k = k + 1000 WHERE k % 50 = 0$$);
SELECT twins($$DELETE FROM @T@ WHERE k BETWEEN 100 AND 110$$);
BEGIN;
SELECT twins($$UPDATE @T@ SET email = NULL WHERE k < 50$$);
ROLLBACK;
-- unique on lower(email): a different case is the same value
SELECT twins($$INSERT INTO @T@ VALUES (2001, 'USER40@example.COM', 0, 1, now())$$);
SELECT twins($$UPDATE @T@ SET email = 'user41@EXAMPLE.com' WHERE k = 42$$);
SELECT twins($$INSERT INTO @T@ VALUES (2002, 'new@example.com', 0, 1, now()), (2003, NULL, 0, 1, now()), (2004, NULL, 0, 1, now())$$);
SELECT twins($$INSERT INTO @T@ VALUES (2005, 'NEW@example.com', 0, 1, now()) ON CONFLICT (lower(email)) DO UPDATE SET a = -1$$);
-- unique per day among the rows with b = 0 and a = 0
SELECT twins($$INSERT INTO @T@ SELECT 2006, NULL, 0, 0, ts + interval '1 minute' FROM @T@ WHERE k = 140$$);
SELECT twins($$INSERT INTO @T@ SELECT 2006, NULL, 0, 1, ts + interval '1 minute' FROM @T@ WHERE k = 140$$);
SELECT twins($$UPDATE @T@ SET b = 0 WHERE k = 2006$$);
SELECT twins($$UPDATE @T@ SET b = 0, ts = ts + interval '2 days' WHERE k = 2006$$);
SELECT * FROM twin_diff();
SELECT * FROM through_indexes();

-- an expression that fails for a row fails the write, as on heap
CREATE INDEX ef_div ON ef ((100 / b));
CREATE INDEX ef_div ON ef ((100 / nullif(b, 0)));
CREATE INDEX eh_div ON eh ((100 / nullif(b, 0)));
SELECT twins($$INSERT INTO @T@ VALUES (3001, NULL, 1, 0, now())$$);
-- A failed CREATE INDEX CONCURRENTLY leaves an invalid index behind, not
-- ready for inserts.  As on heap, writers skip it: a DELETE or an UPDATE of
-- a row its expression fails for succeeds, and so does a new such row.
CREATE TABLE cf (k int PRIMARY KEY, d int) USING forst;
CREATE TABLE ch (k int PRIMARY KEY, d int);
INSERT INTO cf VALUES (1, 1), (2, 0), (3, 5), (4, 0), (5, 20);
INSERT INTO ch SELECT * FROM cf;
CREATE INDEX CONCURRENTLY cf_inv ON cf ((100 / d));
CREATE INDEX CONCURRENTLY ch_inv ON ch ((100 / d));
SELECT c.relname, i.indisvalid, i.indisready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indrelid IN ('cf'::regclass, 'ch'::regclass) AND NOT i.indisprimary ORDER BY 1;
DELETE FROM cf WHERE k = 2;
DELETE FROM ch WHERE k = 2;
UPDATE cf SET d = 2 WHERE k = 4;
UPDATE ch SET d = 2 WHERE k = 4;
BEGIN;
DELETE FROM cf WHERE k = 5;
DELETE FROM ch WHERE k = 5;
ROLLBACK;
UPDATE cf SET d = 0 WHERE k = 3;
UPDATE ch SET d = 0 WHERE k = 3;
INSERT INTO cf VALUES (6, 0);
INSERT INTO ch VALUES (6, 0);
SELECT k, d FROM cf ORDER BY k;
SELECT count(*) AS differences FROM ((TABLE cf EXCEPT TABLE ch) UNION ALL (TABLE ch EXCEPT TABLE cf)) x;
-- a REINDEX builds it anew, failing as heap's does while such rows remain
REINDEX INDEX cf_inv;
REINDEX INDEX ch_inv;
DELETE FROM cf WHERE d = 0;
DELETE FROM ch WHERE d = 0;
REINDEX INDEX cf_inv;
REINDEX INDEX ch_inv;
SELECT c.relname, i.indisvalid, i.indisready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indrelid IN ('cf'::regclass, 'ch'::regclass) AND NOT i.indisprimary ORDER BY 1;
-- valid, it answers as a scan of the table does
SET enable_seqscan = off;
SELECT k, d FROM cf WHERE 100 / d > 10 ORDER BY k;
EXPLAIN (COSTS OFF) SELECT k, d FROM cf WHERE 100 / d = 5;
SELECT k, d FROM cf WHERE 100 / d = 5;
RESET enable_seqscan;
SELECT k, d FROM cf WHERE 100 / d > 10 ORDER BY k;
INSERT INTO cf VALUES (7, 0);
DROP TABLE cf, ch;
-- a type forst has no operator class for
CREATE INDEX ON ef ((point(a, b)));
REINDEX TABLE ef;
SELECT * FROM through_indexes();
RESET ROLE;
DROP TABLE ef, eh;
DROP FUNCTION twin_diff(), twins(text), through_indexes();
REVOKE CREATE ON SCHEMA public FROM ei_owner;
DROP ROLE ei_owner;
DROP EXTENSION forst;
