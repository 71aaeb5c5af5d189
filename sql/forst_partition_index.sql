--
-- Indexes on a partitioned table whose partitions are forst tables: the
-- partitioned index is a forst_key index (it stores nothing), and every
-- partition gets a forst_key copy of it, a secondary index whose entries
-- live in the partition's LSM tree.  Lookups, ranges and ORDER BY read the
-- partitions' copies, pruned as on heap; updates of indexed columns and of
-- the partition key, deletes and upserts through the partitioned table
-- keep them right.  A heap twin with btree indexes gets the same statements
-- and the same queries must answer alike.  Done by an ordinary role that
-- owns the tables; a second role can neither index nor drop them.
--
CREATE EXTENSION forst;
SET TimeZone = 'UTC';
CREATE ROLE regress_pidx_owner;
CREATE ROLE regress_pidx_hostile;
GRANT CREATE ON SCHEMA public TO regress_pidx_owner, regress_pidx_hostile;
SET ROLE regress_pidx_owner;

SET default_table_access_method = forst;
CREATE TABLE pt (tenant text, day date, n int, note text, PRIMARY KEY (tenant, day))
  PARTITION BY RANGE (day);
RESET default_table_access_method;
CREATE TABLE pt_jan PARTITION OF pt FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE pt_feb PARTITION OF pt FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE pt_rest PARTITION OF pt DEFAULT;
CREATE TABLE ph (tenant text COLLATE "C", day date, n int, note text, PRIMARY KEY (tenant, day))
  PARTITION BY RANGE (day);
CREATE TABLE ph_jan PARTITION OF ph FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE ph_feb PARTITION OF ph FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE ph_rest PARTITION OF ph DEFAULT;
INSERT INTO pt SELECT 't' || (g % 7), '2026-01-01'::date + (g / 7), g % 50, 'Note ' || g
  FROM generate_series(0, 412) g;
INSERT INTO ph SELECT * FROM pt;

-- an index on the partitioned table, plain, and on an expression with a
-- predicate: each partition gets a copy, built from its rows
CREATE INDEX pt_n ON pt (n);
CREATE INDEX pt_note ON pt (lower(note)) WHERE n % 2 = 0;
CREATE INDEX ph_n ON ph (n);
CREATE INDEX ph_note ON ph (lower(note)) WHERE n % 2 = 0;
\d pt
-- a partition created later gets its copies too
CREATE TABLE pt_mar PARTITION OF pt FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
CREATE TABLE ph_mar PARTITION OF ph FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
SELECT c.relname, (SELECT amname FROM pg_am WHERE oid = c.relam) AS am,
       p.relname AS parent_index, pg_get_indexdef(c.oid) LIKE '%USING forst_key%' AS forst_key
  FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid JOIN pg_class p ON p.oid = h.inhparent
 WHERE h.inhparent IN ('pt_n'::regclass, 'pt_note'::regclass) ORDER BY 1;
INSERT INTO pt SELECT 'm' || (g % 3), '2026-03-01'::date + (g % 31), g, 'Mar ' || g
  FROM generate_series(1, 90) g ON CONFLICT (tenant, day) DO UPDATE SET n = excluded.n, note = excluded.note;
INSERT INTO ph SELECT 'm' || (g % 3), '2026-03-01'::date + (g % 31), g, 'Mar ' || g
  FROM generate_series(1, 90) g ON CONFLICT (tenant, day) DO UPDATE SET n = excluded.n, note = excluded.note;

-- the planner reads the partitions' copies, pruned by the partition key
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE n = 7;
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE n = 7 AND day < '2026-02-01';
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE lower(note) = 'note 14' AND n % 2 = 0;
EXPLAIN (COSTS OFF) SELECT n FROM pt WHERE day >= '2026-02-01' ORDER BY n LIMIT 5;

-- Queries that must answer alike on forst (through the indexes) and heap
CREATE FUNCTION pidx_diff() RETURNS TABLE (query text, only_forst bigint, only_heap bigint, total bigint)
LANGUAGE plpgsql AS $$
DECLARE
  q text;
  f text;
  h text;
