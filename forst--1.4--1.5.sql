/* forst--1.4--1.5.sql: from 1.4 to 1.5 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.5'" to load this file. \quit

-- ---------------------------------------------------------------------
-- forst._attach_files takes the entry ids of the checkpoint's secondary
-- indexes (recorded in the checkpoint since 1.5's library): the target's
-- secondary indexes must be those, and the attached files show their
-- entries.  Superusers only, as before.
-- ---------------------------------------------------------------------
DROP FUNCTION forst._attach_files(regclass, text, bigint, text, bigint, int, int,
    bigint, bigint, text, bool);
CREATE FUNCTION forst._attach_files(target regclass, cluster text, checkpoint bigint,
    prefix text, version bigint, kg_lo int, kg_hi int, lo bigint, xmax bigint,
    ranges text, claim bool, indexes bigint[])
RETURNS bigint AS 'MODULE_PATHNAME', 'forst_attach_files'
LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION forst._attach_files(regclass, text, bigint, text, bigint, int, int,
    bigint, bigint, text, bool, bigint[]) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- forst.attach: a table created by attach gets the secondary indexes its
-- source had at the checkpoint (under the source's index names when it
-- keeps the source's name, else named by PostgreSQL), reading their
-- entries in the attached files: nothing is built.  A table merged into
-- (into_existing) must have the checkpoint's indexes already (a sibling
-- attached from the same table has).  Its body is 1.3's otherwise; the
-- privileges of the function stay as they are (CREATE OR REPLACE).
-- ---------------------------------------------------------------------
CREATE OR REPLACE FUNCTION forst.attach(source text, checkpoint bigint DEFAULT NULL,
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
    idx jsonb;
    entries bigint[];
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
        EXECUTE format('CREATE %sTABLE %s (%s%s) USING forst',
                       CASE WHEN (t->>'unlogged')::bool THEN 'UNLOGGED ' ELSE '' END,
                       target_name, t->>'columns',
                       CASE WHEN coalesce(t->>'constraints', '') <> ''
                            THEN ', ' || (t->>'constraints') ELSE '' END);
        target := target_name::regclass;
        FOREACH col IN ARRAY coalesce(string_to_array(nullif(t->>'dropped', ''), ','), '{}') LOOP
            EXECUTE format('ALTER TABLE %s DROP COLUMN %s', target, col);
        END LOOP;
        -- the source's secondary indexes, empty until the files are
        -- attached: their entries are in the files, under the source's
        -- entry ids (under its names when the table keeps its own)
        FOR idx IN SELECT x FROM jsonb_array_elements(coalesce(t->'indexes', '[]')) x LOOP
            IF idx->>'keys' IS NULL THEN
                RAISE EXCEPTION 'forst: the definition of index % of % in the checkpoint is not one forst can create again',
                        idx->>'name', t->>'name'
                    USING ERRCODE = 'feature_not_supported',
                          HINT = 'Attach with into_existing => true into a table with no indexes but its key, then create them.';
            END IF;
            EXECUTE format('CREATE %sINDEX %s ON %s USING forst_key %s WITH (entry_id = %s)%s',
                           CASE WHEN (idx->>'unique')::bool THEN 'UNIQUE ' ELSE '' END,
                           CASE WHEN as_table IS NULL THEN quote_ident(idx->>'name') ELSE '' END,
                           target, idx->>'keys', (idx->>'entry')::bigint,
                           coalesce(' WHERE ' || (idx->>'where'), ''));
        END LOOP;
    END IF;
    SELECT coalesce(array_agg((x->>'entry')::bigint), '{}') INTO entries
      FROM jsonb_array_elements(coalesce(t->'indexes', '[]')) x;
    SELECT coalesce(string_agg(format('%s-%s', r->>0, r->>1), ','), '-') INTO ranges
      FROM jsonb_array_elements(ck->'snapshot'->'visible') r;
    PERFORM forst._attach_files(target, coalesce(cluster, forst.cluster_id()),
                                CASE WHEN savepoint IS NULL THEN checkpoint ELSE 0 END,
                                t->>'prefix', (t->>'manifest')::bigint, lo, hi,
                                (ck->'snapshot'->>'lo')::bigint,
                                (ck->'snapshot'->>'xmax')::bigint, ranges, mode = 'claim',
                                entries);
    -- the TTL column, TTL and watermark the checkpoint recorded
    IF NOT into_existing AND jsonb_typeof(t->'expiry') = 'object' THEN
        PERFORM forst.set_ttl(target, t->'expiry'->>'column',
                              CASE WHEN t->'expiry'->>'ttl_us' IS NOT NULL
                                   THEN make_interval(days => (t->'expiry'->>'ttl_days')::int)
                                        + ((t->'expiry'->>'ttl_us') || ' microseconds')::interval
                              END);
        IF t->>'watermark_us' IS NOT NULL THEN
            PERFORM forst.advance_watermark(target, timestamptz '2000-01-01 00:00:00+00'
                                            + ((t->>'watermark_us') || ' microseconds')::interval);
        END IF;
    END IF;
    RETURN target;
END
$$;
