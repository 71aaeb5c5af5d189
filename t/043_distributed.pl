# A forst table spread over three servers that share one store, seen from a
# fourth (the coordinator) as one table partitioned by key group over
# postgres_fdw foreign tables (forst.distribute).
#
# The three shards are attached from one checkpoint of the table on the
# first server, each with its range of key groups ([0,64), [64,96),
# [96,128)): nothing is copied.  Through the coordinator, as an ordinary
# role that owns the table: every answer equals a heap twin's; a key's
# query goes to its one server; an aggregate grouped by the key runs on the
# servers; inserts, updates and deletes reach the server that owns the key.
# A server refuses rows of key groups it does not own; ON CONFLICT DO UPDATE
# is refused on the coordinator (postgres_fdw cannot run it); a second role
# can neither read the table nor use the servers; and with one server down,
# keys of the others still answer while a scan of all of them fails with the
# connection error.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use ForstStore;
use IPC::Run;
use Time::HiRes qw(time);

# One store for all servers: a file:// directory, or the S3 bucket of the
# test run's s3 step (FORST_TAP_EXTRA_CONF).
my $store = ForstStore->new;
my $settings = qq{
shared_buffers = '16MB'
forst.memtable_size = '1MB'
forst.memtable_memory = '8MB'
forst.checkpoint_interval = 0
forst.compaction_workers = 0
};

sub server
{
	my ($name) = @_;
	my $n = $store->server($name, $settings);
	$n->safe_psql('postgres', q{
CREATE ROLE app LOGIN;
GRANT CREATE ON SCHEMA public TO app;
});
	return $n;
}

my @shards = (server('s0'), server('s1'), server('s2'));
my @ranges = ('[0,64)', '[64,96)', '[96,128)');
my $c = server('coord');

# The rows: the same statements on the first server's forst table and on the
# coordinator's heap twin.
my $fill = q{
INSERT INTO %s SELECT g %% 10000 + 1, g / 10000, (g * 7) %% 1000 FROM generate_series(0, 29999) g;
UPDATE %s SET price = price + 1 WHERE auction %% 5 = 0;
DELETE FROM %s WHERE auction %% 11 = 0;
};
$shards[0]->safe_psql('postgres', q{
SET ROLE app;
CREATE TABLE bids (auction bigint, w int, price int, PRIMARY KEY (auction, w)) USING forst;
} . sprintf($fill, ('bids') x 3));
$c->safe_psql('postgres', q{
SET ROLE app;
CREATE TABLE twin (auction bigint, w int, price int, PRIMARY KEY (auction, w));
} . sprintf($fill, ('twin') x 3));

# ------------------------------------------------------------- the shards
my $cluster = $shards[0]->safe_psql('postgres', 'SELECT forst.cluster_id()');
my $ck = $shards[0]->safe_psql('postgres', 'SELECT forst.checkpoint()');
for my $i (0 .. 2)
{
	$shards[$i]->safe_psql('postgres', qq{
SELECT forst.attach('public.bids', $ck, cluster => '$cluster', as_table => 'bids_shard',
                    key_groups => '$ranges[$i]');
ALTER TABLE bids_shard OWNER TO app;
});
}
my $twin_rows = 'SELECT count(*), sum(price), sum(auction * w) FROM %s';
for my $i (0 .. 2)
{
	is( $shards[$i]->safe_psql('postgres', sprintf($twin_rows, 'bids_shard')),
		$c->safe_psql('postgres',
			sprintf($twin_rows, "twin WHERE forst.key_group(auction) <\@ '$ranges[$i]'::int4range")),
		"shard $i holds the twin's rows of key groups $ranges[$i]");
}

# ------------------------------------------------------------- the coordinator
my $servers = join(',', map { "s$_" } 0 .. 2);
for my $i (0 .. 2)
{
	my ($host, $port) = ($shards[$i]->host, $shards[$i]->port);
	$c->safe_psql('postgres', qq{
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
CREATE SERVER s$i FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '$host', port '$port', dbname 'postgres');
GRANT USAGE ON FOREIGN SERVER s$i TO app;
CREATE USER MAPPING FOR app SERVER s$i OPTIONS (user 'app', password_required 'false');
});
}
$c->safe_psql('postgres', q{
CREATE SCHEMA staging AUTHORIZATION app;
CREATE ROLE eve LOGIN;
GRANT CREATE ON SCHEMA public TO eve;
});

# The definition comes from the first server (IMPORT FOREIGN SCHEMA), the
# key column by name: an imported table has no primary key.
my ($ret, $out, $err) = $c->psql('postgres', qq{
SET ROLE app;
IMPORT FOREIGN SCHEMA public LIMIT TO (bids_shard) FROM SERVER s0 INTO staging;
SELECT forst.distribute('bids', 'staging.bids_shard', '{$servers}',
                        '{"$ranges[0]","$ranges[1]","$ranges[2]"}',
                        remote_table => 'bids_shard');
});
like($err, qr/has no primary key to take the key column from/,
	'a template without a primary key needs the key column named');
