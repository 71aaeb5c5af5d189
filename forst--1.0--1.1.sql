/* forst--1.0--1.1.sql: from 1.0 to 1.1 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.1'" to load this file. \quit

-- CREATE EXTENSION forst installs 1.0 and then runs this script, so a new
-- installation and an updated one have the same objects (tested by
-- sql/forst_upgrade.sql).

-- ---------------------------------------------------------------------
-- Privileges (docs/security.md)
-- ---------------------------------------------------------------------

-- Schema forst is usable by every role, as pg_catalog is: what each role may
-- do is decided function by function below, and checked again in C.
GRANT USAGE ON SCHEMA forst TO PUBLIC;

-- The sql_drop event trigger runs as the role that drops something, which
-- may be any role: it forgets dropped tables' rows of forst.expiry with the
-- extension owner's rights.
ALTER FUNCTION forst._expiry_forget_dropped() SECURITY DEFINER;
REVOKE ALL ON FUNCTION forst._expiry_forget_dropped() FROM PUBLIC;

-- Internal functions: never executable by PUBLIC.
REVOKE ALL ON FUNCTION forst._check_preloaded() FROM PUBLIC;
REVOKE ALL ON FUNCTION forst._check_key_columns(regclass, name[]) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst.tableam_handler(internal) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst.key_handler(internal) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst._expiry_column(regclass, name) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst._ttl_cutoff(interval) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst._expiry_note(regclass, int2, interval, timestamptz, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst._attach_files(regclass, text, bigint, text, bigint, int, int,
    bigint, bigint, text, bool) FROM PUBLIC;

-- forst.set_ttl and forst.advance_watermark: the table's owner.  The C entry
-- point checks ownership as the caller, then runs the body (now an internal
-- SECURITY DEFINER function) with the extension owner's rights.
CREATE FUNCTION forst._set_ttl(tbl regclass, "column" name, ttl interval)
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER
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
    UPDATE forst.expiry SET ttl = _set_ttl.ttl, watermark = wm, version = cur.version + 1
     WHERE relid = tbl;
    PERFORM forst._expiry_note(tbl, att, ttl, wm, cur.version + 1);
END
$$;
REVOKE ALL ON FUNCTION forst._set_ttl(regclass, name, interval) FROM PUBLIC;

CREATE OR REPLACE FUNCTION forst.set_ttl(tbl regclass, "column" name, ttl interval)
RETURNS void
AS 'MODULE_PATHNAME', 'forst_set_ttl_fn'
LANGUAGE C VOLATILE;

CREATE FUNCTION forst._advance_watermark(tbl regclass, value timestamptz)
RETURNS timestamptz LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER
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
REVOKE ALL ON FUNCTION forst._advance_watermark(regclass, timestamptz) FROM PUBLIC;

CREATE OR REPLACE FUNCTION forst.advance_watermark(tbl regclass, value timestamptz)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'forst_advance_watermark_fn'
LANGUAGE C VOLATILE STRICT;

-- Table-level reads: anyone who may SELECT from the table (checked in C);
-- the views list only such tables, or every table for pg_read_all_stats.
CREATE OR REPLACE VIEW forst.tables AS
SELECT c.oid::regclass AS "table", i.*, c.reltuples::bigint AS rows_estimate,
       128 AS key_groups, x.*
  FROM pg_class c
  JOIN pg_am a ON a.oid = c.relam AND a.amname = 'forst'
  CROSS JOIN LATERAL forst.table_info(c.oid) i
  CROSS JOIN LATERAL forst.table_expiry(c.oid) x
 WHERE c.relkind = 'r'
   AND (has_table_privilege(c.oid, 'SELECT') OR pg_has_role('pg_read_all_stats', 'USAGE'));

CREATE OR REPLACE VIEW forst.files AS
SELECT c.oid::regclass AS "table", f.*
  FROM pg_class c
  JOIN pg_am a ON a.oid = c.relam AND a.amname = 'forst'
  CROSS JOIN LATERAL forst.table_files(c.oid) f
 WHERE c.relkind = 'r'
   AND (has_table_privilege(c.oid, 'SELECT') OR pg_has_role('pg_read_all_stats', 'USAGE'));

GRANT SELECT ON forst.tables, forst.files TO PUBLIC;

-- forst.prewarm: the table's owner (checked in C).
GRANT EXECUTE ON FUNCTION forst.prewarm(regclass, bool) TO PUBLIC;

-- Long operations: every role sees its own, pg_read_all_stats all of them
-- (filtered in C, as pg_stat_progress_*).  The function behind the view is
-- for every role, so it is not an internal one.
ALTER FUNCTION forst._progress() RENAME TO progress_info;
COMMENT ON FUNCTION forst.progress_info() IS 'long forst operations running now that the current role may see (the rows of forst.progress)';
GRANT SELECT ON forst.progress TO PUBLIC;

-- Server-wide reads: checkpoint and savepoint objects (table definitions
-- and object prefixes of every database), the status of checkpoints, the
-- cluster id: pg_read_all_stats.  The object-store location:
-- pg_read_all_settings (forst.remote_dir is a superuser-only setting, as
-- data_directory).
REVOKE ALL ON FUNCTION forst.checkpoint_read(bigint, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst.checkpoint_ids(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst.savepoint_read(text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION forst._checkpoint_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION forst.cluster_id() FROM PUBLIC;
REVOKE ALL ON FUNCTION forst.remote_dir() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION forst.checkpoint_read(bigint, text), forst.checkpoint_ids(text),
    forst.savepoint_read(text, text), forst._checkpoint_status(), forst.cluster_id()
    TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION forst.remote_dir() TO pg_read_all_settings;
GRANT SELECT ON forst.checkpoints TO pg_read_all_stats;

-- Server-wide acts: a forst checkpoint of this database as PostgreSQL's
-- CHECKPOINT (pg_checkpoint); attach, restore, gc, savepoints and resetting
-- the counters stay with superusers (revoked from PUBLIC in 1.0, checked
-- in C).
GRANT EXECUTE ON FUNCTION forst.checkpoint() TO pg_checkpoint;

-- ---------------------------------------------------------------------
-- forst.restore(…, into_existing): every table of a checkpoint into the
-- tables of the same names that exist already (after pg_upgrade, whose
-- new cluster has the tables but not their state: docs/operations.md)
-- ---------------------------------------------------------------------
DROP FUNCTION forst.restore(bigint, text, text, text);
CREATE FUNCTION forst.restore(checkpoint bigint DEFAULT NULL, cluster text DEFAULT NULL,
    mode text DEFAULT 'no_claim', savepoint text DEFAULT NULL,
    into_existing bool DEFAULT false)
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
        RETURN NEXT forst.attach(t->>'name', checkpoint, NULL, NULL, mode, cluster,
                                 into_existing, savepoint);
    END LOOP;
END
$$;
COMMENT ON FUNCTION forst.restore(bigint, text, text, text, bool) IS
    'attaches every table of a checkpoint or savepoint under its own name (into the existing tables of those names with into_existing)';
REVOKE ALL ON FUNCTION forst.restore(bigint, text, text, text, bool) FROM PUBLIC;

-- ---------------------------------------------------------------------
-- Dump and restore
-- ---------------------------------------------------------------------

-- forst.expiry names a table's TTL column by its attribute number.  A
-- dump re-creates a table without its dropped columns, so in the restored
-- table the number may be another column's.  The column's name therefore
-- travels with the row (pg_dump dumps forst.expiry, an extension
-- configuration table): a row inserted with a name, as a restore does,
-- takes the number of the column of that name (0, which expires nothing,
-- if there is none), and every insert or update records the name of the
-- column the number stands for.  The server reads the first five columns.
ALTER TABLE forst.expiry ADD COLUMN attname name;
COMMENT ON COLUMN forst.expiry.attname IS 'name of the TTL column, for dumps (kept by the server)';

CREATE FUNCTION forst._expiry_attname()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n int2;
BEGIN
    IF TG_OP = 'INSERT' AND NEW.attname IS NOT NULL THEN
        SELECT a.attnum INTO n FROM pg_attribute a
         WHERE a.attrelid = NEW.relid AND a.attname = NEW.attname
           AND a.attnum > 0 AND NOT a.attisdropped;
        NEW.attnum := coalesce(n, 0);
    END IF;
    NEW.attname := (SELECT a.attname FROM pg_attribute a
                     WHERE a.attrelid = NEW.relid AND a.attnum = NEW.attnum);
    RETURN NEW;
END
$$;
CREATE TRIGGER expiry_attname BEFORE INSERT OR UPDATE ON forst.expiry
    FOR EACH ROW EXECUTE FUNCTION forst._expiry_attname();
UPDATE forst.expiry SET attname = NULL;    -- rows from 1.0: the trigger names them

-- A renamed (or dropped) TTL column: the name follows at once, so that a
-- dump taken later has it.  Security definer: forst.expiry hides other
-- owners' rows and its schema may not be usable by whoever alters a table.
CREATE FUNCTION forst._expiry_attname_renamed()
RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    UPDATE forst.expiry e SET attname = NULL
      FROM pg_attribute a
     WHERE a.attrelid = e.relid AND a.attnum = e.attnum
       AND e.attname IS DISTINCT FROM a.attname;
END
$$;
CREATE EVENT TRIGGER forst_expiry_attname ON ddl_command_end
    WHEN TAG IN ('ALTER TABLE')
    EXECUTE FUNCTION forst._expiry_attname_renamed();
-- trigger functions: internal, never executable by PUBLIC
REVOKE ALL ON FUNCTION forst._expiry_attname() FROM PUBLIC;
REVOKE ALL ON FUNCTION forst._expiry_attname_renamed() FROM PUBLIC;

-- forst.expiry without row-level security: pg_dump, run by a role that is
-- not a superuser, refuses tables whose rows row security would filter, so
-- every such dump of a database with forst failed.  The settings are no
-- secret (as a table's reloptions in pg_class, every role may read them);
-- writing a row stays with the owner of its table (or a member of the
-- owning role), checked by a trigger, which also runs for the COPY of a
-- restore.  forst.set_ttl and forst.advance_watermark write as the
-- extension's owner after their own check; the sql_drop trigger deletes.
DROP POLICY owner_only ON forst.expiry;
ALTER TABLE forst.expiry DISABLE ROW LEVEL SECURITY;

CREATE FUNCTION forst._expiry_check_owner()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel oid;
BEGIN
    FOREACH rel IN ARRAY ARRAY[CASE WHEN TG_OP <> 'INSERT' THEN OLD.relid END,
                               CASE WHEN TG_OP <> 'DELETE' THEN NEW.relid END] LOOP
        CONTINUE WHEN rel IS NULL;
        IF NOT coalesce((SELECT pg_has_role(c.relowner, 'USAGE') FROM pg_class c WHERE c.oid = rel),
                        pg_has_role('pg_database_owner', 'USAGE')) THEN
            RAISE EXCEPTION 'must be owner of table %', rel::regclass
                USING ERRCODE = 'insufficient_privilege',
                      DETAIL = 'Only the owner of a table may change its row of forst.expiry.',
                      HINT = 'Use forst.set_ttl and forst.advance_watermark.';
        END IF;
    END LOOP;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;
REVOKE ALL ON FUNCTION forst._expiry_check_owner() FROM PUBLIC;
CREATE TRIGGER expiry_check_owner BEFORE INSERT OR UPDATE OR DELETE ON forst.expiry
    FOR EACH ROW EXECUTE FUNCTION forst._expiry_check_owner();
