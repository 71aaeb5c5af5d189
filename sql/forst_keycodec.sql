--
-- forst_keycodec: the memcomparable encoding of forst keys
-- (src/am/keys/keycodec.c) and key groups.  For every supported type, memcmp
-- order of the encodings is the btree order of the values ("C" collation
-- for strings), equal values encode identically, and the encodings and
-- key groups of fixed values are pinned (they are on-disk format).
--
CREATE EXTENSION forst;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET extra_float_digits = 0;
SET bytea_output = 'hex';

--
-- Ordering.  For each type, a table of edge values; then
--   sorted:   ORDER BY the encoding = ORDER BY the value
--   pairwise: for every pair, (x < y) = (enc(x) < enc(y)) and
--             (x = y) = (enc(x) = enc(y))  (bytea compares with memcmp)
--

-- bool
CREATE TEMP TABLE k_bool (v bool);
INSERT INTO k_bool VALUES (true), (false);
SELECT 'bool' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_bool;
SELECT 'bool' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_bool x, k_bool y;

-- int2
CREATE TEMP TABLE k_int2 (v int2);
INSERT INTO k_int2 VALUES (-32768), (-256), (-1), (0), (1), (255), (256), (32767);
SELECT 'int2' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_int2;
SELECT 'int2' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_int2 x, k_int2 y;

-- int4
CREATE TEMP TABLE k_int4 (v int4);
INSERT INTO k_int4 VALUES (-2147483648), (-65536), (-1), (0), (1), (42), (65535), (65536), (2147483647);
SELECT 'int4' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_int4;
SELECT 'int4' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_int4 x, k_int4 y;

-- int8
CREATE TEMP TABLE k_int8 (v int8);
INSERT INTO k_int8 VALUES (-9223372036854775808), (-4294967296), (-1), (0), (1), (42), (4294967296), (9223372036854775807);
SELECT 'int8' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_int8;
SELECT 'int8' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_int8 x, k_int8 y;

-- oid
CREATE TEMP TABLE k_oid (v oid);
INSERT INTO k_oid VALUES (0), (1), (255), (2147483647), (2147483648), (4294967295);
SELECT 'oid' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_oid;
SELECT 'oid' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_oid x, k_oid y;

-- float4
CREATE TEMP TABLE k_float4 (v float4);
INSERT INTO k_float4 VALUES ('-Infinity'), ('-3.4028235e38'), (-1), (-0.5), ('-1.4e-45'), ('-0.0'), (0), ('1.4e-45'), ('1.17549435e-38'), (0.5), (1), ('3.4028235e38'), ('Infinity'), ('NaN'), ('NaN'::float4 * -1);
SELECT 'float4' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_float4;
SELECT 'float4' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_float4 x, k_float4 y;

-- float8
CREATE TEMP TABLE k_float8 (v float8);
INSERT INTO k_float8 VALUES ('-Infinity'), ('-1.7976931348623157e308'), (-1), (-0.5), ('-4.9e-324'), ('-0.0'), (0), ('4.9e-324'), ('2.2250738585072014e-308'), (0.5), (1), ('1.7976931348623157e308'), ('Infinity'), ('NaN'), ('NaN'::float8 * -1);
SELECT 'float8' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_float8;
SELECT 'float8' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_float8 x, k_float8 y;

-- date
CREATE TEMP TABLE k_date (v date);
INSERT INTO k_date VALUES ('-infinity'), ('4713-01-01 BC'), ('1970-01-01'), ('1999-12-31'), ('2000-01-01'), ('2000-01-02'), ('5874897-12-31'), ('infinity');
SELECT 'date' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_date;
SELECT 'date' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_date x, k_date y;

-- time
CREATE TEMP TABLE k_time (v time);
INSERT INTO k_time VALUES ('00:00'), ('00:00:00.000001'), ('12:34:56.789'), ('23:59:59.999999'), ('24:00');
SELECT 'time' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_time;
SELECT 'time' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_time x, k_time y;

