/* forst--1.5--1.6.sql: from 1.5 to 1.6 (ALTER EXTENSION forst UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION forst UPDATE TO '1.6'" to load this file. \quit

-- ---------------------------------------------------------------------
-- The shared filter store (src/am/read/shared_filters.c): the bloom
-- filters of SST files in shared memory, forst.shared_filter_memory
-- bytes; counters since start-up, and this session's pins.  Server-wide
-- figures, like forst.shared_block_cache(): PUBLIC.
-- ---------------------------------------------------------------------
CREATE FUNCTION forst.shared_filters(OUT capacity bigint, OUT bytes_used bigint,
    OUT filters bigint, OUT pinned bigint, OUT hits bigint, OUT puts bigint,
    OUT refused bigint, OUT evictions bigint, OUT session_pins bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'forst_shared_filters'
LANGUAGE C STRICT VOLATILE;
