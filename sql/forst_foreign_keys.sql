-- Foreign keys that reference forst tables: each referenced table has a
-- heap twin with the same foreign keys; the statements run on both and
-- must give the same outcome and leave the same rows.
CREATE EXTENSION forst;
CREATE ROLE fk_owner;
CREATE ROLE fk_other;
GRANT CREATE ON SCHEMA public TO fk_owner, fk_other;
SET ROLE fk_owner;

-- runs a statement with @P@ and @C@ standing for the forst parent and its
-- child, then for the heap twins; reports each outcome
CREATE FUNCTION twins(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	rf text;
	rh text;
BEGIN
	BEGIN
		EXECUTE replace(replace(q, '@P@', 'pf'), '@C@', 'cf');
		rf := 'ok';
	EXCEPTION WHEN OTHERS THEN
		rf := SQLSTATE || ' ' || replace(replace(SQLERRM, 'pf', '@P@'), 'cf', '@C@');
	END;
	BEGIN
		EXECUTE replace(replace(q, '@P@', 'ph'), '@C@', 'ch');
		rh := 'ok';
	EXCEPTION WHEN OTHERS THEN
		rh := SQLSTATE || ' ' || replace(replace(SQLERRM, 'ph', '@P@'), 'ch', '@C@');
	END;
	RETURN CASE WHEN rf = rh THEN rf ELSE 'DIFFERENT forst: ' || rf || ' heap: ' || rh END;
END $$;
-- a parent with a composite key and a unique secondary column
CREATE TABLE pf (a int, b text, u int UNIQUE, v text, PRIMARY KEY (a, b)) USING forst;
CREATE TABLE ph (a int, b text COLLATE "C", u int UNIQUE, v text, PRIMARY KEY (a, b)) USING heap;
INSERT INTO pf SELECT g, 'b' || g, g * 10, 'v' FROM generate_series(1, 20) g;
INSERT INTO ph SELECT * FROM pf;
-- children: a heap table referencing the key (cascading); a unique column
-- other than the key cannot be referenced
CREATE TABLE cf (id int PRIMARY KEY, a int, b text, u int,
                 FOREIGN KEY (a, b) REFERENCES pf ON DELETE CASCADE ON UPDATE CASCADE);
CREATE TABLE ch (id int PRIMARY KEY, a int, b text, u int,
                 FOREIGN KEY (a, b) REFERENCES ph ON DELETE CASCADE ON UPDATE CASCADE);

-- rows that differ between the twins (none when they are equal)
CREATE FUNCTION twin_diff() RETURNS SETOF text LANGUAGE sql AS $$
  (SELECT 'forst parent only: ' || f::text FROM (SELECT * FROM pf EXCEPT SELECT * FROM ph) f)
  UNION ALL
  (SELECT 'heap parent only: ' || h::text FROM (SELECT * FROM ph EXCEPT SELECT * FROM pf) h)
  UNION ALL
  (SELECT 'forst child only: ' || f::text FROM (SELECT * FROM cf EXCEPT SELECT * FROM ch) f)
  UNION ALL
  (SELECT 'heap child only: ' || h::text FROM (SELECT * FROM ch EXCEPT SELECT * FROM cf) h)
$$;

-- the referenced indexes keep forst_key but have btree's operator classes
SELECT c.relname, am.amname, array_agg(oc.opcname || ':' || ocam.amname ORDER BY n) AS classes
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam,
     unnest(i.indclass) WITH ORDINALITY x(cls, n) JOIN pg_opclass oc ON oc.oid = x.cls
     JOIN pg_am ocam ON ocam.oid = oc.opcmethod
WHERE i.indrelid = 'pf'::regclass GROUP BY c.relname, am.amname ORDER BY 1;

SELECT twins($$INSERT INTO @C@ VALUES (1, 1, 'b1', 10)$$);
SELECT twins($$INSERT INTO @C@ VALUES (2, 2, 'b2', NULL), (3, 2, 'b2', 20)$$);
SELECT twins($$INSERT INTO @C@ VALUES (4, 1, 'b2', NULL)$$);
SELECT twins($$INSERT INTO @C@ VALUES (5, NULL, 'zz', 999)$$);
CREATE TABLE cu (u int REFERENCES pf (u));
SELECT twins($$INSERT INTO @C@ VALUES (6, NULL, 'zz', NULL)$$);
SELECT twins($$UPDATE @C@ SET a = 21 WHERE id = 1$$);
SELECT twins($$UPDATE @C@ SET a = 3, b = 'b3' WHERE id = 1$$);
-- the referenced side: deletes cascade, a key change cascades, NO ACTION refuses
SELECT twins($$DELETE FROM @P@ WHERE a = 2$$);
SELECT twins($$UPDATE @P@ SET u = 31 WHERE a = 3$$);
SELECT twins($$UPDATE @P@ SET b = 'b3x' WHERE a = 3$$);
SELECT twins($$UPDATE @P@ SET v = 'w' WHERE a = 3$$);
SELECT twins($$INSERT INTO @C@ VALUES (7, 4, 'b4', 40)$$);
SELECT twins($$DELETE FROM @P@ WHERE u = 40$$);
SELECT twins($$INSERT INTO @P@ VALUES (4, 'b4', 40, 'again') ON CONFLICT (a, b) DO UPDATE SET v = 'upserted'$$);
SELECT twins($$TRUNCATE @P@$$);
SELECT * FROM twin_diff();
SELECT * FROM cf ORDER BY id;

-- inside transactions: a rolled-back parent row takes the reference back
BEGIN;
SELECT twins($$INSERT INTO @P@ VALUES (50, 'b50', 500, 'new')$$);
SELECT twins($$INSERT INTO @C@ VALUES (50, 50, 'b50', 500)$$);
SAVEPOINT s;
SELECT twins($$DELETE FROM @C@ WHERE id = 50$$);
SELECT twins($$DELETE FROM @P@ WHERE a = 50$$);
ROLLBACK TO s;
SELECT twins($$DELETE FROM @P@ WHERE a = 50$$);
ROLLBACK;
SELECT * FROM twin_diff();

-- adding a foreign key checks the existing rows; NOT VALID leaves them
CREATE TABLE lf (id int, a int, b text);
INSERT INTO lf VALUES (1, 1, 'b1'), (2, 99, 'nope');
ALTER TABLE lf ADD FOREIGN KEY (a, b) REFERENCES pf;
ALTER TABLE lf ADD CONSTRAINT lf_fk FOREIGN KEY (a, b) REFERENCES pf NOT VALID;
ALTER TABLE lf VALIDATE CONSTRAINT lf_fk;
DELETE FROM lf WHERE id = 2;
ALTER TABLE lf VALIDATE CONSTRAINT lf_fk;
ALTER TABLE lf ADD COLUMN u int REFERENCES pf (u);
ALTER TABLE lf ADD COLUMN a2 int REFERENCES pf (a);
-- the referenced index cannot go without the key
DROP INDEX pf_u_key;
ALTER TABLE pf DROP CONSTRAINT pf_pkey;
DROP TABLE lf;

-- a forst table referencing itself, and a forst child of a forst parent
CREATE TABLE tree (id int PRIMARY KEY, parent int REFERENCES tree ON DELETE SET NULL, name text) USING forst;
INSERT INTO tree VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 2, 'b');
INSERT INTO tree VALUES (4, 9, 'orphan');
DELETE FROM tree WHERE id = 2;
SELECT * FROM tree ORDER BY id;
CREATE TABLE fchild (k bigint PRIMARY KEY, id int NOT NULL REFERENCES tree) USING forst;
INSERT INTO fchild VALUES (1, 1), (2, 3);
INSERT INTO fchild VALUES (3, 2);
DELETE FROM tree WHERE id = 3;
UPDATE tree SET id = 30 WHERE id = 3;
-- a deferred foreign key is checked at commit
CREATE TABLE dchild (k int PRIMARY KEY, id int REFERENCES tree DEFERRABLE INITIALLY DEFERRED) USING forst;
BEGIN;
INSERT INTO dchild VALUES (1, 77);
INSERT INTO tree VALUES (77, NULL, 'late');
COMMIT;
BEGIN;
INSERT INTO dchild VALUES (2, 78);
COMMIT;
SELECT * FROM dchild;

