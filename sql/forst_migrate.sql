-- ALTER TABLE ... SET ACCESS METHOD between heap and forst
-- (src/am/ddl/migrate.c, docs/migration.md)
\set VERBOSITY terse
CREATE EXTENSION forst;

CREATE TABLE mig_parent (id int PRIMARY KEY);
INSERT INTO mig_parent SELECT generate_series(0, 9);

CREATE TABLE mig (
    k bigint,
    tag text COLLATE "C",
    n int NOT NULL DEFAULT 7 CHECK (n >= 0),
    f float8,
    ts timestamptz DEFAULT '2024-01-01 00:00:00+00',
    b bytea,
    u uuid,
    j jsonb,
    dropme int,
    p int REFERENCES mig_parent (id),
    CONSTRAINT mig_key PRIMARY KEY (k, tag)
);
ALTER TABLE mig DROP COLUMN dropme;
INSERT INTO mig (k, tag, n, f, ts, b, u, j, p)
SELECT g, 't' || (g % 13), g % 1000, g / 7.0,
       '2024-01-01 00:00:00+00'::timestamptz + g * interval '1 minute',
       decode(md5(g::text), 'hex'), md5(g::text)::uuid,
       jsonb_build_object('g', g, 's', repeat('x', g % 40)),
       CASE WHEN g % 5 = 0 THEN NULL ELSE g % 10 END
  FROM generate_series(1, 5000) g;
COMMENT ON TABLE mig IS 'migrated table';
COMMENT ON COLUMN mig.n IS 'a counter';
COMMENT ON CONSTRAINT mig_key ON mig IS 'its key';
CREATE ROLE regress_mig_reader;
GRANT SELECT, UPDATE (n) ON mig TO regress_mig_reader;
CREATE FUNCTION mig_touch() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN NEW.f := coalesce(NEW.f, -1); RETURN NEW; END $$;
CREATE TRIGGER mig_touch BEFORE INSERT OR UPDATE ON mig
    FOR EACH ROW EXECUTE FUNCTION mig_touch();

SELECT oid AS mig_oid FROM pg_class WHERE relname = 'mig' \gset
SELECT md5(string_agg(mig::text, ',' ORDER BY k, tag)) AS sum0 FROM mig \gset

-- What must not change: the table's OID, the constraint (name, OID,
-- comment), defaults, comments, privileges, triggers.
CREATE VIEW mig_facts AS
SELECT c.oid = :mig_oid AS same_oid,
       (SELECT amname FROM pg_am WHERE oid = c.relam) AS table_am,
       (SELECT amname FROM pg_am a JOIN pg_class i ON i.relam = a.oid
         WHERE i.oid = 'mig_key'::regclass) AS key_am,
       (SELECT string_agg(conname || ':' || contype::text || ':' || pg_get_constraintdef(oid), ' | ' ORDER BY conname)
          FROM pg_constraint WHERE conrelid = c.oid) AS constraints,
       (SELECT string_agg(attname || '=' || pg_get_expr(d.adbin, d.adrelid), ' ' ORDER BY attname)
          FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
         WHERE d.adrelid = c.oid) AS defaults,
       (SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute
         WHERE attrelid = c.oid AND attnum > 0 AND attnotnull) AS not_null,
       obj_description(c.oid, 'pg_class') AS comment,
       col_description(c.oid, 3) AS col_comment,
       (SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint
         WHERE conrelid = c.oid AND conname = 'mig_key') AS key_comment,
       (SELECT string_agg(privilege_type, ',' ORDER BY privilege_type) FROM aclexplode(c.relacl)
         WHERE grantee::regrole::text = 'regress_mig_reader') AS grants,
       (SELECT string_agg(privilege_type, ',' ORDER BY privilege_type)
          FROM pg_attribute, aclexplode(attacl)
         WHERE attrelid = c.oid AND attname = 'n' AND grantee::regrole::text = 'regress_mig_reader') AS column_grants,
       (SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger
         WHERE tgrelid = c.oid AND NOT tgisinternal) AS triggers
  FROM pg_class c WHERE c.relname = 'mig';
