-- ALTER TABLE ... ADD PRIMARY KEY on a forst table that has rows rewrites
-- the table under the key, as pg_dump's output needs (CREATE TABLE, COPY,
-- then ADD PRIMARY KEY); PostgreSQL's own rewrites of keyed forst tables
-- (ALTER COLUMN ... TYPE, ADD COLUMN with a volatile default) keep the key.
-- src/am/ddl/rekey.c.
\set SHOW_CONTEXT never
CREATE EXTENSION forst;

-- a keyless table with rows gets a composite key
CREATE TABLE rk (id int NOT NULL, tenant text COLLATE "C" NOT NULL, v int) USING forst;
INSERT INTO rk SELECT g, 't' || (g % 3), g * 10 FROM generate_series(1, 1000) g;
ALTER TABLE rk ADD CONSTRAINT rk_pkey PRIMARY KEY (tenant, id);
SELECT c.relname, a.amname, i.indisprimary
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
 WHERE i.indrelid = 'rk'::regclass;
SELECT count(*), sum(v), count(DISTINCT (tenant, id)) FROM rk;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM rk WHERE tenant = 't1' AND id = 4;
SELECT * FROM rk WHERE tenant = 't1' AND id = 4;
SELECT tenant, id FROM rk WHERE tenant = 't2' ORDER BY tenant, id LIMIT 3;
RESET enable_seqscan;
INSERT INTO rk VALUES (4, 't1', 0) ON CONFLICT (tenant, id) DO UPDATE SET v = -1 RETURNING *;
INSERT INTO rk VALUES (4, 't1', 0);
-- one primary key only; REINDEX rebuilds the key (which stores nothing)
ALTER TABLE rk ADD PRIMARY KEY (id);
REINDEX TABLE rk;
SELECT * FROM rk WHERE tenant = 't0' AND id = 3;

-- duplicates in the new key: a unique violation, and the table as it was
CREATE TABLE rk_dup (k int NOT NULL, v text) USING forst;
INSERT INTO rk_dup VALUES (1, 'a'), (2, 'b'), (1, 'c');
ALTER TABLE rk_dup ADD PRIMARY KEY (k);
DO $$
BEGIN
    ALTER TABLE rk_dup ADD PRIMARY KEY (k);
EXCEPTION WHEN unique_violation THEN
    RAISE NOTICE 'SQLSTATE %', SQLSTATE;
END
$$;
SELECT count(*) FROM pg_index WHERE indrelid = 'rk_dup'::regclass;
SELECT * FROM rk_dup ORDER BY k, v;

-- NULLs in a key column: as for heap, a not-null violation (23502)
CREATE TABLE rk_null (k int, v text) USING forst;
INSERT INTO rk_null VALUES (1, 'a'), (NULL, 'b');
ALTER TABLE rk_null ADD PRIMARY KEY (k);
DO $$
BEGIN
    ALTER TABLE rk_null ADD PRIMARY KEY (k);
EXCEPTION WHEN not_null_violation THEN
    RAISE NOTICE 'SQLSTATE %', SQLSTATE;
END
$$;
DELETE FROM rk_null WHERE k IS NULL;
ALTER TABLE rk_null ADD PRIMARY KEY (k);
SELECT * FROM rk_null WHERE k = 1;

-- ROLLBACK, and ROLLBACK TO SAVEPOINT, leave the table keyless with its rows
CREATE TABLE rk_rb (k int NOT NULL, v text) USING forst;
INSERT INTO rk_rb SELECT g, 'r' || g FROM generate_series(1, 300) g;
BEGIN;
ALTER TABLE rk_rb ADD PRIMARY KEY (k);
SELECT * FROM rk_rb WHERE k = 7;
ROLLBACK;
BEGIN;
SAVEPOINT s;
ALTER TABLE rk_rb ADD PRIMARY KEY (k);
ROLLBACK TO SAVEPOINT s;
INSERT INTO rk_rb VALUES (7, 'again');
COMMIT;
SELECT count(*) FROM pg_index WHERE indrelid = 'rk_rb'::regclass;
SELECT * FROM rk_rb WHERE k = 7 ORDER BY v;

-- all in one transaction, as pg_restore --single-transaction does
BEGIN;
CREATE TABLE rk_tx (k bigint, w int, v text) USING forst;
INSERT INTO rk_tx SELECT g, g % 5, 'x' FROM generate_series(1, 500) g;
ALTER TABLE rk_tx ADD PRIMARY KEY (k, w);
UPDATE rk_tx SET v = 'y' WHERE k = 10 AND w = 0;
COMMIT;
SELECT count(*), count(*) FILTER (WHERE v = 'y') FROM rk_tx;
-- a key created in this transaction, rebuilt
BEGIN;
CREATE TABLE rk_tx2 (k int PRIMARY KEY) USING forst;
INSERT INTO rk_tx2 SELECT generate_series(1, 10);
REINDEX TABLE rk_tx2;
SELECT count(*) FROM rk_tx2 WHERE k = 3;
ROLLBACK;

-- ALTER COLUMN ... TYPE of a key column: the key is dropped and added
-- again as forst_key, under its name and with its comment, and the table
-- written under it
CREATE TABLE rk_ty (k int PRIMARY KEY, v text) USING forst;
COMMENT ON CONSTRAINT rk_ty_pkey ON rk_ty IS 'the key';
INSERT INTO rk_ty SELECT g, 'v' || g FROM generate_series(1, 200) g;
ALTER TABLE rk_ty ALTER COLUMN k TYPE bigint;
SELECT a.amname, pg_get_indexdef(i.indexrelid), obj_description(con.oid, 'pg_constraint')
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
  JOIN pg_constraint con ON con.conindid = i.indexrelid
 WHERE i.indrelid = 'rk_ty'::regclass;
SELECT * FROM rk_ty WHERE k = 42;
INSERT INTO rk_ty VALUES (42, 'new') ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING *;
INSERT INTO rk_ty VALUES (5000000000, 'big');
SELECT count(*), count(*) FILTER (WHERE k = 5000000000) FROM rk_ty;
-- a change that needs no rewrite of the rows (varchar(10) to varchar(20))
CREATE TABLE rk_vc (k varchar(10) COLLATE "C", w int, v int, PRIMARY KEY (w, k)) USING forst;
INSERT INTO rk_vc VALUES ('a', 1, 1), ('b', 1, 2), ('a', 2, 3);
ALTER TABLE rk_vc ALTER COLUMN k TYPE varchar(20) COLLATE "C";
SELECT * FROM rk_vc WHERE w = 1 AND k = 'b';
INSERT INTO rk_vc VALUES ('a', 2, 0);
-- without COLLATE "C" the new type's default collation is refused, as in
-- CREATE TABLE; nor can every type be a key
ALTER TABLE rk_vc ALTER COLUMN k TYPE text;
ALTER TABLE rk_vc ALTER COLUMN k TYPE interval USING interval '1 day';
SELECT pg_get_indexdef('rk_vc_pkey'::regclass);
-- a rewrite of a keyed table for another column keeps the key
ALTER TABLE rk_ty ADD COLUMN r float8 DEFAULT random();
SELECT k, v, r IS NOT NULL FROM rk_ty WHERE k = 42;
INSERT INTO rk_ty VALUES (42, 'dup');

DROP TABLE rk, rk_dup, rk_null, rk_rb, rk_tx, rk_ty, rk_vc;
DROP EXTENSION forst;
