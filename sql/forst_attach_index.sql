--
-- forst.attach carries a table's secondary indexes: the table it creates
-- gets the checkpoint's indexes, with the entry ids of the source's
-- (storage parameter entry_id), and reads their entries in the attached
-- files -- nothing is built.  Clones, key-group splits, merges and
-- savepoints answer lookups through them as the source did; writes keep
-- them up to date; unique ones stay unique.  The entry_id of an index
-- cannot be changed or shared.
--
CREATE EXTENSION forst;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE TABLE src (k int PRIMARY KEY, v int, note text, w int) USING forst;
INSERT INTO src SELECT g, g % 100, 'n' || g, g FROM generate_series(1, 5000) g;
CREATE INDEX src_v ON src (v);
CREATE UNIQUE INDEX src_note ON src (lower(note)) WHERE w > 10;
CREATE INDEX src_w ON src (w) INCLUDE (v) WHERE v < 50;
-- an index on a function of schema public
CREATE FUNCTION public.twice(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 2';
CREATE TABLE fx (k int PRIMARY KEY, w int) USING forst;
INSERT INTO fx SELECT g, g FROM generate_series(1, 100) g;
CREATE INDEX fx_twice ON fx (twice(w));
SELECT forst.checkpoint() AS ck \gset
-- a heap twin of what the checkpoint holds
CREATE TABLE snap AS TABLE src;

-- what the checkpoint records of them
SELECT i->>'name' AS name, i->>'unique' AS uniq, i->>'keys' AS keys, i->>'where' AS predicate,
       (i->>'entry')::oid = (i->>'name')::regclass AS entry_is_oid
  FROM jsonb_array_elements(forst.checkpoint_read(:ck)->'tables') t,
       jsonb_array_elements(t->'indexes') i
 WHERE t->>'name' = 'public.src' ORDER BY 1;

-- the source changes after the checkpoint: a clone shows the checkpoint
UPDATE src SET v = 0 WHERE k <= 100;
DELETE FROM src WHERE k > 4900;

-- lookups through each index against a heap twin: rows only in one of
-- them (0 and 0), and how many match
CREATE FUNCTION by_index(tbl regclass, twin regclass)
RETURNS TABLE (query text, only_forst bigint, only_heap bigint, total bigint)
LANGUAGE plpgsql AS $$
DECLARE
  q text;
BEGIN
  FOREACH q IN ARRAY ARRAY[
    'v = 7', 'v BETWEEN 10 AND 12', 'lower(note) IN (''n15'', ''n4999'', ''n5'', ''new'') AND w > 10',
    'w BETWEEN 4890 AND 4910 AND v < 50'] LOOP
    query := q;
    EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s WHERE %s EXCEPT ALL SELECT * FROM %s WHERE %s) d',
                   tbl, q, twin, q) INTO only_forst;
    EXECUTE format('SELECT count(*) FROM (SELECT * FROM %s WHERE %s EXCEPT ALL SELECT * FROM %s WHERE %s) d',
                   twin, q, tbl, q) INTO only_heap;
    EXECUTE format('SELECT count(*) FROM %s WHERE %s', tbl, q) INTO total;
    RETURN NEXT;
  END LOOP;
END $$;

-- a clone: the indexes are there, named by PostgreSQL, with the source's
-- entry ids, and answer as the source did at the checkpoint
SELECT forst.attach('src', :ck, as_table => 'cl') AS attached;
SELECT c.relname, i.indisunique, i.indisvalid,
       (SELECT option_value FROM pg_options_to_table(c.reloptions) WHERE option_name = 'entry_id')::bigint
         IN (SELECT (x->>'entry')::bigint
               FROM jsonb_array_elements(forst.checkpoint_read(:ck)->'tables') t,
                    jsonb_array_elements(t->'indexes') x
              WHERE t->>'name' = 'public.src') AS source_entry_id
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE i.indrelid = 'cl'::regclass AND NOT i.indisprimary ORDER BY 1;
SELECT * FROM by_index('cl', 'snap');
EXPLAIN (COSTS OFF) SELECT * FROM cl WHERE v = 7;
EXPLAIN (COSTS OFF) SELECT * FROM cl WHERE lower(note) = 'n15' AND w > 10;

-- the clone's writes keep its indexes right; a unique one stays unique
CREATE TABLE snap_cl AS TABLE snap;
INSERT INTO cl VALUES (6000, 7, 'N15', 6000);
INSERT INTO cl VALUES (6000, 7, 'new', 6000);
UPDATE cl SET v = 8 WHERE k = 7;
DELETE FROM cl WHERE k = 107;
INSERT INTO snap_cl VALUES (6000, 7, 'new', 6000);
UPDATE snap_cl SET v = 8 WHERE k = 7;
DELETE FROM snap_cl WHERE k = 107;
SELECT * FROM by_index('cl', 'snap_cl');

