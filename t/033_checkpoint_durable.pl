# Checkpoint-durable state: UNLOGGED forst tables.
#
#  - their rows write (almost) no WAL: a fraction of a logged forst
#    table's for the same rows;
#  - kill -9 after a checkpoint, with rows flushed and in memtables after
#    it and a transaction that was open across it: every unlogged table of
#    the database equals a heap twin of what the checkpoint held (one cut),
#    keyed and keyless; logged forst tables and heap keep everything; a
#    table created or truncated after the checkpoint is empty;
#  - the restore runs at the first use after the crash, whoever's query
#    it is (here a hostile role's, refused as usual), for the whole
#    database at once;
#  - a clean restart keeps everything (the flush worker's mark), also
#    through a crash before the next write; after a later checkpoint and
#    more writes, a crash returns to that checkpoint;
#  - under load (3 clients), a checkpoint in the middle and a crash later:
#    the unlogged table equals what a heap log of the same transactions
#    holds as of the checkpoint's snapshot;
#  - checkpoints are retained per database;
#  - the watermark of an unlogged table returns with it to the checkpoint,
#    a logged table's stays;
#  - a standby from pg_basebackup refuses to read unlogged tables, and
#    once promoted serves them as of the newest checkpoint.
#
# FORST_TAP_EXTRA_CONF names a file of extra settings (the s3 step's).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $store = PostgreSQL::Test::Utils::tempdir('store');
my $s3 = $ENV{FORST_TAP_EXTRA_CONF} ? 1 : 0;
my $conf = qq{
shared_preload_libraries = 'forst'
forst.memtable_size = '1MB'
forst.memtable_memory = '16MB'
forst.checkpoint_interval = 0
forst.checkpoint_timeout = 30
};
$conf .= $s3 ? slurp_file($ENV{FORST_TAP_EXTRA_CONF}) : "forst.remote_dir = 'file://$store'\n";

my $node = PostgreSQL::Test::Cluster->new('primary');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', $conf);
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION forst;
CREATE ROLE app LOGIN IN ROLE pg_checkpoint;
CREATE ROLE mallory LOGIN;
GRANT CREATE ON SCHEMA public TO app;
});

# as the owner of the tables, an ordinary role
sub app
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql, extra_params => [ '-U', 'app' ]);
}

app(q{
CREATE UNLOGGED TABLE u (id bigint PRIMARY KEY, v int NOT NULL, t text) USING forst;
CREATE UNLOGGED TABLE uk (id bigint, v int) USING forst;   -- keyless
CREATE UNLOGGED TABLE utrunc (id bigint PRIMARY KEY) USING forst;
CREATE TABLE l (id bigint PRIMARY KEY, v int NOT NULL, t text) USING forst;
CREATE TABLE h (id bigint PRIMARY KEY, v int NOT NULL, t text);
CREATE TABLE offsets (job text PRIMARY KEY, pos bigint) USING forst;
CREATE UNLOGGED TABLE uoffsets (job text PRIMARY KEY, pos bigint) USING forst;
});
is($node->safe_psql('postgres', "SELECT string_agg(relname || '=' || relpersistence::text, ',' ORDER BY relname) FROM pg_class WHERE relname IN ('u', 'l')"),
	'l=p,u=u', 'CREATE UNLOGGED TABLE ... USING forst makes an unlogged forst table');
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	'CREATE TEMPORARY TABLE tt (id int) USING forst');
like($stderr, qr/forst tables cannot be temporary/, 'temporary forst tables are still refused');

# --- WAL: the same rows into the unlogged and the logged table
sub wal_bytes
{
	my ($table) = @_;
	my $start = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	app("INSERT INTO $table SELECT g, g, repeat('x', 50) FROM generate_series(1, 5000) g");
	return $node->safe_psql('postgres',
		"SELECT pg_current_wal_insert_lsn() - '$start'::pg_lsn");
}
my $wal_l = wal_bytes('l');
my $wal_u = wal_bytes('u');
ok($wal_u * 10 < $wal_l,
	"5000 rows into the unlogged table wrote $wal_u bytes of WAL, the logged one $wal_l");
app('TRUNCATE u, l');
# a secondary index, created while the table is empty: its entries are in
# the checkpoint with the rows, and come back with them
app('CREATE INDEX u_v ON u (v)');

