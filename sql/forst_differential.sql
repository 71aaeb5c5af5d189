-- Differential test: the same random DML, from a fixed seed, applied to a
-- forst table and to a heap twin of the same schema; after every step both
-- must hold the same rows, and every statement must have the same outcome
-- (row count, or SQLSTATE of its error).  The first difference raises an
-- exception naming the step and the statement.
--
-- Transactions commit or roll back at random; PL/pgSQL exception blocks
-- (subtransactions) roll back a random subset of statements.  Multi-row
-- key-changing updates move keys between disjoint ranges (k1 < 100 and
-- k1 >= 100; k2 to upper case) so that their outcome does not depend on
-- the order in which rows are visited (a unique check is immediate).
CREATE EXTENSION forst;
SET client_min_messages = warning;

CREATE TABLE df (k1 bigint, k2 text COLLATE "C", a int, b text, c text,
                 PRIMARY KEY (k1, k2)) USING forst;
CREATE TABLE dh (k1 bigint, k2 text COLLATE "C", a int, b text, c text,
                 PRIMARY KEY (k1, k2)) USING heap;
-- secondary indexes on both: forst's in the table, heap's btrees
CREATE INDEX df_a ON df (a);
CREATE INDEX df_b ON df (b);
CREATE INDEX df_ab ON df (a, b COLLATE "C");
CREATE INDEX dh_a ON dh (a);
CREATE INDEX dh_b ON dh (b);
CREATE INDEX dh_ab ON dh (a, b COLLATE "C");
-- keyless twins (hidden row id): compared as multisets
CREATE TABLE nf (id int, v text, n int) USING forst;
CREATE TABLE nh (id int, v text, n int) USING heap;
CREATE INDEX nf_n ON nf (n);
CREATE INDEX nh_n ON nh (n);
-- partial indexes: rows enter and leave their WHERE as the DML changes them
CREATE INDEX df_ap ON df (a) WHERE b IS NOT NULL;
CREATE INDEX dh_ap ON dh (a) WHERE b IS NOT NULL;
CREATE INDEX nf_idp ON nf (id) WHERE n > 500;
CREATE INDEX nh_idp ON nh (id) WHERE n > 500;
-- on an expression of two columns
CREATE INDEX df_ex ON df ((coalesce(a, 0) + length(b)));
CREATE INDEX dh_ex ON dh ((coalesce(a, 0) + length(b)));

