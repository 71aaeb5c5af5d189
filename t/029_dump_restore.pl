# Logical dumps of a database with forst tables: pg_dump -Fc restored by
# pg_restore (one job and -j 2, which adds the primary keys in other
# connections after the data), a plain dump restored by psql into a
# database that already has the extension, and pg_dumpall into a second
# cluster.  pg_dump creates each table, loads its rows, and only then adds
# its primary key, so forst must re-key a table that has rows.  Each
# restored database must have the same rows (EXCEPT ALL both ways), the
# same primary keys (forst_key indexes), access methods and comments, the
# same expiry settings (forst.expiry is an extension configuration table
# whose rows name tables by OID, and TTL columns by number), and working
# ON CONFLICT.  Keyless forst tables come back keyless, unlogged ones
# unlogged.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = q{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
timezone = 'UTC'
};
my $node = PostgreSQL::Test::Cluster->new('dump_src');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', $conf);
$node->start;

my $other = PostgreSQL::Test::Cluster->new('dump_dst');
$other->init(allows_streaming => 1);
$other->append_conf('postgresql.conf', $conf);
$other->start;

my $tmp = PostgreSQL::Test::Utils::tempdir('dumps');

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE EXTENSION forst;
-- a text key, enough rows to reach SST files
CREATE TABLE kv (k text PRIMARY KEY, v int NOT NULL, note text) USING forst;
INSERT INTO kv SELECT 'key-' || g, g, CASE WHEN g % 3 = 0 THEN NULL ELSE repeat(md5(g::text), 2) END
  FROM generate_series(1, 20000) g;
-- a composite key and a TTL on a column that is not part of it
CREATE TABLE ev (tenant int, id bigint, at timestamptz NOT NULL, payload jsonb,
                 PRIMARY KEY (tenant, id)) USING forst;
INSERT INTO ev SELECT g % 10, g, now() - g * interval '1 minute', jsonb_build_object('g', g, 'pad', repeat('p', 100))
  FROM generate_series(1, 3000) g;
SELECT forst.set_ttl('ev', 'at', '30 days');
-- a dropped column before the TTL column: attribute numbers change in a dump
CREATE TABLE win (junk int, k int PRIMARY KEY, ws timestamptz NOT NULL, n bigint) USING forst;
ALTER TABLE win DROP COLUMN junk;
INSERT INTO win SELECT g, '2024-01-01'::timestamptz + g * interval '1 hour', g * 10 FROM generate_series(1, 500) g;
SELECT forst.set_ttl('win', 'ws', NULL);
SELECT forst.advance_watermark('win', '2024-01-05');
ALTER TABLE win RENAME COLUMN ws TO wstart;
-- a keyless forst table
CREATE TABLE logk (at timestamptz, msg text) USING forst;
INSERT INTO logk SELECT '2024-01-01'::timestamptz + g * interval '1 s', 'line ' || g FROM generate_series(1, 1000) g;
INSERT INTO logk SELECT '2024-01-01', 'line 1' FROM generate_series(1, 3);
-- an unlogged (checkpoint-durable) forst table
CREATE UNLOGGED TABLE ul (k int PRIMARY KEY, v text) USING forst;
INSERT INTO ul SELECT g, 'u' || g FROM generate_series(1, 500) g;
-- a partitioned table keyed by forst, a partition per month
SET default_table_access_method = forst;
CREATE TABLE pe (k text, day date, n int, PRIMARY KEY (k, day)) PARTITION BY RANGE (day);
RESET default_table_access_method;
CREATE TABLE pe_1 PARTITION OF pe FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
CREATE TABLE pe_2 PARTITION OF pe FOR VALUES FROM ('2024-02-01') TO ('2024-03-01');
INSERT INTO pe SELECT 'k' || (g % 50), '2024-01-01'::date + (g / 50), g FROM generate_series(0, 2999) g;
-- two levels: by range, then by list
SET default_table_access_method = forst;
CREATE TABLE pm (k int, d int, t text, n int, PRIMARY KEY (k, d, t)) PARTITION BY RANGE (d);
RESET default_table_access_method;
CREATE TABLE pm_1 PARTITION OF pm FOR VALUES FROM (0) TO (10) PARTITION BY LIST (t);
CREATE TABLE pm_1_a PARTITION OF pm_1 FOR VALUES IN ('a');
CREATE TABLE pm_1_b PARTITION OF pm_1 FOR VALUES IN ('b');
CREATE TABLE pm_2 PARTITION OF pm FOR VALUES FROM (10) TO (20);
INSERT INTO pm SELECT g, g % 20, CASE WHEN g % 2 = 0 THEN 'a' ELSE 'b' END, g FROM generate_series(1, 2000) g;
-- indexes on the partitioned tables: forst_key copies in every partition
-- (pg_dump: CREATE INDEX ON ONLY, then each partition's, then ATTACH)
CREATE INDEX pe_n ON pe (n);
CREATE INDEX pm_n ON pm ((n % 100)) WHERE t = 'a';
CREATE UNIQUE INDEX pm_u ON pm (n, d, t);
-- a foreign key referencing the partitioned table keyed by forst
CREATE TABLE peref (id int PRIMARY KEY, k text, day date, FOREIGN KEY (k, day) REFERENCES pe);
INSERT INTO peref SELECT g, 'k' || (g % 50), '2024-01-01'::date + (g / 50) FROM generate_series(0, 99) g;
-- a heap table next to them
CREATE TABLE h (id int PRIMARY KEY, t text);
INSERT INTO h SELECT g, 'h' || g FROM generate_series(1, 100) g;

COMMENT ON TABLE kv IS 'keyed by text';
COMMENT ON COLUMN ev.payload IS 'the event';
COMMENT ON CONSTRAINT ev_pkey ON ev IS 'tenant first';
COMMENT ON TABLE logk IS 'no key';
});

