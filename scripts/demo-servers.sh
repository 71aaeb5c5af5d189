# scripts/demo-servers.sh -- run 2 of scripts/demo.sh --servers N, sourced
# by it after run 1 (its functions and variables are those of demo.sh):
# the same job with its state spread over N servers, one instance of the
# job per server (scripts/pipeline-servers.sql), rescaled to N + 1 servers
# a third of the way through and back to N at two thirds, each time at a
# barrier: every instance runs to the same event, the coordinator moves
# the job's tables (forst.rescale: checkpoint, attach, switch; no row
# copied), the instances resume on the new layout.  At each barrier the
# coordinator also takes a distributed checkpoint of the job's tables (one
# cut, one id).  The coordinator then merges the outputs, which must equal
# run 1's and the recomputation, and restores the checkpoint of the second
# barrier on N servers, whose offsets and outputs must be the job's at
# that event.  Halfway through the last third, server s2 is killed: the
# job's tables go back to that checkpoint, restored on N servers with
# sN+1 in s2's place, and the job replays the log from there; the
# outputs must still be run 1's.
#
# Servers: s1 .. sN+1 (instances; sN+1 holds key groups only in the middle
# third) and coord (postgres_fdw to them), all with forst.remote_dir on one
# file:// directory, DIR/store: a rescale attaches on one server the files
# another wrote.

# servers_setup NAME ROLE [PSQL ARGS...]: scripts/pipeline.sql, then
# scripts/pipeline-servers.sql in ROLE, on server NAME.
servers_setup()
{
	local name=$1 role=$2
	shift 2

	setup_job "$name"
	sql "$name" -v role="$role" "$@" -f - <"$FORST_ROOT/scripts/pipeline-servers.sql" >/dev/null
}

# The SST files in the store, one "key size" line each, sorted.
store_ssts() { find "$dir/store" -name '*.sst' -printf '%P %s\n' | sort; }

# run_phase UNTIL SERVERS...: an instance on each server, to event UNTIL;
# the coordinator samples the state meanwhile.  Fails unless all succeed.
run_phase()
{
	local until=$1 s pids=() names=() rc i alive
	shift

	for s in "$@"; do
		(sql "$s" -c "SET client_min_messages = notice" -c "CALL pipeline.instance_run($until)" 2>&1 |
			sed -u "s/^NOTICE:  /  $s  /") &
		pids+=($!)
		names+=("$s")
	done
	while :; do
		alive=0
		for i in "${!pids[@]}"; do
			! kill -0 "${pids[$i]}" 2>/dev/null || alive=1
		done
		[ "$alive" -eq 1 ] || break
		sql coord -c "CALL pipeline.sample()" || fail "the coordinator could not sample the state"
		sleep 1
	done
	for i in "${!pids[@]}"; do
		rc=0
		wait "${pids[$i]}" || rc=$?
		[ "$rc" -eq 0 ] || fail "the instance on server ${names[$i]} failed (exit status $rc)"
	done
	for s in "$@"; do
		[ "$(sql "$s" -At -c "SELECT coalesce(pipeline.instance_offset(), -1)")" = "$until" ] ||
			fail "the instance on server $s did not reach event $until"
	done
}

# layout N: "servers|key_groups" of pipeline.layout(N), as SQL array literals.
layout() { sql coord -At -c "SELECT servers::text || '|' || key_groups::text FROM pipeline.layout($1)"; }

