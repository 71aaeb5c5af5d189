# A streaming standby follows the primary's flushes: it reads the SST files
# from the same object store, frees the memtables that each MANIFEST record
# covers, and so replays far more than its memtable pool holds without
# stalling.  It never writes to the object store; once promoted, it
# flushes on its own.
use strict;
use warnings;

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $store = PostgreSQL::Test::Utils::tempdir('store');
my $conf = qq{
shared_preload_libraries = 'forst'
forst.remote_dir = 'file://$store'
forst.memtable_size = '1MB'
forst.memtable_memory = '4MB'
};

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $conf);
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE f (k bigint, w int, v text, PRIMARY KEY (k, w)) USING forst;
CREATE TABLE h (k bigint, w int, v text, PRIMARY KEY (k, w));
});
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

# Every object in the store: "name size" lines.
sub store_listing
{
	my @l;
	find(sub { push @l, "$File::Find::name " . (-s $_) if -f $_ && !/^\./ }, $store);
	return join("\n", sort @l);
}

# ~15 MB of versions through a 4 MB pool on both servers
for my $r (1 .. 25)
{
	my $sql = qq{
INSERT INTO f SELECT ($r * 1500 + g) % 30000, g % 7, repeat('x', 200) || $r FROM generate_series(1, 2000) g
  ON CONFLICT (k, w) DO UPDATE SET v = excluded.v;
INSERT INTO h SELECT ($r * 1500 + g) % 30000, g % 7, repeat('x', 200) || $r FROM generate_series(1, 2000) g
  ON CONFLICT (k, w) DO UPDATE SET v = excluded.v;
DELETE FROM f WHERE k % 31 = $r % 31 AND w = 3;
DELETE FROM h WHERE k % 31 = $r % 31 AND w = 3;
};
	$primary->safe_psql('postgres', $sql);
}
$primary->wait_for_catchup($standby);

my $q = q{SELECT count(*) || ':' || md5(string_agg(k || '/' || w || '=' || v, ',' ORDER BY k, w)) FROM %s};
my $expect = $primary->safe_psql('postgres', sprintf($q, 'h'));
is($primary->safe_psql('postgres', sprintf($q, 'f')), $expect, 'primary: forst equals its heap twin');
is($standby->safe_psql('postgres', sprintf($q, 'f')), $expect,
	'standby: forst equals the heap twin after replaying more than its pool');
is($standby->safe_psql('postgres', q{SELECT v FROM f WHERE k = 1499 AND w = 1499 % 7}),
	$primary->safe_psql('postgres', q{SELECT v FROM f WHERE k = 1499 AND w = 1499 % 7}),
	'standby: a key lookup');

my $pv = $primary->safe_psql('postgres',
	q{SELECT manifest_version FROM forst.tables WHERE "table" = 'f'::regclass});
my ($sv, $smem) = split /\|/, $standby->safe_psql('postgres',
	q{SELECT manifest_version, memtables FROM forst.tables WHERE "table" = 'f'::regclass});
cmp_ok($pv, '>', 1, "the primary flushed (manifest version $pv)");
cmp_ok($sv, '>', 1, "the standby follows the manifest versions ($sv)");
cmp_ok($smem, '<=', 5, "the standby holds few memtables ($smem)");
ok(!$standby->log_contains(qr/waited \d+ s for memtable memory/),
	'standby replay never waited long for memtable memory');

# the standby reads, the primary is down: the store does not change
$primary->stop;
my $before = store_listing();
is($standby->safe_psql('postgres', sprintf($q, 'f')), $expect, 'standby answers with the primary down');
$standby->safe_psql('postgres', 'CHECKPOINT');
$standby->restart;
is($standby->safe_psql('postgres', sprintf($q, 'f')), $expect, 'and after its own restart');
is(store_listing(), $before, 'the standby wrote nothing to the object store');

# promoted, it writes and flushes by itself
$standby->promote;
$standby->safe_psql('postgres', q{
INSERT INTO f SELECT 100000 + g, 0, repeat('p', 200) FROM generate_series(1, 20000) g;
INSERT INTO h SELECT 100000 + g, 0, repeat('p', 200) FROM generate_series(1, 20000) g;
});
$standby->poll_query_until('postgres',
	qq{SELECT manifest_version > $sv FROM forst.tables WHERE "table" = 'f'::regclass})
  or die "the promoted standby does not flush";
isnt(store_listing(), $before, 'the promoted standby writes SST files');
$expect = $standby->safe_psql('postgres', sprintf($q, 'h'));
is($standby->safe_psql('postgres', sprintf($q, 'f')), $expect, 'promoted: forst equals its heap twin');
$standby->stop('immediate');
$standby->start;
is($standby->safe_psql('postgres', sprintf($q, 'f')), $expect, 'promoted: equal after a crash');
$standby->stop;
done_testing();
