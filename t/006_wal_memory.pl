# A replay needs no more memtable memory than the primary had: the state of
# tables created (or truncated) by aborted transactions is dropped on
# replay too, and so is that of dropped tables.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('memory');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'forst'\nforst.memtable_size = '1MB'\nforst.memtable_memory = '8MB'");
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION forst; CREATE TABLE keep (id int PRIMARY KEY, v text) USING forst');
$node->safe_psql('postgres', "INSERT INTO keep SELECT g, 'kept' FROM generate_series(1, 1000) g");

# each round fills about 3 MB of memtables that the primary frees again
for my $i (1 .. 4)
{
	$node->safe_psql('postgres', qq{
BEGIN;
CREATE TABLE r$i (id int PRIMARY KEY, v text) USING forst;
INSERT INTO r$i SELECT g, repeat('x', 200) FROM generate_series(1, 10000) g;
ROLLBACK;
CREATE TABLE d$i (id int PRIMARY KEY, v text) USING forst;
INSERT INTO d$i SELECT g, repeat('x', 200) FROM generate_series(1, 10000) g;
DROP TABLE d$i;
BEGIN;
TRUNCATE keep;
INSERT INTO keep SELECT g, repeat('y', 200) FROM generate_series(1, 10000) g;
ROLLBACK;
});
}
is($node->safe_psql('postgres', "SELECT count(*), min(v) FROM keep"),
	'1000|kept', 'primary: rolled back and dropped rows are gone');

$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', "SELECT count(*), min(v) FROM keep"),
	'1000|kept', 'after a crash the replay fits in the same memory');
$node->safe_psql('postgres', "INSERT INTO keep SELECT g, 'more' FROM generate_series(1001, 2000) g");
$node->restart;
is($node->safe_psql('postgres', "SELECT count(*) FROM keep"),
	'2000', 'and after a clean restart');
$node->stop;
done_testing();