\x on
SELECT * FROM mig_facts;
\x off
SELECT oid AS key_oid FROM pg_constraint WHERE conname = 'mig_key' \gset

-- heap -> forst
ALTER TABLE mig SET ACCESS METHOD forst;
\x on
SELECT * FROM mig_facts;
\x off
SELECT oid = :key_oid AS same_key_oid FROM pg_constraint WHERE conname = 'mig_key';
SELECT md5(string_agg(mig::text, ',' ORDER BY k, tag)) = :'sum0' AS rows_equal FROM mig;
SELECT count(*) FROM mig;
-- the key's operator classes are forst's now, and recorded as dependencies
SELECT DISTINCT n.nspname, o.opcname FROM pg_depend d
  JOIN pg_opclass o ON d.refclassid = 'pg_opclass'::regclass AND o.oid = d.refobjid
  JOIN pg_namespace n ON n.oid = o.opcnamespace
 WHERE d.classid = 'pg_class'::regclass AND d.objid = 'mig_key'::regclass ORDER BY 2;
SELECT indisclustered, indoption::text FROM pg_index WHERE indexrelid = 'mig_key'::regclass;
-- key lookups go through forst_key
EXPLAIN (COSTS OFF) SELECT * FROM mig WHERE k = 42 AND tag = 't3';
SELECT k, tag, n FROM mig WHERE k = 42 AND tag = 't3';
-- DML works, constraints hold
INSERT INTO mig (k, tag) VALUES (42, 't3') ON CONFLICT (k, tag) DO UPDATE SET n = mig.n + 1000;
INSERT INTO mig (k, tag) VALUES (100000, 'new') ON CONFLICT (k, tag) DO NOTHING;
SELECT k, tag, n, f, ts FROM mig WHERE k IN (42, 100000) ORDER BY k;
UPDATE mig SET n = n + 1 WHERE k <= 10;
DELETE FROM mig WHERE k BETWEEN 11 AND 20;
INSERT INTO mig (k, tag) VALUES (42, 't3');
INSERT INTO mig (k, tag, n) VALUES (200000, 'x', -1);
INSERT INTO mig (k, tag, p) VALUES (200001, 'x', 99);
INSERT INTO mig (k, tag, n) VALUES (200002, 'x', NULL);
SELECT count(*), sum(n) FROM mig;
SELECT md5(string_agg(mig::text, ',' ORDER BY k, tag)) AS sum1 FROM mig \gset

-- a privilege granted on the table still works
SET ROLE regress_mig_reader;
SELECT count(*) FROM mig WHERE k < 100;
UPDATE mig SET n = 5 WHERE k = 1 AND tag = 't1';
UPDATE mig SET tag = 'no' WHERE k = 1;
RESET ROLE;
SELECT md5(string_agg(mig::text, ',' ORDER BY k, tag)) AS sum1 FROM mig \gset

-- forst -> heap
ALTER TABLE mig SET ACCESS METHOD heap;
\x on
SELECT * FROM mig_facts;
\x off
SELECT oid = :key_oid AS same_key_oid FROM pg_constraint WHERE conname = 'mig_key';
SELECT md5(string_agg(mig::text, ',' ORDER BY k, tag)) = :'sum1' AS rows_equal FROM mig;
SELECT count(*) FROM pg_depend d
  JOIN pg_opclass o ON d.refclassid = 'pg_opclass'::regclass AND o.oid = d.refobjid
 WHERE d.classid = 'pg_class'::regclass AND d.objid = 'mig_key'::regclass
   AND o.opcmethod <> (SELECT oid FROM pg_am WHERE amname = 'btree');
