# netns_cluster.sh — a private multi-node SLURM on one machine for the multinode_*.sh tests
# (sourced after lib.sh).  Inter-node MPI, PMIx wire-up, parallel HDF5 from several nodes and
# the loss of a node cannot be exercised on one network stack, so each node is a network
# namespace of its own:
#
#   bridge tfmnbr 10.213.0.1/24 (root namespace: slurmctld, munged, the test's sbatch/squeue)
#     veth -> namespace tfmn1 (eth0 10.213.0.11, UTS hostname tfmn1, slurmd tfmn1)
#     veth -> namespace tfmn2 (10.213.0.12) ...  up to NETNS_NODES nodes
#
# The namespaces have no default route: MPI, PMIx and SLURM traffic stays on 10.213.0.0/24
# and loopback.  A UTS namespace per node gives each slurmd, slurmstepd and MPI rank its
# node's hostname, so Open MPI sees separate hosts (TCP between nodes, shared memory within
# one).  A mount namespace per node gives it a private /tmp and /dev/shm, as real nodes have:
# PMIx and Open MPI keep per-job directories there under names that would collide; the
# cluster's own directory therefore lives in /var/tmp, and the tests' work directories are
# shared by all nodes (the shared file system of a real cluster).  The daemons, namespaces and
# links are removed when the script exits (trap EXIT).  The SLURM parts (lock, munge, common slurm.conf,
# waits, stop by pid file) are slurm_lib.sh's, with their own directory and ports, so this
# cluster and slurm_lib.sh's single-node one can run side by side.
#
#   netns_cluster_start       start the cluster, wait until every node is idle
#   netns_pids NODE           pids of every process in NODE's namespace
#   netns_kill_node NODE      SIGKILL everything in NODE's namespace (its slurmd, job steps, ranks)
#   netns_node_start NODE     start NODE's slurmd again (after netns_kill_node)
#   NETNS_HOSTS               the node names (tfmn1 ...)
NETNS_NODES=${NETNS_NODES:-4}
NETNS_NET=10.213.0
NETNS_TAG=tfmn
SLURM_TEST_DIR=${NETNS_CLUSTER_DIR:-/var/tmp/twofold-netns}
SLURM_TEST_PORT=${NETNS_CLUSTER_PORT:-16917}
source "$(dirname "${BASH_SOURCE[0]}")/slurm_lib.sh"
NETNS_HOSTS=()
for ((i = 1; i <= NETNS_NODES; i++)); do NETNS_HOSTS+=("$NETNS_TAG$i"); done
# Open MPI between the namespaces: point-to-point on ob1 over TCP on the bridge subnet only,
# shared memory inside a node.  One-sided (the chunk counter): Open MPI 4.1's osc/rdma has no
# window over btl/tcp (MPI_Win_allocate fails with MPI_ERR_WIN, also under the default pml), so
# RMA goes through osc/ucx on UCX's TCP transport on the nodes' one interface.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self,vader OMPI_MCA_btl_tcp_if_include=$NETNS_NET.0/24
export OMPI_MCA_osc=ucx UCX_TLS=tcp,self,sm UCX_NET_DEVICES=eth0
# all "nodes" share this machine's cores: ranks waiting in MPI must yield them (srun, unlike
# mpiexec, does not set this when oversubscribed; docs/CLUSTER.md)
export OMPI_MCA_mpi_yield_when_idle=1

netns_pids() { ip netns pids "$1" 2>/dev/null || true; }

netns_kill_node() {
  local pids
  pids=$(netns_pids "$1")
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
}

netns_stop() {
  # everything on the nodes at once (slurmd, steps, ranks: test processes, nothing to save),
  # then the controller and munged by pid file
  local n
  for n in "${NETNS_HOSTS[@]}"; do netns_kill_node "$n"; done
  slurm_stop
  for n in "${NETNS_HOSTS[@]}"; do
    ip netns del "$n" 2>/dev/null || true
    ip link del "${n}h" 2>/dev/null || true
  done
  ip link del "${NETNS_TAG}br" 2>/dev/null || true
}

_netns_fail() {
  echo "netns_cluster: $*" >&2
  exit 1
}

