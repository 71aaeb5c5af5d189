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
-- and together they hold every key group once, and, given the servers,
-- unless there is one non-null server per range.  forst.key_group_range:
-- the range a hash partition bound holds.  Pure functions: PUBLIC.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst.key_group_layout(key_groups int4range[], servers name[] DEFAULT NULL,
    OUT shard int, OUT groups int4range, OUT modulus int, OUT remainder int)
RETURNS SETOF record LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    r record;
    b record;
    next_lo int := 0;
    i int := 0;
BEGIN
    IF servers IS NOT NULL THEN
        IF coalesce(array_length(servers, 1), 0) <> coalesce(array_length(key_groups, 1), 0) THEN
            RAISE EXCEPTION 'forst: give one range of key groups for each server (servers: %, ranges: %)',
                    coalesce(array_length(servers, 1), 0), coalesce(array_length(key_groups, 1), 0)
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF array_position(servers, NULL) IS NOT NULL THEN
            RAISE EXCEPTION 'forst: a server name is null' USING ERRCODE = 'null_value_not_allowed';
        END IF;
    END IF;
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
COMMENT ON FUNCTION forst.key_group_layout(int4range[], name[]) IS
    'the ranges of key groups of a layout, in order, with their hash partition bounds; an error unless they hold every key group once (and, given servers, one per server)';

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
    -- the shards: each one hash partition, together every key group
    -- once, one server each
    PERFORM forst.key_group_layout(key_groups, servers);
    -- every shard here is remote_table on its server: one per server
    IF (SELECT count(DISTINCT x) FROM unnest(servers) x) < n THEN
        RAISE EXCEPTION 'forst: a server appears twice; forst.distribute names one shard table per server'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Distribute over one range per server, then give a server more ranges with forst.rescale, whose shard tables are named by their ranges.';
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
-- The superuser-only functions below run with search_path pg_catalog,
-- pg_temp (names they record come out schema-qualified, and objects in a
-- caller's schemas cannot stand in for the catalog's); the procedure
-- forst.rescale cannot (a procedure with SET cannot commit), and
-- forst.restore_distributed creates its table where the caller says.
--
-- The layout of a distributed table as the coordinator's catalog has it:
-- per foreign partition its server, the shard's table there and its range
-- of key groups.  Internal: the procedures below.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst._distributed_layout(parent regclass,
    OUT part regclass, OUT server name, OUT remote_table text, OUT groups int4range)
RETURNS SETOF record LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_partitioned_table pt JOIN pg_opclass oc ON oc.oid = pt.partclass[0]
                    WHERE pt.partrelid = parent AND pt.partstrat = 'h' AND pt.partnatts = 1
                      AND oc.opcnamespace = 'forst'::regnamespace
                      AND oc.opcname LIKE 'key\_group\_%\_ops') THEN
        RAISE EXCEPTION 'forst: % is not a table distributed by key group', parent
            USING ERRCODE = 'wrong_object_type',
                  HINT = 'forst.distribute creates one.';
    END IF;
    RETURN QUERY
    SELECT p.oid::regclass, srv.srvname,
           format('%I.%I',
                  coalesce((SELECT option_value FROM pg_options_to_table(f.ftoptions) WHERE option_name = 'schema_name'),
                           (SELECT nspname FROM pg_namespace WHERE oid = p.relnamespace)),
                  coalesce((SELECT option_value FROM pg_options_to_table(f.ftoptions) WHERE option_name = 'table_name'),
                           p.relname)),
           forst.key_group_range(m[1]::int, m[2]::int)
      FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid
      LEFT JOIN pg_foreign_table f ON f.ftrelid = p.oid
      LEFT JOIN pg_foreign_server srv ON srv.oid = f.ftserver
      LEFT JOIN LATERAL regexp_match(pg_get_expr(p.relpartbound, p.oid), 'modulus (\d+), remainder (\d+)') m ON true
     WHERE i.inhparent = parent
     ORDER BY 4;
    IF EXISTS (SELECT FROM pg_inherits i LEFT JOIN pg_foreign_table f ON f.ftrelid = i.inhrelid
                WHERE i.inhparent = parent AND f.ftrelid IS NULL) THEN
        RAISE EXCEPTION 'forst: every partition of % must be a foreign table of a range of key groups', parent
            USING ERRCODE = 'wrong_object_type';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION forst._distributed_layout(regclass) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- forst._attach_shards: on each target server, a shard table <nsp>.<rel>
