#!/usr/bin/env bash
# The hosted service with several workers on one machine: PostgreSQL, Redis, N workers and HAProxy
# (each project's requests go to one worker, chosen by hashing the project id; see the README).
#
#   deploy/scaleout.sh DATA [WORKERS]
#
# DATA is the data folder every worker shares (projects' files); with several machines, mount the
# same folder (NFS or another shared volume) at the same path on each and run the workers there.
# Uses, when set:
#   MCP_IDE_DATABASE  postgresql://user:password@host:port/db  (else a PostgreSQL cluster in DATA/postgres)
#   MCP_IDE_REDIS     redis://host:port/db                     (else a Redis server on 127.0.0.1:$REDIS_PORT)
#   HOST, PORT        where HAProxy listens (default 127.0.0.1 and 8080)
#   PUBLIC_HOST       the Host header clients send, if not HOST:PORT (e.g. ide.example.test)
#   WORKER_PORT       the first worker's port (default 9971; the others follow)
#   REDIS_PORT        the local Redis server's port (default 6390)
#   PG_PORT           the local PostgreSQL cluster's port (default 5439; its database "postgres")
# Needs: mcp-server-ide on PATH (or MCP_IDE="path/to/python -m mcp_server_ide"), haproxy, and unless given URLs for them,
# PostgreSQL (initdb, postgres) and redis-server. Ctrl-C (or SIGTERM) stops everything it started.
set -euo pipefail

DATA=${1:?usage: deploy/scaleout.sh DATA [WORKERS]}
WORKERS=${2:-2}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8080}
WORKER_PORT=${WORKER_PORT:-9971}
REDIS_PORT=${REDIS_PORT:-6390}
PG_PORT=${PG_PORT:-5439}
MCP_IDE=${MCP_IDE:-mcp-server-ide}
read -ra MCP_IDE_CMD <<<"$MCP_IDE"
mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)
RUN="$DATA/run"
mkdir -p "$RUN"
pids=()

stop() {
  STOPPING=1
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "${PG_STARTED:-}" ]; then pg_as "$PG_CTL" -D "$DATA/postgres" -m fast stop >/dev/null 2>&1 || true; fi
}
trap stop INT TERM EXIT

pg_bin() { command -v "$1" 2>/dev/null || ls /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | tail -1; }
pg_as() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
wait_port() {  # host port what [pid]
  for _ in $(seq 1 600); do
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null && return 0
    if [ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null; then break; fi
    sleep 0.2
  done
  echo "scaleout: $3 did not start on $1:$2" >&2
  exit 1
}

if [ -z "${MCP_IDE_DATABASE:-}" ]; then
  INITDB=$(pg_bin initdb); PG_CTL=$(pg_bin pg_ctl)
  [ -n "$INITDB" ] && [ -n "$PG_CTL" ] || { echo "scaleout: install PostgreSQL (apt-get install -y postgresql) or set MCP_IDE_DATABASE" >&2; exit 1; }
  if [ ! -d "$DATA/postgres" ]; then
    mkdir -p "$DATA/postgres"
    [ "$(id -u)" = 0 ] && chown postgres: "$DATA/postgres"
    pg_as "$INITDB" -D "$DATA/postgres" -U mcp --auth=trust -E UTF8 >/dev/null
    echo "scaleout: made a PostgreSQL cluster in $DATA/postgres"
  fi
  [ "$(id -u)" = 0 ] && chown postgres: "$RUN"
  pg_as "$PG_CTL" -D "$DATA/postgres" -l "$RUN/postgres.log" -w \
    -o "-p $PG_PORT -h 127.0.0.1 -k $RUN" start >/dev/null
  PG_STARTED=1
  export MCP_IDE_DATABASE="postgresql://mcp@127.0.0.1:$PG_PORT/postgres"
fi

if [ -z "${MCP_IDE_REDIS:-}" ]; then
  command -v redis-server >/dev/null || { echo "scaleout: install redis-server or set MCP_IDE_REDIS" >&2; exit 1; }
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$RUN" \
    >"$RUN/redis.log" 2>&1 &
  pids+=($!)
  wait_port 127.0.0.1 "$REDIS_PORT" Redis $!
  export MCP_IDE_REDIS="redis://127.0.0.1:$REDIS_PORT/0"
fi
export MCP_IDE_DATA="$DATA"

servers=""
workers=()
for i in $(seq 0 $((WORKERS - 1))); do
  port=$((WORKER_PORT + i))
  "${MCP_IDE_CMD[@]}" hosted --host 127.0.0.1 --port "$port" \
    --allowed-host "${PUBLIC_HOST:-$HOST:$PORT}" --allowed-host "$HOST:$PORT" \
    >>"$RUN/worker-$i.log" 2>&1 &
  pids+=($!)
  workers+=($!)
  servers+="    server w$i 127.0.0.1:$port weight 100 check inter 1s fall 2 rise 2"$'\n'
done
for i in $(seq 0 $((WORKERS - 1))); do
  wait_port 127.0.0.1 $((WORKER_PORT + i)) "worker $i (see $RUN/worker-$i.log)" "${workers[$i]}"
done

cat >"$RUN/haproxy.cfg" <<EOF
global
    maxconn 4096
defaults
    mode http
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    retries 3
    option redispatch
    option http-server-close
frontend mcp
    bind $HOST:$PORT
    default_backend workers
backend workers
    # Project affinity: the project part of /p/{project}/... is hashed, so all of a project's requests
    # (its terminals, jobs, language servers, a session's server-to-client requests) reach one worker
    # while it is up; when it is down, consistent hashing moves that project (only) to another worker.
    # Weight 100 each: the ring gets 16 points per unit of weight, and with weight 1 two workers would
    # split the project ids ~44/56 instead of evenly.
    balance hash path,field(3,/)
    hash-type consistent
    option httpchk GET /healthz
    http-check expect status 200
    retry-on conn-failure
$servers
EOF
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
"$HAPROXY" -db -f "$RUN/haproxy.cfg" >>"$RUN/haproxy.log" 2>&1 &
pids+=($!)
wait_port "$HOST" "$PORT" HAProxy $!
echo "scaleout: $WORKERS workers behind http://$HOST:$PORT (projects at /p/<project>/mcp); logs in $RUN"
echo "scaleout: add users with: MCP_IDE_DATA=$DATA MCP_IDE_DATABASE=$MCP_IDE_DATABASE $MCP_IDE hosted user add NAME"
wait -n "${pids[@]}" || true
[ -n "${STOPPING:-}" ] || echo "scaleout: a process stopped; stopping the rest (see $RUN/*.log)" >&2
