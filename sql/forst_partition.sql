--
-- forst partitions under a partitioned table with a primary key: the
-- partitioned table's key is forst's (access method forst_key), every
-- partition is a forst table with a copy of it, rows are routed, pruned and
-- kept unique per partition as PostgreSQL does for heap partitions, also
-- by INSERT ... ON CONFLICT through the partitioned table.  Done
-- by an ordinary role that owns the tables; a second role can neither add
-- partitions to them nor change their keys.  A heap twin gets the same
-- statements and must end with the same rows.
--
CREATE EXTENSION forst;
SET TimeZone = 'UTC';
CREATE ROLE regress_part_owner;
CREATE ROLE regress_part_hostile;
GRANT CREATE ON SCHEMA public TO regress_part_owner, regress_part_hostile;
SET ROLE regress_part_owner;

-- Created while the default is forst: the key is forst's, text key columns
-- get COLLATE "C" as a forst table's do.
SET default_table_access_method = forst;
CREATE TABLE pt (tenant text, day date, n int, note text, PRIMARY KEY (tenant, day))
  PARTITION BY RANGE (day);
RESET default_table_access_method;
\d pt
CREATE TABLE pt_jan PARTITION OF pt FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE pt_feb PARTITION OF pt FOR VALUES FROM ('2026-02-01') TO ('2026-03-01') USING forst;
CREATE TABLE pt_rest PARTITION OF pt DEFAULT;
SELECT c.relname, a.amname, i.indisprimary, (SELECT amname FROM pg_am WHERE oid = ic.relam) AS key_am
  FROM pg_inherits h
  JOIN pg_class c ON c.oid = h.inhrelid
  JOIN pg_am a ON a.oid = c.relam
  JOIN pg_index i ON i.indrelid = c.oid
  JOIN pg_class ic ON ic.oid = i.indexrelid
 WHERE h.inhparent = 'pt'::regclass ORDER BY 1;
-- the heap twin
CREATE TABLE ph (tenant text COLLATE "C", day date, n int, note text, PRIMARY KEY (tenant, day))
  PARTITION BY RANGE (day);
CREATE TABLE ph_jan PARTITION OF ph FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE ph_feb PARTITION OF ph FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE ph_rest PARTITION OF ph DEFAULT;

-- rows routed to their partitions
INSERT INTO pt SELECT 't' || (g % 7), '2026-01-01'::date + (g / 7), g, 'n' || g
  FROM generate_series(0, 699) g;
INSERT INTO ph SELECT * FROM pt;
SELECT tableoid::regclass, count(*), min(day), max(day) FROM pt GROUP BY 1 ORDER BY 1;
-- the key holds in each partition, through the partitioned table or not
INSERT INTO pt VALUES ('t3', '2026-01-01', 0, 'again');
INSERT INTO pt_feb VALUES ('t3', '2026-02-01', 0, 'again');
-- a row outside the partition it is inserted into
INSERT INTO pt_jan VALUES ('t3', '2026-02-10', 0, 'misplaced');
-- lookups by key are pruned to one partition and use its key
EXPLAIN (COSTS OFF) SELECT n FROM pt WHERE tenant = 't3' AND day = '2026-01-15';
SELECT n FROM pt WHERE tenant = 't3' AND day = '2026-01-15';
EXPLAIN (COSTS OFF) SELECT count(*) FROM pt WHERE day >= '2026-02-01' AND day < '2026-03-01';

-- ON CONFLICT through the partitioned table: the partitions' keys are the
-- arbiters, rows of one statement go to several partitions
INSERT INTO pt AS t VALUES ('t3', '2026-01-01', 1, 'x'), ('t3', '2026-02-01', 1, 'x'),
                           ('new', '2026-01-02', 5, 'y'), ('new', '2026-05-02', 6, 'y')
  ON CONFLICT (tenant, day) DO UPDATE SET n = t.n + 1000 RETURNING tableoid::regclass, tenant, day, n;
INSERT INTO ph AS t VALUES ('t3', '2026-01-01', 1, 'x'), ('t3', '2026-02-01', 1, 'x'),
                           ('new', '2026-01-02', 5, 'y'), ('new', '2026-05-02', 6, 'y')
  ON CONFLICT (tenant, day) DO UPDATE SET n = t.n + 1000;