# --- round 1, then the checkpoint
app(q{
INSERT INTO u SELECT g, 1, 'row ' || g FROM generate_series(1, 3000) g;
INSERT INTO uk SELECT g, 1 FROM generate_series(1, 500) g;
INSERT INTO utrunc SELECT g FROM generate_series(1, 100) g;
INSERT INTO l SELECT g, 1, 'row ' || g FROM generate_series(1, 3000) g;
INSERT INTO h SELECT g, 1, 'row ' || g FROM generate_series(1, 3000) g;
INSERT INTO uoffsets VALUES ('job', 3000);
INSERT INTO offsets VALUES ('job', 3000);
});

# a transaction open across the checkpoint, committed after it
my ($in, $out, $err) = ('', '', '');
my $open = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-U', 'app', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$err);
$in .= "BEGIN; INSERT INTO u VALUES (-1, -1, 'open across the checkpoint'); SELECT 'inserted';\n";
$open->pump until $out =~ /inserted/;

my $ckpt = app('SELECT forst.checkpoint()');
ok($ckpt > 0, "checkpoint $ckpt taken by the tables' owner");
my $tables = $node->safe_psql('postgres',
	"SELECT string_agg((t->>'name') || ':' || (t->>'unlogged'), ',' ORDER BY t->>'name') FROM jsonb_array_elements(forst.checkpoint_read($ckpt)->'tables') t");
like($tables, qr/public\.u:true/, 'the checkpoint holds the unlogged tables, marked so');
like($tables, qr/public\.l:false/, 'and the logged ones');
# the heap twin of what the checkpoint holds
app(q{
CREATE TABLE snap_u AS TABLE u;
CREATE TABLE snap_uk AS TABLE uk;
CREATE TABLE snap_uoffsets AS TABLE uoffsets;
});
$in .= "COMMIT; SELECT 'committed';\n";
$open->pump until $out =~ /committed/;
$open->finish;

# --- after the checkpoint: enough to flush files, and rows in memtables
app(q{
UPDATE u SET v = v + 1 WHERE id % 3 = 0;
DELETE FROM u WHERE id % 7 = 0;
INSERT INTO u SELECT g, 2, repeat('after ', 40) FROM generate_series(3001, 12000) g;
UPDATE uk SET v = 2 WHERE id <= 250;
INSERT INTO uk SELECT g, 3 FROM generate_series(100001, 140000) g;
TRUNCATE utrunc;
INSERT INTO utrunc VALUES (1);
DO $$ BEGIN FOR i IN 1..20000 LOOP UPDATE uoffsets SET pos = pos + 1; END LOOP; END $$;
UPDATE uoffsets SET pos = 12000;
UPDATE offsets SET pos = 12000;
CREATE UNLOGGED TABLE unew (id int PRIMARY KEY) USING forst;
INSERT INTO unew SELECT generate_series(1, 10);
UPDATE l SET v = v + 1 WHERE id % 3 = 0;
UPDATE h SET v = v + 1 WHERE id % 3 = 0;
});
# rows of each table after the checkpoint are in SST files too, not only
# in memtables (which a crash loses anyway)
foreach my $t ('u', 'uk', 'uoffsets')
{
	ok( $node->poll_query_until(
			'postgres', qq{
SELECT manifest_version > (SELECT (t->>'manifest')::bigint
                             FROM jsonb_array_elements(forst.checkpoint_read($ckpt)->'tables') t
                            WHERE t->>'name' = 'public.$t')
  FROM forst.tables WHERE "table" = '$t'::regclass}),
		"$t has files written after the checkpoint");
}

$node->stop('immediate');
my $offset = -s $node->logfile;
$node->start;

# the first query after the crash, a hostile role's: refused as ever, and
# its planning brought the tables back already (no privilege is needed)
($rc, $stdout, $stderr) = $node->psql('postgres', 'SELECT count(*) FROM u',
	extra_params => [ '-U', 'mallory' ]);
like($stderr, qr/permission denied for table u/, 'a hostile role still cannot read the table');