my @tables = qw(kv ev win logk ul pe pm h peref);

# the rows of each table as text, in files the servers read and write
for my $t (@tables)
{
	$node->safe_psql('src', "COPY (SELECT x::text FROM $t x) TO '$tmp/$t.rows'");
}

# what \d shows: access methods, primary keys and their index access
# methods, comments on tables, columns and constraints
my $facts_sql = q{
SELECT c.relname, a.amname, c.relpersistence,
       coalesce((SELECT pg_get_constraintdef(con.oid) || ' ' || ia.amname || ' ' || i.indisprimary
                   FROM pg_constraint con
                   JOIN pg_index i ON i.indexrelid = con.conindid
                   JOIN pg_class ic ON ic.oid = i.indexrelid
                   JOIN pg_am ia ON ia.oid = ic.relam
                  WHERE con.conrelid = c.oid AND con.contype = 'p'), 'no key'),
       (SELECT count(*) FROM pg_index i WHERE i.indrelid = c.oid),
       coalesce(obj_description(c.oid, 'pg_class'), '-'),
       coalesce((SELECT string_agg(attname || '=' || col_description(c.oid, attnum), ',' ORDER BY attnum)
                   FROM pg_attribute WHERE attrelid = c.oid AND attnum > 0
                    AND col_description(c.oid, attnum) IS NOT NULL), '-'),
       coalesce((SELECT obj_description(con.oid, 'pg_constraint') FROM pg_constraint con
                  WHERE con.conrelid = c.oid AND con.contype = 'p'), '-')
  FROM pg_class c
  JOIN pg_am a ON a.oid = c.relam
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
 ORDER BY 1};
my $facts = $node->safe_psql('src', $facts_sql);
like($facts, qr/^kv\|forst\|p\|PRIMARY KEY \(k\) forst_key true\|1\|keyed by text/m,
	'source: kv has its key');
like($facts, qr/^ul\|forst\|u\|/m, 'source: ul is an unlogged forst table');

# forst.expiry by table and column name, and what the server makes of it
my $expiry_sql = q{
SELECT e.relid::text, a.attname, e.ttl, e.watermark, e.version
  FROM forst.expiry e JOIN pg_attribute a ON a.attrelid = e.relid AND a.attnum = e.attnum
 ORDER BY 1;
SELECT "table"::text, ttl_column, ttl, watermark FROM forst.tables ORDER BY 1};
my $expiry = $node->safe_psql('src', $expiry_sql);
like($expiry, qr/^ev\|at\|30 days\|/m, 'source: ev has a TTL on at');
like($expiry, qr/^win\|wstart\|\|2024-01-05 00:00:00\+00\|/m,
	'source: win has a watermark on wstart (renamed)');