-- timestamp
CREATE TEMP TABLE k_timestamp (v timestamp);
INSERT INTO k_timestamp VALUES ('-infinity'), ('4713-01-01 00:00 BC'), ('1970-01-01'), ('1999-12-31 23:59:59.999999'), ('2000-01-01'), ('2000-01-01 00:00:00.000001'), ('294276-12-31 23:59:59.999999'), ('infinity');
SELECT 'timestamp' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_timestamp;
SELECT 'timestamp' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_timestamp x, k_timestamp y;

-- timestamptz
CREATE TEMP TABLE k_timestamptz (v timestamptz);
INSERT INTO k_timestamptz VALUES ('-infinity'), ('4713-01-01 00:00+00 BC'), ('1970-01-01 00:00+00'), ('1999-12-31 23:59:59.999999+00'), ('2000-01-01 00:00+01'), ('2000-01-01 00:00+00'), ('294276-12-31 23:59:59.999999+00'), ('infinity');
SELECT 'timestamptz' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_timestamptz;
SELECT 'timestamptz' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_timestamptz x, k_timestamptz y;

-- uuid
CREATE TEMP TABLE k_uuid (v uuid);
INSERT INTO k_uuid VALUES ('00000000-0000-0000-0000-000000000000'), ('00000000-0000-0000-0000-000000000001'), ('00ffffff-ffff-ffff-ffff-ffffffffffff'), ('01000000-0000-0000-0000-000000000000'), ('7fffffff-ffff-ffff-ffff-ffffffffffff'), ('80000000-0000-0000-0000-000000000000'), ('ffffffff-ffff-ffff-ffff-fffffffffffe'), ('ffffffff-ffff-ffff-ffff-ffffffffffff');
SELECT 'uuid' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_uuid;
SELECT 'uuid' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_uuid x, k_uuid y;

-- char
CREATE TEMP TABLE k_char (v "char");
INSERT INTO k_char VALUES (''), (E'\\001'), (' '), ('A'), ('a'), ('z'), (E'\\177'), (E'\\200'), (E'\\377');
SELECT 'char' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_char;
SELECT 'char' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_char x, k_char y;

-- name
CREATE TEMP TABLE k_name (v name COLLATE "C");
INSERT INTO k_name VALUES (''), ('A'), ('a'), ('a b'), ('ab'), ('abc'), ('b'), ('pg_class'), (repeat('z', 63));
SELECT 'name' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_name;
SELECT 'name' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_name x, k_name y;

-- text
CREATE TEMP TABLE k_text (v text COLLATE "C");
INSERT INTO k_text VALUES (''), (' '), (E'\x01'), ('A'), ('Z'), ('a'), (E'a\x01'), ('a '), ('a b'), ('ab'), ('abc'), ('b'), ('~'), (E'\x7f'), ('é'), (repeat('x', 3000)), (repeat('x', 3000) || 'y');
SELECT 'text' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_text;
SELECT 'text' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_text x, k_text y;

-- varchar
CREATE TEMP TABLE k_varchar (v varchar(4000) COLLATE "C");
INSERT INTO k_varchar VALUES (''), (' '), (E'\x01'), ('A'), ('a'), (E'a\x01'), ('a '), ('ab'), ('abc'), ('b'), ('é');
SELECT 'varchar' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_varchar;
SELECT 'varchar' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_varchar x, k_varchar y;

-- bpchar
CREATE TEMP TABLE k_bpchar (v char(5) COLLATE "C");
INSERT INTO k_bpchar VALUES (''), (' '), (E'\x01'), ('a'), ('a '), ('a  '), (E'a\x01'), ('a b'), ('ab'), ('ab '), ('abc'), ('b');
SELECT 'bpchar' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_bpchar;
SELECT 'bpchar' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_bpchar x, k_bpchar y;

-- bytea
CREATE TEMP TABLE k_bytea (v bytea);
INSERT INTO k_bytea VALUES ('\x'), ('\x00'), ('\x0000'), ('\x000000'), ('\x0001'), ('\x00ff'), ('\x00ff00'), ('\x01'), ('\x61'), ('\x6100'), ('\x610000'), ('\x6101'), ('\x6162'), ('\xff'), ('\xff00'), ('\xffff');
SELECT 'bytea' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_bytea;
SELECT 'bytea' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq
FROM k_bytea x, k_bytea y;