$c->safe_psql('postgres', qq{
SET ROLE app;
SELECT forst.distribute('bids', 'staging.bids_shard', '{$servers}',
                        '{"$ranges[0]","$ranges[1]","$ranges[2]"}',
                        remote_table => 'bids_shard', key_column => 'auction');
});
is( $c->safe_psql('postgres', q{
SELECT string_agg(c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid), '; ' ORDER BY c.relname)
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'bids'::regclass AND c.relkind = 'f'}),
	'bids_kg0_64 FOR VALUES WITH (modulus 2, remainder 0); '
	  . 'bids_kg64_96 FOR VALUES WITH (modulus 4, remainder 1); '
	  . 'bids_kg96_128 FOR VALUES WITH (modulus 4, remainder 3)',
	'one foreign partition per server and range of key groups');
is($c->safe_psql('postgres', "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'bids'::regclass"),
	'app', 'the distributed table belongs to the role that made it');

sub coord
{
	return $c->safe_psql('postgres', "SET ROLE app; $_[0]");
}

# What a mismatch with the twin looks like, for the log: rows per eight key
# groups through the coordinator against the twin, and on each server its
# shards' rows (all, and those of the first load) and files (level,
# borrowed, entries).
sub explain_mismatch
{
	diag(coord(q{SELECT string_agg(x, '; ') FROM (
	  SELECT format('%s..%s: bids %s twin %s', lo, lo + 7,
	                (SELECT count(*) FROM bids WHERE forst.key_group(auction) BETWEEN lo AND lo + 7),
	                (SELECT count(*) FROM twin WHERE forst.key_group(auction) BETWEEN lo AND lo + 7)) AS x
	    FROM generate_series(0, 120, 8) lo) y}));
	for my $i (0 .. 2)
	{
		diag("s$i: " . $shards[$i]->safe_psql('postgres', q{
SELECT string_agg(format('%s: %s rows, %s of the first load; files %s', c.relname,
         (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I', c.relname), false, true, '')))[1],
         (xpath('/row/n/text()', query_to_xml(format('SELECT count(*) AS n FROM %I WHERE auction <= 10000', c.relname), false, true, '')))[1],
         (SELECT string_agg(f.level || '/' || f.borrowed || '/' || f.entries, ' ') FROM forst.table_files(c.oid::regclass) f)), '; ')
  FROM pg_class c WHERE c.relname ~ '^bids(_kg\d+_\d+|_shard)?$' AND c.relkind = 'r'}));
	}
	return;
}

# ------------------------------------------------------------- reads
my $all = 'SELECT count(*), sum(price), sum(auction * w), min(auction), max(auction) FROM %s';
sub twin_equal
{
	my ($what) = @_;
	return is(coord(sprintf($all, 'bids')), coord(sprintf($all, 'twin')), $what) || explain_mismatch();
}
twin_equal('the whole table through the coordinator equals the twin');

# a key in each shard: its query goes to that server only
for my $i (0 .. 2)
{
	my $key = coord("SELECT min(auction) FROM twin WHERE forst.key_group(auction) <\@ '$ranges[$i]'::int4range");
	my $plan = coord("EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM bids WHERE auction = $key");
	my @scans = $plan =~ /Foreign Scan on public\.(\w+)/g;
	my $name = 'bids_kg' . join('_', $ranges[$i] =~ /(\d+)/g);
	is("@scans", $name, "key $key: one foreign scan, on $name");
	like($plan, qr/Remote SQL: .*WHERE \(\(auction = $key\)\)/, "key $key: the key is sent to the server");
	is( coord("SELECT w, price FROM bids WHERE auction = $key ORDER BY w"),
		coord("SELECT w, price FROM twin WHERE auction = $key ORDER BY w"),
		"key $key: its rows");
}

# grouped by the key, the aggregate runs on the servers
my $by_key = 'SELECT auction, sum(price) AS s, count(*) AS n FROM %s GROUP BY auction';
my $by_key_all = "SELECT string_agg(format('%%s %%s %%s', auction, s, n), ',' ORDER BY auction) FROM ($by_key) x";
$c->safe_psql('postgres', 'ALTER DATABASE postgres SET enable_partitionwise_aggregate = on');
coord('ANALYZE bids');	# the planner's row counts of the shards, sampled from the servers
my $plan = coord("EXPLAIN (VERBOSE, COSTS OFF) " . sprintf($by_key, 'bids'));
is(scalar(() = $plan =~ /Relations: Aggregate on/g), 3,
	'grouped by the key: three aggregates pushed to the servers');
like($plan, qr/Remote SQL: SELECT auction, sum\(price\), count\(\*\) FROM public\.bids_shard GROUP BY 1/,
	'the servers group their own rows');
is(coord(sprintf($by_key_all, 'bids')), coord(sprintf($by_key_all, 'twin')),
	'grouped by the key: the twin\'s answer');

# ------------------------------------------------------------- writes
my $writes = q{
INSERT INTO %s SELECT g, 7, g %% 100 FROM generate_series(100001, 103000) g;
UPDATE %s SET price = -price WHERE auction IN (5, 10, 100500);
DELETE FROM %s WHERE auction BETWEEN 200 AND 260;
};
coord(sprintf($writes, ('bids') x 3));
coord(sprintf($writes, ('twin') x 3));
twin_equal('after inserts, updates and deletes through the coordinator: the twin');
for my $i (0 .. 2)
{
	is( $shards[$i]->safe_psql('postgres', sprintf($twin_rows, 'bids_shard')),
		coord(sprintf($twin_rows, "twin WHERE forst.key_group(auction) <\@ '$ranges[$i]'::int4range")),
		"each write reached the server of its key group: shard $i");
}

# a server refuses a row of another server's key groups
my $foreign_key = coord("SELECT min(g) FROM generate_series(1, 1000) g WHERE forst.key_group(g::bigint) < 64");
($ret, $out, $err) = $shards[1]->psql('postgres',
	"SET ROLE app; INSERT INTO bids_shard VALUES ($foreign_key, 9, 1)");
like($err, qr/23514|key group/, 'a server refuses a row of a key group it does not own');

# ON CONFLICT DO UPDATE cannot go through postgres_fdw
($ret, $out, $err) = $c->psql('postgres',
	'SET ROLE app; INSERT INTO bids VALUES (1, 1, 1) ON CONFLICT (auction, w) DO UPDATE SET price = 0');
isnt($ret, 0, 'ON CONFLICT DO UPDATE through the coordinator is refused');
like($err, qr/no unique or exclusion constraint/, '... with PostgreSQL\'s error');

# ------------------------------------------------------------- a second role
($ret, $out, $err) = $c->psql('postgres', 'SET ROLE eve; SELECT count(*) FROM bids');
like($err, qr/permission denied for table bids/, 'another role cannot read the table');
($ret, $out, $err) = $c->psql('postgres', qq{
SET ROLE eve;
CREATE TABLE mine (auction bigint PRIMARY KEY, w int, price int);
SELECT forst.distribute('stolen', 'mine', '{s0}', '{"[0,128)"}', remote_table => 'bids_shard');
});
like($err, qr/permission denied for foreign server s0/, 'nor use the servers');

# ------------------------------------------------------------- pg_dump
# The coordinator's database dumps and restores as any other: the
# partitioned table with its operator class, the foreign partitions, the
# servers and the user mappings.
my $dump = $c->basedir . '/coord.dump';
$c->command_ok([ 'pg_dump', '-Fc', '-d', $c->connstr('postgres'), '-f', $dump ],
	'pg_dump of the coordinator');
$c->safe_psql('postgres', 'CREATE DATABASE restored');
$c->command_ok([ 'pg_restore', '-d', $c->connstr('restored'), $dump ],
	'pg_restore into a new database');
is( $c->safe_psql('restored', 'SET ROLE app; ' . sprintf($all, 'bids')),
	coord(sprintf($all, 'twin')),
	'the restored distributed table reads the servers\' rows');
like($c->safe_psql('restored', q{SELECT pg_get_partkeydef('bids'::regclass)}),
	qr/HASH \(auction forst\.key_group_int8_ops\)/, 'with its partition key');

# ------------------------------------------------------------- a standby
# A pg_basebackup standby of the coordinator routes reads as its primary
# does (the layout is in its catalog; the shards stay on their servers).
$c->backup('coord_backup');
my $standby = PostgreSQL::Test::Cluster->new('coord_standby');
$standby->init_from_backup($c, 'coord_backup', has_streaming => 1);
$standby->start;
$c->wait_for_catchup($standby);
is( $standby->safe_psql('postgres', 'SET ROLE app; ' . sprintf($all, 'bids')),
	coord(sprintf($all, 'twin')), 'a standby of the coordinator reads the servers\' rows');
like($standby->safe_psql('postgres',
		'SET ROLE app; EXPLAIN (COSTS OFF) SELECT * FROM bids WHERE auction = 42'),
	qr/^\s*Foreign Scan on bids_kg\d+_\d+ bids\s*$/m, 'and prunes to one server for a key');
$standby->stop;

# ------------------------------------------------------------- a server down
$shards[2]->stop('fast');
my $key0 = coord("SELECT min(auction) FROM twin WHERE forst.key_group(auction) < 64");
is( coord("SELECT count(*) FROM bids WHERE auction = $key0"),
	coord("SELECT count(*) FROM twin WHERE auction = $key0"),
	'with one server down, a key of another server still answers');
($ret, $out, $err) = $c->psql('postgres', 'SET ROLE app; SELECT count(*) FROM bids');
like($err, qr/could not connect to server "s2"/, 'a scan of every shard names the server that is down');
$shards[2]->start;
twin_equal('and answers again once it is back');

# ------------------------------------------------------------- rescale
# forst.rescale (superuser: it attaches on the servers) moves key groups
# between servers with no row copied: every SST byte in the store after it
# was there before it (the servers' state flushed by a checkpoint first).
for my $i (0 .. 2)
{
	my $user = $c->safe_psql('postgres', 'SELECT current_user');
	$c->safe_psql('postgres', "CREATE USER MAPPING FOR CURRENT_USER SERVER s$i OPTIONS (user '$user')");
}
# forst._remote_exec (the procedures' statements on the servers) keeps one
# session per server for the transaction; a session whose statement failed,
# or that a statement left inside a transaction block, is not used again
is( $c->safe_psql('postgres',
		q{SELECT forst._remote_exec('s0', 'SELECT pg_backend_pid()') = forst._remote_exec('s0', 'SELECT pg_backend_pid()')}),
	't', 'remote statements of one transaction share a session on a server');
isnt( $c->safe_psql('postgres', q{SELECT forst._remote_exec('s0', 'SELECT pg_backend_pid()')}),
	$c->safe_psql('postgres', q{SELECT forst._remote_exec('s0', 'SELECT pg_backend_pid()')}),
	'... and the next transaction has a session of its own');
($ret, $out, $err) = $c->psql('postgres', q{
DO $$
DECLARE
    a text := forst._remote_exec('s0', 'SELECT pg_backend_pid()');
    b text;
    c text;
BEGIN
    BEGIN
        PERFORM forst._remote_exec('s0', 'SELECT 1/0');
    EXCEPTION WHEN division_by_zero THEN
        NULL;
    END;
    b := forst._remote_exec('s0', 'BEGIN; SELECT pg_backend_pid()');
    c := forst._remote_exec('s0', 'SELECT pg_backend_pid()');
    RAISE NOTICE 'after an error: %, after an open block: %', a = b, b = c;
END $$});
like($err, qr/after an error: f, after an open block: f/,
	'a session is not used again after its statement failed or left a transaction block open');

sub sst_bytes
{
	my $total = 0;
	$total += $_->[1] for grep { $_->[0] =~ /\.sst$/ } $store->objects;
	return $total;
}
sub layout
{
	my $t = shift // 'bids';
	return $c->safe_psql('postgres', sprintf(q{
SELECT string_agg(forst.key_group_range(m[1]::int, m[2]::int)::text || ' ' || s.srvname, ', '
                  ORDER BY lower(forst.key_group_range(m[1]::int, m[2]::int)))
  FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid
  JOIN pg_foreign_table f ON f.ftrelid = p.oid JOIN pg_foreign_server s ON s.oid = f.ftserver,
       regexp_match(pg_get_expr(p.relpartbound, p.oid), 'modulus (\d+), remainder (\d+)') m
 WHERE i.inhparent = '%s'::regclass}, $t));
}
sub shard_tables
{
	return join('; ', map {
		"s$_: " . $shards[$_]->safe_psql('postgres',
			q{SELECT coalesce(string_agg(relname, ',' ORDER BY relname), '-') FROM pg_class
			   WHERE relname ~ '^bids(_kg\d+_\d+|_shard)?$' AND relkind = 'r'
			     AND relnamespace = 'public'::regnamespace})
	} 0 .. 2);
}
sub rescale
{
	my ($servers, $ranges, $what, $writers) = @_;
	$_->safe_psql('postgres', 'SELECT forst.checkpoint()') for @shards;
	my $before = sst_bytes();
	my $t0 = time;
	my ($ret, $out, $err) = $c->psql('postgres',
		"CALL forst.rescale('bids', '{$servers}', '{$ranges}')");
	is($ret, 0, "rescale: $what") or diag($err);
	note($err);
	# with writers running, the checkpoints flush their rows
	is(sst_bytes(), $before, "$what: no SST byte written (" . sprintf('%.2f', time - $t0) . ' s)')
	  unless $writers;
}

is(layout(), '[0,64) s0, [64,96) s1, [96,128) s2', 'the layout before rescaling');
rescale('s0,s1', '"[0,64)","[64,128)"', '3 servers to 2 (s1 takes over s2\'s key groups)');
is(layout(), '[0,64) s0, [64,128) s1', 'the coordinator routes to two servers');
is(shard_tables(), 's0: bids,bids_shard; s1: bids_kg64_128; s2: -',
	'the merged shard is on s1; the old shards are dropped; s0\'s shard stays');
twin_equal('after 3 to 2: the twin');
coord(sprintf($writes =~ s/100001, 103000/200001, 201000/r, ('bids') x 3));
coord(sprintf($writes =~ s/100001, 103000/200001, 201000/r, ('twin') x 3));
twin_equal('writes after 3 to 2: the twin');

rescale('s2,s0,s1', '"[0,32)","[32,64)","[64,128)"', '2 servers to 3 (s0\'s key groups split with s2)');
is(layout(), '[0,32) s2, [32,64) s0, [64,128) s1', 'the coordinator routes to three servers again');
is(shard_tables(), 's0: bids,bids_kg32_64; s1: bids_kg64_128; s2: bids_kg0_32',
	'the split shards are on s0 and s2');
coord(sprintf($writes =~ s/100001, 103000/300001, 301000/r, ('bids') x 3));
coord(sprintf($writes =~ s/100001, 103000/300001, 301000/r, ('twin') x 3));
twin_equal('after 2 to 3 and writes: the twin');
for my $i (0 .. 2)
{
	my ($kg) = layout() =~ /(\[\d+,\d+\)) s$i/;
	is( $shards[$i]->safe_psql('postgres',
			sprintf($twin_rows, "bids_kg" . join('_', $kg =~ /(\d+)/g))),
		coord(sprintf($twin_rows, "twin WHERE forst.key_group(auction) <\@ '$kg'::int4range")),
		"s$i holds exactly the twin's rows of $kg");
}

# garbage collection on every server keeps what the new shards borrow
$_->safe_psql('postgres', 'SELECT forst.gc()') for @shards;
twin_equal('after gc on every server: the twin');

# a failure on the way leaves the old layout serving, and nothing behind
my $dead_port = PostgreSQL::Test::Cluster::get_free_port();
$c->safe_psql('postgres', qq{
CREATE SERVER dead FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '$dead_port', dbname 'postgres', connect_timeout '2');
CREATE USER MAPPING FOR CURRENT_USER SERVER dead;
});
($ret, $out, $err) = $c->psql('postgres',
	q{CALL forst.rescale('bids', '{s2,dead}', '{"[0,64)","[64,128)"}')});