sub diff
{
	my ($a, $b) = @_;
	return app("SELECT count(*) FROM ((TABLE $a EXCEPT ALL TABLE $b) UNION ALL (TABLE $b EXCEPT ALL TABLE $a)) d");
}
is(diff('u', 'snap_u'), '0', 'after kill -9 the unlogged table equals its twin of the checkpoint');
is(diff('uk', 'snap_uk'), '0', 'so does the keyless one');
my $by_index = q{SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM ((SELECT * FROM u WHERE v IN (1, 2) EXCEPT ALL SELECT * FROM snap_u WHERE v IN (1, 2))
            UNION ALL (SELECT * FROM snap_u WHERE v IN (1, 2) EXCEPT ALL SELECT * FROM u WHERE v IN (1, 2))) d
UNION ALL SELECT count(*) FROM u WHERE v = 1};
is(app($by_index), "0\n" . app('SELECT count(*) FROM snap_u WHERE v = 1'),
	'lookups through its index find the checkpoint\'s rows, and only those');
like(app(q{SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN SELECT * FROM u WHERE v = 1}),
	qr/Index Scan using u_v/, 'those lookups use the index');
is(app("SELECT count(*) FROM u WHERE id = -1"), '0',
	'the transaction open across the checkpoint is not there');
is(app('SELECT pos FROM uoffsets'), '3000', 'the unlogged offset is the checkpoint\'s: one cut');
is(app('SELECT pos FROM offsets'), '12000', 'a logged forst table keeps everything (WAL)');
is(diff('l', 'h'), '0', 'the logged forst table equals its heap twin');
is(app('SELECT count(*) FROM utrunc'), '0', 'a table truncated after the checkpoint is empty');
is(app('SELECT count(*) FROM unew'), '0', 'a table created after the checkpoint is empty');
ok($node->log_contains(qr/unlogged table "u" returned to checkpoint $ckpt/, $offset),
	'the server log says which checkpoint the table returned to');
app(q{INSERT INTO u VALUES (-2, 0, 'written after the restore')});
is(app('SELECT count(*) FROM u WHERE id = -2'), '1', 'the restored table takes writes');

# --- a clean restart keeps everything
app(q{
INSERT INTO u SELECT g, 3, 'before the clean stop' FROM generate_series(20001, 24000) g;
DELETE FROM snap_u;
});
app('INSERT INTO snap_u TABLE u');
$node->stop('fast');
ok(-e $node->data_dir . '/forst/unlogged_clean', 'the clean shutdown marked the unlogged tables whole');
$node->start;
is(diff('u', 'snap_u'), '0', 'a clean restart keeps every row of the unlogged table');

# a crash before any write: still whole
$node->stop('immediate');
$node->start;
is(diff('u', 'snap_u'), '0', 'a crash before the next write keeps them too');

# a checkpoint, more writes, a crash: back to that checkpoint
my $ckpt2 = app('SELECT forst.checkpoint()');
ok($ckpt2 > $ckpt, "a second checkpoint $ckpt2");
app(q{UPDATE u SET v = 99 WHERE id > 20000});
ok(!-e $node->data_dir . '/forst/unlogged_clean', 'the first write took the mark away');
$node->stop('immediate');
$offset = -s $node->logfile;
$node->start;

