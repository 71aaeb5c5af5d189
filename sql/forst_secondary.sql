-- Secondary indexes on forst tables: entries in the table's LSM tree,
-- written with the rows.  Random DML against heap twins is in
-- forst_differential; here: plans, NULLs, collations, the lifecycle
-- (REINDEX, TRUNCATE, rewrites, migration), refusals, roles.
CREATE EXTENSION forst;

CREATE TABLE s (k int PRIMARY KEY, a int, b text COLLATE "C", c text, d bigint)
  USING forst;
INSERT INTO s SELECT g, g % 100, 'b' || (g % 37), 'c' || (g % 11), g * 3
  FROM generate_series(1, 5000) g;
INSERT INTO s VALUES (6001, NULL, NULL, NULL, NULL), (6002, NULL, 'bnull', NULL, 7);
CREATE INDEX s_a ON s (a);
CREATE INDEX s_bd ON s (b, d);
CREATE INDEX s_c ON s (c);
\d s
-- a twin in heap with the same indexes
CREATE TABLE h (LIKE s INCLUDING INDEXES) USING heap;
INSERT INTO h SELECT * FROM s;

SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM s WHERE a = 7;
EXPLAIN (COSTS OFF) SELECT a FROM s WHERE a > 90 ORDER BY a LIMIT 5;
EXPLAIN (COSTS OFF) SELECT a FROM s ORDER BY a DESC LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM s WHERE b = 'b3' AND d > 100 ORDER BY b, d;
-- c has the database's collation: its index serves equality, not order
EXPLAIN (COSTS OFF) SELECT * FROM s WHERE c = 'c3';
EXPLAIN (COSTS OFF) SELECT c FROM s ORDER BY c LIMIT 3;

-- the same answers as heap's, order included where the query fixes it
CREATE FUNCTION same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	f text;
	x text;
BEGIN
	EXECUTE format('SELECT count(*) || '' '' || md5(coalesce(string_agg(q::text, E''\n''), '''')) FROM (%s) q',
				   replace(q, '@T@', 's')) INTO f;
	EXECUTE format('SELECT count(*) || '' '' || md5(coalesce(string_agg(q::text, E''\n''), '''')) FROM (%s) q',
				   replace(q, '@T@', 'h')) INTO x;
	RETURN CASE WHEN f = x THEN 'same ' || split_part(f, ' ', 1) ELSE 'DIFFERENT forst ' || f || ' heap ' || x END;
END $$;
SELECT q, same(q) FROM (VALUES
	('SELECT * FROM @T@ WHERE a = 7 ORDER BY k'),
	('SELECT a FROM @T@ WHERE a BETWEEN 10 AND 12 ORDER BY a'),
	('SELECT a FROM @T@ WHERE a > 97 ORDER BY a'),
	('SELECT a FROM @T@ WHERE a >= 97 ORDER BY a DESC'),
	('SELECT a FROM @T@ ORDER BY a DESC LIMIT 3'),
	('SELECT a FROM @T@ ORDER BY a LIMIT 3'),
	('SELECT a FROM @T@ ORDER BY a NULLS FIRST LIMIT 3'),
	('SELECT k FROM @T@ WHERE a IS NULL ORDER BY k'),
	('SELECT k FROM @T@ WHERE a < 2::bigint ORDER BY k'),
	('SELECT k FROM @T@ WHERE a = 5000000000 ORDER BY k'),
	('SELECT k FROM @T@ WHERE a = ANY (ARRAY[3, 5]) ORDER BY k'),
	('SELECT b, d FROM @T@ WHERE b = ''b3'' AND d > 100 ORDER BY b, d'),
	('SELECT b, d FROM @T@ WHERE b = ''b3'' AND d <= 300 ORDER BY b, d DESC'),
	('SELECT b, d FROM @T@ WHERE b > ''b35'' ORDER BY b, d'),
	('SELECT b, d FROM @T@ WHERE b IS NULL ORDER BY b, d'),
	('SELECT k FROM @T@ WHERE c = ''c3'' ORDER BY k'),
	('SELECT k FROM @T@ WHERE c > ''c8'' ORDER BY k'),
	('SELECT count(*) FROM @T@'),
	('SELECT count(*) FROM @T@ WHERE a = 3')) v(q);

