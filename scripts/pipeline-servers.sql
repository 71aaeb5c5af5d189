-- scripts/pipeline-servers.sql -- the streaming job of scripts/demo.sh
-- --servers N (docs/scale-out.md, "The main job on several servers"): the
-- job of scripts/pipeline.sql with its keyed state spread over several
-- servers by key group, one instance of the job per server, as Flink runs
-- one parallel subtask per slot.
--
-- Run after scripts/pipeline.sql (with the same parameters), with psql
-- variable role:
--   instance     on each server that may run an instance.  The source log
--                (nexmark.events, replayed by every server's generator as a
--                topic is to every consumer), its generator and
--                pipeline.config stay; the single-server job's state,
--                outputs and steps are dropped, and the instance's are
--                created.  With variable initial set (on one server), also
--                the job's tables for all 128 key groups, as shards
--                pipeline.<table>_kg0_128, which the coordinator then
--                rescales over the servers.
--   coordinator  on the coordinator, with variable ports (the instance
--                servers' ports, comma-separated, in order s1, s2, ...):
--                postgres_fdw servers s1 .. sN; the job's tables distributed
--                by key group, all on s1 at first (forst.distribute);
--                pipeline.rescale, which moves them together to a new layout
--                (forst.rescale), and pipeline.checkpoint, which takes one
--                distributed checkpoint of them; and views that merge the
--                instances' partial outputs into the job's outputs, under
--                the names scripts/pipeline-verify.sql reads.
--
-- Every table of the job is keyed by its grouping key first (auction,
-- seller), so that its rows spread over key groups; an instance folds the
-- events whose key is in its key groups.  Per key group, the source offset
-- is a row of pipeline.source_offsets, which moves with the key group's
-- state: a range of key groups is applied exactly once, whatever server
-- holds it.  q5 (the most bid-on auctions of each hopping window) and q7
-- (the highest bid of each tumbling window) are global per window: each
-- range emits its own winners (q5_top, q7_top) and the coordinator's views
-- pick the overall ones.  Seller activity is keyed, so each range's rows
-- are final.
\set ON_ERROR_STOP 1
\if :{?role}
\else
\set role none
\endif
SELECT :'role' = 'instance' AS is_instance, :'role' = 'coordinator' AS is_coordinator,
       :'role' IN ('instance', 'coordinator') AS role_ok \gset
\if :role_ok
\else
DO $$ BEGIN
    RAISE EXCEPTION 'role must be instance or coordinator'
        USING ERRCODE = 'invalid_parameter_value';
END $$;
\endif

-- The single-server job's state, outputs and steps: replaced below.
DROP VIEW pipeline.state_size;
DROP FUNCTION pipeline.step(), pipeline.expire(pipeline.config, timestamptz);
DROP PROCEDURE pipeline.run(bigint, interval);
DROP TABLE pipeline.offsets, pipeline.q5_state, pipeline.q7_state, pipeline.seller_state,
           pipeline.q5_hot_items, pipeline.q7_highest_bid, pipeline.seller_activity, pipeline.samples;

-- The job's tables, each keyed by its grouping key first.
CREATE FUNCTION pipeline.job_tables() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
SELECT ARRAY['source_offsets', 'q5_state', 'q7_state', 'seller_state', 'q5_top', 'q7_top', 'seller_windows']
$$;

-- Creates them as pipeline.<table><suffix>, using access method am.
CREATE FUNCTION pipeline.create_job_tables(suffix text, am name) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- per key group: the last event applied to its state, and the
    -- watermark; kg_key is a key of key group kg (the row lives with it)
    EXECUTE format('CREATE TABLE pipeline.%I (kg_key bigint PRIMARY KEY, kg int NOT NULL,
        last_id bigint NOT NULL, watermark timestamptz NOT NULL, batches bigint NOT NULL) USING %I',
        'source_offsets' || suffix, am);
    -- q5: bids per auction per hopping window
    EXECUTE format('CREATE TABLE pipeline.%I (auction bigint, window_start timestamptz, bids bigint NOT NULL,
        PRIMARY KEY (auction, window_start)) USING %I', 'q5_state' || suffix, am);
    -- q7: the highest bid per auction per tumbling window (ties: the earliest)
    EXECUTE format('CREATE TABLE pipeline.%I (auction bigint, window_start timestamptz, price bigint NOT NULL,
        bid_id bigint NOT NULL, bidder bigint NOT NULL, PRIMARY KEY (auction, window_start)) USING %I',
        'q7_state' || suffix, am);
    -- auctions opened and their reserves per seller per tumbling window
    EXECUTE format('CREATE TABLE pipeline.%I (seller bigint, window_start timestamptz, auctions bigint NOT NULL,
        reserve_sum bigint NOT NULL, PRIMARY KEY (seller, window_start)) USING %I', 'seller_state' || suffix, am);
    -- outputs: per range and closed window, its most bid-on auctions, its
    -- highest bid, and the sellers' activity
    EXECUTE format('CREATE TABLE pipeline.%I (auction bigint, window_start timestamptz, window_end timestamptz NOT NULL,
        bids bigint NOT NULL, PRIMARY KEY (auction, window_start)) USING %I', 'q5_top' || suffix, am);
    EXECUTE format('CREATE TABLE pipeline.%I (auction bigint, window_start timestamptz, window_end timestamptz NOT NULL,
        price bigint NOT NULL, bid_id bigint NOT NULL, bidder bigint NOT NULL,
        PRIMARY KEY (auction, window_start)) USING %I', 'q7_top' || suffix, am);
    EXECUTE format('CREATE TABLE pipeline.%I (seller bigint, window_start timestamptz, window_end timestamptz NOT NULL,
        auctions bigint NOT NULL, reserve_sum bigint NOT NULL, PRIMARY KEY (seller, window_start)) USING %I',
        'seller_windows' || suffix, am);
