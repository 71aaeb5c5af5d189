# A prepared transaction that referenced rows of a forst table keeps them
# referenced across a restart: the key locks it kept, and the bucket locks
# it held beyond forst.key_share_locks_per_table, are recovered with it,
# and a delete of a referenced row waits for them.  The flag that makes
# deleters look for bucket holders lives in shared memory, which a restart
# forgets; with prepared transactions possible, deleters always look.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('fk_prepared');
$node->init(allows_streaming => 1);
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'forst'");
$node->append_conf('postgresql.conf', "max_prepared_transactions = 4");
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION forst;
CREATE TABLE p (k int PRIMARY KEY, v text) USING forst;
INSERT INTO p SELECT g, 'p' FROM generate_series(1, 100) g;
CREATE TABLE c (id int, k int REFERENCES p);
});

# one transaction that keeps key locks (k = 1), one that holds buckets (k = 2)
$node->safe_psql('postgres', q{
BEGIN;
INSERT INTO c VALUES (1, 1);
PREPARE TRANSACTION 'keys';
BEGIN;
SET LOCAL forst.key_share_locks_per_table = 0;
INSERT INTO c VALUES (2, 2);
PREPARE TRANSACTION 'buckets';
});
$node->restart;

for my $k (1, 2)
{
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET lock_timeout = '1s'; DELETE FROM p WHERE k = $k");
	like($err, qr/lock timeout/,
		"after a restart, a delete of key $k waits for the prepared transaction");
}
# a row no prepared transaction references goes at once
is($node->safe_psql('postgres',
		"SET lock_timeout = '5s'; DELETE FROM p WHERE k = 50 RETURNING k"),
	'50', 'an unreferenced row is deleted');

$node->safe_psql('postgres', "COMMIT PREPARED 'keys'; COMMIT PREPARED 'buckets'");
for my $k (1, 2)
{
	my ($rc, $out, $err) = $node->psql('postgres', "DELETE FROM p WHERE k = $k");
	like($err, qr/violates foreign key constraint/,
		"once committed, key $k is still referenced");
}
is($node->safe_psql('postgres', 'SELECT count(*) FROM c'), '2', 'both referencing rows are there');

$node->stop;
done_testing();