INSERT INTO pt VALUES ('t3', '2026-01-01', 1, 'x'), ('t6', '2026-03-01', 1, 'x'), ('fresh', '2026-02-03', 1, 'z')
  ON CONFLICT DO NOTHING RETURNING tableoid::regclass, tenant, day, n;
INSERT INTO ph VALUES ('t3', '2026-01-01', 1, 'x'), ('t6', '2026-03-01', 1, 'x'), ('fresh', '2026-02-03', 1, 'z')
  ON CONFLICT DO NOTHING;
-- a batch upsert from a query, as a pipeline writes its state
INSERT INTO pt AS t SELECT 't' || (g % 9), '2026-01-20'::date + g, g, 'batch' FROM generate_series(1, 60) g
  ON CONFLICT (tenant, day) DO UPDATE SET n = t.n + excluded.n, note = excluded.note;
INSERT INTO ph AS t SELECT 't' || (g % 9), '2026-01-20'::date + g, g, 'batch' FROM generate_series(1, 60) g
  ON CONFLICT (tenant, day) DO UPDATE SET n = t.n + excluded.n, note = excluded.note;
-- a trigger that analyzes another partition while the statement runs: that
-- partition's key is reloaded in the relcache before the first row goes to
-- it, and still serves as its arbiter; a query planned in the trigger reads
-- that partition in key order through its key
CREATE FUNCTION analyze_feb() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  ANALYZE pt_feb;
  FOR line IN EXPLAIN (COSTS OFF) SELECT * FROM pt_feb ORDER BY tenant, day LIMIT 1 LOOP
    RAISE NOTICE 'planned in the trigger: %', line;
  END LOOP;
  RETURN NEW;
END $$;
CREATE TRIGGER analyze_feb BEFORE INSERT ON pt_jan FOR EACH ROW EXECUTE FUNCTION analyze_feb();
INSERT INTO pt AS t VALUES ('t0', '2026-01-05', 1, 'trg'), ('t0', '2026-02-05', 1, 'trg'), ('trg', '2026-02-06', 1, 'trg')
  ON CONFLICT (tenant, day) DO UPDATE SET n = t.n + 1, note = excluded.note RETURNING tableoid::regclass, tenant, day;
INSERT INTO ph AS t VALUES ('t0', '2026-01-05', 1, 'trg'), ('t0', '2026-02-05', 1, 'trg'), ('trg', '2026-02-06', 1, 'trg')
  ON CONFLICT (tenant, day) DO UPDATE SET n = t.n + 1, note = excluded.note;
DROP TRIGGER analyze_feb ON pt_jan;
DROP FUNCTION analyze_feb();
-- ... and into a partition itself, as on any forst table
INSERT INTO pt_jan AS t VALUES ('t3', '2026-01-01', 1, 'x')
  ON CONFLICT (tenant, day) DO UPDATE SET n = t.n + 1 RETURNING tenant, day, n;
INSERT INTO ph_jan AS t VALUES ('t3', '2026-01-01', 1, 'x')
  ON CONFLICT (tenant, day) DO UPDATE SET n = t.n + 1;
-- the statement over, each partition's key is an ordered forst_key again
EXPLAIN (COSTS OFF) SELECT * FROM pt_jan ORDER BY tenant, day LIMIT 1;