END $$;

\if :is_instance
------------------------------------------------------------------------
-- An instance: the shards on this server, pipeline.<table>_kg<lo>_<hi>
-- (forst.rescale names them so), one set per range of key groups.
------------------------------------------------------------------------

-- This server's ranges of key groups, from its offset shards; every table
-- of the job must have a shard of each.
CREATE FUNCTION pipeline.my_ranges(OUT lo int, OUT hi int, OUT suffix text)
RETURNS SETOF record LANGUAGE plpgsql STABLE AS $$
DECLARE
    missing text;
BEGIN
    SELECT string_agg(format('pipeline.%s%s', t, format('_kg%s_%s', m[1], m[2])), ', ') INTO missing
      FROM pg_class c, regexp_match(c.relname, '^source_offsets_kg(\d+)_(\d+)$') m, unnest(pipeline.job_tables()) t
     WHERE c.relnamespace = 'pipeline'::regnamespace AND m IS NOT NULL
       AND to_regclass(format('pipeline.%I', t || format('_kg%s_%s', m[1], m[2]))) IS NULL;
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'pipeline: this server lacks shards of the job: %', missing
            USING ERRCODE = 'undefined_table',
                  HINT = 'Every table of the job must be in the same layout: CALL pipeline.rescale(...) on the coordinator again.';
    END IF;
    RETURN QUERY
    SELECT m[1]::int, m[2]::int, format('_kg%s_%s', m[1], m[2])
      FROM pg_class c, regexp_match(c.relname, '^source_offsets_kg(\d+)_(\d+)$') m
     WHERE c.relnamespace = 'pipeline'::regnamespace AND m IS NOT NULL
     ORDER BY 1;
END $$;

