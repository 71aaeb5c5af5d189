--
-- forst_key_group_partition: hash partitioning by key group.  A table
-- partitioned BY HASH on its first key column with forst.key_group_<type>_ops
-- places every row in the partition that forst.key_group_bound() names for
-- its key group, prunes to that partition for a key (also for a key of
-- another integer type, and at run time for a parameter), and a forst table
-- that owns those key groups fits the partition.  Done by an ordinary role.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS forst;
RESET client_min_messages;
SET TimeZone = 'UTC';
CREATE ROLE regress_kgp_owner;
GRANT CREATE ON SCHEMA public TO regress_kgp_owner;
SET ROLE regress_kgp_owner;

-- bounds of aligned power-of-two ranges of the 128 key groups
SELECT r, b.modulus, b.remainder
  FROM unnest(ARRAY['[0,128)', '[0,64)', '[64,128)', '[64,96)', '[96,128)',
                    '[0,1)', '[1,2)', '[127,128)', '[32,48)']::int4range[]) r,
       forst.key_group_bound(r) b;
-- and what is not one partition
SELECT * FROM forst.key_group_bound('[0,43)');
SELECT * FROM forst.key_group_bound('[16,48)');
SELECT * FROM forst.key_group_bound('[64,192)');
SELECT * FROM forst.key_group_bound('[0,)');
SELECT * FROM forst.key_group_bound('empty');