# rescale N: the job's tables to pipeline.layout(N), with the instances
# paused at a barrier; prints what it took and what it wrote.
rescale()
{
	local n=$1 l before after t0 t1 added own s
	local -A max_oid=()

	l=$(layout "$n")
	before=$(store_ssts)
	for s in "${all_servers[@]}"; do
		max_oid[$s]=$(sql "$s" -At -c "SELECT max(oid::bigint) FROM pg_class")
	done
	log "rescale to $n servers: CALL pipeline.rescale('${l%%|*}', '${l#*|}') on the coordinator"
	t0=$EPOCHREALTIME
	sql coord -c "SET client_min_messages = notice" -c "CALL pipeline.rescale('${l%%|*}', '${l#*|}')" \
		>"$dir/coord/rescale-$n.log" 2>&1 || {
		sed 's/^/  /' "$dir/coord/rescale-$n.log"
		fail "the rescale to $n servers failed (above)"
	}
	t1=$EPOCHREALTIME
	progress <"$dir/coord/rescale-$n.log" | sed 's/^  forst[.a-z]*: /    /'
	[ "$(sql coord -At -c "SELECT count(*) FROM unnest(pipeline.job_tables()) t
		WHERE (SELECT count(DISTINCT f.ftserver) FROM pg_inherits i JOIN pg_foreign_table f ON f.ftrelid = i.inhrelid
		        WHERE i.inhparent = format('pipeline.%I', t)::regclass) <> $n")" = 0 ] ||
		fail "the rescale to $n servers left tables of the job in another layout"
	after=$(store_ssts)
	added=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") |
		awk '$1 != "" { n++; b += $2 } END { printf "%d %d", n, b }')
	# the shards the rescale attached: the servers' tables created since
	own=$(for s in "${all_servers[@]}"; do
		sql "$s" -At -F ' ' -c "SELECT count(*) FILTER (WHERE NOT borrowed), coalesce(sum(size) FILTER (WHERE NOT borrowed), 0),
			count(*) FILTER (WHERE borrowed), coalesce(sum(size) FILTER (WHERE borrowed), 0)
			FROM forst.files WHERE \"table\"::oid::bigint > ${max_oid[$s]}"
	done | awk '{ a += $1; b += $2; c += $3; d += $4 } END { printf "%d %d %d %d", a, b, c, d }')
	read -r own_files own_bytes borrowed_files borrowed_bytes <<<"$own"
	rescale_ms+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')")
	rescale_own+=("$own_bytes")
	# The rescale writes no SST file (attach writes manifests); with the
	# instances paused, files of the new shards' own can only be their
	# compactions' output, after the attach (a merge adds level 0 files).
	echo "  rescale to $n servers: $(secs "$t0" "$t1") s from the barrier to the new layout;" \
		"the new shards borrow $borrowed_files files ($borrowed_bytes bytes) and have $own_files of their own ($own_bytes bytes, their compactions' output since the attach);" \
		"SST files added to the store meanwhile (flushes and compactions of any table included): ${added% *} (${added#* } bytes)"
}

# restore_check ID EVENT LAYOUT: the job's distributed checkpoint ID, taken
# at the barrier at EVENT, restored on LAYOUT ("servers|key_groups") into
# schema restored: every key group's offset must be EVENT, and each output
# what the job had emitted by then (the windows that the watermark at EVENT
# closed).
restore_check()
{
	local id=$1 at=$2 l=$3 s t t0 out q

	for s in coord "${live_servers[@]}"; do
		sql "$s" -c "CREATE SCHEMA restored"
	done
	log "restore: distributed checkpoint $id (event $at) on ${l%%|*} into schema restored"
	t0=$EPOCHREALTIME
	sql coord -c "SET client_min_messages = warning" -c "SELECT forst.restore_distributed($id, into_schema => 'restored',
		servers => '${l%%|*}', key_groups => '${l#*|}')" >/dev/null ||
		fail "the distributed checkpoint $id could not be restored"
	echo "  restored in $(secs "$t0" "$EPOCHREALTIME") s"
	# per output table: its rows, those the live table had emitted by the
	# cut and the restored one lacks, and those it has more
	q="WITH w AS (SELECT min(watermark) AS wm FROM restored.source_offsets)
	   SELECT count(*) = 128 AND min(last_id) = $at AND max(last_id) = $at,
	          format('restored: %s key groups, offsets from event %s to %s', count(*), min(last_id), max(last_id))
	     FROM restored.source_offsets"
	for t in q5_top q7_top seller_windows; do
		q+="
		UNION ALL
		SELECT n_missing = 0 AND n_extra = 0 AND n > 0,
		       format('restored %s: %s rows, those emitted by event $at; %s missing, %s more', '$t', n, n_missing, n_extra)
		  FROM (SELECT (SELECT count(*) FROM restored.$t) AS n,
		               (SELECT count(*) FROM (SELECT * FROM pipeline.$t WHERE window_end <= (SELECT wm FROM w)
		                                      EXCEPT ALL SELECT * FROM restored.$t) x) AS n_missing,
		               (SELECT count(*) FROM (SELECT * FROM restored.$t EXCEPT ALL
		                                      SELECT * FROM pipeline.$t WHERE window_end <= (SELECT wm FROM w)) x) AS n_extra) c"
	done
	out=$(sql coord -At -F ' ' -c "$q" 2>&1) || fail "the restored tables could not be read: $out"
	printf '%s\n' "$out" | sed 's/^t /  ok     /; s/^f /  FAIL   /'
	! printf '%s\n' "$out" | grep -q '^f ' || fail "the restored job is not the job at event $at (lines above)"
}