isnt($ret, 0, 'a rescale to a server that does not answer fails');
like($err, qr/could not connect to server "dead"/, '... naming it');
is(layout(), '[0,32) s2, [32,64) s0, [64,128) s1', 'the old layout still serves');
is(shard_tables(), 's0: bids,bids_kg32_64; s1: bids_kg64_128; s2: bids_kg0_32',
	'the shard attached for the new layout was dropped');
twin_equal('and answers as the twin');

# bad layouts are refused before anything happens; another role may not rescale
($ret, $out, $err) = $c->psql('postgres', q{CALL forst.rescale('bids', '{s0,s1}', '{"[0,64)","[0,128)"}')});
like($err, qr/two ranges hold key group 0/, 'an overlapping layout is refused');
($ret, $out, $err) = $c->psql('postgres', q{CALL forst.rescale('twin', '{s0}', '{"[0,128)"}')});
like($err, qr/is not a table distributed by key group/, 'so is a table that is not distributed');
($ret, $out, $err) = $c->psql('postgres', q{SET ROLE eve; CALL forst.rescale('bids', '{s0}', '{"[0,128)"}')});
like($err, qr/permission denied for procedure rescale/, 'another role may not rescale');
is(layout(), '[0,32) s2, [32,64) s0, [64,128) s1', 'the layout is unchanged');