# Compares database $db of node $n with the source.
sub check_restored
{
	my ($n, $db, $what) = @_;

	for my $t (@tables)
	{
		my $diff = $n->safe_psql($db, qq{
CREATE TEMP TABLE src_rows (r text);
COPY src_rows FROM '$tmp/$t.rows';
SELECT (SELECT count(*) FROM (SELECT x::text FROM $t x EXCEPT ALL SELECT r FROM src_rows) d)
       || '/' ||
       (SELECT count(*) FROM (SELECT r FROM src_rows EXCEPT ALL SELECT x::text FROM $t x) d)
       || '/' || (SELECT count(*) FROM src_rows)});
		like($diff, qr{^0/0/[1-9]}, "$what: table $t has the same rows");
	}
	is($n->safe_psql($db, $facts_sql), $facts,
		"$what: access methods, keys and comments");
	is($n->safe_psql($db, $expiry_sql), $expiry, "$what: expiry settings");

	# the keys work: ON CONFLICT, unique violations, lookups by key
	is($n->safe_psql($db, q{
INSERT INTO kv VALUES ('key-7', -7, 'again') ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING v;
INSERT INTO ev VALUES (3, 13, now(), '{}') ON CONFLICT (tenant, id) DO NOTHING RETURNING id;
INSERT INTO ev VALUES (3, 3000003, now(), '{}') ON CONFLICT (tenant, id) DO NOTHING RETURNING id;
INSERT INTO win VALUES (200, now(), 0) ON CONFLICT (k) DO UPDATE SET n = win.n + 1 RETURNING n;
SELECT v FROM kv WHERE k = 'key-7';
SELECT count(*) FROM ev WHERE tenant = 3 AND id = 13;}),
		"-7\n3000003\n2001\n-7\n1", "$what: ON CONFLICT and lookups by key");
	my ($ret, $out, $err) = $n->psql($db, q{INSERT INTO ev VALUES (3, 13, now(), '{}')});
	like($err, qr/duplicate key value violates unique constraint "ev_pkey"/,
		"$what: a duplicate key is refused");
	# the TTL applies: a row older than 30 days is expired at once, and
	# the watermark of win hides its early rows
	is($n->safe_psql($db, q{
INSERT INTO ev VALUES (4, 4000004, now() - interval '60 days', '{}');
SELECT count(*) FROM ev WHERE id = 4000004;
INSERT INTO win VALUES (100000, '2024-01-02', 1);
SELECT count(*) FROM win WHERE k = 100000;}),
		"0\n0", "$what: TTL and watermark in effect");
	# the partitioned table's key is forst's; a new partition is a forst
	# table with it, and the key holds across partitions' rows
	is($n->safe_psql($db, q{
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'pe_pkey';
SELECT count(*) FROM pe WHERE k = 'k7';
CREATE TABLE pe_3 PARTITION OF pe FOR VALUES FROM ('2024-03-01') TO ('2024-04-01');
INSERT INTO pe VALUES ('k1', '2024-03-05', 1);
SELECT a.amname || ' ' || (SELECT count(*) FROM pe_3)
  FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'pe_3';
ALTER TABLE pe DETACH PARTITION pe_3;
DROP TABLE pe_3;
INSERT INTO pe VALUES ('k7', '2024-01-01', 0) ON CONFLICT (k, day) DO UPDATE SET n = pe.n + 1 RETURNING n;
UPDATE pe SET n = n - 1 WHERE k = 'k7' AND day = '2024-01-01';
SELECT string_agg(a.amname, ',' ORDER BY c.relname) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('pm_pkey', 'pm_1_pkey', 'pm_1_a_pkey');
INSERT INTO pm VALUES (4, 4, 'a', 0) ON CONFLICT (k, d, t) DO UPDATE SET n = pm.n + 1 RETURNING n;
UPDATE pm SET n = n - 1 WHERE k = 4;}), "forst_key\n60\nforst 1\n8\nforst_key,forst_key,forst_key\n5",
		"$what: the partitioned table's key is forst's");
	# the partitioned tables' indexes: forst_key at every level, valid,
	# and lookups through them find the rows
	is($n->safe_psql($db, q{
SELECT string_agg(c.relname || ':' || a.amname || ':' || i.indisvalid, ',' ORDER BY c.relname)
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
 WHERE NOT i.indisprimary AND c.relname ~ '^p[em]_';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT k || ' ' || day FROM pe WHERE n = 2345;
SELECT count(*) || ' ' || sum(n) FROM pm WHERE n % 100 = 42 AND t = 'a';}),
		"pe_1_n_idx:forst_key:true,pe_2_n_idx:forst_key:true,pe_n:forst_key:true,"
		  . "pm_1_a_expr_idx:forst_key:true,pm_1_a_n_d_t_idx:forst_key:true,pm_1_b_expr_idx:forst_key:true,"
		  . "pm_1_b_n_d_t_idx:forst_key:true,pm_1_expr_idx:forst_key:true,pm_1_n_d_t_idx:forst_key:true,"
		  . "pm_2_expr_idx:forst_key:true,pm_2_n_d_t_idx:forst_key:true,pm_n:forst_key:true,pm_u:forst_key:true\n"
		  . "k45 2024-02-16\n20 19840",
		"$what: the partitioned tables' indexes are forst's and answer lookups");
	($ret, $out, $err) = $n->psql($db, q{INSERT INTO peref VALUES (1000, 'k1', '2025-01-01')});
	like($err, qr/violates foreign key constraint "peref_k_day_fkey"/,
		"$what: the foreign key referencing the partitioned table is checked");
	($ret, $out, $err) = $n->psql($db, q{DELETE FROM pe WHERE k = 'k1' AND day = '2024-01-01'});
	like($err, qr/is still referenced from table "peref"/,
		"$what: and keeps its referenced rows");
	($ret, $out, $err) = $n->psql($db, q{INSERT INTO pm VALUES (100000, 4, 'a', 4)});
	like($err, qr/duplicate key value violates unique constraint "pm_1_a_n_d_t_idx"/,
		"$what: the partitioned table's unique index is enforced in its partitions");
	is($n->safe_psql($db, q{
INSERT INTO pm VALUES (100000, 4, 'a', 4) ON CONFLICT (n, d, t) DO UPDATE SET n = pm.n RETURNING k}),
		'4', "$what: and is an arbiter of ON CONFLICT through the partitioned table");
	($ret, $out, $err) = $n->psql($db, q{INSERT INTO pe VALUES ('k7', '2024-01-01', 0)});
	like($err, qr/duplicate key value violates unique constraint "pe_1_pkey"/,
		"$what: a duplicate key through the partitioned table is refused");
	is($n->safe_psql($db, q{
INSERT INTO logk VALUES ('2024-01-01', 'line 1') RETURNING msg;
SELECT count(*) FROM logk WHERE msg = 'line 1'}), "line 1\n5",
		"$what: the keyless table takes duplicate rows");
}

