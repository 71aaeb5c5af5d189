# An outage of the object store under load (issue 4): forst on s3:// through
# scripts/s3-fault-proxy.py, in front of the s3 step's S3 server
# (environment as t/s3/010), with the local disk cache on.
#
# The store goes down for FORST_S3_OUTAGE_SECONDS (default 300): the first
# half every request is refused (the proxy resets the connection), the
# second half every request is black-holed (held without an answer until
# the store is back, so forst's per-attempt timeouts fire).  Meanwhile
#
#  - readers (pgbench, 2 clients) look up rows of a table written before
#    the outage, whose SST files are in the disk cache: every lookup must
#    succeed and return the right row, and the disk cache serves them;
#  - writers (pgbench, 2 clients) insert into a forst table and its heap
#    twin in one transaction each: once the memtable pool is full (its
#    flushes fail) they wait for memory -- no error, no commit -- and when
#    the store is back they go on by themselves and finish.
#
# Afterwards the forst table equals its heap twin, before and after a
# restart; the flush worker is the one that started (no crash and restart
# loop); the log has no crash and no ERROR.
#
# The restart is after the store is back: a start that needs the store for
# catch-up refuses to start while it is down (a known limitation).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time sleep);
use File::Basename qw(dirname);

my ($ep, $bucket) = ($ENV{S3_ENDPOINT}, $ENV{S3_BUCKET});
my ($ak, $sk) = ($ENV{AWS_ACCESS_KEY_ID}, $ENV{AWS_SECRET_ACCESS_KEY});
plan skip_all => 'no S3 server (S3_ENDPOINT unset)' unless $ep && $bucket && $ak && $sk;
my ($ep_port) = $ep =~ /:(\d+)\/?$/;
my $outage = $ENV{FORST_S3_OUTAGE_SECONDS} || 300;
die "FORST_S3_OUTAGE_SECONDS must be a whole number of seconds >= 20"
  unless $outage =~ /^\d+$/ && $outage >= 20;
my $half = int($outage / 2);

my $tmp = $PostgreSQL::Test::Utils::tmp_check;
my $rules = "$tmp/outage-rules.json";
my $faults = "$tmp/outage-faults.log";
my $proxy_script = $ENV{FORST_FAULT_PROXY}
  || dirname(__FILE__) . '/../../scripts/s3-fault-proxy.py';
my $proxy_port = PostgreSQL::Test::Cluster::get_free_port();

# replaces the rules; the proxy re-reads them at its next request
my $generation = 0;
sub set_rules
{
	my ($json) = @_;
	my $new = "$rules.tmp";
	open my $fh, '>', $new or die "$new: $!";
	print $fh $json;
	close $fh;
	utime(undef, time + (++$generation), $new);
	rename $new, $rules or die "rename: $!";
}

sub fault_count
{
	my ($re) = @_;
	return 0 unless -f $faults;
	return scalar grep { /$re/ } split /\n/, slurp_file($faults);
}

set_rules('[]');
my ($pin, $pout) = ('', '');
my $proxy = IPC::Run::start([ 'python3', $proxy_script, $proxy_port, $ep_port, $rules, $faults ],
	'<', \$pin, '>', \$pout, '2>', \$pout);
IPC::Run::pump($proxy) until $pout =~ /listening/;

my $prefix = "outage-$$-" . int(time);
my $node = PostgreSQL::Test::Cluster->new('outage');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 's3://$bucket/$prefix'
forst.s3_endpoint = 'http://127.0.0.1:$proxy_port'
forst.s3_access_key_id = '$ak'
forst.s3_secret_access_key = '$sk'
forst.s3_request_timeout = '5s'
forst.memtable_size = '1MB'
forst.memtable_memory = '16MB'
# reads below the tiny per-backend block cache (and no shared one) go to
# the disk cache
forst.block_cache_size = '256kB'
forst.shared_block_cache_size = 0
forst.cache_size = '256MB'
});
$node->start;

