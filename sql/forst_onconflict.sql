-- INSERT ... ON CONFLICT and MERGE on forst tables, each statement run on a
-- forst table and on a heap twin, whose contents must stay equal.
CREATE EXTENSION IF NOT EXISTS forst;
SET timezone = 'UTC';

-- rows of two tables that differ (none when they are equal)
CREATE FUNCTION twin_diff(f regclass, h regclass) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    '(SELECT ''forst only: '' || x::text FROM (SELECT * FROM %s EXCEPT ALL SELECT * FROM %s) x)
     UNION ALL
     (SELECT ''heap only: '' || x::text FROM (SELECT * FROM %s EXCEPT ALL SELECT * FROM %s) x)
     ORDER BY 1', f, h, h, f);
END $$;

CREATE TABLE kv_f (k int PRIMARY KEY, v text, n int DEFAULT 0) USING forst;
CREATE TABLE kv_h (k int PRIMARY KEY, v text, n int DEFAULT 0) USING heap;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname = 'kv_f_pkey';
INSERT INTO kv_f VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO kv_h VALUES (1, 'a'), (2, 'b'), (3, 'c');

-- DO NOTHING, with and without a conflict target, with RETURNING
INSERT INTO kv_f VALUES (1, 'x') ON CONFLICT DO NOTHING;
INSERT INTO kv_h VALUES (1, 'x') ON CONFLICT DO NOTHING;
INSERT INTO kv_f VALUES (1, 'x'), (4, 'd') ON CONFLICT (k) DO NOTHING RETURNING *;
INSERT INTO kv_h VALUES (1, 'x'), (4, 'd') ON CONFLICT (k) DO NOTHING RETURNING *;
INSERT INTO kv_f VALUES (2, 'x') ON CONFLICT ON CONSTRAINT kv_f_pkey DO NOTHING RETURNING *;
INSERT INTO kv_h VALUES (2, 'x') ON CONFLICT ON CONSTRAINT kv_h_pkey DO NOTHING RETURNING *;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- DO UPDATE with EXCLUDED, a WHERE clause, RETURNING, ON CONSTRAINT
INSERT INTO kv_f VALUES (2, 'y') ON CONFLICT (k)
  DO UPDATE SET v = kv_f.v || excluded.v, n = kv_f.n + 1 RETURNING *;
INSERT INTO kv_h VALUES (2, 'y') ON CONFLICT (k)
  DO UPDATE SET v = kv_h.v || excluded.v, n = kv_h.n + 1 RETURNING *;
INSERT INTO kv_f AS t VALUES (2, 'z'), (3, 'z'), (5, 'e') ON CONFLICT ON CONSTRAINT kv_f_pkey
  DO UPDATE SET v = excluded.v WHERE t.v = 'c' RETURNING k, v, n;
INSERT INTO kv_h AS t VALUES (2, 'z'), (3, 'z'), (5, 'e') ON CONFLICT ON CONSTRAINT kv_h_pkey
  DO UPDATE SET v = excluded.v WHERE t.v = 'c' RETURNING k, v, n;
-- EXCLUDED sees what BEFORE would insert, including defaults
INSERT INTO kv_f (k, v) VALUES (5, 'f') ON CONFLICT (k)
  DO UPDATE SET n = excluded.n + 10, v = excluded.v RETURNING *;
INSERT INTO kv_h (k, v) VALUES (5, 'f') ON CONFLICT (k)
  DO UPDATE SET n = excluded.n + 10, v = excluded.v RETURNING *;