-- Runs one statement on table t ('@T@' in stmt); its outcome as text.
CREATE FUNCTION diff_try(stmt text, t text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE replace(stmt, '@T@', quote_ident(t));
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN 'ok ' || n;
EXCEPTION WHEN OTHERS THEN
	-- the message of a unique violation names the index; others are kept
	-- (with the table's name masked) to show what went wrong
	RETURN 'error ' || SQLSTATE || CASE WHEN SQLSTATE = '23505' THEN ''
		ELSE ': ' || replace(SQLERRM, t, '@T@') END;
END $$;

-- Contents of a keyed table in key order, as one digest.
CREATE FUNCTION diff_digest(t text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	EXECUTE format('SELECT count(*) || '' '' || md5(coalesce(string_agg(x::text, E''\n'' ORDER BY k1, k2), ''''))
	                  FROM %I x', t) INTO d;
	RETURN d;
END $$;

-- Raises if df and dh differ (as ordered lists) or nf and nh (as multisets).
CREATE FUNCTION diff_check(step int, what text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	df_d text := diff_digest('df');
	dh_d text := diff_digest('dh');
	n bigint;
	sample text;
BEGIN
	IF df_d IS DISTINCT FROM dh_d THEN
		SELECT string_agg(s, '; ') INTO sample FROM (
			(SELECT 'only forst: ' || x::text AS s FROM
			   (SELECT k1, k2, a, b, md5(c) FROM df EXCEPT ALL SELECT k1, k2, a, b, md5(c) FROM dh) x LIMIT 3)
			UNION ALL
			(SELECT 'only heap: ' || x::text FROM
			   (SELECT k1, k2, a, b, md5(c) FROM dh EXCEPT ALL SELECT k1, k2, a, b, md5(c) FROM df) x LIMIT 3)) y;
		RAISE EXCEPTION 'step %: keyed tables differ after %: forst % heap %: %',
			step, what, df_d, dh_d, sample;
	END IF;
	SELECT count(*) INTO n FROM ((TABLE nf EXCEPT ALL TABLE nh) UNION ALL
	                             (TABLE nh EXCEPT ALL TABLE nf)) x;
	IF n <> 0 THEN
		RAISE EXCEPTION 'step %: keyless tables differ after %: % rows', step, what, n;
	END IF;
END $$;

-- The same query on forst through its key index, on forst by a sequential
-- scan (and sort), and on heap: all three must agree, row order included.
CREATE FUNCTION diff_scan_query() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	x bigint := rk1();
	y text := quote_literal(rk2());
	n int := 1 + r(20);
	a int := r(1000);
BEGIN
	RETURN (ARRAY[
		format('SELECT * FROM @T@ WHERE k1 = %s AND k2 = %s', x, y),
		format('SELECT * FROM @T@ WHERE k1 = %s ORDER BY k1, k2', x),
		format('SELECT * FROM @T@ WHERE k1 BETWEEN %s AND %s ORDER BY k1, k2', x, x + r(10)),
		format('SELECT * FROM @T@ ORDER BY k1, k2 LIMIT %s', n),
		format('SELECT * FROM @T@ WHERE k1 > %s ORDER BY k1, k2 LIMIT %s', x, n),
		format('SELECT * FROM @T@ WHERE k1 = %s::int AND k2 >= %s ORDER BY k1, k2', x, y),
		format('SELECT * FROM @T@ WHERE k1 = %s AND k2 < %s ORDER BY k1, k2', x, y),
		format('SELECT * FROM @T@ WHERE k1 < %s ORDER BY k1, k2', x),
		format('SELECT k1, count(*), sum(a) FROM @T@ WHERE k1 >= %s GROUP BY k1 ORDER BY k1', x),
		format('SELECT * FROM @T@ WHERE k1 IN (%s, %s, %s) ORDER BY k1, k2', x, rk1(), rk1()),
		format('SELECT * FROM @T@ WHERE k2 = %s ORDER BY k1, k2', y),
		format('SELECT * FROM @T@ WHERE k1 >= %s AND k1 < %s AND k2 = %s ORDER BY k1, k2', x, x + 3, y),
		format('SELECT t.* FROM generate_series(%s, %s) g JOIN @T@ t ON t.k1 = g ORDER BY k1, k2', x, x + r(6)),
		format('SELECT * FROM @T@ WHERE k1 = %s AND k2 = %s FOR UPDATE', x, y),
		format('SELECT k1, k2 FROM @T@ WHERE k1 > %s::smallint ORDER BY k1, k2 LIMIT %s', x, n),
		format('SELECT * FROM @T@ ORDER BY k1 DESC, k2 DESC LIMIT %s', n),
		format('SELECT * FROM @T@ WHERE k1 BETWEEN %s AND %s ORDER BY k1 DESC, k2 DESC', x, x + r(10)),
		format('SELECT * FROM @T@ WHERE k1 = %s AND k2 < %s ORDER BY k1 DESC, k2 DESC', x, y),
		format('SELECT max(k1) FROM @T@ WHERE k1 < %s', x),
		format('SELECT * FROM @T@ WHERE k1 IN (%s, %s) ORDER BY k1 DESC, k2 DESC', x, x + 1),
		-- through the secondary indexes (ties in their order are in no
		-- order that both share: only the indexed columns are compared)
		format('SELECT * FROM @T@ WHERE a = %s ORDER BY k1, k2', r(1000)),
		format('SELECT a FROM @T@ WHERE a BETWEEN %s AND %s ORDER BY a', a, a + r(200)),
		format('SELECT a FROM @T@ WHERE a > %s ORDER BY a LIMIT %s', a, n),
		format('SELECT a FROM @T@ ORDER BY a DESC LIMIT %s', n),
		format('SELECT a, b FROM @T@ WHERE a = %s AND b COLLATE "C" >= %L ORDER BY a, b COLLATE "C"', a, rk2()),
		format('SELECT k1, k2, b FROM @T@ WHERE b = %s ORDER BY k1, k2', rtext()),
		format('SELECT count(*) FROM @T@ WHERE a < %s::bigint', a),
		-- through the partial index (or the full one: the planner's choice)
		format('SELECT a FROM @T@ WHERE b IS NOT NULL AND a BETWEEN %s AND %s ORDER BY a', a, a + r(300)),
		-- through the expression index
		format('SELECT coalesce(a, 0) + length(b) FROM @T@ WHERE coalesce(a, 0) + length(b) BETWEEN %s AND %s ORDER BY 1', a, a + r(300))
		])[1 + r(29)];
END $$;

CREATE FUNCTION diff_scan_digest(q text, t text, seq boolean) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	d text;
BEGIN
	PERFORM set_config('enable_seqscan', CASE WHEN seq THEN 'on' ELSE 'off' END, true);
	PERFORM set_config('enable_indexscan', CASE WHEN seq THEN 'off' ELSE 'on' END, true);
	EXECUTE format('SELECT count(*) || '' '' || md5(coalesce(string_agg(q::text, E''\n''), '''')) FROM (%s) q',
				   replace(q, '@T@', quote_ident(t))) INTO d;
	PERFORM set_config('enable_seqscan', 'on', true);
	PERFORM set_config('enable_indexscan', 'on', true);
	RETURN d;
END $$;

CREATE FUNCTION diff_scan(step int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	q text := diff_scan_query();
	fi text := diff_scan_digest(q, 'df', false);
	fs text := diff_scan_digest(q, 'df', true);
	h text := diff_scan_digest(q, 'dh', false);
BEGIN
	IF fi IS DISTINCT FROM h OR fs IS DISTINCT FROM h THEN
		RAISE EXCEPTION 'step %: % differs: forst index scan %, forst seq scan %, heap %',
			step, q, fi, fs, h;
	END IF;
	-- the keyless twins through their index on n
	q := format('SELECT id, v, n FROM @T@ WHERE n BETWEEN %s AND %s ORDER BY id, v, n', r(1000), 1000);
	fi := diff_scan_digest(q, 'nf', false);
	h := diff_scan_digest(q, 'nh', true);
	IF fi IS DISTINCT FROM h THEN
		RAISE EXCEPTION 'step %: % differs: forst index scan %, heap %', step, q, fi, h;
	END IF;
	q := format('SELECT id, v, n FROM @T@ WHERE n > 500 AND id BETWEEN %s AND %s ORDER BY id, v, n', r(50), 50);
	fi := diff_scan_digest(q, 'nf', false);
	h := diff_scan_digest(q, 'nh', true);
	IF fi IS DISTINCT FROM h THEN
		RAISE EXCEPTION 'step %: % differs: forst index scan %, heap %', step, q, fi, h;
	END IF;
END $$;

-- Applies one statement to both twins; raises if the outcomes differ.
CREATE FUNCTION diff_apply(step int, stmt text, keyed boolean) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	rf text := diff_try(stmt, CASE WHEN keyed THEN 'df' ELSE 'nf' END);
	rh text := diff_try(stmt, CASE WHEN keyed THEN 'dh' ELSE 'nh' END);
BEGIN
	IF rf IS DISTINCT FROM rh THEN
		RAISE EXCEPTION 'step %: outcomes differ for %: forst "%" heap "%"',
			step, stmt, rf, rh;
	END IF;
	PERFORM diff_check(step, stmt);
	IF keyed AND random() < 0.4 THEN
		PERFORM diff_scan(step);
	END IF;
	RETURN rf;
END $$;

CREATE FUNCTION r(n int) RETURNS int LANGUAGE sql AS 'SELECT floor(random() * n)::int';

CREATE FUNCTION rk1() RETURNS bigint LANGUAGE sql AS
$$ SELECT CASE WHEN random() < 0.1 THEN 100 + r(40) ELSE r(40) END::bigint $$;

CREATE FUNCTION rk2() RETURNS text LANGUAGE sql AS
$$ SELECT (ARRAY['', 'a', 'b', 'ab', 'B', 'a b', 'xyz', 'é', 'A'])[1 + r(9)] $$;

CREATE FUNCTION rval() RETURNS text LANGUAGE sql AS
$$ SELECT CASE WHEN random() < 0.15 THEN 'NULL' ELSE r(1000)::text END $$;

CREATE FUNCTION rtext() RETURNS text LANGUAGE sql AS
$$ SELECT CASE WHEN random() < 0.15 THEN 'NULL'
               ELSE quote_literal(repeat(chr(97 + r(26)), r(30))) END $$;

-- a large value sometimes (stored whole by forst, toasted by heap)
CREATE FUNCTION rbig() RETURNS text LANGUAGE sql AS
$$ SELECT CASE WHEN random() < 0.8 THEN 'NULL'
               ELSE format('repeat(md5(%s::text), %s)', r(100000), 1 + r(800)) END $$;

-- One random statement on the keyed twins.
CREATE FUNCTION diff_keyed_stmt() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	p float8 := random();
	lo bigint := r(40);
BEGIN
	IF p < 0.22 THEN	-- single-row insert, often a duplicate
		RETURN format('INSERT INTO @T@ VALUES (%s, %L, %s, %s, %s)',
					  rk1(), rk2(), rval(), rtext(), rbig());
	ELSIF p < 0.30 THEN	-- multi-row insert, maybe colliding
		RETURN format('INSERT INTO @T@ SELECT g, %L, g * %s, %s, NULL FROM generate_series(%s, %s) g',
					  rk2(), r(10), rtext(), lo, lo + r(5));
	ELSIF p < 0.35 THEN	-- VALUES list, maybe with a duplicate inside
		RETURN format('INSERT INTO @T@ VALUES (%s, %L, %s, %s, NULL), (%s, %L, %s, NULL, %s)',
					  rk1(), rk2(), rval(), rtext(), rk1(), rk2(), rval(), rbig());
	ELSIF p < 0.45 THEN	-- update of non-key columns by key
		RETURN format('UPDATE @T@ SET a = a + 1, b = %s WHERE k1 = %s AND k2 = %L',
					  rtext(), rk1(), rk2());
	ELSIF p < 0.52 THEN	-- update by key prefix / range / non-key predicate
		RETURN (ARRAY[
			format('UPDATE @T@ SET a = coalesce(a, 0) - %s WHERE k1 = %s', r(5), rk1()),
			format('UPDATE @T@ SET b = NULL, c = %s WHERE k1 BETWEEN %s AND %s', rbig(), lo, lo + r(4)),
			format('UPDATE @T@ SET a = NULL WHERE k2 = %L', rk2()),
			format('UPDATE @T@ SET b = b || ''+'' WHERE a %% 7 = %s', r(7))])[1 + r(4)];
	ELSIF p < 0.55 THEN	-- rows grow large and shrink again
		RETURN format('UPDATE @T@ SET c = CASE WHEN c IS NULL THEN repeat(md5(k1::text || k2), %s) END WHERE k1 BETWEEN %s AND %s',
					  1 + r(600), lo, lo + r(8));
	ELSIF p < 0.63 THEN	-- single-row key-changing update, may collide
		RETURN (ARRAY[
			format('UPDATE @T@ SET k1 = %s WHERE k1 = %s AND k2 = %L', rk1(), rk1(), rk2()),
			format('UPDATE @T@ SET k2 = %L, a = 0 WHERE k1 = %s AND k2 = %L', rk2(), rk1(), rk2()),
			format('UPDATE @T@ SET k1 = k1, k2 = k2, a = -1 WHERE k1 = %s', rk1())])[1 + r(3)];
	ELSIF p < 0.68 THEN	-- multi-row key-changing update between disjoint ranges
		RETURN (ARRAY[
			format('UPDATE @T@ SET k1 = k1 + 100 WHERE k1 BETWEEN %s AND %s', lo, lo + r(4)),
			format('UPDATE @T@ SET k1 = k1 - 100 WHERE k1 >= 100 AND k1 BETWEEN %s AND %s', 100 + lo, 100 + lo + r(10)),
			format('UPDATE @T@ SET k2 = upper(k2) WHERE k1 = %s', rk1()),
			format('UPDATE @T@ SET k2 = upper(k2), b = ''up'' WHERE k1 BETWEEN %s AND %s', lo, lo + r(3))])[1 + r(4)];
	ELSIF p < 0.80 THEN	-- delete by key
		RETURN format('DELETE FROM @T@ WHERE k1 = %s AND k2 = %L', rk1(), rk2());
	ELSIF p < 0.87 THEN	-- delete by prefix / range / non-key predicate
		RETURN (ARRAY[
			format('DELETE FROM @T@ WHERE k1 = %s', rk1()),
			format('DELETE FROM @T@ WHERE k1 BETWEEN %s AND %s', lo, lo + r(3)),
			format('DELETE FROM @T@ WHERE a IS NULL AND k1 > %s', lo),
			format('DELETE FROM @T@ WHERE k2 = %L AND k1 < %s', rk2(), lo)])[1 + r(4)];
	ELSIF p < 0.93 THEN	-- delete and insert again one key in a statement pair
		RETURN format('WITH d AS (DELETE FROM @T@ WHERE k1 = %s RETURNING *) SELECT count(*) FROM d', rk1());
	ELSE	-- writes through a CTE and a subquery on the same table
		RETURN (ARRAY[
			format('UPDATE @T@ SET a = (SELECT count(*) FROM @T@ WHERE k1 = %s) WHERE k1 = %s', rk1(), rk1()),
			format('DELETE FROM @T@ WHERE (k1, k2) IN (SELECT k1, k2 FROM @T@ WHERE a > %s)', 900 + r(100)),
			format('INSERT INTO @T@ SELECT k1 + 200, k2, a, b, c FROM @T@ WHERE k1 = %s', rk1()),
			'DELETE FROM @T@ WHERE k1 >= 200',
			-- a row met twice by one statement is changed once
			format('UPDATE @T@ SET a = coalesce(a, 0) + 1 FROM (VALUES (%s), (%s), (%s)) v(x) WHERE k1 = v.x', rk1(), rk1(), rk1()),
			format('DELETE FROM @T@ USING (VALUES (%s), (%s)) v(x) WHERE k1 = v.x', rk1(), rk1()),
			-- rows a statement writes are not visible to its own scan (the
			-- Halloween problem): moved or copied rows still match the WHERE
			format('UPDATE @T@ SET k1 = k1 + 1000, a = coalesce(a, 0) + 1 WHERE k2 = %L; UPDATE @T@ SET k1 = k1 - 1000 WHERE k1 >= 1000', rk2()),
			format('INSERT INTO @T@ SELECT k1 + 1000, k2, a, b, c FROM @T@ WHERE k2 = %L; DELETE FROM @T@ WHERE k1 >= 1000', rk2())])[1 + r(8)];
	END IF;
END $$;

-- One random statement on the keyless twins.
CREATE FUNCTION diff_keyless_stmt() RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	p float8 := random();
	lo int := r(50);
BEGIN
	IF p < 0.35 THEN
		RETURN format('INSERT INTO @T@ SELECT g, %s, %s FROM generate_series(%s, %s) g',
					  rtext(), rval(), lo, lo + r(4));
	ELSIF p < 0.6 THEN
		RETURN format('UPDATE @T@ SET n = coalesce(n, 0) + 1, v = %s WHERE id BETWEEN %s AND %s',
					  rtext(), lo, lo + r(5));
	ELSIF p < 0.7 THEN
		RETURN format('UPDATE @T@ SET v = repeat(''x'', %s) WHERE id = %s', r(3000), lo);
	ELSE
		RETURN (ARRAY[
			format('DELETE FROM @T@ WHERE id = %s', lo),
			format('DELETE FROM @T@ WHERE id BETWEEN %s AND %s AND n IS NULL', lo, lo + 10),
			format('DELETE FROM @T@ WHERE v IS NULL AND id < %s', lo)])[1 + r(3)];
	END IF;
END $$;

CREATE FUNCTION diff_stmt(step int) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	IF random() < 0.8 THEN
		RETURN diff_apply(step, diff_keyed_stmt(), true);
	END IF;
	RETURN diff_apply(step, diff_keyless_stmt(), false);
END $$;

-- Transactions of 1..8 statements, committed or rolled back; inside them
-- subtransactions that are rolled back (SQLSTATE FD001) or kept.
CREATE TABLE diff_stats (nstmt int, nfail int, ncommit int, nrollback int);
CREATE PROCEDURE diff_run(ntx int)
LANGUAGE plpgsql AS $$
DECLARE
	res text;
	j int;
	nstmt int := 0;
	nfail int := 0;
	ncommit int := 0;
	nrollback int := 0;
BEGIN
	FOR t IN 1..ntx LOOP
		FOR i IN 1..1 + r(8) LOOP
			IF random() < 0.15 THEN
				BEGIN
					FOR j IN 1..1 + r(4) LOOP
						nstmt := nstmt + 1;
						res := diff_stmt(nstmt);
					END LOOP;
					IF random() < 0.6 THEN
						RAISE EXCEPTION USING ERRCODE = 'FD001', MESSAGE = 'roll back';
					END IF;
				EXCEPTION WHEN SQLSTATE 'FD001' THEN
					PERFORM diff_check(nstmt, 'subtransaction rollback');
				END;
			ELSE
				nstmt := nstmt + 1;
				res := diff_stmt(nstmt);
				IF res LIKE 'error%' THEN
					nfail := nfail + 1;
				END IF;
			END IF;
		END LOOP;
		IF random() < 0.2 THEN
			ROLLBACK;
			nrollback := nrollback + 1;
			PERFORM diff_check(nstmt, 'rollback');
		ELSE
			COMMIT;
			ncommit := ncommit + 1;
			PERFORM diff_check(nstmt, 'commit');
		END IF;
	END LOOP;
	INSERT INTO diff_stats VALUES (nstmt, nfail, ncommit, nrollback);
END $$;

SELECT setseed(0.4242);
CALL diff_run(300);
-- fill the active memtable with large rows (and delete them), so that the
-- rest of the run has versions in an immutable memtable and the active one
INSERT INTO df SELECT 1000 + g, 'fill', g, NULL, repeat(md5(g::text), 1300) FROM generate_series(1, 250) g;
INSERT INTO dh SELECT 1000 + g, 'fill', g, NULL, repeat(md5(g::text), 1300) FROM generate_series(1, 250) g;
DELETE FROM df WHERE k1 > 1000;
DELETE FROM dh WHERE k1 > 1000;
CALL diff_run(300);
-- at least 2000 statements, a good share of them failing on both sides
SELECT sum(nstmt) >= 2000 AS enough_statements, sum(nfail) >= 100 AS enough_failures,
       min(ncommit) > 0 AND min(nrollback) > 0 AS both_endings
  FROM diff_stats;
SELECT 'ok' AS same, count(*) > 50 AS enough_rows FROM df;

-- the plans compared above: key index scans where the key allows them
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM df WHERE k1 = 5 AND k2 = 'a';
EXPLAIN (COSTS OFF) SELECT * FROM df WHERE k1 BETWEEN 5 AND 9 ORDER BY k1, k2;
EXPLAIN (COSTS OFF) SELECT * FROM df WHERE k1 > 5 ORDER BY k1, k2 LIMIT 3;
EXPLAIN (COSTS OFF) SELECT t.* FROM generate_series(1, 3) g JOIN df t ON t.k1 = g;
RESET enable_seqscan;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM df WHERE k1 > 5 ORDER BY k1, k2 LIMIT 3;
RESET enable_indexscan;

-- more scans over the final contents, outside any write transaction
DO $$ BEGIN FOR i IN 1..300 LOOP PERFORM diff_scan(-i); END LOOP; END $$;

DROP TABLE df, dh, nf, nh, diff_stats;

-- a dropped table gives its memtable memory back: 40 tables of one row
-- each, created and dropped one after the other, fit in the default 128 MB
-- of 8 MB memtables (DROP TABLE used to keep them until a restart)
CREATE PROCEDURE churn(n int) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..n LOOP
		CREATE TABLE churn (k int PRIMARY KEY, v text) USING forst;
		INSERT INTO churn VALUES (i, 'x');
		DROP TABLE churn;
		COMMIT;
	END LOOP;
END $$;
CALL churn(40);
DROP PROCEDURE churn;
DROP EXTENSION forst;