-- the planner sees forst's operator families: plans are as before the relabel
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pf WHERE a = 3::bigint;
EXPLAIN (COSTS OFF) SELECT * FROM pf WHERE a IN (1, 2) ORDER BY a, b;
EXPLAIN (COSTS OFF) SELECT * FROM pf WHERE u = 10;
RESET enable_seqscan;

-- many referencing rows in one transaction: beyond
-- forst.key_share_locks_per_table, locks go by bucket (at most 128 more)
SET forst.key_share_locks_per_table = 10;
CREATE TABLE big (id int PRIMARY KEY) USING forst;
INSERT INTO big SELECT generate_series(1, 3000);
CREATE TABLE bigref (id int REFERENCES big);
BEGIN;
INSERT INTO bigref SELECT generate_series(1, 3000);
SELECT count(*) <= 10 + 128 AS bounded FROM pg_locks
WHERE locktype = 'tuple' AND relation = 'big'::regclass AND pid = pg_backend_pid();
COMMIT;
DELETE FROM big WHERE id = 5;
DELETE FROM bigref WHERE id = 5;
DELETE FROM big WHERE id = 5;
RESET forst.key_share_locks_per_table;

-- rows that expire cannot be referenced: no foreign key to a table with a
-- TTL column, no TTL on a referenced table
CREATE TABLE ttlp (k int PRIMARY KEY, ts timestamptz) USING forst;
SELECT forst.set_ttl('ttlp', 'ts', '1 hour');
CREATE TABLE ttlc (k int REFERENCES ttlp);
CREATE TABLE ttl2 (k int PRIMARY KEY, ts timestamptz) USING forst;
CREATE TABLE ttl2c (k int REFERENCES ttl2);
SELECT forst.set_ttl('ttl2', 'ts', '1 hour');
DROP TABLE ttl2c, ttl2, ttlp;

