-- forst.stats: its columns, and that its counters move with the work
-- done (object store, disk cache, block cache, bloom filters, flushes),
-- and forst.stats_reset().
CREATE EXTENSION forst;

SELECT attname, format_type(atttypid, atttypmod)
  FROM pg_attribute WHERE attrelid = 'forst.stats'::regclass AND attnum > 0
 ORDER BY attnum;

SELECT count(*) FROM forst.stats;
SELECT forst.stats_reset();
-- (only counters this session alone moves: the flush worker may still be
-- busy with earlier tests' tables)
SELECT bloom_checks, block_cache_hits + block_cache_misses AS block_cache,
       stats_reset > now() - interval '1 minute' AS reset_now
  FROM forst.stats;

-- enough rows to fill a memtable, so that a flush writes an SST file
CREATE TABLE stats_t (k int PRIMARY KEY, v text) USING forst;
INSERT INTO stats_t SELECT 2 * g, repeat(md5(g::text), 4) FROM generate_series(1, 80000) g;
DO $$
BEGIN
  FOR i IN 1 .. 600 LOOP
    EXIT WHEN (SELECT sst_files > 0 FROM forst.tables WHERE "table" = 'stats_t'::regclass);
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT sst_files > 0 AS flushed FROM forst.tables WHERE "table" = 'stats_t'::regclass;

-- key lookups through SST files (bloom filters, block cache, disk cache):
-- the unique checks of inserts look up each key's newest version; even
-- keys are there, odd ones are not, and the bloom filters say so
INSERT INTO stats_t VALUES (2, 'x'), (14, 'x'), (1000, 'x'), (40000, 'x'),
  (159998, 'x'), (160000, 'x') ON CONFLICT (k) DO NOTHING;
BEGIN;
INSERT INTO stats_t VALUES (1, 'x'), (7, 'x'), (1001, 'x'), (40001, 'x'),
  (99999, 'x'), (159999, 'x');
ROLLBACK;
SELECT count(*) FROM stats_t;

-- (no store reads need happen: SST files and manifests are admitted to
-- the disk cache when written, and this session reads them from there)
SELECT flushes > 0 AS flushes, flush_bytes > 0 AS flush_bytes,
       store_put + store_put_if_absent > 0 AS store_puts,
       store_bytes_written >= flush_bytes AS store_bytes_written,
       cache_bytes_admitted > 0 AS cache_admitted,
       cache_hits > 0 AS cache_hits,
       cache_bytes_used > 0 AND cache_bytes_used <= cache_capacity AS cache_bounded,
       cache_ready,
       block_cache_hits + block_cache_misses > 0 AS block_cache_used,
       bloom_checks > 0 AS bloom_checks,
       bloom_negatives > 0 AND bloom_negatives <= bloom_checks AS bloom_negatives,
       store_errors = 0 AS no_errors,
       store_request_ms > 0 AS store_time,
       cache_corrupt_entries = 0 AS no_corruption
  FROM forst.stats;

-- reset zeroes the counters, not the cache's contents
SELECT forst.stats_reset();
SELECT bloom_checks, bloom_negatives, block_cache_hits, cache_bytes_used > 0 AS cache_kept
  FROM forst.stats;

-- a role with access to the schema may read the counters; only
-- superusers may reset them (like pg_stat_reset)
CREATE ROLE stats_user;
GRANT USAGE ON SCHEMA forst TO stats_user;
SET ROLE stats_user;
SELECT count(*) FROM forst.stats;
SELECT forst.stats_reset();
RESET ROLE;
REVOKE USAGE ON SCHEMA forst FROM stats_user;
DROP ROLE stats_user;
DROP TABLE stats_t;
DROP EXTENSION forst;