-- split by key groups into two tables, each with the indexes: each sees
-- the entries of its own rows only; merged again, all of them
SELECT forst.attach('src', :ck, as_table => 'half', key_groups => '[0,64)') AS attached;
SELECT forst.attach('src', :ck, as_table => 'other_half', key_groups => '[64,128)') AS attached;
SELECT (SELECT count(*) FROM half WHERE v = 7) + (SELECT count(*) FROM other_half WHERE v = 7) AS halves,
       (SELECT count(*) FROM half WHERE v = 7) > 0 AND (SELECT count(*) FROM other_half WHERE v = 7) > 0
         AS both_have_some,
       (SELECT count(*) FROM snap WHERE v = 7) AS whole;
SELECT forst.attach('src', :ck, as_table => 'half', key_groups => '[64,128)', into_existing => true) AS merged;
SELECT * FROM by_index('half', 'snap');

-- into an existing table: its indexes must be among the checkpoint's
CREATE TABLE plain (k int PRIMARY KEY, v int, note text, w int) USING forst;
CREATE TABLE indexed (k int PRIMARY KEY, v int, note text, w int) USING forst;
CREATE INDEX indexed_v ON indexed (v);
\set SHOW_CONTEXT never
SELECT forst.attach('src', :ck, as_table => 'indexed', into_existing => true);
\set SHOW_CONTEXT errors
-- a table without them takes the rows, and builds an index from them
SELECT forst.attach('src', :ck, as_table => 'plain', into_existing => true) AS attached;
CREATE INDEX plain_v ON plain (v);
SELECT count(*) FROM plain WHERE v = 7;

-- the checkpoint names what is outside pg_catalog with its schema: the
-- index is created again under another search_path
SELECT i->>'keys' AS keys FROM jsonb_array_elements(forst.checkpoint_read(:ck)->'tables') t,
       jsonb_array_elements(t->'indexes') i WHERE t->>'name' = 'public.fx';
SET search_path = pg_catalog;
SELECT forst.attach('public.fx', :ck, as_table => 'public.fx2') AS attached;
RESET search_path;
EXPLAIN (COSTS OFF) SELECT * FROM fx2 WHERE twice(w) = 20;
SELECT * FROM fx2 WHERE twice(w) = 20;

-- from a savepoint
SELECT forst.savepoint('attach_index_sp') IS NOT NULL AS saved;
SELECT forst.attach('src', savepoint => 'attach_index_sp', as_table => 'from_sp') AS attached;
SELECT count(*) = (SELECT count(*) FROM src WHERE v = 0) AS same FROM from_sp WHERE v = 0;

-- entry_id: set by attach; not changed, not shared, not on a key
ALTER INDEX cl_v_idx SET (entry_id = 5);
ALTER INDEX cl_v_idx RESET (entry_id);
CREATE INDEX ON cl (w) WITH (entry_id = 7.5);
DO $$
BEGIN
  EXECUTE format('CREATE INDEX cl_w2 ON cl (w) WITH (entry_id = %s)',
                 (SELECT option_value FROM pg_options_to_table(
                    (SELECT reloptions FROM pg_class WHERE relname = 'cl_v_idx'))
                   WHERE option_name = 'entry_id'));
EXCEPTION WHEN duplicate_object THEN
  RAISE NOTICE 'an entry id another index of the table has is refused (%)', SQLSTATE;
END $$;
CREATE TABLE keyed (k int, PRIMARY KEY (k) WITH (entry_id = 9)) USING forst;
-- btree's storage parameters are taken (an index declared for btree is a
-- forst index here) and change nothing; others are refused
CREATE INDEX cl_ff ON cl (w) WITH (fillfactor = 70, deduplicate_items = off);
CREATE INDEX ON cl (w) WITH (pages_per_range = 4);
-- a dropped index takes its entries; one created again is built from rows
DROP INDEX cl_v_idx;
CREATE INDEX cl_v ON cl (v);
SELECT * FROM by_index('cl', 'snap_cl');

-- SET ACCESS METHOD drops the storage parameters with the access method
-- that took them: a heap table's btrees have no entry_id, and back on
-- forst the rebuilt indexes carry their own OIDs
SELECT forst.attach('src', :ck, as_table => 'mig') AS attached;
ALTER TABLE mig SET ACCESS METHOD heap;
SELECT c.relname, a.amname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'mig'::regclass) ORDER BY 1;
SELECT * FROM by_index('mig', 'snap');
ALTER TABLE mig SET ACCESS METHOD forst;
SELECT c.relname, a.amname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'mig'::regclass) ORDER BY 1;
SELECT * FROM by_index('mig', 'snap');

-- a heap copy LIKE a table with such indexes gets btrees, without entry_id
CREATE TABLE heap_copy (LIKE cl INCLUDING INDEXES) USING heap;
SELECT c.relname, a.amname, c.reloptions FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'heap_copy'::regclass) ORDER BY 1;

DROP TABLE src, snap, snap_cl, cl, half, other_half, plain, indexed, from_sp, mig, heap_copy, fx, fx2;
DROP FUNCTION twice(int);
SELECT forst.drop_savepoint('attach_index_sp', force => true) >= 0 AS dropped;
DROP FUNCTION by_index(regclass, regclass);
DROP EXTENSION forst;
