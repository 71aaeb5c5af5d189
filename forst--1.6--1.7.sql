/* forst--1.6--1.7.sql: from 1.6 to 1.7 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.7'" to load this file. \quit

-- ---------------------------------------------------------------------
-- Hash partitioning by key group (src/am/functions/partition_hash.c).
-- A table partitioned BY HASH (k forst.key_group_<type>_ops) places a
-- row by the key group forst gives its first key column; the partition
-- (modulus, remainder) that forst.key_group_bound() names for a range of
-- key groups holds exactly those.  Pure functions: PUBLIC.
--
-- The families have the equality operators and support function 2 only:
-- no function 1, so that PostgreSQL never takes their 128-valued hash for
-- a hash join or aggregate.  The integer families also place int2, int4
-- and int8 values compared with the column, as the column's value would
-- be, so that a key such as k = 42 prunes on a bigint column.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst.key_group_bound(key_groups int4range,
    OUT modulus int, OUT remainder int)
RETURNS record
AS 'MODULE_PATHNAME', 'forst_key_group_bound'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION forst.key_group_bound(int4range) IS 'hash partition bound (modulus, remainder) holding exactly these key groups under forst.key_group_<type>_ops';

-- Support functions, one per key type; the C function reads its declared
-- argument type.
CREATE FUNCTION forst.key_group_hash(int2, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(int4, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(int8, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(text, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(bpchar, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(bytea, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(uuid, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(numeric, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(date, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(timestamp, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash(timestamptz, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- Cross-type members of the integer families: the value placed as the
-- column's type would place it.
CREATE FUNCTION forst.key_group_hash_as_int2(int4, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash_as_int2' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash_as_int2(int8, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash_as_int2' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash_as_int4(int2, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash_as_int4' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash_as_int4(int8, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash_as_int4' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash_as_int8(int2, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash_as_int8' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION forst.key_group_hash_as_int8(int4, int8) RETURNS int8
AS 'MODULE_PATHNAME', 'forst_key_group_hash_as_int8' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

CREATE OPERATOR CLASS forst.key_group_int2_ops FOR TYPE int2 USING hash AS
    OPERATOR 1 = (int2, int2),
    OPERATOR 1 = (int2, int4),
    OPERATOR 1 = (int2, int8),
    FUNCTION 2 (int2, int2) forst.key_group_hash(int2, int8),
    FUNCTION 2 (int4, int4) forst.key_group_hash_as_int2(int4, int8),
    FUNCTION 2 (int8, int8) forst.key_group_hash_as_int2(int8, int8);
CREATE OPERATOR CLASS forst.key_group_int4_ops FOR TYPE int4 USING hash AS
    OPERATOR 1 = (int4, int4),
    OPERATOR 1 = (int4, int2),
    OPERATOR 1 = (int4, int8),
    FUNCTION 2 (int4, int4) forst.key_group_hash(int4, int8),
    FUNCTION 2 (int2, int2) forst.key_group_hash_as_int4(int2, int8),
    FUNCTION 2 (int8, int8) forst.key_group_hash_as_int4(int8, int8);
CREATE OPERATOR CLASS forst.key_group_int8_ops FOR TYPE int8 USING hash AS
    OPERATOR 1 = (int8, int8),
    OPERATOR 1 = (int8, int2),
    OPERATOR 1 = (int8, int4),
    FUNCTION 2 (int8, int8) forst.key_group_hash(int8, int8),
    FUNCTION 2 (int2, int2) forst.key_group_hash_as_int8(int2, int8),
    FUNCTION 2 (int4, int4) forst.key_group_hash_as_int8(int4, int8);
CREATE OPERATOR CLASS forst.key_group_text_ops FOR TYPE text USING hash AS
    OPERATOR 1 = (text, text),
    FUNCTION 2 forst.key_group_hash(text, int8);
CREATE OPERATOR CLASS forst.key_group_bpchar_ops FOR TYPE bpchar USING hash AS
    OPERATOR 1 = (bpchar, bpchar),
    FUNCTION 2 forst.key_group_hash(bpchar, int8);
CREATE OPERATOR CLASS forst.key_group_bytea_ops FOR TYPE bytea USING hash AS
    OPERATOR 1 = (bytea, bytea),
    FUNCTION 2 forst.key_group_hash(bytea, int8);
CREATE OPERATOR CLASS forst.key_group_uuid_ops FOR TYPE uuid USING hash AS
    OPERATOR 1 = (uuid, uuid),
    FUNCTION 2 forst.key_group_hash(uuid, int8);
CREATE OPERATOR CLASS forst.key_group_numeric_ops FOR TYPE numeric USING hash AS
    OPERATOR 1 = (numeric, numeric),
    FUNCTION 2 forst.key_group_hash(numeric, int8);
CREATE OPERATOR CLASS forst.key_group_date_ops FOR TYPE date USING hash AS
    OPERATOR 1 = (date, date),
    FUNCTION 2 forst.key_group_hash(date, int8);
CREATE OPERATOR CLASS forst.key_group_timestamp_ops FOR TYPE timestamp USING hash AS
    OPERATOR 1 = (timestamp, timestamp),
    FUNCTION 2 forst.key_group_hash(timestamp, int8);
CREATE OPERATOR CLASS forst.key_group_timestamptz_ops FOR TYPE timestamptz USING hash AS
    OPERATOR 1 = (timestamptz, timestamptz),
    FUNCTION 2 forst.key_group_hash(timestamptz, int8);

-- ---------------------------------------------------------------------
-- forst.distribute: on the server that routes (the coordinator), a table
-- partitioned by key group over postgres_fdw foreign tables, one per
-- shard: shard i holds key_groups[i] (an aligned power-of-two range, see
-- forst.key_group_bound) on foreign server servers[i], as table
-- remote_table there (default: the same name).  The ranges must cover the
-- 128 key groups once.  The columns come from template (a table or
-- foreign table here); the partition key is key_column, by default the
-- template's first primary key column (forst's key group column).  The
-- foreign tables are async_capable, so that a query over several shards
-- reads them at once.
-- Invoker's rights: the caller needs what the statements need (CREATE on
-- the schema, SELECT on the template, USAGE on the servers), so PUBLIC.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst.distribute(table_name text, template regclass,
    servers name[], key_groups int4range[], remote_table text DEFAULT NULL,
    key_column name DEFAULT NULL)
RETURNS regclass LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    n int := coalesce(array_length(servers, 1), 0);
    qname text;
    rname text[];
    nsp name;
    rel name;
    keycol name := key_column;
    keytype oid;
    opclass text;
    parent regclass;
    r record;
    b record;
    next_lo int := 0;
BEGIN
    IF n = 0 OR n IS DISTINCT FROM coalesce(array_length(key_groups, 1), 0) THEN
        RAISE EXCEPTION 'forst: give one range of key groups for each server (servers: %, ranges: %)',
                n, coalesce(array_length(key_groups, 1), 0)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- the shards, in key group order: each one hash partition, together
    -- every key group once
    FOR r IN SELECT kg, srv FROM unnest(key_groups, servers) u(kg, srv)
             ORDER BY lower(kg) NULLS FIRST LOOP
        PERFORM forst.key_group_bound(r.kg);
        IF lower(r.kg) <> next_lo THEN
            RAISE EXCEPTION 'forst: the ranges of key groups must cover [0,128) once; % %',
                    CASE WHEN lower(r.kg) > next_lo THEN 'nothing holds' ELSE 'two ranges hold' END,
                    CASE WHEN lower(r.kg) > next_lo THEN format('[%s,%s)', next_lo, lower(r.kg))
                         ELSE format('key group %s', lower(r.kg)) END
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'For example ''{"[0,64)","[64,96)","[96,128)"}''.';
        END IF;
        IF r.srv IS NULL THEN
            RAISE EXCEPTION 'forst: a server name is null' USING ERRCODE = 'null_value_not_allowed';
        END IF;
        next_lo := upper(r.kg);
    END LOOP;
    IF next_lo <> 128 THEN
        RAISE EXCEPTION 'forst: the ranges of key groups must cover [0,128) once; nothing holds [%,128)', next_lo
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'For example ''{"[0,64)","[64,96)","[96,128)"}''.';
    END IF;
    -- the partition key: forst's key group column
    IF keycol IS NULL THEN
        SELECT a.attname INTO keycol
          FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
         WHERE i.indrelid = template AND i.indisprimary;
        IF keycol IS NULL THEN
            RAISE EXCEPTION 'forst: % has no primary key to take the key column from', template
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Name the first key column of the shards: key_column => ''...''.';
        END IF;
    END IF;
    SELECT getbase.t INTO keytype
      FROM pg_attribute a,
           LATERAL (WITH RECURSIVE d(t) AS (SELECT a.atttypid
                                           UNION ALL
                                           SELECT ty.typbasetype FROM pg_type ty, d
                                            WHERE ty.oid = d.t AND ty.typtype = 'd')
                    SELECT t FROM d JOIN pg_type ty ON ty.oid = d.t AND ty.typtype <> 'd') getbase
     WHERE a.attrelid = template AND a.attname = keycol AND a.attnum > 0 AND NOT a.attisdropped;
    IF keytype IS NULL THEN
        RAISE EXCEPTION 'forst: % has no column %', template, keycol
            USING ERRCODE = 'undefined_column';
    END IF;
    opclass := CASE keytype
        WHEN 'int2'::regtype THEN 'key_group_int2_ops'
        WHEN 'int4'::regtype THEN 'key_group_int4_ops'
        WHEN 'int8'::regtype THEN 'key_group_int8_ops'
        WHEN 'text'::regtype THEN 'key_group_text_ops'
        WHEN 'varchar'::regtype THEN 'key_group_text_ops'
        WHEN 'bpchar'::regtype THEN 'key_group_bpchar_ops'
        WHEN 'bytea'::regtype THEN 'key_group_bytea_ops'
        WHEN 'uuid'::regtype THEN 'key_group_uuid_ops'
        WHEN 'numeric'::regtype THEN 'key_group_numeric_ops'
        WHEN 'date'::regtype THEN 'key_group_date_ops'
        WHEN 'timestamp'::regtype THEN 'key_group_timestamp_ops'
        WHEN 'timestamptz'::regtype THEN 'key_group_timestamptz_ops'
    END;
    IF opclass IS NULL THEN
        RAISE EXCEPTION 'forst: cannot partition by key group on a column of type %', keytype::regtype
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Key columns of type smallint, integer, bigint, text, varchar, char, bytea, uuid, numeric, date, timestamp and timestamptz can.';
    END IF;
    qname := (SELECT string_agg(quote_ident(p), '.') FROM unnest(parse_ident(table_name)) p);
    EXECUTE format('CREATE TABLE %s (LIKE %s) PARTITION BY HASH (%I forst.%I)',
                   qname, template, keycol, opclass);
    parent := qname::regclass;
    SELECT ns.nspname, c.relname INTO nsp, rel
      FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE c.oid = parent;
    -- the shards' name on their servers: remote_table, or the parent's;
    -- in the parent's schema unless qualified
    rname := CASE WHEN remote_table IS NULL THEN ARRAY[nsp, rel] ELSE parse_ident(remote_table) END;
    IF array_length(rname, 1) = 1 THEN
        rname := ARRAY[nsp] || rname;
    ELSIF array_length(rname, 1) <> 2 THEN
        RAISE EXCEPTION 'forst: remote_table must be a table name, optionally schema-qualified, not %', remote_table
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR r IN SELECT kg, srv FROM unnest(key_groups, servers) u(kg, srv) ORDER BY lower(kg) LOOP
        b := forst.key_group_bound(r.kg);
        EXECUTE format('CREATE FOREIGN TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %s, REMAINDER %s) '
                       'SERVER %I OPTIONS (schema_name %L, table_name %L, async_capable ''true'')',
                       format('%I.%I', nsp, format('%s_kg%s_%s', rel, lower(r.kg), upper(r.kg))),
                       parent, b.modulus, b.remainder, r.srv, rname[1], rname[2]);
    END LOOP;
    RETURN parent;
END
$$;
COMMENT ON FUNCTION forst.distribute(text, regclass, name[], int4range[], text, name) IS
    'creates a table partitioned by key group whose partitions are postgres_fdw foreign tables, one per server and range of key groups';
