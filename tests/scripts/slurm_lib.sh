# slurm_lib.sh — a private single-node SLURM for the slurm_*.sh tests (sourced after lib.sh).
#
#   slurm_start        check slurm-wlm + munge (./twofold.sh deps installs them), write a
#                      private slurm.conf, start a
#                      private munged, slurmctld and slurmd, wait until the node is idle; the
#                      daemons are stopped by pid when the script exits (trap EXIT)
#   slurm_wait_job ID [SECONDS]   wait until job ID (all array tasks) has left the queue
#   slurm_job_field ID FIELD      a field of `scontrol show job` (first task of an array)
#
# Everything lives in $SLURM_TEST_DIR (default /tmp/twofold-slurm): config, state, spool, logs,
# pid files, the munge key/socket and the jobs' TmpFS.  Job ids restart at 1 with every cluster,
# so a job's temporary directory (srun's PMIx plugin makes spmix_appdir_UID_JOB.STEP there, and
# a step that dies may leave it) must go with the cluster: in the system /tmp a leftover of an
# earlier run made the next run's job 1 fail to launch ("File exists").  Non-default ports keep it apart from a system SLURM.
# A lock serializes concurrent test scripts (ctest -j); daemons left by an earlier run that
# died are found through the pid files in that directory and stopped first.  Runs as root.
SLURM_TEST_DIR=${SLURM_TEST_DIR:-/tmp/twofold-slurm}
SLURM_TEST_PORT=${SLURM_TEST_PORT:-16817}
SLURM_NODE=""
export SLURM_CONF="$SLURM_TEST_DIR/etc/slurm.conf"

_slurm_say() { echo "slurm_lib: $*" >&2; }