SELECT count(*) FROM forst.tables WHERE "table" = 'mig'::regclass;
EXPLAIN (COSTS OFF) SELECT * FROM mig WHERE k = 42 AND tag = 't3';
INSERT INTO mig (k, tag) VALUES (42, 't3') ON CONFLICT (k, tag) DO UPDATE SET n = mig.n + 1;
INSERT INTO mig (k, tag) VALUES (42, 't3');
UPDATE mig SET n = 0 WHERE k = 100000;
DELETE FROM mig WHERE k = 200000;
SELECT k, tag, n FROM mig WHERE k IN (42, 100000) ORDER BY k;
SELECT md5(string_agg(mig::text, ',' ORDER BY k, tag)) AS sum2 FROM mig \gset

-- and to forst again: nothing of the first round is left over
ALTER TABLE mig SET ACCESS METHOD forst;
SELECT md5(string_agg(mig::text, ',' ORDER BY k, tag)) = :'sum2' AS rows_equal FROM mig;
SELECT table_am, key_am FROM mig_facts;
-- the same access method again changes nothing
ALTER TABLE mig SET ACCESS METHOD forst;
SELECT table_am, key_am FROM mig_facts;

-- ROLLBACK restores the table intact, either way
BEGIN;
ALTER TABLE mig SET ACCESS METHOD heap;
INSERT INTO mig (k, tag) VALUES (300000, 'rolled back');
SELECT table_am, key_am FROM mig_facts;
ROLLBACK;
SELECT table_am, key_am FROM mig_facts;
SELECT md5(string_agg(mig::text, ',' ORDER BY k, tag)) = :'sum2' AS rows_equal FROM mig;
ALTER TABLE mig SET ACCESS METHOD heap;

CREATE TABLE mig_rb (k int PRIMARY KEY, v text);
INSERT INTO mig_rb SELECT g, 'v' || g FROM generate_series(1, 2000) g;
SELECT md5(string_agg(mig_rb::text, ',' ORDER BY k)) AS rb0 FROM mig_rb \gset
-- forst.memory().tables counts the tables with state in shared memory
SELECT tables AS tables0 FROM forst.memory() \gset
BEGIN;
ALTER TABLE mig_rb SET ACCESS METHOD forst;
SELECT count(*) FROM forst.tables WHERE "table" = 'mig_rb'::regclass;
SELECT tables - :tables0 AS new_tables FROM forst.memory();
ROLLBACK;
-- no forst state is left behind
SELECT count(*) FROM forst.tables WHERE "table" = 'mig_rb'::regclass;
SELECT tables - :tables0 AS new_tables FROM forst.memory();
SELECT (SELECT amname FROM pg_am WHERE oid = relam) FROM pg_class
 WHERE relname IN ('mig_rb', 'mig_rb_pkey') ORDER BY relname;
SELECT md5(string_agg(mig_rb::text, ',' ORDER BY k)) = :'rb0' AS rows_equal FROM mig_rb;
EXPLAIN (COSTS OFF) SELECT * FROM mig_rb WHERE k = 5;
SELECT * FROM mig_rb WHERE k = 5;
-- in a subtransaction
BEGIN;
SAVEPOINT s;
ALTER TABLE mig_rb SET ACCESS METHOD forst;
INSERT INTO mig_rb VALUES (2001, 'x');
ROLLBACK TO SAVEPOINT s;
SELECT count(*) FROM forst.tables WHERE "table" = 'mig_rb'::regclass;
SELECT tables - :tables0 AS new_tables FROM forst.memory();
ALTER TABLE mig_rb SET ACCESS METHOD forst;
COMMIT;
SELECT md5(string_agg(mig_rb::text, ',' ORDER BY k)) = :'rb0' AS rows_equal FROM mig_rb;
SELECT count(*) FROM forst.tables WHERE "table" = 'mig_rb'::regclass;
SELECT tables - :tables0 AS new_tables FROM forst.memory();
-- back to heap: the forst state goes when that commits
BEGIN;
ALTER TABLE mig_rb SET ACCESS METHOD heap;
SELECT tables - :tables0 AS new_tables FROM forst.memory();
COMMIT;
SELECT tables - :tables0 AS new_tables FROM forst.memory();
SELECT md5(string_agg(mig_rb::text, ',' ORDER BY k)) = :'rb0' AS rows_equal FROM mig_rb;