-- another role: no REFERENCES privilege, no foreign key, and nothing changed
CREATE TABLE priv (k int PRIMARY KEY, u int UNIQUE) USING forst;
RESET ROLE;
SET ROLE fk_other;
CREATE TABLE steal (k int REFERENCES priv);
SELECT count(*) AS btree_classes FROM pg_index i, unnest(i.indclass) c(o)
  JOIN pg_opclass oc ON oc.oid = c.o JOIN pg_am am ON am.oid = oc.opcmethod
WHERE i.indrelid = 'priv'::regclass AND am.amname = 'btree';
RESET ROLE;
SET ROLE fk_owner;
GRANT REFERENCES (k) ON priv TO fk_other;
RESET ROLE;
SET ROLE fk_other;
CREATE TABLE steal (k int REFERENCES priv);
INSERT INTO steal VALUES (1);
RESET ROLE;

-- a partitioned table keyed by forst may be referenced: its key and its
-- partitions' keys get btree's twin classes (partitions share their key's
-- classes), and so do partitions created or attached later; a forst
-- partition itself cannot be referenced, and a referenced forst table
-- cannot become a partition of a table that is not referenced
SET ROLE fk_owner;
SET default_table_access_method = forst;
CREATE TABLE parted (k int, d date, PRIMARY KEY (k, d)) PARTITION BY RANGE (d);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
CREATE TABLE parted_3 PARTITION OF parted FOR VALUES FROM ('2026-03-01') TO ('2026-04-01')
  PARTITION BY HASH (k);
CREATE TABLE parted_3a PARTITION OF parted_3 FOR VALUES WITH (modulus 2, remainder 0);
CREATE TABLE parted_3b PARTITION OF parted_3 FOR VALUES WITH (modulus 2, remainder 1);
RESET default_table_access_method;
INSERT INTO parted SELECT g, '2026-01-01'::date + g % 28 FROM generate_series(1, 50) g;
INSERT INTO parted SELECT g, '2026-03-01'::date + g % 28 FROM generate_series(1, 50) g;
CREATE TABLE parted_ref (id int PRIMARY KEY, k int, d date,
                         FOREIGN KEY (k, d) REFERENCES parted ON DELETE CASCADE) USING forst;
CREATE TABLE parted_href (k int, d date, FOREIGN KEY (k, d) REFERENCES parted);
CREATE TABLE parted_ref1 (k int, d date, FOREIGN KEY (k, d) REFERENCES parted_1);
CREATE VIEW parted_keys AS
SELECT c.relname, am.amname, string_agg(oc.opcname || ':' || ocam.amname, ', ' ORDER BY x.n) AS classes
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam,
     unnest(i.indclass) WITH ORDINALITY x(cls, n) JOIN pg_opclass oc ON oc.oid = x.cls
     JOIN pg_am ocam ON ocam.oid = oc.opcmethod
WHERE c.relname LIKE 'parted%pkey' GROUP BY 1, 2;
SELECT * FROM parted_keys ORDER BY 1;
-- the checks, through the partitioned table and its partitions' keys
INSERT INTO parted_ref VALUES (1, 1, '2026-01-02'), (2, 2, '2026-03-03'), (3, 3, '2026-03-04');
INSERT INTO parted_ref VALUES (4, 1, '2026-01-03');
INSERT INTO parted_href VALUES (2, '2026-03-03');
DELETE FROM parted WHERE k = 1;
DELETE FROM parted WHERE k = 2;
UPDATE parted SET d = d + 1 WHERE k = 3;
SELECT * FROM parted_ref ORDER BY id;
-- partitions created and attached later get the twins
CREATE TABLE parted_4 PARTITION OF parted FOR VALUES FROM ('2026-04-01') TO ('2026-05-01');
CREATE TABLE parted_5 PARTITION OF parted FOR VALUES FROM ('2026-05-01') TO ('2026-06-01')
  PARTITION BY HASH (k);
