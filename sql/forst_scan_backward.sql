--
-- Backward scans through the key (ORDER BY ... DESC, max()): the cursors
-- read the LSM backward, a row's versions oldest first, keeping the newest
-- the snapshot sees.  Rows in SST files and in memtables, with newer
-- versions, rolled-back ones and deletions over them, are compared with a
-- heap twin.
--
CREATE EXTENSION forst;
CREATE TABLE desc_t (a int, b int, v text, PRIMARY KEY (a, b)) USING forst;
CREATE TABLE desc_h (a int, b int, v text, PRIMARY KEY (a, b)) USING heap;
INSERT INTO desc_t SELECT g % 7, g, 'v' || g FROM generate_series(1, 500) g;
INSERT INTO desc_h SELECT * FROM desc_t;
SELECT forst.checkpoint() > 0 AS flushed;
UPDATE desc_t SET v = v || 'u' WHERE b % 3 = 0;
UPDATE desc_h SET v = v || 'u' WHERE b % 3 = 0;
SELECT forst.checkpoint() > 0 AS flushed;
BEGIN;
UPDATE desc_t SET v = 'rolled back' WHERE b % 4 = 0;
DELETE FROM desc_t WHERE b % 11 = 0;
ROLLBACK;
DELETE FROM desc_t WHERE b % 5 = 0;
DELETE FROM desc_h WHERE b % 5 = 0;
INSERT INTO desc_t SELECT g % 7, g, 'w' || g FROM generate_series(480, 700) g
  ON CONFLICT (a, b) DO UPDATE SET v = excluded.v;
INSERT INTO desc_h SELECT g % 7, g, 'w' || g FROM generate_series(480, 700) g
  ON CONFLICT (a, b) DO UPDATE SET v = excluded.v;
SELECT count(*) >= 2 AS sst_files FROM forst.table_files('desc_t');

-- q on desc_t through the key, and on desc_h: the same rows in the same order
CREATE FUNCTION desc_same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
	f text;
	h text;
BEGIN
	SET LOCAL enable_seqscan = off;
	SET LOCAL enable_sort = off;
	EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) x', replace(q, '@', 'desc_t')) INTO f;
	EXECUTE format('SELECT string_agg(x::text, '','') FROM (%s) x', replace(q, '@', 'desc_h')) INTO h;
	IF f IS DISTINCT FROM h THEN
		RAISE EXCEPTION 'differs: %: forst % heap %', q, left(f, 200), left(h, 200);
	END IF;
	RETURN f IS NOT NULL;
END $$;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM desc_t ORDER BY a DESC, b DESC;
EXPLAIN (COSTS OFF) SELECT max(b) FROM desc_t WHERE a = 5;
RESET enable_seqscan;
SELECT desc_same('SELECT * FROM @ ORDER BY a DESC, b DESC') AS all_rows,
       desc_same('SELECT * FROM @ ORDER BY a DESC, b DESC LIMIT 7') AS top,
       desc_same('SELECT * FROM @ WHERE a = 4 ORDER BY a DESC, b DESC') AS one_a,
       desc_same('SELECT * FROM @ WHERE a BETWEEN 1 AND 3 AND b >= 450 ORDER BY a DESC, b DESC') AS range,
       desc_same('SELECT * FROM @ WHERE a IN (6, 0, 2) ORDER BY a DESC, b DESC') AS in_list,
       desc_same('SELECT * FROM @ WHERE a = 3 AND b IN (3, 10, 17, 500, 605) ORDER BY a DESC, b DESC') AS points,
       desc_same('SELECT max(b) FROM @ WHERE a = 5') AS max_b,
       desc_same('SELECT max(a) FROM @') AS max_a;

