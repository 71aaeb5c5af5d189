-- UNIQUE secondary indexes and UNIQUE constraints on forst tables: each
-- statement runs on a forst table and on a heap twin; their contents, and
-- the errors they raise, must be the same.
CREATE EXTENSION forst;
CREATE ROLE uq_owner;
CREATE ROLE uq_other;
GRANT CREATE ON SCHEMA public TO uq_owner;
SET ROLE uq_owner;

CREATE TABLE uf (k int PRIMARY KEY, u int UNIQUE, e text, v text) USING forst;
CREATE UNIQUE INDEX uf_e ON uf (e);
CREATE TABLE uh (k int PRIMARY KEY, u int UNIQUE, e text, v text) USING heap;
CREATE UNIQUE INDEX uh_e ON uh (e);
\d uf

-- rows of two tables that differ (none when they are equal)
CREATE FUNCTION twin_diff() RETURNS SETOF text LANGUAGE sql AS $$
  (SELECT 'forst only: ' || f::text FROM (SELECT * FROM uf EXCEPT SELECT * FROM uh) f)
  UNION ALL
  (SELECT 'heap only: ' || h::text FROM (SELECT * FROM uh EXCEPT SELECT * FROM uf) h)
$$;
-- runs a statement on both twins (@T@ is the table), reports each outcome
CREATE FUNCTION twins(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	rf text;
	rh text;
BEGIN
	BEGIN
		EXECUTE replace(q, '@T@', 'uf');
		rf := 'ok';
	EXCEPTION WHEN OTHERS THEN
		rf := SQLSTATE || ' ' || replace(SQLERRM, 'uf', '@T@');
	END;
	BEGIN
		EXECUTE replace(q, '@T@', 'uh');
		rh := 'ok';
	EXCEPTION WHEN OTHERS THEN
		rh := SQLSTATE || ' ' || replace(SQLERRM, 'uh', '@T@');
	END;
	RETURN CASE WHEN rf = rh THEN rf ELSE 'DIFFERENT forst: ' || rf || ' heap: ' || rh END;
END $$;

SELECT twins($$INSERT INTO @T@ VALUES (1, 10, 'a', 'one'), (2, 20, 'b', 'two'), (3, NULL, NULL, 'n1'), (4, NULL, NULL, 'n2')$$);
-- a duplicate by insert, by update, within one statement
SELECT twins($$INSERT INTO @T@ VALUES (5, 10, 'c', 'dup u')$$);
SELECT twins($$INSERT INTO @T@ VALUES (5, 50, 'a', 'dup e')$$);
SELECT twins($$INSERT INTO @T@ VALUES (5, 50, 'c', 'x'), (6, 50, 'd', 'y')$$);
SELECT twins($$UPDATE @T@ SET u = 20 WHERE k = 1$$);
SELECT twins($$UPDATE @T@ SET u = 20 WHERE u IN (10, 20)$$);
-- free values, NULLs, an update that keeps the value, a key change
SELECT twins($$INSERT INTO @T@ VALUES (5, 50, 'c', 'five'), (6, NULL, NULL, 'n3')$$);
SELECT twins($$UPDATE @T@ SET v = v || '!' WHERE u = 10$$);
SELECT twins($$UPDATE @T@ SET k = 100 WHERE k = 2$$);
SELECT twins($$UPDATE @T@ SET k = 2, u = 21 WHERE k = 100$$);
SELECT twins($$UPDATE @T@ SET u = 20 WHERE k = 2$$);
-- a value freed by delete, by update, and in the same transaction
SELECT twins($$DELETE FROM @T@ WHERE k = 5$$);
SELECT twins($$INSERT INTO @T@ VALUES (7, 50, 'c', 'reused')$$);
SELECT twins($$UPDATE @T@ SET u = 51 WHERE k = 7$$);
SELECT twins($$INSERT INTO @T@ VALUES (8, 50, 'e', 'reused after update')$$);
BEGIN;
SELECT twins($$DELETE FROM @T@ WHERE k = 8$$);
SELECT twins($$INSERT INTO @T@ VALUES (9, 50, 'e', 'in one transaction')$$);
COMMIT;
-- rolled back and savepoints: the value is free again
BEGIN;
SELECT twins($$INSERT INTO @T@ VALUES (10, 60, 'f', 'rolled back')$$);
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT twins($$INSERT INTO @T@ VALUES (10, 60, 'f', 'to savepoint')$$);
ROLLBACK TO s;
SELECT twins($$INSERT INTO @T@ VALUES (11, 60, 'f', 'after savepoint')$$);
COMMIT;
SELECT * FROM twin_diff();
SELECT * FROM uf ORDER BY k;

-- ON CONFLICT with the unique secondary index as arbiter, or not
SELECT twins($$INSERT INTO @T@ VALUES (12, 60, 'g', 'x') ON CONFLICT (u) DO NOTHING$$);
SELECT twins($$INSERT INTO @T@ VALUES (12, 60, 'g', 'x') ON CONFLICT (u) DO UPDATE SET v = 'upserted by u'$$);
SELECT twins($$INSERT INTO @T@ VALUES (12, 61, 'f', 'x') ON CONFLICT (e) DO UPDATE SET v = excluded.v || ' by e'$$);
SELECT twins($$INSERT INTO @T@ VALUES (1, 99, 'z', 'key taken, u arbiter') ON CONFLICT (u) DO NOTHING$$);
SELECT twins($$INSERT INTO @T@ VALUES (13, 20, 'z', 'u taken, key arbiter') ON CONFLICT (k) DO NOTHING$$);
SELECT twins($$INSERT INTO @T@ VALUES (13, 20, 'z', 'no target') ON CONFLICT DO NOTHING$$);
SELECT twins($$INSERT INTO @T@ VALUES (1, 98, 'y', 'no target') ON CONFLICT DO NOTHING$$);
SELECT twins($$INSERT INTO @T@ VALUES (14, 70, 'h', 'new') ON CONFLICT DO NOTHING$$);
SELECT twins($$INSERT INTO @T@ SELECT g, g % 3 + 60, NULL, 'batch' FROM generate_series(20, 25) g ON CONFLICT (u) DO UPDATE SET v = @T@.v || '+'$$);
SELECT twins($$INSERT INTO @T@ VALUES (15, 20, 'i', 'x') ON CONFLICT (k) DO UPDATE SET v = 'y'$$);
-- DO UPDATE that moves the row onto a taken value
SELECT twins($$INSERT INTO @T@ VALUES (1, 10, 'a', 'x') ON CONFLICT (k) DO UPDATE SET u = 20$$);
SELECT * FROM twin_diff();

-- COPY checks too
\copy uf FROM stdin
30	300	copy1	c
31	300	copy2	c
\.
SELECT count(*) FROM uf WHERE k >= 30;

-- the entries in SST files: the same checks
RESET ROLE;
SELECT forst.checkpoint() > 0 AS checkpointed;
SET ROLE uq_owner;
SELECT twins($$INSERT INTO @T@ VALUES (16, 10, 'j', 'dup after flush')$$);
SELECT twins($$INSERT INTO @T@ VALUES (16, 80, 'j', 'after flush')$$);
SELECT * FROM twin_diff();

-- lookups through the index
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM uf WHERE u = 60;
SELECT * FROM uf WHERE u = 60;
SELECT k, e FROM uf WHERE e = 'f';
RESET enable_seqscan;

-- CREATE UNIQUE INDEX over rows that have a duplicate fails, as on heap
SELECT twins($$UPDATE @T@ SET v = 'same' WHERE k IN (3, 4)$$);
SELECT twins($$CREATE UNIQUE INDEX ON @T@ (v)$$);
SELECT twins($$UPDATE @T@ SET v = v || k WHERE true$$);
SELECT twins($$CREATE UNIQUE INDEX @T@_v ON @T@ (v)$$);
SELECT twins($$INSERT INTO @T@ VALUES (17, 81, 'k', 'same3')$$);
SELECT twins($$INSERT INTO @T@ VALUES (17, 81, 'k', 'same')$$);
SELECT * FROM twin_diff();
-- multi-column, NULLs distinct and not
CREATE TABLE mf (k int PRIMARY KEY, a int, b text) USING forst;
INSERT INTO mf VALUES (1, 1, 'x'), (2, 1, NULL), (3, 1, NULL), (4, NULL, NULL), (5, NULL, NULL);
CREATE UNIQUE INDEX mf_ab ON mf (a, b);
INSERT INTO mf VALUES (6, 1, 'x');
INSERT INTO mf VALUES (6, 1, NULL);
CREATE UNIQUE INDEX mf_ab_nnd ON mf (a, b) NULLS NOT DISTINCT;
DELETE FROM mf WHERE k IN (3, 5, 6);
CREATE UNIQUE INDEX mf_ab_nnd ON mf (a, b) NULLS NOT DISTINCT;
INSERT INTO mf VALUES (7, NULL, NULL);
INSERT INTO mf VALUES (7, 2, NULL);
-- ON CONFLICT finds NULLs of a NULLS NOT DISTINCT index, also on a table
-- without a primary key (a statement_timeout: a disagreement would loop)
SET statement_timeout = '30s';
INSERT INTO mf VALUES (8, NULL, NULL) ON CONFLICT DO NOTHING;
INSERT INTO mf VALUES (8, NULL, NULL) ON CONFLICT (a, b) DO NOTHING;
CREATE TABLE ut (i int UNIQUE NULLS NOT DISTINCT, t text) USING forst;
INSERT INTO ut VALUES (1, 'one');
INSERT INTO ut (t) VALUES ('six');
INSERT INTO ut (t) VALUES ('seven');
INSERT INTO ut (t) VALUES ('eight') ON CONFLICT DO NOTHING;
INSERT INTO ut VALUES (1, 'nine') ON CONFLICT (i) DO UPDATE SET t = ut.t || ', nine';
INSERT INTO ut VALUES (NULL, 'ten') ON CONFLICT (i) DO UPDATE SET t = ut.t || ', ten';
SELECT * FROM ut ORDER BY i;
RESET statement_timeout;
SELECT * FROM mf ORDER BY k;
-- a text column of the database's collation: equal strings are equal bytes
CREATE TABLE cf (k int PRIMARY KEY, t text UNIQUE) USING forst;
INSERT INTO cf VALUES (1, 'Straße'), (2, 'strasse');
INSERT INTO cf VALUES (3, 'Straße');

-- refused: deferrable, exclusion, USING INDEX
\set VERBOSITY default
\set SHOW_CONTEXT never
ALTER TABLE mf ADD CONSTRAINT mf_d UNIQUE (a) DEFERRABLE INITIALLY DEFERRED;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE df (k int PRIMARY KEY, u int UNIQUE DEFERRABLE) USING forst;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE xf (k int PRIMARY KEY, u int, EXCLUDE USING btree (u WITH =)) USING forst;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE mf ADD CONSTRAINT mf_ab_c UNIQUE USING INDEX mf_ab;
\echo :LAST_ERROR_SQLSTATE
-- a violation's message names the constraint and the value
INSERT INTO uf VALUES (40, 10, 'w', 'x');

-- another role: may insert, may not read, and is not shown the values
GRANT INSERT ON uf, uh TO uq_other;
RESET ROLE;
SET ROLE uq_other;
INSERT INTO uf VALUES (41, 10, 'w', 'x');
INSERT INTO uh VALUES (41, 10, 'w', 'x');
CREATE UNIQUE INDEX ON uf (k, u);
DROP INDEX uf_e;
ALTER TABLE uf DROP CONSTRAINT uf_u_key;
RESET ROLE;
SET ROLE uq_owner;
\set VERBOSITY terse

-- dropping the constraint frees its values; heap back and forth
ALTER TABLE uf DROP CONSTRAINT uf_u_key;
INSERT INTO uf VALUES (42, 10, 'w2', 'u free now');
DELETE FROM uf WHERE k = 42;
ALTER TABLE uf ADD CONSTRAINT uf_u_key UNIQUE (u);
ALTER TABLE uf SET ACCESS METHOD heap;
\d uf
INSERT INTO uf VALUES (43, 10, 'w3', 'x');
ALTER TABLE uf SET ACCESS METHOD forst;
\d uf
INSERT INTO uf VALUES (43, 10, 'w3', 'x');
INSERT INTO uf VALUES (43, 11, 'w3', 'x');
SELECT count(*), count(DISTINCT u) FROM uf WHERE u IS NOT NULL;

-- more unique indexes than an index may have columns
CREATE TABLE many (k int PRIMARY KEY, v int) USING forst;
DO $$ BEGIN FOR g IN 1..40 LOOP EXECUTE format('CREATE UNIQUE INDEX many_%s ON many (v)', g); END LOOP; END $$;
INSERT INTO many VALUES (1, 1);
INSERT INTO many VALUES (2, 1);
INSERT INTO many VALUES (2, 2) ON CONFLICT (v) DO NOTHING;
UPDATE many SET v = 3 WHERE k = 1;
INSERT INTO many VALUES (3, 3) ON CONFLICT DO NOTHING;
SELECT * FROM many ORDER BY k;
DROP TABLE many;

RESET ROLE;
DROP TABLE uf, uh, mf, cf, ut;
DROP FUNCTION twin_diff, twins;
REVOKE CREATE ON SCHEMA public FROM uq_owner;
DROP ROLE uq_owner, uq_other;
DROP EXTENSION forst;
