/* forst--1.0--1.1.sql: from 1.0 to 1.1 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.1'" to load this file. \quit

-- CREATE EXTENSION forst installs 1.0 and then runs this script, so a new
-- installation and an updated one have the same objects (tested by
-- sql/forst_upgrade.sql).

-- ---------------------------------------------------------------------
-- Privileges (docs/security.md)
-- ---------------------------------------------------------------------

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
