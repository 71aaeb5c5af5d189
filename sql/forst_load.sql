--
-- forst_load: the extension loads through shared_preload_libraries
-- (test/forst.conf), reports its version and settings, and lives in
-- schema forst.
--
CREATE EXTENSION forst;

SELECT extversion, extnamespace::regnamespace AS schema, extrelocatable
FROM pg_extension WHERE extname = 'forst';

-- the module's version is the extension's SQL version
SELECT forst.version();
SELECT forst.version() = extversion AS matches
FROM pg_extension WHERE extname = 'forst';

-- every object of the extension lives in schema forst
SELECT pg_describe_object(classid, objid, objsubid) AS object
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'forst')
  AND deptype = 'e'
ORDER BY 1;
SELECT count(*) AS outside_forst
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'forst')
  AND p.pronamespace <> 'forst'::regnamespace;

-- forst.remote_dir: empty by default, meaning file://<data directory>/forst/remote
SHOW forst.remote_dir;
SELECT forst.remote_dir() LIKE 'file:///%/forst/remote' AS file_form,
       forst.remote_dir() = 'file://' || current_setting('data_directory') || '/forst/remote'
         AS under_data_directory;
SELECT name, setting, boot_val, context, vartype
FROM pg_settings WHERE name LIKE 'forst.%' ORDER BY name;

-- forst.remote_dir can only be set at server start
SET forst.remote_dir = 'file:///tmp/elsewhere';
SHOW forst.remote_dir;

-- the check hook, exercised through ALTER SYSTEM (which validates the value)
ALTER SYSTEM SET forst.remote_dir = 'ftp://example.com/x';
ALTER SYSTEM SET forst.remote_dir = 'file://relative/path';
ALTER SYSTEM SET forst.remote_dir = 'file:///srv/forst/../etc';
ALTER SYSTEM SET forst.remote_dir = 's3://ab/prefix';
ALTER SYSTEM SET forst.remote_dir = 's3://My_Bucket/prefix';
ALTER SYSTEM SET forst.remote_dir = 's3://-bucket-/prefix';
ALTER SYSTEM SET forst.remote_dir = E's3://bucket/pre\nfix';
ALTER SYSTEM SET forst.remote_dir = 's3://my-bucket.example/some/prefix';
ALTER SYSTEM SET forst.remote_dir = 's3://my-bucket';
ALTER SYSTEM SET forst.remote_dir = 'file:///var/lib/forst remote';
ALTER SYSTEM SET forst.remote_dir = '';
ALTER SYSTEM RESET forst.remote_dir;

-- forst.compression is reloadable, not per session
SHOW forst.compression;
SET forst.compression = 'none';
-- a codec per level (the last for every deeper level); bad lists refused
ALTER SYSTEM SET forst.compression = 'lz4, brotli';
ALTER SYSTEM SET forst.compression = 'lz4,lz4,lz4,lz4,lz4,lz4,lz4,zstd';
ALTER SYSTEM SET forst.compression = '';
ALTER SYSTEM SET forst.compression = 'zstd';
ALTER SYSTEM SET forst.compression = 'none, LZ4, zstd';
ALTER SYSTEM RESET forst.compression;

-- forst.block_size likewise: a size per level, 4kB .. 64kB (kB without a unit)
SHOW forst.block_size;
ALTER SYSTEM SET forst.block_size = '8kB, 2kB';
ALTER SYSTEM SET forst.block_size = '128kB';
ALTER SYSTEM SET forst.block_size = '8kB, eight';
ALTER SYSTEM SET forst.block_size = '';
ALTER SYSTEM SET forst.block_size = '8kB,8kB,8kB,8kB,8kB,8kB,8kB,4kB';
ALTER SYSTEM SET forst.block_size = '16';
ALTER SYSTEM SET forst.block_size = '16kB, 1MB';
ALTER SYSTEM SET forst.block_size = '8kB, 8kB, 4kB';
ALTER SYSTEM RESET forst.block_size;

-- forst.block_restart_interval: 1 .. 64 entries, on reload; not per session
SHOW forst.block_restart_interval;
ALTER SYSTEM SET forst.block_restart_interval = 0;
ALTER SYSTEM SET forst.block_restart_interval = 65;
SET forst.block_restart_interval = 8;
ALTER SYSTEM SET forst.block_restart_interval = 16;
ALTER SYSTEM RESET forst.block_restart_interval;

-- the forst. prefix is reserved for the extension's own parameters
SET forst.no_such_setting = 1;

DROP EXTENSION forst;
SELECT count(*) AS left_behind
FROM pg_proc WHERE proname IN ('version', 'remote_dir', '_check_preloaded')
  AND pronamespace::regnamespace::text = 'forst';
SELECT nspname FROM pg_namespace WHERE nspname = 'forst';
-- PostgreSQL creates the schema named in forst.control before running the
-- script, so it is not a member of the extension and outlives DROP EXTENSION.
DROP SCHEMA forst;