-- inside a transaction that wrote: its own new, changed and deleted rows
BEGIN;
INSERT INTO desc_t VALUES (6, 1000, 'mine'), (0, 1001, 'mine');
UPDATE desc_t SET v = 'changed' WHERE a = 6 AND b > 650;
DELETE FROM desc_t WHERE a = 6 AND b BETWEEN 600 AND 640;
INSERT INTO desc_h VALUES (6, 1000, 'mine'), (0, 1001, 'mine');
UPDATE desc_h SET v = 'changed' WHERE a = 6 AND b > 650;
DELETE FROM desc_h WHERE a = 6 AND b BETWEEN 600 AND 640;
SELECT desc_same('SELECT * FROM @ ORDER BY a DESC, b DESC') AS own_writes,
       desc_same('SELECT * FROM @ WHERE a = 6 ORDER BY a DESC, b DESC LIMIT 5') AS own_top;
ROLLBACK;

-- a SCROLL cursor over a backward scan is materialized: it may turn around
BEGIN;
SET LOCAL enable_seqscan = off;
DECLARE dc SCROLL CURSOR FOR SELECT a, b FROM desc_t ORDER BY a DESC, b DESC;
FETCH 2 FROM dc;
FETCH PRIOR FROM dc;
ROLLBACK;

-- a SCROLL cursor over a sequential scan reads backward and turns around
-- anywhere: random moves, each checked against the scan's forward order
CREATE FUNCTION scroll_check(tbl text, moves int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	rows text[];
	n int;
	pos int := 0;
	c refcursor;
	r record;
	got text;
	want text;
	mv int;
	turns int := 0;
	last_mv int := -1;
BEGIN
	SET LOCAL enable_indexscan = off;
	SET LOCAL enable_bitmapscan = off;
	SET LOCAL max_parallel_workers_per_gather = 0;
	EXECUTE format('SELECT array_agg(x::text) FROM (SELECT * FROM %I) x', tbl) INTO rows;
	n := coalesce(array_length(rows, 1), 0);
	OPEN c SCROLL FOR EXECUTE format('SELECT * FROM %I', tbl);
	FOR i IN 1..moves LOOP
		mv := floor(random() * 10)::int;
		IF mv < 4 THEN
			FETCH NEXT FROM c INTO r;
			pos := least(pos + 1, n + 1);
		ELSIF mv < 8 THEN
			FETCH PRIOR FROM c INTO r;
			pos := greatest(pos - 1, 0);
		ELSIF mv = 8 THEN
			FETCH FIRST FROM c INTO r;
			pos := least(1, n + 1);
		ELSE
			FETCH LAST FROM c INTO r;
			pos := n;
		END IF;
		IF (mv < 4) <> (last_mv < 4) THEN
			turns := turns + 1;
		END IF;
		last_mv := mv;
		got := CASE WHEN FOUND THEN r::text END;
		want := CASE WHEN pos BETWEEN 1 AND n THEN rows[pos] END;
		IF got IS DISTINCT FROM want THEN
			RAISE EXCEPTION 'move % (kind %): at % of % got % want %', i, mv, pos, n, got, want;
		END IF;
	END LOOP;
	CLOSE c;
	RETURN CASE WHEN turns > moves / 4 THEN 'ok' ELSE 'too few turns' END;
END $$;
SELECT setseed(0.25);
SELECT scroll_check('desc_t', 3000) AS seq_scroll;
BEGIN;
INSERT INTO desc_t VALUES (6, 1000, 'mine'), (0, 1001, 'mine');
UPDATE desc_t SET v = 'changed' WHERE b % 9 = 0;
DELETE FROM desc_t WHERE b % 13 = 0;
SELECT scroll_check('desc_t', 3000) AS seq_scroll_own_writes;
ROLLBACK;
-- without SCROLL too, where the plan can read backward (PostgreSQL's rule)
BEGIN;
DECLARE nc CURSOR FOR SELECT a, b FROM desc_t;
FETCH 2 FROM nc;
FETCH BACKWARD 1 FROM nc;
ROLLBACK;

DROP FUNCTION desc_same(text);
DROP FUNCTION scroll_check(text, int);
DROP TABLE desc_t, desc_h;
DROP EXTENSION forst;
