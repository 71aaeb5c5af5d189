-- bench/pgbench/read.sql: a point read by primary key of a uniformly random
-- key of [1, :nkeys] (every key exists after the load).
\set k random(1, :nkeys)
SELECT v, payload FROM @TABLE@ WHERE k = :k;
