-- VACUUM FULL of forst tables: a new relfilenode filled with one
-- compaction of all the old files (what no snapshot can see, tombstones
-- and expired rows are gone), the heap twin being the reference; for an
-- ordinary role that owns its tables, not for another role.
CREATE TABLE vf (k int PRIMARY KEY, a int NOT NULL, v text) USING forst;
CREATE TABLE vh (k int PRIMARY KEY, a int NOT NULL, v text) USING heap;
CREATE INDEX vf_a ON vf (a);
CREATE INDEX vh_a ON vh (a);
INSERT INTO vf SELECT g, g % 100, repeat('x', 40) FROM generate_series(1, 20000) g;
INSERT INTO vh SELECT g, g % 100, repeat('x', 40) FROM generate_series(1, 20000) g;
SELECT forst.checkpoint() > 0 AS checkpointed;
UPDATE vf SET v = 'y', a = a + 1 WHERE k % 3 = 0;
UPDATE vh SET v = 'y', a = a + 1 WHERE k % 3 = 0;
DELETE FROM vf WHERE k % 5 = 0;
DELETE FROM vh WHERE k % 5 = 0;
SELECT forst.checkpoint() > 0 AS checkpointed;
CREATE TEMP TABLE before AS
  SELECT pg_relation_filenode('vf') AS filenode,
         (SELECT array_agg(file_id) FROM forst.table_files('vf')) AS files;
VACUUM FULL vf;
VACUUM FULL vh;
-- a new relfilenode; none of the old files; one level, no tombstones,
-- one entry per row and per index entry
SELECT pg_relation_filenode('vf') <> filenode AS new_filenode,
       NOT EXISTS (SELECT FROM forst.table_files('vf') f WHERE f.file_id = ANY (files)
                   AND pg_relation_filenode('vf') = filenode) AS new_files
  FROM before;
SELECT count(DISTINCT level) AS levels, sum(tombstones) AS tombstones,
       sum(entries) = 2 * (SELECT count(*) FROM vh) AS entries_are_rows_and_index_entries
  FROM forst.table_files('vf');
-- the rebuild of the index that follows writes nothing: the entries were
-- copied with their xids; reltuples counts the rows, not the entries
SELECT memtable_entries FROM forst.tables WHERE "table" = 'vf'::regclass;
SELECT reltuples = (SELECT count(*) FROM vh) AS reltuples_are_rows
  FROM pg_class WHERE oid = 'vf'::regclass;
SELECT (SELECT md5(string_agg(k || ':' || a || ':' || v, ',' ORDER BY k)) FROM vf) =
       (SELECT md5(string_agg(k || ':' || a || ':' || v, ',' ORDER BY k)) FROM vh) AS same_rows;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(k) FROM vf WHERE a = 4;
SELECT count(*), sum(k) FROM vf WHERE a = 4;
SELECT count(*), sum(k) FROM vh WHERE a = 4;
RESET enable_seqscan;
-- writes after it, and VACUUM FULL again with ANALYZE
INSERT INTO vf VALUES (5, 5, 'back');
INSERT INTO vh VALUES (5, 5, 'back');
UPDATE vf SET a = 99 WHERE k = 1;
UPDATE vh SET a = 99 WHERE k = 1;
VACUUM (FULL, ANALYZE) vf;
SELECT reltuples > 0 AS analyzed FROM pg_class WHERE oid = 'vf'::regclass;
SELECT * FROM vf WHERE k IN (1, 5) ORDER BY k;
SELECT (SELECT md5(string_agg(k || ':' || a || ':' || v, ',' ORDER BY k)) FROM vf) =
       (SELECT md5(string_agg(k || ':' || a || ':' || v, ',' ORDER BY k)) FROM vh) AS same_rows;

-- expired rows leave the files
CREATE TABLE vt (k int, ts timestamptz, n int, PRIMARY KEY (k, ts)) USING forst;
SELECT forst.set_ttl('vt', 'ts', '1 hour');
INSERT INTO vt SELECT g, now() - interval '2 hours', g FROM generate_series(1, 1000) g;
INSERT INTO vt SELECT g, now(), g FROM generate_series(1, 500) g;
SELECT forst.checkpoint() > 0 AS checkpointed;
SELECT count(*) FROM vt;
VACUUM FULL vt;
SELECT sum(entries) AS entries FROM forst.table_files('vt');
SELECT count(*), sum(n) FROM vt;