-- a table without a primary key: hidden row ids on forst
CREATE TABLE mig_nokey (a int, b text);
INSERT INTO mig_nokey SELECT g % 100, 'b' || g FROM generate_series(1, 3000) g;
SELECT md5(string_agg(mig_nokey::text, ',' ORDER BY a, b)) AS nk0 FROM mig_nokey \gset
ALTER TABLE mig_nokey SET ACCESS METHOD forst;
SELECT md5(string_agg(mig_nokey::text, ',' ORDER BY a, b)) = :'nk0' AS rows_equal FROM mig_nokey;
INSERT INTO mig_nokey VALUES (1, 'b1');
DELETE FROM mig_nokey WHERE a = 2;
UPDATE mig_nokey SET b = b || '!' WHERE a = 3;
SELECT md5(string_agg(mig_nokey::text, ',' ORDER BY a, b)) AS nk1 FROM mig_nokey \gset
ALTER TABLE mig_nokey SET ACCESS METHOD heap;
SELECT md5(string_agg(mig_nokey::text, ',' ORDER BY a, b)) = :'nk1' AS rows_equal, count(*) FROM mig_nokey;

-- a table_rewrite event trigger reading the table by key during the ALTER
-- sees it whole: the key's index matches the table until the swap
CREATE FUNCTION mig_probe() RETURNS event_trigger LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  SET LOCAL enable_seqscan = off;
  EXECUTE format('SELECT count(*) FROM %s WHERE k BETWEEN 1 AND 10',
                 pg_event_trigger_table_rewrite_oid()::regclass) INTO n;
  RAISE NOTICE 'the rewritten table has % rows with k in 1..10', n;
END $$;
CREATE EVENT TRIGGER mig_probe ON table_rewrite EXECUTE FUNCTION mig_probe();
CREATE TABLE mig_ev (k int PRIMARY KEY, v text);
INSERT INTO mig_ev SELECT g, 'v' || g FROM generate_series(1, 100) g;
ALTER TABLE mig_ev SET ACCESS METHOD forst;
ALTER TABLE mig_ev SET ACCESS METHOD heap;
DROP EVENT TRIGGER mig_probe;
DROP FUNCTION mig_probe();
SELECT count(*) FROM mig_ev;
-- one migration at a time: not another from the event trigger of one
CREATE TABLE mig_ev2 (k int PRIMARY KEY);
CREATE FUNCTION mig_nest() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  ALTER TABLE mig_ev2 SET ACCESS METHOD forst;
END $$;
CREATE EVENT TRIGGER mig_nest ON table_rewrite EXECUTE FUNCTION mig_nest();
\set VERBOSITY default
\set SHOW_CONTEXT never
ALTER TABLE mig_ev SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
\set SHOW_CONTEXT errors
DROP EVENT TRIGGER mig_nest;
DROP FUNCTION mig_nest();
SELECT relname, (SELECT amname FROM pg_am WHERE oid = relam) FROM pg_class
 WHERE relname IN ('mig_ev', 'mig_ev2') ORDER BY relname;
DROP TABLE mig_ev2;

-- rows wider than a heap page: TOASTed on heap, stored whole on forst,
-- TOASTed again back on heap (which gets a TOAST table for them)
CREATE TABLE mig_wide (k int PRIMARY KEY, big text);
ALTER TABLE mig_wide ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO mig_wide SELECT g, (SELECT string_agg(md5(g::text || i::text), '') FROM generate_series(1, 400) i)
  FROM generate_series(1, 30) g;