-- _kg<lo>_<hi> attached (no_claim) from the source shards that held its
-- key groups -- the first with its part of the range, the adjoining ones
-- into_existing -- and given the first source's owner.  sources: [{groups,
-- server, table, cluster, checkpoint, owner}]; targets: [{groups, server}].
-- Returns the created shards as 'server schema.table'; on an error, drops
-- what it created and raises it.  Internal.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst._attach_shards(sources jsonb, nsp name, rel name, targets jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    src record;
    first bool;
    target text;
    created text[] := '{}';
    c text;
BEGIN
    BEGIN
        FOR t IN SELECT (x->>'groups')::int4range AS groups, x->>'server' AS server
                   FROM jsonb_array_elements(targets) x ORDER BY 1 LOOP
            first := true;
            target := format('%I.%I', nsp, format('%s_kg%s_%s', rel, lower(t.groups), upper(t.groups)));
            FOR src IN SELECT (x->>'groups')::int4range AS groups, x->>'server' AS server,
                              x->>'table' AS tbl, x->>'cluster' AS cluster,
                              (x->>'checkpoint')::bigint AS ck, x->>'owner' AS owner
                         FROM jsonb_array_elements(sources) x
                        WHERE (x->>'groups')::int4range && t.groups ORDER BY 1 LOOP
                PERFORM forst._remote_exec(t.server, format(
                    'SELECT forst.attach(%L, %s, as_table => %L, key_groups => %L, cluster => %L, into_existing => %L)',
                    src.tbl, src.ck, target, t.groups * src.groups, src.cluster, NOT first));
                IF first THEN
                    created := created || format('%s %s', t.server, target);
                    IF src.owner IS NOT NULL THEN
                        PERFORM forst._remote_exec(t.server, format('ALTER TABLE %s OWNER TO %I', target, src.owner));
                    END IF;
                END IF;
                RAISE NOTICE 'forst: key groups % on server %: from % of server %, checkpoint %',
                    t.groups * src.groups, t.server, src.tbl, src.server, src.ck;
                first := false;
            END LOOP;
            IF first THEN
                RAISE EXCEPTION 'forst: no shard holds key groups %', t.groups
                    USING ERRCODE = 'invalid_parameter_value';
            END IF;
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        PERFORM forst._drop_shards(created, 'could not drop');
        RAISE;
    END;
    RETURN created;
END
$$;
REVOKE ALL ON FUNCTION forst._attach_shards(jsonb, name, name, jsonb) FROM PUBLIC;

-- Drops shards given as 'server schema.table' on their servers, each as
-- far as it can: a failure is a WARNING that starts with what.  Internal.
CREATE FUNCTION forst._drop_shards(shards text[], what text) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c text;
BEGIN
    FOREACH c IN ARRAY shards LOOP
        BEGIN
            PERFORM forst._remote_exec(split_part(c, ' ', 1)::name,
                                       format('DROP TABLE IF EXISTS %s', substr(c, strpos(c, ' ') + 1)));
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'forst: % % on server %: %', what,
                substr(c, strpos(c, ' ') + 1), split_part(c, ' ', 1), SQLERRM
                USING HINT = 'Drop it there once the server answers; nothing routes to it.';
        END;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION forst._drop_shards(text[], text) FROM PUBLIC;

-- The coordinator's foreign partitions of the shards in targets
-- ([{groups, server}], tables <nsp>.<rel>_kg<lo>_<hi> on the servers).
CREATE FUNCTION forst._create_partitions(parent regclass, targets jsonb) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    nsp name;
    rel name;
BEGIN
    SELECT ns.nspname, c.relname INTO nsp, rel
      FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE c.oid = parent;
    FOR t IN SELECT (x->>'groups')::int4range AS groups, x->>'server' AS server, b.modulus, b.remainder
               FROM jsonb_array_elements(targets) x, forst.key_group_bound((x->>'groups')::int4range) b LOOP
        EXECUTE format('CREATE FOREIGN TABLE %I.%I PARTITION OF %s FOR VALUES WITH (MODULUS %s, REMAINDER %s) '
                       'SERVER %I OPTIONS (schema_name %L, table_name %L, async_capable ''true'')',
                       nsp, format('%s_kg%s_%s', rel, lower(t.groups), upper(t.groups)), parent,
                       t.modulus, t.remainder, t.server, nsp,
                       format('%s_kg%s_%s', rel, lower(t.groups), upper(t.groups)));
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION forst._create_partitions(regclass, jsonb) FROM PUBLIC;

-- A checkpoint of the servers of a layout ([{part, server, remote_table,
-- groups}]), as sources for forst._attach_shards: each server's checkpoint
-- and cluster id, each shard's owner.  Internal.
CREATE FUNCTION forst._checkpoint_shards(layout jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    srv text;
    got jsonb := '{}';
BEGIN
    -- one statement per server: its checkpoint, its cluster id and the
    -- owners of its shards
    FOR srv IN SELECT DISTINCT x->>'server' FROM jsonb_array_elements(layout) x ORDER BY 1 LOOP
        got := got || jsonb_build_object(srv, forst._remote_exec(srv::name, format(
            'SELECT json_build_object(''checkpoint'', forst.checkpoint(), ''cluster'', forst.cluster_id(), '
            '''owners'', (SELECT json_object_agg(t, pg_get_userbyid(c.relowner)) '
            'FROM unnest(%L::text[]) t JOIN pg_class c ON c.oid = t::regclass))',
            (SELECT array_agg(x->>'remote_table') FROM jsonb_array_elements(layout) x
              WHERE x->>'server' = srv)))::jsonb);
        RAISE NOTICE 'forst: checkpoint % of server %', got->srv->>'checkpoint', srv;
    END LOOP;
    RETURN (SELECT jsonb_agg(jsonb_build_object(
                'groups', x->>'groups', 'server', x->>'server', 'table', x->>'remote_table',
                'cluster', got->(x->>'server')->>'cluster',
                'checkpoint', (got->(x->>'server')->>'checkpoint')::bigint,
                'owner', got->(x->>'server')->'owners'->>(x->>'remote_table'))
              ORDER BY (x->>'groups')::int4range)
              FROM jsonb_array_elements(layout) x);
END
$$;
REVOKE ALL ON FUNCTION forst._checkpoint_shards(jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- The fence of a shard whose key groups move: a statement trigger on it,
-- on its server, that refuses every write (SQLSTATE 55000), so that a
-- writer that goes to the server directly cannot write after the
-- checkpoint the new shards are attached from: its statement fails and it
-- may retry in the new layout, instead of writing rows that the rescale
-- would drop.  CREATE TRIGGER waits for the writes in progress, so every
-- write is either before the checkpoint or refused.  Attach carries no
-- triggers, so the new shards are not fenced.  _fence_shards fences the
-- shards of a layout ([{server, remote_table}]) and returns them as
-- 'server schema.table'; on an error it lifts what it set and raises it.
-- Internal.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst._shard_moving() RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION 'forst: the key groups of shard %.% are moving to other servers', TG_TABLE_SCHEMA, TG_TABLE_NAME
        USING ERRCODE = 'object_not_in_prerequisite_state',
              HINT = 'forst.rescale is running on the coordinator; write through the coordinator, or to the new owner of the key group once it is done.';
END
$$;
REVOKE ALL ON FUNCTION forst._shard_moving() FROM PUBLIC;

CREATE FUNCTION forst._fence_shards(layout jsonb) RETURNS text[]
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    x jsonb;
    fenced text[] := '{}';
BEGIN
    BEGIN
        FOR x IN SELECT * FROM jsonb_array_elements(layout) LOOP
            -- a writer that holds its transaction open fails the rescale
            -- after a minute rather than holding it up without end
            PERFORM forst._remote_exec((x->>'server')::name, format(
                'SET lock_timeout = ''60s''; '
                'CREATE TRIGGER forst_shard_moving BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s '
                'FOR EACH STATEMENT EXECUTE FUNCTION forst._shard_moving()', x->>'remote_table'));
            fenced := fenced || format('%s %s', x->>'server', x->>'remote_table');
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        PERFORM forst._unfence_shards(fenced);
        RAISE;
    END;
    RETURN fenced;
END
$$;
REVOKE ALL ON FUNCTION forst._fence_shards(jsonb) FROM PUBLIC;

CREATE FUNCTION forst._unfence_shards(shards text[]) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c text;
BEGIN
    FOREACH c IN ARRAY shards LOOP
        BEGIN
            PERFORM forst._remote_exec(split_part(c, ' ', 1)::name,
                format('DROP TRIGGER IF EXISTS forst_shard_moving ON %s', substr(c, strpos(c, ' ') + 1)));
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'forst: could not lift the fence of % on server %: %',
                substr(c, strpos(c, ' ') + 1), split_part(c, ' ', 1), SQLERRM
                USING HINT = 'DROP TRIGGER forst_shard_moving on it there, once the server answers.';
        END;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION forst._unfence_shards(text[]) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- forst.rescale: a distributed table (forst.distribute) given a new
-- layout, with no row copied.  On the coordinator, writes through the
-- table wait (LOCK ... EXCLUSIVE; reads go on); on their servers, the
-- shards whose key groups move refuse writes (_fence_shards); each server
-- whose shards change takes a checkpoint; each new shard is attached on its server
-- from the checkpoints of the old shards that held its key groups (a
-- split reads part of one, a merge adds the adjoining parts of several,
-- into_existing); the coordinator's foreign partitions are switched to
-- the new shards and that commits; then the old shards are dropped on
-- their servers.  A shard whose range and server stay is left alone.  A
-- failure before the switch drops the new shards it attached and leaves
-- the old layout serving, its fences lifted.  Writers that go to the
-- servers directly (the instances of a job) get errors while the key
-- groups they write move: pause them at a barrier for the call.  Attach
-- is superuser-only on the servers, so this is too.
-- ---------------------------------------------------------------------
CREATE PROCEDURE forst.rescale(parent regclass, servers name[], key_groups int4range[])
LANGUAGE plpgsql
AS $$
DECLARE
    nsp name;
    rel name;
    old_layout jsonb;
    new_layout jsonb;
    changing jsonb;
    sources jsonb;
    created text[] := '{}';
    fenced text[] := '{}';
    dropped text[];
    p regclass;
    t0 timestamptz := clock_timestamp();
BEGIN
    PERFORM forst.key_group_layout(key_groups, servers);
    SELECT jsonb_agg(to_jsonb(l)) INTO old_layout FROM forst._distributed_layout(parent) l;
    SELECT ns.nspname, c.relname INTO nsp, rel
      FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE c.oid = parent;

    -- writes through the coordinator wait from here to the switch
    EXECUTE format('LOCK TABLE %s IN EXCLUSIVE MODE', parent);

    -- the new shards that differ from the old (range or server)
    SELECT coalesce(jsonb_agg(jsonb_build_object('groups', u.kg, 'server', u.server)), '[]') INTO new_layout
      FROM unnest(key_groups, servers) u(kg, server)
     WHERE NOT EXISTS (SELECT FROM jsonb_array_elements(old_layout) o
                        WHERE (o->>'groups')::int4range = u.kg AND o->>'server' = u.server);
    IF jsonb_array_length(new_layout) = 0 THEN
        RAISE NOTICE 'forst.rescale: % already has this layout', parent;
        RETURN;
    END IF;
    -- the old shards those take key groups from
    SELECT jsonb_agg(o) INTO changing
      FROM jsonb_array_elements(old_layout) o
     WHERE EXISTS (SELECT FROM jsonb_array_elements(new_layout) x
                    WHERE (x->>'groups')::int4range && (o->>'groups')::int4range);

    -- direct writes to them are refused from here on
    fenced := forst._fence_shards(changing);
    BEGIN
        sources := forst._checkpoint_shards(changing);
        created := forst._attach_shards(sources, nsp, rel, new_layout);
        -- the switch: the coordinator's partitions name the new shards
        FOR p IN SELECT (o->>'part')::regclass FROM jsonb_array_elements(changing) o LOOP
            EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', parent, p);
            EXECUTE format('DROP FOREIGN TABLE %s', p);
        END LOOP;
        PERFORM forst._create_partitions(parent, new_layout);
    EXCEPTION WHEN OTHERS THEN
        -- the old layout stays: drop what was attached for the new one,
        -- and take the old shards' fences down
        PERFORM forst._drop_shards(created, 'could not drop');
        PERFORM forst._unfence_shards(fenced);
        RAISE;
    END;
    SELECT array_agg(format('%s %s', o->>'server', o->>'remote_table')) INTO dropped
      FROM jsonb_array_elements(changing) o;
    COMMIT;
    RAISE NOTICE 'forst.rescale: % switched to the new layout in % ms', parent,
        round(extract(epoch FROM clock_timestamp() - t0) * 1000);
    -- the old shards, no longer routed to (their files stay while the new
    -- shards borrow them)
    PERFORM forst._drop_shards(dropped, 'could not drop the old shard');
END
$$;
COMMENT ON PROCEDURE forst.rescale(regclass, name[], int4range[]) IS
    'moves the key groups of a distributed table to a new layout of servers without copying rows: checkpoint, attach, switch, drop';
REVOKE ALL ON PROCEDURE forst.rescale(regclass, name[], int4range[]) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- Checkpoints of distributed tables (src/am/scaleout/dcheckpoint.c): one
-- object <cluster>/distributed/<id> in the coordinator's namespace with
-- the table's definition and, per shard, its range, server, table, and
-- the server's checkpoint.  forst.checkpoint_distributed takes one: writes
-- through the coordinator wait while each server takes its checkpoint (a
-- job's instances that write the servers directly should be at a barrier:
-- the servers' checkpoints are not taken at one instant).
-- forst.restore_distributed makes a distributed table from one, on the
-- recorded servers or any others, in the recorded layout or another: each
-- new shard attached from the recorded ones, no row copied.  Superusers,
-- as attach; the readers are for pg_read_all_stats, as checkpoint_read.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst._distributed_put(json text, cluster text DEFAULT NULL) RETURNS bigint
AS 'MODULE_PATHNAME', 'forst_distributed_put'
LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION forst._distributed_put(text, text) FROM PUBLIC;

CREATE FUNCTION forst.distributed_checkpoint_read(id bigint, cluster text DEFAULT NULL)
RETURNS jsonb AS 'MODULE_PATHNAME', 'forst_distributed_read'
LANGUAGE C STABLE;
COMMENT ON FUNCTION forst.distributed_checkpoint_read(bigint, text) IS
    'the contents of a distributed checkpoint object (of this cluster, or of another one sharing the store)';
CREATE FUNCTION forst.distributed_checkpoint_ids(cluster text DEFAULT NULL)
RETURNS SETOF bigint AS 'MODULE_PATHNAME', 'forst_distributed_ids'
LANGUAGE C STABLE;
COMMENT ON FUNCTION forst.distributed_checkpoint_ids(text) IS
    'the ids of the distributed checkpoints of a cluster, ascending';
REVOKE ALL ON FUNCTION forst.distributed_checkpoint_read(bigint, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst.distributed_checkpoint_ids(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION forst.distributed_checkpoint_read(bigint, text),
    forst.distributed_checkpoint_ids(text) TO pg_read_all_stats;

CREATE FUNCTION forst.checkpoint_distributed(parent regclass) RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    layout jsonb;
    shards jsonb;
    keycol name;
    opclass name;
    cols text;
    id bigint;
BEGIN
    SELECT jsonb_agg(to_jsonb(l)) INTO layout FROM forst._distributed_layout(parent) l;
    SELECT a.attname, oc.opcname INTO keycol, opclass
      FROM pg_partitioned_table pt JOIN pg_opclass oc ON oc.oid = pt.partclass[0]
      JOIN pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]
     WHERE pt.partrelid = parent;
    SELECT string_agg(format('%I %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                             CASE WHEN a.attcollation <> 0 AND a.attcollation <> ty.typcollation
                                  THEN format(' COLLATE %s', a.attcollation::regcollation) ELSE '' END,
                             CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END), ', ' ORDER BY a.attnum)
      INTO cols
      FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
     WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped;
    -- writes through the coordinator wait until the transaction ends
    EXECUTE format('LOCK TABLE %s IN EXCLUSIVE MODE', parent);
    shards := forst._checkpoint_shards(layout);
    id := forst._distributed_put(jsonb_build_object(
        'table', parent::text, 'owner', (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = parent),
        'columns', cols, 'key_column', keycol, 'opclass', opclass,
        'created', clock_timestamp(), 'shards', shards)::text);
    RAISE NOTICE 'forst: distributed checkpoint % of %', id, parent;
    RETURN id;
END
$$;
COMMENT ON FUNCTION forst.checkpoint_distributed(regclass) IS
    'takes a checkpoint of every server of a distributed table and records them, with its layout, as one object';
REVOKE ALL ON FUNCTION forst.checkpoint_distributed(regclass) FROM PUBLIC;

CREATE FUNCTION forst.restore_distributed(checkpoint bigint, as_table text DEFAULT NULL,
    servers name[] DEFAULT NULL, key_groups int4range[] DEFAULT NULL, cluster text DEFAULT NULL)
RETURNS regclass LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    rec jsonb := forst.distributed_checkpoint_read(checkpoint, cluster);
    targets jsonb;
    qname text;
    parent regclass;
    nsp name;
    rel name;
    created text[];
BEGIN
    IF (servers IS NULL) <> (key_groups IS NULL) THEN
        RAISE EXCEPTION 'forst: give both servers and key_groups, or neither (the recorded layout)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF servers IS NULL THEN
        targets := (SELECT jsonb_agg(jsonb_build_object('groups', x->>'groups', 'server', x->>'server'))
                      FROM jsonb_array_elements(rec->'shards') x);
    ELSE
        PERFORM forst.key_group_layout(key_groups, servers);
        targets := (SELECT jsonb_agg(jsonb_build_object('groups', u.kg, 'server', u.server))
                      FROM unnest(key_groups, servers) u(kg, server));
    END IF;
    qname := (SELECT string_agg(quote_ident(p), '.') FROM unnest(parse_ident(coalesce(as_table, rec->>'table'))) p);
    EXECUTE format('CREATE TABLE %s (%s) PARTITION BY HASH (%I forst.%I)',
                   qname, rec->>'columns', rec->>'key_column', rec->>'opclass');
    parent := qname::regclass;
    IF rec->>'owner' IS NOT NULL AND to_regrole(quote_ident(rec->>'owner')) IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %s OWNER TO %I', parent, rec->>'owner');
    END IF;
    SELECT ns.nspname, c.relname INTO nsp, rel
      FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE c.oid = parent;
    created := forst._attach_shards(rec->'shards', nsp, rel, targets);
    BEGIN
        PERFORM forst._create_partitions(parent, targets);
    EXCEPTION WHEN OTHERS THEN
        PERFORM forst._drop_shards(created, 'could not drop');
        RAISE;
    END;
    RETURN parent;
END
$$;
COMMENT ON FUNCTION forst.restore_distributed(bigint, text, name[], int4range[], text) IS
    'makes a distributed table from a distributed checkpoint, on the recorded servers and layout or on others, without copying rows';
REVOKE ALL ON FUNCTION forst.restore_distributed(bigint, text, name[], int4range[], text) FROM PUBLIC;