_netns_links() {
  # the subnet must be free: nothing but our own bridge may hold an address in it
  local used
  used=$(ip -o -4 addr show | awk -v net="$NETNS_NET." -v br="${NETNS_TAG}br" \
    'index($4, net) == 1 && $2 != br {print $2 " " $4}')
  [ -z "$used" ] || _netns_fail "$NETNS_NET.0/24 is in use on this machine: $used"
  if ! ip netns add "${NETNS_TAG}probe" 2>probe.err; then
    # the kernel (or the container) forbids network namespaces: nothing to test here
    echo "netns_cluster: SKIP: cannot create a network namespace: $(cat probe.err)" >&2
    exit 77
  fi
  ip netns del "${NETNS_TAG}probe"
  ip link add "${NETNS_TAG}br" type bridge || _netns_fail "cannot create a bridge"
  ip addr add "$NETNS_NET.1/24" dev "${NETNS_TAG}br"
  ip link set "${NETNS_TAG}br" up
  local i n
  for ((i = 1; i <= NETNS_NODES; i++)); do
    n=${NETNS_HOSTS[i - 1]}
    ip netns add "$n"
    ip link add "${n}h" type veth peer name eth0 netns "$n"
    ip link set "${n}h" master "${NETNS_TAG}br" up
    ip -n "$n" addr add "$NETNS_NET.$((10 + i))/24" dev eth0
    ip -n "$n" link set eth0 up
    ip -n "$n" link set lo up
  done
}

# netns_node_start NODE: its slurmd, in its network namespace with its own hostname, /tmp and
# /dev/shm (a node killed by netns_kill_node comes back: ReturnToService=2).
netns_node_start() {
  local n=$1 d=$SLURM_TEST_DIR p top binds=""
  mkdir -p "$d/spool/$n" "$d/tmp/$n"
  # A checkout, build or work directory under /tmp (a clone in /tmp, say) must stay visible
  # on the node: it is bound into the node's private /tmp at the same path (the bind exists
  # only inside the node's mount namespace; from outside the directory stays empty).
  for p in "${SOURCE_DIR:-}" "${WORK:-}" "$(dirname "${TWOFOLD:-/}")"; do
    case "$p" in /tmp/?*) ;; *) continue ;; esac
    top=/tmp/$(echo "${p#/tmp/}" | cut -d/ -f1)
    case " $binds " in *" $top "*) continue ;; esac
    binds="$binds $top"
  done
  local cmd=""
  for top in $binds; do
    mkdir -p "$d/tmp/$n/${top#/tmp/}"
    cmd="$cmd mount --bind '$top' '$d/tmp/$n/${top#/tmp/}' &&"
  done
  # nsenter, not ip netns exec: that remounts /sys, hiding the cgroup tree slurmd reads
  nsenter --net="/run/netns/$n" unshare --uts --mount --propagation private sh -c \
    "$cmd mount --rbind $d/tmp/$n /tmp && mount -t tmpfs -o size=256m tmpfs /dev/shm &&
     hostname $n && exec slurmd -c -N $n" {SLURM_LOCK_FD}>&- # daemons never hold the lock
}

netns_cluster_start() {
  command -v ip >/dev/null && command -v unshare >/dev/null ||
    _netns_fail "ip or unshare missing: run ./twofold.sh deps"
  _slurm_lock
  netns_stop # links and namespaces of an earlier run that was killed
  trap netns_stop EXIT
  _netns_links
  local d=$SLURM_TEST_DIR i nodeline ctld
  _slurm_munge_start
  ctld=$(hostname -s)
  nodeline=$(slurmd -C | head -1 | sed 's/^NodeName=[^ ]* //')
  {
    echo "ClusterName=twofoldnetns"
    _slurm_conf_common "$ctld" "$NETNS_NET.1"
    # a lost node is declared DOWN within SlurmdTimeout; its jobs end NODE_FAIL (or requeue)
    cat <<CONF
SlurmdTimeout=10
SlurmdSpoolDir=$d/spool/%n
SlurmdPidFile=$d/run/slurmd-%n.pid
SlurmdLogFile=$d/log/slurmd-%n.log
CONF
    for ((i = 1; i <= NETNS_NODES; i++)); do
      echo "NodeName=${NETNS_HOSTS[i - 1]} NodeAddr=$NETNS_NET.$((10 + i)) $nodeline State=UNKNOWN"
    done
    echo "PartitionName=test Nodes=${NETNS_TAG}[1-$NETNS_NODES] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
  } > "$SLURM_CONF"
  SLURM_STARTED=1
  slurmctld -c -i {SLURM_LOCK_FD}>&-
  local n
  for n in "${NETNS_HOSTS[@]}"; do netns_node_start "$n"; done
  _slurm_wait_idle 60 "${NETNS_HOSTS[@]}"
  _slurm_say "nodes ${NETNS_HOSTS[*]} idle on $NETNS_NET.0/24 (SLURM_CONF=$SLURM_CONF)"
}