# --- pg_dumpall into another cluster --------------------------------------
# (first: it dumps every database of the cluster)
my $all = "$tmp/all.sql";
$node->command_ok([ 'pg_dumpall', '-f', $all ], 'pg_dumpall');
{
	my ($stdout, $stderr) = run_command(
		[ 'psql', '-X', '-q', '-d', $other->connstr('postgres'), '-f', $all ]);
	# the superuser running the restore exists in every cluster
	my @errors = grep { /ERROR/ && !/role "[^"]+" already exists/ } split /\n/, $stderr;
	is(join("\n", @errors), '', 'pg_dumpall restored without errors');
}
check_restored($other, 'src', 'pg_dumpall');

# --- pg_dump -Fc, pg_restore ------------------------------------------------
my $fc = "$tmp/src.dump";
$node->command_ok([ 'pg_dump', '-Fc', '-d', 'src', '-f', $fc ], 'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE r1');
$node->command_ok([ 'pg_restore', '-d', 'r1', $fc ], 'pg_restore');
check_restored($node, 'r1', 'pg_restore');

$node->safe_psql('postgres', 'CREATE DATABASE r2');
$node->command_ok([ 'pg_restore', '-j', '2', '-d', 'r2', $fc ], 'pg_restore -j 2');
check_restored($node, 'r2', 'pg_restore -j 2');

# in one transaction: the table, its rows and its key in one
$node->safe_psql('postgres', 'CREATE DATABASE r3');
$node->command_ok([ 'pg_restore', '--single-transaction', '-d', 'r3', $fc ],
	'pg_restore --single-transaction');
check_restored($node, 'r3', 'pg_restore --single-transaction');

# --- plain dump through psql, into a database with the extension -----------
my $plain = "$tmp/src.sql";
$node->command_ok([ 'pg_dump', '-d', 'src', '-f', $plain ], 'plain pg_dump');
my $text = slurp_file($plain);
like($text, qr/^SET default_table_access_method = forst;$/m,
	'the dump creates forst tables with default_table_access_method');
$node->safe_psql('postgres', 'CREATE DATABASE r4');
$node->safe_psql('r4', 'CREATE EXTENSION forst');
{
	# CREATE EXTENSION made schema forst, which is no member of the
	# extension: the dump creates it, and that one statement fails
	my ($stdout, $stderr) = run_command(
		[ 'psql', '-X', '-q', '-d', $node->connstr('r4'), '-f', $plain ]);
	my @errors = grep { /ERROR/ && !/schema "forst" already exists/ } split /\n/, $stderr;
	is(join("\n", @errors), '', 'plain dump restored by psql');
}
check_restored($node, 'r4', 'plain dump');

