--
-- "col = ANY(array)" and IN-lists on a forst table's key: the key index
-- reads one range per element (or combination of elements) in key order,
-- and every answer equals a heap twin's, row for row and in order.
--
CREATE EXTENSION forst;
CREATE TABLE ka (a int, b bigint, c text, v int, PRIMARY KEY (a, b)) USING forst;
CREATE TABLE ka_h (a int, b bigint, c text, v int, PRIMARY KEY (a, b));
INSERT INTO ka SELECT i % 50, i, 'r' || i, i * 7 FROM generate_series(1, 5000) i;
INSERT INTO ka_h SELECT * FROM ka;
CREATE TABLE kb (k bigint PRIMARY KEY, v text) USING forst;
CREATE TABLE kb_h (k bigint PRIMARY KEY, v text);
INSERT INTO kb SELECT i, md5(i::text) FROM generate_series(1, 3000) i;
INSERT INTO kb_h SELECT * FROM kb;
SELECT forst.checkpoint() > 0 AS checkpointed;
-- some rows only in the memtable, some updated or deleted there
INSERT INTO kb SELECT i, 'late ' || i FROM generate_series(3001, 3100) i;
INSERT INTO kb_h SELECT i, 'late ' || i FROM generate_series(3001, 3100) i;
UPDATE kb SET v = 'upd' WHERE k % 97 = 0;
UPDATE kb_h SET v = 'upd' WHERE k % 97 = 0;
DELETE FROM kb WHERE k % 89 = 0;
DELETE FROM kb_h WHERE k % 89 = 0;