-- a keyless table, an empty one, a partitioned table's forst partitions
CREATE TABLE vk (a int, b text) USING forst;
INSERT INTO vk SELECT g, 'r' || g FROM generate_series(1, 300) g;
DELETE FROM vk WHERE a > 100;
CREATE TABLE ve (k int PRIMARY KEY) USING forst;
VACUUM FULL vk, ve;
SELECT count(*), sum(a) FROM vk;
SELECT count(*) FROM ve;
CREATE TABLE vp (k int, d date, PRIMARY KEY (k, d)) PARTITION BY RANGE (d);
CREATE TABLE vp1 PARTITION OF vp FOR VALUES FROM ('2026-01-01') TO ('2026-07-01') USING forst;
CREATE TABLE vp2 PARTITION OF vp FOR VALUES FROM ('2026-07-01') TO ('2027-01-01') USING forst;
INSERT INTO vp SELECT g, date '2026-01-01' + g FROM generate_series(1, 300) g;
DELETE FROM vp WHERE k % 2 = 0;
CREATE TEMP TABLE vp_before AS SELECT pg_relation_filenode('vp1') AS f1, pg_relation_filenode('vp2') AS f2;
VACUUM FULL vp;
SELECT pg_relation_filenode('vp1') <> f1 AND pg_relation_filenode('vp2') <> f2 AS rewritten FROM vp_before;
SELECT count(*), sum(k) FROM vp;

-- refused: an unlogged forst table (it returns to a checkpoint after a crash)
CREATE UNLOGGED TABLE vu (k int PRIMARY KEY) USING forst;
INSERT INTO vu VALUES (1);
VACUUM FULL vu;
SELECT count(*) FROM vu;
DROP TABLE vu;

-- the whole database: forst tables among the others
VACUUM FULL;
SELECT count(*) FROM vf;

-- a table attached from a checkpoint: its borrowed files become its own;
-- a part of a table (some key groups) is refused, as any rewrite
SELECT forst.checkpoint() AS ck \gset
SELECT forst.attach('vf', :ck, as_table => 'vf_clone') IS NOT NULL AS attached;
SELECT bool_and(borrowed) AS borrowed FROM forst.table_files('vf_clone');
VACUUM FULL vf_clone;
SELECT bool_or(borrowed) AS borrowed FROM forst.table_files('vf_clone');
SELECT (SELECT md5(string_agg(k || ':' || a || ':' || v, ',' ORDER BY k)) FROM vf_clone) =
       (SELECT md5(string_agg(k || ':' || a || ':' || v, ',' ORDER BY k)) FROM vh) AS same_rows;
SELECT forst.attach('vf', :ck, as_table => 'vf_half', key_groups => '[0,64)') IS NOT NULL AS attached;
VACUUM FULL vf_half;
DROP TABLE vf_clone, vf_half;

-- an invalid index (a failed CREATE INDEX CONCURRENTLY) holds no entries
-- for its rows: VACUUM FULL builds it anew, and it becomes valid
CREATE TABLE vi (k int PRIMARY KEY, a int) USING forst;
INSERT INTO vi SELECT g, g % 10 FROM generate_series(1, 1000) g;
CREATE FUNCTION vi_f(int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('regress.vi_fail', true) = 'on' AND $1 = 7 THEN
    RAISE EXCEPTION 'vi_f fails for 7';
  END IF;
  RETURN $1;
END $$;
SET regress.vi_fail = on;
CREATE INDEX CONCURRENTLY vi_x ON vi (vi_f(a));
RESET regress.vi_fail;
SELECT indisvalid FROM pg_index WHERE indexrelid = 'vi_x'::regclass;
VACUUM FULL vi;
SELECT indisvalid FROM pg_index WHERE indexrelid = 'vi_x'::regclass;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM vi WHERE vi_f(a) = 2;
SELECT count(*) FROM vi WHERE vi_f(a) = 2;
RESET enable_seqscan;
DROP TABLE vi;
DROP FUNCTION vi_f(int);

-- an ordinary role on its own table; another role is skipped
CREATE ROLE regress_vf_owner;
CREATE ROLE regress_vf_other;
GRANT CREATE ON SCHEMA public TO regress_vf_owner;
SET ROLE regress_vf_owner;
CREATE TABLE vo (k int PRIMARY KEY, n int) USING forst;
INSERT INTO vo SELECT g, g FROM generate_series(1, 100) g;
DELETE FROM vo WHERE k > 50;
VACUUM FULL vo;
SELECT count(*), sum(n) FROM vo;
GRANT SELECT ON vo TO regress_vf_other;
RESET ROLE;
SET ROLE regress_vf_other;
VACUUM FULL vo;
SELECT count(*) FROM vo;
RESET ROLE;
DROP TABLE vo;
REVOKE CREATE ON SCHEMA public FROM regress_vf_owner;
DROP ROLE regress_vf_owner, regress_vf_other;
DROP TABLE vf, vh, vt, vk, ve, vp;
