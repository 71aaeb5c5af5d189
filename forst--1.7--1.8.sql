/* forst--1.7--1.8.sql: from 1.7 to 1.8 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.8'" to load this file. \quit

-- ---------------------------------------------------------------------
-- forst.rescale moves colocated tables together: a job's tables that
-- share a layout (the same ranges of key groups on the same servers, as
-- Citus's colocation groups) are fenced together, checkpointed once per
-- moving server, attached, and switched on the coordinator in one
-- transaction, so that no failure leaves some of them in the new layout
-- and some in the old.  colocated: the other tables, besides parent
-- (default none: parent alone, as in 1.7).
-- ---------------------------------------------------------------------
DROP PROCEDURE forst.rescale(regclass, name[], int4range[]);

-- The shards of distributed tables, each marked with its table ("parent":
-- its oid), after LOCK ... IN EXCLUSIVE MODE on each: writes through the
-- coordinator wait until the transaction ends.  what names the caller in
-- the error for a table named twice.  Internal.
CREATE FUNCTION forst._lock_layouts(tabs regclass[], what text) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t regclass;
    layout jsonb := '[]';
BEGIN
    IF (SELECT count(DISTINCT x) FROM unnest(tabs) x) < array_length(tabs, 1) THEN
        RAISE EXCEPTION 'forst: a table is named twice in %', what
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOREACH t IN ARRAY tabs LOOP
        EXECUTE format('LOCK TABLE %s IN EXCLUSIVE MODE', t);
    END LOOP;
    FOREACH t IN ARRAY tabs LOOP
        layout := layout || (SELECT jsonb_agg(to_jsonb(l) || jsonb_build_object('parent', t::oid) ORDER BY l.groups)
                               FROM forst._distributed_layout(t) l);
    END LOOP;
    RETURN layout;
END
$$;
REVOKE ALL ON FUNCTION forst._lock_layouts(regclass[], text) FROM PUBLIC;

CREATE PROCEDURE forst.rescale(parent regclass, servers name[], key_groups int4range[],
                               colocated regclass[] DEFAULT '{}')
LANGUAGE plpgsql
AS $$
DECLARE
    tabs regclass[] := ARRAY[parent] || coalesce(colocated, '{}');
    t regclass;
    nsp name;
    rel name;
    layouts jsonb;
    old_layout jsonb;
    new_layout jsonb;
    changing jsonb := '[]';
    sources jsonb;
    created text[] := '{}';
    fenced text[] := '{}';
    dropped text[];
    p regclass;
    t0 timestamptz := clock_timestamp();
BEGIN
    PERFORM forst.key_group_layout(key_groups, servers);
    -- writes through the coordinator wait from here to the switch; the
    -- tables' shards, each marked with its table, must be in one layout
    layouts := forst._lock_layouts(tabs, 'forst.rescale');
    SELECT jsonb_agg(x) INTO old_layout FROM jsonb_array_elements(layouts) x
     WHERE (x->>'parent')::oid = parent;
    FOREACH t IN ARRAY tabs LOOP
        IF (SELECT jsonb_agg(jsonb_build_array(x->'groups', x->'server') ORDER BY (x->>'groups')::int4range)
              FROM jsonb_array_elements(layouts) x WHERE (x->>'parent')::oid = t)
           IS DISTINCT FROM
           (SELECT jsonb_agg(jsonb_build_array(x->'groups', x->'server') ORDER BY (x->>'groups')::int4range)
              FROM jsonb_array_elements(old_layout) x) THEN
            RAISE EXCEPTION 'forst: % is not colocated with %', t, parent
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Tables rescaled together must have the same ranges of key groups on the same servers; rescale it on its own first.';
        END IF;
    END LOOP;

    -- the new shards that differ from the old (range or server)
    SELECT coalesce(jsonb_agg(jsonb_build_object('groups', u.kg, 'server', u.server)), '[]') INTO new_layout
      FROM unnest(key_groups, servers) u(kg, server)
     WHERE NOT EXISTS (SELECT FROM jsonb_array_elements(old_layout) o
                        WHERE (o->>'groups')::int4range = u.kg AND o->>'server' = u.server);
    IF jsonb_array_length(new_layout) = 0 THEN
        RAISE NOTICE 'forst.rescale: % already has this layout', array_to_string(tabs, ', ');
        RETURN;
    END IF;
    -- the old shards, of every table, that those take key groups from
    SELECT jsonb_agg(o) INTO changing
      FROM jsonb_array_elements(layouts) o
     WHERE EXISTS (SELECT FROM jsonb_array_elements(new_layout) x
                    WHERE (x->>'groups')::int4range && (o->>'groups')::int4range);

    -- direct writes to them are refused from here on
    fenced := forst._fence_shards(changing);
    BEGIN
        -- one checkpoint per moving server, for all the tables
        sources := forst._checkpoint_shards(changing);
        FOREACH t IN ARRAY tabs LOOP
            SELECT ns.nspname, c.relname INTO nsp, rel
              FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE c.oid = t;
            created := created || forst._attach_shards(
                (SELECT jsonb_agg(s) FROM jsonb_array_elements(sources) s
                  WHERE s->>'table' IN (SELECT o->>'remote_table' FROM jsonb_array_elements(changing) o
                                         WHERE (o->>'parent')::oid = t)),
                nsp, rel, new_layout);
        END LOOP;
        -- the switch: the coordinator's partitions name the new shards
        FOREACH t IN ARRAY tabs LOOP
            FOR p IN SELECT (o->>'part')::regclass FROM jsonb_array_elements(changing) o
                      WHERE (o->>'parent')::oid = t LOOP
                EXECUTE format('ALTER TABLE %s DETACH PARTITION %s', t, p);
                EXECUTE format('DROP FOREIGN TABLE %s', p);
            END LOOP;
            PERFORM forst._create_partitions(t, new_layout);
        END LOOP;
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
    RAISE NOTICE 'forst.rescale: % switched to the new layout in % ms', array_to_string(tabs, ', '),
        round(extract(epoch FROM clock_timestamp() - t0) * 1000);
    -- the old shards, no longer routed to (their files stay while the new
    -- shards borrow them)
    PERFORM forst._drop_shards(dropped, 'could not drop the old shard');
END
$$;
COMMENT ON PROCEDURE forst.rescale(regclass, name[], int4range[], regclass[]) IS
    'moves the key groups of a distributed table, and of the tables colocated with it, to a new layout of servers without copying rows: checkpoint, attach, switch, drop';
REVOKE ALL ON PROCEDURE forst.rescale(regclass, name[], int4range[], regclass[]) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- Distributed checkpoints of several tables: forst.checkpoint_distributed
-- records parent and the tables in with_tables (a job's tables) as one
-- object, with one checkpoint per server for all of them while writes
-- through the coordinator wait: one cut, one id.  The object lists them
-- under "tables", each with its definition and shards.
-- forst.restore_distributed restores every table of such an object, under
-- its recorded name, in schema into_schema, or (for an object of one
-- table) as as_table; it also reads the objects of 1.7, which hold one
-- table at the top level.  All the tables are restored, or none.
-- ---------------------------------------------------------------------
DROP FUNCTION forst.checkpoint_distributed(regclass);
DROP FUNCTION forst.restore_distributed(bigint, text, name[], int4range[], text);

-- The definition of a distributed table, for a distributed checkpoint
-- (without its shards).  Internal.
CREATE FUNCTION forst._distributed_definition(parent regclass) RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT jsonb_build_object(
    'table', parent::text,
    'owner', (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = parent),
    'columns', (SELECT string_agg(format('%I %s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
                                         CASE WHEN a.attcollation <> 0 AND a.attcollation <> ty.typcollation
                                              THEN format(' COLLATE %s', a.attcollation::regcollation) ELSE '' END,
                                         CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END), ', ' ORDER BY a.attnum)
                  FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
                 WHERE a.attrelid = parent AND a.attnum > 0 AND NOT a.attisdropped),
    'key_column', (SELECT a.attname FROM pg_partitioned_table pt
                     JOIN pg_attribute a ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]
                    WHERE pt.partrelid = parent),
    'opclass', (SELECT oc.opcname FROM pg_partitioned_table pt JOIN pg_opclass oc ON oc.oid = pt.partclass[0]
                 WHERE pt.partrelid = parent))
$$;
REVOKE ALL ON FUNCTION forst._distributed_definition(regclass) FROM PUBLIC;

CREATE FUNCTION forst.checkpoint_distributed(parent regclass, with_tables regclass[] DEFAULT '{}')
RETURNS bigint LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tabs regclass[] := ARRAY[parent] || coalesce(with_tables, '{}');
    layout jsonb;
    shards jsonb;
    id bigint;
BEGIN
    -- writes through the coordinator wait until the transaction ends
    layout := forst._lock_layouts(tabs, 'forst.checkpoint_distributed');
    -- one checkpoint per server, for every table
    shards := forst._checkpoint_shards(layout);
    id := forst._distributed_put(jsonb_build_object(
        'created', clock_timestamp(),
        'tables', (SELECT jsonb_agg(forst._distributed_definition(u.tb) || jsonb_build_object('shards',
                              (SELECT jsonb_agg(s) FROM jsonb_array_elements(shards) s
                                WHERE s->>'table' IN (SELECT o->>'remote_table' FROM jsonb_array_elements(layout) o
                                                       WHERE (o->>'parent')::oid = u.tb))) ORDER BY u.k)
                     FROM unnest(tabs) WITH ORDINALITY u(tb, k)))::text);
    RAISE NOTICE 'forst: distributed checkpoint % of %', id, array_to_string(tabs, ', ');
    RETURN id;
END
$$;
COMMENT ON FUNCTION forst.checkpoint_distributed(regclass, regclass[]) IS
    'takes a checkpoint of every server of distributed tables and records them, with their layouts, as one object';
REVOKE ALL ON FUNCTION forst.checkpoint_distributed(regclass, regclass[]) FROM PUBLIC;

CREATE FUNCTION forst.restore_distributed(checkpoint bigint, as_table text DEFAULT NULL,
    servers name[] DEFAULT NULL, key_groups int4range[] DEFAULT NULL, cluster text DEFAULT NULL,
    into_schema name DEFAULT NULL)
RETURNS regclass LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    rec jsonb := forst.distributed_checkpoint_read(checkpoint, cluster);
    tables jsonb;
    tab jsonb;
    targets jsonb;
    layout jsonb;
    qname text;
    parent regclass;
    first regclass;
    nsp name;
    rel name;
    created text[] := '{}';
BEGIN
    IF (servers IS NULL) <> (key_groups IS NULL) THEN
        RAISE EXCEPTION 'forst: give both servers and key_groups, or neither (the recorded layout)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- 1.7's objects hold one table at the top level
    tables := coalesce(rec->'tables', jsonb_build_array(rec));
    IF as_table IS NOT NULL AND (jsonb_array_length(tables) > 1 OR into_schema IS NOT NULL) THEN
        RAISE EXCEPTION 'forst: as_table names one table; distributed checkpoint % holds %', checkpoint,
            (SELECT string_agg(x->>'table', ', ') FROM jsonb_array_elements(tables) x)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Restore them under their names in another schema: into_schema => ''...''.';
    END IF;
    IF servers IS NOT NULL THEN
        PERFORM forst.key_group_layout(key_groups, servers);
        targets := (SELECT jsonb_agg(jsonb_build_object('groups', u.kg, 'server', u.server))
                      FROM unnest(key_groups, servers) u(kg, server));
    END IF;
    BEGIN
        FOR tab IN SELECT x FROM jsonb_array_elements(tables) x LOOP
            qname := (SELECT string_agg(quote_ident(p), '.')
                        FROM unnest(CASE WHEN as_table IS NOT NULL THEN parse_ident(as_table)
                                         WHEN into_schema IS NOT NULL
                                         THEN ARRAY[into_schema::text, (parse_ident(tab->>'table'))[array_length(parse_ident(tab->>'table'), 1)]]
                                         ELSE parse_ident(tab->>'table') END) p);
            EXECUTE format('CREATE TABLE %s (%s) PARTITION BY HASH (%I forst.%I)',
                           qname, tab->>'columns', tab->>'key_column', tab->>'opclass');
            parent := qname::regclass;
            first := coalesce(first, parent);
            IF tab->>'owner' IS NOT NULL AND to_regrole(quote_ident(tab->>'owner')) IS NOT NULL THEN
                EXECUTE format('ALTER TABLE %s OWNER TO %I', parent, tab->>'owner');
            END IF;
            SELECT ns.nspname, c.relname INTO nsp, rel
              FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE c.oid = parent;
            -- the layout asked for, or the one recorded with the table
            layout := coalesce(targets,
                (SELECT jsonb_agg(jsonb_build_object('groups', x->>'groups', 'server', x->>'server'))
                   FROM jsonb_array_elements(tab->'shards') x));
            created := created || forst._attach_shards(tab->'shards', nsp, rel, layout);
            PERFORM forst._create_partitions(parent, layout);
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        -- none of them: the shards attached on the servers are dropped
        -- (the coordinator's tables go with the transaction)
        PERFORM forst._drop_shards(created, 'could not drop');
        RAISE;
    END;
    RETURN first;
END
$$;
COMMENT ON FUNCTION forst.restore_distributed(bigint, text, name[], int4range[], text, name) IS
    'makes the distributed tables of a distributed checkpoint again, on the recorded servers and layout or on others, without copying rows';
REVOKE ALL ON FUNCTION forst.restore_distributed(bigint, text, name[], int4range[], text, name) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- forst._remote_exec keeps its connections until the end of the
-- transaction (src/am/scaleout/remote.c), so that a rescale's statements
-- on one server share one: the fence's lock_timeout is now SET LOCAL in a
-- transaction block of its own, and does not outlive its statement.
-- ---------------------------------------------------------------------
CREATE OR REPLACE FUNCTION forst._fence_shards(layout jsonb) RETURNS text[]
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
                'BEGIN; SET LOCAL lock_timeout = ''60s''; '
                'CREATE TRIGGER forst_shard_moving BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s '
                'FOR EACH STATEMENT EXECUTE FUNCTION forst._shard_moving(); COMMIT', x->>'remote_table'));
            fenced := fenced || format('%s %s', x->>'server', x->>'remote_table');
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        PERFORM forst._unfence_shards(fenced);
        RAISE;
    END;
    RETURN fenced;
END
$$;
