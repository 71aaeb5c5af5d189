--
-- forst_roles: the privilege model of docs/security.md.  An ordinary role
-- uses forst tables as it uses heap tables (no grant beyond what heap
-- needs); a second, hostile role gets 42501 from every function of schema
-- forst aimed at the first role's table or at the store, also when EXECUTE
-- on every function has been granted to PUBLIC by mistake (the C code
-- checks again); and the owner's table keeps working.
--
CREATE EXTENSION forst;
SET TimeZone = 'UTC';

CREATE ROLE regress_forst_owner;
CREATE ROLE regress_forst_hostile;
CREATE ROLE regress_forst_monitor IN ROLE pg_read_all_stats;
CREATE ROLE regress_forst_ckpt IN ROLE pg_checkpoint;
GRANT CREATE ON SCHEMA public TO regress_forst_owner, regress_forst_hostile;

-- The privilege matrix as the catalog has it: who may execute each function
-- of schema forst besides superusers (PUBLIC or predefined roles), and each
-- internal function (name starting with "_") is executable by no one else.
SELECT p.oid::regprocedure AS function,
       coalesce((SELECT string_agg(CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                                        ELSE a.grantee::regrole::text END, ', '
                                   ORDER BY 1)
                   FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
                  WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner),
                '') AS executable_by
  FROM pg_proc p
 WHERE p.pronamespace = 'forst'::regnamespace
   AND p.proname NOT IN ('tumble_start', 'tumble_end', 'hop_start', 'hop_end', 'hop_windows')
 ORDER BY p.proname, 1::text;

SELECT count(*) AS public_internal_functions
  FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
 WHERE p.pronamespace = 'forst'::regnamespace AND p.proname LIKE '\_%'
   AND a.grantee = 0;

SELECT c.relname, coalesce((SELECT string_agg(CASE WHEN a.grantee = 0 THEN 'PUBLIC'
                                                 ELSE a.grantee::regrole::text END
                                            || ':' || a.privilege_type, ', ' ORDER BY 1)
                              FROM aclexplode(c.relacl) a WHERE a.grantee <> c.relowner), '') AS grants
  FROM pg_class c
 WHERE c.relnamespace = 'forst'::regnamespace AND c.relkind IN ('r', 'v')
 ORDER BY 1;

-- try(sql): 'ok', or the SQLSTATE the statement failed with
CREATE FUNCTION public.regress_try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;

-- ---------------------------------------------------------------------
-- An ordinary role that owns its tables
-- ---------------------------------------------------------------------
SET ROLE regress_forst_owner;
CREATE TABLE own_w (k bigint, w timestamptz, v text, PRIMARY KEY (k, w)) USING forst;
CREATE TABLE own_nokey (a int, b text) USING forst;
CREATE TABLE own_heap (a int PRIMARY KEY, b int);
INSERT INTO own_w SELECT g % 10, forst.tumble_start(timestamptz '2100-01-01' + g * interval '1 minute', '10 minutes'), 'v' || g
  FROM generate_series(1, 100) g
    ON CONFLICT (k, w) DO UPDATE SET v = own_w.v || '+' || excluded.v;
