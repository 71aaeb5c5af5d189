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
-- forst.key_group_layout: the ranges of a layout in key group order with
-- their hash partition bounds; an error unless each is one hash partition
-- and together they hold every key group once.  forst.key_group_range:
-- the range a hash partition bound holds.  Pure functions: PUBLIC.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst.key_group_layout(key_groups int4range[],
    OUT shard int, OUT groups int4range, OUT modulus int, OUT remainder int)
RETURNS SETOF record LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    r record;
    b record;
    next_lo int := 0;
    i int := 0;
BEGIN
    FOR r IN SELECT kg FROM unnest(key_groups) u(kg)
             ORDER BY lower(kg) NULLS FIRST LOOP
        IF r.kg IS NULL THEN
            RAISE EXCEPTION 'forst: a range of key groups is null' USING ERRCODE = 'null_value_not_allowed';
        END IF;
        b := forst.key_group_bound(r.kg);
        IF lower(r.kg) <> next_lo THEN
            RAISE EXCEPTION 'forst: the ranges of key groups must cover [0,128) once; % %',
                    CASE WHEN lower(r.kg) > next_lo THEN 'nothing holds' ELSE 'two ranges hold' END,
                    CASE WHEN lower(r.kg) > next_lo THEN format('[%s,%s)', next_lo, lower(r.kg))
                         ELSE format('key group %s', lower(r.kg)) END
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'For example ''{"[0,64)","[64,96)","[96,128)"}''.';
        END IF;
        next_lo := upper(r.kg);
        i := i + 1;
        shard := i;
        groups := r.kg;
        modulus := b.modulus;
        remainder := b.remainder;
        RETURN NEXT;
    END LOOP;
    IF next_lo <> 128 THEN
        RAISE EXCEPTION 'forst: the ranges of key groups must cover [0,128) once; nothing holds [%,128)', next_lo
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'For example ''{"[0,64)","[64,96)","[96,128)"}''.';
    END IF;
END
$$;
COMMENT ON FUNCTION forst.key_group_layout(int4range[]) IS
    'the ranges of key groups of a layout, in order, with their hash partition bounds; an error unless they hold every key group once';

CREATE FUNCTION forst.key_group_range(modulus int, remainder int) RETURNS int4range
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT r FROM generate_series(0, 127, 128 / modulus) lo, int4range(lo, lo + 128 / modulus) r
     WHERE modulus IN (1, 2, 4, 8, 16, 32, 64, 128)
       AND (forst.key_group_bound(r)).remainder = remainder