SELECT md5(string_agg(mig_wide::text, ',' ORDER BY k)) AS wide0, min(length(big)) AS wide_len FROM mig_wide \gset
SELECT :wide_len AS value_bytes, pg_relation_size(reltoastrelid) > 0 AS toasted FROM pg_class WHERE relname = 'mig_wide';
ALTER TABLE mig_wide SET ACCESS METHOD forst;
SELECT reltoastrelid = 0 AS no_toast_table FROM pg_class WHERE relname = 'mig_wide';
SELECT md5(string_agg(mig_wide::text, ',' ORDER BY k)) = :'wide0' AS rows_equal FROM mig_wide;
BEGIN;
ALTER TABLE mig_wide SET ACCESS METHOD heap;
ROLLBACK;
SELECT reltoastrelid = 0 AS no_toast_table FROM pg_class WHERE relname = 'mig_wide';
ALTER TABLE mig_wide SET ACCESS METHOD heap;
SELECT pg_relation_size(reltoastrelid) > 0 AS toasted FROM pg_class WHERE relname = 'mig_wide';
SELECT md5(string_agg(mig_wide::text, ',' ORDER BY k)) = :'wide0' AS rows_equal FROM mig_wide;
INSERT INTO mig_wide VALUES (31, repeat('y', 100000));
SELECT count(*), max(length(big)) FROM mig_wide;
-- no TOAST table is left without its table
SELECT count(*) FROM pg_class t WHERE t.relnamespace = 'pg_toast'::regnamespace AND t.relkind = 't'
   AND NOT EXISTS (SELECT FROM pg_class o WHERE o.reltoastrelid = t.oid);

-- a forst table leaving forst: rows expired by its watermark are not
-- copied, and its TTL column and watermark go with forst
CREATE TABLE mig_exp (k int PRIMARY KEY, ts timestamptz NOT NULL) USING forst;
INSERT INTO mig_exp SELECT g, '2024-01-01 00:00:00+00'::timestamptz + g * interval '1 day'
  FROM generate_series(1, 100) g;
SELECT forst.set_ttl('mig_exp', 'ts', NULL);
SELECT forst.advance_watermark('mig_exp', '2024-02-01 00:00:00+00');
SELECT count(*) FROM mig_exp;
ALTER TABLE mig_exp SET ACCESS METHOD heap;
SELECT count(*), min(k) FROM mig_exp;
SELECT count(*) FROM forst.expiry WHERE relid = 'mig_exp'::regclass;
ALTER TABLE mig_exp SET ACCESS METHOD forst;
SELECT count(*), min(k) FROM mig_exp;

-- text keys: forst keys need collation "C"
CREATE TABLE mig_text (k text PRIMARY KEY, v int);
INSERT INTO mig_text VALUES ('b', 2), ('a', 1), ('B', 3);
\set VERBOSITY default
ALTER TABLE mig_text SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
\set VERBOSITY terse
ALTER TABLE mig_text ALTER COLUMN k TYPE text COLLATE "C";
ALTER TABLE mig_text SET ACCESS METHOD forst;
SELECT * FROM mig_text ORDER BY k;
SELECT * FROM mig_text WHERE k = 'B';