sub wait_for
{
	my ($sql, $want, $seconds) = @_;
	my $end = time + ($seconds || 90);
	while (time < $end)
	{
		return 1 if $node->safe_psql('postgres', $sql) eq $want;
		sleep 0.2;
	}
	return 0;
}

my $twin = q{SELECT count(*), sum(hashtext(v)), max(k) FROM };
my $nread = 20000;
$node->safe_psql('postgres', qq{
CREATE EXTENSION forst;
CREATE TABLE r (k int PRIMARY KEY, v text) USING forst;
INSERT INTO r SELECT g, repeat('r', 200) || g FROM generate_series(1, $nread) g;
CREATE TABLE w (k bigint PRIMARY KEY, v text) USING forst;
CREATE TABLE wh (k bigint PRIMARY KEY, v text);
CREATE SEQUENCE wseq;
});
ok(wait_for(q{SELECT immutable = 0 FROM forst.memory()}, 't')
	  && wait_for(q{SELECT count(*) >= 1 FROM forst.files WHERE "table" = 'r'::regclass}, 't'),
	'the read table was flushed to S3 before the outage')
  or diag($node->safe_psql('postgres', q{SELECT m::text, (SELECT count(*) FROM forst.files) FROM forst.memory() m}));
my $worker = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'forst flush'});
isnt($worker, '', 'the flush worker runs');

# a wrong or missing row fails the transaction (division by zero), which
# pgbench reports as an aborted client
my $read_sql = "$tmp/outage-read.sql";
PostgreSQL::Test::Utils::append_to_file($read_sql, qq{\\set k random(1, $nread)
SELECT 1 / count(*) FROM r WHERE k = :k AND v = repeat('r', 200) || :k;
});
my $write_sql = "$tmp/outage-write.sql";
PostgreSQL::Test::Utils::append_to_file($write_sql, q{BEGIN;
SELECT nextval('wseq') AS n \gset
INSERT INTO w SELECT :n * 1000 + g, repeat('w', 1000) || g FROM generate_series(1, 200) g;
INSERT INTO wh SELECT :n * 1000 + g, repeat('w', 1000) || g FROM generate_series(1, 200) g;
COMMIT;
});

sub pgbench
{
	my ($script, $seconds, $out) = @_;
	return IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', $seconds,
			'-f', $script, $node->connstr('postgres')
		],
		'>', $out, '2>', $out);
}

sub processed
{
	my ($out) = @_;
	return $out =~ /number of transactions actually processed: (\d+)/ ? $1 : -1;
}

# --- writers start, then the store goes down ---------------------------------
my $wout = '';
my $writers = pgbench($write_sql, $outage + 10, \$wout);
ok(wait_for(q{SELECT count(*) >= 10 * 200 FROM wh}, 't', 60), 'the writers commit before the outage');

$node->safe_psql('postgres', 'SELECT forst.stats_reset()');
my $log_start = -s $node->logfile;
set_rules(q{[{"action": "reset"}]});
my $down = time;
diag("the store is down (connections reset) for ${half} s, then black-holed until ${outage} s");
my $rout = '';
my $readers = pgbench($read_sql, $outage - 5, \$rout);

sleep(($down + $half) - time);
set_rules(q{[{"action": "stall"}]});
my $mid = $node->safe_psql('postgres', 'SELECT count(*) FROM wh');
ok($writers->pumpable, 'at half-time the writers still run');

sleep(($down + $outage - 2) - time);
my $late = $node->safe_psql('postgres', 'SELECT count(*) FROM wh');
ok($writers->pumpable, 'at the end of the outage the writers still run (no error)');
is($late, $mid, 'and commit nothing more in its second half: they wait for memtable memory');
my $waiting = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'INSERT INTO w %' AND state = 'active'});
is($waiting, '2', 'both writers are in an INSERT into the forst table')
  or diag($node->safe_psql('postgres', q{SELECT state, wait_event, query FROM pg_stat_activity}));