$$;
COMMENT ON FUNCTION forst.key_group_range(int, int) IS
    'the key groups the hash partition (modulus, remainder) holds under forst.key_group_<type>_ops; null if none';

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
BEGIN
    IF n = 0 OR n IS DISTINCT FROM coalesce(array_length(key_groups, 1), 0) THEN
        RAISE EXCEPTION 'forst: give one range of key groups for each server (servers: %, ranges: %)',
                n, coalesce(array_length(key_groups, 1), 0)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- the shards: each one hash partition, together every key group once
    PERFORM forst.key_group_layout(key_groups);
    IF array_position(servers, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'forst: a server name is null' USING ERRCODE = 'null_value_not_allowed';
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

-- ---------------------------------------------------------------------
-- Statements on the servers of a distributed table (src/am/scaleout/
-- remote.c): through a postgres_fdw foreign server and the caller's user
-- mapping, with postgres_fdw's password rule.  Internal: forst.rescale's.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst._remote_exec(server name, sql text) RETURNS text
AS 'MODULE_PATHNAME', 'forst_remote_exec_fn'
LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION forst._remote_exec(name, text) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- forst.rescale: a distributed table (forst.distribute) given a new
-- layout, with no row copied.  On the coordinator, writes through the
-- table wait (LOCK ... EXCLUSIVE; reads go on); each server whose shards
-- change takes a checkpoint; each new shard is attached on its server
-- from the checkpoints of the old shards that held its key groups (a
-- split reads part of one, a merge adds the adjoining parts of several,
-- into_existing); the coordinator's foreign partitions are switched to
-- the new shards and that commits; then the old shards are dropped on
-- their servers.  A shard whose range and server stay is left alone.  A
-- failure before the switch drops the new shards it attached and leaves
-- the old layout serving.  Writers that go to the servers directly (the
-- instances of a job) must be paused at a barrier for the whole call.
-- Attach is superuser-only on the servers, so this is too.
-- ---------------------------------------------------------------------
CREATE PROCEDURE forst.rescale(parent regclass, servers name[], key_groups int4range[])
LANGUAGE plpgsql
AS $$
DECLARE
    n int := coalesce(array_length(servers, 1), 0);
    nsp name;
    rel name;
    o record;
    s record;
    ck jsonb := '{}';
    cl jsonb := '{}';
    owner text;
    first bool;
    created text[] := '{}';
    dropped text[] := '{}';
    t0 timestamptz := clock_timestamp();
    t_switch timestamptz;
    c text;
BEGIN
    IF n = 0 OR n IS DISTINCT FROM coalesce(array_length(key_groups, 1), 0) THEN
        RAISE EXCEPTION 'forst: give one range of key groups for each server (servers: %, ranges: %)',
                n, coalesce(array_length(key_groups, 1), 0)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM forst.key_group_layout(key_groups);
    SELECT ns.nspname, cl_.relname INTO nsp, rel
      FROM pg_class cl_ JOIN pg_namespace ns ON ns.oid = cl_.relnamespace
      JOIN pg_partitioned_table pt ON pt.partrelid = cl_.oid
      JOIN pg_opclass oc ON oc.oid = pt.partclass[0]
     WHERE cl_.oid = parent AND pt.partstrat = 'h' AND pt.partnatts = 1
       AND oc.opcnamespace = 'forst'::regnamespace AND oc.opcname LIKE 'key\_group\_%\_ops';
    IF rel IS NULL THEN
        RAISE EXCEPTION 'forst: % is not a table distributed by key group', parent
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'forst.distribute creates one.';
    END IF;

    -- writes through the coordinator wait from here to the switch
    EXECUTE format('LOCK TABLE %s IN EXCLUSIVE MODE', parent);

    -- the old layout, and the new
    CREATE TEMP TABLE forst_rescale_old ON COMMIT DROP AS
    SELECT p.oid::regclass AS part, srv.srvname AS server,
           coalesce((SELECT option_value FROM pg_options_to_table(f.ftoptions) WHERE option_name = 'schema_name'),
                    (SELECT nspname FROM pg_namespace WHERE oid = p.relnamespace)) AS rnsp,
           coalesce((SELECT option_value FROM pg_options_to_table(f.ftoptions) WHERE option_name = 'table_name'),
                    p.relname) AS rrel,
           forst.key_group_range(m[1]::int, m[2]::int) AS kg
      FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid
      JOIN pg_foreign_table f ON f.ftrelid = p.oid
      JOIN pg_foreign_server srv ON srv.oid = f.ftserver,
           regexp_match(pg_get_expr(p.relpartbound, p.oid), 'modulus (\d+), remainder (\d+)') m
     WHERE i.inhparent = parent;
    IF (SELECT count(*) FROM pg_inherits WHERE inhparent = parent)
       <> (SELECT count(*) FROM forst_rescale_old WHERE kg IS NOT NULL) THEN
        RAISE EXCEPTION 'forst: every partition of % must be a foreign table of a range of key groups', parent
            USING ERRCODE = 'wrong_object_type';
    END IF;
    CREATE TEMP TABLE forst_rescale_new ON COMMIT DROP AS
    SELECT u.kg, u.server, format('%s_kg%s_%s', rel, lower(u.kg), upper(u.kg)) AS rrel,
           EXISTS (SELECT FROM forst_rescale_old ol WHERE ol.kg = u.kg AND ol.server = u.server) AS kept
      FROM unnest(key_groups, servers) u(kg, server);
    IF EXISTS (SELECT FROM forst_rescale_new WHERE server IS NULL) THEN
        RAISE EXCEPTION 'forst: a server name is null' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT EXISTS (SELECT FROM forst_rescale_new WHERE NOT kept) THEN
        RAISE NOTICE 'forst.rescale: % already has this layout', parent;
        RETURN;
    END IF;

    BEGIN
        -- a checkpoint of each server whose shards change
        FOR s IN SELECT DISTINCT ol.server FROM forst_rescale_old ol
                  WHERE EXISTS (SELECT FROM forst_rescale_new nw WHERE NOT nw.kept AND nw.kg && ol.kg) LOOP
            ck := ck || jsonb_build_object(s.server, forst._remote_exec(s.server, 'SELECT forst.checkpoint()')::bigint);
            cl := cl || jsonb_build_object(s.server, forst._remote_exec(s.server, 'SELECT forst.cluster_id()'));
            RAISE NOTICE 'forst.rescale: checkpoint % of server %', ck->>s.server, s.server;
        END LOOP;
        -- each new shard, attached from the old shards that held its key groups
        FOR s IN SELECT nw.* FROM forst_rescale_new nw WHERE NOT nw.kept ORDER BY lower(nw.kg) LOOP
            first := true;
            FOR o IN SELECT ol.* FROM forst_rescale_old ol WHERE ol.kg && s.kg ORDER BY lower(ol.kg) LOOP
                IF first THEN
                    owner := forst._remote_exec(o.server, format(
                        'SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = %L::regclass',
                        format('%I.%I', o.rnsp, o.rrel)));
                END IF;
                PERFORM forst._remote_exec(s.server, format(
                    'SELECT forst.attach(%L, %s, as_table => %L, key_groups => %L, cluster => %L, into_existing => %L)',
                    format('%I.%I', o.rnsp, o.rrel), ck->>o.server, format('%I.%I', nsp, s.rrel),
                    s.kg * o.kg, cl->>o.server, NOT first));
                IF first THEN
                    created := created || format('%s %I.%I', s.server, nsp, s.rrel);
                    PERFORM forst._remote_exec(s.server, format('ALTER TABLE %I.%I OWNER TO %I', nsp, s.rrel, owner));
                END IF;
                RAISE NOTICE 'forst.rescale: key groups % on server %: from % of server %, checkpoint %',
                    s.kg * o.kg, s.server, format('%I.%I', o.rnsp, o.rrel), o.server, ck->>o.server;
                first := false;
            END LOOP;
        END LOOP;
        -- the switch: the coordinator's partitions name the new shards
        FOR o IN SELECT ol.* FROM forst_rescale_old ol
                  WHERE NOT EXISTS (SELECT FROM forst_rescale_new nw
                                     WHERE nw.kept AND nw.kg = ol.kg AND nw.server = ol.server) LOOP
            EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, o.part);
            EXECUTE format('DROP FOREIGN TABLE %s', o.part);
            dropped := dropped || format('%s %I.%I', o.server, o.rnsp, o.rrel);
        END LOOP;
        FOR s IN SELECT nw.*, b.modulus, b.remainder FROM forst_rescale_new nw, forst.key_group_bound(nw.kg) b
                  WHERE NOT nw.kept LOOP
            EXECUTE format('CREATE FOREIGN TABLE %I.%I PARTITION OF %s FOR VALUES WITH (MODULUS %s, REMAINDER %s) '
                           'SERVER %I OPTIONS (schema_name %L, table_name %L, async_capable ''true'')',
                           nsp, format('%s_kg%s_%s', rel, lower(s.kg), upper(s.kg)), parent,
                           s.modulus, s.remainder, s.server, nsp, s.rrel);
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        -- the old layout stays: drop what was attached for the new one
        FOREACH c IN ARRAY created LOOP
            BEGIN
                PERFORM forst._remote_exec(split_part(c, ' ', 1)::name,
                                           format('DROP TABLE IF EXISTS %s', substr(c, strpos(c, ' ') + 1)));
            EXCEPTION WHEN OTHERS THEN
                RAISE WARNING 'forst.rescale: could not drop % on server %: %',
                    substr(c, strpos(c, ' ') + 1), split_part(c, ' ', 1), SQLERRM;
            END;
        END LOOP;
        RAISE;
    END;
    COMMIT;
    t_switch := clock_timestamp();
    RAISE NOTICE 'forst.rescale: % switched to the new layout in % ms', parent,
        round(extract(epoch FROM t_switch - t0) * 1000);
    -- the old shards, no longer routed to: dropped (their files stay while
    -- the new shards borrow them)
    FOREACH c IN ARRAY dropped LOOP
        BEGIN
            PERFORM forst._remote_exec(split_part(c, ' ', 1)::name,
                                       format('DROP TABLE %s', substr(c, strpos(c, ' ') + 1)));
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'forst.rescale: could not drop the old shard % on server %: %',
                substr(c, strpos(c, ' ') + 1), split_part(c, ' ', 1), SQLERRM
                USING HINT = 'Drop it there once the server answers; nothing routes to it.';
        END;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE forst.rescale(regclass, name[], int4range[]) IS
    'moves the key groups of a distributed table to a new layout of servers without copying rows: checkpoint, attach, switch, drop';
REVOKE ALL ON PROCEDURE forst.rescale(regclass, name[], int4range[]) FROM PUBLIC;