-- refusals: SQLSTATE 0A000 and a hint
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE TABLE mig_uniq (k int PRIMARY KEY, u int, EXCLUDE USING btree (u WITH =));
ALTER TABLE mig_uniq SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE mig_idx (k int PRIMARY KEY, v int);
CREATE INDEX mig_idx_v ON mig_idx USING hash (v);
ALTER TABLE mig_idx SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
DROP INDEX mig_idx_v;
-- an index on an expression becomes a forst index on the expression
CREATE INDEX mig_idx_w ON mig_idx ((v + 1));
INSERT INTO mig_idx SELECT g, g * 2 FROM generate_series(1, 50) g;
ALTER TABLE mig_idx SET ACCESS METHOD forst;
SELECT pg_get_indexdef('mig_idx_w'::regclass);
SET enable_seqscan = off;
SELECT k FROM mig_idx WHERE v + 1 = 21;
RESET enable_seqscan;
CREATE TABLE mig_excl (k int PRIMARY KEY, r int4range, EXCLUDE USING gist (r WITH &&));
ALTER TABLE mig_excl SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
-- a table that foreign keys reference migrates (forst_foreign_keys has more)
CREATE TABLE mig_ref (k int PRIMARY KEY);
CREATE TABLE mig_ref_child (k int REFERENCES mig_ref);
ALTER TABLE mig_ref SET ACCESS METHOD forst;
INSERT INTO mig_ref_child VALUES (1);
CREATE TABLE mig_num (k inet PRIMARY KEY);
ALTER TABLE mig_num SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE mig_def (k int PRIMARY KEY DEFERRABLE);
ALTER TABLE mig_def SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE mig_incl (k int, v int, PRIMARY KEY (k) INCLUDE (v));
ALTER TABLE mig_incl SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE mig_ff (k int, CONSTRAINT mig_ff_pkey PRIMARY KEY (k) WITH (fillfactor = 50));
ALTER TABLE mig_ff SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
-- an unlogged table becomes an unlogged (checkpoint-durable) forst table
CREATE UNLOGGED TABLE mig_unlogged (k int PRIMARY KEY);
INSERT INTO mig_unlogged VALUES (1), (2);
ALTER TABLE mig_unlogged SET ACCESS METHOD forst;
SELECT relpersistence, (SELECT amname FROM pg_am WHERE oid = relam),
       (SELECT array_agg(k ORDER BY k) FROM mig_unlogged)
  FROM pg_class WHERE relname = 'mig_unlogged';
CREATE TABLE mig_parted (k int PRIMARY KEY) PARTITION BY RANGE (k);
CREATE TABLE mig_part1 PARTITION OF mig_parted FOR VALUES FROM (0) TO (10);
ALTER TABLE mig_part1 SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
CREATE MATERIALIZED VIEW mig_mv AS SELECT 1 AS a;
ALTER MATERIALIZED VIEW mig_mv SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE mig_uniq SET ACCESS METHOD forst, ADD COLUMN z int;
\echo :LAST_ERROR_SQLSTATE
ALTER TABLE mig SET ACCESS METHOD forst, ALTER COLUMN n SET DEFAULT 8;
\echo :LAST_ERROR_SQLSTATE
-- a forst table still refuses a deferrable primary key when created
CREATE TABLE mig_fdef (k int PRIMARY KEY DEFERRABLE) USING forst;
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE mig_fdef (k int, PRIMARY KEY (k) DEFERRABLE) USING forst;
\echo :LAST_ERROR_SQLSTATE
-- only the owner may change the access method
SET ROLE regress_mig_reader;
ALTER TABLE mig_rb SET ACCESS METHOD forst;
\echo :LAST_ERROR_SQLSTATE
RESET ROLE;
-- the refused tables are unchanged
SELECT relname, (SELECT amname FROM pg_am WHERE oid = relam) FROM pg_class
 WHERE relname IN ('mig_uniq', 'mig_uniq_pkey', 'mig')
 ORDER BY relname;
\set VERBOSITY terse

DROP VIEW mig_facts;
DROP TABLE mig, mig_rb, mig_nokey, mig_wide, mig_ev, mig_exp, mig_text, mig_uniq, mig_idx, mig_excl,
    mig_ref_child, mig_ref, mig_num, mig_def, mig_incl, mig_ff, mig_unlogged, mig_parted;
DROP MATERIALIZED VIEW mig_mv;
DROP TABLE mig_parent;
DROP FUNCTION mig_touch();
DROP ROLE regress_mig_reader;
DROP EXTENSION forst;