-- UPDATE and DELETE through the partitioned table; an UPDATE of the
-- partition key moves rows to another partition
UPDATE pt SET n = n * 2 WHERE tenant = 't1' AND day < '2026-01-10';
UPDATE ph SET n = n * 2 WHERE tenant = 't1' AND day < '2026-01-10';
UPDATE pt SET day = day + 400 WHERE tenant = 't2' AND day BETWEEN '2026-01-20' AND '2026-01-25';
UPDATE ph SET day = day + 400 WHERE tenant = 't2' AND day BETWEEN '2026-01-20' AND '2026-01-25';
UPDATE pt SET tenant = 'moved', day = day - 35 WHERE tenant = 't4' AND day BETWEEN '2026-02-05' AND '2026-02-10';
UPDATE ph SET tenant = 'moved', day = day - 35 WHERE tenant = 't4' AND day BETWEEN '2026-02-05' AND '2026-02-10';
-- a key moved onto one that is taken
UPDATE pt SET day = '2026-01-01' WHERE tenant = 't4' AND day = '2026-02-11';
DELETE FROM pt WHERE tenant = 't5' AND n % 3 = 0;
DELETE FROM ph WHERE tenant = 't5' AND n % 3 = 0;
BEGIN;
INSERT INTO pt VALUES ('gone', '2026-01-03', 1, 'rolled back');
UPDATE pt SET note = 'rolled back' WHERE tenant = 't6';
ROLLBACK;
COPY pt FROM STDIN;
c1	2026-02-20	1	copied
c1	2027-05-01	2	copied
\.
INSERT INTO ph VALUES ('c1', '2026-02-20', 1, 'copied'), ('c1', '2027-05-01', 2, 'copied');
SELECT tableoid::regclass, count(*) FROM pt GROUP BY 1 ORDER BY 1;
-- the same rows as the heap twin, and in the same partitions
SELECT (SELECT count(*) FROM (SELECT tableoid::regclass::text, * FROM pt
                              EXCEPT ALL SELECT replace(tableoid::regclass::text, 'ph', 'pt'), * FROM ph) a) AS only_forst,
       (SELECT count(*) FROM (SELECT replace(tableoid::regclass::text, 'ph', 'pt'), * FROM ph
                              EXCEPT ALL SELECT tableoid::regclass::text, * FROM pt) b) AS only_heap,
       (SELECT count(*) FROM pt) AS total;

-- Partitions of other access methods are refused; a unique index over
-- duplicate values fails as on heap (indexes: sql/forst_partition_index.sql)
CREATE TABLE pt_h PARTITION OF pt FOR VALUES FROM ('2025-01-01') TO ('2025-02-01') USING heap;
CREATE TABLE lone_heap (tenant text COLLATE "C" NOT NULL, day date NOT NULL, n int, note text);
ALTER TABLE pt ATTACH PARTITION lone_heap FOR VALUES FROM ('2025-01-01') TO ('2025-02-01');
CREATE UNIQUE INDEX ON pt (n, day);
CREATE TABLE pf (tenant text, day date, FOREIGN KEY (tenant, day) REFERENCES pt_jan);

-- DETACH and ATTACH: a partition keeps its key; a forst table with rows
-- and no key gets it when attached (its rows are written again under it)
ALTER TABLE pt DETACH PARTITION pt_rest;
\d pt_rest
ALTER TABLE pt ATTACH PARTITION pt_rest DEFAULT;
ALTER TABLE pt DETACH PARTITION pt_rest;
CREATE TABLE pt_2025 (tenant text COLLATE "C" NOT NULL, day date NOT NULL, n int, note text) USING forst;
INSERT INTO pt_2025 VALUES ('x', '2025-03-01', 1, 'a');
INSERT INTO pt_2025 SELECT 'y' || g, '2025-06-01', g, 'b' FROM generate_series(1, 50) g;
ALTER TABLE pt ATTACH PARTITION pt_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
ALTER TABLE pt ATTACH PARTITION pt_rest DEFAULT;
EXPLAIN (COSTS OFF) SELECT tableoid::regclass, tenant, day FROM pt WHERE tenant = 'x' AND day = '2025-03-01';
SELECT tableoid::regclass, tenant, day FROM pt WHERE tenant = 'x' AND day = '2025-03-01';
SELECT count(*) FROM pt WHERE tenant > 'y' AND day = '2025-06-01';
INSERT INTO pt VALUES ('x', '2025-03-01', 2, 'b');

-- pg_dump's order: the partitioned table, its partitions, their rows, and
-- only then the keys (ALTER TABLE ONLY), attached to each other
CREATE TABLE pd (k int, at int, v text) PARTITION BY RANGE (at);
CREATE TABLE pd_1 (k int NOT NULL, at int NOT NULL, v text) USING forst;
ALTER TABLE ONLY pd ATTACH PARTITION pd_1 FOR VALUES FROM (0) TO (100);
INSERT INTO pd SELECT g, g % 100, 'v' || g FROM generate_series(1, 300) g;
ALTER TABLE ONLY pd ADD CONSTRAINT pd_pkey PRIMARY KEY (k, at);
ALTER TABLE ONLY pd_1 ADD CONSTRAINT pd_1_pkey PRIMARY KEY (k, at);
ALTER INDEX pd_pkey ATTACH PARTITION pd_1_pkey;
\d pd
SELECT v FROM pd WHERE k = 42 AND at = 42;
INSERT INTO pd VALUES (42, 42, 'dup');