-- numeric: edge values, then random ones of every size and scale
CREATE TEMP TABLE k_numeric (v numeric);
INSERT INTO k_numeric VALUES ('-Infinity'), ('Infinity'), ('NaN'), (0), (0.000), (-0.0),
  (1), (1.0), (1.00), (-1), (10), (100), (0.1), (0.01), (-0.1), (-10), (9.99), (10.01),
  (0.0001), (0.00010), (1e-100), (-1e-100), (1e100), (-1e100), (1.0000000000000000001),
  (0.9999999999999999999), (-0.9999999999999999999), (123456789012345678901234567890.5),
  (-123456789012345678901234567890.5), (9999), (10000), (99999999), (100000000), (0.12), (0.1201), (-0.12), (-0.1201);
SELECT setseed(0.5);
INSERT INTO k_numeric
  SELECT round((random() - 0.5)::numeric * power(10::numeric, floor(random() * 40)::int - 20),
               floor(random() * 25)::int)
  FROM generate_series(1, 300);
SELECT 'numeric' AS type, count(*) AS n,
       array_agg(v ORDER BY forst.encode_key(v)) = array_agg(v ORDER BY v) AS sorted
FROM k_numeric;
SELECT 'numeric' AS type,
       bool_and((x.v < y.v) = (forst.encode_key(x.v) < forst.encode_key(y.v))) AS lt,
       bool_and((x.v = y.v) = (forst.encode_key(x.v) = forst.encode_key(y.v))) AS eq,
       bool_and(btrim(forst.decode_key(forst.encode_key(x.v), 'numeric'), '()')::numeric = x.v) AS decodes
FROM k_numeric x, k_numeric y;

--
-- Equal values encode identically.
--
SELECT forst.encode_key('-0.0'::float8) = forst.encode_key('0.0'::float8) AS float8_zero,
       forst.encode_key('-0.0'::float4) = forst.encode_key('0.0'::float4) AS float4_zero,
       forst.encode_key('NaN'::float8 * -1) = forst.encode_key('NaN'::float8) AS float8_nan,
       forst.encode_key('ab '::char(5)) = forst.encode_key('ab'::char(5)) AS bpchar_spaces,
       forst.encode_key('ab '::bpchar) = forst.encode_key('ab'::bpchar) AS bpchar_unbounded,
       forst.encode_key('ab'::varchar) = forst.encode_key('ab'::text) AS varchar_text,
       forst.encode_key('2000-01-01 01:00+01'::timestamptz)
         = forst.encode_key('2000-01-01 00:00+00'::timestamptz) AS timestamptz_zones,
       forst.encode_key(1.5::numeric) = forst.encode_key(1.500::numeric) AS numeric_scale;
-- but trailing spaces count in text and varchar
SELECT forst.encode_key('ab '::text) = forst.encode_key('ab'::text) AS text_spaces;

--
-- The encodings of fixed values (on-disk format: these must never change).
--
SELECT forst.encode_key(false) AS bool_f, forst.encode_key(true) AS bool_t,
       forst.encode_key(1::int2) AS int2_1, forst.encode_key(-1::int2) AS int2_m1,
       forst.encode_key(1::int4) AS int4_1, forst.encode_key(-1::int4) AS int4_m1,
       forst.encode_key(42::int8) AS int8_42,
       forst.encode_key('-9223372036854775808'::int8) AS int8_min;
SELECT forst.encode_key(4294967295::oid) AS oid_max, forst.encode_key(1::oid) AS oid_1,
       forst.encode_key(1::float4) AS f4_1, forst.encode_key(-1::float4) AS f4_m1,
       forst.encode_key('-0'::float4) AS f4_mzero, forst.encode_key('NaN'::float4) AS f4_nan,
       forst.encode_key('Infinity'::float4) AS f4_inf;
SELECT forst.encode_key(1::float8) AS f8_1, forst.encode_key(-1::float8) AS f8_m1,
       forst.encode_key('NaN'::float8) AS f8_nan, forst.encode_key('-Infinity'::float8) AS f8_minf;