# ------------------------------------------------------------- distributed checkpoint
# One object in the coordinator's namespace records the layout and every
# server's checkpoint; the table restores from it, in another layout too,
# next to the live one, with no SST byte written.
coord('CREATE TABLE twin_at_ck AS SELECT * FROM twin');
my $dck = $c->safe_psql('postgres', q{SELECT forst.checkpoint_distributed('bids')});
ok($dck > 0, "distributed checkpoint $dck taken");
my $coord_cluster = $c->safe_psql('postgres', 'SELECT forst.cluster_id()');
my $dkey = sprintf('%s/distributed/%020d', $coord_cluster, $dck);
is(scalar(grep { $_->[0] eq $dkey } $store->objects), 1,
	'it is one object under the coordinator\'s cluster: distributed/<id>');
is( $c->safe_psql('postgres', qq{
SELECT string_agg((x->>'groups') || ' ' || (x->>'server') || ' ' || (x->>'table'), ', ' ORDER BY (x->>'groups')::int4range)
  FROM jsonb_array_elements(forst.distributed_checkpoint_read($dck)->'tables'->0->'shards') x}),
	'[0,32) s2 public.bids_kg0_32, [32,64) s0 public.bids_kg32_64, [64,128) s1 public.bids_kg64_128',
	'it records the layout and each shard');