CREATE TABLE parted_5a PARTITION OF parted_5 FOR VALUES WITH (modulus 1, remainder 0);
CREATE TABLE parted_2 (k int, d date, PRIMARY KEY (k, d)) USING forst;
INSERT INTO parted_2 VALUES (7, '2026-02-07');
ALTER TABLE parted ATTACH PARTITION parted_2 FOR VALUES FROM ('2026-02-01') TO ('2026-03-01');
SELECT * FROM parted_keys ORDER BY 1;
INSERT INTO parted VALUES (8, '2026-04-08'), (9, '2026-05-09');
INSERT INTO parted_ref VALUES (7, 7, '2026-02-07'), (8, 8, '2026-04-08'), (9, 9, '2026-05-09');
INSERT INTO parted_ref VALUES (10, 9, '2026-05-10');
DELETE FROM parted WHERE k IN (7, 8, 9);
SELECT count(*) AS referencing_rows_left FROM parted_ref;
-- a referenced forst table joins a table that is not referenced only
-- when nothing references it any more
SET default_table_access_method = forst;
CREATE TABLE lone_parted (k int, d date, PRIMARY KEY (k, d)) PARTITION BY RANGE (d);
RESET default_table_access_method;
CREATE TABLE lone_1 (k int, d date, PRIMARY KEY (k, d)) USING forst;
CREATE TABLE lone_1_ref (k int, d date, FOREIGN KEY (k, d) REFERENCES lone_1);
ALTER TABLE lone_parted ATTACH PARTITION lone_1 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
DROP TABLE lone_1_ref;
ALTER TABLE lone_parted ATTACH PARTITION lone_1 FOR VALUES FROM ('2026-01-01') TO ('2026-02-01');
RESET ROLE;
-- a role without REFERENCES cannot reference it
SET ROLE fk_other;
CREATE TABLE parted_steal (k int, d date, FOREIGN KEY (k, d) REFERENCES parted);
RESET ROLE;
SET ROLE fk_owner;
DROP VIEW parted_keys;
DROP TABLE parted_ref, parted_href, parted, lone_parted;
RESET ROLE;

-- ADD COLUMN ... PRIMARY KEY gives a keyless forst table its key; a key
-- that an ALTER TABLE adds cannot be referenced in the same statement
CREATE TABLE addk (c1 int) USING forst;
ALTER TABLE addk ADD COLUMN c2 int PRIMARY KEY, ADD COLUMN c3 int REFERENCES addk;
ALTER TABLE addk ADD COLUMN c2 int PRIMARY KEY;
ALTER TABLE addk ADD COLUMN c3 int REFERENCES addk;
INSERT INTO addk VALUES (1, 1, 1);
INSERT INTO addk VALUES (2, 2, 3);
SELECT * FROM addk;
DROP TABLE addk;

-- a table referenced through a unique index other than its key stays heap
CREATE TABLE migu (k int PRIMARY KEY, u int UNIQUE);
CREATE TABLE migu_child (u int REFERENCES migu (u));
ALTER TABLE migu SET ACCESS METHOD forst;
DROP TABLE migu_child, migu;

-- a table referenced by foreign keys can change to forst and back
CREATE TABLE mig (k int PRIMARY KEY, v text);
CREATE TABLE mig_child (k int REFERENCES mig);
INSERT INTO mig VALUES (1, 'one'), (2, 'two');
INSERT INTO mig_child VALUES (1);
ALTER TABLE mig SET ACCESS METHOD forst;
SELECT c.relname, am.amname, oc.opcname, ocam.amname AS class_am
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam,
     unnest(i.indclass) x(cls) JOIN pg_opclass oc ON oc.oid = x.cls
     JOIN pg_am ocam ON ocam.oid = oc.opcmethod
WHERE i.indrelid = 'mig'::regclass;
INSERT INTO mig_child VALUES (3);
DELETE FROM mig WHERE k = 1;
DELETE FROM mig WHERE k = 2;
ALTER TABLE mig SET ACCESS METHOD heap;
INSERT INTO mig_child VALUES (2);
DELETE FROM mig WHERE k = 1;

DROP TABLE mig_child, mig, steal, priv, bigref, big, dchild, fchild, tree, cf, ch, pf, ph;
SET ROLE fk_owner;
DROP FUNCTION twins(text), twin_diff();
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM fk_owner, fk_other;
DROP ROLE fk_owner;
DROP ROLE fk_other;
