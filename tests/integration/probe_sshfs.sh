#!/bin/bash
# ioprobe probe on sshfs (FUSE) to a private sshd it starts on 127.0.0.1: a network filesystem,
# with the client-caching warning, and O_DIRECT as the kernel says.
. "$(dirname "$0")/target_common.bash"
need_root "FUSE mount and a private sshd"
need_cmd sshfs ssh-keygen fusermount
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || skip "sshd not installed (Debian: openssh-server)"
[ -e /dev/fuse ] || skip "no /dev/fuse"
SRC=$WORK/export && MNT=$WORK/mnt && mkdir -p "$SRC" "$MNT" /run/sshd
make_files "$SRC" 8 1048576
ssh-keygen -q -t ed25519 -N '' -f "$WORK/host_key" || fail "ssh-keygen host key"
ssh-keygen -q -t ed25519 -N '' -f "$WORK/user_key" || fail "ssh-keygen user key"
cp "$WORK/user_key.pub" "$WORK/authorized_keys" && chmod 600 "$WORK/authorized_keys"
chmod 700 "$WORK"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/sshd_config" <<CFG
ListenAddress 127.0.0.1
Port $PORT
HostKey $WORK/host_key
AuthorizedKeysFile $WORK/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $WORK/sshd.pid
Subsystem sftp internal-sftp
CFG
"$SSHD" -f "$WORK/sshd_config" -D -e 2>"$WORK/sshd.log" &
SSHD_PID=$!
on_exit "kill $SSHD_PID"
for _ in $(seq 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2)" 2>/dev/null && break
  kill -0 $SSHD_PID 2>/dev/null || { cat "$WORK/sshd.log"; skip "sshd did not start"; }
  sleep 0.1
done
sshfs -p "$PORT" -o "IdentityFile=$WORK/user_key,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes" \
  "root@127.0.0.1:$SRC" "$MNT" 2>"$WORK/sshfs.log" || { cat "$WORK/sshfs.log" "$WORK/sshd.log"; skip "sshfs mount failed"; }
on_exit "fusermount -u -z '$MNT'"
probe "$MNT" "$WORK/probe.json"
check_json "$WORK/probe.json" '
expect(t["fs_type"] == "fuse.sshfs", "fs_type fuse.sshfs")
expect(t["mount_source"] == "root@127.0.0.1:'"$SRC"'", "mount source is the ssh export")
expect(t["network"] is True, "network filesystem")
expect(any("client caches" in w for w in t["warnings"]), "warns about client-side caching")
expect(t["device"] == "", "no local block device")
expect(t["o_direct"] == o_direct_truth(t["o_direct_probe_file"]), "O_DIRECT " + t["o_direct"] + " as the kernel says")
expect(d["engine"]["cold"]["engine"] == "psync", "auto engine on a network filesystem is psync")
'
loader_run "$MNT"
echo PASS
