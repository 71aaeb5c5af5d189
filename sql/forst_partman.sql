--
-- pg_partman manages the daily partitions of a forst table: create_parent
-- makes them (and a default partition) as forst tables under the
-- partitioned table's forst key, run_maintenance adds the partitions ahead
-- of time and drops those past the retention.  Run by an ordinary role that
-- owns the table and has been granted pg_partman's schema.  Dates are
-- relative to today, so the output shows counts and facts, not names.
--
CREATE EXTENSION forst;
CREATE SCHEMA partman;
CREATE EXTENSION pg_partman SCHEMA partman;
CREATE ROLE regress_partman_owner;
GRANT ALL ON SCHEMA partman TO regress_partman_owner;
GRANT ALL ON ALL TABLES IN SCHEMA partman TO regress_partman_owner;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA partman TO regress_partman_owner;
GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA partman TO regress_partman_owner;
GRANT CREATE ON SCHEMA public TO regress_partman_owner;
SET ROLE regress_partman_owner;
SET TimeZone = 'UTC';

-- create_parent makes its default partition and template with CREATE
-- TABLE (LIKE ...), so it runs while the default is forst
SET default_table_access_method = forst;
CREATE TABLE events (id bigint, at timestamptz, payload text, PRIMARY KEY (id, at))
  PARTITION BY RANGE (at);
SELECT partman.create_parent('public.events', 'at', 'native', 'daily',
                             p_start_partition := (current_date - 5)::text,
                             p_premake := 2);
-- maintenance creates partitions with CREATE TABLE (LIKE ... INCLUDING
-- INDEXES), a copy of the forst key: forst tables whatever the default
RESET default_table_access_method;
SHOW default_table_access_method;

CREATE VIEW parts AS
SELECT c.relname, a.amname AS am,
       (SELECT ia.amname FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
          JOIN pg_am ia ON ia.oid = ic.relam
         WHERE i.indrelid = c.oid AND i.indisprimary) AS key_am,
       pg_get_expr(c.relpartbound, c.oid) AS bound
  FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid JOIN pg_am a ON a.oid = c.relam
 WHERE h.inhparent = 'events'::regclass;

-- today - 5 .. today + 2, and the default partition, all forst
SELECT count(*) AS partitions, count(*) FILTER (WHERE bound = 'DEFAULT') AS default_partitions,
       bool_and(am = 'forst') AS all_forst, bool_and(key_am = 'forst_key') AS all_forst_keys
  FROM parts;
SELECT (SELECT amname FROM pg_am a JOIN pg_class c ON c.relam = a.oid WHERE c.relname = 'events_pkey') AS key_am;

-- rows through the partitioned table, one day apart, today and back 5 days
INSERT INTO events SELECT g, date_trunc('day', now()) - (g % 6) * interval '1 day' + interval '1 hour', 'e' || g
  FROM generate_series(1, 600) g;
SELECT count(DISTINCT tableoid) AS partitions_with_rows, count(*) FROM events;
DO $$
BEGIN
  INSERT INTO events VALUES (6, date_trunc('day', now()) + interval '1 hour', 'dup');
EXCEPTION WHEN unique_violation THEN
  RAISE NOTICE 'a duplicate key is refused (%)', SQLSTATE;
END $$;
SELECT payload FROM events WHERE id = 6 AND at = date_trunc('day', now()) + interval '1 hour';

-- an index on the partitioned table: each partition gets a forst_key copy,
-- a secondary index in the partition, and so do those maintenance makes
CREATE INDEX events_payload ON events (payload);
SELECT count(*) AS partitions_with_it FROM pg_inherits h JOIN pg_index i ON i.indexrelid = h.inhrelid
 WHERE h.inhparent = 'events_payload'::regclass;

-- more partitions ahead, and a retention of 2 days: maintenance creates
-- the new ones as forst tables and drops the old ones with their rows
UPDATE partman.part_config SET premake = 4, retention = '2 days', retention_keep_table = false
 WHERE parent_table = 'public.events';
SELECT partman.run_maintenance('public.events');
SELECT count(*) FILTER (WHERE bound <> 'DEFAULT') AS partitions,
       bool_and(am = 'forst') AS all_forst, bool_and(key_am = 'forst_key') AS all_forst_keys
  FROM parts;
SELECT min(at)::date >= current_date - 2 AS old_rows_gone, count(*) FROM events;
-- a row for a partition that maintenance made
INSERT INTO events VALUES (1000, now() + interval '3 days', 'ahead');
SELECT tableoid::regclass::text LIKE 'events_p%', payload FROM events WHERE id = 1000;
-- every partition has its copy of the index, a forst_key one, and a lookup
-- by payload reads them
SELECT count(*) = (SELECT count(*) FROM pg_inherits WHERE inhparent = 'events'::regclass) AS all_have_it,
       bool_and(ic.relam = (SELECT oid FROM pg_am WHERE amname = 'forst_key')) AS all_forst_key
  FROM pg_inherits h JOIN pg_class ic ON ic.oid = h.inhrelid
 WHERE h.inhparent = 'events_payload'::regclass;
SET enable_seqscan = off;
SELECT id, payload FROM events WHERE payload IN ('ahead', 'e600') ORDER BY id;
RESET enable_seqscan;

DROP VIEW parts;
DROP TABLE events;
RESET ROLE;
DROP EXTENSION pg_partman;
DROP SCHEMA partman CASCADE;
DROP OWNED BY regress_partman_owner;
DROP ROLE regress_partman_owner;
DROP EXTENSION forst;