SELECT * FROM kv_f ORDER BY k;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- one statement proposing the same key twice
INSERT INTO kv_f VALUES (6, 'p'), (6, 'q') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO kv_h VALUES (6, 'p'), (6, 'q') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO kv_f VALUES (1, 'p'), (1, 'q') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO kv_h VALUES (1, 'p'), (1, 'q') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO kv_f VALUES (6, 'p'), (6, 'q') ON CONFLICT (k) DO NOTHING RETURNING *;
INSERT INTO kv_h VALUES (6, 'p'), (6, 'q') ON CONFLICT (k) DO NOTHING RETURNING *;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- DO UPDATE that changes the key, and one that collides
INSERT INTO kv_f VALUES (1, 'm') ON CONFLICT (k) DO UPDATE SET k = kv_f.k + 100 RETURNING *;
INSERT INTO kv_h VALUES (1, 'm') ON CONFLICT (k) DO UPDATE SET k = kv_h.k + 100 RETURNING *;
INSERT INTO kv_f VALUES (2, 'm') ON CONFLICT (k) DO UPDATE SET k = 3;
INSERT INTO kv_h VALUES (2, 'm') ON CONFLICT (k) DO UPDATE SET k = 3;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- in transactions: rollback, savepoints, REPEATABLE READ, own rows
BEGIN;
INSERT INTO kv_f VALUES (7, 'g') ON CONFLICT (k) DO UPDATE SET v = 'no';
SAVEPOINT s;
INSERT INTO kv_f VALUES (7, 'h') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
ROLLBACK TO s;
INSERT INTO kv_f VALUES (7, 'i') ON CONFLICT (k) DO UPDATE SET v = kv_f.v || excluded.v;
COMMIT;
BEGIN;
INSERT INTO kv_h VALUES (7, 'g') ON CONFLICT (k) DO UPDATE SET v = 'no';
SAVEPOINT s;
INSERT INTO kv_h VALUES (7, 'h') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
ROLLBACK TO s;
INSERT INTO kv_h VALUES (7, 'i') ON CONFLICT (k) DO UPDATE SET v = kv_h.v || excluded.v;
COMMIT;
BEGIN;
INSERT INTO kv_f VALUES (8, 'x') ON CONFLICT (k) DO NOTHING;
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
INSERT INTO kv_f VALUES (9, 'p'), (9, 'q') ON CONFLICT (k) DO NOTHING;
INSERT INTO kv_f VALUES (9, 'r') ON CONFLICT (k) DO UPDATE SET v = kv_f.v || excluded.v;
INSERT INTO kv_f VALUES (9, 's'), (4, 's') ON CONFLICT (k) DO UPDATE SET v = kv_f.v || excluded.v;
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
INSERT INTO kv_h VALUES (9, 'p'), (9, 'q') ON CONFLICT (k) DO NOTHING;
INSERT INTO kv_h VALUES (9, 'r') ON CONFLICT (k) DO UPDATE SET v = kv_h.v || excluded.v;
INSERT INTO kv_h VALUES (9, 's'), (4, 's') ON CONFLICT (k) DO UPDATE SET v = kv_h.v || excluded.v;
COMMIT;
-- a deleted key is free again
DELETE FROM kv_f WHERE k = 4;
DELETE FROM kv_h WHERE k = 4;
INSERT INTO kv_f VALUES (4, 'again') ON CONFLICT (k) DO UPDATE SET v = 'no' RETURNING *;
INSERT INTO kv_h VALUES (4, 'again') ON CONFLICT (k) DO UPDATE SET v = 'no' RETURNING *;
SELECT * FROM kv_f ORDER BY k;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- prepared (cached plans), PL/pgSQL, a data-modifying CTE
PREPARE up_f(int, text) AS
  INSERT INTO kv_f VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET n = kv_f.n + 1;
PREPARE up_h(int, text) AS
  INSERT INTO kv_h VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET n = kv_h.n + 1;
EXECUTE up_f(20, 'u'); EXECUTE up_f(20, 'u'); EXECUTE up_f(20, 'u');
EXECUTE up_f(21, 'u'); EXECUTE up_f(21, 'u'); EXECUTE up_f(21, 'u');
EXECUTE up_f(20, 'u'); EXECUTE up_f(20, 'u');
EXECUTE up_h(20, 'u'); EXECUTE up_h(20, 'u'); EXECUTE up_h(20, 'u');
EXECUTE up_h(21, 'u'); EXECUTE up_h(21, 'u'); EXECUTE up_h(21, 'u');
EXECUTE up_h(20, 'u'); EXECUTE up_h(20, 'u');
DO $$
BEGIN
  FOR i IN 1..30 LOOP
    INSERT INTO kv_f VALUES (30 + i % 4, 'plpgsql') ON CONFLICT (k) DO UPDATE SET n = kv_f.n + i;
    INSERT INTO kv_h VALUES (30 + i % 4, 'plpgsql') ON CONFLICT (k) DO UPDATE SET n = kv_h.n + i;
  END LOOP;