BEGIN
  FOREACH q IN ARRAY ARRAY[
    'SELECT tenant, day, n, note FROM $T WHERE n = 7',
    'SELECT tenant, day, n, note FROM $T WHERE n BETWEEN 10 AND 20 AND day >= ''2026-02-01''',
    'SELECT tenant, day, n, note FROM $T WHERE lower(note) IN (''note 14'', ''mar 62'', ''note 412'') AND n % 2 = 0',
    'SELECT tenant, day, n, note FROM $T WHERE n > 85',
    'SELECT tenant, day, n, note FROM $T WHERE n IS NULL',
    'SELECT tableoid::regclass::text, tenant, day FROM $T WHERE n = 3'] LOOP
    f := replace(q, '$T', 'pt');
    h := replace(q, '$T', 'ph');
    query := q;
    EXECUTE format('SELECT count(*) FROM (%s EXCEPT ALL %s) x', f,
                   replace(h, 'tableoid::regclass::text', 'replace(tableoid::regclass::text, ''ph'', ''pt'')'))
       INTO only_forst;
    EXECUTE format('SELECT count(*) FROM (%s EXCEPT ALL %s) x',
                   replace(h, 'tableoid::regclass::text', 'replace(tableoid::regclass::text, ''ph'', ''pt'')'), f)
       INTO only_heap;
    EXECUTE format('SELECT count(*) FROM (%s) x', f) INTO total;
    RETURN NEXT;
  END LOOP;
END $$;
SELECT * FROM pidx_diff();
SELECT n FROM pt WHERE day >= '2026-02-01' ORDER BY n LIMIT 5;
SELECT n FROM ph WHERE day >= '2026-02-01' ORDER BY n LIMIT 5;

-- updates of indexed columns, of the partition key (the row moves to
-- another partition, its entries with it), deletes, NULLs and upserts
UPDATE pt SET n = n + 100 WHERE tenant = 't3' AND day < '2026-01-20';
UPDATE ph SET n = n + 100 WHERE tenant = 't3' AND day < '2026-01-20';
UPDATE pt SET day = day + 60, note = 'moved ' || n WHERE tenant = 't4' AND day BETWEEN '2026-01-10' AND '2026-01-25';
UPDATE ph SET day = day + 60, note = 'moved ' || n WHERE tenant = 't4' AND day BETWEEN '2026-01-10' AND '2026-01-25';
DELETE FROM pt WHERE n = 3 AND tenant <> 't1';
DELETE FROM ph WHERE n = 3 AND tenant <> 't1';
UPDATE pt SET n = NULL WHERE tenant = 'm1' AND day > '2026-03-20';
UPDATE ph SET n = NULL WHERE tenant = 'm1' AND day > '2026-03-20';
INSERT INTO pt VALUES ('t0', '2026-01-01', 7, 'Note 14'), ('z', '2026-02-02', 7, 'new')
  ON CONFLICT (tenant, day) DO UPDATE SET n = excluded.n, note = excluded.note;
INSERT INTO ph VALUES ('t0', '2026-01-01', 7, 'Note 14'), ('z', '2026-02-02', 7, 'new')
  ON CONFLICT (tenant, day) DO UPDATE SET n = excluded.n, note = excluded.note;
SELECT * FROM pidx_diff();
-- a transaction rolled back leaves no entries behind
BEGIN;
UPDATE pt SET n = 999 WHERE tenant = 't2';
SELECT count(*) FROM pt WHERE n = 999;
ROLLBACK;
SELECT count(*) FROM pt WHERE n = 999;

-- DETACH: the partition keeps its copy as an index of its own
ALTER TABLE pt DETACH PARTITION pt_mar;
ALTER TABLE ph DETACH PARTITION ph_mar;
\d pt_mar
SELECT count(*) FROM pt_mar WHERE n BETWEEN 1 AND 40;
-- ATTACH: a matching index is attached, not built again
ALTER TABLE pt ATTACH PARTITION pt_mar FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
ALTER TABLE ph ATTACH PARTITION ph_mar FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
SELECT count(*) AS copies_of_pt_n FROM pg_inherits WHERE inhparent = 'pt_n'::regclass;
SELECT relname FROM pg_class WHERE relname LIKE 'pt_mar%' AND relkind = 'i' ORDER BY 1;
-- ... and a forst table with rows and no such index gets one, from its rows
CREATE TABLE pt_apr (tenant text COLLATE "C" NOT NULL, day date NOT NULL, n int, note text,
                     PRIMARY KEY (tenant, day)) USING forst;
