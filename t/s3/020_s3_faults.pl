# forst on s3:// through a fault-injecting proxy (scripts/s3-fault-proxy.py)
# in front of the s3 step's S3 server (environment as t/s3/010).
#
#  - reads: 503 SlowDown, 429, connection resets and truncated bodies are
#    retried and the query returns the right rows;
#  - flushes: 503s, resets, uploads cut half-way and replies lost after the
#    write applied (create-if-absent of SSTs and manifests) are retried or
#    resolved; nothing is lost, before and after a restart;
#  - a 15 s outage under a write load: writers wait, the flush worker backs
#    off and stays up, and everything is flushed once the store is back;
#  - faults that persist give clear errors (58030 after the retries, 58000
#    for RequestTimeTooSkewed) and the server stays up.
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

my $rules = "$PostgreSQL::Test::Utils::tmp_check/fault-rules.json";
my $faults = "$PostgreSQL::Test::Utils::tmp_check/faults.log";
my $proxy_script = $ENV{FORST_FAULT_PROXY}
  || dirname(__FILE__) . '/../../scripts/s3-fault-proxy.py';
my $proxy_port = PostgreSQL::Test::Cluster::get_free_port();

# replaces the rules; the proxy re-reads them at its next request
my $generation = 0;
sub set_rules
{
	my ($json) = @_;
	my $tmp = "$rules.tmp";
	open my $fh, '>', $tmp or die "$tmp: $!";
	print $fh $json;
	close $fh;
	# a different size or mtime tells the proxy to reset its counters
	utime(undef, time + (++$generation), $tmp);
	rename $tmp, $rules or die "rename: $!";
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

my $prefix = "faults-$$-" . int(time);
my $node = PostgreSQL::Test::Cluster->new('faults');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 's3://$bucket/$prefix'
forst.s3_endpoint = 'http://127.0.0.1:$proxy_port'
forst.s3_access_key_id = '$ak'
forst.s3_secret_access_key = '$sk'
forst.s3_max_retries = 8
forst.memtable_size = '1MB'
forst.memtable_memory = '16MB'
# every read goes to the store (through the faults), none to the disk cache
forst.cache_size = 0
});
$node->start;

sub try_sql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$out, stderr => \$err, on_error_stop => 1);
	return ($rc, $out, $err);
}

sub wait_for
{
	my ($sql, $want) = @_;
	for (1 .. 900)
	{
		return 1 if $node->safe_psql('postgres', $sql) eq $want;
		sleep 0.1;
	}
	return 0;
}

my $twin = q{SELECT count(*), sum(hashtext(v)), max(k) FROM };
$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k bigint PRIMARY KEY, v text) USING forst;
CREATE TABLE h (k bigint PRIMARY KEY, v text);
});

# --- flushes through failing uploads ---------------------------------------
set_rules(q{[
 {"method": "PUT", "path": ".*/sst/", "action": "error", "status": 503, "code": "SlowDown", "times": 2},
 {"method": "PUT", "path": ".*/sst/", "action": "reset", "times": 1},
 {"method": "PUT", "path": ".*/sst/", "action": "cut", "times": 1},
 {"method": "PUT", "path": ".*/sst/", "action": "lost", "times": 2},
 {"method": "PUT", "path": ".*/manifest/", "action": "lost", "times": 2},
 {"method": "PUT", "path": ".*/manifest/", "action": "error", "status": 500, "code": "InternalError", "times": 1},
 {"method": "GET", "path": ".*list-type=2", "action": "error", "status": 429, "code": "TooManyRequests", "times": 1}
]});
for my $r (0 .. 9)
{
	$node->safe_psql('postgres', qq{
INSERT INTO f SELECT g, repeat('v', 200) || g FROM generate_series($r * 2000 + 1, ($r + 1) * 2000) g;
INSERT INTO h SELECT g, repeat('v', 200) || g FROM generate_series($r * 2000 + 1, ($r + 1) * 2000) g;
});
}
# count flushes, not files: once four level-0 files are there, a
# compaction may merge them into one, and the count of files drops
ok(wait_for(q{SELECT flushes >= 3 FROM forst.stats}, 't')
	  && wait_for(q{SELECT count(*) > 0 FROM forst.files WHERE "table" = 'f'::regclass}, 't'),
	'memtables were flushed to S3 through the faults')
  or diag($node->safe_psql('postgres',
	q{SELECT flushes, compactions, (SELECT count(*) FROM forst.files) FROM forst.stats}));
cmp_ok(fault_count(qr/^error PUT .*sst/), '==', 2, 'SST uploads got 503 SlowDown twice');
cmp_ok(fault_count(qr/^reset PUT .*sst/), '==', 1, 'an SST upload was reset');
cmp_ok(fault_count(qr/^cut PUT .*sst/), '==', 1, 'an SST upload was cut half-way');
cmp_ok(fault_count(qr/^lost PUT .*sst/), '==', 2, 'two SST uploads lost their replies after the write');
cmp_ok(fault_count(qr/^lost PUT .*manifest/), '==', 2,
	'two manifest creations lost their replies after the write');