# _slurm_kill_pidfile FILE NAME: stop the process in FILE if it is still NAME (TERM, then KILL).
_slurm_kill_pidfile() {
  local f=$1 name=$2 pid
  [ -s "$f" ] || return 0
  pid=$(tr -dc '0-9' < "$f")
  rm -f "$f"
  [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 0
  [ "$(cat "/proc/$pid/comm")" = "$name" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do [ -d "/proc/$pid" ] || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

slurm_stop() {
  # a failed check is explained by the daemons' own errors (CI keeps only the test's output)
  if [ "${FAILURES:-0}" -gt 0 ] && [ -n "${SLURM_STARTED:-}" ]; then
    _slurm_say "errors in the daemons' logs:"
    grep -h -i "error" "$SLURM_TEST_DIR"/log/*.log 2>/dev/null | tail -n 15 >&2 || true
  fi
  if [ -n "${SLURM_STARTED:-}" ]; then
    scancel --quiet --user "$(id -un)" 2>/dev/null || true
    sleep 0.5
  fi
  local f
  for f in "$SLURM_TEST_DIR"/run/slurmd*.pid; do [ -e "$f" ] && _slurm_kill_pidfile "$f" slurmd; done
  _slurm_kill_pidfile "$SLURM_TEST_DIR/run/slurmctld.pid" slurmctld
  _slurm_kill_pidfile "$SLURM_TEST_DIR/munge/munged.pid" munged
  # job steps of our jobs whose slurmd is gone (their pids are in our spool directory)
  for f in "$SLURM_TEST_DIR"/run/step.*.pid; do [ -e "$f" ] && _slurm_kill_pidfile "$f" slurmstepd; done
  SLURM_STARTED=""
}

# The cluster's packages are installed by the set-up (./twofold.sh deps), never by a test.
_slurm_require() {
  local missing=()
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "slurm_lib: ${missing[*]} not installed: run ./twofold.sh deps" >&2
  exit 1
}

# _slurm_lock: one private cluster of this kind (this $SLURM_TEST_DIR) at a time on the machine;
# stale daemons of an earlier run that was killed are stopped, a fresh directory made.
_slurm_lock() {
  [ "$(id -u)" = 0 ] || { echo "slurm_lib: needs root" >&2; exit 1; }
  _slurm_require
  mkdir -p "$(dirname "$SLURM_TEST_DIR")"
  exec {SLURM_LOCK_FD}>"$SLURM_TEST_DIR.lock"
  flock -w 240 "$SLURM_LOCK_FD" || { echo "slurm_lib: $SLURM_TEST_DIR.lock is held" >&2; exit 1; }
  slurm_stop
  local d=$SLURM_TEST_DIR
  rm -rf "$d"
  mkdir -p "$d/etc" "$d/state" "$d/spool" "$d/run" "$d/log" "$d/munge" "$d/tmp"
  chmod 755 "$d"
}

# _slurm_munge_start: a private munged (key, socket, pid and log owned by the munge user, as
# munged requires); its socket is a path, so every network namespace reaches it.
_slurm_munge_start() {
  local d=$SLURM_TEST_DIR
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chown -R munge: "$d/munge"
  chmod 755 "$d/munge"
  chmod 400 "$d/munge/munge.key"
  # the daemons must not inherit the lock: one left by a killed run would hold it for ever
  runuser -u munge -- /usr/sbin/munged --key-file="$d/munge/munge.key" \
    --socket="$d/munge/munge.socket" --pid-file="$d/munge/munged.pid" \
    --log-file="$d/munge/munged.log" --seed-file="$d/munge/munged.seed" {SLURM_LOCK_FD}>&-
}

# _slurm_conf_common CTLD_NAME CTLD_ADDR: the slurm.conf lines shared by the single-node and
# the multi-node cluster (no cgroups: proctrack/linuxproc, task/none; fast scheduling).
_slurm_conf_common() {
  local d=$SLURM_TEST_DIR
  cat <<CONF
SlurmctldHost=$1($2)
SlurmctldPort=$SLURM_TEST_PORT
SlurmdPort=$((SLURM_TEST_PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket,cred_expire=5
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_min_interval=0,sched_interval=2
DependencyParameters=kill_invalid_depend
JobRequeue=1
ReturnToService=2
MinJobAge=600
KillWait=5
StateSaveLocation=$d/state
SlurmctldPidFile=$d/run/slurmctld.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmctldDebug=info
SlurmdDebug=info
CONF
}

# _slurm_wait_idle SECONDS NODE...: until every node is idle, else the logs and exit 1.
_slurm_wait_idle() {
  local limit=$1 t0=$SECONDS node state; shift
  for node in "$@"; do
    while state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true); [ "$state" != idle ]; do
      if [ $((SECONDS - t0)) -ge "$limit" ]; then
        _slurm_say "node $node is '$state', not idle after ${limit}s; logs:"
        tail -n 20 "$SLURM_TEST_DIR"/log/*.log >&2 || true
        exit 1
      fi
      sleep 0.2
    done
  done
}

slurm_start() {
  _slurm_lock
  trap slurm_stop EXIT
  local d=$SLURM_TEST_DIR
  _slurm_munge_start
  SLURM_NODE=$(slurmd -C | sed -n 's/^NodeName=\([^ ]*\).*/\1/p')
  local nodeline
  nodeline=$(slurmd -C | head -1)
  {
    echo "ClusterName=twofoldtest"
    _slurm_conf_common "$SLURM_NODE" 127.0.0.1
    cat <<CONF
SlurmdSpoolDir=$d/spool
SlurmdPidFile=$d/run/slurmd.pid
TmpFS=$d/tmp
SlurmdLogFile=$d/log/slurmd.log
$(echo "$nodeline" | sed 's/^NodeName=[^ ]*/NodeName='"$SLURM_NODE"' NodeAddr=127.0.0.1/') State=UNKNOWN
PartitionName=test Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
  } > "$SLURM_CONF"
  SLURM_STARTED=1
  slurmctld -c -i {SLURM_LOCK_FD}>&-
  slurmd -c {SLURM_LOCK_FD}>&-
  _slurm_wait_idle 30 "$SLURM_NODE"
  _slurm_say "node $SLURM_NODE idle (SLURM_CONF=$SLURM_CONF)"
}

# slurm_wait_job ID [SECONDS]: until no task of job ID is pending, running or completing.
slurm_wait_job() {
  local id=$1 limit=${2:-120} t0=$SECONDS
  while [ -n "$(squeue -h -j "$id" -o %i 2>/dev/null)" ]; do
    if [ $((SECONDS - t0)) -ge "$limit" ]; then
      fail "job $id still queued after ${limit}s: $(squeue -h -j "$id" -o '%i %T %r')"
      return 1
    fi
    sleep 0.3
  done
}

# slurm_job_field ID FIELD: e.g. JobState, ExitCode, Restarts, Reason (from scontrol show job).
slurm_job_field() {
  scontrol -o show job "$1" 2>/dev/null | head -1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}
