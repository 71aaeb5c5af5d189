-- bench/pgbench/range.sql: a range of 100 keys from a uniformly random key
-- of [1, :nkeys] (a seek and 100 rows in every key group's run).
\set k random(1, :nkeys - 99)
SELECT count(*), sum(v) FROM @TABLE@ WHERE k BETWEEN :k AND :k + 99;
