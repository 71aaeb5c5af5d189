-- scripts/pipeline.sql -- the streaming job of scripts/demo.sh (docs/pipeline.md).
--
-- Creates, in the current database (dropping earlier copies):
--   nexmark.*   a deterministic Nexmark-style event generator (people,
--               auctions, bids) and its source log, nexmark.events (heap);
--   pipeline.*  the job: its parameters, windowed state, output tables,
--               the source offset and progress samples in forst tables;
--               one transaction per batch.
-- A new job: the caller sets its parameters with psql variables
--   seed, delta_us (event time between two events), jitter_us (bounded
--   out-of-orderness), batch (events per pipeline transaction), hop_size,
--   hop_slide, tumble_size (intervals);
-- and optionally, for a state far larger than memory (scripts/demo.sh
-- --large, bench/pipeline_large.sh; the defaults give the demo's events):
--   cold_fraction  the fraction of bids that go uniformly to the newest
--                  cold_auctions auctions instead of recent ones (default 0);
--   cold_auctions  how many (default 0); ids below 0 stand for auctions
--                  opened before the log begins, so the range is full from
--                  the first event on;
--   bidders        bids come from the newest this many people (default 100);
--   sample_every   seconds between two progress samples of pipeline.run
--                  (default 1; each counts the live state rows).
-- Failover (docs/pipeline.md): the caller sets instead restore_cluster and
-- restore_checkpoint, and the job's forst tables are attached from that
-- checkpoint of that cluster (claimed: this server takes their files over)
-- instead of created; everything else is created as for a new job, and
-- the expiry settings, which a checkpoint does not carry, are re-applied
-- from the restored offset row.  The job then resumes from the offset.
-- state_am (psql variable, default forst): the access method of the three
-- state tables.  heap, for bench/pipeline_vs_heap.sh only: the state
-- tables are heap tables and the step expires closed windows the heap way,
-- with DELETE (their space is reclaimed by VACUUM, not by forst's
-- compaction); the other tables stay forst tables.  No failover then (a
-- checkpoint holds forst tables only).
-- durability (psql variable, default wal): wal, every table of the job an
-- ordinary forst table, each batch durable at its commit through WAL;
-- checkpoint, every forst table of the job (config, offsets, samples, the
-- state tables, the outputs) created UNLOGGED ... USING forst: its writes
-- write no WAL, and it is durable at forst checkpoints only; after a crash
-- the job's tables return together to the newest completed checkpoint of
-- the database, and the job resumes from the offset stored there, reading
-- the source log (which stays an ordinary heap table, replayable as a
-- Kafka topic is) again from it (docs/pipeline.md, "Checkpoint-durable
-- mode").  Needs state_am forst.  A restored job (restore_checkpoint) must
-- be given the durability of the job its checkpoint was taken from (the
-- attached tables are unlogged if they were); a checkpoint-durable job
-- more often simply resumes on its own server, restarted on the same data
-- directory, with nothing to run again.
\set ON_ERROR_STOP 1
\if :{?state_am}
\else
\set state_am forst
\endif
\if :{?durability}
\else
\set durability wal
\endif
\if :{?cold_fraction}
\else
\set cold_fraction 0
\endif
\if :{?cold_auctions}
\else
\set cold_auctions 0
\endif
\if :{?bidders}
\else
\set bidders 100
\endif
\if :{?sample_every}
\else
\set sample_every 1
\endif
SELECT :'state_am' = 'heap' AS heap_state,
       :'state_am' IN ('forst', 'heap') AS state_am_ok,
       :'durability' = 'checkpoint' AS ckpt_durable,
       :'durability' IN ('wal', 'checkpoint') AS durability_ok,
       :'state_am' = 'heap' AS delete_expiry,
       :{?restore_checkpoint} AS restoring \gset
\if :state_am_ok
\else
DO $$ BEGIN
    RAISE EXCEPTION 'state_am must be forst or heap'
        USING ERRCODE = 'invalid_parameter_value';
END $$;
\endif
\if :durability_ok
\else
DO $$ BEGIN
    RAISE EXCEPTION 'durability must be wal or checkpoint'
        USING ERRCODE = 'invalid_parameter_value';
END $$;
\endif
\if :ckpt_durable
\if :heap_state
DO $$ BEGIN
    RAISE EXCEPTION 'a checkpoint-durable job cannot keep its state in heap tables'
        USING ERRCODE = 'feature_not_supported',
              HINT = 'With durability checkpoint the state returns to a forst checkpoint after a crash, and a checkpoint holds forst tables only; use state_am forst, or durability wal.';
END $$;
\endif
-- the job's forst tables: CREATE UNLOGGED TABLE ... USING forst
\set persistence UNLOGGED
\else
\set persistence ''
\endif
\if :heap_state
\if :restoring
DO $$ BEGIN
    RAISE EXCEPTION 'a job with heap state tables cannot be restored from a checkpoint'
        USING ERRCODE = 'feature_not_supported',
              HINT = 'A checkpoint holds forst tables only; restore a job created with state_am forst.';
END $$;
\endif
\endif
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS pipeline CASCADE;
DROP SCHEMA IF EXISTS nexmark CASCADE;
CREATE EXTENSION IF NOT EXISTS forst;
RESET client_min_messages;

CREATE SCHEMA nexmark;
CREATE SCHEMA pipeline;

------------------------------------------------------------------------
-- The job's tables, all forst tables: everything a failover must carry
-- over is in them (a checkpoint holds the forst tables of the database).
-- :persistence is UNLOGGED with durability checkpoint, else empty.
------------------------------------------------------------------------
\if :{?restore_checkpoint}

-- Failover: the job's tables of the checkpoint, attached (recreated with
-- their columns, keys, defaults and checks; their files read from the
-- store, not copied).  mode => 'claim': this server takes them over, and
-- the server that wrote them is fenced should it come back.  The attached
-- tables are unlogged if the checkpointed job's were, so the job's
-- functions must be those of the same durability: checked first.
SELECT coalesce(bool_or((t->>'unlogged')::bool), false) <> :'ckpt_durable'::bool AS durability_mismatch
  FROM jsonb_array_elements(forst.checkpoint_read(:restore_checkpoint, :'restore_cluster')->'tables') t
 WHERE (parse_ident(t->>'name'))[1] = 'pipeline' \gset
\if :durability_mismatch
DO $$ BEGIN
    RAISE EXCEPTION 'the checkpoint holds the job with the other durability'
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Pass durability checkpoint to restore a job whose tables are unlogged, durability wal (the default) for one whose tables are logged.';
END $$;
\endif
SELECT count(*) AS attached
  FROM jsonb_array_elements(forst.checkpoint_read(:restore_checkpoint, :'restore_cluster')->'tables') t,
       LATERAL forst.attach(t->>'name', :restore_checkpoint, cluster => :'restore_cluster', mode => 'claim') a
 WHERE (parse_ident(t->>'name'))[1] = 'pipeline' \gset
DO $$
DECLARE
    missing text;
BEGIN
    SELECT string_agg(n, ', ') INTO missing
      FROM unnest(ARRAY['config', 'offsets', 'samples', 'q5_state', 'q7_state', 'seller_state',
                        'q5_hot_items', 'q7_highest_bid', 'seller_activity']) n
     WHERE to_regclass('pipeline.' || n) IS NULL;
    IF missing IS NOT NULL THEN
        RAISE EXCEPTION 'the checkpoint lacks tables of the job: %', missing
            USING ERRCODE = 'undefined_table',
                  HINT = 'Attach a checkpoint taken while the job ran (SELECT * FROM forst.checkpoints on the old server).';
    END IF;
END $$;

\else

-- The job's parameters, one row.
CREATE :persistence TABLE pipeline.config (
    job         text PRIMARY KEY DEFAULT 'nexmark',
    seed        bigint NOT NULL,
    delta_us    bigint NOT NULL CHECK (delta_us > 0),
    jitter_us   bigint NOT NULL CHECK (jitter_us > 0),
    batch       bigint NOT NULL CHECK (batch > 0),
    hop_size    interval NOT NULL,
    hop_slide   interval NOT NULL,
    tumble_size interval NOT NULL,
    base        timestamptz NOT NULL DEFAULT '2026-01-01 00:00:00+00',
    cold_fraction float8 NOT NULL DEFAULT 0 CHECK (cold_fraction BETWEEN 0 AND 1),
    cold_auctions bigint NOT NULL DEFAULT 0 CHECK (cold_auctions >= 0),
    bidders     bigint NOT NULL DEFAULT 100 CHECK (bidders > 0),
    sample_every interval NOT NULL DEFAULT '1 second',
    CHECK (cold_fraction = 0 OR cold_auctions > 0)
) USING forst;
INSERT INTO pipeline.config (seed, delta_us, jitter_us, batch, hop_size, hop_slide, tumble_size,
                             cold_fraction, cold_auctions, bidders, sample_every)
VALUES (:seed, :delta_us, :jitter_us, :batch, :'hop_size', :'hop_slide', :'tumble_size',
        :cold_fraction, :cold_auctions, :bidders, :sample_every * interval '1 second');

------------------------------------------------------------------------
-- The job's state, all in forst tables.  Each state table is keyed by
-- window start first, which is also its TTL column: advancing the
-- watermark past a window's start makes its rows invisible at once and
-- compaction drops them (whole files without reading them).
------------------------------------------------------------------------

-- Where the job is: the last event folded into the state (the source
-- offset) and the event-time watermark.  Written in the same transaction
-- as the state, so a batch is applied exactly once.
CREATE :persistence TABLE pipeline.offsets (
    job       text PRIMARY KEY,
    last_id   bigint NOT NULL,
    watermark timestamptz NOT NULL,
    batches   bigint NOT NULL
) USING forst;
INSERT INTO pipeline.offsets SELECT 'nexmark', 0, '-infinity', 0;

-- Nexmark q5 ("hot items"): bids per auction per hopping window.
CREATE :persistence TABLE pipeline.q5_state (
    window_start timestamptz,
    auction      bigint,
    bids         bigint NOT NULL,
    PRIMARY KEY (window_start, auction)
) USING :state_am;

-- Nexmark q7: the highest bid per tumbling window (ties: the earliest bid).
CREATE :persistence TABLE pipeline.q7_state (
    window_start timestamptz PRIMARY KEY,
    price        bigint NOT NULL,
    bid_id       bigint NOT NULL,
    auction      bigint NOT NULL,
    bidder       bigint NOT NULL
) USING :state_am;

-- Per-seller activity: auctions opened and their reserves per tumbling window.
CREATE :persistence TABLE pipeline.seller_state (
    window_start timestamptz,
    seller       bigint,
    auctions     bigint NOT NULL,
    reserve_sum  bigint NOT NULL,
    PRIMARY KEY (window_start, seller)
) USING :state_am;

-- Outputs: closed windows, emitted once each.
CREATE :persistence TABLE pipeline.q5_hot_items (
    window_start timestamptz,
    window_end   timestamptz NOT NULL,
    auction      bigint,
    bids         bigint NOT NULL,
    PRIMARY KEY (window_start, auction)
) USING forst;

CREATE :persistence TABLE pipeline.q7_highest_bid (
    window_start timestamptz PRIMARY KEY,
    window_end   timestamptz NOT NULL,
    price        bigint NOT NULL,
    bid_id       bigint NOT NULL,
    auction      bigint NOT NULL,
    bidder       bigint NOT NULL
) USING forst;

CREATE :persistence TABLE pipeline.seller_activity (
    window_start timestamptz,
    window_end   timestamptz NOT NULL,
    seller       bigint,
    auctions     bigint NOT NULL,
    reserve_sum  bigint NOT NULL,
    PRIMARY KEY (window_start, seller)
) USING forst;

-- Progress samples, written by pipeline.run about once a second
-- (config.sample_every).
CREATE :persistence TABLE pipeline.samples (
    at              timestamptz PRIMARY KEY,
    last_id         bigint NOT NULL,
    q5_rows         bigint NOT NULL,
    q7_rows         bigint NOT NULL,
    seller_rows     bigint NOT NULL,
    memtable_bytes  bigint NOT NULL,
    sst_bytes       bigint NOT NULL,
    sst_files       bigint NOT NULL,
    reclaimed_bytes bigint NOT NULL
) USING forst;

\endif

------------------------------------------------------------------------
-- The generator.  Event i (1, 2, ...) is a pure function of (seed, i):
-- in each block of 50 events, one person, three auctions, 46 bids (the
-- Nexmark proportions).  Bids go to recent auctions, three quarters of
-- them to the 10 newest ("hot" auctions); with cold_fraction > 0, that
-- fraction of bids goes instead uniformly to the newest cold_auctions
-- auctions (random streams 9 and 10, unused otherwise, so that the
-- defaults give the same events as before).  Event time advances by
-- delta_us per event, minus a pseudo-random delay below jitter_us, so
-- events arrive out of order but never later than jitter_us.
------------------------------------------------------------------------

CREATE TABLE nexmark.events (
    id       bigint PRIMARY KEY,
    kind     text NOT NULL CHECK (kind IN ('person', 'auction', 'bid')),
    at       timestamptz NOT NULL,
    person   bigint,            -- person: its id
    name     text,
    city     text,
    auction  bigint,            -- auction: its id; bid: the auction bid on
    seller   bigint,            -- auction
    category int,               -- auction
    reserve  bigint,            -- auction
    bidder   bigint,            -- bid
    price    bigint             -- bid
);

-- A pseudo-random number in [0, m), from (seed, event, stream).
CREATE FUNCTION nexmark.rnd(seed bigint, id bigint, stream int, m bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
$$ SELECT ((hashint8extended(id, seed * 64 + stream) % m) + m) % m $$;

-- Events lo .. hi, as rows of nexmark.events.
CREATE FUNCTION nexmark.gen(c pipeline.config, lo bigint, hi bigint)
RETURNS SETOF nexmark.events LANGUAGE sql STABLE AS $$
SELECT i,
       CASE WHEN i % 50 = 0 THEN 'person' WHEN i % 50 <= 3 THEN 'auction' ELSE 'bid' END,
       c.base + (i * c.delta_us - nexmark.rnd(c.seed, i, 0, c.jitter_us)) * interval '1 microsecond',
       CASE WHEN i % 50 = 0 THEN i / 50 END,
       CASE WHEN i % 50 = 0 THEN 'person ' || i / 50 END,
       CASE WHEN i % 50 = 0 THEN (ARRAY['Phoenix', 'Portland', 'Boise', 'Bend', 'Seattle'])[1 + nexmark.rnd(c.seed, i, 1, 5)] END,
       CASE WHEN i % 50 = 0 THEN NULL
            WHEN i % 50 <= 3 THEN (i / 50) * 3 + i % 50 - 1
            WHEN c.cold_fraction > 0 AND nexmark.rnd(c.seed, i, 9, 1000000) < c.cold_fraction * 1000000
            THEN (i / 50) * 3 + 2 - nexmark.rnd(c.seed, i, 10, c.cold_auctions)
            ELSE greatest(0, (i / 50) * 3 + 2 -
                 nexmark.rnd(c.seed, i, 2, CASE WHEN nexmark.rnd(c.seed, i, 3, 4) > 0 THEN 10 ELSE 200 END)) END,
       CASE WHEN i % 50 BETWEEN 1 AND 3 THEN (i / 50) - nexmark.rnd(c.seed, i, 4, least(i / 50 + 1, 20)) END,
       CASE WHEN i % 50 BETWEEN 1 AND 3 THEN nexmark.rnd(c.seed, i, 5, 5)::int END,
       CASE WHEN i % 50 BETWEEN 1 AND 3 THEN 100 + nexmark.rnd(c.seed, i, 6, 1000) END,
       CASE WHEN i % 50 > 3 THEN (i / 50) - nexmark.rnd(c.seed, i, 7, least(i / 50 + 1, c.bidders)) END,
       CASE WHEN i % 50 > 3 THEN 100 + nexmark.rnd(c.seed, i, 8, 10000) END
  FROM generate_series(lo, hi) i
$$;

-- Appends events from_id .. total to nexmark.events in transactions of batch
-- events, at rate events per second of wall-clock time (0: as fast as it
-- can).  from_id: the event after the newest in the log, by default; after
-- a failover, the event after the restored offset (the source replays
-- from there).
CREATE PROCEDURE nexmark.generate(total bigint, batch bigint, rate bigint,
                                  from_id bigint DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    c       pipeline.config;
    lo      bigint := from_id;
    started timestamptz := clock_timestamp();
    ahead   float8;
BEGIN
    SELECT * INTO c FROM pipeline.config;
    IF lo IS NULL THEN
        SELECT coalesce(max(id), 0) + 1 INTO lo FROM nexmark.events;
    END IF;
    from_id := lo;
    WHILE lo <= total LOOP
        INSERT INTO nexmark.events SELECT * FROM nexmark.gen(c, lo, least(lo + batch - 1, total));
        lo := least(lo + batch, total + 1);
        COMMIT;
        IF rate > 0 THEN
            ahead := (lo - from_id)::float8 / rate - extract(epoch FROM clock_timestamp() - started);
            IF ahead > 0 THEN
                PERFORM pg_sleep(ahead);
            END IF;
        END IF;
    END LOOP;
END $$;

-- Whether the job is checkpoint-durable (durability checkpoint): a
-- constant, for pipeline.step.
\if :ckpt_durable
CREATE FUNCTION pipeline.checkpoint_durable() RETURNS bool
LANGUAGE sql IMMUTABLE AS $$ SELECT true $$;
\else
CREATE FUNCTION pipeline.checkpoint_durable() RETURNS bool
LANGUAGE sql IMMUTABLE AS $$ SELECT false $$;
\endif

------------------------------------------------------------------------
-- Expiry.  Rows of a state table whose window_start is below the table's
-- watermark are invisible from then on and reclaimed by compaction; the
-- watermarks are set just above the newest window start closed by the
-- job's watermark wm, i.e. every emitted window is expired.
------------------------------------------------------------------------
\if :heap_state
-- Heap state (state_am heap): the same rows, the emitted windows, deleted;
-- VACUUM (autovacuum) reclaims their space later.
CREATE FUNCTION pipeline.expire(c pipeline.config, wm timestamptz) RETURNS void
LANGUAGE sql AS $$
DELETE FROM pipeline.q5_state WHERE window_start < wm - c.hop_size + interval '1 microsecond';
DELETE FROM pipeline.q7_state WHERE window_start < wm - c.tumble_size + interval '1 microsecond';
DELETE FROM pipeline.seller_state WHERE window_start < wm - c.tumble_size + interval '1 microsecond';
$$;
\else
-- forst state: the watermarks of the state tables.  A checkpoint records
-- them with the tables, so a checkpoint-durable job's watermarks return
-- with its state after a crash (docs/windowed-state.md).
CREATE FUNCTION pipeline.expire(c pipeline.config, wm timestamptz) RETURNS void
LANGUAGE sql AS $$
SELECT forst.advance_watermark('pipeline.q5_state', wm - c.hop_size + interval '1 microsecond'),
       forst.advance_watermark('pipeline.q7_state', wm - c.tumble_size + interval '1 microsecond'),
       forst.advance_watermark('pipeline.seller_state', wm - c.tumble_size + interval '1 microsecond');
$$;
\endif

-- window_start is the TTL column of each state table (no TTL: the job's
-- watermark only).  A checkpoint carries neither these settings nor the
-- watermarks (forst.expiry), so a restored job sets them again here, from
-- its restored watermark: without it, the windows emitted before the
-- checkpoint would be visible again in the state and emitted twice.
\if :delete_expiry
\else
SELECT forst.set_ttl('pipeline.q5_state', 'window_start', NULL),
       forst.set_ttl('pipeline.q7_state', 'window_start', NULL),
       forst.set_ttl('pipeline.seller_state', 'window_start', NULL);
\endif
SELECT pipeline.expire(c, o.watermark)
  FROM pipeline.config c, pipeline.offsets o
 WHERE o.job = 'nexmark' AND o.watermark > '-infinity';

------------------------------------------------------------------------
-- One step: the next batch of events after the stored offset, folded into
-- the state; windows closed by the new watermark emitted; the state's
-- watermarks advanced; the new offset stored.  The caller runs it in a
-- transaction of its own: all of it commits, or none of it.  Returns the
-- number of events consumed (0: none available yet).
------------------------------------------------------------------------
CREATE FUNCTION pipeline.step() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    c     pipeline.config;
    o     pipeline.offsets;
    hi    bigint;
    max_t timestamptz;
    wm    timestamptz;
BEGIN
    SELECT * INTO c FROM pipeline.config;
    -- the offset row, locked: two runners of the job serialize here
    SELECT * INTO o FROM pipeline.offsets WHERE job = 'nexmark' FOR UPDATE;
    SELECT max(id), max(at) INTO hi, max_t
      FROM nexmark.events WHERE id > o.last_id AND id <= o.last_id + c.batch;
    IF hi IS NULL THEN
        RETURN 0;
    END IF;

    -- 1. fold the batch into the windowed state
    INSERT INTO pipeline.q5_state AS s (window_start, auction, bids)
    SELECT w.window_start, e.auction, count(*)
      FROM nexmark.events e,
           forst.hop_windows(e.at, c.hop_size, c.hop_slide) w
     WHERE e.id > o.last_id AND e.id <= hi AND e.kind = 'bid'
     GROUP BY 1, 2
    ON CONFLICT (window_start, auction) DO UPDATE SET bids = s.bids + excluded.bids;

    INSERT INTO pipeline.q7_state AS s (window_start, price, bid_id, auction, bidder)
    SELECT DISTINCT ON (1) forst.tumble_start(e.at, c.tumble_size), e.price, e.id, e.auction, e.bidder
      FROM nexmark.events e
     WHERE e.id > o.last_id AND e.id <= hi AND e.kind = 'bid'
     ORDER BY 1, e.price DESC, e.id
    ON CONFLICT (window_start) DO UPDATE
       SET price = excluded.price, bid_id = excluded.bid_id,
           auction = excluded.auction, bidder = excluded.bidder
     WHERE excluded.price > s.price OR (excluded.price = s.price AND excluded.bid_id < s.bid_id);

    INSERT INTO pipeline.seller_state AS s (window_start, seller, auctions, reserve_sum)
    SELECT forst.tumble_start(e.at, c.tumble_size), e.seller, count(*), sum(e.reserve)
      FROM nexmark.events e
     WHERE e.id > o.last_id AND e.id <= hi AND e.kind = 'auction'
     GROUP BY 1, 2
    ON CONFLICT (window_start, seller) DO UPDATE
       SET auctions = s.auctions + excluded.auctions,
           reserve_sum = s.reserve_sum + excluded.reserve_sum;

    -- 2. the watermark: no later event is older than max_t - jitter
    wm := greatest(o.watermark, max_t - c.jitter_us * interval '1 microsecond');

    -- 3. emit the windows it closes (window_end <= wm).  Windows emitted
    -- earlier are expired (step 4 of the earlier batches), so they are
    -- invisible here: nothing is emitted twice.
    INSERT INTO pipeline.q5_hot_items
    SELECT window_start, window_start + c.hop_size, auction, bids
      FROM (SELECT s.*, rank() OVER (PARTITION BY window_start ORDER BY bids DESC) AS r
              FROM pipeline.q5_state s
             WHERE window_start <= wm - c.hop_size) ranked
     WHERE r = 1;

    INSERT INTO pipeline.q7_highest_bid
    SELECT window_start, window_start + c.tumble_size, price, bid_id, auction, bidder
      FROM pipeline.q7_state
     WHERE window_start <= wm - c.tumble_size;

    INSERT INTO pipeline.seller_activity
    SELECT window_start, window_start + c.tumble_size, seller, auctions, reserve_sum
      FROM pipeline.seller_state
     WHERE window_start <= wm - c.tumble_size;

    -- 4. expire the emitted windows
    PERFORM pipeline.expire(c, wm);

    -- 5. the new source offset, in the same transaction
    UPDATE pipeline.offsets
       SET last_id = hi, watermark = wm, batches = batches + 1
     WHERE job = 'nexmark';

    -- A checkpoint-durable job is durable at forst checkpoints: its commit
    -- need not wait for the WAL flush of its watermarks (forst.expiry).
    IF pipeline.checkpoint_durable() THEN
        PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    RETURN hi - o.last_id;
END $$;

-- Size of the state: live rows (open windows) and what forst holds;
-- state_bytes: the state tables' bytes (forst: memtables and SST files;
-- heap: pg_total_relation_size, the heap, its index and free space map).
\if :heap_state
CREATE VIEW pipeline.state_size AS
SELECT q5.q5_rows,
       (SELECT count(*) FROM pipeline.q7_state) AS q7_rows,
       (SELECT count(*) FROM pipeline.seller_state) AS seller_rows,
       q5.q5_windows,
       0::bigint AS memtable_bytes, 0::bigint AS sst_bytes, 0::bigint AS sst_files,
       0::bigint AS reclaimed_bytes, 0::bigint AS files_dropped,
       (pg_total_relation_size('pipeline.q5_state') + pg_total_relation_size('pipeline.q7_state') +
        pg_total_relation_size('pipeline.seller_state'))::bigint AS state_bytes
  FROM (SELECT count(*) AS q5_rows, count(DISTINCT window_start) AS q5_windows
          FROM pipeline.q5_state) q5;
\else
CREATE VIEW pipeline.state_size AS
SELECT q5.q5_rows,
       (SELECT count(*) FROM pipeline.q7_state) AS q7_rows,
       (SELECT count(*) FROM pipeline.seller_state) AS seller_rows,
       q5.q5_windows,
       sum(t.memtable_bytes)::bigint AS memtable_bytes,
       sum(t.sst_bytes)::bigint AS sst_bytes,
       sum(t.sst_files)::bigint AS sst_files,
       sum(t.expired_bytes_reclaimed)::bigint AS reclaimed_bytes,
       sum(t.expired_files_dropped)::bigint AS files_dropped,
       sum(t.memtable_bytes + t.sst_bytes)::bigint AS state_bytes
  FROM (SELECT count(*) AS q5_rows, count(DISTINCT window_start) AS q5_windows
          FROM pipeline.q5_state) q5,
       forst.tables t
 WHERE t."table" IN ('pipeline.q5_state'::regclass, 'pipeline.q7_state'::regclass,
                     'pipeline.seller_state'::regclass)
 GROUP BY q5.q5_rows, q5.q5_windows;
\endif

-- lpad that never cuts: a progress column wider than its usual width (a
-- large state's row count) is printed whole.
CREATE FUNCTION pipeline.pad(t text, width int) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT lpad(t, greatest(width, length(t))) $$;

-- Runs steps, each in its own transaction, until the offset reaches total
-- (waiting for the generator when it is ahead), printing progress (and
-- recording a sample) about once a second (config.sample_every).  With
-- checkpoint_every, it takes a checkpoint (forst.checkpoint()) between two
-- steps whenever that much time has passed since the last one: the job's
-- watermarks stand still while it runs (docs/pipeline.md, "Checkpoints between batches").
CREATE PROCEDURE pipeline.run(total bigint, checkpoint_every interval DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    started   timestamptz := clock_timestamp();
    tick      timestamptz := clock_timestamp();
    last_ckpt timestamptz := clock_timestamp();
    tick_id   bigint;
    n         bigint;
    o         pipeline.offsets;
    s         pipeline.state_size;
    generated bigint;
    emitted   text;
    ckpt      text;
    now_      timestamptz;
    c         pipeline.config;
BEGIN
    SELECT * INTO c FROM pipeline.config;
    SELECT last_id INTO tick_id FROM pipeline.offsets WHERE job = 'nexmark';
    LOOP
        n := pipeline.step();
        COMMIT;
        IF n = 0 THEN
            PERFORM pg_sleep(0.02);
        END IF;
        IF checkpoint_every IS NOT NULL AND clock_timestamp() - last_ckpt >= checkpoint_every THEN
            PERFORM forst.checkpoint();
            COMMIT;
            last_ckpt := clock_timestamp();
        END IF;
        SELECT * INTO o FROM pipeline.offsets WHERE job = 'nexmark';
        now_ := clock_timestamp();
        IF now_ - tick >= c.sample_every OR o.last_id >= total THEN
            SELECT * INTO s FROM pipeline.state_size;
            SELECT coalesce(max(id), 0) INTO generated FROM nexmark.events;
            SELECT format('%s/%s/%s',
                          (SELECT count(DISTINCT window_start) FROM pipeline.q5_hot_items),
                          (SELECT count(*) FROM pipeline.q7_highest_bid),
                          (SELECT count(DISTINCT window_start) FROM pipeline.seller_activity))
              INTO emitted;
            SELECT coalesce(max(format('%s (%s ms)', id, round(extract(epoch FROM duration) * 1000))), 'none')
              INTO ckpt
              FROM (SELECT id, duration FROM forst.checkpoints
                     WHERE database = current_database() AND status = 'completed'
                     ORDER BY id DESC LIMIT 1) k;
            INSERT INTO pipeline.samples
            VALUES (now_, o.last_id, s.q5_rows, s.q7_rows, s.seller_rows,
                    s.memtable_bytes, s.sst_bytes, s.sst_files, s.reclaimed_bytes);
            RAISE NOTICE '%s  events %  %/s  lag %  open q5 windows %  state rows %  mem %  sst % in % files  reclaimed % (% files dropped)  emitted q5/q7/seller windows %  checkpoint %',
                pipeline.pad(to_char(extract(epoch FROM now_ - started), 'FM9990.0'), 6),
                pipeline.pad(o.last_id::text, 8),
                pipeline.pad(round((o.last_id - tick_id) / extract(epoch FROM now_ - tick))::text, 6),
                pipeline.pad((generated - o.last_id)::text, 6),
                pipeline.pad(s.q5_windows::text, 2),
                pipeline.pad((s.q5_rows + s.q7_rows + s.seller_rows)::text, 5),
                pipeline.pad(pg_size_pretty(s.memtable_bytes), 7),
                pipeline.pad(pg_size_pretty(s.sst_bytes), 7), pipeline.pad(s.sst_files::text, 3),
                pipeline.pad(pg_size_pretty(s.reclaimed_bytes), 7), s.files_dropped,
                emitted, ckpt;
            COMMIT;
            tick := now_;
            tick_id := o.last_id;
        END IF;
        EXIT WHEN o.last_id >= total;
    END LOOP;
END $$;