$readers->finish;
my $reads = processed($rout);
is(($readers->results)[0], 0, 'the readers finished without an error') or diag($rout);
unlike($rout, qr/aborted|ERROR/, 'no read failed or found a wrong row');
cmp_ok($reads, '>=', 10 * ($outage - 5), 'the readers did at least 10 lookups a second');
diag("$reads lookups during the outage; the heap twin had $mid rows at half-time");
my ($hits, $misses, $failed) = split /\|/, $node->safe_psql('postgres',
	q{SELECT cache_hits, cache_misses, store_errors FROM forst.stats});
diag("disk cache hits $hits, misses $misses, failed store requests $failed");
cmp_ok($hits, '>=', $reads / 10, 'the disk cache served the lookups');
cmp_ok(fault_count(qr/^reset PUT .*sst/), '>', 0, 'flushes were refused');
cmp_ok(fault_count(qr/^stall PUT .*sst/), '>', 0, 'and black-holed');

# --- the store is back ---------------------------------------------------------
set_rules('[]');
my $up = time;
while ($writers->pumpable && time < $up + 240)
{
	$writers->pump_nb;
	sleep 0.2;
}
my $done = !$writers->pumpable;
$writers->kill_kill unless $done;
$writers->finish;
ok($done, 'the writers finish by themselves once the store is back');
diag(sprintf('the writers finished %.1f s after the outage', time - $up));
is(($writers->results)[0], 0, 'without an error') or diag($wout);
unlike($wout, qr/aborted|ERROR/, 'no write failed');
cmp_ok(processed($wout), '>', 0, 'the writers committed transactions');
# counters are published at transaction end: the writers' now
my ($stalls, $stall_ms) = split /\|/, $node->safe_psql('postgres',
	q{SELECT write_stalls, round(write_stall_ms) FROM forst.stats});
diag("write stalls $stalls, $stall_ms ms");
cmp_ok($stall_ms, '>=', 1000 * ($outage / 2), 'the writers waited (write stalls) through the outage');
ok(wait_for(q{SELECT immutable = 0 FROM forst.memory()}, 't', 120),
	'the memtables filled during the outage are flushed');
my $expected = $node->safe_psql('postgres', $twin . 'wh');
is($node->safe_psql('postgres', $twin . 'w'), $expected,
	'every committed row is in the forst table (equal to its heap twin)');
is($node->safe_psql('postgres', 'SELECT count(*) FROM wh'),
	200 * $node->safe_psql('postgres', 'SELECT last_value FROM wseq'),
	'every write transaction committed');
is($node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'forst flush'}),
	$worker, 'by the same flush worker (no restart)');

my $log = substr(slurp_file($node->logfile), $log_start);
like($log, qr/forst: .*(connection failed|timed out|timeout)/i, 'the failed flushes were logged');
# log_line_prefix '%m [%p] %q%a ': sessions have an application name,
# background workers (flush, compaction) none
my @errors = grep { /ERROR:/ } split /\n/, $log;
my @session_errors = grep { /\] \S+ ERROR:/ } @errors;
my @other_errors = grep { !/forst: .*: s3 \S+ .*(connection failed|timed out|timeout)/i } @errors;
is(scalar(@session_errors), 0, 'no query failed during the outage')
  or diag(join("\n", @session_errors[0 .. ($#session_errors < 9 ? $#session_errors : 9)]));
is(scalar(@other_errors), 0, 'the workers failed only on the unreachable store')
  or diag(join("\n", @other_errors[0 .. ($#other_errors < 9 ? $#other_errors : 9)]));
cmp_ok(scalar(@errors), '>', 0, 'while their failed attempts were logged');

$node->restart;
is($node->safe_psql('postgres', $twin . 'w'), $expected, 'after a restart nothing is lost');
is($node->safe_psql('postgres', "SELECT count(*) FROM r"), $nread, 'nor in the read table');
unlike(slurp_file($node->logfile), qr/terminated by signal/, 'no process crashed');

$proxy->kill_kill;
$node->stop;
done_testing();