SELECT forst.encode_key('2000-01-01'::date) AS date_2000,
       forst.encode_key('infinity'::date) AS date_inf,
       forst.encode_key('-infinity'::timestamp) AS ts_minf,
       forst.encode_key('2000-01-01 00:00:01'::timestamp) AS ts,
       forst.encode_key('2000-01-01 00:00:01+00'::timestamptz) AS tstz,
       forst.encode_key('00:00:01'::time) AS "time";
SELECT forst.encode_key('01234567-89ab-cdef-0123-456789abcdef'::uuid) AS "uuid",
       forst.encode_key('x'::"char") AS "char",
       forst.encode_key('pg'::name) AS "name";
SELECT forst.encode_key(''::text) AS empty, forst.encode_key('ab'::text) AS text_ab,
       forst.encode_key('ab  '::char(4)) AS bpchar_ab, forst.encode_key('ab'::varchar) AS varchar_ab,
       forst.encode_key('\x'::bytea) AS bytea_empty, forst.encode_key('\x00ff'::bytea) AS bytea_00ff,
       forst.encode_key('\x610062'::bytea) AS bytea_a0b;
SELECT forst.encode_key(1.5::numeric) AS numeric_1_5, forst.encode_key(-1.5::numeric) AS numeric_m1_5,
       forst.encode_key(0::numeric) AS numeric_0, forst.encode_key(0.00120::numeric) AS numeric_small,
       forst.encode_key('NaN'::numeric) AS numeric_nan, forst.encode_key('-Infinity'::numeric) AS numeric_minf,
       forst.key_group(1.5::numeric) AS numeric_group;
-- several columns concatenate; VARIADIC arrays work too
SELECT forst.encode_key(42::int8, 'ab'::text) AS int8_text,
       forst.encode_key('ab'::text, 42::int4) AS text_int4,
       forst.encode_key(VARIADIC ARRAY[1, 2]) = forst.encode_key(1, 2) AS variadic_array;
-- domains encode as their base types
CREATE DOMAIN posint AS int4 CHECK (VALUE > 0);
CREATE DOMAIN shorttext AS text CHECK (length(VALUE) < 10);
SELECT forst.encode_key(5::posint) = forst.encode_key(5::int4) AS domain_int,
       forst.encode_key('abc'::shorttext) = forst.encode_key('abc'::text) AS domain_text,
       forst.key_group(5::posint) = forst.key_group(5::int4) AS domain_group;

--
-- Multi-column keys: ordering by the concatenated encodings is ORDER BY
-- (a, b), and the encoding of the first column is a byte prefix of the key.
--
CREATE TEMP TABLE k_int8_text (a int8, b text COLLATE "C");
INSERT INTO k_int8_text
SELECT a, b
FROM unnest(ARRAY[-9223372036854775808, -1, 0, 1, 255, 256, 9223372036854775807]::int8[]) a,
     unnest(ARRAY['', 'a', E'a\x01', 'a ', 'ab', 'b', 'é']) b;
SELECT count(*) AS n,
       array_agg(ROW(a, b) ORDER BY forst.encode_key(a, b)) = array_agg(ROW(a, b) ORDER BY a, b) AS sorted,
       bool_and(substr(forst.encode_key(a, b), 1, length(forst.encode_key(a))) = forst.encode_key(a))
         AS prefix
FROM k_int8_text;
SELECT bool_and(((x.a, x.b) < (y.a, y.b)) = (forst.encode_key(x.a, x.b) < forst.encode_key(y.a, y.b))) AS lt,
       bool_and(((x.a, x.b) = (y.a, y.b)) = (forst.encode_key(x.a, x.b) = forst.encode_key(y.a, y.b))) AS eq
FROM k_int8_text x, k_int8_text y;

CREATE TEMP TABLE k_text_int4 (a text COLLATE "C", b int4);
INSERT INTO k_text_int4
SELECT a, b
FROM unnest(ARRAY['', ' ', E'\x01', 'a', E'a\x01', 'a ', 'ab', 'abc', 'b', 'é', repeat('q', 300)]) a,
     unnest(ARRAY[-2147483648, -1, 0, 1, 256, 2147483647]) b;
