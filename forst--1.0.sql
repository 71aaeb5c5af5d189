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

-- Keys (src/am/keycodec.c).  The key group and the encoding are part of the
-- on-disk format and must never change.
CREATE FUNCTION forst.key_group(key anyelement, max_key_groups int DEFAULT 128)
RETURNS int
AS 'MODULE_PATHNAME', 'forst_key_group_fn'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION forst.key_group(anyelement, int) IS 'key group of a row whose first key column has this value, for a table with max_key_groups key groups';

CREATE FUNCTION forst.encode_key(VARIADIC "any")
RETURNS bytea
AS 'MODULE_PATHNAME', 'forst_encode_key'
LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION forst.encode_key("any") IS 'memcomparable encoding (without key group) of a key with these column values';

CREATE FUNCTION forst.decode_key(key bytea, VARIADIC types regtype[])
RETURNS text
AS 'MODULE_PATHNAME', 'forst_decode_key'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION forst.decode_key(bytea, regtype[]) IS 'a key encoded by forst.encode_key, with columns of these types, as text';

CREATE FUNCTION forst._check_key_columns(rel regclass, VARIADIC columns name[])
RETURNS void
AS 'MODULE_PATHNAME', 'forst_check_key_columns_fn'
LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION forst._check_key_columns(regclass, name[]) IS 'for tests: the check a forst table''s key columns get, on columns of any table';