END $$;
WITH up AS (
  INSERT INTO kv_f VALUES (30, 'cte'), (40, 'cte') ON CONFLICT (k)
    DO UPDATE SET v = excluded.v RETURNING k, v)
SELECT * FROM up ORDER BY k;
WITH up AS (
  INSERT INTO kv_h VALUES (30, 'cte'), (40, 'cte') ON CONFLICT (k)
    DO UPDATE SET v = excluded.v RETURNING k, v)
SELECT * FROM up ORDER BY k;
SELECT * FROM kv_f WHERE k >= 20 ORDER BY k;
SELECT * FROM twin_diff('kv_f', 'kv_h');
EXPLAIN (COSTS OFF) INSERT INTO kv_f VALUES (1, 'x') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
-- the same plan on every store: no batched lookups (an s3:// store would
-- add a ForstBatchLookup node, t/s3/050_s3_batch_lookup.pl)
SET forst.batch_lookups = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  INSERT INTO kv_f VALUES (2, 'x'), (3, 'x'), (70, 'x') ON CONFLICT (k)
  DO UPDATE SET v = excluded.v WHERE kv_f.k = 2;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  INSERT INTO kv_h VALUES (2, 'x'), (3, 'x'), (70, 'x') ON CONFLICT (k)
  DO UPDATE SET v = excluded.v WHERE kv_h.k = 2;
RESET forst.batch_lookups;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- BEFORE ROW triggers fire for the insert attempt and for the update
CREATE FUNCTION bang() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN NEW.v := NEW.v || '!'; RETURN NEW; END $$;
CREATE TRIGGER bang_f BEFORE INSERT OR UPDATE ON kv_f FOR EACH ROW EXECUTE FUNCTION bang();
CREATE TRIGGER bang_h BEFORE INSERT OR UPDATE ON kv_h FOR EACH ROW EXECUTE FUNCTION bang();
INSERT INTO kv_f VALUES (71, 'a'), (2, 'b') ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING *;
INSERT INTO kv_h VALUES (71, 'a'), (2, 'b') ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING *;
DROP TRIGGER bang_f ON kv_f;
DROP TRIGGER bang_h ON kv_h;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- composite and text keys
CREATE TABLE tags_f (name text, lang text, n int NOT NULL, PRIMARY KEY (name, lang)) USING forst;
CREATE TABLE tags_h (name text COLLATE "C", lang text COLLATE "C", n int NOT NULL,
                     PRIMARY KEY (name, lang)) USING heap;
INSERT INTO tags_f AS t
  SELECT w, l, 1 FROM unnest(ARRAY['apple', 'Äpfel', 'pomme', '', 'a b']) w,
                      unnest(ARRAY['en', 'de']) l
  ON CONFLICT (name, lang) DO UPDATE SET n = t.n + 1;
INSERT INTO tags_h AS t
  SELECT w, l, 1 FROM unnest(ARRAY['apple', 'Äpfel', 'pomme', '', 'a b']) w,
                      unnest(ARRAY['en', 'de']) l
  ON CONFLICT (name, lang) DO UPDATE SET n = t.n + 1;
INSERT INTO tags_f AS t VALUES ('apple', 'en', 5), ('apple', 'fr', 5), ('Äpfel', 'de', 5)
  ON CONFLICT (lang, name) DO UPDATE SET n = t.n + excluded.n RETURNING *;
INSERT INTO tags_h AS t VALUES ('apple', 'en', 5), ('apple', 'fr', 5), ('Äpfel', 'de', 5)
  ON CONFLICT (lang, name) DO UPDATE SET n = t.n + excluded.n RETURNING *;
INSERT INTO tags_f VALUES ('pomme', 'fr', 1), ('pomme', 'en', 1) ON CONFLICT DO NOTHING RETURNING *;
INSERT INTO tags_h VALUES ('pomme', 'fr', 1), ('pomme', 'en', 1) ON CONFLICT DO NOTHING RETURNING *;
INSERT INTO tags_f AS t VALUES ('a b', 'en', 0) ON CONFLICT (name, lang)
  DO UPDATE SET name = 'ab', lang = 'xx' RETURNING *;
