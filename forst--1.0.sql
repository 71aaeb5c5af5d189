/* forst--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION forst" to load this file. \quit

-- Refuse at once unless the module was loaded by shared_preload_libraries:
-- forst keeps shared memory and background workers that only exist then.
CREATE FUNCTION forst._check_preloaded()
RETURNS void
AS 'MODULE_PATHNAME', 'forst_check_preloaded'
LANGUAGE C STRICT;

SELECT forst._check_preloaded();

CREATE FUNCTION forst.version()
RETURNS text
AS 'MODULE_PATHNAME', 'forst_version'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION forst.version() IS 'version of the loaded forst module';

CREATE FUNCTION forst.remote_dir()
RETURNS text
AS 'MODULE_PATHNAME', 'forst_remote_dir_fn'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION forst.remote_dir() IS 'object-store URL in effect (forst.remote_dir with its default resolved)';

-- Keys (src/am/keycodec.c).  The key group and the encoding are part of the
-- on-disk format and must never change.
CREATE FUNCTION forst.key_group(key anyelement, max_key_groups int DEFAULT 128)
RETURNS int
AS 'MODULE_PATHNAME', 'forst_key_group_fn'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION forst.key_group(anyelement, int) IS 'key group of a row whose first key column has this value, for a table with max_key_groups key groups';

CREATE FUNCTION forst.encode_key(VARIADIC "any")
RETURNS bytea
AS 'MODULE_PATHNAME', 'forst_encode_key'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION forst.encode_key("any") IS 'memcomparable encoding (without key group) of a key with these column values';

CREATE FUNCTION forst.decode_key(key bytea, VARIADIC types regtype[])
RETURNS text
AS 'MODULE_PATHNAME', 'forst_decode_key'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION forst.decode_key(bytea, regtype[]) IS 'a key encoded by forst.encode_key, with columns of these types, as text';

CREATE FUNCTION forst._check_key_columns(rel regclass, VARIADIC columns name[])
RETURNS void
AS 'MODULE_PATHNAME', 'forst_check_key_columns_fn'
LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION forst._check_key_columns(regclass, name[]) IS 'for tests: the check a forst table''s key columns get, on columns of any table';

-- The table access method and the index access method of its primary key.
CREATE FUNCTION forst.tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME', 'forst_tableam_handler'
LANGUAGE C;

CREATE ACCESS METHOD forst TYPE TABLE HANDLER forst.tableam_handler;
COMMENT ON ACCESS METHOD forst IS 'rows in an LSM tree keyed by the primary key, SST files in object storage';

CREATE FUNCTION forst.key_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'forst_key_handler'
LANGUAGE C;

CREATE ACCESS METHOD forst_key TYPE INDEX HANDLER forst.key_handler;
COMMENT ON ACCESS METHOD forst_key IS 'primary key of a forst table: the table''s own key order, nothing stored';

-- Operator classes: btree's operators and comparison functions, so that
-- the planner matches quals and orderings exactly as for a btree.
CREATE OPERATOR FAMILY forst.integer_ops USING forst_key;
CREATE OPERATOR CLASS forst.int2_ops DEFAULT FOR TYPE int2 USING forst_key FAMILY forst.integer_ops AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btint2cmp(int2, int2);
CREATE OPERATOR CLASS forst.int4_ops DEFAULT FOR TYPE int4 USING forst_key FAMILY forst.integer_ops AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btint4cmp(int4, int4);
CREATE OPERATOR CLASS forst.int8_ops DEFAULT FOR TYPE int8 USING forst_key FAMILY forst.integer_ops AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btint8cmp(int8, int8);
ALTER OPERATOR FAMILY forst.integer_ops USING forst_key ADD
  OPERATOR 1 < (int2, int4), OPERATOR 2 <= (int2, int4), OPERATOR 3 = (int2, int4),
  OPERATOR 4 >= (int2, int4), OPERATOR 5 > (int2, int4), FUNCTION 1 (int2, int4) btint24cmp(int2, int4),
  OPERATOR 1 < (int2, int8), OPERATOR 2 <= (int2, int8), OPERATOR 3 = (int2, int8),
  OPERATOR 4 >= (int2, int8), OPERATOR 5 > (int2, int8), FUNCTION 1 (int2, int8) btint28cmp(int2, int8),
  OPERATOR 1 < (int4, int2), OPERATOR 2 <= (int4, int2), OPERATOR 3 = (int4, int2),
  OPERATOR 4 >= (int4, int2), OPERATOR 5 > (int4, int2), FUNCTION 1 (int4, int2) btint42cmp(int4, int2),
  OPERATOR 1 < (int4, int8), OPERATOR 2 <= (int4, int8), OPERATOR 3 = (int4, int8),
  OPERATOR 4 >= (int4, int8), OPERATOR 5 > (int4, int8), FUNCTION 1 (int4, int8) btint48cmp(int4, int8),
  OPERATOR 1 < (int8, int2), OPERATOR 2 <= (int8, int2), OPERATOR 3 = (int8, int2),
  OPERATOR 4 >= (int8, int2), OPERATOR 5 > (int8, int2), FUNCTION 1 (int8, int2) btint82cmp(int8, int2),
  OPERATOR 1 < (int8, int4), OPERATOR 2 <= (int8, int4), OPERATOR 3 = (int8, int4),
  OPERATOR 4 >= (int8, int4), OPERATOR 5 > (int8, int4), FUNCTION 1 (int8, int4) btint84cmp(int8, int4);

CREATE OPERATOR CLASS forst.text_ops DEFAULT FOR TYPE text USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 bttextcmp(text, text);
CREATE OPERATOR CLASS forst.bpchar_ops DEFAULT FOR TYPE bpchar USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 bpcharcmp(bpchar, bpchar);
CREATE OPERATOR CLASS forst.bytea_ops DEFAULT FOR TYPE bytea USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 byteacmp(bytea, bytea);
CREATE OPERATOR CLASS forst.name_ops DEFAULT FOR TYPE name USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btnamecmp(name, name);
CREATE OPERATOR CLASS forst.char_ops DEFAULT FOR TYPE "char" USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btcharcmp("char", "char");
CREATE OPERATOR CLASS forst.bool_ops DEFAULT FOR TYPE bool USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btboolcmp(bool, bool);
CREATE OPERATOR CLASS forst.oid_ops DEFAULT FOR TYPE oid USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btoidcmp(oid, oid);
CREATE OPERATOR CLASS forst.float4_ops DEFAULT FOR TYPE float4 USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btfloat4cmp(float4, float4);
CREATE OPERATOR CLASS forst.float8_ops DEFAULT FOR TYPE float8 USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 btfloat8cmp(float8, float8);
CREATE OPERATOR CLASS forst.date_ops DEFAULT FOR TYPE date USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 date_cmp(date, date);
CREATE OPERATOR CLASS forst.time_ops DEFAULT FOR TYPE time USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 time_cmp(time, time);
CREATE OPERATOR CLASS forst.timestamp_ops DEFAULT FOR TYPE timestamp USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 timestamp_cmp(timestamp, timestamp);
CREATE OPERATOR CLASS forst.timestamptz_ops DEFAULT FOR TYPE timestamptz USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 timestamptz_cmp(timestamptz, timestamptz);
CREATE OPERATOR CLASS forst.uuid_ops DEFAULT FOR TYPE uuid USING forst_key AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 uuid_cmp(uuid, uuid);

-- Observability: what each forst table holds in memory and in the store.
CREATE FUNCTION forst.table_info(tbl regclass,
    OUT memtables int, OUT memtable_bytes bigint, OUT memtable_entries bigint,
    OUT manifest_version bigint, OUT sst_files int, OUT sst_bytes bigint,
    OUT level_files int[], OUT level_bytes bigint[])
RETURNS record
AS 'MODULE_PATHNAME', 'forst_table_info'
LANGUAGE C STRICT VOLATILE;

CREATE FUNCTION forst.table_files(tbl regclass,
    OUT level int, OUT file_id bigint, OUT size bigint, OUT entries bigint,
    OUT tombstones bigint, OUT key_group_min int, OUT key_group_max int,
    OUT seq_min bigint, OUT seq_max bigint, OUT borrowed bool, OUT object text,
    OUT xid_min xid, OUT xid_max xid)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'forst_table_files'
LANGUAGE C STRICT VOLATILE;

-- The server's memtable pool (shared by all databases).
CREATE FUNCTION forst.memory(OUT slabs int, OUT slab_bytes bigint,
    OUT free int, OUT active int, OUT immutable int, OUT retiring int,
    OUT tables int)
RETURNS record
AS 'MODULE_PATHNAME', 'forst_memory'
LANGUAGE C STRICT VOLATILE;

-- The shared block cache (src/am/forst_blockshare.c): decoded SST blocks in
-- shared memory, forst.shared_block_cache_size bytes; counters since start-up.
CREATE FUNCTION forst.shared_block_cache(OUT capacity bigint, OUT bytes_used bigint,
    OUT blocks bigint, OUT hits bigint, OUT misses bigint, OUT inserts bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'forst_shared_block_cache'
LANGUAGE C STRICT VOLATILE;

-- This backend's open SST readers (src/am/forst_readers.c): how many, the
-- bytes of their block indexes, bloom filters and read windows, and how many
-- forst.sst_reader_memory has closed since the backend started, and how many
-- decoded table manifests (versions) it keeps.
CREATE FUNCTION forst.session_sst_readers(OUT readers bigint, OUT bytes bigint,
    OUT closed bigint, OUT manifests bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'forst_session_sst_readers'
LANGUAGE C STRICT VOLATILE;

-- Expiry of windowed state (src/am/forst_expiry.c, docs/expiry.md): one
-- row per forst table with a TTL column.  Read directly by the server (not
-- through SQL, so row security does not hide rows from it); users change it
-- through forst.set_ttl() and forst.advance_watermark() only.
CREATE TABLE forst.expiry (
    relid regclass PRIMARY KEY,
    attnum int2 NOT NULL,
    ttl interval,
    watermark timestamptz,
    version bigint NOT NULL
);
COMMENT ON TABLE forst.expiry IS 'TTL column, TTL and watermark of forst tables (change with forst.set_ttl / forst.advance_watermark)';
SELECT pg_catalog.pg_extension_config_dump('forst.expiry', '');
ALTER TABLE forst.expiry ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON forst.expiry
    USING (pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = relid), 'USAGE'));
GRANT SELECT, INSERT, UPDATE ON forst.expiry TO PUBLIC;

-- A dropped table's row goes with it (its OID may be reused later).
CREATE FUNCTION forst._expiry_forget_dropped()
RETURNS event_trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM forst.expiry e
     USING pg_event_trigger_dropped_objects() d
     WHERE d.classid = 'pg_class'::regclass AND d.objsubid = 0
       AND e.relid = d.objid;
END
$$;
CREATE EVENT TRIGGER forst_expiry_forget_dropped ON sql_drop
    EXECUTE FUNCTION forst._expiry_forget_dropped();

CREATE FUNCTION forst._expiry_column(tbl regclass, "column" name)
RETURNS int2 AS 'MODULE_PATHNAME', 'forst_expiry_column' LANGUAGE C VOLATILE;
CREATE FUNCTION forst._ttl_cutoff(ttl interval)
RETURNS timestamptz AS 'MODULE_PATHNAME', 'forst_ttl_cutoff' LANGUAGE C STABLE STRICT;
CREATE FUNCTION forst._expiry_note(tbl regclass, attnum int2, ttl interval,
    watermark timestamptz, version bigint)
RETURNS void AS 'MODULE_PATHNAME', 'forst_expiry_note' LANGUAGE C VOLATILE;

-- Sets (or with ttl NULL removes) the TTL of a forst table on a timestamp
-- column.  Removing or changing a TTL first folds the cutoff reached so far
-- into the watermark: rows that were expired stay expired.
CREATE FUNCTION forst.set_ttl(tbl regclass, "column" name, ttl interval)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    att int2 := forst._expiry_column(tbl, "column");
    cur forst.expiry;
    wm timestamptz;
BEGIN
    IF "column" IS NULL THEN
        RAISE EXCEPTION 'the TTL column must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF ttl IS NOT NULL THEN
        PERFORM forst._ttl_cutoff(ttl);     -- validates: positive, no months
    END IF;
    INSERT INTO forst.expiry VALUES (tbl, att, NULL, NULL, 0) ON CONFLICT (relid) DO NOTHING;
    SELECT * INTO STRICT cur FROM forst.expiry WHERE relid = tbl FOR UPDATE;
    IF cur.attnum <> att THEN
        RAISE EXCEPTION 'the TTL column of table % is "%"', tbl,
            (SELECT attname FROM pg_attribute WHERE attrelid = tbl AND attnum = cur.attnum)
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'The TTL column of a table cannot be changed; create a new table.';
    END IF;
    wm := cur.watermark;
    IF cur.ttl IS NOT NULL AND cur.ttl IS DISTINCT FROM ttl THEN
        wm := greatest(wm, forst._ttl_cutoff(cur.ttl));
    END IF;
    UPDATE forst.expiry SET ttl = set_ttl.ttl, watermark = wm, version = cur.version + 1
     WHERE relid = tbl;
    PERFORM forst._expiry_note(tbl, att, ttl, wm, cur.version + 1);
END
$$;
COMMENT ON FUNCTION forst.set_ttl(regclass, name, interval) IS 'expire rows of a forst table whose timestamp column is older than now() - ttl (NULL ttl: remove the TTL; expired rows stay expired)';

-- Advances the watermark of a forst table: rows whose TTL column is below
-- it are expired.  Monotonic: a value not above the current watermark
-- changes nothing.  Returns the watermark in effect.
CREATE FUNCTION forst.advance_watermark(tbl regclass, value timestamptz)
RETURNS timestamptz LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cur forst.expiry;
BEGIN
    PERFORM forst._expiry_column(tbl, NULL);
    SELECT * INTO cur FROM forst.expiry WHERE relid = tbl FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % has no TTL column', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call forst.set_ttl(table, column, NULL) first to name the timestamp column the watermark applies to.';
    END IF;
    IF cur.watermark IS NOT NULL AND value <= cur.watermark THEN
        RETURN cur.watermark;
    END IF;
    UPDATE forst.expiry SET watermark = value, version = cur.version + 1 WHERE relid = tbl;
    PERFORM forst._expiry_note(tbl, cur.attnum, cur.ttl, value, cur.version + 1);
    RETURN value;
END
$$;
COMMENT ON FUNCTION forst.advance_watermark(regclass, timestamptz) IS 'expire rows of a forst table whose TTL column is below value (never moves backwards)';

CREATE FUNCTION forst.table_expiry(tbl regclass,
    OUT ttl_column name, OUT ttl interval, OUT watermark timestamptz,
    OUT expiry_cutoff timestamptz, OUT expired_bytes_reclaimed bigint,
    OUT expired_rows_reclaimed bigint, OUT expired_files_dropped bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'forst_table_expiry'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW forst.tables AS
SELECT c.oid::regclass AS "table", i.*, c.reltuples::bigint AS rows_estimate,
       128 AS key_groups, x.*
  FROM pg_class c
  JOIN pg_am a ON a.oid = c.relam AND a.amname = 'forst'
  CROSS JOIN LATERAL forst.table_info(c.oid) i
  CROSS JOIN LATERAL forst.table_expiry(c.oid) x
 WHERE c.relkind = 'r';

CREATE VIEW forst.files AS
SELECT c.oid::regclass AS "table", f.*
  FROM pg_class c
  JOIN pg_am a ON a.oid = c.relam AND a.amname = 'forst'
  CROSS JOIN LATERAL forst.table_files(c.oid) f
 WHERE c.relkind = 'r';

-- Cluster-wide counters (src/am/forst_stats.c): the object store, the
-- local disk cache, the block cache, bloom filters, flushes, compactions
-- and write stalls.  Backends publish their counts at transaction end.
CREATE FUNCTION forst.stats_row(
    OUT store_put bigint, OUT store_put_if_absent bigint, OUT store_get bigint,
    OUT store_get_range bigint, OUT store_head bigint, OUT store_list bigint,
    OUT store_delete bigint, OUT store_errors bigint, OUT store_not_found bigint,
    OUT store_bytes_read bigint, OUT store_bytes_written bigint,
    OUT store_retries bigint, OUT store_request_ms float8,
    OUT block_cache_hits bigint, OUT block_cache_misses bigint,
    OUT bloom_checks bigint, OUT bloom_negatives bigint,
    OUT bloom_false_positives bigint,
    OUT flushes bigint, OUT flush_bytes bigint,
    OUT compactions bigint, OUT compaction_bytes_written bigint,
    OUT write_stalls bigint, OUT write_stall_ms float8,
    OUT cache_hits bigint, OUT cache_misses bigint, OUT cache_evictions bigint,
    OUT cache_entries bigint, OUT cache_bytes_used bigint,
    OUT cache_capacity bigint, OUT cache_bytes_admitted bigint,
    OUT cache_bytes_read bigint, OUT cache_bytes_fetched bigint,
    OUT cache_corrupt_entries bigint, OUT cache_not_admitted bigint,
    OUT cache_ready boolean,
    OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'forst_stats_fn'
LANGUAGE C STRICT VOLATILE;

CREATE VIEW forst.stats AS SELECT * FROM forst.stats_row();

COMMENT ON VIEW forst.stats IS 'cluster-wide counters of the object store, the disk cache, the block cache, bloom filters, flushes, compactions and write stalls';

CREATE FUNCTION forst.stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'forst_stats_reset_fn'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION forst.stats_reset() IS 'zero the counters of forst.stats (not the contents of the caches)';

-- counters are no secret (as pg_stat_statements); resetting them is
GRANT SELECT ON forst.stats TO PUBLIC;
REVOKE ALL ON FUNCTION forst.stats_reset() FROM PUBLIC;
-- Window helpers (src/am/forst_window.c, docs/windows.md).  Windows are
-- half-open [start, end), aligned to an origin (default: the Unix epoch),
-- of fixed length (a day is 24 hours; months are refused); timestamptz
-- arithmetic is on the absolute time line, independent of TimeZone.
CREATE FUNCTION forst.tumble_start(ts timestamptz, size interval,
    origin timestamptz DEFAULT '1970-01-01 00:00:00+00')
RETURNS timestamptz AS 'MODULE_PATHNAME', 'forst_tumble_start_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.tumble_end(ts timestamptz, size interval,
    origin timestamptz DEFAULT '1970-01-01 00:00:00+00')
RETURNS timestamptz AS 'MODULE_PATHNAME', 'forst_tumble_end_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_start(ts timestamptz, size interval, slide interval,
    origin timestamptz DEFAULT '1970-01-01 00:00:00+00')
RETURNS timestamptz AS 'MODULE_PATHNAME', 'forst_hop_start_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_end(ts timestamptz, size interval, slide interval,
    origin timestamptz DEFAULT '1970-01-01 00:00:00+00')
RETURNS timestamptz AS 'MODULE_PATHNAME', 'forst_hop_end_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_windows(ts timestamptz, size interval, slide interval,
    origin timestamptz DEFAULT '1970-01-01 00:00:00+00')
RETURNS TABLE (window_start timestamptz, window_end timestamptz)
AS 'MODULE_PATHNAME', 'forst_hop_windows_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

CREATE FUNCTION forst.tumble_start(ts timestamp, size interval,
    origin timestamp DEFAULT '1970-01-01 00:00:00')
RETURNS timestamp AS 'MODULE_PATHNAME', 'forst_tumble_start_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.tumble_end(ts timestamp, size interval,
    origin timestamp DEFAULT '1970-01-01 00:00:00')
RETURNS timestamp AS 'MODULE_PATHNAME', 'forst_tumble_end_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_start(ts timestamp, size interval, slide interval,
    origin timestamp DEFAULT '1970-01-01 00:00:00')
RETURNS timestamp AS 'MODULE_PATHNAME', 'forst_hop_start_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_end(ts timestamp, size interval, slide interval,
    origin timestamp DEFAULT '1970-01-01 00:00:00')
RETURNS timestamp AS 'MODULE_PATHNAME', 'forst_hop_end_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_windows(ts timestamp, size interval, slide interval,
    origin timestamp DEFAULT '1970-01-01 00:00:00')
RETURNS TABLE (window_start timestamp, window_end timestamp)
AS 'MODULE_PATHNAME', 'forst_hop_windows_ts'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

CREATE FUNCTION forst.tumble_start(ts bigint, size bigint, origin bigint DEFAULT 0)
RETURNS bigint AS 'MODULE_PATHNAME', 'forst_tumble_start_int8'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.tumble_end(ts bigint, size bigint, origin bigint DEFAULT 0)
RETURNS bigint AS 'MODULE_PATHNAME', 'forst_tumble_end_int8'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_start(ts bigint, size bigint, slide bigint, origin bigint DEFAULT 0)
RETURNS bigint AS 'MODULE_PATHNAME', 'forst_hop_start_int8'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_end(ts bigint, size bigint, slide bigint, origin bigint DEFAULT 0)
RETURNS bigint AS 'MODULE_PATHNAME', 'forst_hop_end_int8'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION forst.hop_windows(ts bigint, size bigint, slide bigint, origin bigint DEFAULT 0)
RETURNS TABLE (window_start bigint, window_end bigint)
AS 'MODULE_PATHNAME', 'forst_hop_windows_int8'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

COMMENT ON FUNCTION forst.tumble_start(timestamptz, interval, timestamptz) IS 'start of the tumbling window [start, start + size) holding ts';
COMMENT ON FUNCTION forst.tumble_end(timestamptz, interval, timestamptz) IS 'end (exclusive) of the tumbling window holding ts';
COMMENT ON FUNCTION forst.hop_start(timestamptz, interval, interval, timestamptz) IS 'start of the newest hopping window holding ts (ts is aligned down to the slide)';
COMMENT ON FUNCTION forst.hop_end(timestamptz, interval, interval, timestamptz) IS 'end (exclusive) of the newest hopping window holding ts';
COMMENT ON FUNCTION forst.hop_windows(timestamptz, interval, interval, timestamptz) IS 'every hopping window [window_start, window_end) holding ts, earliest first';

-- ---------------------------------------------------------------------
-- Checkpoints, attach / restore / clone / rescale (docs/checkpoints.md)

CREATE FUNCTION forst.cluster_id()
RETURNS text AS 'MODULE_PATHNAME', 'forst_cluster_id_fn'
LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION forst.cluster_id() IS 'the id naming this server''s objects in the store (its system identifier)';

CREATE FUNCTION forst.checkpoint()
RETURNS bigint AS 'MODULE_PATHNAME', 'forst_checkpoint_fn'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION forst.checkpoint() IS 'takes a checkpoint of the forst tables of this database; returns its id';
REVOKE ALL ON FUNCTION forst.checkpoint() FROM PUBLIC;

CREATE FUNCTION forst.checkpoint_read(id bigint, cluster text DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'forst_checkpoint_read_fn'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION forst.checkpoint_read(bigint, text) IS 'the contents of a checkpoint object (of this cluster, or of another one sharing the store)';

CREATE FUNCTION forst.checkpoint_ids(cluster text DEFAULT NULL)
RETURNS SETOF bigint AS 'MODULE_PATHNAME', 'forst_checkpoint_ids_fn'
LANGUAGE C VOLATILE;

CREATE FUNCTION forst._checkpoint_status(OUT id bigint, OUT dbid oid,
    OUT started_at timestamptz, OUT duration interval, OUT bytes_written bigint,
    OUT state_bytes bigint, OUT tables int, OUT lsn pg_lsn, OUT status text,
    OUT progress text, OUT error text)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'forst_checkpoint_status_fn'
LANGUAGE C VOLATILE;

-- this server's recent attempts (running, failed, completed), then the
-- retained checkpoints in the store that it has no record of
CREATE VIEW forst.checkpoints AS
SELECT s.id, d.datname::text AS database, s.started_at, s.duration,
       s.bytes_written, s.state_bytes, s.tables, s.lsn, s.status, s.progress,
       s.error
  FROM forst._checkpoint_status() s LEFT JOIN pg_database d ON d.oid = s.dbid
UNION ALL
SELECT c.id, j->>'database', (j->>'started_at')::timestamptz, NULL, NULL,
       (j->>'state_bytes')::bigint, jsonb_array_length(j->'tables'),
       (j->>'lsn')::pg_lsn, 'completed', NULL, NULL
  FROM forst.checkpoint_ids() c(id), LATERAL forst.checkpoint_read(c.id) j
 WHERE c.id NOT IN (SELECT s2.id FROM forst._checkpoint_status() s2
                     WHERE s2.id IS NOT NULL);

CREATE FUNCTION forst._attach_files(target regclass, cluster text, checkpoint bigint,
    prefix text, version bigint, kg_lo int, kg_hi int, lo bigint, xmax bigint,
    ranges text, claim bool)
RETURNS bigint AS 'MODULE_PATHNAME', 'forst_attach_files'
LANGUAGE C VOLATILE STRICT;

-- forst.attach: a table of a checkpoint, here, reading its files lazily
CREATE FUNCTION forst.attach(source text, checkpoint bigint DEFAULT NULL,
    as_table text DEFAULT NULL, key_groups int4range DEFAULT NULL,
    mode text DEFAULT 'no_claim', cluster text DEFAULT NULL,
    into_existing bool DEFAULT false, savepoint text DEFAULT NULL)
RETURNS regclass LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    ck jsonb;
    t jsonb;
    target regclass;
    target_name text;
    want text[];
    lo int := 0;
    hi int := 127;
    ranges text;
    col text;
BEGIN
    IF mode IS NULL OR mode NOT IN ('claim', 'no_claim') THEN
        RAISE EXCEPTION 'forst: mode must be ''claim'' or ''no_claim'', not %', quote_nullable(mode)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'no_claim borrows the files and pins them; claim takes them over and fences the source''s writer.';
    END IF;
    IF savepoint IS NOT NULL THEN
        IF checkpoint IS NOT NULL THEN
            RAISE EXCEPTION 'forst: give a checkpoint or a savepoint, not both'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        ck := forst.savepoint_read(savepoint, cluster);
    ELSIF checkpoint IS NULL THEN
        SELECT max(i) INTO checkpoint FROM forst.checkpoint_ids(cluster) i;
        IF checkpoint IS NULL THEN
            RAISE EXCEPTION 'forst: cluster % has no checkpoints', coalesce(cluster, forst.cluster_id())
                USING ERRCODE = 'undefined_object',
                      HINT = 'Take one with SELECT forst.checkpoint() on the source server.';
        END IF;
    END IF;
    IF savepoint IS NULL THEN
        ck := forst.checkpoint_read(checkpoint, cluster);
    END IF;
    want := parse_ident(source);
    IF array_length(want, 1) = 1 THEN
        want := ARRAY['public'] || want;
    END IF;
    SELECT x INTO t FROM jsonb_array_elements(ck->'tables') x
     WHERE parse_ident(x->>'name') = want;
    IF t IS NULL THEN
        RAISE EXCEPTION 'forst: % has no table %',
                coalesce('savepoint ' || savepoint, 'checkpoint ' || checkpoint), source
            USING ERRCODE = 'undefined_table',
                  HINT = 'It holds: ' || coalesce((SELECT string_agg(x->>'name', ', ')
                                               FROM jsonb_array_elements(ck->'tables') x), 'no tables') || '.';
    END IF;
    IF key_groups IS NOT NULL THEN
        IF isempty(key_groups) OR lower_inf(key_groups) OR upper_inf(key_groups) THEN
            RAISE EXCEPTION 'forst: key_groups must be a bounded, non-empty range such as ''[0,64)'''
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        lo := lower(key_groups);
        hi := upper(key_groups) - 1;
    END IF;
    target_name := (SELECT string_agg(quote_ident(p), '.')
                      FROM unnest(parse_ident(coalesce(as_table, t->>'name'))) p);
    IF into_existing THEN
        target := target_name::regclass;
    ELSE
        EXECUTE format('CREATE TABLE %s (%s%s) USING forst', target_name, t->>'columns',
                       CASE WHEN coalesce(t->>'constraints', '') <> ''
                            THEN ', ' || (t->>'constraints') ELSE '' END);
        target := target_name::regclass;
        FOREACH col IN ARRAY coalesce(string_to_array(nullif(t->>'dropped', ''), ','), '{}') LOOP
            EXECUTE format('ALTER TABLE %s DROP COLUMN %s', target, col);
        END LOOP;
    END IF;
    SELECT coalesce(string_agg(format('%s-%s', r->>0, r->>1), ','), '-') INTO ranges
      FROM jsonb_array_elements(ck->'snapshot'->'visible') r;
    PERFORM forst._attach_files(target, coalesce(cluster, forst.cluster_id()),
                                CASE WHEN savepoint IS NULL THEN checkpoint ELSE 0 END,
                                t->>'prefix', (t->>'manifest')::bigint, lo, hi,
                                (ck->'snapshot'->>'lo')::bigint,
                                (ck->'snapshot'->>'xmax')::bigint, ranges, mode = 'claim');
    RETURN target;
END
$$;
COMMENT ON FUNCTION forst.attach(text, bigint, text, int4range, text, text, bool, text) IS
    'recreates a table of a checkpoint or savepoint (of this or another cluster sharing the store) and serves it from its files, without copying them';
REVOKE ALL ON FUNCTION forst.attach(text, bigint, text, int4range, text, text, bool, text) FROM PUBLIC;

CREATE FUNCTION forst.gc(OUT objects_listed bigint, OUT objects_kept bigint,
    OUT objects_deleted bigint, OUT bytes_deleted bigint, OUT tables int,
    OUT dead_tables int, OUT pins_dropped int)
RETURNS record AS 'MODULE_PATHNAME', 'forst_gc_fn'
LANGUAGE C VOLATILE;
COMMENT ON FUNCTION forst.gc() IS 'deletes the objects of this database''s forst tables (and of dropped databases'') that no live table, retained checkpoint or clone needs';
REVOKE ALL ON FUNCTION forst.gc() FROM PUBLIC;

CREATE FUNCTION forst.savepoint(name text)
RETURNS text AS 'MODULE_PATHNAME', 'forst_savepoint_fn'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION forst.savepoint(text) IS 'takes a checkpoint and copies everything it needs under savepoints/<name>/: a restore point that outlives the source';
REVOKE ALL ON FUNCTION forst.savepoint(text) FROM PUBLIC;

CREATE FUNCTION forst.savepoint_read(name text, cluster text DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'forst_savepoint_read_fn'
LANGUAGE C VOLATILE;

CREATE FUNCTION forst.drop_savepoint(name text, force bool DEFAULT false)
RETURNS bigint AS 'MODULE_PATHNAME', 'forst_drop_savepoint_fn'
LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION forst.drop_savepoint(text, bool) FROM PUBLIC;

CREATE FUNCTION forst.prewarm(tbl regclass, data bool DEFAULT false,
    OUT files int, OUT files_skipped int, OUT bytes_read bigint,
    OUT bytes_fetched bigint, OUT data_bytes bigint)
RETURNS record AS 'MODULE_PATHNAME', 'forst_prewarm_fn'
LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION forst.prewarm(regclass, bool) IS 'reads a forst table''s SST metadata (and with data, its files, as far as the cache holds them) into the local disk cache: the warm-up after forst.attach';
REVOKE ALL ON FUNCTION forst.prewarm(regclass, bool) FROM PUBLIC;

CREATE FUNCTION forst._progress(OUT pid int, OUT dbid oid, OUT command text,
    OUT target text, OUT started_at timestamptz, OUT phase text, OUT done bigint,
    OUT total bigint, OUT unit text)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'forst_progress_fn'
LANGUAGE C VOLATILE;

-- long operations running now (checkpoint, gc, savepoint, prewarm)
CREATE VIEW forst.progress AS
SELECT p.pid, d.datname::text AS database, p.command, p.target, p.started_at,
       now() - p.started_at AS elapsed, p.phase, p.done, p.total, p.unit,
       CASE WHEN p.total > 0 THEN round(100.0 * p.done / p.total, 1) END AS percent
  FROM forst._progress() p LEFT JOIN pg_database d ON d.oid = p.dbid;

-- forst.restore: every table of a checkpoint (or savepoint) at once, a
-- consistent cut
CREATE FUNCTION forst.restore(checkpoint bigint DEFAULT NULL, cluster text DEFAULT NULL,
    mode text DEFAULT 'no_claim', savepoint text DEFAULT NULL)
RETURNS SETOF regclass LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    ck jsonb;
    t jsonb;
BEGIN
    IF savepoint IS NOT NULL THEN
        ck := forst.savepoint_read(savepoint, cluster);
        checkpoint := NULL;
    ELSE
        IF checkpoint IS NULL THEN
            SELECT max(i) INTO checkpoint FROM forst.checkpoint_ids(cluster) i;
            IF checkpoint IS NULL THEN
                RAISE EXCEPTION 'forst: cluster % has no checkpoints', coalesce(cluster, forst.cluster_id())
                    USING ERRCODE = 'undefined_object';
            END IF;
        END IF;
        ck := forst.checkpoint_read(checkpoint, cluster);
    END IF;
    FOR t IN SELECT x FROM jsonb_array_elements(ck->'tables') x ORDER BY x->>'name' LOOP
        RETURN NEXT forst.attach(t->>'name', checkpoint, NULL, NULL, mode, cluster, false, savepoint);
    END LOOP;
END
$$;
COMMENT ON FUNCTION forst.restore(bigint, text, text, text) IS
    'attaches every table of a checkpoint or savepoint under its own name';
REVOKE ALL ON FUNCTION forst.restore(bigint, text, text, text) FROM PUBLIC;