SELECT count(*) AS n,
       array_agg(ROW(a, b) ORDER BY forst.encode_key(a, b)) = array_agg(ROW(a, b) ORDER BY a, b) AS sorted,
       bool_and(substr(forst.encode_key(a, b), 1, length(forst.encode_key(a))) = forst.encode_key(a))
         AS prefix
FROM k_text_int4;
SELECT bool_and(((x.a, x.b) < (y.a, y.b)) = (forst.encode_key(x.a, x.b) < forst.encode_key(y.a, y.b))) AS lt,
       bool_and(((x.a, x.b) = (y.a, y.b)) = (forst.encode_key(x.a, x.b) = forst.encode_key(y.a, y.b))) AS eq
FROM k_text_int4 x, k_text_int4 y;

-- more rows: pseudo-random (text, int8) keys
CREATE TEMP TABLE k_random AS
SELECT substr(md5(i::text), 1, (i % 5)) AS a, (hashint4(i)::int8 << 20) AS b
FROM generate_series(1, 2000) i;
ALTER TABLE k_random ALTER a TYPE text COLLATE "C";
SELECT count(*) AS n,
       array_agg(ROW(a, b) ORDER BY forst.encode_key(a, b)) = array_agg(ROW(a, b) ORDER BY a, b) AS sorted
FROM k_random;

--
-- Decoding (forst.decode_key shows keys as error details would).
--
SELECT forst.decode_key(forst.encode_key(42::int8, 'hello'::text), 'int8', 'text') AS int8_text;
SELECT forst.decode_key(forst.encode_key(true, '-32768'::int2, '-2147483648'::int4,
                                         9223372036854775807::int8, 4294967295::oid),
                        'bool', 'int2', 'int4', 'int8', 'oid') AS integers;
SELECT forst.decode_key(forst.encode_key('-Infinity'::float4, 'NaN'::float4, '-0'::float8,
                                         '1.5'::float8, '-2.25'::float8),
                        'float4', 'float4', 'float8', 'float8', 'float8') AS floats;
SELECT forst.decode_key(forst.encode_key('-infinity'::date, '2000-02-29'::date,
                                         '23:59:59.999999'::time,
                                         'infinity'::timestamp, '2024-05-06 07:08:09.123456+00'::timestamptz),
                        'date', 'date', 'time', 'timestamp', 'timestamptz') AS times;
SELECT forst.decode_key(forst.encode_key('01234567-89ab-cdef-0123-456789abcdef'::uuid, 'x'::"char",
                                         'pg_class'::name, ''::text, 'a b'::varchar, 'ab  '::char(4),
                                         '\x00ff0001'::bytea),
                        'uuid', '"char"', 'name', 'text', 'varchar', 'bpchar', 'bytea') AS others;
SELECT forst.decode_key(forst.encode_key(7::posint), 'posint') AS domain;
-- malformed keys are refused, not misread
SELECT forst.decode_key('\x', 'int4');
SELECT forst.decode_key('\x800000', 'int4');
SELECT forst.decode_key('\x8000000100', 'int4');
SELECT forst.decode_key('\x02', 'bool');
SELECT forst.decode_key('\x616200', 'text');
SELECT forst.decode_key('\x61620002', 'text');
SELECT forst.decode_key('\x6100ff0001', 'text');
SELECT forst.decode_key('\x6100ff0001', 'bytea');
SELECT forst.decode_key(convert_to(repeat('n', 64), 'UTF8') || '\x0001'::bytea, 'name');
SELECT forst.decode_key('\x80000001', 'numeric');

--
-- Key groups: hash_bytes_extended(encoding of the first key column, 0)
-- % max_key_groups.  Fixed values pin the function (on-disk format).
--
SELECT forst.key_group(42::bigint) AS int8_42, forst.key_group(42) AS int4_42,
       forst.key_group('abc'::text) AS text_abc, forst.key_group('abc'::text, 16) AS text_abc_16,
       forst.key_group('abc'::text, 32768) AS text_abc_32768,
       forst.key_group('01234567-89ab-cdef-0123-456789abcdef'::uuid) AS "uuid",
       forst.key_group(0::bigint, 1) AS one_group;