INSERT INTO tags_h AS t VALUES ('a b', 'en', 0) ON CONFLICT (name, lang)
  DO UPDATE SET name = 'ab', lang = 'xx' RETURNING *;
SELECT * FROM tags_f ORDER BY name, lang;
SELECT * FROM twin_diff('tags_f', 'tags_h');

-- the streaming-aggregation idiom: counts per user and 15-minute window,
-- folded in batch by batch
CREATE TABLE events (id int, user_id bigint, ts timestamptz);
INSERT INTO events
  SELECT g, g % 7, timestamptz '2026-01-01' + g * interval '37 seconds'
  FROM generate_series(1, 3000) g;
CREATE TABLE win_f (user_id bigint, window_start timestamptz, clicks bigint NOT NULL,
                    PRIMARY KEY (user_id, window_start)) USING forst;
CREATE TABLE win_h (user_id bigint, window_start timestamptz, clicks bigint NOT NULL,
                    PRIMARY KEY (user_id, window_start)) USING heap;
DO $$
BEGIN
  FOR b IN 0..5 LOOP
    INSERT INTO win_f AS t
      SELECT user_id, date_bin('15 minutes', ts, timestamptz '2026-01-01'), count(*)
      FROM events WHERE id % 6 = b GROUP BY 1, 2
      ON CONFLICT (user_id, window_start) DO UPDATE SET clicks = t.clicks + excluded.clicks;
    INSERT INTO win_h AS t
      SELECT user_id, date_bin('15 minutes', ts, timestamptz '2026-01-01'), count(*)
      FROM events WHERE id % 6 = b GROUP BY 1, 2
      ON CONFLICT (user_id, window_start) DO UPDATE SET clicks = t.clicks + excluded.clicks;
  END LOOP;
END $$;
SELECT count(*), sum(clicks), min(window_start), max(window_start) FROM win_f;
SELECT * FROM win_f WHERE user_id = 3 ORDER BY window_start LIMIT 3;
SELECT * FROM twin_diff('win_f', 'win_h');

-- a table without a primary key has no arbiter: ON CONFLICT DO NOTHING
-- just inserts, and a conflict target is refused, as for heap
CREATE TABLE nokey_f (a int, b text) USING forst;
INSERT INTO nokey_f VALUES (1, 'a'), (1, 'a') ON CONFLICT DO NOTHING;
INSERT INTO nokey_f VALUES (1, 'a') ON CONFLICT (a) DO NOTHING;
SELECT count(*) FROM nokey_f;

-- MERGE
MERGE INTO kv_f t USING (VALUES (5, 'm5'), (50, 'm50')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v);
MERGE INTO kv_h t USING (VALUES (5, 'm5'), (50, 'm50')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v);
MERGE INTO kv_f t USING (SELECT k FROM kv_f WHERE k >= 30) s ON t.k = s.k
  WHEN MATCHED AND t.k = 30 THEN DELETE
  WHEN MATCHED THEN UPDATE SET n = t.n * 2;
MERGE INTO kv_h t USING (SELECT k FROM kv_h WHERE k >= 30) s ON t.k = s.k
  WHEN MATCHED AND t.k = 30 THEN DELETE
  WHEN MATCHED THEN UPDATE SET n = t.n * 2;
-- the same target row twice, and a key taken by a NOT MATCHED insert
MERGE INTO kv_f t USING (VALUES (5, 'a'), (5, 'b')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v;
MERGE INTO kv_h t USING (VALUES (5, 'a'), (5, 'b')) s(k, v) ON t.k = s.k
  WHEN MATCHED THEN UPDATE SET v = s.v;
MERGE INTO kv_f t USING (VALUES (60, 'a'), (60, 'b')) s(k, v) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v);
MERGE INTO kv_h t USING (VALUES (60, 'a'), (60, 'b')) s(k, v) ON t.k = s.k
  WHEN NOT MATCHED THEN INSERT VALUES (s.k, s.v);