-- runs a query on the forst table and on its heap twin (each in place of
-- @) and says whether the rows and their order are the same
CREATE FUNCTION same(q text, forst_t text, heap_t text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    f text;
    h text;
    n bigint;
BEGIN
    EXECUTE format('SELECT string_agg(x::text, '' ''), count(*) FROM (%s) x',
                   replace(q, '@', forst_t)) INTO f, n;
    EXECUTE format('SELECT string_agg(x::text, '' '') FROM (%s) x',
                   replace(q, '@', heap_t)) INTO h;
    IF f IS NOT DISTINCT FROM h THEN
        RETURN format('same, %s rows', n);
    END IF;
    RETURN format('DIFFERENT: forst %s / heap %s', f, h);
END $$;

-- the plans: an index scan of the key with the array as its condition, no
-- sort for the key's order in either direction
EXPLAIN (COSTS OFF) SELECT * FROM kb WHERE k IN (5, 1, 3) ORDER BY k;
EXPLAIN (COSTS OFF) SELECT * FROM kb WHERE k = ANY('{5,1,3}') ORDER BY k DESC;
EXPLAIN (COSTS OFF) SELECT * FROM ka WHERE a = 3 AND b = ANY('{3,53}') ORDER BY a, b;
EXPLAIN (COSTS OFF) SELECT * FROM ka WHERE a IN (3, 4) ORDER BY a, b;

-- the scan reads only the elements' rows: the recheck removes nothing
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT * FROM kb WHERE k IN (2900, 5, 17, 1, 3050, 99999);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT * FROM ka WHERE a IN (3, 4) AND b = ANY('{3,4,53,54,103,104,105}');

SET enable_seqscan = off;
SET enable_sort = off;
-- one column: unsorted, duplicates, absent keys, memtable rows, deleted
-- and updated rows, both directions
SELECT same('SELECT * FROM @ WHERE k IN (5, 1, 3, 3, 99999, 3050, 178, 194, 0, -4) ORDER BY k', 'kb', 'kb_h');
SELECT same('SELECT * FROM @ WHERE k IN (5, 1, 3, 3, 99999, 3050, 178, 194, 0, -4) ORDER BY k DESC', 'kb', 'kb_h');
SELECT same('SELECT * FROM @ WHERE k = ANY(ARRAY(SELECT generate_series(3100, 1, -7))) ORDER BY k', 'kb', 'kb_h');
SELECT same('SELECT k FROM @ WHERE k = ANY(ARRAY(SELECT generate_series(1, 3100, 3))) ORDER BY k DESC LIMIT 5', 'kb', 'kb_h');
-- NULLs, empty and NULL arrays match nothing
SELECT same('SELECT * FROM @ WHERE k = ANY(''{NULL,7,NULL,8}'') ORDER BY k', 'kb', 'kb_h');
SELECT same('SELECT * FROM @ WHERE k = ANY(''{NULL}'') ORDER BY k', 'kb', 'kb_h');
SELECT same('SELECT * FROM @ WHERE k = ANY(''{}'') ORDER BY k', 'kb', 'kb_h');
SELECT same('SELECT * FROM @ WHERE k = ANY(NULL::bigint[]) ORDER BY k', 'kb', 'kb_h');
-- elements of other integer types, some out of the column's range
SELECT same('SELECT * FROM @ WHERE k = ANY(ARRAY[7, 9, 2]::int[]) ORDER BY k', 'kb', 'kb_h');
SELECT same('SELECT * FROM @ WHERE a = ANY(''{3, 4294967296, -4294967296, 7}''::bigint[]) AND b < 400 ORDER BY a, b', 'ka', 'ka_h');
SELECT same('SELECT * FROM @ WHERE a = 3 AND b = ANY(ARRAY[3, 53, 103]::smallint[]) ORDER BY a, b', 'ka', 'ka_h');
-- two key columns: arrays and equalities mixed, both directions
SELECT same('SELECT * FROM @ WHERE a = 3 AND b = ANY(''{103,3,53,999999,53,-1}'') ORDER BY a, b', 'ka', 'ka_h');
SELECT same('SELECT * FROM @ WHERE a IN (7, 3, 3, 11, 60) ORDER BY a, b', 'ka', 'ka_h');
SELECT same('SELECT * FROM @ WHERE a IN (7, 3, 11) ORDER BY a DESC, b DESC', 'ka', 'ka_h');
SELECT same('SELECT * FROM @ WHERE a = ANY(''{2,1}'') AND b = ANY(''{1,2,51,52,101,102,5000}'') ORDER BY a, b', 'ka', 'ka_h');
SELECT same('SELECT * FROM @ WHERE a = ANY(''{2,1}'') AND b = ANY(''{1,2,51,52,101,102,5000}'') ORDER BY a DESC, b DESC', 'ka', 'ka_h');
SELECT same('SELECT * FROM @ WHERE b = ANY(''{1,2,51,52}'') ORDER BY a, b', 'ka', 'ka_h');
-- an array and a range; an array with an operator other than =
SELECT same('SELECT * FROM @ WHERE a IN (4, 5) AND b > 4000 ORDER BY a, b', 'ka', 'ka_h');
SELECT same('SELECT * FROM @ WHERE a = 5 AND b < ANY(''{105, 55}'') ORDER BY a, b', 'ka', 'ka_h');
SELECT same('SELECT * FROM @ WHERE a = ANY(''{5,6}'') AND a = ANY(''{6,7}'') ORDER BY a, b', 'ka', 'ka_h');
-- more combinations than an array scan takes (65,536): the second column
-- is left to the recheck, the answer is the same
SELECT same('SELECT * FROM @ WHERE a = ANY(ARRAY(SELECT generate_series(0, 999))) AND b = ANY(ARRAY(SELECT generate_series(1, 5000, 50))) ORDER BY a, b', 'ka', 'ka_h');

-- a prepared statement's array, and an array per outer row (rescans)
PREPARE p(bigint[]) AS SELECT k, v FROM kb WHERE k = ANY($1) ORDER BY k;
EXECUTE p('{3, 2, 1}');
EXECUTE p('{89, 97, 3001, 5000}');
EXECUTE p('{}');
SELECT same('SELECT g, (SELECT string_agg(k::text, '','' ORDER BY k) FROM @ WHERE k = ANY(ARRAY[g * 89, g + 1, g * 2])) FROM generate_series(1, 40) g', 'kb', 'kb_h');
SELECT same('SELECT g, x.* FROM generate_series(1, 30) g, LATERAL (SELECT * FROM @ WHERE a = g % 50 AND b = ANY(ARRAY[g, g + 50, g + 100])) x ORDER BY g, x.b', 'ka', 'ka_h');

-- inside a transaction: its own writes, then rolled back
BEGIN;
DELETE FROM kb WHERE k IN (10, 20, 30);
INSERT INTO kb VALUES (100000, 'tx');
UPDATE kb SET v = 'tx upd' WHERE k = ANY('{11, 21}');
SELECT k, v FROM kb WHERE k IN (10, 11, 20, 21, 30, 31, 100000) ORDER BY k;
ROLLBACK;
SELECT k, v FROM kb WHERE k IN (10, 11, 100000) ORDER BY k;

-- a text key
CREATE TABLE kt (t text PRIMARY KEY, n int) USING forst;
INSERT INTO kt SELECT 'key' || i, i FROM generate_series(1, 500) i;
SELECT t, n FROM kt WHERE t IN ('key7', 'key300', 'absent', 'key7', 'key12') ORDER BY t COLLATE "C";

RESET enable_seqscan;
RESET enable_sort;
DROP TABLE ka, ka_h, kb, kb_h, kt;
DROP FUNCTION same(text, text, text);
DROP EXTENSION forst;
