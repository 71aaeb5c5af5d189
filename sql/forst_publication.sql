-- Publications and forst tables (src/am/ddl/publication.c): logical
-- decoding cannot see forst tables' changes, so naming one in a
-- publication is refused and publications that would cover one warn.
\set VERBOSITY default
CREATE EXTENSION forst;
SET client_min_messages = warning;

CREATE TABLE pub_f (k bigint PRIMARY KEY, v text) USING forst;
CREATE TABLE pub_h (k bigint PRIMARY KEY, v text);

-- naming a forst table: refused, with the reason and a hint
CREATE PUBLICATION pub_a FOR TABLE pub_f;
CREATE PUBLICATION pub_a FOR TABLE pub_h, pub_f;
SELECT count(*) AS publications FROM pg_publication WHERE pubname = 'pub_a';

-- a heap table is fine; adding a forst table later is refused too
CREATE PUBLICATION pub_a FOR TABLE pub_h;
ALTER PUBLICATION pub_a ADD TABLE pub_f;
ALTER PUBLICATION pub_a SET TABLE pub_h, pub_f;
SELECT array_agg(tablename ORDER BY tablename) FROM pg_publication_tables WHERE pubname = 'pub_a';
ALTER PUBLICATION pub_a DROP TABLE pub_h;

-- a heap table in a publication cannot become a forst table
ALTER PUBLICATION pub_a ADD TABLE pub_h;
ALTER TABLE pub_h SET ACCESS METHOD forst;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'pub_h';

-- partitioned tables: a forst partition's changes would go through its
-- parent's publication, so neither can be published
CREATE TABLE pub_p (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE pub_p1 PARTITION OF pub_p (PRIMARY KEY (k)) FOR VALUES FROM (0) TO (10) USING forst;
CREATE PUBLICATION pub_b FOR TABLE pub_p;
CREATE TABLE pub_q (k int, v int) PARTITION BY RANGE (k);
CREATE PUBLICATION pub_b FOR TABLE pub_q;
CREATE TABLE pub_q1 PARTITION OF pub_q (PRIMARY KEY (k)) FOR VALUES FROM (0) TO (10) USING forst;
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'pub_q'::regclass;
-- a heap partition is fine
CREATE TABLE pub_q2 PARTITION OF pub_q FOR VALUES FROM (10) TO (20);
-- attaching a forst table is refused
CREATE TABLE pub_q3 (k int PRIMARY KEY, v int) USING forst;
ALTER TABLE pub_q ATTACH PARTITION pub_q3 FOR VALUES FROM (20) TO (30);
DROP TABLE pub_q3;
DROP PUBLICATION pub_b;
DROP TABLE pub_p, pub_q;

-- publications that cover forst tables without naming them: a warning
CREATE PUBLICATION pub_all FOR ALL TABLES;
CREATE SCHEMA pub_s;
CREATE TABLE pub_s.f1 (k int PRIMARY KEY) USING forst;
CREATE PUBLICATION pub_schema FOR TABLES IN SCHEMA pub_s;
-- and a forst table created under them
CREATE TABLE pub_s.f2 (k int PRIMARY KEY) USING forst;
-- a heap table there: nothing to say
CREATE TABLE pub_s.h1 (k int PRIMARY KEY);

DROP PUBLICATION pub_a, pub_all, pub_schema;
-- no publication left: no warning
CREATE TABLE pub_s.f3 (k int PRIMARY KEY) USING forst;
DROP SCHEMA pub_s CASCADE;
DROP TABLE pub_f, pub_h;
RESET client_min_messages;
DROP EXTENSION forst;
