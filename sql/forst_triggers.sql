-- Triggers, foreign keys and system columns on forst tables, and the DDL
-- that forst refuses around them.
CREATE EXTENSION forst;

CREATE TABLE trg_log (n serial, msg text);
CREATE FUNCTION trg_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trg_log (msg) VALUES (TG_WHEN || ' ' || TG_OP || ' ' || TG_LEVEL
    || CASE WHEN TG_LEVEL = 'ROW' THEN ' ' || coalesce(NEW::text, OLD::text) ELSE '' END);
  RETURN coalesce(NEW, OLD);
END $$;

CREATE TABLE tr (k int PRIMARY KEY, v int) USING forst;
CREATE TRIGGER tr_b BEFORE INSERT OR UPDATE OR DELETE ON tr
  FOR EACH ROW EXECUTE FUNCTION trg_note();
CREATE TRIGGER tr_a AFTER INSERT OR UPDATE OR DELETE ON tr
  FOR EACH ROW EXECUTE FUNCTION trg_note();
CREATE TRIGGER tr_s AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tr
  FOR EACH STATEMENT EXECUTE FUNCTION trg_note();

INSERT INTO tr VALUES (1, 10), (2, 20);
UPDATE tr SET v = v + 1 WHERE k = 1;
UPDATE tr SET k = 3 WHERE k = 2;            -- a key change: delete + insert
DELETE FROM tr WHERE k = 3;
INSERT INTO tr VALUES (1, 0) ON CONFLICT (k) DO UPDATE SET v = tr.v + 100;
TRUNCATE tr;
SELECT n, msg FROM trg_log ORDER BY n;
TRUNCATE trg_log;

-- a BEFORE trigger that changes the row, and one that skips it
CREATE FUNCTION trg_double() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.v < 0 THEN RETURN NULL; END IF;
  NEW.v := NEW.v * 2;
  RETURN NEW;
END $$;
CREATE TRIGGER tr_double BEFORE INSERT OR UPDATE ON tr
  FOR EACH ROW EXECUTE FUNCTION trg_double();
INSERT INTO tr VALUES (5, 1), (6, -1) RETURNING *;
UPDATE tr SET v = 3 WHERE k = 5 RETURNING *;
UPDATE tr SET v = -3 WHERE k = 5 RETURNING *;
SELECT * FROM tr ORDER BY k;
DROP TRIGGER tr_double ON tr;
TRUNCATE trg_log;

-- deferred constraint triggers fetch their rows at COMMIT, by row id
CREATE CONSTRAINT TRIGGER tr_d AFTER INSERT OR UPDATE ON tr
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION trg_note();
BEGIN;
INSERT INTO tr VALUES (7, 70);
UPDATE tr SET v = 71 WHERE k = 7;
SELECT count(*) AS before_commit FROM trg_log WHERE msg LIKE '%(7,7%' AND n > 0;
COMMIT;
SELECT n, msg FROM trg_log ORDER BY n;
-- a rolled-back transaction fires no deferred trigger
TRUNCATE trg_log;
BEGIN;
INSERT INTO tr VALUES (8, 80);
ROLLBACK;
SELECT count(*) AS after_rollback FROM trg_log;
DROP TABLE tr;

-- foreign keys from a forst table to a heap table
CREATE TABLE fk_parent (id int PRIMARY KEY, name text);
INSERT INTO fk_parent VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE TABLE fk_child (k int PRIMARY KEY,
                       pid int REFERENCES fk_parent (id) ON DELETE CASCADE,
                       rid int REFERENCES fk_parent (id) ON UPDATE RESTRICT,
                       v int) USING forst;
INSERT INTO fk_child VALUES (1, 1, NULL, 10), (2, 2, 3, 20);
INSERT INTO fk_child VALUES (3, 9, NULL, 30);         -- no parent 9
UPDATE fk_child SET pid = 9 WHERE k = 1;              -- no parent 9
UPDATE fk_child SET v = 11 WHERE k = 1;               -- key unchanged: fine
BEGIN;
INSERT INTO fk_child VALUES (4, 1, NULL, 40);
UPDATE fk_child SET pid = 9 WHERE k = 4;              -- row inserted by us
ROLLBACK;
UPDATE fk_parent SET id = 30 WHERE id = 3;            -- still referenced
DELETE FROM fk_parent WHERE id = 1;                   -- cascades into forst
SELECT * FROM fk_child ORDER BY k;
ALTER TABLE fk_child ADD FOREIGN KEY (v) REFERENCES fk_parent (id);  -- 20 absent
DROP TABLE fk_child, fk_parent;

-- system columns: xmin is the inserting transaction, xmax is never set
CREATE TABLE sys (k int PRIMARY KEY, v int) USING forst;
BEGIN;
INSERT INTO sys VALUES (1, 1);
SELECT xmin = pg_current_xact_id()::xid AS mine, cmin, xmax, k FROM sys;
COMMIT;
SELECT xmin = pg_current_xact_id()::xid AS mine FROM sys;
SELECT ctid IS NOT NULL AS has_ctid, tableoid = 'sys'::regclass AS tableoid FROM sys;
DROP TABLE sys;

-- foreign keys referencing a forst table (more in forst_foreign_keys)
CREATE TABLE ref_target (k int PRIMARY KEY) USING forst;
CREATE TABLE ref_heap (x int REFERENCES ref_target (k));
INSERT INTO ref_target VALUES (1);
INSERT INTO ref_heap VALUES (1);
INSERT INTO ref_heap VALUES (2);
CREATE TABLE ref_self (k int PRIMARY KEY, up int REFERENCES ref_self (k)) USING forst;
INSERT INTO ref_self VALUES (1, NULL), (2, 1);
INSERT INTO ref_self VALUES (3, 4);
DROP TABLE ref_self;

-- changing the access method works either way (more in forst_migrate)
ALTER TABLE ref_heap SET ACCESS METHOD forst;
ALTER TABLE ref_target SET ACCESS METHOD heap;
INSERT INTO ref_heap VALUES (2);
DELETE FROM ref_target;
DROP TABLE ref_heap, ref_target;

-- partitions: a forst partition declares its own key; a partitioned parent
-- with a primary key and no partitions yet gets a forst key with its first
-- forst partition (forst_partition has the rest)
CREATE TABLE part_pk (k int PRIMARY KEY, v int) PARTITION BY RANGE (k);
CREATE TABLE part_pk_1 PARTITION OF part_pk FOR VALUES FROM (0) TO (100) USING forst;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('part_pk_pkey', 'part_pk_1_pkey') ORDER BY 1;
CREATE TABLE part_nopk (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE part_nopk_1 PARTITION OF part_nopk (PRIMARY KEY (k))
  FOR VALUES FROM (0) TO (100) USING forst;
CREATE TABLE part_nopk_2 PARTITION OF part_nopk (PRIMARY KEY (k))
  FOR VALUES FROM (100) TO (200) USING forst;
INSERT INTO part_nopk SELECT g, g * 10 FROM generate_series(95, 104) g;
UPDATE part_nopk SET k = 150 WHERE k = 99;            -- moves between partitions
SELECT tableoid::regclass, * FROM part_nopk ORDER BY k;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('part_nopk_1', 'part_nopk_1_pkey') ORDER BY 1;
DROP TABLE part_pk, part_nopk;
DROP FUNCTION trg_note, trg_double;
DROP TABLE trg_log;
DROP EXTENSION forst;