-- writes: every kind of change to an indexed row, and rollbacks
CREATE FUNCTION on_both(stmt text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE replace(stmt, '@T@', 's');
	EXECUTE replace(stmt, '@T@', 'h');
END $$;
SELECT on_both('UPDATE @T@ SET a = 1000 WHERE k = 7');
SELECT on_both('UPDATE @T@ SET c = c WHERE k BETWEEN 1 AND 50');
SELECT on_both('UPDATE @T@ SET k = k + 10000 WHERE k BETWEEN 100 AND 120');
SELECT on_both('UPDATE @T@ SET a = NULL, b = NULL WHERE k BETWEEN 200 AND 210');
SELECT on_both('DELETE FROM @T@ WHERE a = 8');
SELECT on_both('INSERT INTO @T@ VALUES (8, 8, ''b8'', ''c8'', 8)');
BEGIN;
SELECT on_both('UPDATE @T@ SET a = 2000 WHERE k = 9');
SELECT same('SELECT k FROM @T@ WHERE a = 2000');
ROLLBACK;
BEGIN;
SELECT on_both('DELETE FROM @T@ WHERE a = 9');
SAVEPOINT sp;
SELECT on_both('UPDATE @T@ SET a = 9 WHERE a = 10');
SELECT same('SELECT k FROM @T@ WHERE a = 9 ORDER BY k');
ROLLBACK TO sp;
SELECT same('SELECT k FROM @T@ WHERE a = 9 ORDER BY k');
COMMIT;
-- a statement that reads its own index while it writes it
SELECT on_both('UPDATE @T@ SET a = a + 1 WHERE a BETWEEN 20 AND 25');
SELECT q, same(q) FROM (VALUES
	('SELECT k, a FROM @T@ WHERE a = 1000'),
	('SELECT k FROM @T@ WHERE a = 9 ORDER BY k'),
	('SELECT k FROM @T@ WHERE a = 2000'),
	('SELECT a, count(*) FROM @T@ WHERE a BETWEEN 18 AND 27 GROUP BY a ORDER BY a'),
	('SELECT k FROM @T@ WHERE a IS NULL ORDER BY k'),
	('SELECT k FROM @T@ WHERE k > 10000 AND a = 10 ORDER BY k'),
	('SELECT k FROM @T@ WHERE a = 8 ORDER BY k')) v(q);

-- ON CONFLICT DO UPDATE changes indexed columns too
INSERT INTO s VALUES (1, 1, 'b1', 'c1', 1), (5001, 3, 'b3', 'c3', 3)
  ON CONFLICT (k) DO UPDATE SET a = 4242;
INSERT INTO h VALUES (1, 1, 'b1', 'c1', 1), (5001, 3, 'b3', 'c3', 3)
  ON CONFLICT (k) DO UPDATE SET a = 4242;
SELECT same('SELECT k FROM @T@ WHERE a = 4242 ORDER BY k'),
       same('SELECT k FROM @T@ WHERE a = 3 ORDER BY k');

-- a snapshot older than the index does not use it (pg_index.indcheckxmin)
SELECT indcheckxmin FROM pg_index WHERE indexrelid = 's_a'::regclass;

-- lifecycle: REINDEX, a rewrite (ALTER TYPE), TRUNCATE
REINDEX INDEX s_a;
SELECT same('SELECT k FROM @T@ WHERE a = 50 ORDER BY k');
ALTER TABLE s ALTER COLUMN d TYPE numeric;
ALTER TABLE h ALTER COLUMN d TYPE numeric;
SELECT same('SELECT b, d FROM @T@ WHERE b = ''b5'' AND d < 1000 ORDER BY b, d');
ANALYZE s;
SELECT reltuples BETWEEN 4000 AND 6000 AS sane_reltuples FROM pg_class WHERE oid = 's'::regclass;

-- a keyless table (hidden row ids), given a key later (rows written again)
CREATE TABLE r (x int, y int) USING forst;
INSERT INTO r SELECT g, g % 7 FROM generate_series(1, 700) g;
CREATE INDEX r_y ON r (y);
UPDATE r SET y = 100 WHERE x <= 10;
SELECT count(*), min(x), max(x) FROM r WHERE y = 100;
ALTER TABLE r ADD PRIMARY KEY (x);
SELECT count(*), min(x), max(x) FROM r WHERE y = 100;
UPDATE r SET x = x + 10000 WHERE y = 100;
SELECT count(*), min(x), max(x) FROM r WHERE y = 100;
SELECT count(*) FROM r WHERE y = 3;
TRUNCATE r;
SELECT count(*) FROM r WHERE y = 3;

-- DROP INDEX writes a tombstone over each entry (compaction reclaims
-- them); rolled back, the index still answers
CREATE TABLE dr (k int PRIMARY KEY, a int, b int) USING forst;
INSERT INTO dr SELECT g, g, g FROM generate_series(1, 10) g;
CREATE INDEX dr_a ON dr (a);
CREATE INDEX dr_b ON dr (b);
SELECT memtable_entries FROM forst.tables WHERE "table" = 'dr'::regclass;
BEGIN;
DROP INDEX dr_a;
SELECT memtable_entries FROM forst.tables WHERE "table" = 'dr'::regclass;
ROLLBACK;
SELECT count(*) FROM dr WHERE a = 3;
DROP INDEX dr_a;
ALTER TABLE dr DROP COLUMN b;
SELECT memtable_entries FROM forst.tables WHERE "table" = 'dr'::regclass;
SELECT count(*), sum(a) FROM dr;
DROP TABLE dr;

-- DROP INDEX CONCURRENTLY writes the tombstones in its last transaction;
-- later writes leave the dropped index alone
CREATE TABLE dc (k int PRIMARY KEY, a int, b int) USING forst;
INSERT INTO dc SELECT g, g, g FROM generate_series(1, 10) g;
CREATE INDEX dc_a ON dc (a);
CREATE INDEX dc_b ON dc (b);
SELECT memtable_entries FROM forst.tables WHERE "table" = 'dc'::regclass;
DROP INDEX CONCURRENTLY dc_a;
SELECT memtable_entries FROM forst.tables WHERE "table" = 'dc'::regclass;
INSERT INTO dc VALUES (11, 11, 11);
SELECT memtable_entries FROM forst.tables WHERE "table" = 'dc'::regclass;
-- a drop that fails after it reached the index (here in an event
-- trigger), rolled back to a savepoint: the index keeps its entries
CREATE FUNCTION dc_refuse() RETURNS event_trigger LANGUAGE plpgsql
  AS $$ BEGIN RAISE EXCEPTION 'no drops today'; END $$;
CREATE EVENT TRIGGER dc_refuse ON sql_drop EXECUTE FUNCTION dc_refuse();
BEGIN;
SAVEPOINT s;
DROP INDEX dc_b;
ROLLBACK TO s;
SET LOCAL enable_seqscan = off;
SELECT count(*) FROM dc WHERE b BETWEEN 1 AND 11;
COMMIT;
DROP EVENT TRIGGER dc_refuse;
DROP FUNCTION dc_refuse();
SELECT memtable_entries FROM forst.tables WHERE "table" = 'dc'::regclass;
SET enable_seqscan = off;
SELECT count(*) FROM dc WHERE b BETWEEN 1 AND 11;
EXPLAIN (COSTS OFF) SELECT count(*) FROM dc WHERE b BETWEEN 1 AND 11;
RESET enable_seqscan;
DROP INDEX CONCURRENTLY dc_b;
SELECT memtable_entries FROM forst.tables WHERE "table" = 'dc'::regclass;
DROP TABLE dc;

-- migration both ways: btrees become forst indexes and back
ALTER TABLE h SET ACCESS METHOD forst;
\d h
SELECT count(*) FROM h WHERE a = 50;
EXPLAIN (COSTS OFF) SELECT count(*) FROM h WHERE a = 50;
ALTER TABLE h SET ACCESS METHOD heap;
\d h
SELECT count(*) FROM h WHERE a = 50;
RESET enable_seqscan;

-- refusals
\set VERBOSITY default
\set SHOW_CONTEXT never
ALTER TABLE s ADD CONSTRAINT s_bd_u UNIQUE (b, d) DEFERRABLE;
CREATE INDEX ON s USING hash (a);
CREATE INDEX CONCURRENTLY ON s (a);
CREATE INDEX ON s ((a + 1));
CREATE TABLE nd (k int PRIMARY KEY, t text) USING forst;
CREATE COLLATION IF NOT EXISTS ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE INDEX ON nd (t COLLATE ci);
CREATE TABLE j (k int PRIMARY KEY, v jsonb) USING forst;
CREATE INDEX ON j (v);
CREATE UNLOGGED TABLE u (k int PRIMARY KEY, a int) USING forst;
CREATE INDEX u_a ON u (a);
INSERT INTO u VALUES (1, 1);
CREATE INDEX u_a2 ON u (a);
SELECT forst.checkpoint() > 0 AS checkpointed;
SELECT forst.attach('public.r', as_table => 's', into_existing => true);
\set VERBOSITY terse
\set SHOW_CONTEXT errors

-- an ordinary role indexes its own tables; another role cannot
CREATE ROLE sec_owner;
CREATE ROLE sec_other;
GRANT CREATE ON SCHEMA public TO sec_owner;
SET ROLE sec_owner;
CREATE TABLE o (k int PRIMARY KEY, a int) USING forst;
INSERT INTO o SELECT g, g % 5 FROM generate_series(1, 100) g;
CREATE INDEX o_a ON o (a);
SELECT count(*) FROM o WHERE a = 2;
RESET ROLE;
SET ROLE sec_other;
CREATE INDEX o_a2 ON o (a);
DROP INDEX o_a;
DROP INDEX CONCURRENTLY o_a;
REINDEX INDEX o_a;
RESET ROLE;
SET ROLE sec_owner;
DROP INDEX o_a;
CREATE INDEX CONCURRENTLY o_a ON o (a);
SELECT memtable_entries FROM forst.tables WHERE "table" = 'o'::regclass;
DROP INDEX CONCURRENTLY o_a;
SELECT memtable_entries FROM forst.tables WHERE "table" = 'o'::regclass;
SET enable_seqscan = off;
SELECT count(*) FROM o WHERE a = 2;
RESET enable_seqscan;
DROP TABLE o;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM sec_owner;
DROP ROLE sec_owner, sec_other;

-- btree's default operator classes named in CREATE INDEX stand for
-- forst's; others, and a class of another type, are refused
CREATE TABLE oc (k int PRIMARY KEY, a int, b char(3), c text COLLATE "C", d name) USING forst;
CREATE INDEX oc_a ON oc (a int4_ops);
CREATE INDEX oc_bcd ON oc USING btree (b bpchar_ops, c text_ops, d name_ops);
CREATE INDEX oc_p ON oc (c text_pattern_ops);
CREATE INDEX oc_a8 ON oc (a int8_ops);
INSERT INTO oc VALUES (1, 10, 'x', 'y', 'z');
SET enable_seqscan = off;
SELECT k FROM oc WHERE b = 'x' AND c = 'y' AND d = 'z';
RESET enable_seqscan;
SELECT i.indexrelid::regclass, array_agg(n.nspname || '.' || o.opcname || ' ' || a.amname ORDER BY x.n) AS classes
FROM pg_index i, unnest(i.indclass) WITH ORDINALITY x(cls, n)
     JOIN pg_opclass o ON o.oid = x.cls JOIN pg_namespace n ON n.oid = o.opcnamespace
     JOIN pg_am a ON a.oid = o.opcmethod
WHERE i.indrelid = 'oc'::regclass GROUP BY 1 ORDER BY 1;
DROP TABLE oc;

-- a lookup of one value of every column reads only the files whose bloom
-- filters hold the value: three files of level 0 over the same range of
-- values, each with values of its own (a % 3 is the file's); two columns,
-- so the value is the prefix of two encoded columns, and NULLs
CREATE TABLE pf (k int PRIMARY KEY, a int, b text, v text) USING forst;
CREATE TABLE ph (k int PRIMARY KEY, a int, b text, v text);
CREATE INDEX pf_ab ON pf (a, b);
CREATE INDEX ph_ab ON ph (a, b);
INSERT INTO pf SELECT g, 3 * (g % 1000), CASE WHEN g % 7 = 0 THEN NULL ELSE 'b' || g % 3 END, 'v' || g
  FROM generate_series(1, 3000) g;
SELECT forst.checkpoint() > 0 AS checkpointed;
INSERT INTO pf SELECT g, 3 * (g % 1000) + 1, 'b' || g % 3, 'v' || g FROM generate_series(3001, 6000) g;
SELECT forst.checkpoint() > 0 AS checkpointed;
INSERT INTO pf SELECT g, 3 * (g % 1000) + 2, 'b' || g % 3, 'v' || g FROM generate_series(6001, 9000) g;
SELECT forst.checkpoint() > 0 AS checkpointed;
INSERT INTO ph SELECT * FROM pf;
SELECT level, count(*) AS files FROM forst.table_files('pf') GROUP BY level ORDER BY level;
SELECT bloom_negatives AS negatives_before FROM forst.stats \gset
SET enable_seqscan = off;
SET enable_bitmapscan = off;
-- values of the newest file: each lookup skips the two older files
SELECT count(*), sum(k) FROM pf WHERE a = 14 AND b = 'b2';
SELECT count(*), sum(k) FROM pf WHERE a = 302 AND b = 'b1';
SELECT count(*), sum(k) FROM pf WHERE a = 605 AND b = 'b0';
SELECT count(*), sum(k) FROM pf WHERE a = 1211 AND b = 'b2';
SELECT count(*), sum(k) FROM pf WHERE a = 2999 AND b = 'b2';
-- the filters' negatives: 900 lookups of the newest file's values, each
-- in the older files' ranges (a < 2997), so 1800 filter checks; at 10 bits
-- a key about 0.85% are false positives (the index OID is in every hashed
-- prefix, so which ones depends on it); 1700 leaves room for 100
SELECT bloom_negatives AS negatives_before FROM forst.stats \gset
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT count(*) AS found
  FROM generate_series(0, 899) i,
       LATERAL (SELECT k FROM pf WHERE a = 3 * i + 2 AND b = 'b' || (i + 1) % 3) x;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT bloom_negatives - :negatives_before >= 1700 AS files_skipped FROM forst.stats;
-- every value, NULL and absent ones, as heap answers
SELECT count(*) AS lookups,
       count(*) FILTER (WHERE f IS DISTINCT FROM h) AS different
  FROM (SELECT x.a, x.b,
               (SELECT array_agg(k ORDER BY k) FROM pf WHERE pf.a = x.a AND pf.b = x.b) AS f,
               (SELECT array_agg(k ORDER BY k) FROM ph WHERE ph.a = x.a AND ph.b = x.b) AS h
          FROM (SELECT a, b FROM ph UNION SELECT a + 5000, b FROM ph) x) y;
SELECT array_agg(k ORDER BY k) = (SELECT array_agg(k ORDER BY k) FROM ph WHERE a = 21 AND b IS NULL) AS nulls_same
  FROM pf WHERE a = 21 AND b IS NULL;
-- a moved entry: its tombstone, in a newer file, hides the entry
UPDATE pf SET a = 3001 WHERE k = 5;
UPDATE ph SET a = 3001 WHERE k = 5;
SELECT forst.checkpoint() > 0 AS checkpointed;
SELECT k FROM pf WHERE a = 15 AND b = 'b2';
SELECT k FROM ph WHERE a = 15 AND b = 'b2';
SELECT k FROM pf WHERE a = 3001 AND b = 'b2';
RESET enable_bitmapscan;
RESET enable_seqscan;
DROP TABLE pf, ph;

DROP TABLE s, h, r, nd, j, u;
DROP FUNCTION same(text), on_both(text);
DROP EXTENSION forst;
