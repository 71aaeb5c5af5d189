/* forst--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION forst" to load this file. \quit

-- Refuse at once unless the module was loaded by shared_preload_libraries:
-- forst keeps shared memory and background workers that only exist then.
CREATE FUNCTION forst._check_preloaded()
RETURNS void
AS 'MODULE_PATHNAME', 'forst_check_preloaded'
LANGUAGE C STRICT;

SELECT forst._check_preloaded();

CREATE FUNCTION forst.version()
RETURNS text
AS 'MODULE_PATHNAME', 'forst_version'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION forst.version() IS 'version of the loaded forst module';

CREATE FUNCTION forst.remote_dir()
RETURNS text
AS 'MODULE_PATHNAME', 'forst_remote_dir_fn'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION forst.remote_dir() IS 'object-store URL in effect (forst.remote_dir with its default resolved)';