SELECT i, forst.key_group(i::bigint) AS kg, forst.key_group(i::bigint, 32768) AS kg_32768
FROM generate_series(1, 5) i;
-- equal values, same group; the group is that of the first column's encoding
SELECT forst.key_group('-0.0'::float8) = forst.key_group('0.0'::float8) AS zero,
       forst.key_group('ab '::char(3)) = forst.key_group('ab'::char(3)) AS bpchar,
       forst.key_group('ab'::varchar) = forst.key_group('ab'::text) AS varchar_text;
-- 10000 integer keys spread over all 128 groups, evenly
SELECT count(*) AS groups, min(n), max(n), max(n)::float8 / min(n) < 2 AS balanced
FROM (SELECT forst.key_group(i::bigint) AS g, count(*) AS n
      FROM generate_series(1, 10000) i GROUP BY 1) s;
SELECT count(*) AS groups, min(n), max(n), max(n)::float8 / min(n) < 2 AS balanced
FROM (SELECT forst.key_group('user' || i) AS g, count(*) AS n
      FROM generate_series(1, 10000) i GROUP BY 1) s;
SELECT count(DISTINCT forst.key_group(i, 16)) AS groups_16,
       min(forst.key_group(i, 16)), max(forst.key_group(i, 16))
FROM generate_series(1, 1000) i;
-- bounds of max_key_groups
SELECT forst.key_group(1, 0);
SELECT forst.key_group(1, 32769);
SELECT forst.key_group(1, -1);
SELECT forst.key_group(1, 1) AS one, forst.key_group(1, 32768) < 32768 AS max_ok;
SELECT forst.key_group(NULL::int) IS NULL AS strict;

--
-- Unsupported types and NULLs.
--
SELECT forst.key_group('127.0.0.1'::inet);
SELECT forst.key_group('1 day'::interval);
SELECT forst.key_group(ARRAY[1]);
SELECT forst.encode_key(1, '1 day'::interval);
SELECT forst.encode_key('{"a": 1}'::jsonb);
SELECT forst.encode_key(ARRAY[1, 2]);
SELECT forst.encode_key('abc');
SELECT forst.encode_key(NULL::int4);
SELECT forst.encode_key(1, NULL::text);
SELECT forst.encode_key(VARIADIC ARRAY[1, NULL]);

--
-- The check on a forst table's key columns (forst._check_key_columns runs
-- it on any table).
--
CREATE DOMAIN money2 AS numeric(10, 2);
CREATE TYPE mood AS enum ('sad', 'happy');
CREATE TEMP TABLE kc (i int, b bigint, tc text COLLATE "C", tp varchar COLLATE "POSIX",
                      nc name, u uuid, d posint, dt shorttext COLLATE "C",
                      t text, bp char(3), n numeric, iv interval, arr int4[], js jsonb,
                      dn money2, m mood, rec k_bool);
SELECT forst._check_key_columns('kc', 'i');
SELECT forst._check_key_columns('kc', 'b', 'tc', 'tp', 'nc', 'u', 'd', 'dt');
SELECT forst._check_key_columns('kc', 'i', 'n');
SELECT forst._check_key_columns('kc', 'iv');
SELECT forst._check_key_columns('kc', 'arr');
SELECT forst._check_key_columns('kc', 'js');
SELECT forst._check_key_columns('kc', 'dn');
SELECT forst._check_key_columns('kc', 'm');
SELECT forst._check_key_columns('kc', 'rec');
SELECT forst._check_key_columns('kc', 't');
SELECT forst._check_key_columns('kc', 'i', 'bp');
SELECT forst._check_key_columns('kc', 'ctid');
SELECT forst._check_key_columns('kc', 'nope');
SELECT forst._check_key_columns('kc', VARIADIC '{}'::name[]);

DROP EXTENSION forst;
DROP SCHEMA forst;