# the source is as it was
is($node->safe_psql('src', $facts_sql), $facts, 'source unchanged');

# --- a dump by the owner of the tables, who is not a superuser -------------
$node->safe_psql('postgres', q{
CREATE ROLE regress_owner LOGIN;
CREATE DATABASE odb OWNER regress_owner;
});
$node->safe_psql('odb', q{
CREATE EXTENSION forst;
GRANT USAGE ON SCHEMA forst TO regress_owner;
CREATE TABLE ot (junk int, k int PRIMARY KEY, at timestamptz) USING forst;
ALTER TABLE ot DROP COLUMN junk;
ALTER TABLE ot OWNER TO regress_owner;
SET ROLE regress_owner;
INSERT INTO ot SELECT g, now() FROM generate_series(1, 100) g;
SELECT forst.set_ttl('ot', 'at', '1 day');
});
my $odump = "$tmp/odb.dump";
$node->command_ok(
	[ 'pg_dump', '-Fc', '-U', 'regress_owner', '-d', 'odb', '-f', $odump ],
	'pg_dump by the owner, who is not a superuser');
$node->safe_psql('postgres', 'CREATE DATABASE r5');
$node->command_ok([ 'pg_restore', '-d', 'r5', $odump ], 'its restore');
is($node->safe_psql('r5', q{
SELECT e.relid::text || '|' || a.attname || '|' || e.ttl || '|' ||
       (SELECT count(*) FROM ot WHERE k = 42) || '|' ||
       (SELECT amname FROM pg_class c JOIN pg_am m ON m.oid = c.relam WHERE relname = 'ot_pkey')
  FROM forst.expiry e JOIN pg_attribute a ON a.attrelid = e.relid AND a.attnum = e.attnum}),
	'ot|at|1 day|1|forst_key', 'the owner\'s dump: key and TTL column');

# --- the rewrite under a new key on a standby and through a crash ----------
# (one object store for both servers: the standby reads the primary's SST
# files, t/008)
my $store = PostgreSQL::Test::Utils::tempdir('store');
my $primary = PostgreSQL::Test::Cluster->new('rekey_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $conf . qq{forst.remote_dir = 'file://$store'\n});
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE rs (k bigint NOT NULL, w int NOT NULL, v text) USING forst;
INSERT INTO rs SELECT g, g % 7, repeat(md5(g::text), 3) FROM generate_series(1, 30000) g;
});
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('rekey_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

my $sum_sql = q{SELECT count(*) || ':' || md5(string_agg(rs::text, ',' ORDER BY k, w)) FROM rs};
my $sum = $primary->safe_psql('postgres', $sum_sql);
$primary->safe_psql('postgres', 'ALTER TABLE rs ADD PRIMARY KEY (k, w)');
my $lookup_sql = q{SET enable_seqscan = off; SELECT v FROM rs WHERE k = 12345 AND w = 12345 % 7};
my $v = $primary->safe_psql('postgres', 'SELECT repeat(md5(12345::text), 3)');
is($primary->safe_psql('postgres', $sum_sql), $sum, 'the rewritten table has every row');
is($primary->safe_psql('postgres', $lookup_sql), $v, 'a lookup by the new key');
# the rows written again reach SST files like any others
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $sum_sql), $sum, 'the standby has every row');
is($standby->safe_psql('postgres', $lookup_sql), $v, 'the standby looks up by the new key');
is($standby->safe_psql('postgres',
	q{SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'rs_pkey'}),
	'forst_key', 'the standby has the forst_key index');

$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $sum_sql), $sum, 'every row after a crash');
is($primary->safe_psql('postgres', $lookup_sql), $v, 'a lookup by the key after a crash');
my ($ret, $out, $err) = $primary->psql('postgres', q{INSERT INTO rs VALUES (12345, 12345 % 7, 'dup')});
like($err, qr/duplicate key value violates unique constraint "rs_pkey"/,
	'the key is enforced after a crash');

# a table attached from a part of a table (some key groups) is not
# rewritten: its new storage would own every key group
my $ck = $primary->safe_psql('postgres', 'SELECT forst.checkpoint()');
$primary->safe_psql('postgres',
	"SELECT forst.attach('rs', $ck, as_table => 'rs_lo', key_groups => '[0,64)')");
($ret, $out, $err) = $primary->psql('postgres',
	'ALTER TABLE rs_lo ADD COLUMN r float8 DEFAULT random()');
like($err, qr/cannot rewrite forst table "rs_lo": it owns only key groups 0\.\.63/,
	'a part of a table is not rewritten');

done_testing();