coord(sprintf($writes =~ s/100001, 103000/400001, 401000/r, ('bids') x 3));
coord(sprintf($writes =~ s/100001, 103000/400001, 401000/r, ('twin') x 3));

my $before = sst_bytes();
$c->safe_psql('postgres', qq{SELECT forst.restore_distributed($dck, as_table => 'bids_then',
    servers => '{s1,s2}', key_groups => '{"[0,64)","[64,128)"}', cluster => '$coord_cluster')});
is(coord(sprintf($all, 'bids_then')), coord(sprintf($all, 'twin_at_ck')),
	'restored in another layout next to the live table: the rows at the checkpoint');
twin_equal('and the live table goes on');
$c->safe_psql('postgres', qq{SELECT forst.restore_distributed($dck, as_table => 'bids_again')});
is(coord(sprintf($all, 'bids_again')), coord(sprintf($all, 'twin_at_ck')),
	'restored in the recorded layout: the rows at the checkpoint');
is(sst_bytes(), $before, 'the restores wrote no SST byte');
is($c->safe_psql('postgres', "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'bids_then'::regclass"),
	'app', 'a restored table belongs to the recorded owner');
is( $shards[1]->safe_psql('postgres', "SELECT pg_get_userbyid(relowner) FROM pg_class WHERE relname = 'bids_then_kg0_64'"),
	'app', '... and so do its shards');
