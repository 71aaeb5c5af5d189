-- bench/pgbench/scan.sql: every row of the table, in no order.
SELECT count(*), sum(v) FROM @TABLE@;