SELECT * FROM kv_f WHERE k >= 5 ORDER BY k;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- a row locked, then updated: the update reuses what the lock found only
-- while nothing of this transaction wrote the key (a trigger's update,
-- an earlier update, a rolled-back savepoint), with heap's outcomes
CREATE FUNCTION bump_same() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.n < 100 THEN
    EXECUTE format('UPDATE %I SET n = n + 100 WHERE k = $1', TG_TABLE_NAME) USING NEW.k;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER bump_f BEFORE UPDATE ON kv_f FOR EACH ROW WHEN (NEW.v = 'bump') EXECUTE FUNCTION bump_same();
CREATE TRIGGER bump_h BEFORE UPDATE ON kv_h FOR EACH ROW WHEN (NEW.v = 'bump') EXECUTE FUNCTION bump_same();
INSERT INTO kv_f VALUES (7, 'x', 1) ON CONFLICT (k) DO UPDATE SET v = 'bump';
INSERT INTO kv_h VALUES (7, 'x', 1) ON CONFLICT (k) DO UPDATE SET v = 'bump';
SELECT * FROM twin_diff('kv_f', 'kv_h');
DROP TRIGGER bump_f ON kv_f;
DROP TRIGGER bump_h ON kv_h;
BEGIN;
SELECT k, n FROM kv_f WHERE k = 3 FOR UPDATE;
UPDATE kv_f SET n = n + 1 WHERE k = 3;
UPDATE kv_f SET n = n + 1 WHERE k = 3;
SAVEPOINT s;
UPDATE kv_f SET n = n + 10 WHERE k = 3;
ROLLBACK TO s;
UPDATE kv_f SET n = n + 1 WHERE k = 3 RETURNING n;
SELECT k, n FROM kv_f WHERE k = 2 FOR UPDATE;
SAVEPOINT t;
UPDATE kv_f SET n = n + 5 WHERE k = 2 RETURNING n;
RELEASE t;
INSERT INTO kv_f VALUES (2, 'y') ON CONFLICT (k) DO UPDATE SET n = kv_f.n * 2 RETURNING n;
COMMIT;
BEGIN;
SELECT k, n FROM kv_h WHERE k = 3 FOR UPDATE;
UPDATE kv_h SET n = n + 1 WHERE k = 3;
UPDATE kv_h SET n = n + 1 WHERE k = 3;
SAVEPOINT s;
UPDATE kv_h SET n = n + 10 WHERE k = 3;
ROLLBACK TO s;
UPDATE kv_h SET n = n + 1 WHERE k = 3 RETURNING n;
SELECT k, n FROM kv_h WHERE k = 2 FOR UPDATE;
SAVEPOINT t;
UPDATE kv_h SET n = n + 5 WHERE k = 2 RETURNING n;
RELEASE t;
INSERT INTO kv_h VALUES (2, 'y') ON CONFLICT (k) DO UPDATE SET n = kv_h.n * 2 RETURNING n;
COMMIT;
SELECT * FROM twin_diff('kv_f', 'kv_h');

-- one statement upserting more keys than the lock table holds (64 locks
-- per connection): each row lock gives way to the version written
CREATE TABLE many (k bigint PRIMARY KEY, n int) USING forst;
INSERT INTO many SELECT g, 1 FROM generate_series(1, 30000) g;
INSERT INTO many SELECT g, 1 FROM generate_series(1, 30000) g
  ON CONFLICT (k) DO UPDATE SET n = many.n + excluded.n;
SELECT n, count(*) FROM many GROUP BY n;
BEGIN;
SELECT count(*) FROM (SELECT * FROM many WHERE k <= 5000 FOR UPDATE) s;
UPDATE many SET n = 0 WHERE k <= 5000;
SELECT count(*) AS row_locks_left FROM pg_locks WHERE locktype = 'tuple' AND pid = pg_backend_pid();
COMMIT;
DROP TABLE many;

DROP TABLE kv_f, kv_h, tags_f, tags_h, events, win_f, win_h, nokey_f;
DROP FUNCTION twin_diff, bang, bump_same;
DROP EXTENSION forst;