# three sessions at once: one restores, the others wait for it; all see
# the checkpoint's rows, and the database is restored once
my @readers;
foreach my $i (1 .. 3)
{
	my $o = '';
	push @readers, [ IPC::Run::start(
		[ 'psql', '-XAtq', '-U', 'app', '-d', $node->connstr('postgres'),
		  '-c', "SELECT count(*), sum(v) FROM u" ], '>', \$o, '2>', \$o), \$o ];
}
$_->[0]->finish foreach @readers;
my $want = app('SELECT count(*), sum(v) FROM snap_u');
is(join(',', map { ${ $_->[1] } =~ s/\s+$//r } @readers), join(',', ($want) x 3),
	'three sessions starting at once after a crash all read the checkpoint\'s rows');
my $restores = () = slurp_file($node->logfile, $offset) =~ /unlogged tables of database "postgres" returned to/g;
is($restores, 1, 'the database was restored once');
is(diff('u', 'snap_u'), '0', 'after the next crash the table is back at the second checkpoint');

# attach recreates an unlogged table of a checkpoint as unlogged
$node->safe_psql('postgres',
	"SELECT forst.attach('public.u', $ckpt2, as_table => 'u_clone')");
is($node->safe_psql('postgres', "SELECT relpersistence FROM pg_class WHERE relname = 'u_clone'"),
	'u', 'forst.attach recreates an unlogged table as unlogged');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM ((TABLE u_clone EXCEPT ALL TABLE snap_u) UNION ALL (TABLE snap_u EXCEPT ALL TABLE u_clone)) d"),
	'0', 'with the rows of the checkpoint');
$node->safe_psql('postgres', 'DROP TABLE u_clone');

# --- under load: a checkpoint in the middle, a crash later.  Each
# transaction adds d to row k of the unlogged table and appends (k, d, its
# xid) to a heap log; after the crash the table must equal the sums of the
# log rows whose transactions the checkpoint saw (its snapshot: xids below
# lo, and those listed as visible below xmax).
app(q{
CREATE UNLOGGED TABLE uc (k int PRIMARY KEY, v bigint NOT NULL) USING forst;
CREATE TABLE hl (k int NOT NULL, d int NOT NULL, x bigint NOT NULL);
});
my $script = $node->basedir . '/load.sql';
open(my $fh, '>', $script) or die;
print $fh q{\set k random(1, 3000)
\set d random(1, 100)
BEGIN;
INSERT INTO uc VALUES (:k, :d) ON CONFLICT (k) DO UPDATE SET v = uc.v + excluded.v;
INSERT INTO hl VALUES (:k, :d, txid_current());
COMMIT;
};
close($fh);
my ($lout, $lerr) = ('', '');
my $load = IPC::Run::start(
	[ $node->config_data('--bindir') . '/pgbench', '-n', '-c', '3', '-T', '30', '-f', $script,
	  '-U', 'app', '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$lout, '2>', \$lerr);
ok($node->poll_query_until('postgres', 'SELECT count(*) > 2000 FROM hl'), 'load is running');
my $ckpt_load = app('SELECT forst.checkpoint()');
my $rows_at_ckpt = app('SELECT count(*) FROM hl');
ok($node->poll_query_until('postgres', "SELECT count(*) > $rows_at_ckpt * 2 + 5000 FROM hl"),
	'the load went on after the checkpoint');
$node->stop('immediate');
$load->finish;
$node->start;
my $snap = $node->safe_psql('postgres', "SELECT forst.checkpoint_read($ckpt_load)->'snapshot'");
my $cmp = $node->safe_psql('postgres', qq{
WITH s AS (SELECT '$snap'::jsonb AS j),
     vis AS (SELECT (r->>0)::bigint AS a, (r->>1)::bigint AS b FROM s, jsonb_array_elements(j->'visible') r),
     seen AS (SELECT h.* FROM hl h, s
               WHERE h.x < (j->>'lo')::bigint
                  OR (h.x < (j->>'xmax')::bigint AND EXISTS (SELECT 1 FROM vis WHERE h.x BETWEEN a AND b))),
     want AS (SELECT k, sum(d)::bigint AS v FROM seen GROUP BY k)
SELECT (SELECT count(*) FROM (TABLE want EXCEPT TABLE uc) a) || '/' ||
       (SELECT count(*) FROM (TABLE uc EXCEPT TABLE want) b) || '/' ||
       (SELECT count(*) FROM seen) || '/' || (SELECT count(*) FROM hl)});
like($cmp, qr{^0/0/[1-9]\d*/\d+$},
	"after kill -9 under load the unlogged table equals the log's sums as of checkpoint $ckpt_load (missing/extra/seen/logged: $cmp)");
my ($seen_rows, $all_rows) = $cmp =~ m{/(\d+)/(\d+)$};
cmp_ok($seen_rows // 0, '<', $all_rows // 0, 'and the log holds transactions after the checkpoint');

# retention is per database: another database's checkpoints do not push
# out this one's, to which its unlogged tables would return
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other',
	'CREATE EXTENSION forst; CREATE TABLE o (k int PRIMARY KEY) USING forst; INSERT INTO o VALUES (1)');
$node->safe_psql('other', 'SELECT forst.checkpoint()') for 1 .. 4;
is($node->safe_psql('postgres', "SELECT count(*) FROM forst.checkpoint_ids() i WHERE i IN ($ckpt, $ckpt2)"),
	'2', "four checkpoints of another database leave this one's two (forst.checkpoints_retained = 3)");
is($node->safe_psql('postgres',
		"SELECT count(*) FROM forst.checkpoint_ids() i WHERE forst.checkpoint_read(i)->>'database' = 'other'"),
	'3', 'and keep three of the other database');

# --- watermarks return with the checkpoint: a job that replays its source
# from the checkpoint's offset emits the windows closed since then again,
# and their rows must be visible to it
app(q{
CREATE UNLOGGED TABLE uw (k int, w timestamptz, v int, PRIMARY KEY (k, w)) USING forst;
CREATE TABLE lw (k int, w timestamptz, v int, PRIMARY KEY (k, w)) USING forst;
INSERT INTO uw SELECT g % 5, '2026-01-01 00:00+00'::timestamptz + g * interval '1 minute', g
  FROM generate_series(1, 600) g;
INSERT INTO lw TABLE uw;
SELECT forst.set_ttl('uw', 'w', NULL), forst.set_ttl('lw', 'w', NULL);
SELECT forst.advance_watermark('uw', '2026-01-01 03:00+00'),
       forst.advance_watermark('lw', '2026-01-01 03:00+00');
});
my $ckw = app('SELECT forst.checkpoint()');
app('CREATE TABLE snap_uw AS TABLE uw');
is(app('SELECT count(*) FROM snap_uw'), '421', 'rows from the watermark 03:00 on are visible at the checkpoint');
is($node->safe_psql('postgres',
		"SELECT t->>'watermark_us' FROM jsonb_array_elements(forst.checkpoint_read($ckw)->'tables') t WHERE t->>'name' = 'public.uw'"),
	$node->safe_psql('postgres', "SELECT (extract(epoch FROM '2026-01-01 03:00+00'::timestamptz - '2000-01-01 00:00+00') * 1000000)::bigint"),
	'the checkpoint records the watermark its snapshot sees');
app(q{
SELECT forst.advance_watermark('uw', '2026-01-01 08:00+00'),
       forst.advance_watermark('lw', '2026-01-01 08:00+00');
INSERT INTO uw SELECT 9, '2026-01-01 12:00+00'::timestamptz + g * interval '1 second', g
  FROM generate_series(1, 20000) g;
});
is(app("SELECT count(*) FROM uw WHERE w < '2026-01-01 12:00+00'"), '121', 'a later watermark hides the windows up to 08:00');
$node->stop('immediate');
$offset = -s $node->logfile;
$node->start;
is(diff('uw', 'snap_uw'), '0', 'after kill -9 the unlogged table shows the rows its checkpoint\'s watermark left visible');
is(app("SELECT watermark FROM forst.tables WHERE \"table\" = 'uw'::regclass"), '2026-01-01 03:00:00+00',
	'its watermark is the checkpoint\'s');
is(app("SELECT watermark FROM forst.tables WHERE \"table\" = 'lw'::regclass"), '2026-01-01 08:00:00+00',
	'a logged table keeps its watermark (WAL)');
is(app('SELECT count(*) FROM lw'), '121', 'and its rows stay expired');
ok($node->log_contains(qr/watermark of unlogged table "uw" returned to/, $offset),
	'the server log says so');
# a crash with the watermark advanced again; the first statement after
# it advances the watermark, as a resuming job does
app(q{SELECT forst.advance_watermark('uw', '2026-01-01 09:00+00')});
$node->stop('immediate');
$node->start;
is(app(q{SELECT forst.advance_watermark('uw', '2026-01-01 05:00+00')}), '2026-01-01 05:00:00+00',
	'after a crash a job moves the watermark on from the checkpoint\'s');
is(app("SELECT count(*) FROM uw"), app("SELECT count(*) FROM snap_uw WHERE w >= '2026-01-01 05:00+00'"),
	'and sees the rows from there on');

# --- a standby from a base backup
app(q{UPDATE u SET v = 7 WHERE id = 1});
my $ckpt3 = app('SELECT forst.checkpoint()');
app('DELETE FROM snap_u; INSERT INTO snap_u TABLE u');
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;
app(q{UPDATE u SET v = 8 WHERE id = 1});   # after the checkpoint: not kept
$node->wait_for_catchup($standby);
($rc, $stdout, $stderr) = $standby->psql('postgres', 'SELECT count(*) FROM u');
like($stderr, qr/cannot access temporary or unlogged relations during recovery/,
	'a standby refuses to read an unlogged table');
is($standby->safe_psql('postgres', 'SELECT pos FROM offsets'), '12000',
	'and reads the logged ones');
$node->stop('immediate');
$standby->promote;
is($standby->safe_psql('postgres',
		"SELECT count(*) FROM ((TABLE u EXCEPT ALL TABLE snap_u) UNION ALL (TABLE snap_u EXCEPT ALL TABLE u)) d"),
	'0', "the promoted standby serves the unlogged table as of checkpoint $ckpt3");
$standby->stop;

done_testing();