# failover DEAD REPLACEMENT ID AT N: server DEAD dies (SIGKILL) while the
# instances are paused; its key groups and those of every other server go
# back to the job's distributed checkpoint ID (taken at event AT): the
# coordinator's tables and the survivors' shards are dropped, and the
# checkpoint is restored under the job's names on pipeline.layout(N) with
# REPLACEMENT in DEAD's place.  Sets failover_layout.
failover()
{
	local dead=$1 repl=$2 id=$3 at=$4 n=$5 l s t0 i

	t0=$EPOCHREALTIME
	server_kill "$dead"
	# its generator, if it still ran, dies with it
	if [ -n "${gen_pid[$dead]:-}" ]; then
		wait "${gen_pid[$dead]}" 2>/dev/null || true
		for i in "${!bg_pids[@]}"; do
			[ "${bg_pids[$i]}" != "${gen_pid[$dead]}" ] || unset "bg_pids[$i]"
		done
		bg_pids=("${bg_pids[@]}")
	fi
	log "KILLED server $dead (SIGKILL to all its processes); the job goes back to its distributed checkpoint $id (event $at)"
	for i in "${!live_servers[@]}"; do
		[ "${live_servers[$i]}" != "$dead" ] || unset "live_servers[$i]"
	done
	live_servers=("${live_servers[@]}")
	sql coord -At -c "SELECT 'coordinator: ' || pipeline.drop_job_tables() || ' distributed tables dropped'" | sed 's/^/  /'
	for s in "${live_servers[@]}"; do
		sql "$s" -At -c "SELECT '$s: ' || pipeline.drop_job_tables() || ' shards dropped'" | sed 's/^/  /'
	done
	l=$(layout "$n")
	failover_layout="$(echo "${l%%|*}" | sed "s/\b$dead\b/$repl/")|${l#*|}"
	sql coord -c "SET client_min_messages = warning" \
		-c "SELECT forst.restore_distributed($id, servers => '${failover_layout%%|*}', key_groups => '${failover_layout#*|}')" \
		-c "SELECT pipeline.create_views()" >/dev/null ||
		fail "the job could not be restored from its distributed checkpoint $id"
	echo "  the job's tables restored from checkpoint $id on ${failover_layout%%|*} ($(secs "$t0" "$EPOCHREALTIME") s from the kill)"
}