INSERT INTO pt_apr SELECT 'a', '2026-04-01'::date + g, g, 'Apr ' || g FROM generate_series(0, 29) g;
CREATE TABLE ph_apr (LIKE pt_apr INCLUDING ALL) USING heap;
INSERT INTO ph_apr SELECT * FROM pt_apr;
ALTER TABLE pt ATTACH PARTITION pt_apr FOR VALUES FROM ('2026-04-01') TO ('2026-05-01');
ALTER TABLE ph ATTACH PARTITION ph_apr FOR VALUES FROM ('2026-04-01') TO ('2026-05-01');
SELECT relname FROM pg_class WHERE relname LIKE 'pt_apr%' AND relkind = 'i' ORDER BY 1;
SELECT * FROM pidx_diff();

-- pg_dump's form: the index on the partitioned table alone, then each
-- partition's, attached
CREATE TABLE pd (k int, at int, v int, PRIMARY KEY (k, at)) PARTITION BY RANGE (at);
CREATE TABLE pd_1 PARTITION OF pd FOR VALUES FROM (0) TO (10) USING forst;
INSERT INTO pd SELECT g, g % 10, g % 13 FROM generate_series(1, 100) g;
CREATE INDEX pd_v ON ONLY pd USING forst_key (v);
SELECT indisvalid FROM pg_index WHERE indexrelid = 'pd_v'::regclass;
CREATE INDEX pd_1_v ON pd_1 USING forst_key (v);
ALTER INDEX pd_v ATTACH PARTITION pd_1_v;
SELECT indisvalid FROM pg_index WHERE indexrelid = 'pd_v'::regclass;
SELECT count(*) FROM pd WHERE v = 5;

