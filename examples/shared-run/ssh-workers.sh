#!/usr/bin/env bash
# Workers for one prism run on a shared PostgreSQL store, started over ssh on machines you
# already have. Each machine needs prism, the run's dataset (at the path the run recorded, or
# pass --dataset), its own models file (its own endpoints, keys and local models: a model of
# the run's name there answers in place of the recorded settings), and the password in
# PGPASSWORD or ~/.pgpass (never in the URL or this script).
#
#   examples/shared-run/ssh-workers.sh RUN_ID gpu1 gpu2 laptop
#
# Each worker leases jobs, renews its leases while it lives and stores each answer as it
# arrives; a machine that drops out loses its leases after --lease-secs and the others finish
# its jobs. Run it again at any time to add workers, or after a crash: nothing is answered
# twice. Progress: prism db workers RUN_ID --db "$PRISM_DB".
set -euo pipefail
run="${1:?usage: ssh-workers.sh RUN_ID HOST...}"
shift
db="${PRISM_DB:-postgres://prism@db.example:5432/prism?sslmode=require}"
for host in "$@"; do
  # -n: ssh does not read this script's stdin; the worker's output goes to a log per host.
  ssh -n "$host" "nohup prism work '$run' --db '$db' --concurrency 8 > prism-work-$run.log 2>&1 &" &
done
wait
echo "started $# worker(s) on run $run; progress: prism db workers $run --db '$db'"