-- ALTER TABLE ... ADD PRIMARY KEY on a partitioned table whose partitions
-- are forst tables with rows: added to each partition (its rows written
-- again under it) and attached; a duplicate in one partition stops it all
CREATE TABLE pk2 (k int, at int, v text) PARTITION BY RANGE (at);
CREATE TABLE pk2_1 PARTITION OF pk2 FOR VALUES FROM (0) TO (10) USING forst;
CREATE TABLE pk2_2 PARTITION OF pk2 FOR VALUES FROM (10) TO (20) USING forst;
INSERT INTO pk2 SELECT g, g % 20, 'v' || g FROM generate_series(1, 400) g;
INSERT INTO pk2 VALUES (15, 15, 'twice');
ALTER TABLE pk2 ADD PRIMARY KEY (k, at), ADD COLUMN w int;
ALTER TABLE pk2 ADD PRIMARY KEY (k, at);
DELETE FROM pk2 WHERE v = 'twice';
ALTER TABLE pk2 ADD PRIMARY KEY (k, at);
SELECT relname, (SELECT amname FROM pg_am WHERE oid = relam), pg_get_indexdef(oid) LIKE '%forst_key%'
  FROM pg_class WHERE relname LIKE 'pk2%pkey' ORDER BY 1;
SELECT indisvalid FROM pg_index WHERE indexrelid = 'pk2_pkey'::regclass;
SELECT count(*), count(DISTINCT (k, at)) FROM pk2;
EXPLAIN (COSTS OFF) SELECT v FROM pk2 WHERE k = 215 AND at = 15;
SELECT v FROM pk2 WHERE k = 215 AND at = 15;
INSERT INTO pk2 VALUES (215, 15, 'dup');
INSERT INTO pk2 AS t VALUES (215, 15, 'up') ON CONFLICT (k, at) DO UPDATE SET v = t.v || '+' RETURNING v;
DROP TABLE pk2;

