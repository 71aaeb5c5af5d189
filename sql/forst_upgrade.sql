--
-- forst_upgrade: ALTER EXTENSION forst UPDATE from the previous version.
-- Tables and their settings made under 1.0 keep working after the update,
-- and an updated installation has exactly the objects, definitions and
-- privileges of a new one.
--
SET TimeZone = 'UTC';
CREATE EXTENSION forst VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'forst';

CREATE TABLE up_w (k bigint, w timestamptz, v text, PRIMARY KEY (k, w)) USING forst;
INSERT INTO up_w SELECT g % 5, timestamptz '2100-01-01' + (g % 4) * interval '1 hour', 'v' || g
  FROM generate_series(1, 20) g
    ON CONFLICT (k, w) DO UPDATE SET v = excluded.v;
SELECT forst.set_ttl('up_w', 'w', '1 day');
SELECT forst.advance_watermark('up_w', '2100-01-01 01:00:00');
SELECT count(*) AS rows_before FROM up_w;

ALTER EXTENSION forst UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'forst';

-- the table and its expiry settings are as they were
SELECT count(*) AS rows_after FROM up_w;
SELECT ttl_column, ttl, watermark FROM forst.table_expiry('up_w');
-- and the updated functions work on them
SELECT forst.advance_watermark('up_w', '2100-01-01 02:00:00');
SELECT count(*) AS rows_after_watermark FROM up_w;
INSERT INTO up_w VALUES (9, '2100-01-01 05:00:00', 'new') ON CONFLICT (k, w) DO UPDATE SET v = 'again';
INSERT INTO up_w VALUES (9, '2100-01-01 05:00:00', 'new') ON CONFLICT (k, w) DO UPDATE SET v = 'again';
SELECT v FROM up_w WHERE k = 9;

-- Every object of the extension with what defines it: functions (source,
-- language, security, settings, volatility, privileges), relations
-- (columns, view definitions, privileges, row security, triggers,
-- policies), the rest by name.
CREATE FUNCTION pg_temp.forst_objects() RETURNS TABLE (object text, definition text)
LANGUAGE sql AS $$
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
       CASE d.classid
         WHEN 'pg_proc'::regclass THEN
           (SELECT concat_ws(' | ', l.lanname, p.prosrc, p.probin, p.prosecdef, p.provolatile,
                             p.proisstrict, p.proconfig::text, p.proacl::text,
                             pg_get_function_result(p.oid), pg_get_function_arguments(p.oid))
              FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.oid = d.objid)
         WHEN 'pg_class'::regclass THEN
           (SELECT concat_ws(' | ', c.relkind, c.relacl::text, c.relrowsecurity,
                             pg_get_viewdef(c.oid),
                             (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                                                ORDER BY a.attnum)
                                FROM pg_attribute a
                               WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
                             (SELECT string_agg(t.tgname || ' ' || t.tgfoid::regproc || ' ' || t.tgtype, ', '
                                                ORDER BY t.tgname)
                                FROM pg_trigger t WHERE t.tgrelid = c.oid),
                             (SELECT string_agg(po.polname || ' ' || pg_get_expr(po.polqual, po.polrelid), ', '
                                                ORDER BY po.polname)
                                FROM pg_policy po WHERE po.polrelid = c.oid))
              FROM pg_class c WHERE c.oid = d.objid)
         WHEN 'pg_namespace'::regclass THEN
           (SELECT n.nspacl::text FROM pg_namespace n WHERE n.oid = d.objid)
       END AS definition
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'forst')
UNION ALL
SELECT 'schema forst', (SELECT n.nspacl::text FROM pg_namespace n WHERE n.nspname = 'forst')
$$;
CREATE TEMP TABLE updated_objects AS SELECT * FROM pg_temp.forst_objects();

DROP EXTENSION forst CASCADE;
CREATE EXTENSION forst;

CREATE TEMP TABLE new_objects AS SELECT * FROM pg_temp.forst_objects();

SELECT count(*) > 90 AS many_objects FROM new_objects;
-- no difference either way
(SELECT 'only updated' AS side, * FROM updated_objects EXCEPT ALL SELECT 'only updated', * FROM new_objects)
UNION ALL
(SELECT 'only new', * FROM new_objects EXCEPT ALL SELECT 'only new', * FROM updated_objects)
ORDER BY 1, 2;

-- an unknown version is refused
ALTER EXTENSION forst UPDATE TO '9.9';
DROP EXTENSION forst;