($ret, $out, $err) = $c->psql('postgres', qq{SELECT forst.restore_distributed($dck + 100)});
like($err, qr/distributed checkpoint \d+ of cluster \d+ does not exist/, 'an unknown id is refused');
($ret, $out, $err) = $c->psql('postgres', q{SET ROLE eve; SELECT forst.checkpoint_distributed('bids')});
like($err, qr/permission denied for function checkpoint_distributed/, 'another role may not take one');

# ------------------------------------------------------------- colocated tables
# Tables in one layout move together: one checkpoint per moving server for
# all of them, one switch.  bids_again has bids's layout, bids_then not.
($ret, $out, $err) = $c->psql('postgres',
	q{CALL forst.rescale('bids', '{s0,s1}', '{"[0,64)","[64,128)"}', colocated => '{bids_then}')});
like($err, qr/bids_then is not colocated with bids/, 'a table in another layout is not rescaled with it');
is(layout(), '[0,32) s2, [32,64) s0, [64,128) s1', '... and nothing moved');
for my $back (0, 1)
{
	my ($srv, $kg, $moving) = $back
	  ? ('s2,s0,s1', '"[0,32)","[32,64)","[64,128)"', 1)
	  : ('s0,s1', '"[0,64)","[64,128)"', 2);
	($ret, $out, $err) = $c->psql('postgres',
		"SET client_min_messages = notice; CALL forst.rescale('bids', '{$srv}', '{$kg}', colocated => '{bids_again}')");
	is($ret, 0, "bids and bids_again rescaled together to $srv") or diag($err);
	like($err, qr/bids, bids_again switched to the new layout/, '... in one switch');
	is(scalar(() = $err =~ /checkpoint \d+ of server/g), $moving, "... with one checkpoint per moving server ($moving)");
	is(layout('bids_again'), layout(), '... and they share the new layout');
	is(coord(sprintf($all, 'bids_again')), coord(sprintf($all, 'twin_at_ck')), '... bids_again holds its rows');
	twin_equal('... and bids its own');
}

# One distributed checkpoint of several tables (a job's): one checkpoint
# per server for all of them, one object; restored together in another
# schema and layout, or not at all.
coord('CREATE TABLE twin_at_ck2 AS SELECT * FROM twin');
my %at_ck2 = map { $_ => coord(sprintf($all, $_)) } qw(bids_again bids_then);
($ret, $out, $err) = $c->psql('postgres',
	q{SET client_min_messages = notice; SELECT forst.checkpoint_distributed('bids', with_tables => '{bids_again,bids_then}')});
is($ret, 0, 'a distributed checkpoint of three tables') or diag($err);
my $dck2 = $out;
is(scalar(() = $err =~ /checkpoint \d+ of server/g), 3, '... with one checkpoint per server (3) for all of them');
is( $c->safe_psql('postgres', qq{
SELECT string_agg((x->>'table') || ':' || jsonb_array_length(x->'shards'), ' ' ORDER BY k)
  FROM jsonb_array_elements(forst.distributed_checkpoint_read($dck2)->'tables') WITH ORDINALITY t(x, k)}),
	'public.bids:3 public.bids_again:3 public.bids_then:2', '... recorded as one object with each table\'s shards');
($ret, $out, $err) = $c->psql('postgres', qq{SELECT forst.restore_distributed($dck2, as_table => 'x')});
like($err, qr/as_table names one table; distributed checkpoint $dck2 holds public.bids, public.bids_again, public.bids_then/,
	'as_table is refused for a checkpoint of several tables');