-- three partitions of 64, 32 and 32 key groups
CREATE TABLE kp (k bigint NOT NULL, v text) PARTITION BY HASH (k forst.key_group_int8_ops);
DO $$
DECLARE r int4range; b record; i int := 0;
BEGIN
  FOREACH r IN ARRAY ARRAY['[0,64)', '[64,96)', '[96,128)']::int4range[] LOOP
    b := forst.key_group_bound(r);
    EXECUTE format('CREATE TABLE kp_%s PARTITION OF kp FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                   i, b.modulus, b.remainder);
    i := i + 1;
  END LOOP;
END $$;
INSERT INTO kp SELECT g, 'v' || g FROM generate_series(-5000, 5000) g;
-- every row is where its key group says
SELECT tableoid::regclass AS part, min(forst.key_group(k)) AS kg_min,
       max(forst.key_group(k)) AS kg_max, count(*)
  FROM kp GROUP BY 1 ORDER BY 1;

-- a key prunes to its partition: bigint, an integer literal, a smallint
SELECT forst.key_group(42::bigint) AS kg_42, forst.key_group(7::bigint) AS kg_7;
EXPLAIN (COSTS OFF) SELECT * FROM kp WHERE k = 42::bigint;
EXPLAIN (COSTS OFF) SELECT * FROM kp WHERE k = 42;
EXPLAIN (COSTS OFF) SELECT * FROM kp WHERE 42::smallint = k;
EXPLAIN (COSTS OFF) SELECT * FROM kp WHERE k IN (7, 42);
SELECT tableoid::regclass, * FROM kp WHERE k = 42;
-- at run time, for a parameter of a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE kq(int) AS SELECT tableoid::regclass, * FROM kp WHERE k = $1;
EXPLAIN (COSTS OFF) EXECUTE kq(42);
EXECUTE kq(42);
EXECUTE kq(7);
RESET plan_cache_mode;
-- an integer out of the column's range equals no key
CREATE TABLE kp4 (k int NOT NULL) PARTITION BY HASH (k forst.key_group_int4_ops);
CREATE TABLE kp4_all PARTITION OF kp4 FOR VALUES WITH (MODULUS 1, REMAINDER 0);
INSERT INTO kp4 VALUES (1), (2);
SELECT count(*) FROM kp4 WHERE k = 10000000000::bigint;
SELECT count(*) FROM kp4 WHERE k = 2::bigint;

-- The same placement for every key type: satisfies_hash_partition() asks
-- PostgreSQL whether a value belongs to the partition (128, r) of a parent;
-- each value must belong to the one of its own key group and no other.
CREATE TABLE kt_int2 (k int2) PARTITION BY HASH (k forst.key_group_int2_ops);
CREATE TABLE kt_int4 (k int4) PARTITION BY HASH (k forst.key_group_int4_ops);
CREATE TABLE kt_int8 (k int8) PARTITION BY HASH (k forst.key_group_int8_ops);
CREATE TABLE kt_text (k text) PARTITION BY HASH (k forst.key_group_text_ops);
CREATE TABLE kt_varchar (k varchar(20)) PARTITION BY HASH (k forst.key_group_text_ops);
CREATE TABLE kt_bpchar (k char(8)) PARTITION BY HASH (k forst.key_group_bpchar_ops);
CREATE TABLE kt_bytea (k bytea) PARTITION BY HASH (k forst.key_group_bytea_ops);
CREATE TABLE kt_uuid (k uuid) PARTITION BY HASH (k forst.key_group_uuid_ops);
CREATE TABLE kt_numeric (k numeric) PARTITION BY HASH (k forst.key_group_numeric_ops);
CREATE TABLE kt_date (k date) PARTITION BY HASH (k forst.key_group_date_ops);
CREATE TABLE kt_ts (k timestamp) PARTITION BY HASH (k forst.key_group_timestamp_ops);
CREATE TABLE kt_tstz (k timestamptz) PARTITION BY HASH (k forst.key_group_timestamptz_ops);
CREATE FUNCTION pg_temp.misplaced(parent regclass, vals anyarray) RETURNS bigint
LANGUAGE sql AS $$
  SELECT count(*)
    FROM unnest(vals) v, generate_series(0, 127) g
   WHERE satisfies_hash_partition(parent, 128,
           (forst.key_group_bound(int4range(g, g + 1))).remainder, v)
         <> (g = forst.key_group(v))
$$;
SELECT t, n AS misplaced FROM (VALUES
  ('int2', pg_temp.misplaced('kt_int2', ARRAY(SELECT g::int2 FROM generate_series(-300, 300) g))),
  ('int4', pg_temp.misplaced('kt_int4', ARRAY(SELECT g * 7919 FROM generate_series(-300, 300) g))),
  ('int8', pg_temp.misplaced('kt_int8', ARRAY(SELECT g::bigint * 1000000007 FROM generate_series(-300, 300) g))),
  ('text', pg_temp.misplaced('kt_text', ARRAY(SELECT 'key ' || g FROM generate_series(1, 500) g))),
  ('varchar', pg_temp.misplaced('kt_varchar', ARRAY(SELECT ('v' || g)::varchar FROM generate_series(1, 500) g))),
  ('bpchar', pg_temp.misplaced('kt_bpchar', ARRAY(SELECT ('c' || g)::char(8) FROM generate_series(1, 500) g))),
  ('bytea', pg_temp.misplaced('kt_bytea', ARRAY(SELECT decode(lpad(to_hex(g), 6, '0'), 'hex') FROM generate_series(1, 500) g))),
  ('uuid', pg_temp.misplaced('kt_uuid', ARRAY(SELECT md5(g::text)::uuid FROM generate_series(1, 500) g))),
  ('numeric', pg_temp.misplaced('kt_numeric', ARRAY(SELECT g / 7.0 FROM generate_series(-250, 250) g))),
  ('date', pg_temp.misplaced('kt_date', ARRAY(SELECT date '2026-01-01' + g FROM generate_series(-250, 250) g))),
  ('timestamp', pg_temp.misplaced('kt_ts', ARRAY(SELECT timestamp '2026-01-01' + g * interval '1 min' FROM generate_series(1, 500) g))),
  ('timestamptz', pg_temp.misplaced('kt_tstz', ARRAY(SELECT timestamptz '2026-01-01' + g * interval '1 s' FROM generate_series(1, 500) g)))
) x(t, n) ORDER BY t;
-- equal values of other spellings are placed alike: numeric scale, bpchar padding
SELECT satisfies_hash_partition('kt_numeric'::regclass, 128, (forst.key_group_bound(int4range(g, g + 1))).remainder, 1.50)
     = satisfies_hash_partition('kt_numeric'::regclass, 128, (forst.key_group_bound(int4range(g, g + 1))).remainder, 1.5)
       AS numeric_alike,
       satisfies_hash_partition('kt_bpchar'::regclass, 128, (forst.key_group_bound(int4range(g, g + 1))).remainder, 'ab'::char(8))
     = satisfies_hash_partition('kt_bpchar'::regclass, 128, (forst.key_group_bound(int4range(g, g + 1))).remainder, 'ab  '::char(3))
       AS bpchar_alike
  FROM generate_series(0, 127) g
 GROUP BY 1, 2;

-- A forst table that owns the partition's key groups is one of its
-- partitions; the partition constraint is checked on attach and on insert.
CREATE TABLE kf (k bigint, w int, v text, PRIMARY KEY (k, w)) PARTITION BY HASH (k forst.key_group_int8_ops);
CREATE TABLE kf_lo (k bigint, w int, v text, PRIMARY KEY (k, w)) USING forst;
CREATE TABLE kf_hi (k bigint, w int, v text, PRIMARY KEY (k, w)) USING forst;
INSERT INTO kf_lo SELECT g, 1, 'lo' FROM generate_series(1, 1000) g WHERE forst.key_group(g::bigint) < 64;
INSERT INTO kf_hi SELECT g, 1, 'hi' FROM generate_series(1, 1000) g WHERE forst.key_group(g::bigint) >= 64;
ALTER TABLE kf ATTACH PARTITION kf_lo FOR VALUES WITH (MODULUS 2, REMAINDER 0);
ALTER TABLE kf ATTACH PARTITION kf_hi FOR VALUES WITH (MODULUS 2, REMAINDER 1);
SELECT tableoid::regclass, count(*) FROM kf GROUP BY 1 ORDER BY 1;
INSERT INTO kf VALUES (42, 2, 'routed');
SELECT tableoid::regclass, * FROM kf WHERE k = 42 ORDER BY w;
-- a row of the other half, written to the partition directly
INSERT INTO kf_hi VALUES (42, 3, 'wrong half');
-- a partition whose rows are not its key groups is refused
CREATE TABLE kf_bad (k bigint, w int, v text, PRIMARY KEY (k, w)) USING forst;
INSERT INTO kf_bad VALUES (42, 1, 'x');
CREATE TABLE kf2 (k bigint, w int, v text) PARTITION BY HASH (k forst.key_group_int8_ops);
ALTER TABLE kf2 ATTACH PARTITION kf_bad FOR VALUES WITH (MODULUS 2, REMAINDER 1);

-- strings compare by their bytes: a nondeterministic collation is refused
RESET ROLE;
CREATE COLLATION regress_kgp_nd (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SET ROLE regress_kgp_owner;
CREATE TABLE kn (k text COLLATE regress_kgp_nd) PARTITION BY HASH (k forst.key_group_text_ops);
CREATE TABLE kn_all PARTITION OF kn FOR VALUES WITH (MODULUS 1, REMAINDER 0);
INSERT INTO kn VALUES ('a');

RESET ROLE;
DROP TABLE kn;
DROP COLLATION regress_kgp_nd;

-- forst.distribute checks its arguments before it creates anything
CREATE EXTENSION postgres_fdw;
CREATE SERVER regress_kgp_s0 FOREIGN DATA WRAPPER postgres_fdw;
CREATE SERVER regress_kgp_s1 FOREIGN DATA WRAPPER postgres_fdw;
GRANT USAGE ON FOREIGN SERVER regress_kgp_s0, regress_kgp_s1 TO regress_kgp_owner;
CREATE ROLE regress_kgp_hostile;
GRANT CREATE ON SCHEMA public TO regress_kgp_hostile;
SET ROLE regress_kgp_owner;
CREATE TABLE kd_def (k bigint, w int, v text, PRIMARY KEY (k, w));
SELECT forst.distribute('kd', 'kd_def', '{regress_kgp_s0}', '{"[0,64)","[64,128)"}');
SELECT forst.distribute('kd', 'kd_def', '{regress_kgp_s0,regress_kgp_s1}', '{"[0,64)","[96,128)"}');
SELECT forst.distribute('kd', 'kd_def', '{regress_kgp_s0,regress_kgp_s1}', '{"[0,64)","[0,128)"}');
SELECT forst.distribute('kd', 'kd_def', '{regress_kgp_s0,regress_kgp_s1}', '{"[0,43)","[43,128)"}');
SELECT forst.distribute('kd', 'kd_def', '{regress_kgp_s0,regress_kgp_s1,regress_kgp_s0}', '{"[0,32)","[32,64)","[64,128)"}');
SELECT forst.distribute('kd', 'kd_def', '{regress_kgp_s0,regress_kgp_s1}', '{"[0,64)","[64,128)"}', key_column => 'nope');
CREATE TABLE kd_float (k float8 PRIMARY KEY);
SELECT forst.distribute('kdf', 'kd_float', '{regress_kgp_s0}', '{"[0,128)"}');
SELECT forst.distribute('kd', 'kd_def', '{regress_kgp_s0,regress_kgp_s1}', '{"[64,128)","[0,64)"}',
                        remote_table => 'a.b.c');
-- a good layout: the partitioned table and its foreign partitions
SELECT forst.distribute('kd', 'kd_def', '{regress_kgp_s1,regress_kgp_s0}', '{"[64,128)","[0,64)"}',
                        remote_table => 'shards.kd');
\d+ kd
SELECT c.relname, s.srvname, f.ftoptions
  FROM pg_foreign_table f JOIN pg_class c ON c.oid = f.ftrelid
  JOIN pg_foreign_server s ON s.oid = f.ftserver
 WHERE c.relname LIKE 'kd\_kg%' ORDER BY 1;
-- a domain over a key type is partitioned as its base type
CREATE DOMAIN kd_id AS bigint CHECK (VALUE > 0);
CREATE TABLE kd_dom_def (k kd_id PRIMARY KEY, v text);
SELECT forst.distribute('kd_dom', 'kd_dom_def', '{regress_kgp_s0}', '{"[0,128)"}');
SELECT pg_get_partkeydef('kd_dom'::regclass);
-- another role may not route to servers it has no USAGE on
SET ROLE regress_kgp_hostile;
CREATE TABLE kd_h (k bigint PRIMARY KEY);
SELECT forst.distribute('kd_h2', 'kd_h', '{regress_kgp_s0}', '{"[0,128)"}');
RESET ROLE;
DROP OWNED BY regress_kgp_owner, regress_kgp_hostile;
DROP SERVER regress_kgp_s0, regress_kgp_s1;
DROP EXTENSION postgres_fdw;
DROP ROLE regress_kgp_owner, regress_kgp_hostile;

-- a layout's ranges in order with their bounds, and a bound's range
SELECT * FROM forst.key_group_layout('{"[96,128)","[0,64)","[64,96)"}');
SELECT forst.key_group_layout('{"[0,64)"}');
SELECT forst.key_group_layout('{"[0,64)",NULL}');
SELECT forst.key_group_layout('{"[0,64)","[64,128)"}', '{a}');
SELECT forst.key_group_layout('{"[0,64)","[64,128)"}', '{a,NULL}');
SELECT shard, groups FROM forst.key_group_layout('{"[64,128)","[0,64)"}', '{a,b}');
SELECT m, r, forst.key_group_range(m, r)
  FROM (VALUES (1, 0), (2, 1), (4, 1), (4, 3), (128, 64), (3, 0), (4, 4)) v(m, r);
-- the two are inverse on every aligned range
SELECT count(*) AS aligned_ranges,
       count(*) FILTER (WHERE forst.key_group_range(b.modulus, b.remainder) = rg) AS round_trips
  FROM generate_series(0, 7) j, generate_series(0, 127, 1 << j) lo,
       int4range(lo, lo + (1 << j)) rg, forst.key_group_bound(rg) b;