UPDATE own_w SET v = 'updated' WHERE k = 1;
DELETE FROM own_w WHERE k = 2;
BEGIN;
INSERT INTO own_w VALUES (100, '2100-01-01', 'rolled back');
ROLLBACK;
INSERT INTO own_nokey SELECT g, 'x' FROM generate_series(1, 10) g;
SELECT count(*), count(DISTINCT k), sum(length(v)) FROM own_w;
SELECT count(*) FROM own_nokey;
SELECT forst.set_ttl('own_w', 'w', '1 day');
SELECT forst.advance_watermark('own_w', '2100-01-01 00:30:00');
SELECT ttl_column, ttl, watermark FROM forst.table_expiry('own_w');
SELECT count(*) FROM own_w;
SELECT relid, attnum, ttl, watermark FROM forst.expiry;
-- the views list the role's own tables
SELECT "table", memtable_entries > 0 AS in_memtables, ttl_column FROM forst.tables ORDER BY 1;
SELECT count(*) >= 0 AS files_readable FROM forst.files;
SELECT memtables >= 1 AS has_memtable FROM forst.table_info('own_w');
SELECT files FROM forst.prewarm('own_w');
SELECT count(*) FROM forst.progress;
SELECT flushes >= 0 AS stats_readable FROM forst.stats;
SELECT slabs > 0 AS memory_readable FROM forst.memory();
SELECT capacity >= 0 AS block_cache_readable FROM forst.shared_block_cache();
SELECT readers >= 0 AS readers_readable FROM forst.session_sst_readers();
SELECT forst.key_group(42), forst.decode_key(forst.encode_key(42::bigint, 'x'::text), 'int8', 'text');
SELECT * FROM forst.hop_windows(timestamptz '2026-01-01 00:07:00', '10 minutes', '5 minutes');
-- DDL: ALTER, and DROP of forst and heap tables (the sql_drop event trigger
-- forgets the dropped table's expiry row as the extension's owner)
ALTER TABLE own_w ADD COLUMN extra int;
ALTER TABLE own_w DROP COLUMN extra;
ALTER TABLE own_heap DROP COLUMN b;
DROP TABLE own_heap;
CREATE TABLE own_tmp (k int PRIMARY KEY) USING forst;
SELECT forst.set_ttl('own_tmp', NULL, NULL);
DROP TABLE own_tmp;
-- what the owner may not do: server-wide acts and reads
SELECT call, regress_try(call) AS sqlstate FROM (VALUES
    ('SELECT forst.checkpoint()'),
    ('SELECT forst.checkpoint_ids()'),
    ('SELECT forst.cluster_id()'),
    ('SELECT forst.remote_dir()'),
    ('SELECT forst.gc()'),
    ('SELECT forst.savepoint(''s1'')'),
    ('SELECT forst.stats_reset()'),
    ('SELECT * FROM forst.checkpoints')) v(call);
RESET ROLE;

-- ---------------------------------------------------------------------
-- A hostile role: the owner's table and the store are out of its reach
-- ---------------------------------------------------------------------
CREATE TEMP TABLE hostile_calls (call text);
INSERT INTO hostile_calls VALUES
    ('SELECT * FROM own_w'),
    ('INSERT INTO own_w VALUES (1, now(), ''x'')'),
    ('DROP TABLE own_w'),
    ('ALTER TABLE own_w ADD COLUMN x int'),
    ('SELECT forst.set_ttl(''own_w'', ''w'', ''1 hour'')'),
    ('SELECT forst.set_ttl(''own_w'', ''w'', NULL)'),
    ('SELECT forst.advance_watermark(''own_w'', now())'),
    ('SELECT forst._set_ttl(''own_w'', ''w'', ''1 hour'')'),
    ('SELECT forst._advance_watermark(''own_w'', now())'),
    ('SELECT forst._expiry_column(''own_w'', ''w'')'),
    ('SELECT forst._expiry_note(''own_w'', 2::int2, NULL, now(), 99)'),
    ('SELECT forst._ttl_cutoff(''1 hour'')'),
    ('SELECT forst._check_key_columns(''own_w'', ''k'')'),
    ('SELECT forst._check_preloaded()'),
    ('INSERT INTO forst.expiry VALUES (''own_w'', 2, ''1 second'', NULL, 7)'),
    ('UPDATE forst.expiry SET ttl = ''1 second'''),
    ('DELETE FROM forst.expiry'),
    ('SELECT * FROM forst.table_info(''own_w'')'),
    ('SELECT * FROM forst.table_files(''own_w'')'),
    ('SELECT * FROM forst.table_expiry(''own_w'')'),
    ('SELECT * FROM forst.prewarm(''own_w'', true)'),
    ('SELECT forst._attach_files(''own_w'', ''0'', 1, ''p'', 1, 0, 127, 0, 0, ''-'', true)'),
    ('SELECT forst.attach(''own_w'', 1, ''stolen'')'),
    ('SELECT forst.restore()'),
    ('SELECT forst.checkpoint()'),
    ('SELECT forst.checkpoint_read(1)'),
    ('SELECT forst.checkpoint_ids()'),
    ('SELECT forst.savepoint_read(''s1'')'),
    ('SELECT forst.savepoint(''s1'')'),
    ('SELECT forst.drop_savepoint(''s1'', true)'),
    ('SELECT forst.gc()'),
    ('SELECT forst.stats_reset()'),
    ('SELECT forst.cluster_id()'),
    ('SELECT forst.remote_dir()'),
    ('SELECT * FROM forst._checkpoint_status()'),
    ('SELECT * FROM forst.checkpoints');