$_->safe_psql('postgres', 'CREATE SCHEMA back; GRANT USAGE ON SCHEMA back TO app') for ($c, @shards);
# a failure restores none of them: a layout with a server that does not answer
($ret, $out, $err) = $c->psql('postgres', qq{SELECT forst.restore_distributed($dck2, into_schema => 'back',
    servers => '{s0,dead}', key_groups => '{"[0,64)","[64,128)"}')});
like($err, qr/could not connect to server "dead"/, 'a restore onto a server that does not answer fails');
is( join(' ', map { $_->safe_psql('postgres', q{SELECT count(*) FROM pg_class WHERE relnamespace = 'back'::regnamespace}) } ($c, @shards)),
	'0 0 0 0', '... and leaves no table behind, on the coordinator or a server');
# s2 is down: its key groups come back on s0 and s1 from the checkpoint,
# without it (its files are in the store)
$shards[2]->stop('immediate');
$before = sst_bytes();
$c->safe_psql('postgres', qq{SELECT forst.restore_distributed($dck2, into_schema => 'back',
    servers => '{s0,s1}', key_groups => '{"[0,64)","[64,128)"}')});
is(coord(sprintf($all, 'back.bids')), coord(sprintf($all, 'twin_at_ck2')),
	'with s2 down, restored together on s0 and s1: bids at the cut');
is(coord(sprintf($all, "back.$_")), $at_ck2{$_}, "... $_ at the cut") for qw(bids_again bids_then);
is(layout('back.bids_then'), '[0,64) s0, [64,128) s1', '... each in the new layout');
is(sst_bytes(), $before, '... with no SST byte written');
$shards[2]->start;

# ------------------------------------------------------------- rescale under load
# So far no compaction ran (forst.compaction_workers = 0), so that "no SST
# byte written" meant exactly that.  From here on, the servers compact, as
# they would: the merged shards' borrowed files (all in level 0) are
# rewritten into their own while rescales and writes go on.
for my $n (@shards)
{
	$n->append_conf('postgresql.conf', 'forst.compaction_workers = 1');
	$n->restart;
}

# Writers through the coordinator run on during a rescale: they wait for
# the switch and go on in the new layout, one of whose servers now holds two
# ranges.  Not a write is lost or doubled.
coord('CREATE SEQUENCE ins_seq START 10000001');
my $script = $c->basedir . '/insert.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"INSERT INTO bids VALUES (nextval('ins_seq'), 1, 1);\n");
my $bindir = $c->config_data('--bindir');
my ($bout, $berr) = ('', '');
my $load = IPC::Run::start(
	[ "$bindir/pgbench", '-n', '-c', '2', '-T', '8', '-f', $script, '-h', $c->host,
	  '-p', $c->port, '-U', 'app', 'postgres' ],
	'>', \$bout, '2>', \$berr);
sleep 2;
my $during = coord('SELECT count(*) FROM bids WHERE auction > 10000000');
rescale('s2,s0,s1,s2', '"[0,32)","[32,64)","[64,96)","[96,128)"',
	'3 servers, one of them with two ranges, while writers run', 1);
$load->finish;
is($load->result(0), 0, 'the writers ran without an error') or diag($berr);
my ($done) = $bout =~ /number of transactions actually processed: (\d+)/;
my $after_rows = coord('SELECT count(*) FROM bids WHERE auction > 10000000');
ok($done > $during && $during > 0,
	"writes before and after the switch ($during of $done before the rescale)");
is($after_rows, $done, 'every committed write is there once');
is(coord('SELECT last_value - 10000000 FROM ins_seq'), $done, '... and no other');
is(layout(), '[0,32) s2, [32,64) s0, [64,96) s1, [96,128) s2', 'the new layout routes');
is(shard_tables(), 's0: bids,bids_kg32_64; s1: bids_kg64_96; s2: bids_kg0_32,bids_kg96_128',
	's2 holds two shards');
coord('INSERT INTO twin SELECT g, 1, 1 FROM generate_series(10000001, 10000000 + ' . $done . ') g');
twin_equal('the whole table equals the twin');

# ------------------------------------------------------------- the fence
# A writer on a server whose key groups move: a write committed before the
# rescale's fence is in the new layout; one that comes after it is refused.
my $key_s1 = coord("SELECT min(g) FROM generate_series(20000001, 20001000) g WHERE forst.key_group(g::bigint) <\@ '[64,96)'::int4range");
my ($ain, $aout, $aerr) = ('', '', '');
my $holder = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $shards[1]->connstr('postgres') ],
	'<', \$ain, '>', \$aout, '2>', \$aerr);
$ain .= "BEGIN; INSERT INTO bids_kg64_96 VALUES ($key_s1, 1, 7); SELECT 'inserted';\n";
$holder->pump until $aout =~ /inserted/;
my ($rout, $rerr) = ('', '');
my $moving = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $c->connstr('postgres'), '-c',
	  q{CALL forst.rescale('bids', '{s2,s0,s0}', '{"[0,32)","[32,64)","[64,128)"}')} ],
	'>', \$rout, '2>', \$rerr);
