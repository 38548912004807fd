# Several real hosts on this one machine, for the multi-host tests; sourced after lib.sh.
#
# Each host hN is a network namespace (address $HOSTS_NET.N on a veth into a bridge that lives in
# a switch namespace of its own: nothing is added to the root namespace's network and there is
# no route out) plus a mount + UTS namespace owned by its own sshd: hostname hN, an /etc/hosts
# naming h1..hN, a private tmpfs at $HOSTS_LOCAL (the host's "local disk": the same path on every
# host, different contents) and a private /dev/shm. mpirun runs inside h1 and starts the other
# hosts' ranks over ssh (OpenMPI's rsh launcher, TCP). A path outside $HOSTS_LOCAL is the same
# directory on every host: a shared filesystem.
#
#   hosts_up N            starts N hosts (skips, exit 77, where this cannot run: not root, no
#                         OpenMPI, no sshd, no namespaces); everything is torn down at exit
#   hosts_mpirun NP ARGS  runs `mpirun -np NP ARGS` from h1 over the N hosts (slots fill host by
#                         host), with a time limit ($HOSTS_TIMEOUT, 120 s); its exit code returns
#   on_host N CMD...      runs CMD inside host N's namespaces (its hostname, its private tmpfs)
#   job_must_fail OUT LIMIT WHAT CMD...
#                         runs CMD (e.g. hosts_mpirun 4 ...) with a 60 s time limit, its output in
#                         OUT (and printed); fails the test when the job hung, exited 0, or took
#                         LIMIT seconds or more to end; WHAT names the case in those messages
HOSTS_NET=10.211.0
HOSTS_PORT=2222
HOSTS_PFX=iop$$
HOSTS_LOCAL=/tmp/ioprobe-hostlocal-$$
HOSTS_N=0

