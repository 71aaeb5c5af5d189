/* forst--1.5--1.6.sql: from 1.5 to 1.6 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.6'" to load this file. \quit

-- ---------------------------------------------------------------------
-- The shared metadata store (src/am/read/shared_meta.c): the bloom
-- filters and block indexes of SST files in shared memory,
-- forst.shared_metadata_memory bytes; counters since start-up, and this
-- session's pins.  Server-wide figures, like forst.shared_block_cache():
-- PUBLIC.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst.shared_metadata(OUT capacity bigint, OUT bytes_used bigint,
    OUT filter_bytes bigint, OUT index_bytes bigint, OUT entries bigint,
    OUT pinned bigint, OUT hits bigint, OUT puts bigint, OUT refused bigint,
    OUT evictions bigint, OUT session_pins bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'forst_shared_metadata'
LANGUAGE C STRICT VOLATILE;