GRANT SELECT ON hostile_calls TO regress_forst_hostile;

SET ROLE regress_forst_hostile;
SELECT call, regress_try(call) AS sqlstate FROM hostile_calls;
-- it sees none of the owner's tables or operations
SELECT count(*) AS tables_seen FROM forst.tables;
SELECT count(*) AS files_seen FROM forst.files;
RESET ROLE;

-- Defense in depth: with EXECUTE on every function and SELECT/INSERT/UPDATE
-- /DELETE on forst's tables granted to PUBLIC, the C checks still refuse
-- (and forst.expiry's trigger lets only a table's owner write its row).
BEGIN;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA forst TO PUBLIC;
GRANT ALL ON ALL TABLES IN SCHEMA forst TO PUBLIC;
SET ROLE regress_forst_hostile;
SELECT call, regress_try(call) AS sqlstate FROM hostile_calls;
RESET ROLE;
ROLLBACK;

-- The owner's table is untouched and keeps working.
SET ROLE regress_forst_owner;
SELECT count(*), count(DISTINCT k), sum(length(v)) FROM own_w;
SELECT ttl_column, ttl, watermark FROM forst.table_expiry('own_w');
INSERT INTO own_w VALUES (5, '2100-01-02', 'after') ON CONFLICT (k, w) DO UPDATE SET v = 'again';
INSERT INTO own_w VALUES (5, '2100-01-02', 'after') ON CONFLICT (k, w) DO UPDATE SET v = 'again';
SELECT v FROM own_w WHERE k = 5 AND w = '2100-01-02';
RESET ROLE;

-- ---------------------------------------------------------------------
-- Predefined roles: pg_read_all_stats reads every table's figures and the
-- checkpoint objects; pg_checkpoint takes forst checkpoints
-- ---------------------------------------------------------------------
SET ROLE regress_forst_monitor;
SELECT "table" FROM forst.tables ORDER BY 1;
SELECT memtables >= 1 AS has_memtable FROM forst.table_info('own_w');
SELECT regress_try('SELECT forst.checkpoint_ids()') AS checkpoint_ids,
       regress_try('SELECT * FROM forst.checkpoints') AS checkpoints,
       regress_try('SELECT forst.checkpoint()') AS checkpoint,
       regress_try('SELECT * FROM own_w') AS read_rows;
RESET ROLE;
SET ROLE regress_forst_ckpt;
SELECT forst.checkpoint() > 0 AS checkpoint_taken;
SELECT regress_try('SELECT forst.gc()') AS gc;
RESET ROLE;

-- ---------------------------------------------------------------------
SET ROLE regress_forst_owner;
DROP TABLE own_w, own_nokey;
RESET ROLE;
SELECT count(*) AS expiry_rows_left FROM forst.expiry;
DROP TABLE hostile_calls;
DROP FUNCTION public.regress_try(text);
REVOKE CREATE ON SCHEMA public FROM regress_forst_owner, regress_forst_hostile;
DROP ROLE regress_forst_owner, regress_forst_hostile, regress_forst_monitor, regress_forst_ckpt;
DROP EXTENSION forst;