-- UNIQUE indexes (with the partition key columns, PostgreSQL's rule):
-- created on the partitioned table alone as PostgreSQL requires, made
-- forst's, and copied to every partition, one level down too
SET default_table_access_method = forst;
CREATE TABLE pu (k int, day date, code text COLLATE "C", n int, PRIMARY KEY (k, day))
  PARTITION BY RANGE (day);
RESET default_table_access_method;
CREATE TABLE pu_1 PARTITION OF pu FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE pu_2 PARTITION OF pu FOR VALUES FROM ('2026-02-01') TO ('2026-03-01')
  PARTITION BY HASH (day);
CREATE TABLE pu_2a PARTITION OF pu_2 FOR VALUES WITH (modulus 2, remainder 0);
CREATE TABLE pu_2b PARTITION OF pu_2 FOR VALUES WITH (modulus 2, remainder 1);
CREATE TABLE hu (k int, day date, code text COLLATE "C", n int, PRIMARY KEY (k, day))
  PARTITION BY RANGE (day);
CREATE TABLE hu_1 PARTITION OF hu FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE hu_2 PARTITION OF hu FOR VALUES FROM ('2026-02-01') TO ('2026-03-01')
  PARTITION BY HASH (day);
CREATE TABLE hu_2a PARTITION OF hu_2 FOR VALUES WITH (modulus 2, remainder 0);
CREATE TABLE hu_2b PARTITION OF hu_2 FOR VALUES WITH (modulus 2, remainder 1);
INSERT INTO pu SELECT g, '2026-01-01'::date + g % 59, 'c' || (g / 59), g FROM generate_series(1, 590) g;
INSERT INTO hu SELECT * FROM pu;
CREATE UNIQUE INDEX pu_code ON pu (code, day);
CREATE UNIQUE INDEX hu_code ON hu (code, day);
SELECT c.relname, (SELECT amname FROM pg_am WHERE oid = c.relam) AS am, i.indisunique, i.indisvalid
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE c.relname LIKE 'pu%code%' ORDER BY 1;
-- a duplicate is refused in a partition and one level down
INSERT INTO pu VALUES (1000, '2026-01-05', 'c1', 0);
INSERT INTO pu VALUES (1000, '2026-02-05', 'c1', 0);
-- ON CONFLICT through the partitioned table, on the unique index or the key
INSERT INTO pu VALUES (1000, '2026-01-05', 'c1', -1), (1001, '2026-02-06', 'c2', -2), (1002, '2026-02-07', 'new', -3)
  ON CONFLICT (code, day) DO UPDATE SET n = excluded.n;
INSERT INTO hu VALUES (1000, '2026-01-05', 'c1', -1), (1001, '2026-02-06', 'c2', -2), (1002, '2026-02-07', 'new', -3)
  ON CONFLICT (code, day) DO UPDATE SET n = excluded.n;
INSERT INTO pu VALUES (1, '2026-01-02', 'x', 7), (1003, '2026-01-09', 'c9', 7) ON CONFLICT (k, day) DO NOTHING;
INSERT INTO hu VALUES (1, '2026-01-02', 'x', 7), (1003, '2026-01-09', 'c9', 7) ON CONFLICT (k, day) DO NOTHING;
INSERT INTO pu VALUES (1004, '2026-01-09', 'c9', 8) ON CONFLICT DO NOTHING;
INSERT INTO hu VALUES (1004, '2026-01-09', 'c9', 8) ON CONFLICT DO NOTHING;
-- an update onto a taken value, and one that moves the row to another
-- partition where its value is free
UPDATE pu SET code = 'c2' WHERE k = 2;
UPDATE pu SET day = day + 31, code = 'moved' WHERE k = 3;
UPDATE hu SET day = day + 31, code = 'moved' WHERE k = 3;
-- a partition created later gets its copy, a partitioned one too
CREATE TABLE pu_3 PARTITION OF pu FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
CREATE TABLE pu_4 PARTITION OF pu FOR VALUES FROM ('2026-04-01') TO ('2026-05-01')
  PARTITION BY HASH (day);
CREATE TABLE pu_4a PARTITION OF pu_4 FOR VALUES WITH (modulus 1, remainder 0);
SELECT c.relname, (SELECT amname FROM pg_am WHERE oid = c.relam) AS am, i.indisunique
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE c.relname ~ '^pu_[34]' AND NOT i.indisprimary ORDER BY 1;
INSERT INTO pu VALUES (2000, '2026-04-10', 'd', 1);
INSERT INTO pu VALUES (2001, '2026-04-10', 'd', 2);
SELECT (SELECT count(*) FROM (SELECT * FROM pu WHERE day < '2026-03-01' EXCEPT ALL TABLE hu) a) AS only_forst,
       (SELECT count(*) FROM (TABLE hu EXCEPT ALL SELECT * FROM pu WHERE day < '2026-03-01') b) AS only_heap,
       (SELECT count(*) FROM pu WHERE day < '2026-03-01') AS total;
-- a partial one
CREATE UNIQUE INDEX pu_n_some ON pu (n, day) WHERE n < 0;
INSERT INTO pu VALUES (3000, '2026-01-05', 'p', -1);
INSERT INTO pu VALUES (3001, '2026-01-05', 'q', 1);
-- pg_dump's form: ON ONLY, then each partition's, attached
CREATE UNIQUE INDEX pu_n ON ONLY pu USING forst_key (n, day);
SELECT indisvalid FROM pg_index WHERE indexrelid = 'pu_n'::regclass;
-- refused: an expression column, a unique constraint (a unique index
-- does it), a duplicate in the rows of a partition
CREATE UNIQUE INDEX ON pu ((n + 1), day);
ALTER TABLE pu ADD CONSTRAINT pu_u UNIQUE (n, day);
CREATE UNIQUE INDEX ON pu (code);
UPDATE pu SET code = 'dup' WHERE k IN (10, 69);
CREATE UNIQUE INDEX ON pu (code, k);
SELECT count(*) AS unique_indexes FROM pg_index WHERE indrelid = 'pu'::regclass AND indisunique;
DROP TABLE pu, hu;

-- ATTACH under a table with a unique index: a forst table gets its copy
-- (built from its rows, so a duplicate stops it) or keeps a matching one;
-- a partitioned table must have it already
SET default_table_access_method = forst;
CREATE TABLE pa (k int, day date, code text COLLATE "C", PRIMARY KEY (k, day)) PARTITION BY RANGE (day);
CREATE TABLE pp (k int, day date, code text COLLATE "C", PRIMARY KEY (k, day)) PARTITION BY HASH (day);
RESET default_table_access_method;
CREATE TABLE pp_0 PARTITION OF pp FOR VALUES WITH (modulus 1, remainder 0);
CREATE UNIQUE INDEX pa_code ON pa (code, day);
CREATE TABLE pa_1 (k int NOT NULL, day date NOT NULL, code text COLLATE "C", PRIMARY KEY (k, day)) USING forst;
INSERT INTO pa_1 VALUES (1, '2026-01-02', 'a'), (2, '2026-01-03', 'a');
ALTER TABLE pa ATTACH PARTITION pa_1 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE pa_2 (k int NOT NULL, day date NOT NULL, code text COLLATE "C", PRIMARY KEY (k, day)) USING forst;
INSERT INTO pa_2 VALUES (1, '2026-02-02', 'a'), (2, '2026-02-02', 'a');
ALTER TABLE pa ATTACH PARTITION pa_2 FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
CREATE TABLE pa_3 (k int NOT NULL, day date NOT NULL, code text COLLATE "C", PRIMARY KEY (k, day)) USING forst;
CREATE UNIQUE INDEX pa_3_mine ON pa_3 (code, day);
ALTER TABLE pa ATTACH PARTITION pa_3 FOR VALUES FROM ('2026-03-01') TO ('2026-04-01');
ALTER TABLE pa ATTACH PARTITION pp FOR VALUES FROM ('2026-04-01') TO ('2026-05-01');
CREATE UNIQUE INDEX ON pp USING forst_key (code, day);
ALTER TABLE pa ATTACH PARTITION pp FOR VALUES FROM ('2026-04-01') TO ('2026-05-01');
SELECT c.relname, p.relname AS parent_index FROM pg_inherits h
  JOIN pg_class c ON c.oid = h.inhrelid JOIN pg_class p ON p.oid = h.inhparent
 WHERE p.relname IN ('pa_code', 'pp_code_day_idx') ORDER BY 1;
INSERT INTO pa VALUES (3, '2026-04-05', 'z'), (4, '2026-04-05', 'z');
DROP TABLE pa, pa_2;

-- a partitioned table without a key: the unique index is forst's too
CREATE TABLE ku (a int, b int) PARTITION BY RANGE (a);
CREATE TABLE ku_1 PARTITION OF ku FOR VALUES FROM (0) TO (10) USING forst;
CREATE UNIQUE INDEX ku_ab ON ku (a, b);
INSERT INTO ku VALUES (1, 1), (1, 2);
INSERT INTO ku VALUES (1, 1);
INSERT INTO ku VALUES (1, 1), (2, 2) ON CONFLICT (a, b) DO NOTHING;
CREATE TABLE ku_2 PARTITION OF ku FOR VALUES FROM (10) TO (20);
SELECT c.relname, (SELECT amname FROM pg_am WHERE oid = c.relam) AS am FROM pg_class c
 WHERE c.relname LIKE 'ku%' ORDER BY 1;
SELECT * FROM ku ORDER BY 1, 2;
DROP TABLE ku;

-- a partitioned table without a key, whose partitions are forst tables
CREATE TABLE kl (a int, b int) PARTITION BY RANGE (a);
CREATE TABLE kl_1 PARTITION OF kl FOR VALUES FROM (0) TO (100) USING forst;
CREATE INDEX kl_b ON kl (b);
CREATE TABLE kl_2 PARTITION OF kl FOR VALUES FROM (100) TO (200);
INSERT INTO kl SELECT g, g * 2 FROM generate_series(0, 199) g;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname LIKE 'kl%' ORDER BY 1;
SELECT * FROM kl WHERE b IN (20, 300, 301);

-- Refused: a partition of another access method (every partition gets a
-- copy of the indexes), other index access methods
CREATE TABLE kl_h PARTITION OF kl FOR VALUES FROM (200) TO (300) USING heap;
CREATE INDEX ON pt USING hash (n);
CREATE INDEX ON kl USING brin (b);
-- a partitioned table whose partitions are heap tables keeps btree
CREATE TABLE hh (a int, b int) PARTITION BY RANGE (a);
CREATE TABLE hh_1 PARTITION OF hh FOR VALUES FROM (0) TO (100) USING heap;
CREATE INDEX hh_b ON hh (b);
SELECT amname FROM pg_am WHERE oid = (SELECT relam FROM pg_class WHERE relname = 'hh_b');

-- The hostile role: not the owner, so no index and no drop
SET ROLE regress_pidx_hostile;
CREATE INDEX ON pt (note);
DROP INDEX pt_n;
SET ROLE regress_pidx_owner;

-- DROP INDEX on the partitioned table drops every copy
DROP INDEX pt_note;
SELECT count(*) FROM pg_class WHERE relname LIKE 'pt%lower%';
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE lower(note) = 'note 14' AND n % 2 = 0;
SELECT * FROM pidx_diff();

RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE pt, ph, pd, kl, hh;
DROP FUNCTION pidx_diff();
RESET ROLE;
DROP OWNED BY regress_pidx_owner, regress_pidx_hostile;
DROP ROLE regress_pidx_owner, regress_pidx_hostile;
DROP EXTENSION forst;