my $expected = $node->safe_psql('postgres', $twin . 'h');
is($node->safe_psql('postgres', $twin . 'f'), $expected, 'the forst table equals its heap twin');
my $log = slurp_file($node->logfile);
unlike($log, qr/already exists/, 'no lost reply was taken for a lost race');

# --- reads through failing downloads ---------------------------------------
$node->restart;
set_rules(q{[
 {"method": "GET", "path": ".*/manifest/", "action": "error", "status": 503, "code": "SlowDown", "times": 1},
 {"method": "GET", "path": ".*/manifest/", "action": "reset", "times": 1},
 {"method": "GET", "path": ".*/manifest/", "action": "truncate", "times": 1},
 {"method": "GET", "path": ".*/sst/", "action": "truncate", "times": 2},
 {"method": "GET", "path": ".*/sst/", "action": "error", "status": 429, "code": "TooManyRequests", "times": 2},
 {"method": "GET", "path": ".*/sst/", "action": "reset", "times": 2}
]});
is($node->safe_psql('postgres', $twin . 'f'), $expected,
	'after a restart, reads through 503s, 429s, resets and truncated bodies are right');
cmp_ok(fault_count(qr/^truncate GET/), '>=', 2, 'truncated bodies were served');
cmp_ok(fault_count(qr/^reset GET/), '>=', 2, 'connections were reset');

# --- an outage under a write load -------------------------------------------
# Every request is reset for 15 s while a writer inserts about twice the
# memtable pool: the flushes fail (logged, backing off), the writer waits
# for memory instead of failing, and when the store is back everything is
# flushed by itself.
$node->safe_psql('postgres', 'CREATE TABLE fk (a int, b text) USING forst');
my $worker = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'forst flush'});
set_rules(q{[{"action": "reset"}]});
my $load = "$PostgreSQL::Test::Utils::tmp_check/outage-load.sql";
PostgreSQL::Test::Utils::append_to_file($load,
	join('', map { "INSERT INTO fk SELECT g, repeat('z', 1000) FROM generate_series(1, 1000) g;\n" } 1 .. 30));
my ($lout, $lerr) = ('', '');
my $writer = IPC::Run::start(
	[ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $load ],
	'>', \$lout, '2>', \$lerr);
sleep 15;
ok($writer->pumpable, 'during the outage the writer waits for memtable memory');
cmp_ok(fault_count(qr/^reset PUT .*sst/), '>', 0, 'the flushes meanwhile fail');
set_rules('[]');
my $t0 = time;
while ($writer->pumpable && time < $t0 + 120)
{
	$writer->pump_nb;
	sleep 0.2;
}
my $done = !$writer->pumpable;
$writer->kill_kill unless $done;
$writer->finish;
ok($done && $writer->result == 0, 'and finishes by itself once the store is back') or diag($lerr);
diag(sprintf('the writer finished %.1f s after the outage', time - $t0));
is($node->safe_psql('postgres', 'SELECT count(*) FROM fk'), '30000', 'every row is there');
ok(wait_for(q{SELECT count(*) > 0 FROM forst.files WHERE "table" = 'fk'::regclass}, 't'),
	'its memtables were flushed after the outage');
is($node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'forst flush'}),
	$worker, 'by the same flush worker (no restart)');
like(slurp_file($node->logfile), qr/forst: .*connection failed/, 'the failed flushes were logged');

# --- faults that persist ----------------------------------------------------
# fewer retries, changed with a reload
$node->safe_psql('postgres', 'ALTER SYSTEM SET forst.s3_max_retries = 2');
$node->reload;
sleep 0.3;
set_rules(q{[{"method": "GET", "action": "error", "status": 503, "code": "SlowDown"}]});
my ($rc, $out, $err) = try_sql($twin . 'f');
like($err, qr/ERROR:  58030: forst: .*throttling/, 'persistent SlowDown: SQLSTATE 58030');
like($err, qr/HINT:  The object store kept asking to slow down/, 'with a hint');

set_rules(q{[{"method": "GET", "action": "error", "status": 503, "code": "ServiceUnavailable"}]});
($rc, $out, $err) = try_sql($twin . 'f');
like($err, qr/ERROR:  58030: forst: .*after 3 attempts/, 'persistent 503: SQLSTATE 58030 after all retries');

set_rules(q{[{"method": "GET", "action": "error", "status": 403, "code": "RequestTimeTooSkewed"}]});
($rc, $out, $err) = try_sql($twin . 'f');
like($err, qr/ERROR:  58000: forst: .*RequestTimeTooSkewed/, 'clock skew: SQLSTATE 58000');
like($err, qr/HINT:  Synchronize this machine's clock/, 'with a hint');

set_rules('[]');
is($node->safe_psql('postgres', $twin . 'f'), $expected, 'reads again once the faults stop');
$node->restart;
is($node->safe_psql('postgres', $twin . 'f'), $expected, 'and after a restart: nothing lost');
is($node->safe_psql('postgres', 'SELECT count(*) FROM fk'), '30000', 'nor in the table written during the outage');
$log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal/, 'no process crashed');

$proxy->kill_kill;
$node->stop;
done_testing();