-- Two levels: a partitioned partition gets the key too (a btree while
-- PostgreSQL clones it, forst's again at once), its partitions are forst
-- tables; an upsert through the top reaches the leaves of both levels
SET default_table_access_method = forst;
CREATE TABLE ml (k int, d int, t text, n int, PRIMARY KEY (k, d, t)) PARTITION BY RANGE (d);
RESET default_table_access_method;
CREATE TABLE ml_1 PARTITION OF ml FOR VALUES FROM (0) TO (10) PARTITION BY LIST (t);
CREATE TABLE ml_1_a PARTITION OF ml_1 FOR VALUES IN ('a');
CREATE TABLE ml_1_b PARTITION OF ml_1 FOR VALUES IN ('b');
CREATE TABLE ml_2 PARTITION OF ml FOR VALUES FROM (10) TO (20);
SELECT relname, (SELECT amname FROM pg_am WHERE oid = relam) FROM pg_class
 WHERE relname LIKE 'ml%' ORDER BY 1;
INSERT INTO ml SELECT g, g % 20, CASE WHEN g % 2 = 0 THEN 'a' ELSE 'b' END, 1 FROM generate_series(1, 200) g;
INSERT INTO ml VALUES (2, 2, 'a', 5), (3, 3, 'b', 5), (13, 13, 'b', 5)
  ON CONFLICT (k, d, t) DO UPDATE SET n = ml.n + excluded.n RETURNING tableoid::regclass, *;
EXPLAIN (COSTS OFF) SELECT * FROM ml WHERE k = 2 AND d = 2 AND t = 'a';
-- a partitioned table without that key cannot join
CREATE TABLE ml_x (k int NOT NULL, d int NOT NULL, t text COLLATE "C" NOT NULL, n int) PARTITION BY LIST (t);
ALTER TABLE ml ATTACH PARTITION ml_x FOR VALUES FROM (20) TO (30);
DROP TABLE ml, ml_x;

-- A key with INCLUDE columns: operator classes for the key columns only
SET default_table_access_method = forst;
CREATE TABLE pinc (k int, d int, v text, PRIMARY KEY (k, d) INCLUDE (v)) PARTITION BY RANGE (d);
RESET default_table_access_method;
CREATE TABLE pinc_1 PARTITION OF pinc FOR VALUES FROM (0) TO (10);
SELECT indnatts, indnkeyatts,
       (SELECT string_agg(opcname, ',') FROM unnest(indclass::oid[]) o JOIN pg_opclass ON pg_opclass.oid = o) AS opclasses,
       (SELECT amname FROM pg_am a JOIN pg_class c ON c.relam = a.oid WHERE c.oid = indexrelid)
  FROM pg_index WHERE indexrelid = 'pinc_pkey'::regclass;
INSERT INTO pinc VALUES (1, 1, 'a'), (1, 2, 'b');
INSERT INTO pinc VALUES (1, 1, 'c') ON CONFLICT (k, d) DO UPDATE SET v = pinc.v || excluded.v RETURNING *;
DROP TABLE pinc;

-- A partitioned table created while the default is heap, with a btree
-- key: its first partition decides, a forst one makes the key forst's
CREATE TABLE pb (k int, at int, PRIMARY KEY (k, at)) PARTITION BY RANGE (at);
CREATE TABLE pb_1 PARTITION OF pb FOR VALUES FROM (0) TO (10) USING forst;
\d pb
CREATE TABLE pb_2 PARTITION OF pb FOR VALUES FROM (10) TO (20);
SELECT relname, (SELECT amname FROM pg_am WHERE oid = relam) FROM pg_class WHERE relname LIKE 'pb_%' ORDER BY 1;
-- ... and a heap one leaves it a btree: forst partitions are refused then
CREATE TABLE ps (k int, at int, PRIMARY KEY (k, at)) PARTITION BY RANGE (at);
CREATE TABLE ps_1 PARTITION OF ps FOR VALUES FROM (0) TO (10);
CREATE TABLE ps_2 PARTITION OF ps FOR VALUES FROM (10) TO (20) USING forst;

-- The hostile role: not the owner, so no partition, no key change
CREATE TABLE pv (k int, at int, PRIMARY KEY (k, at)) PARTITION BY RANGE (at);
SET ROLE regress_part_hostile;
CREATE TABLE pv_1 PARTITION OF pv FOR VALUES FROM (0) TO (10) USING forst;
CREATE TABLE hx (k int NOT NULL, at int NOT NULL, PRIMARY KEY (k, at)) USING forst;
ALTER TABLE pv ATTACH PARTITION hx FOR VALUES FROM (0) TO (10);
ALTER TABLE pt ATTACH PARTITION hx FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
SELECT count(*) FROM pt;
DROP TABLE hx;
SET ROLE regress_part_owner;
SELECT (SELECT amname FROM pg_am WHERE oid = relam) FROM pg_class WHERE relname = 'pv_pkey';

-- A copy LIKE a table whose key is forst's, including its indexes, is a
-- forst table (the copied key is a forst_key index); without them it
-- follows the default
CREATE TABLE copy_idx (LIKE pt INCLUDING ALL);
CREATE TABLE copy_plain (LIKE pt);
CREATE TABLE copy_leaf (LIKE pt_jan INCLUDING INDEXES);
SELECT relname, (SELECT amname FROM pg_am WHERE oid = relam) FROM pg_class
 WHERE relname IN ('copy_idx', 'copy_idx_pkey', 'copy_plain', 'copy_leaf', 'copy_leaf_pkey') ORDER BY 1;
DROP TABLE copy_idx, copy_plain, copy_leaf;

-- TRUNCATE and DROP through the partitioned table
TRUNCATE pt;
SELECT count(*) FROM pt;
DROP TABLE pt, ph, pd, pb, ps, pv, lone_heap;
RESET ROLE;
DROP OWNED BY regress_part_owner, regress_part_hostile;
DROP ROLE regress_part_owner, regress_part_hostile;
DROP EXTENSION forst;