run_servers()
{
	local n_max=$((servers + 1)) i s p ports="" l from t_phase t0 phase_servers barriers kill_at
	local -a dck
	local -a layouts
	all_servers=()
	live_servers=()
	gen_pid=()
	failover_layout=""
	rescale_ms=()
	rescale_own=()
	phase_line=()

	echo
	log "RUN 2: the same job on $servers servers, rescaled to $n_max and back at barriers"
	as_pg_user mkdir "$dir/store"
	for i in $(seq 1 "$n_max"); do
		all_servers+=("s$i")
		live_servers+=("s$i")
		server_start "s$i" "forst.remote_dir = 'file://$dir/store'"
		ports+="${ports:+,}${port[s$i]}"
	done
	server_start coord "forst.remote_dir = 'file://$dir/store'"
	log "setting up: the job's source and parameters on every server, its tables on s1, distributed from coord"
	servers_setup s1 instance -v initial=1
	for s in "${all_servers[@]:1}"; do
		servers_setup "$s" instance
	done
	servers_setup coord coordinator -v ports="$ports"

	if [ "$backlog" -eq 1 ]; then
		log "generators: CALL nexmark.generate($events, 10000, 0) on each of s1 .. s$n_max, before the job starts; VACUUM of the log"
		for s in "${all_servers[@]}"; do
			sql "$s" -c "CALL nexmark.generate($events, 10000, 0)" -c "VACUUM (ANALYZE) nexmark.events" -c "CHECKPOINT" &
			bg_pids+=($!)
		done
		for p in "${bg_pids[@]}"; do
			wait "$p" || fail "a generator failed"
		done
		bg_pids=()
	else
		log "generators: CALL nexmark.generate($events, 1000, $rate) on each of s1 .. s$n_max (each reads the whole log)"
		for s in "${all_servers[@]}"; do
			sql "$s" -c "CALL nexmark.generate($events, 1000, $rate)" &
			bg_pids+=($!)
			gen_pid[$s]=$!
		done
	fi

	# the job's tables, empty, from s1 alone to the first layout
	l=$(layout "$servers")
	sql coord -c "SET client_min_messages = warning" -c "CALL pipeline.rescale('${l%%|*}', '${l#*|}')" ||
		fail "the job's tables could not be spread over $servers servers"
	layouts=("$servers" "$n_max" "$servers")
	barriers=($((events / 3)) $((2 * events / 3)) "$events")
	t_run=$EPOCHREALTIME
	for phase in 0 1 2; do
		l=$(layout "${layouts[$phase]}")
		read -r -a phase_servers <<<"$(echo "${l%%|*}" | tr -d '{}' | tr ',' ' ')"
		log "phase $((phase + 1)): ${layouts[$phase]} servers, key groups ${l#*|}, to event ${barriers[$phase]}"
		t_phase=$EPOCHREALTIME
		if [ "$phase" -eq 2 ]; then
			# halfway through the last third, server s2 dies; the job
			# resumes from the checkpoint of the second barrier, with
			# s$n_max in its place
			kill_at=$((barriers[1] + (events - barriers[1]) / 2))
			run_phase "$kill_at" "${phase_servers[@]}"
			failover s2 "s$n_max" "${dck[1]}" "${barriers[1]}" "$servers"
			read -r -a phase_servers <<<"$(echo "${failover_layout%%|*}" | tr -d '{}' | tr ',' ' ')"
			log "phase 3, again from event ${barriers[1]}: ${failover_layout%%|*}, key groups ${failover_layout#*|}, to event ${barriers[$phase]}"
		fi
		run_phase "${barriers[$phase]}" "${phase_servers[@]}"
		from=$((phase == 0 ? 0 : barriers[phase - 1]))
		phase_line+=("phase $((phase + 1)), ${layouts[$phase]} servers: events $from..${barriers[$phase]} in $(secs "$t_phase" "$EPOCHREALTIME") s, $(awk -v n=$((barriers[phase] - from)) -v a="$t_phase" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", n / (b - a) }') events/s for the job")
		echo "  ${phase_line[-1]}"
		[ "$phase" -lt 2 ] || break
		log "barrier: every instance at event ${barriers[$phase]}"
		t0=$EPOCHREALTIME
		dck[$phase]=$(sql coord -At -c "SET client_min_messages = warning" -c "SELECT pipeline.checkpoint()") ||
			fail "the distributed checkpoint at event ${barriers[$phase]} failed"
		echo "  distributed checkpoint ${dck[$phase]} of the job's tables at event ${barriers[$phase]}: $(secs "$t0" "$EPOCHREALTIME") s"
		rescale "${layouts[$((phase + 1))]}"
	done
	elapsed2=$(secs "$t_run" "$EPOCHREALTIME")
	for p in "${bg_pids[@]}"; do
		wait "$p" || fail "a generator failed"
	done
	bg_pids=()

	log "the source log on the coordinator, for the verification: CALL nexmark.generate($events, 10000, 0, 1)"
	sql coord -c "CALL nexmark.generate($events, 10000, 0, 1)"
	load_uninterrupted coord
	log "verification on the coordinator: the merged outputs against the recomputation and against the uninterrupted run"
	verify coord -v compare=uninterrupted -v distributed=true ||
		fail "the verification of the job on $servers servers (lines above)"

	printf '  %s\n' "${phase_line[@]}"
	restore_check "${dck[1]}" "${barriers[1]}" "$failover_layout"
	echo "  events per second, per server and phase (the log's events passed; those of the server's key groups):"
	for s in "${live_servers[@]}"; do
		sql "$s" -At -F ' ' -c "SELECT format('    %s  %s..%s  key groups %s  %s s  %s/s of the log  %s/s of its key groups',
			'$s', from_id, until, ranges, round(secs::numeric, 1), round(consumed / secs), round(keyed / secs))
			FROM pipeline.instance_run_rates ORDER BY started"
	done
	echo
	echo "PASS: pipeline of $events events in ${elapsed}s ($rate1 events/s) on one server;" \
		"on $servers servers rescaled to $n_max at event ${barriers[0]} (${rescale_ms[0]} ms," \
		"no SST file copied; ${rescale_own[0]} bytes of the new shards' compactions since) and back at event ${barriers[1]}" \
		"(${rescale_ms[1]} ms, no SST file copied; ${rescale_own[1]} bytes of compactions) in ${elapsed2}s;" \
		"server s2 killed at event $kill_at, the job restored from its checkpoint at event ${barriers[1]}" \
		"on ${failover_layout%%|*} and finished there;" \
		"emitted windows equal the recomputation and the one-server run; state bounded;" \
		"the checkpoint restored again in another schema is the job at event ${barriers[1]}"
}
