-- bench/pgbench/upsert.sql: one keyed streaming-aggregate step, an
-- ON CONFLICT upsert of a uniformly random key of [1, :nkeys].  @TABLE@ is
-- replaced by bench/pgbench_vs_heap.sh (pgbench -M prepared cannot take a
-- table name as a variable).
\set k random(1, :nkeys)
INSERT INTO @TABLE@ AS t (k, v, payload) VALUES (:k, 1, 'new')
    ON CONFLICT (k) DO UPDATE SET v = t.v + excluded.v;