_hosts_alive() { [ -r "/proc/$1/stat" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; }

_hosts_down() {
  local p pids="" left ns i t
  for i in $(seq 1 "$HOSTS_N"); do [ -s "$HW/h$i/sshd.pid" ] && pids="$pids $(cat "$HW/h$i/sshd.pid")"; done
  for ns in $(seq -f "$HOSTS_PFX-h%g" 1 "$HOSTS_N") "$HOSTS_PFX-sw"; do
    ip netns list 2>/dev/null | grep -qw "$ns" && pids="$pids $(ip netns pids "$ns" 2>/dev/null)"
  done
  for p in $pids; do kill "$p" 2>/dev/null; done
  for t in $(seq 1 30); do
    left=""
    for p in $pids; do _hosts_alive "$p" && left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  for p in $left; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  for ns in $(seq -f "$HOSTS_PFX-h%g" 1 "$HOSTS_N") "$HOSTS_PFX-sw"; do
    ip netns list 2>/dev/null | grep -qw "$ns" && ip netns del "$ns"
  done
  [ "${HOSTS_MADE_RUN_SSHD:-0}" = 1 ] && rmdir /run/sshd 2>/dev/null
  rmdir "$HOSTS_LOCAL" 2>/dev/null
  rm -rf "$HW"
}

hosts_up() {
  HOSTS_N=$1
  [ "$(id -u)" = 0 ] || skip "needs root (network namespaces, mounts, sshd)"
  local c i
  for c in mpirun ip unshare nsenter ssh ssh-keygen /usr/sbin/sshd; do
    command -v "$c" >/dev/null || skip "missing $c (tools/setup --test installs openmpi-bin, openssh-server, iproute2)"
  done
  HW=$(mktemp -d "${TMPDIR:-/tmp}/ioprobe-hosts.XXXXXX")
  trap '_hosts_down; [ -n "${W:-}" ] && rm -rf "$W"' EXIT
  mkdir -p "$HOSTS_LOCAL" "$HW/home"
  [ -d /run/sshd ] || { mkdir -p -m 0755 /run/sshd; HOSTS_MADE_RUN_SSHD=1; }
  ssh-keygen -q -t ed25519 -N '' -C ioprobe-test -f "$HW/id" || fail "ssh-keygen"
  cp "$HW/id.pub" "$HW/authorized_keys"
  : > "$HW/known_hosts"
  : > "$HW/hostfile"
  { echo "127.0.0.1 localhost"; for i in $(seq 1 "$HOSTS_N"); do echo "$HOSTS_NET.$i h$i"; done; } > "$HW/hosts"
  {
    echo "Host h*"
    echo "  Port $HOSTS_PORT"
    echo "  User root"
    echo "  IdentityFile $HW/id"
    echo "  IdentitiesOnly yes"
    echo "  BatchMode yes"
    echo "  StrictHostKeyChecking yes"
    echo "  UserKnownHostsFile $HW/known_hosts"
    echo "  GlobalKnownHostsFile /dev/null"
    echo "  LogLevel ERROR"
    echo "  ConnectTimeout 5"
  } > "$HW/ssh_config"
  for i in $(seq 1 "$HOSTS_N"); do
    mkdir -p "$HW/h$i"
    ssh-keygen -q -t ed25519 -N '' -C "h$i" -f "$HW/h$i/hostkey"
    echo "h$i $(cut -d' ' -f1,2 "$HW/h$i/hostkey.pub")" >> "$HW/known_hosts"
    echo "h$i slots=${HOSTS_SLOTS:-2}" >> "$HW/hostfile"
    printf 'Host h%s\n  HostName %s.%s\n  HostKeyAlias h%s\n' "$i" "$HOSTS_NET" "$i" "$i" >> "$HW/ssh_config"
    # StrictModes no: the keys live under /tmp. SetEnv HOME: skip root's login scripts per hop.
    cat > "$HW/h$i/sshd_config" <<CFG
Port $HOSTS_PORT
ListenAddress $HOSTS_NET.$i
HostKey $HW/h$i/hostkey
PidFile none
AuthorizedKeysFile $HW/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
SetEnv HOME=$HW/home
CFG
  done
  ip netns add "$HOSTS_PFX-sw" 2>/dev/null || skip "cannot create network namespaces here"
  ip -n "$HOSTS_PFX-sw" link add br0 type bridge
  ip -n "$HOSTS_PFX-sw" link set br0 up
  for i in $(seq 1 "$HOSTS_N"); do
    local ns=$HOSTS_PFX-h$i
    ip netns add "$ns"
    ip -n "$HOSTS_PFX-sw" link add "p$i" type veth peer name eth0 netns "$ns"
    ip -n "$HOSTS_PFX-sw" link set "p$i" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$HOSTS_NET.$i/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip netns exec "$ns" unshare --mount --uts --propagation private \
      sh -c "hostname h$i && mount --bind '$HW/hosts' /etc/hosts &&
             mount -t tmpfs -o size=512m,mode=0755 local-h$i '$HOSTS_LOCAL' &&
             mount -t tmpfs -o size=256m,mode=1777 shm-h$i /dev/shm &&
             exec /usr/sbin/sshd -D -f '$HW/h$i/sshd_config' -E '$HW/h$i/sshd.log'" \
      </dev/null >>"$HW/h$i/sshd.log" 2>&1 &
    echo $! > "$HW/h$i/sshd.pid"
  done
  local deadline=$(( $(date +%s) + 20 ))
  for i in $(seq 1 "$HOSTS_N"); do
    until ip netns exec "$HOSTS_PFX-h1" ssh -F "$HW/ssh_config" -o ConnectTimeout=2 "h$i" true </dev/null 2>"$HW/ssh.err"; do
      [ "$(date +%s)" -ge "$deadline" ] && { cat "$HW/ssh.err" "$HW/h$i/sshd.log"; fail "sshd on h$i never accepted a login"; }
      sleep 0.1
    done
  done
}

on_host() {
  local i=$1; shift
  nsenter --target "$(cat "$HW/h$i/sshd.pid")" --net --mount --uts -- "$@"
}

hosts_mpirun() {
  local np=$1; shift
  on_host 1 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    timeout "${HOSTS_TIMEOUT:-120}" mpirun -np "$np" --hostfile "$HW/hostfile" --map-by slot --bind-to none \
      --mca plm_rsh_agent ssh --mca plm_rsh_args "-F $HW/ssh_config" --mca btl tcp,vader,self \
      --mca btl_tcp_if_include "$HOSTS_NET.0/24" --mca oob_tcp_if_include "$HOSTS_NET.0/24" "$@" </dev/null
}

job_must_fail() {
  local out=$1 limit=$2 what=$3 rc t0 took; shift 3
  t0=$(date +%s)
  HOSTS_TIMEOUT=60 "$@" >"$out" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  cat "$out"
  [ "$rc" = 124 ] && fail "$what made the job hang (mpirun killed after 60 s)"
  [ "$rc" != 0 ] || fail "$what: exit 0"
  [ "$took" -lt "$limit" ] || fail "$what: the failure took $took s to end the job"
  JOB_TOOK=$took
}

# mpirun on this machine alone (no namespaces): NP ranks on localhost.
local_mpirun() {
  local np=$1; shift
  command -v mpirun >/dev/null || skip "missing mpirun (tools/setup --test installs openmpi-bin)"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout "${HOSTS_TIMEOUT:-120}" \
    mpirun -np "$np" --oversubscribe --bind-to none --mca btl tcp,vader,self --mca btl_tcp_if_include lo \
      --mca oob_tcp_if_include lo "$@" </dev/null
}