my $waiting = q{SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'bids_kg64_96'::regclass};
$shards[1]->poll_query_until('postgres', "SELECT ($waiting) = 1")
  or die 'the fence does not wait for the open transaction';
my ($bout2, $berr2) = ('', '');
my $late = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $shards[1]->connstr('postgres'), '-c',
	  "INSERT INTO bids_kg64_96 VALUES ($key_s1, 2, 7)" ],
	'>', \$bout2, '2>', \$berr2);
$shards[1]->poll_query_until('postgres', "SELECT ($waiting) = 2")
  or die 'the late writer does not queue';
$ain .= "COMMIT; SELECT 'committed';\n";
$holder->pump until $aout =~ /committed/;
$holder->finish;
$late->finish;
like($berr2, qr/key groups of shard public\.bids_kg64_96 are moving to other servers/,
	'a direct write after the fence is refused');
$moving->finish;
is($moving->result(0), 0, 'the rescale went on once the open transaction committed') or diag($rerr);
is(layout(), '[0,32) s2, [32,64) s0, [64,128) s0', 'the new layout routes');
is(coord("SELECT string_agg(w || ':' || price, ',' ORDER BY w) FROM bids WHERE auction = $key_s1"),
	'1:7', 'the write committed before the fence is in the new layout; the refused one is not');
coord("INSERT INTO twin VALUES ($key_s1, 1, 7)");
twin_equal('the whole table equals the twin');

# after a failed rescale, the fences are down again
($ret, $out, $err) = $c->psql('postgres',
	q{CALL forst.rescale('bids', '{s2,dead}', '{"[0,64)","[64,128)"}')});
isnt($ret, 0, 'a rescale to a server that does not answer fails');
is($shards[0]->safe_psql('postgres',
		"SELECT count(*) FROM pg_trigger WHERE tgname = 'forst_shard_moving'"),
	'0', 'and lifts the fences it set');
my $key_s0 = coord("SELECT min(g) FROM generate_series(20001001, 20002000) g WHERE forst.key_group(g::bigint) >= 64");
$shards[0]->safe_psql('postgres', "INSERT INTO bids_kg64_128 VALUES ($key_s0, 1, 1)");
coord("INSERT INTO twin VALUES ($key_s0, 1, 1)");
twin_equal('direct writes go on in the old layout');

# ------------------------------------------------------------- rounds
# Rescale after rescale with writers running through the coordinator:
# after each, the whole table equals the twin.
my @layouts = (
	[ 's0,s1',       '"[0,64)","[64,128)"' ],
	[ 's2,s0,s1',    '"[0,32)","[32,64)","[64,128)"' ],
	[ 's1,s2,s0,s2', '"[0,32)","[32,64)","[64,96)","[96,128)"' ],
	[ 's0,s2',       '"[0,64)","[64,128)"' ],
	[ 's2,s1,s0,s1', '"[0,32)","[32,64)","[64,96)","[96,128)"' ],
	[ 's0,s1,s2',    '"[0,64)","[64,96)","[96,128)"' ],
);
my $seq_seen = coord('SELECT last_value FROM ins_seq');
for my $round (0 .. $#layouts)
{
	my ($srv, $kg) = @{ $layouts[$round] };
	($bout, $berr) = ('', '');
	$load = IPC::Run::start(
		[ "$bindir/pgbench", '-n', '-c', '2', '-T', '3', '-f', $script, '-h', $c->host,
		  '-p', $c->port, '-U', 'app', 'postgres' ],
		'>', \$bout, '2>', \$berr);
	sleep 1;
	($ret, $out, $err) = $c->psql('postgres', "CALL forst.rescale('bids', '{$srv}', '{$kg}')");
	is($ret, 0, "round $round: rescaled to $srv") or diag($err);
	$load->finish;
	is($load->result(0), 0, "round $round: the writers ran without an error") or diag($berr);
	my $last = coord('SELECT last_value FROM ins_seq');
	coord("INSERT INTO twin SELECT g, 1, 1 FROM generate_series($seq_seen + 1, $last) g");
	$seq_seen = $last;
	twin_equal("round $round: the whole table equals the twin");
}

# ------------------------------------------------------------- files of the chains
# After those rounds, shards borrow files through chains of attaches across
# the three servers' namespaces, and the intermediate tables are dropped.
# More checkpoints than each server retains, then garbage collection with
# no grace on every server, twice: every file a shard still reads stays.
for (1 .. 2)
{
	for my $n (@shards)
	{
		$n->safe_psql('postgres', 'SELECT forst.checkpoint()') for 1 .. 4;
		$n->safe_psql('postgres', 'SET forst.gc_grace = 0; SELECT forst.gc()');
	}
}
twin_equal('after checkpoints beyond retention and gc with no grace on every server: the twin');

done_testing();