-- The state tables' watermarks from a range's watermark: rows of windows
-- the job has emitted expire.  With ttl_column, first their TTL column
-- (window_start), which attach carries and setting again leaves as it is.
CREATE FUNCTION pipeline.apply_expiry(suffix text, wm timestamptz, ttl_column bool DEFAULT false) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    c pipeline.config;
BEGIN
    SELECT * INTO c FROM pipeline.config;
    IF ttl_column THEN
        PERFORM forst.set_ttl(format('pipeline.%I', t || suffix)::regclass, 'window_start', NULL)
           FROM unnest(ARRAY['q5_state', 'q7_state', 'seller_state']) t;
    END IF;
    IF wm > '-infinity' THEN
        PERFORM forst.advance_watermark(format('pipeline.%I', 'q5_state' || suffix)::regclass,
                                        wm - c.hop_size + interval '1 microsecond'),
                forst.advance_watermark(format('pipeline.%I', 'q7_state' || suffix)::regclass,
                                        wm - c.tumble_size + interval '1 microsecond'),
                forst.advance_watermark(format('pipeline.%I', 'seller_state' || suffix)::regclass,
                                        wm - c.tumble_size + interval '1 microsecond');
    END IF;
END $$;

-- A range's offset: its key groups' rows, locked.  They are equal, since
-- a step moves them together and a rescale moves whole key groups; after
-- a merge of ranges restored from different cuts they would not be.
CREATE FUNCTION pipeline.range_offset(suffix text, lo int, hi int, lock bool,
    OUT last_id bigint, OUT watermark timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    o record;
BEGIN
    EXECUTE format('SELECT count(*) AS n, min(last_id) AS last_lo, max(last_id) AS last_hi,
                           min(watermark) AS wm_lo, max(watermark) AS wm_hi
                      FROM (SELECT * FROM pipeline.%I %s) x',
                   'source_offsets' || suffix, CASE WHEN lock THEN 'FOR UPDATE' ELSE '' END) INTO o;
    IF o.n <> hi - lo OR o.last_lo <> o.last_hi OR o.wm_lo <> o.wm_hi THEN
        RAISE EXCEPTION 'pipeline: key groups [%,%) have % offset rows, at events % to %', lo, hi, o.n, o.last_lo, o.last_hi
            USING ERRCODE = 'data_corrupted',
                  HINT = 'A range of key groups is applied from one offset: rescale at a barrier, where every instance has reached the same event.';
    END IF;
    last_id := o.last_lo;
    watermark := o.wm_lo;
END $$;

-- One step: for each range of this server (the caller's
-- pipeline.my_ranges(), which a run reads once: ranges change only at
-- barriers, between runs), the next batch of the log after its offset (not
-- past event until), its key groups' events folded into the state, the
-- windows the new watermark closes emitted, the state expired, the offset
-- stored.  The caller commits: all of it, or none.  Returns the events of
-- the log passed.
CREATE FUNCTION pipeline.instance_step(until bigint, ranges jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    c        pipeline.config;
    r        record;
    o        record;
    hi       bigint;
    max_t    timestamptz;
    wm       timestamptz;
    kgs      int[];
    consumed bigint := 0;
BEGIN
    SELECT * INTO c FROM pipeline.config;
    FOR r IN SELECT * FROM jsonb_to_recordset(ranges) AS x(lo int, hi int, suffix text) LOOP
        o := pipeline.range_offset(r.suffix, r.lo, r.hi, true);
        SELECT max(id), max(at) INTO hi, max_t
          FROM nexmark.events WHERE id > o.last_id AND id <= least(o.last_id + c.batch, until);
        CONTINUE WHEN hi IS NULL;
        -- the range's key groups; the event's key is a bid's auction, an
        -- auction's seller
        kgs := ARRAY(SELECT generate_series(r.lo, r.hi - 1));

        EXECUTE format($q$
            INSERT INTO pipeline.%I AS s (auction, window_start, bids)
            SELECT e.auction, w.window_start, count(*)
              FROM nexmark.events e, forst.hop_windows(e.at, $4, $5) w
             WHERE e.id > $1 AND e.id <= $2 AND e.kind = 'bid'
               AND forst.key_group(CASE e.kind WHEN 'bid' THEN e.auction ELSE e.seller END) = ANY ($3)
             GROUP BY 1, 2
            ON CONFLICT (auction, window_start) DO UPDATE SET bids = s.bids + excluded.bids$q$,
            'q5_state' || r.suffix)
        USING o.last_id, hi, kgs, c.hop_size, c.hop_slide;

        EXECUTE format($q$
            INSERT INTO pipeline.%I AS s (auction, window_start, price, bid_id, bidder)
            SELECT DISTINCT ON (1, 2) e.auction, forst.tumble_start(e.at, $4), e.price, e.id, e.bidder
              FROM nexmark.events e
             WHERE e.id > $1 AND e.id <= $2 AND e.kind = 'bid'
               AND forst.key_group(CASE e.kind WHEN 'bid' THEN e.auction ELSE e.seller END) = ANY ($3)
             ORDER BY 1, 2, e.price DESC, e.id
            ON CONFLICT (auction, window_start) DO UPDATE
               SET price = excluded.price, bid_id = excluded.bid_id, bidder = excluded.bidder
             WHERE excluded.price > s.price OR (excluded.price = s.price AND excluded.bid_id < s.bid_id)$q$,
            'q7_state' || r.suffix)
        USING o.last_id, hi, kgs, c.tumble_size;

        EXECUTE format($q$
            INSERT INTO pipeline.%I AS s (seller, window_start, auctions, reserve_sum)
            SELECT e.seller, forst.tumble_start(e.at, $4), count(*), sum(e.reserve)
              FROM nexmark.events e
             WHERE e.id > $1 AND e.id <= $2 AND e.kind = 'auction'
               AND forst.key_group(CASE e.kind WHEN 'bid' THEN e.auction ELSE e.seller END) = ANY ($3)
             GROUP BY 1, 2
            ON CONFLICT (seller, window_start) DO UPDATE
               SET auctions = s.auctions + excluded.auctions, reserve_sum = s.reserve_sum + excluded.reserve_sum$q$,
            'seller_state' || r.suffix)
        USING o.last_id, hi, kgs, c.tumble_size;

        -- the watermark: no later event is older than max_t - jitter (the
        -- log's, not the range's: every range closes a window at the same event)
        wm := greatest(o.watermark, max_t - c.jitter_us * interval '1 microsecond');

        -- the range's winners of each window the watermark closes; windows
        -- emitted earlier are expired, hence invisible here
        EXECUTE format($q$
            INSERT INTO pipeline.%I (auction, window_start, window_end, bids)
            SELECT auction, window_start, window_start + $1, bids
              FROM (SELECT s.*, rank() OVER (PARTITION BY window_start ORDER BY bids DESC) AS r
                      FROM pipeline.%I s WHERE window_start <= $2 - $1) ranked
             WHERE r = 1$q$, 'q5_top' || r.suffix, 'q5_state' || r.suffix)
        USING c.hop_size, wm;
        EXECUTE format($q$
            INSERT INTO pipeline.%I (auction, window_start, window_end, price, bid_id, bidder)
            SELECT DISTINCT ON (window_start) auction, window_start, window_start + $1, price, bid_id, bidder
              FROM pipeline.%I WHERE window_start <= $2 - $1
             ORDER BY window_start, price DESC, bid_id$q$, 'q7_top' || r.suffix, 'q7_state' || r.suffix)
        USING c.tumble_size, wm;
        EXECUTE format($q$
            INSERT INTO pipeline.%I (seller, window_start, window_end, auctions, reserve_sum)
            SELECT seller, window_start, window_start + $1, auctions, reserve_sum
              FROM pipeline.%I WHERE window_start <= $2 - $1$q$, 'seller_windows' || r.suffix, 'seller_state' || r.suffix)
        USING c.tumble_size, wm;

        PERFORM pipeline.apply_expiry(r.suffix, wm);
        EXECUTE format('UPDATE pipeline.%I SET last_id = $1, watermark = $2, batches = batches + 1',
                       'source_offsets' || r.suffix)
        USING hi, wm;
        consumed := consumed + (hi - o.last_id);
    END LOOP;
    RETURN consumed;
END $$;

-- Drops every shard of the job on this server (a failover: the job's
-- tables come back from a distributed checkpoint instead).
CREATE FUNCTION pipeline.drop_job_tables() RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    n int := 0;
BEGIN
    FOR r IN SELECT c.oid::regclass AS tbl
               FROM pg_class c, unnest(pipeline.job_tables()) t
              WHERE c.relnamespace = 'pipeline'::regnamespace AND c.relkind = 'r'
                AND c.relname ~ ('^' || t || '_kg\d+_\d+$') LOOP
        EXECUTE format('DROP TABLE %s', r.tbl);
        n := n + 1;
    END LOOP;
    RETURN n;
END $$;

-- This server's lowest offset over its ranges (NULL: no range).
CREATE FUNCTION pipeline.instance_offset() RETURNS bigint
LANGUAGE sql AS $$
SELECT min((pipeline.range_offset(r.suffix, r.lo, r.hi, false)).last_id) FROM pipeline.my_ranges() r
$$;

-- One run of this server's instance, for the demo's events/s per server.
CREATE TABLE pipeline.instance_runs (
    started    timestamptz PRIMARY KEY,
    ended      timestamptz NOT NULL,
    from_id    bigint NOT NULL,
    until      bigint NOT NULL,
    consumed   bigint NOT NULL,
    ranges     text NOT NULL,
    key_groups int[] NOT NULL
);

-- The runs with the events of the log they passed that are of their key
-- groups (bids by auction, auctions by seller), counted when asked, after
-- the job: neither a step nor a run pays for the figure.
CREATE VIEW pipeline.instance_run_rates AS
SELECT r.*,
       (SELECT count(*) FROM nexmark.events e
         WHERE e.id > r.from_id AND e.id <= r.until
           AND forst.key_group(CASE e.kind WHEN 'bid' THEN e.auction ELSE e.seller END) = ANY (r.key_groups)) AS keyed,
       greatest(extract(epoch FROM r.ended - r.started), 0.001) AS secs
  FROM pipeline.instance_runs r;

-- Runs this server's instance until every range of it has reached event
-- until (a barrier, or the end of the log), waiting for the generator when
-- it is behind, printing progress about once a second (sample_every).
CREATE PROCEDURE pipeline.instance_run(until bigint)
LANGUAGE plpgsql AS $$
DECLARE
    c         pipeline.config;
    r         record;
    started   timestamptz := clock_timestamp();
    ended     timestamptz;
    tick      timestamptz := clock_timestamp();
    from_id   bigint := pipeline.instance_offset();
    ranges    jsonb;
    shown     text;
    n         bigint;
    consumed  bigint := 0;
    tick_c    bigint := 0;
    secs      float8;
BEGIN
    SELECT * INTO c FROM pipeline.config;
    SELECT jsonb_agg(jsonb_build_object('lo', m.lo, 'hi', m.hi, 'suffix', m.suffix) ORDER BY m.lo),
           string_agg(format('[%s,%s)', m.lo, m.hi), ' ' ORDER BY m.lo)
      INTO ranges, shown FROM pipeline.my_ranges() m;
    IF ranges IS NULL THEN
        RAISE NOTICE 'no key groups on this server: nothing to run';
        RETURN;
    END IF;
    FOR r IN SELECT * FROM jsonb_to_recordset(ranges) AS x(lo int, hi int, suffix text) LOOP
        PERFORM pipeline.apply_expiry(r.suffix, (pipeline.range_offset(r.suffix, r.lo, r.hi, false)).watermark, true);
    END LOOP;
    COMMIT;
    LOOP
        n := pipeline.instance_step(until, ranges);
        COMMIT;
        consumed := consumed + n;
        IF n = 0 THEN
            EXIT WHEN pipeline.instance_offset() >= until;
            PERFORM pg_sleep(0.02);
        END IF;
        secs := extract(epoch FROM clock_timestamp() - tick);
        IF secs >= extract(epoch FROM c.sample_every) THEN
            RAISE NOTICE '%s  key groups %  events %  %/s of the log',
                pipeline.pad(to_char(extract(epoch FROM clock_timestamp() - started), 'FM9990.0'), 6), shown,
                pipeline.pad(pipeline.instance_offset()::text, 8),
                pipeline.pad(round((consumed - tick_c) / secs)::text, 6);
            tick := clock_timestamp();
            tick_c := consumed;
        END IF;
    END LOOP;
    ended := clock_timestamp();
    INSERT INTO pipeline.instance_runs
    VALUES (started, ended, from_id, until, consumed, shown,
            ARRAY(SELECT generate_series(x.lo, x.hi - 1) FROM jsonb_to_recordset(ranges) AS x(lo int, hi int)));
    secs := greatest(extract(epoch FROM ended - started), 0.001);
    RAISE NOTICE 'key groups % reached event % in % s: % events of the log (%/s)',
        shown, until, round(secs::numeric, 1), consumed, round(consumed / secs);
END $$;

\if :{?initial}
-- All 128 key groups on this server, at the start of the log.
SELECT pipeline.create_job_tables('_kg0_128', 'forst');
INSERT INTO pipeline.source_offsets_kg0_128
SELECT DISTINCT ON (forst.key_group(k)) k, forst.key_group(k), 0, '-infinity', 0
  FROM generate_series(0::bigint, 100000) k
 ORDER BY forst.key_group(k), k;
SELECT count(*) = 128 AS all_key_groups FROM pipeline.source_offsets_kg0_128 \gset
\if :all_key_groups
\else
DO $$ BEGIN
    RAISE EXCEPTION 'pipeline: no key of every key group below 100000' USING ERRCODE = 'internal_error';
END $$;
\endif
SELECT pipeline.apply_expiry('_kg0_128', '-infinity', true);
\endif
\endif

\if :is_coordinator
------------------------------------------------------------------------
-- The coordinator: the job's tables distributed over the instance
-- servers, and its outputs as one would read them from one server.
------------------------------------------------------------------------
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
SELECT format('CREATE SERVER s%s FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host %L, port %L, dbname %L)',
              i, '127.0.0.1', p, current_database()),
       format('CREATE USER MAPPING FOR CURRENT_USER SERVER s%s', i)
  FROM unnest(string_to_array(:'ports', ',')) WITH ORDINALITY u(p, i) \gexec

-- The job's tables on s1 at first, all 128 key groups, as shards named by
-- their range (the instance's initial tables there)
SELECT pipeline.create_job_tables('_template', 'heap');
SELECT forst.distribute('pipeline.' || t, format('pipeline.%I', t || '_template')::regclass,
                        ARRAY['s1']::name[], ARRAY['[0,128)']::int4range[],
                        remote_table => format('pipeline.%I', t || '_kg0_128'))
  FROM unnest(pipeline.job_tables()) t;
SELECT format('DROP TABLE pipeline.%I', t || '_template') FROM unnest(pipeline.job_tables()) t \gexec

-- The job's tables moved to a new layout together: forst.rescale of one
-- of them with the others colocated, fenced, checkpointed once per moving
-- server and switched in one transaction.  The instances must be paused
-- at a barrier.
CREATE PROCEDURE pipeline.rescale(servers name[], key_groups int4range[])
LANGUAGE plpgsql AS $$
DECLARE
    tabs regclass[];
BEGIN
    SELECT array_agg(format('pipeline.%I', t)::regclass) INTO tabs FROM unnest(pipeline.job_tables()) t;
    CALL forst.rescale(tabs[1], servers, key_groups, colocated => tabs[2:]);
END $$;

-- A distributed checkpoint of the job's tables: one checkpoint per server
-- for all of them, recorded as one object.  At a barrier (every instance
-- at the same event) it is one cut of the job: every key group's state,
-- outputs and offset at that event.
CREATE FUNCTION pipeline.checkpoint() RETURNS bigint
LANGUAGE sql AS $$
SELECT forst.checkpoint_distributed(t[1], with_tables => t[2:])
  FROM (SELECT array_agg(format('pipeline.%I', x)::regclass ORDER BY k) AS t
          FROM unnest(pipeline.job_tables()) WITH ORDINALITY u(x, k)) s
$$;

-- The layout of n servers: s1 holds all 128 key groups; then, for each
-- further server, the last of the widest ranges gives it its upper half
-- (from n to n + 1 servers, one range splits and nothing else moves).
CREATE FUNCTION pipeline.layout(n int, OUT servers name[], OUT key_groups int4range[])
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    w int;
    k int;
BEGIN
    IF n IS NULL OR n < 1 OR n > 128 THEN
        RAISE EXCEPTION 'pipeline: 1 to 128 servers, not %', n USING ERRCODE = 'invalid_parameter_value';
    END IF;
    servers := ARRAY['s1']::name[];
    key_groups := ARRAY['[0,128)'::int4range];
    FOR i IN 2 .. n LOOP
        SELECT max(upper(x) - lower(x)) INTO w FROM unnest(key_groups) x;
        SELECT max(j) INTO k FROM generate_subscripts(key_groups, 1) j
         WHERE upper(key_groups[j]) - lower(key_groups[j]) = w;
        servers := servers || format('s%s', i)::name;
        key_groups := key_groups || int4range(lower(key_groups[k]) + w / 2, upper(key_groups[k]));
        key_groups[k] := int4range(lower(key_groups[k]), lower(key_groups[k]) + w / 2);
    END LOOP;
END $$;

-- The job's progress and outputs as scripts/pipeline-verify.sql reads
-- them, over the distributed tables: every key group's offset (the lowest;
-- the verification checks they are equal), and per window the winners over
-- all ranges.  A function, since a failover drops the tables (and these
-- views) and restores them.
CREATE FUNCTION pipeline.create_views() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    CREATE VIEW pipeline.offsets AS
    SELECT 'nexmark'::text AS job, min(last_id) AS last_id, min(watermark) AS watermark,
           max(batches) AS batches
      FROM pipeline.source_offsets;
    CREATE VIEW pipeline.q5_hot_items AS
    SELECT window_start, window_end, auction, bids
      FROM (SELECT t.*, rank() OVER (PARTITION BY window_start ORDER BY bids DESC) AS r
              FROM pipeline.q5_top t) ranked
     WHERE r = 1;
    CREATE VIEW pipeline.q7_highest_bid AS
    SELECT DISTINCT ON (window_start) window_start, window_end, price, bid_id, auction, bidder
      FROM pipeline.q7_top
     ORDER BY window_start, price DESC, bid_id;
    CREATE VIEW pipeline.seller_activity AS
    SELECT window_start, window_end, seller, auctions, reserve_sum
      FROM pipeline.seller_windows;
END $$;
SELECT pipeline.create_views();

-- Drops the job's distributed tables here (not their shards), and the
-- views over them.
CREATE FUNCTION pipeline.drop_job_tables() RETURNS int
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE (SELECT 'DROP TABLE ' || string_agg(format('pipeline.%I', t), ', ') || ' CASCADE'
               FROM unnest(pipeline.job_tables()) t);
    RETURN cardinality(pipeline.job_tables());
END $$;

-- Samples of the live state over all servers (scripts/demo.sh takes one
-- about every second while the instances run).
CREATE TABLE pipeline.samples (
    at          timestamptz PRIMARY KEY,
    last_id     bigint NOT NULL,
    q5_rows     bigint NOT NULL,
    q7_rows     bigint NOT NULL,
    seller_rows bigint NOT NULL
);
CREATE PROCEDURE pipeline.sample()
LANGUAGE sql AS $$
INSERT INTO pipeline.samples
SELECT clock_timestamp(), (SELECT min(last_id) FROM pipeline.source_offsets),
       (SELECT count(*) FROM pipeline.q5_state), (SELECT count(*) FROM pipeline.q7_state),
       (SELECT count(*) FROM pipeline.seller_state)
$$;
\endif
